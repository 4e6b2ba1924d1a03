// What the scheduler's tests of schedule() share (schedule_test.cc, schedule_tiles_parallel_test.cc):
// a small machine, the graphs (elementwise, stencil and reduction chains), their evaluation, and
// the reading of the report.
#ifndef SLINKY_SCHEDULER_TEST_SCHEDULE_TEST_UTIL_H
#define SLINKY_SCHEDULER_TEST_SCHEDULE_TEST_UTIL_H

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <functional>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "slinky/base/thread_pool_impl.h"
#include "slinky/builder/pipeline.h"
#include "slinky/scheduler/schedule.h"

namespace slinky {
namespace schedule_test {

// prefix followed by i (built by appending: GCC 12 warns, falsely, on "literal" + std::string).
inline std::string numbered(const char* prefix, index_t i) {
  std::string s = prefix;
  s += std::to_string(i);
  return s;
}

// A small machine, so that small test buffers exceed its caches.
inline machine small_machine(index_t l2 = 32 * 1024) {
  machine m;
  m.l1_bytes = 4 * 1024;
  m.l2_bytes = l2;
  m.l3_bytes = 8 * l2;
  m.threads = 1;
  m.call_overhead_ns = 30;
  // Slow memory for its calls (the figures the tests were first written with), whatever the
  // defaults are: the tests check the decisions of this machine's model.
  const double ns_per_byte[4] = {0.02, 0.03, 0.06, 0.1};
  std::copy(std::begin(ns_per_byte), std::end(ns_per_byte), std::begin(m.ns_per_byte));
  return m;
}

// The 2-core development machine's description as scheduler_benchmark --schedules fixes it (48 KiB
// L1 of 12 ways, 1 MiB L2, 11 ns per call), with `threads` and the default rates, no prefetch
// window.
inline machine development_machine(int threads) {
  machine m;
  m.l1_bytes = 48 * 1024;
  m.l2_bytes = 1024 * 1024;
  m.l3_bytes = 8 * 1024 * 1024;
  m.l1_buffers = 6;
  m.threads = threads;
  m.call_overhead_ns = 11;
  return m;
}

// out = in * a + b, over out's crop (element by element: buffers may be folded).
struct scale_offset {
  float a, b;
  index_t operator()(const buffer<const float>& in, const buffer<float>& out) const {
    for (index_t y = out.dim(1).min(); y <= out.dim(1).max(); ++y) {
      for (index_t x = out.dim(0).min(); x <= out.dim(0).max(); ++x) out(x, y) = in(x, y) * a + b;
    }
    return 0;
  }
};

struct scale_offset_1d {
  float a, b;
  index_t operator()(const buffer<const float>& in, const buffer<float>& out) const {
    for (index_t x = out.dim(0).min(); x <= out.dim(0).max(); ++x) out(x) = in(x)*a + b;
    return 0;
  }
};

inline index_t box3x3(const buffer<const float>& in, const buffer<float>& out) {
  for (index_t y = out.dim(1).min(); y <= out.dim(1).max(); ++y) {
    for (index_t x = out.dim(0).min(); x <= out.dim(0).max(); ++x) {
      float s = 0;
      for (int dy = -1; dy <= 1; ++dy) {
        for (int dx = -1; dx <= 1; ++dx) s += in(x + dx, y + dy);
      }
      out(x, y) = s;
    }
  }
  return 0;
}

// A graph: its buffers and funcs, made fresh for each schedule.
struct graph {
  node_context ctx;
  std::vector<buffer_expr_ptr> bufs;
  std::vector<func> funcs;
  buffer_expr_ptr in, out;

  pipeline build() { return build_pipeline(ctx, {in}, {out}); }
};

// in -> b1 -> ... -> b(K-1) -> out, 1-D.
inline std::unique_ptr<graph> elementwise_chain(int k) {
  auto g = std::make_unique<graph>();
  var x(g->ctx, "x");
  g->in = buffer_expr::make(g->ctx, "in", 1, sizeof(float));
  buffer_expr_ptr prev = g->in;
  for (int i = 0; i < k; ++i) {
    buffer_expr_ptr next = i + 1 == k ? buffer_expr::make(g->ctx, "out", 1, sizeof(float))
                                      : buffer_expr::make(g->ctx, numbered("b", i + 1), 1, sizeof(float));
    g->funcs.push_back(func::make(scale_offset_1d{0.5f + 0.125f * (i % 4), 0.25f * (i % 3)}, {{prev, {point(x)}}},
                                  {{next, {x}}}, {.name = numbered("f", i)}));
    prev = next;
  }
  g->out = prev;
  return g;
}

// in -> e = in * 2 + 1 -> box -> [box ->] out; stages = 2 or 3.
inline std::unique_ptr<graph> stencil_chain(int stages) {
  auto g = std::make_unique<graph>();
  var x(g->ctx, "x"), y(g->ctx, "y");
  const box_expr pt = {point(x), point(y)};
  const box_expr nbhd = {bounds(x - 1, x + 1), bounds(y - 1, y + 1)};
  g->in = buffer_expr::make(g->ctx, "in", 2, sizeof(float));
  auto e = buffer_expr::make(g->ctx, "e", 2, sizeof(float));
  g->funcs.push_back(func::make(scale_offset{2, 1}, {{g->in, pt}}, {{e, {x, y}}}, {.name = "e"}));
  buffer_expr_ptr prev = e;
  for (int s = 1; s < stages; ++s) {
    auto b = buffer_expr::make(g->ctx, s + 1 == stages ? "out" : numbered("b", s), 2, sizeof(float));
    g->funcs.push_back(func::make(box3x3, {{prev, nbhd}}, {{b, {x, y}}}, {.name = numbered("box", s)}));
    prev = b;
  }
  g->out = prev;
  return g;
}

// in -> e = in * 2 -> total = sum of e (a reduction over every element, rank 0);
// in -> g = in + 1 -> h = g * 3; out = h + total.
inline std::unique_ptr<graph> reduction_chain() {
  auto g = std::make_unique<graph>();
  var x(g->ctx, "x"), y(g->ctx, "y");
  const box_expr pt = {point(x), point(y)};
  g->in = buffer_expr::make(g->ctx, "in", 2, sizeof(float));
  auto e = buffer_expr::make(g->ctx, "e", 2, sizeof(float));
  auto total = buffer_expr::make(g->ctx, "total", 0, sizeof(float));
  auto gb = buffer_expr::make(g->ctx, "g", 2, sizeof(float));
  auto hb = buffer_expr::make(g->ctx, "h", 2, sizeof(float));
  g->out = buffer_expr::make(g->ctx, "out", 2, sizeof(float));
  g->funcs.push_back(func::make(scale_offset{2, 0}, {{g->in, pt}}, {{e, {x, y}}}, {.name = "e"}));
  g->funcs.push_back(func::make(
      [](const buffer<const float>& e, const buffer<float>& t) -> index_t {
        float s = 0;
        for (index_t j = e.dim(1).min(); j <= e.dim(1).max(); ++j) {
          for (index_t i = e.dim(0).min(); i <= e.dim(0).max(); ++i) s += e(i, j);
        }
        t() = s;
        return 0;
      },
      {{e, {g->in->dim(0).bounds, g->in->dim(1).bounds}}}, {{total, {}}}, {.name = "total"}));
  g->funcs.push_back(func::make(scale_offset{1, 1}, {{g->in, pt}}, {{gb, {x, y}}}, {.name = "g"}));
  g->funcs.push_back(func::make(scale_offset{3, 0}, {{gb, pt}}, {{hb, {x, y}}}, {.name = "h"}));
  g->funcs.push_back(func::make(
      [](const buffer<const float>& h, const buffer<const float>& t, const buffer<float>& out) -> index_t {
        for (index_t j = out.dim(1).min(); j <= out.dim(1).max(); ++j) {
          for (index_t i = out.dim(0).min(); i <= out.dim(0).max(); ++i) out(i, j) = h(i, j) + t();
        }
        return 0;
      },
      {{hb, pt}, {total, {}}}, {{g->out, {x, y}}}, {.name = "out"}));
  return g;
}

// in -> e1 = in * 0.5 + 1 -> e2 = e1 * 3 -> partial(p) = sum of e2 over [p * chunk, p * chunk +
// chunk - 1] -> out(0) = sum of the partials (1-D, one element). Counts e1's calls.
struct partial_reduction {
  node_context ctx;
  buffer_expr_ptr in, out;
  std::vector<func> funcs;
  std::shared_ptr<std::atomic<int>> e1_calls = std::make_shared<std::atomic<int>>(0);

  explicit partial_reduction(index_t chunk) {
    var x(ctx, "x"), p(ctx, "p"), z(ctx, "z");
    in = buffer_expr::make(ctx, "in", 1, sizeof(float));
    auto e1 = buffer_expr::make(ctx, "e1", 1, sizeof(float));
    auto e2 = buffer_expr::make(ctx, "e2", 1, sizeof(float));
    auto partials = buffer_expr::make(ctx, "partials", 1, sizeof(float));
    out = buffer_expr::make(ctx, "out", 1, sizeof(float));
    std::shared_ptr<std::atomic<int>> calls = e1_calls;
    funcs.push_back(func::make(
        [calls](const buffer<const float>& i, const buffer<float>& o) {
          ++*calls;
          return scale_offset_1d{0.5f, 1}(i, o);
        },
        {{in, {point(x)}}}, {{e1, {x}}}, {.name = "e1"}));
    funcs.push_back(func::make(scale_offset_1d{3, 0}, {{e1, {point(x)}}}, {{e2, {x}}}, {.name = "e2"}));
    funcs.push_back(func::make(
        [chunk](const buffer<const float>& e, const buffer<float>& o) -> index_t {
          for (index_t q = o.dim(0).min(); q <= o.dim(0).max(); ++q) {
            float s = 0;
            for (index_t i = q * chunk; i < (q + 1) * chunk; ++i) s += e(i);
            o(q) = s;
          }
          return 0;
        },
        {{e2, {bounds(p * chunk, p * chunk + chunk - 1)}}}, {{partials, {p}}}, {.name = "partial"}));
    funcs.push_back(func::make(
        [](const buffer<const float>& ps, const buffer<float>& o) -> index_t {
          float s = 0;
          for (index_t q = ps.dim(0).min(); q <= ps.dim(0).max(); ++q) s += ps(q);
          o(o.dim(0).min()) = s;
          return 0;
        },
        {{partials, {bounds(in->dim(0).min() / chunk, in->dim(0).max() / chunk)}}}, {{out, {z}}}, {.name = "total"}));
  }

  float run(pipeline& pl, index_t n, eval_context* ctx = nullptr) {
    buffer<float, 1> i({n}), o({1});
    i.allocate();
    o.allocate();
    for (index_t x = 0; x < n; ++x) i(x) = static_cast<float>(x % 101) * 0.01f;
    const index_t r = ctx ? pl.evaluate({&i}, {&o}, *ctx) : pl.evaluate({&i}, {&o});
    EXPECT_EQ(r, 0);
    return o(0);
  }
};

// Runs a pipeline on an input of the given extents (with a border of `border` on each side) and
// returns the output.
inline buffer<float, 2> run2d(pipeline& p, index_t w, index_t h, int border, eval_context* ctx = nullptr) {
  buffer<float, 2> in({w + 2 * border, h + 2 * border}), out({w, h});
  in.translate(-border, -border);
  in.allocate();
  out.allocate();
  for (index_t y = -border; y < h + border; ++y) {
    for (index_t x = -border; x < w + border; ++x) in(x, y) = static_cast<float>((x * 7 + y * 13) % 17) - 8;
  }
  const index_t r = ctx ? p.evaluate({&in}, {&out}, *ctx) : p.evaluate({&in}, {&out});
  EXPECT_EQ(r, 0);
  return out;
}

inline buffer<float, 1> run1d(pipeline& p, index_t n, eval_context* ctx = nullptr) {
  buffer<float, 1> in({n}), out({n});
  in.allocate();
  out.allocate();
  for (index_t x = 0; x < n; ++x) in(x) = static_cast<float>(x % 101) * 0.01f;
  const index_t r = ctx ? p.evaluate({&in}, {&out}, *ctx) : p.evaluate({&in}, {&out});
  EXPECT_EQ(r, 0);
  return out;
}

// What the unscheduled stencil chain of `stages` computes on run2d's input of w x h.
inline buffer<float, 2> unscheduled_stencil(int stages, index_t w, index_t h) {
  auto plain = stencil_chain(stages);
  pipeline p = plain->build();
  return run2d(p, w, h, stages - 1);
}

// Builds g's pipeline and runs it (run2d) on a thread pool of 2 threads (one worker).
inline buffer<float, 2> run2d_on_two_threads(graph& g, index_t w, index_t h, int border) {
  thread_pool_impl pool(1);
  eval_config config;
  config.thread_pool = &pool;
  eval_context ctx;
  ctx.config = &config;
  pipeline p = g.build();
  return run2d(p, w, h, border, &ctx);
}

template <typename T, std::size_t N>
inline void expect_equal(const buffer<T, N>& a, const buffer<T, N>& b) {
  ASSERT_EQ(a.elem_count(), b.elem_count());
  const T* pa = a.base();
  const T* pb = b.base();
  std::size_t wrong = 0;
  for (std::size_t i = 0; i < a.elem_count(); ++i) wrong += pa[i] != pb[i];
  EXPECT_EQ(wrong, 0u);
}

inline const schedule_report::func_decision& decision(const schedule_report& r, const std::string& name) {
  for (const auto& d : r.funcs) {
    if (d.f->name() == name) return d;
  }
  static schedule_report::func_decision none;
  ADD_FAILURE() << "no decision for " << name;
  return none;
}

}  // namespace schedule_test
}  // namespace slinky

#endif  // SLINKY_SCHEDULER_TEST_SCHEDULE_TEST_UTIL_H
