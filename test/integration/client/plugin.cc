// A client's shared library (a plugin of a host application) that links slinky's static libraries
// into itself: they must be position-independent code. It builds and runs a pipeline with a loop.
#include <cstdio>

#include "slinky/builder/pipeline.h"
#include "slinky/runtime/buffer.h"

// 0 if a pipeline adding 1 to each element in chunks of 4 computes the right values.
extern "C" int slinky_plugin_run() {
  using namespace slinky;
  node_context ctx;
  auto in = buffer_expr::make(ctx, "in", 1, sizeof(int));
  auto out = buffer_expr::make(ctx, "out", 1, sizeof(int));
  var x(ctx, "x");
  func add = func::make(
      [](const buffer<const int>& a, const buffer<int>& b) -> index_t {
        for (index_t i = b.dim(0).min(); i <= b.dim(0).max(); ++i) b(i) = a(i) + 1;
        return 0;
      },
      {{in, {point(x)}}}, {{out, {x}}});
  add.loops({{x, 4}});
  pipeline p = build_pipeline(ctx, {in}, {out});
  buffer<int, 1> a({10}), b({10});
  a.allocate();
  b.allocate();
  for (int i = 0; i < 10; ++i) a(i) = i * 3;
  if (p.evaluate({&a}, {&b}) != 0) return 1;
  for (int i = 0; i < 10; ++i) {
    if (b(i) != i * 3 + 1) {
      std::printf("plugin: wrong result at %d\n", i);
      return 1;
    }
  }
  return 0;
}
