// Concrete regions for the scheduler (internal): the integer interval an expression of a func's
// output variables can take when those variables range over known intervals, and the region of
// an input a func reads for a given region of its outputs. A small, fast interval evaluator, not
// the simplifier: the scheduler evaluates a few bounds per func and candidate, and must stay
// within microseconds per func.
#ifndef SLINKY_SCHEDULER_REGIONS_H
#define SLINKY_SCHEDULER_REGIONS_H

#include <unordered_map>
#include <vector>

#include "slinky/builder/pipeline.h"

namespace slinky {
namespace scheduler_internal {

// A closed integer interval [min, max]; empty when max < min.
struct index_range {
  index_t min = 0;
  index_t max = -1;

  bool empty() const { return max < min; }
  index_t extent() const { return empty() ? 0 : max - min + 1; }
  bool operator==(const index_range& o) const { return min == o.min && max == o.max; }
  bool operator!=(const index_range& o) const { return !(*this == o); }
};

// The smallest interval containing both (an empty side contributes nothing).
index_range hull(const index_range& a, const index_range& b);
index_range intersect(const index_range& a, const index_range& b);

// What the variables of an expression stand for: a func's output variables (each ranging over
// an interval), scalar arguments with known values, and the bounds of buffers with known shapes
// (buffer_min(b, d), buffer_max(b, d)).
struct region_env {
  const var* vars = nullptr;
  const index_range* ranges = nullptr;
  std::size_t num_vars = 0;
  const std::unordered_map<symbol_id, index_t>* scalars = nullptr;
  const std::unordered_map<symbol_id, const std::vector<index_range>*>* buffers = nullptr;
};

// Sets `result` to an interval containing every value of e when its variables range over env,
// and returns true; returns false when e uses something the evaluator does not know (a symbol
// not in env, other buffer metadata, infinities, lets, division by a non-constant, ...) or a
// value overflows. Exact for sums, differences, scaling and division by constants, min and max
// of variables that appear once; select gives the hull of both sides.
bool eval_range(expr_ref e, const region_env& env, index_range& result);

// The region of input `in` (one interval per dim of in.buffer) that a func reads to produce the
// region `env` of its output variables: its bounds, restricted to its input_crop. Output crops
// restrict env first (the caller). Returns false if a bound cannot be evaluated.
bool needed_region(const func::input& in, const region_env& env, std::vector<index_range>& result);

}  // namespace scheduler_internal
}  // namespace slinky

#endif  // SLINKY_SCHEDULER_REGIONS_H
