// The stages of benchmark 3's elementwise chains (docs/benchmarks.md), shared by the benchmarks
// that run them (elementwise, parallel, scheduler): stage k computes out = in * scale(k) +
// offset(k) over dense rows.
#ifndef SLINKY_APPS_ELEMENTWISE_STAGE_H
#define SLINKY_APPS_ELEMENTWISE_STAGE_H

#include "slinky/runtime/buffer.h"

namespace slinky_bench {

// The constants of stage k, chosen so that values stay near 1.
inline float scale(int k) { return 0.75f + 0.0625f * static_cast<float>(k % 5); }
inline float offset(int k) { return 0.125f + 0.03125f * static_cast<float>(k % 3); }

// The kernel every stage runs: a vectorizable loop over n contiguous elements. Out of line, so
// that the stage callbacks and the hand-written loops they are compared with run the same machine
// code: an inlined copy in each caller is compiled and placed apart, and a 24-byte vector loop
// runs up to 1.5x slower at some offsets modulo 64 bytes on the development machine
// (docs/runtime_measurements.md, "Code placement").
__attribute__((noinline)) inline void kernel(const float* __restrict in, float* __restrict out, slinky::index_t n,
                                             float a, float b) {
  for (slinky::index_t i = 0; i < n; ++i) out[i] = in[i] * a + b;
}

// The callback of a stage: the kernel over out's crop (dense in both buffers), element by element
// where the crop wraps around a fold.
struct stage {
  float a, b;
  slinky::index_t operator()(const slinky::buffer<const float>& in, const slinky::buffer<float>& out) const {
    const slinky::dim& od = out.dim(0);
    const slinky::dim& id = in.dim(0);
    if (od.empty()) return 0;
    if (od.stride() == sizeof(float) && id.stride() == sizeof(float) && !od.is_folded(od.min(), od.max()) &&
        !id.is_folded(od.min(), od.max())) {
      kernel(&in(od.min()), &out(od.min()), od.extent(), a, b);
    } else {
      for (slinky::index_t x = od.min(); x <= od.max(); ++x) out(x) = in(x)*a + b;
    }
    return 0;
  }
};

}  // namespace slinky_bench

#endif  // SLINKY_APPS_ELEMENTWISE_STAGE_H
