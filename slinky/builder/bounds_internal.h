// Helpers shared by the source files of bounds_inference (regions in bounds.cc, sliding and
// warm-up starts in bounds_sliding.cc, pipelined loops in bounds_pipelining.cc, fold factors in
// bounds_folding.cc). Not part of the public API.
#ifndef SLINKY_BUILDER_BOUNDS_INTERNAL_H
#define SLINKY_BUILDER_BOUNDS_INTERNAL_H

#include "slinky/builder/simplify.h"

namespace slinky {
namespace internal {

// How an expression changes as a variable increases.
enum class monotonic { constant, increasing, decreasing, unknown };

// A structural test: sums, differences, scaling and division by constants, min and max of
// monotonic terms are monotonic.
monotonic is_monotonic(const expr& e, var v);

// Simplifies a region's interval; the empty union (nothing reads this variable's dimension)
// becomes [0, -1]: compute nothing.
interval_expr simplify_or_empty(const interval_expr& i);

}  // namespace internal
}  // namespace slinky

#endif  // SLINKY_BUILDER_BOUNDS_INTERNAL_H
