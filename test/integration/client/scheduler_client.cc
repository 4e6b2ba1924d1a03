// A client of an installed slinky's scheduler (slinky_scheduler): schedules, builds and runs a
// two-stage chain, built by tools/check_install.sh with pkg-config.
#include <cstdio>

#include "slinky/builder/pipeline.h"
#include "slinky/scheduler/schedule.h"

using namespace slinky;

static index_t add_one(const buffer<const int>& in, const buffer<int>& out) {
  for (index_t x = out.dim(0).min(); x <= out.dim(0).max(); ++x) out(x) = in(x) + 1;
  return 0;
}

int main() {
  node_context ctx;
  auto in = buffer_expr::make(ctx, "in", 1, sizeof(int));
  auto t = buffer_expr::make(ctx, "t", 1, sizeof(int));
  auto out = buffer_expr::make(ctx, "out", 1, sizeof(int));
  var x(ctx, "x");
  func f = func::make(add_one, {{in, {point(x)}}}, {{t, {x}}});
  func g = func::make(add_one, {{t, {point(x)}}}, {{out, {x}}});
  const index_t n = 1 << 16;
  machine m;  // the defaults: no calibration needed here
  m.l2_bytes = 64 * 1024;
  schedule_report r = schedule({in}, {out}, schedule_shapes().add(in, {n}).add(out, {n}), m);
  if (r.loops.size() != 1 || !r.loops[0].looped || g.loops().size() != 1) {
    std::printf("scheduler_client: no loop chosen:\n%s", r.to_string(&ctx).c_str());
    return 1;
  }
  pipeline p = build_pipeline(ctx, {in}, {out});
  buffer<int, 1> a({n}), b({n});
  a.allocate();
  b.allocate();
  for (index_t i = 0; i < n; ++i) a(i) = static_cast<int>(i);
  if (p.evaluate({&a}, {&b}) != 0) return 1;
  for (index_t i = 0; i < n; ++i) {
    if (b(i) != i + 2) {
      std::printf("scheduler_client: wrong result at %lld\n", static_cast<long long>(i));
      return 1;
    }
  }
  std::printf("scheduler_client: steps of %lld\n", static_cast<long long>(r.loops[0].step));
  return 0;
}
