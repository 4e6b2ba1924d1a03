// explain_pipeline (explain.h): the first passes of build_pipeline (plan.h), told in words.
#include "slinky/builder/explain.h"

#include <optional>
#include <sstream>
#include <string>

#include "slinky/builder/emit.h"
#include "slinky/builder/plan.h"
#include "slinky/builder/simplify.h"
#include "slinky/runtime/print.h"

namespace slinky {

namespace {

std::string print_expr(const expr& e, const node_context& ctx) {
  std::ostringstream os;
  print(os, e, &ctx);
  return os.str();
}

// "the root" or "loop y of f".
std::string describe(const graph& g, loop_level l) {
  if (l.root()) return "the root (once per evaluation)";
  return "loop " + g.name(g.user_var(l)) + " of " + g.name(g.funcs[l.func]);
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
        // Either side may be the view: the source, written in place by its producer into the
        // destination's memory, or the destination, which its consumers read in the source's.
        const int src = g.buffer_index(f.inputs()[i].buffer.get());
        const int dst = f.outputs().empty() ? -1 : g.buffer_index(f.outputs()[0].buffer.get());
        const bool dst_is_view = dst >= 0 && src >= 0 && aliases.buffers[dst].target == src;
        if (dst_is_view) {
          const std::string to = g.name(f.outputs()[0].buffer->sym());
          os << "  the copy from " << from << " is removed: the destination " << to << " is a view of " << from
             << ", read in place by its consumers.\n";
        } else {
          os << "  the copy from " << from << " is removed: " << from
             << " is a view of the destination, written in place by its producer.\n";
        }
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
        const std::optional<loop_level> along = d < bounds.folded_along[bi].size() && !bounds.folded_along[bi][d].root()
                                                    ? std::optional<loop_level>(bounds.folded_along[bi][d])
                                                    : bounds.fold_loop(static_cast<int>(bi));
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
         << g.name(g.buffers[a.target].buffer->sym()) << (a.same ? " itself (same coordinates)" : "")
         << (a.conditional ? ", where the radices of the reshape fit at run time (else its own memory, and the copy "
                             "into it runs)"
                           : "")
         << ".\n";
    }
  }
}

}  // namespace

std::string explain_pipeline(node_context& ctx, const std::vector<var>& args,
                             const std::vector<buffer_expr_ptr>& inputs, const std::vector<buffer_expr_ptr>& outputs,
                             const build_options& options) {
  (void)args;
  pass_log log(ctx);
  std::unique_ptr<pipeline_plan> plan = plan_pipeline(ctx, inputs, outputs, options, log);
  if (!plan) return std::string();
  std::ostringstream os;
  explain(os, ctx, plan->g, *plan->bounds, plan->aliases, options);
  return os.str();
}

std::string explain_pipeline(node_context& ctx, const std::vector<buffer_expr_ptr>& inputs,
                             const std::vector<buffer_expr_ptr>& outputs, const build_options& options) {
  return explain_pipeline(ctx, {}, inputs, outputs, options);
}

}  // namespace slinky
