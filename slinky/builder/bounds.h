// Bounds inference: the region of each func's outputs that must be computed where the func
// runs, and of each buffer where it is stored, from the bounds its consumers declare.
//
// A func's region at its compute location is the union, over its consumers, of the intervals
// they read for each point they produce, taken over the crop they produce at their call and
// widened over every loop between their call and the func's location. Regions are expressions
// of symbols that no crop shadows (loop variables and the metadata of buffers as allocated or
// passed in), so they mean the same anywhere inside the location.
#ifndef SLINKY_BUILDER_BOUNDS_H
#define SLINKY_BUILDER_BOUNDS_H

#include <vector>

#include "slinky/builder/graph.h"
#include "slinky/builder/simplify.h"

namespace slinky {

class bounds_inference {
  const graph& g_;

public:
  // For each func, its variables (the union of its outputs' dims, in order of appearance) and
  // the interval of each that it computes at its compute location.
  std::vector<std::vector<var>> vars;
  std::vector<std::vector<interval_expr>> regions;
  // For each buffer, the region its consumers need at the root (inputs) or at its store level
  // (intermediates).
  std::vector<box_expr> needed;

  explicit bounds_inference(const graph& g);

  // The interval of variable v that func fi computes at its call inside loop chain position
  // `depth` (loops of fi's call_chain up to depth are active): the loop's step-sized chunk for
  // looped variables, the whole region for the others.
  interval_expr crop_at_call(int fi, var v) const;
  // Lifts a box valid at the call of func fi (or inside any loop of chain) to the level `to`,
  // an element of chain or the root, by taking bounds over the loops between.
  box_expr lift(box_expr b, const std::vector<loop_level>& chain, loop_level to) const;
  // The bounds of a loop's variable, valid outside the loop.
  interval_expr loop_bounds(loop_level l) const;
  // The box of buffer b (a func output) as its producer computes it at its compute location.
  box_expr output_region(int buffer) const;

private:
  // The region of buffer `buffer` that consumer fi reads at its call.
  box_expr need_at_call(int fi, int buffer) const;
  void infer_func(int fi);
};

}  // namespace slinky

#endif  // SLINKY_BUILDER_BOUNDS_H
