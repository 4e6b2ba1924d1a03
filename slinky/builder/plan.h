// The first passes of build_pipeline, shared with explain_pipeline: the graph, where everything
// runs and lives, the regions, the aliases. Internal to the builder (not installed).
#ifndef SLINKY_BUILDER_PLAN_H
#define SLINKY_BUILDER_PLAN_H

#include <chrono>
#include <memory>
#include <optional>
#include <vector>

#include "slinky/base/chrome_trace.h"
#include "slinky/builder/alias.h"
#include "slinky/builder/bounds.h"
#include "slinky/builder/graph.h"
#include "slinky/builder/pipeline.h"

namespace slinky {

// Times each pass and, when asked to, prints the program after it. With SLINKY_TRACE set
// (chrome_trace::global()), each pass is also an event in the trace, inside a "build_pipeline"
// event, so build time shows in the same file as the evaluations traced through the same trace.
class pass_log {
  const node_context& ctx_;
  const bool print_;
  chrome_trace* const trace_;
  const char* pass_ = nullptr;
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();

public:
  explicit pass_log(const node_context& ctx);
  ~pass_log();
  pass_log(const pass_log&) = delete;
  pass_log& operator=(const pass_log&) = delete;

  // The pass about to run.
  void start(const char* pass);
  // The pass started last is done; program is what it made (printed if asked).
  void done(const stmt& program = stmt());
};

// What the first four passes decide. It is not copied or moved: `bounds` refers to `g`.
struct pipeline_plan {
  graph g;
  std::optional<bounds_inference> bounds;
  alias_plan aliases;

  explicit pipeline_plan(graph g) : g(std::move(g)) {}
  pipeline_plan(const pipeline_plan&) = delete;
  pipeline_plan& operator=(const pipeline_plan&) = delete;
};

// Passes 1 to 4 of build_pipeline (build_pipeline.cc says why each comes where it does). Null if
// the graph is misused: the misuse was reported (to a builder_errors, or as a failed assertion),
// and there is no program to build.
std::unique_ptr<pipeline_plan> plan_pipeline(node_context& ctx, const std::vector<buffer_expr_ptr>& inputs,
                                             const std::vector<buffer_expr_ptr>& outputs, const build_options& options,
                                             pass_log& log);

}  // namespace slinky

#endif  // SLINKY_BUILDER_PLAN_H
