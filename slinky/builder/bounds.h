// Bounds inference, sliding windows and storage folding: the region of each func's outputs
// that must be computed where the func runs, what each iteration of a serial loop computes
// given what earlier iterations did, where each loop starts, and the fold factor of each
// intermediate. See docs/builder.md (bounds_inference, and "Sliding window and folding").
// Regions are inferred in bounds.cc, sliding and warm-up starts decided in bounds_sliding.cc,
// pipelined loops in bounds_pipelining.cc and fold factors in bounds_folding.cc.
//
// A func's region at its compute location is the union, over its consumers, of the intervals
// they read for each point they produce, taken over the crop they produce at their call and
// widened over every loop between their call and the func's location. Regions are expressions
// of symbols that no crop shadows (loop variables and the metadata of buffers as allocated or
// passed in), so they mean the same anywhere inside the location.
#ifndef SLINKY_BUILDER_BOUNDS_H
#define SLINKY_BUILDER_BOUNDS_H

#include <cstddef>
#include <optional>
#include <vector>

#include "slinky/builder/graph.h"
#include "slinky/builder/simplify.h"

namespace slinky {

// True if e (a declared field of buffer sym's dims) reads sym's own metadata:
// `b->dim(0).bounds = align(b->dim(0).bounds, 4)` declares b's bounds in terms of the bounds
// bounds inference finds for it.
bool refers_to_itself(const expr& e, var sym);

// The region of intermediate b its producer computes, given `need`, what its consumers read:
// the need, or in each dim whose declared bounds refer to b's own bounds, the declared bounds
// with b's bounds read as the need (aligned, say), and in each dim declared with stride 0 the
// declared bounds (the crops of a stride-0 dim change nothing). Other declared bounds that do not
// refer to b decide its allocation only (emit.cc).
box_expr declared_region(const buffer_expr& b, box_expr need);

class bounds_inference {
  const graph& g_;

public:
  // The three views of a func's region (one interval per variable), computed consumers first:
  // - full: what consumers need if none of them slides; lifted over the loops, the total a
  //   func must compute (the clamp of what it produces, and its allocation).
  // - steady: what consumers need in an iteration of a serial loop given that they compute only
  //   what earlier iterations did not (no clamping): the live window, for fold factors and to
  //   find how early a loop must start to warm up.
  // - actual: what consumers need given what they actually produce; and produce: the part of
  //   it this iteration computes (less what earlier iterations computed, within full).
  enum class view { full, steady, actual };

  // The bounds of one func: one entry per variable, in the order of vars.
  struct func_bounds {
    // The func's variables: the union of its outputs' dims, in order of appearance.
    std::vector<var> vars;
    // Its region in each view (above), and what an iteration computes in the steady view
    // (steady_produce) and in the actual one (produce).
    std::vector<interval_expr> full;
    std::vector<interval_expr> steady;
    std::vector<interval_expr> steady_produce;
    std::vector<interval_expr> actual;
    std::vector<interval_expr> produce;
    // The index in the func's compute_chain of the loop the variable's dimension slides with (or
    // -1), and whether the window moves up (or down) with the loop.
    std::vector<int> slides;
    std::vector<bool> slides_up;
  };
  // For each func.
  std::vector<func_bounds> funcs;
  // For each buffer and dimension, the fold factor of its allocation (undefined: not folded), and
  // the loop it folds along (fold_loop, or a loop inside it; the root where not folded).
  std::vector<std::vector<expr>> folds;
  std::vector<std::vector<loop_level>> folded_along;
  // For each buffer, the region its consumers need at the root (inputs and outputs) or at its
  // store level (intermediates).
  std::vector<box_expr> needed;

  // Empty pipeline outputs. For each func, the pipeline outputs its work reaches (its own, and
  // those its consumers' reach), sorted; and for each buffer, those its consumers reach. A func
  // is idle when all of them are empty: nothing it computes is used. Its region is then
  // meaningless (bounds of empty crops widened through its consumers' accesses are not empty),
  // so the emitter skips an idle func, and what it would read is not required of its inputs.
  std::vector<std::vector<int>> reach;
  std::vector<std::vector<int>> readers_reach;
  // The condition that all the pipeline outputs in `outputs` are empty (0 if there are none).
  expr all_empty(const std::vector<int>& outputs) const;

  explicit bounds_inference(const graph& g);

  // Where loop l starts: the first value of its owner's region, moved earlier (by whole steps)
  // so that the windows sliding with it warm up before the first value.
  expr loop_start(loop_level l) const;
  // The bounds of a loop's variable over the values its owner computes in the given view
  // (without warm-up), valid outside the loop.
  interval_expr loop_bounds(loop_level l, view which = view::actual) const;
  // Lifts a box valid inside the loops of `chain` to the level `to` (an element of chain, or the
  // root), by taking bounds over the loops between: in the actual view (or with `warm_up`)
  // including their warm-up iterations, in the others over the values their owners compute if
  // nothing slides.
  box_expr lift(box_expr b, const std::vector<loop_level>& chain, loop_level to, view which, bool warm_up) const;
  box_expr lift(box_expr b, const std::vector<loop_level>& chain, loop_level to, view which) const {
    return lift(std::move(b), chain, to, which, which == view::actual);
  }
  // The region of a buffer that func fi needs at its call (input crops applied).
  box_expr need_at_call(int fi, int buffer, view which) const;
  // need_at_call lifted from fi's call chain to the level `to`. Where fi reads the buffer
  // through a modulus, the bounds of the access over the crops lifted to `to` also bound it.
  box_expr lifted_need(int fi, int buffer, loop_level to, view which) const;
  // The union of what buffer's consumers read, over all their loops (the region needed of a
  // pipeline input or constant).
  box_expr consumers_need(int buffer) const;

  // Whether what the consumers of an intermediate buffer need of it in an iteration of loop l
  // (around its producer) overlaps what they need in the previous iteration, in the full view
  // (no sliding): then computing it per iteration computes the overlap twice.
  bool windows_overlap(int buffer, loop_level l) const;
  // What the consumers of an intermediate buffer need of it in one iteration of loop l (around
  // its producer), in the full view; empty when l is not around the producer.
  box_expr window_in_iteration(int buffer, loop_level l) const;
  // Whether that window depends on l's variable.
  bool window_moves(int buffer, loop_level l) const;
  // Whether a dimension of func fi slides with loop l.
  bool slides_with(int fi, loop_level l) const;

  // A parallel loop is pipelined when a func slides with it (its outputs are stored outside the
  // loop), or when a buffer stored outside it would fold along it, its windows moving with the
  // loop without overlapping: each stage of an iteration waits for the previous iteration's
  // (docs/threads.md).
  bool pipelined(loop_level l) const;
  // The number of iterations of a pipelined loop that may run at once, which its ring buffers are
  // folded for: its stages (the funcs computed at it, plus the rest of its body; the hardware
  // threads when that is one stage and no func slides with the loop), at most the machine's
  // hardware threads and its constant max_workers, and 1 (serial) inside another parallel loop.
  index_t pipeline_workers(loop_level l) const;
  // The outermost loop an intermediate folds along: the outermost loop inside its storage level
  // on its producer's compute chain (none if the producer is computed where the buffer is
  // stored). Dimensions that move only with a loop inside it may fold along that loop
  // (folded_along).
  std::optional<loop_level> fold_loop(int buffer) const;

private:
  // A bounds map with a few entries, taken from a pool and given back with them erased: a new
  // symbol_map costs a slot per symbol up to the largest id it is given, which is in the order of
  // the program's, and the maps of regions and loops are made once per func and view (building a
  // chain of n funcs would be quadratic in n).
  class scratch_bounds {
  public:
    explicit scratch_bounds(const bounds_inference& bi);
    ~scratch_bounds();
    scratch_bounds(const scratch_bounds&) = delete;
    scratch_bounds& operator=(const scratch_bounds&) = delete;
    // The slot of v (erased when this map is given back).
    std::optional<interval_expr>& operator[](var v);
    const bounds_map& map() const { return map_; }

  private:
    const bounds_inference& bi_;
    bounds_map map_;
    std::vector<var> set_;
  };
  mutable std::vector<bounds_map> scratch_pool_;

  // Warm-up starts of each loop, collected while the funcs inside it slide (first pass), then
  // the resulting start of each loop (computed once before the second pass).
  std::vector<std::pair<loop_level, expr>> starts_;
  std::vector<std::pair<loop_level, expr>> loop_starts_;
  void compute_loop_starts();
  // The loops that may start before their owner's first value, to warm up sliding windows.
  std::vector<loop_level> warm_up_;
  bool has_warm_up(loop_level l) const;
  // The pipelined loops and their workers.
  std::vector<std::pair<loop_level, index_t>> pipelined_;
  void find_pipelined_loops();

  const std::vector<interval_expr>& crop_view(int fi, view v) const;
  interval_expr crop_at_call(int fi, var v, view which) const;
  // What need_at_call finds for the given crops of fi's variables; with `only` set, only for the
  // dims for which `only` returns true (the others are left empty).
  box_expr need_for_crops(int fi, int buffer, scratch_bounds& crops, bool (*only)(const expr&)) const;
  // The need of consumer c of a buffer read by funcs that reach `all`: where c reaches fewer
  // outputs, its need is empty when they are all empty.
  box_expr guard_need(box_expr need, int c, const std::vector<int>& all) const;
  void find_reach();
  // Asserts (SLINKY_ASSERT) that every per-func and per-buffer vector has its size and every index
  // its range, once the bounds are inferred: what emit and alias analysis rely on.
  void check_invariants() const;
  std::vector<interval_expr> needs_of_consumers(int fi, view which) const;
  void infer_func(int fi);
  void decide_slides(int fi);
  std::vector<expr> fold_factors(int buffer, std::vector<loop_level>& along) const;
  std::size_t storage_depth(int fi) const;
  // The index of variable v among func fi's vars, if it is one of them.
  std::optional<std::size_t> find_var(int fi, var v) const;
  // The index of variable v among func fi's vars, which it must be: every dim of the func's
  // outputs is one, and check_graph rejects a loop over any other variable.
  std::size_t index_of_var(int fi, var v) const;
};

}  // namespace slinky

#endif  // SLINKY_BUILDER_BOUNDS_H
