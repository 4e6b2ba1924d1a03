// The pipeline graph as the lowering passes see it: the funcs in topological order, the
// buffers between them, and where each func is computed and each buffer stored.
//
// check_graph validates what the client described (one producer per buffer, no cycles, ranks
// consistent, every buffer produced or given) and orders the funcs; schedule_graph resolves
// compute_at and store_at, with their defaults, into loop levels.
#ifndef SLINKY_BUILDER_GRAPH_H
#define SLINKY_BUILDER_GRAPH_H

#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "slinky/base/assert.h"
#include "slinky/builder/pipeline.h"

namespace slinky {

// A loop of a func: func index (into graph::funcs) and loop index (into func::loops(), which
// lists loops innermost first). func == -1 is the root, outside every loop.
struct loop_level {
  int func = -1;
  int loop = -1;

  bool root() const { return func < 0; }
  bool operator==(const loop_level& other) const { return func == other.func && loop == other.loop; }
  bool operator!=(const loop_level& other) const { return !(*this == other); }
};

struct func_node {
  // The func, or the builder's own form of it (check_graph): a copy whose inputs slice its output
  // (func::input::output_slice) with a variable for each sliced dim, pinned by output_crop.
  const func* f = nullptr;
  // Funcs that read an output of this one (indices into graph::funcs), without duplicates.
  std::vector<int> consumers;
  // True if an output is a pipeline output.
  bool produces_output = false;
  // Where the func is computed, and the loops (outermost first) around that place.
  loop_level compute;
  std::vector<loop_level> compute_chain;
  // The loops around the func's call: compute_chain followed by the func's own loops.
  std::vector<loop_level> call_chain;
  // Default compute_at only: a parallel loop the func is computed at instead of the innermost
  // loop containing its consumers (root() if none), because its output is shared across that
  // loop and the loop's pipeline needs the func as a stage of its own (share_overlapping_windows).
  loop_level hoisted_to;
  // Default compute_at only: a loop (or the root) the func is computed at instead of a loop
  // inside it (in the chain containing its consumers), because the region it must compute does
  // not move with the loops inside (it would compute the same values in each of their
  // iterations; hoist_invariant_funcs).
  std::optional<loop_level> invariant_at;
  // The symbol each of the func's loops binds (one per entry of func::loops()): the client's
  // variable if no other func loops over it, otherwise a new symbol, so that a loop never
  // captures the variable of an enclosing loop of another func in the regions computed from it.
  std::vector<var> loop_syms;
};

struct buffer_node {
  buffer_expr_ptr buffer;
  // The producing func (index into graph::funcs), or -1 for inputs and constants.
  int producer = -1;
  std::vector<int> consumers;
  bool is_input = false;
  bool is_output = false;
  // For the outputs of a pipeline with several: a symbol bound, around the whole program, to
  // whether the output is empty (empty_lets). Conditions of idleness (bounds_inference::reach)
  // name it rather than repeat the test of every dim: they appear in regions and crops, and the
  // simplifier is much slower on long conditions. Undefined where the test is a constant.
  var empty_sym;
  // Where an intermediate is allocated (the root for inputs, outputs and constants).
  loop_level store;
  // Default storage only: the parallel loops (of the producer's compute chain) the buffer is
  // stored outside of, although it would be stored inside them by default, because its
  // consumers' windows overlap between their iterations (share_overlapping_windows); and those
  // where that was tried and the producer could not slide (it stays inside them, unless
  // hoist_invariant_funcs moves a func, which clears them).
  std::vector<loop_level> shared_across;
  std::vector<loop_level> not_shared_across;
};

struct graph {
  node_context* ctx = nullptr;
  // True if check_graph reported misuse (to a builder_errors: the graph is incomplete).
  bool failed = false;
  // Producers before consumers.
  std::vector<func_node> funcs;
  std::vector<buffer_node> buffers;
  // The builder's own forms of funcs (func_node::f), which it owns.
  std::vector<std::shared_ptr<const func>> own_funcs;
  // Indices of funcs and buffers by address (lookups are on every path of the lowering: keep
  // them constant time so building stays linear in the size of the graph).
  std::unordered_map<const func*, int> func_indices;
  std::unordered_map<const buffer_expr*, int> buffer_indices;

  // The index of a func or buffer, or -1.
  int func_index(const func* f) const;
  int buffer_index(const buffer_expr* b) const;
  std::string name(var v) const { return ctx->name(v.sym()); }
  std::string name(const func_node& f) const { return f.f->name(ctx); }
  // The client's variable a level loops over (an output variable of its func), and the symbol the
  // emitted loop binds.
  var user_var(loop_level l) const { return loop(l).var; }
  var loop_var(loop_level l) const {
    SLINKY_ASSERT(valid(l) && static_cast<std::size_t>(l.loop) < funcs[l.func].loop_syms.size(),
                  "a loop level of the graph, not the root, with its symbol");
    return funcs[l.func].loop_syms[l.loop];
  }
  // Whether l is a loop of a func of the graph (not the root).
  bool valid(loop_level l) const {
    return l.func >= 0 && static_cast<std::size_t>(l.func) < funcs.size() && l.loop >= 0 &&
           static_cast<std::size_t>(l.loop) < funcs[l.func].f->loops().size();
  }
  // The client's description of loop l (its variable, step, parallel or serial).
  const func::loop_info& loop(loop_level l) const {
    SLINKY_ASSERT(valid(l), "a loop level of the graph, not the root");
    return funcs[l.func].f->loops()[l.loop];
  }
  // The chain of loops (outermost first) around the body of loop l, l included.
  std::vector<loop_level> chain(loop_level l) const;
  // The test that output b is empty: its max is below its min in some dim (0 for a scalar).
  expr is_empty(const buffer_node& b) const;
  // The definitions of the empty_syms that `program` uses.
  std::vector<std::pair<var, expr>> empty_lets(const stmt& program) const;
};

// True if a dim_expr field is the default the client did not edit: undefined, or the buffer's
// own metadata (e.g. buffer_stride(b, d) for the stride of dim d).
inline bool is_default(const expr& e, const expr& default_value) { return !e.defined() || match(e, default_value); }

// True if the client edited any dim of b (bounds, stride or fold factor): its layout is then
// the client's, not something a view of other memory may decide (alias.cc; the scheduler's model
// of the copies the builder removes).
inline bool declares_layout(const buffer_expr& b) {
  const var sym = b.sym();
  for (std::size_t d = 0; d < b.rank(); ++d) {
    const int dd = static_cast<int>(d);
    const dim_expr& i = b.dim(d);
    if (!is_default(i.bounds.min, buffer_min(sym, dd)) || !is_default(i.bounds.max, buffer_max(sym, dd)) ||
        !is_default(i.stride, buffer_stride(sym, dd)) || !is_default(i.fold_factor, buffer_fold_factor(sym, dd))) {
      return true;
    }
  }
  return false;
}

// Collects the funcs that produce `outputs` from `inputs`, checks the graph and orders it.
// Misuse is reported through internal::builder_error; when a builder_errors collects it, the
// result is incomplete and marked `failed`.
graph check_graph(node_context& ctx, const std::vector<buffer_expr_ptr>& inputs,
                  const std::vector<buffer_expr_ptr>& outputs);

// Resolves compute_at and store_at: a func without compute_at runs in the innermost loop that
// contains all of its consumers (the root if it produces a pipeline output); an intermediate
// without store_at is stored outside every serial loop around its producer, but inside the
// innermost parallel one (each worker gets its own buffer) that is not in its shared_across.
// False after reporting misuse (to a builder_errors).
bool schedule_graph(graph& g);
// Resolves compute_at and store_at again, after func_node::hoisted_to or
// buffer_node::shared_across changed.
bool schedule_locations(graph& g);

}  // namespace slinky

#endif  // SLINKY_BUILDER_GRAPH_H
