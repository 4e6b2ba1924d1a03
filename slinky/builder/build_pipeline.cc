// build_pipeline: the lowering driver. It reads as the list of passes, in order; set
// SLINKY_PRINT_PASSES=1 in the environment to print the program after each pass, with the time
// each took, and SLINKY_TRACE=file.json to trace each pass (chrome_trace::global()).
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <sstream>
#include <string>

#include "slinky/base/chrome_trace.h"
#include "slinky/builder/alias.h"
#include "slinky/builder/bounds.h"
#include "slinky/builder/emit.h"
#include "slinky/builder/explain.h"
#include "slinky/builder/graph.h"
#include "slinky/builder/refine_placement.h"
#include "slinky/builder/pipeline.h"
#include "slinky/builder/simplify.h"
#include "slinky/builder/trace.h"
#include "slinky/runtime/depends_on.h"
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

// Passes 1 to 4: the graph, where everything runs and lives, the regions, the aliases; then
// rest(graph, bounds, aliases), unless misuse was reported to a builder_errors (rest is not called).
void plan(node_context& ctx, const std::vector<buffer_expr_ptr>& inputs, const std::vector<buffer_expr_ptr>& outputs,
          const build_options& options, pass_log& log,
          const std::function<void(const graph&, const bounds_inference&, const alias_plan&)>& rest) {
  // 1. Validate the graph and order the funcs, producers first.
  // Misuse reported to a builder_errors before or during these two passes stops the build: the
  // graph is incomplete.
  if (builder_errors* errors = builder_errors::current(); errors && errors->failed()) return;
  log.start("check_graph");
  graph g = check_graph(ctx, inputs, outputs);
  log.done();
  if (g.failed) return;

  // 2. Where each func runs and each buffer lives; needs the order (consumers are placed first).
  log.start("schedule_graph");
  const bool scheduled = schedule_graph(g);
  log.done();
  if (!scheduled) return;

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

  rest(g, bounds, aliases);
}

// Passes 5 to 8: the program, from the plan.
pipeline finish(node_context& ctx, std::vector<var> args, const std::vector<buffer_expr_ptr>& inputs,
                const std::vector<buffer_expr_ptr>& outputs, std::vector<std::pair<var, expr>> lets,
                const build_options& options, pass_log& log, const graph& g, const bounds_inference& bounds,
                const alias_plan& aliases) {
  // 5. The program: allocations (or views), loops, crops, calls. A serial loop around one call
  // that nothing else in it needs is that call over the loop's range, unless the client keeps its
  // loops or traces them (the trace brackets each loop of the schedule).
  log.start("emit_program");
  stmt body = emit_program(g, bounds, aliases, ctx, !options.keep_loops && !options.trace);
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

}  // namespace

pipeline build_pipeline(node_context& ctx, std::vector<var> args, std::vector<buffer_expr_ptr> inputs,
                        std::vector<buffer_expr_ptr> outputs, std::vector<std::pair<var, expr>> lets,
                        const build_options& options) {
  pass_log log(ctx);
  pipeline p;
  plan(ctx, inputs, outputs, options, log,
       [&](const graph& g, const bounds_inference& bounds, const alias_plan& aliases) {
         p = finish(ctx, std::move(args), inputs, outputs, std::move(lets), options, log, g, bounds, aliases);
       });
  return p;
}

pipeline build_pipeline(node_context& ctx, std::vector<buffer_expr_ptr> inputs, std::vector<buffer_expr_ptr> outputs,
                        const build_options& options) {
  return build_pipeline(ctx, {}, std::move(inputs), std::move(outputs), {}, options);
}

namespace {

std::string print_expr(const expr& e, const node_context& ctx) {
  std::ostringstream os;
  print(os, e, &ctx);
  return os.str();
}

// "the root" or "loop y of f".
std::string describe(const graph& g, loop_level l) {
  if (l.root()) return "the root (once per evaluation)";
  return "loop " + g.name(g.funcs[l.func].f->loops()[l.loop].var) + " of " + g.name(g.funcs[l.func]);
}

// The account of explain_pipeline, from the plan.
void explain(std::ostream& os, const node_context& ctx, const graph& g, const bounds_inference& bounds,
             const alias_plan& aliases, const build_options& options) {
  os << "Funcs, producers first:\n";
  for (std::size_t fi = 0; fi < g.funcs.size(); ++fi) {
    const func_node& fn = g.funcs[fi];
    const func& f = *fn.f;
    const std::size_t one_call =
        options.keep_loops || options.trace ? 0 : loops_run_as_one_call(g, bounds, aliases, static_cast<int>(fi));
    os << "- " << g.name(fn) << (f.is_copy() ? " (a copy)" : "") << ": computed at " << describe(g, fn.compute);
    if (fn.invariant_at) {
      os << ", hoisted there because the region it computes does not move with the loops inside";
    } else if (!fn.hoisted_to.root()) {
      os << ", a parallel loop's stage of its own (its output is shared by the loop's iterations)";
    }
    os << ".\n";
    for (std::size_t k = 0; k < f.loops().size(); ++k) {
      const func::loop_info& l = f.loops()[k];
      const loop_level level{static_cast<int>(fi), static_cast<int>(k)};
      os << "  loop " << g.name(l.var) << ", step " << print_expr(l.step, ctx) << ", "
         << (l.is_parallel() ? "parallel" : "serial");
      if (l.is_parallel() && bounds.pipelined(level)) {
        os << ", pipelined (" << bounds.pipeline_workers(level)
           << " iterations in flight; each stage waits for the previous iteration's)";
      }
      if (k < one_call) os << ", runs as one call over its whole range (nothing else in it needs the loop)";
      os << ".\n";
    }
    const bounds_inference::func_bounds& fb = bounds.funcs[fi];
    for (std::size_t d = 0; d < fb.slides.size(); ++d) {
      if (fb.slides[d] < 0) continue;
      const loop_level l = fn.compute_chain[fb.slides[d]];
      os << "  slides along " << describe(g, l) << " in " << g.name(fb.vars[d])
         << ": each iteration computes only what the previous ones did not ("
         << (fb.slides_up[d] ? "its window moves up" : "its window moves down") << ").\n";
    }
    for (std::size_t i = 0; i < f.inputs().size() && fi < aliases.removed.size(); ++i) {
      if (i >= aliases.removed[fi].size()) continue;
      const std::string from = g.name(f.inputs()[i].buffer->sym());
      if (aliases.removed[fi][i]) {
        os << "  the copy from " << from << " is removed: " << from
           << " is a view of the destination, written in place by its producer.\n";
      } else if (f.is_copy()) {
        os << "  the copy from " << from << " is kept (neither side could be made a view of the other).\n";
      }
    }
  }
  os << "Buffers:\n";
  for (std::size_t bi = 0; bi < g.buffers.size(); ++bi) {
    const buffer_node& b = g.buffers[bi];
    const buffer_expr& be = *b.buffer;
    os << "- " << g.name(be.sym()) << ": ";
    if (be.constant()) {
      os << "a constant.\n";
      continue;
    }
    if (b.is_input) os << "a pipeline input";
    if (b.is_output) os << (b.is_input ? " and " : "") << "a pipeline output";
    if (b.is_input || b.is_output) {
      os << ".\n";
    } else {
      os << "an intermediate produced by " << g.name(g.funcs[b.producer]) << ", stored at " << describe(g, b.store)
         << ", " << to_string(be.storage()) << " memory";
      if (!b.shared_across.empty()) {
        os << " (outside the parallel loop";
        for (std::size_t k = 0; k < b.shared_across.size(); ++k) {
          os << (k > 0 ? ", " : " ") << describe(g, b.shared_across[k]);
        }
        os << ": its consumers' windows overlap between iterations)";
      }
      os << ".\n";
      bool folded = false;
      for (std::size_t d = 0; d < bounds.folds[bi].size(); ++d) {
        if (!bounds.folds[bi][d].defined()) continue;
        folded = true;
        const std::optional<loop_level> along = bounds.fold_loop(static_cast<int>(bi));
        const std::optional<index_t> at_most = evaluate_constant_upper_bound(bounds.folds[bi][d]);
        os << "  dim " << d << " folds into a ring buffer of "
           << (at_most ? "at most " + std::to_string(*at_most) + " elements (" : std::string())
           << print_expr(bounds.folds[bi][d], ctx) << (at_most ? ")" : "") << " along "
           << (along ? describe(g, *along) : std::string("its loop"))
           << ": only the window that loop's iterations need is kept.\n";
      }
      if (!folded && !b.store.root()) os << "  not folded: allocated in each iteration of the loop it is stored at.\n";
    }
    const buffer_alias& a = aliases.buffers[bi];
    if (a.target >= 0) {
      os << "  has no memory of its own: " << (a.same ? "it is " : "a view of ")
         << g.name(g.buffers[a.target].buffer->sym()) << (a.same ? " itself (same coordinates)" : "") << ".\n";
    }
  }
}

}  // namespace

std::string explain_pipeline(node_context& ctx, const std::vector<var>& args,
                             const std::vector<buffer_expr_ptr>& inputs, const std::vector<buffer_expr_ptr>& outputs,
                             const build_options& options) {
  (void)args;
  pass_log log(ctx);
  std::ostringstream os;
  plan(ctx, inputs, outputs, options, log,
       [&](const graph& g, const bounds_inference& bounds, const alias_plan& aliases) {
         explain(os, ctx, g, bounds, aliases, options);
       });
  return os.str();
}

std::string explain_pipeline(node_context& ctx, const std::vector<buffer_expr_ptr>& inputs,
                             const std::vector<buffer_expr_ptr>& outputs, const build_options& options) {
  return explain_pipeline(ctx, {}, inputs, outputs, options);
}

}  // namespace slinky
