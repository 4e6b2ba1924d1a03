// build_pipeline: the lowering driver. It reads as the list of passes, in order, each with the
// reason for its place; set SLINKY_PRINT_PASSES=1 in the environment to print the program after
// each pass, with the time each took, and SLINKY_TRACE=file.json to trace each pass
// (chrome_trace::global()). explain_pipeline (explain.cc) runs passes 1 to 4 and tells what they
// decided.
#include <chrono>
#include <cstdlib>
#include <functional>
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <string>

#include "slinky/builder/alias.h"
#include "slinky/builder/bounds.h"
#include "slinky/builder/emit.h"
#include "slinky/builder/graph.h"
#include "slinky/builder/pipeline.h"
#include "slinky/builder/plan.h"
#include "slinky/builder/refine_placement.h"
#include "slinky/builder/simplify.h"
#include "slinky/builder/trace.h"
#include "slinky/runtime/depends_on.h"
#include "slinky/runtime/print.h"

namespace slinky {

pass_log::pass_log(const node_context& ctx)
    : ctx_(ctx), print_(std::getenv("SLINKY_PRINT_PASSES") != nullptr), trace_(chrome_trace::global()) {
  if (trace_) trace_->begin("build_pipeline");
}

pass_log::~pass_log() {
  if (trace_) trace_->end("build_pipeline");
}

void pass_log::start(const char* pass) {
  pass_ = pass;
  if (trace_) trace_->begin(pass);
  start_ = std::chrono::steady_clock::now();
}

void pass_log::done(const stmt& program) {
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

namespace {

// The client's lets ordered so that each comes after the lets its value uses, otherwise as given:
// a let is bound in order, and a client may give one whose value names a let it defines later (a
// host that updates an earlier let to a later one's value). Lets in a cycle keep their order.
std::vector<std::pair<var, expr>> in_dependency_order(std::vector<std::pair<var, expr>> lets) {
  const std::size_t n = lets.size();
  std::vector<std::vector<std::size_t>> uses(n);
  for (std::size_t i = 0; i < n; ++i) {
    for (std::size_t j = 0; j < n; ++j) {
      if (i != j && depends_on(lets[i].second, lets[j].first).any()) uses[i].push_back(j);
    }
  }
  std::vector<std::pair<var, expr>> result;
  result.reserve(n);
  std::vector<int> state(n, 0);  // 1 while its dependencies are placed, 2 when placed.
  std::function<void(std::size_t)> place = [&](std::size_t i) {
    if (state[i] != 0) return;
    state[i] = 1;
    for (std::size_t j : uses[i]) place(j);
    state[i] = 2;
    result.push_back(std::move(lets[i]));
  };
  for (std::size_t i = 0; i < n; ++i) place(i);
  return result;
}

}  // namespace

std::unique_ptr<pipeline_plan> plan_pipeline(node_context& ctx, const std::vector<buffer_expr_ptr>& inputs,
                                             const std::vector<buffer_expr_ptr>& outputs, const build_options& options,
                                             pass_log& log) {
  // 1. Validate the graph and order the funcs, producers first.
  // Misuse reported to a builder_errors before or during these two passes stops the build: the
  // graph is incomplete.
  if (builder_errors* errors = builder_errors::current(); errors && errors->failed()) return nullptr;
  log.start("check_graph");
  auto plan = std::make_unique<pipeline_plan>(check_graph(ctx, inputs, outputs));
  log.done();
  if (plan->g.failed) return nullptr;
  graph& g = plan->g;

  // 2. Where each func runs and each buffer lives; needs the order (consumers are placed first).
  log.start("schedule_graph");
  const bool scheduled = schedule_graph(g);
  log.done();
  if (!scheduled) return nullptr;

  // 3. The region each func computes and each buffer holds; needs the locations, as regions are
  // widened over the loops between a consumer and its producer. Intermediates whose windows
  // overlap between iterations of a parallel loop move outside it (their producers slide with
  // it), and funcs whose region does not move with a loop move out of it (refine_placement.h):
  // both change the regions, so infer again until the placement is settled (one more round per
  // nesting level of parallel loops, plus one to confirm the producers slide, and two more after
  // a hoist, which lets the overlapping windows be decided again).
  log.start("bounds_inference");
  plan->bounds.emplace(g);
  for (int round = 0; round < 16; ++round) {
    if (!share_overlapping_windows(g, *plan->bounds) && !hoist_invariant_funcs(g, *plan->bounds)) break;
    plan->bounds.emplace(g);
  }
  log.done();

  // 4. Aliasing: which copies are removed by making one side a view of the other, and which
  // calls write in place; needs the regions and fold factors.
  log.start("plan_aliases");
  plan->aliases = plan_aliases(g, *plan->bounds, !options.no_alias_buffers);
  log.done();
  return plan;
}

pipeline build_pipeline(node_context& ctx, std::vector<var> args, std::vector<buffer_expr_ptr> inputs,
                        std::vector<buffer_expr_ptr> outputs, std::vector<std::pair<var, expr>> lets,
                        const build_options& options) {
  pass_log log(ctx);
  // 1 to 4: the graph, the locations, the regions, the aliases (plan_pipeline above).
  std::unique_ptr<pipeline_plan> plan = plan_pipeline(ctx, inputs, outputs, options, log);
  if (!plan) return pipeline();
  const graph& g = plan->g;
  const bounds_inference& bounds = *plan->bounds;
  const alias_plan& aliases = plan->aliases;

  // 5. The program: allocations (or views), loops, crops, calls; needs all of the plan. A serial
  // loop around one call that nothing else in it needs is that call over the loop's range, unless
  // the client keeps its loops or traces them (the trace brackets each loop of the schedule).
  log.start("emit_program");
  stmt body = emit_program(g, bounds, aliases, ctx, !options.keep_loops && !options.trace);
  log.done(body);

  // 6. Simplify: removes crops and checks proven redundant, empty loops, unused allocations. Before
  // the checks are added, so that no check is folded away into the program's structure.
  log.start("simplify");
  body = simplify(body);
  log.done(body);

  // 7. Checks of the inputs and outputs run first, so no callback sees a bad buffer; emit_checks
  // simplifies them on their own.
  if (!options.no_checks) {
    log.start("checks");
    stmt checks = emit_checks(g, bounds, aliases, ctx);
    body = block::make(checks, body);
    log.done(body);
  }
  // The symbols naming whether each output is empty (graph's empty_sym), around all of it, then
  // the client's lets, outermost: the checks and the program may use both.
  std::vector<std::pair<var, expr>> empty = g.empty_lets(body);
  if (!empty.empty()) body = let_stmt::make(std::move(empty), body);
  body = let_stmt::make(in_dependency_order(std::move(lets)), body);

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
