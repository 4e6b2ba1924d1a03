// build_pipeline: the lowering driver. It reads as the list of passes, in order; set
// SLINKY_PRINT_PASSES=1 in the environment to print the program after each pass, with the time
// each took, and SLINKY_TRACE=file.json to trace each pass (chrome_trace::global()).
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <string>

#include "slinky/base/chrome_trace.h"
#include "slinky/builder/alias.h"
#include "slinky/builder/bounds.h"
#include "slinky/builder/emit.h"
#include "slinky/builder/graph.h"
#include "slinky/builder/parallel_storage.h"
#include "slinky/builder/pipeline.h"
#include "slinky/builder/simplify.h"
#include "slinky/builder/trace.h"
#include "slinky/runtime/print.h"

namespace slinky {

namespace {

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
  explicit pass_log(const node_context& ctx)
      : ctx_(ctx), print_(std::getenv("SLINKY_PRINT_PASSES") != nullptr), trace_(chrome_trace::global()) {
    if (trace_) trace_->begin("build_pipeline");
  }
  ~pass_log() {
    if (trace_) trace_->end("build_pipeline");
  }

  // The pass about to run.
  void start(const char* pass) {
    pass_ = pass;
    if (trace_) trace_->begin(pass);
    start_ = std::chrono::steady_clock::now();
  }

  // The pass started last is done; program is what it made (printed if asked).
  void done(const stmt& program = stmt()) {
    if (trace_) trace_->end(pass_);
    if (!print_) return;
    auto now = std::chrono::steady_clock::now();
    double us = std::chrono::duration<double, std::micro>(now - start_).count();
    std::cerr << "// after " << pass_ << " (" << us << " us)\n";
    if (program.defined()) {
      print(std::cerr, program, &ctx_);
      std::cerr << "\n";
    }
  }
};

}  // namespace

pipeline build_pipeline(node_context& ctx, std::vector<var> args, std::vector<buffer_expr_ptr> inputs,
                        std::vector<buffer_expr_ptr> outputs, std::vector<std::pair<var, expr>> lets,
                        const build_options& options) {
  pass_log log(ctx);

  // 1. Validate the graph and order the funcs, producers first.
  log.start("check_graph");
  graph g = check_graph(ctx, inputs, outputs);
  log.done();

  // 2. Where each func runs and each buffer lives; needs the order (consumers are placed first).
  log.start("schedule_graph");
  schedule_graph(g);
  log.done();

  // 3. The region each func computes and each buffer holds; needs the locations, as regions are
  // widened over the loops between a consumer and its producer. Intermediates whose windows
  // overlap between iterations of a parallel loop move outside it (their producers slide with
  // it), which changes the regions: infer again until the storage is settled (one more round
  // per nesting level of parallel loops, plus one to confirm the producers slide).
  log.start("bounds_inference");
  std::optional<bounds_inference> inferred(std::in_place, g);
  for (int round = 0; round < 8; ++round) {
    if (!share_overlapping_windows(g, *inferred) && !hoist_invariant_funcs(g, *inferred)) break;
    inferred.emplace(g);
  }
  const bounds_inference& bounds = *inferred;
  log.done();

  // 4. Aliasing: which copies are removed by making one side a view of the other, and which
  // calls write in place; needs the regions and fold factors.
  log.start("plan_aliases");
  alias_plan aliases = plan_aliases(g, bounds, !options.no_alias_buffers);
  log.done();

  // 5. The program: allocations (or views), loops, crops, calls.
  log.start("emit_program");
  stmt body = emit_program(g, bounds, aliases, ctx);
  log.done(body);

  // 6. Simplify: removes crops and checks proven redundant, empty loops, unused allocations.
  log.start("simplify");
  body = simplify(body);
  log.done(body);

  // 7. Checks of the inputs and outputs run first, so no callback sees a bad buffer; they are
  // simplified separately (by emit_checks) so a check is never folded away into the program's
  // structure.
  if (!options.no_checks) {
    log.start("checks");
    stmt checks = emit_checks(g, bounds, aliases, ctx);
    body = block::make(checks, body);
    log.done(body);
  }
  // The symbols naming whether each output is empty (graph's empty_sym), around all of it.
  std::vector<std::pair<var, expr>> empty = g.empty_lets(body);
  if (!empty.empty()) body = let_stmt::make(std::move(empty), body);
  body = let_stmt::make(std::move(lets), body);

  // 8. Tracing, last, so that it brackets exactly the loops and calls that run.
  if (options.trace) {
    log.start("trace");
    std::map<var, std::string> loop_names;
    for (const func_node& fn : g.funcs) {
      for (std::size_t k = 0; k < fn.loop_syms.size(); ++k) loop_names[fn.loop_syms[k]] = g.name(fn.f->loops()[k].var);
    }
    body = add_tracing(body, ctx, loop_names);
    log.done(body);
  }

  pipeline p;
  p.args = std::move(args);
  for (const buffer_expr_ptr& b : inputs) p.inputs.push_back(b->sym());
  for (const buffer_expr_ptr& b : outputs) p.outputs.push_back(b->sym());
  for (const buffer_node& b : g.buffers) {
    if (b.buffer->constant()) p.constants.emplace_back(b.buffer->sym(), b.buffer->constant());
  }
  p.body = named_stmt(body, std::make_shared<node_context>(ctx));
  return p;
}

pipeline build_pipeline(node_context& ctx, std::vector<buffer_expr_ptr> inputs, std::vector<buffer_expr_ptr> outputs,
                        const build_options& options) {
  return build_pipeline(ctx, {}, std::move(inputs), std::move(outputs), {}, options);
}

}  // namespace slinky
