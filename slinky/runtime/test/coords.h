// Helpers of the buffer tests: visiting every coordinate of a box of dims.
#ifndef SLINKY_RUNTIME_TEST_COORDS_H
#define SLINKY_RUNTIME_TEST_COORDS_H

#include <vector>

#include "slinky/runtime/buffer.h"

namespace slinky {
namespace test {

// Calls fn(coords) for every coordinate of the box `dims` (dim 0 fastest).
template <typename Fn>
void for_each_coord(const std::vector<dim>& dims, const Fn& fn) {
  for (const dim& d : dims) {
    if (d.empty()) return;
  }
  std::vector<index_t> c(dims.size());
  for (std::size_t d = 0; d < dims.size(); ++d) c[d] = dims[d].min();
  while (true) {
    fn(span<const index_t>(c));
    std::size_t d = 0;
    for (; d < dims.size(); ++d) {
      if (++c[d] <= dims[d].max()) break;
      c[d] = dims[d].min();
    }
    if (d == dims.size()) return;
  }
}

inline std::vector<dim> dims_of(const raw_buffer& b) { return std::vector<dim>(b.dims, b.dims + b.rank); }

}  // namespace test
}  // namespace slinky

#endif  // SLINKY_RUNTIME_TEST_COORDS_H
