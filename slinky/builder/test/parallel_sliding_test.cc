// Parallel loops that slide (docs/threads.md, "Default storage in parallel loops"): with default
// storage, an intermediate whose consumers' windows overlap between iterations of a parallel
// loop is computed once, through one shared ring buffer the loop pipelines; one whose windows
// do not overlap keeps a block per worker. Every case counts the points each callback computes
// (nothing twice) and the allocations (one per shared intermediate), on a pool of 2 workers and
// without a pool, and compares the output with a plain reference. Runs under ThreadSanitizer, on
// the bundled pool and on each host pool adapter (test_pool.h).
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "slinky/base/test/test_pool.h"
#include "slinky/base/thread_pool_impl.h"
#include "slinky/builder/pipeline.h"
#include "slinky/runtime/print.h"
#include "test_funcs.h"

namespace slinky {
namespace {

using test::memory_counter;
using test::write_counter;

// out = in * 3 + 1, counting the points written.
auto times_3(write_counter& c) {
  return [&c](const buffer<const int>& in, const buffer<int>& out) -> index_t {
    c.record(out);
    return test::elementwise<int>(in, out, [](int v) { return v * 3 + 1; });
  };
}
// out = 3x3 box sum of in, counting the points written.
auto sum_3x3(write_counter& c) {
  return [&c](const buffer<const int>& in, const buffer<int>& out) -> index_t {
    c.record(out);
    return test::box_sum<int>(in, out, 1, 1);
  };
}

// out(x, y) = the sum of in(x .. x + 5, y).
index_t sum_6_columns(const buffer<const int>& in, const buffer<int>& out) {
  for (index_t y = out.dim(1).min(); y <= out.dim(1).max(); ++y) {
    for (index_t x = out.dim(0).min(); x <= out.dim(0).max(); ++x) {
      int sum = 0;
      for (index_t k = 0; k <= 5; ++k) sum += in(x + k, y);
      out(x, y) = sum;
    }
  }
  return 0;
}

// Each case runs on a pool of 2 workers and without a pool.
std::array<thread_pool*, 2> pool_or_none(thread_pool& pool) { return {&pool, nullptr}; }

// A plain reference of the stages above.
buffer<int, 2> reference(const buffer<int, 2>& in, const std::vector<std::string>& stages, index_t w, index_t h) {
  // Each 3x3 stage shrinks the valid region by 1 on each side; compute everything on in's domain.
  buffer<int, 2> cur({in.dim(0).extent(), in.dim(1).extent()});
  cur.translate(in.dim(0).min(), in.dim(1).min());
  cur.allocate();
  for_each_element([](int* d, const int* s) { *d = *s; }, cur, in);
  for (const std::string& s : stages) {
    buffer<int, 2> next({cur.dim(0).extent(), cur.dim(1).extent()});
    next.translate(cur.dim(0).min(), cur.dim(1).min());
    next.allocate();
    for (index_t y = cur.dim(1).min(); y <= cur.dim(1).max(); ++y) {
      for (index_t x = cur.dim(0).min(); x <= cur.dim(0).max(); ++x) {
        if (s == "times_3") {
          next(x, y) = cur(x, y) * 3 + 1;
        } else if (x > cur.dim(0).min() && x < cur.dim(0).max() && y > cur.dim(1).min() && y < cur.dim(1).max()) {
          int sum = 0;
          for (int dy = -1; dy <= 1; ++dy) {
            for (int dx = -1; dx <= 1; ++dx) sum += cur(x + dx, y + dy);
          }
          next(x, y) = sum;
        } else {
          next(x, y) = 0;
        }
      }
    }
    cur = std::move(next);
  }
  buffer<int, 2> out({w, h});
  out.allocate();
  for (index_t y = 0; y < h; ++y) {
    for (index_t x = 0; x < w; ++x) out(x, y) = cur(x, y);
  }
  return out;
}

// A chain of stages (each "times_3" or "sum_3x3") from in (2-D) to out, with counters per stage.
struct chain {
  node_context ctx;
  std::vector<std::string> stages;
  std::vector<buffer_expr_ptr> bufs;
  std::vector<std::unique_ptr<write_counter>> counters;
  std::vector<func> funcs;
  var x{ctx, "x"}, y{ctx, "y"};

  explicit chain(std::vector<std::string> s) : stages(std::move(s)) {
    bufs.push_back(buffer_expr::make(ctx, "in", 2, sizeof(int)));
    for (std::size_t i = 0; i < stages.size(); ++i) {
      const bool last = i + 1 == stages.size();
      bufs.push_back(buffer_expr::make(ctx, last ? std::string("out") : std::string("b").append(std::to_string(i)), 2,
                                       sizeof(int)));
      counters.push_back(std::make_unique<write_counter>());
      write_counter& c = *counters.back();
      if (stages[i] == "times_3") {
        funcs.push_back(
            func::make(times_3(c), {{bufs[i], {point(x), point(y)}}}, {{bufs[i + 1], {x, y}}}, {.name = stages[i]}));
      } else {
        funcs.push_back(func::make(sum_3x3(c), {{bufs[i], {bounds(x - 1, x + 1), bounds(y - 1, y + 1)}}},
                                   {{bufs[i + 1], {x, y}}}, {.name = stages[i]}));
      }
    }
  }
  func& last() { return funcs.back(); }

  // The halo of `in` the chain needs around the output.
  index_t halo() const {
    index_t h = 0;
    for (const std::string& s : stages) h += s == "sum_3x3" ? 1 : 0;
    return h;
  }

  struct result {
    int allocations;
    std::vector<index_t> sizes;
    index_t peak_bytes;
  };

  // Builds, runs on `pool` (or none), checks the output against the reference and that no stage
  // computed a point twice, and that each stage computed exactly what the output needs.
  result run(thread_pool* pool, index_t w, index_t h) {
    pipeline p = build_pipeline(ctx, {bufs.front()}, {bufs.back()});
    const index_t r = halo();
    buffer<int, 2> in_buf({w + 2 * r, h + 2 * r});
    in_buf.translate(-r, -r);
    in_buf.allocate();
    test::fill_random(in_buf, 7);
    buffer<int, 2> out_buf({w, h});
    out_buf.allocate();
    memory_counter m;
    m.config.thread_pool = pool;
    EXPECT_EQ(p.evaluate({&in_buf}, {&out_buf}, m.context), 0);
    buffer<int, 2> expected = reference(in_buf, stages, w, h);
    for (index_t yy = 0; yy < h; ++yy) {
      for (index_t xx = 0; xx < w; ++xx) {
        if (out_buf(xx, yy) != expected(xx, yy)) {
          ADD_FAILURE() << "wrong output at " << xx << ", " << yy;
          return {};
        }
      }
    }
    EXPECT_EQ(m.allocations, m.frees);
    // Stage i computes the output grown by the halo of the 3x3 stages after it, each point once.
    index_t after = r;
    for (std::size_t i = 0; i < stages.size(); ++i) {
      if (stages[i] == "sum_3x3") --after;
      const std::size_t needed = static_cast<std::size_t>((w + 2 * after) * (h + 2 * after));
      EXPECT_EQ(counters[i]->elements(), needed) << "stage " << i << " (" << stages[i] << ")";
      EXPECT_EQ(counters[i]->max_count(), 1) << "stage " << i << " (" << stages[i] << ") computed a point twice";
    }
    return {m.allocations, m.sizes, m.peak_bytes};
  }
};

constexpr index_t W = 32, H = 22;

// Evaluates p on `pool` (or none) with a random input of extents `in_extents` whose first
// element is at `in_min`, and a W x H output; the buffers and the allocation counters after.
struct run_2d {
  buffer<int, 2> in;
  buffer<int, 2> out{{W, H}};
  memory_counter m;

  run_2d(const pipeline& p, std::array<index_t, 2> in_extents, std::array<index_t, 2> in_min, thread_pool* pool,
         int seed)
      : in({in_extents[0], in_extents[1]}) {
    in.translate(in_min[0], in_min[1]);
    in.allocate();
    test::fill_random(in, seed);
    out.allocate();
    m.config.thread_pool = pool;
    EXPECT_EQ(p.evaluate({&in}, {&out}, m.context), 0);
  }
};

// A 2-stage stencil, rows in a parallel loop: the producer is computed once, into one ring
// buffer of the rows of K = 2 iterations in flight (the serial fold, step + 2 rows, plus a step).
TEST(parallel_sliding, stencil_rows) {
  test_pool pool(2);
  for (index_t step : {1, 3, 5}) {
    for (thread_pool* tp : pool_or_none(pool)) {
      chain c({"times_3", "sum_3x3"});
      c.last().loops({{c.y, step, loop::parallel}});
      chain::result r = c.run(tp, W, H);
      EXPECT_EQ(r.allocations, 1) << "step " << step;
      for (index_t size : r.sizes) EXPECT_LE(size, (W + 2) * (2 * step + 2) * index_t{sizeof(int)}) << "step " << step;
    }
  }
}

// Elementwise -> 3x3 -> 3x3, rows in a parallel loop: both intermediates computed once, one
// allocation each.
TEST(parallel_sliding, stencil_chain_rows) {
  test_pool pool(2);
  for (index_t step : {1, 3, 4}) {
    for (thread_pool* tp : pool_or_none(pool)) {
      chain c({"times_3", "sum_3x3", "sum_3x3"});
      c.last().loops({{c.y, step, loop::parallel}});
      chain::result r = c.run(tp, W, H);
      EXPECT_EQ(r.allocations, 2) << "step " << step;
    }
  }
}

// A 3x3 stencil looped over x (inner, serial or parallel) and y (outer, parallel or serial):
// the producer computes each point once and its buffer is allocated once.
TEST(parallel_sliding, nested_loops) {
  test_pool pool(2);
  for (expr y_workers : {expr(loop::parallel), expr(loop::serial)}) {
    for (expr x_workers : {expr(loop::serial), expr(loop::parallel)}) {
      if (is_one(y_workers) && is_one(x_workers)) continue;
      for (index_t step : {1, 2}) {
        chain c({"times_3", "sum_3x3"});
        c.last().loops({{c.x, 8, x_workers}, {c.y, step, y_workers}});
        chain::result r = c.run(&pool, W, H);
        EXPECT_EQ(r.allocations, 1) << "x workers " << x_workers << ", y workers " << y_workers << ", step " << step;
      }
    }
  }
}

// Elementwise chains do not overlap between iterations: each worker keeps its own block of the
// chunk (no pipelining, no shared buffer), at most one per worker and intermediate.
TEST(parallel_sliding, elementwise_keeps_blocks_per_worker) {
  test_pool pool(2);
  chain c({"times_3", "times_3", "times_3"});
  c.last().loops({{c.y, 2, loop::parallel}});
  chain::result r = c.run(&pool, W, H);
  EXPECT_GE(r.allocations, 2);
  EXPECT_LE(r.allocations, 2 * 3);
  for (index_t size : r.sizes) EXPECT_EQ(size, W * 2 * index_t{sizeof(int)});
}

// A step that does not divide the extent leaves a shorter last iteration: it reuses the block its
// worker kept for the full ones (same strides, fewer rows) instead of allocating a second one. At
// most one block per thread and intermediate, none larger than a full chunk.
TEST(parallel_sliding, elementwise_tail_iteration_reuses_the_workers_block) {
  test_pool pool(2);
  chain c({"times_3", "times_3", "times_3"});
  ASSERT_NE(H % 3, 0);
  c.last().loops({{c.y, 3, loop::parallel}});
  chain::result r = c.run(&pool, W, H);
  const int threads = pool.thread_count() + 1;
  EXPECT_GE(r.allocations, 2);
  EXPECT_LE(r.allocations, 2 * threads);
  for (index_t size : r.sizes) EXPECT_LE(size, W * 3 * index_t{sizeof(int)});
  EXPECT_LE(r.peak_bytes, 2 * threads * W * 3 * index_t{sizeof(int)});
}

// Storage the client puts inside the parallel loop is the client's choice: each iteration owns
// its window and recomputes its halo.
TEST(parallel_sliding, store_inside_recomputes_halo) {
  test_pool pool(2);
  chain c({"times_3", "sum_3x3"});
  c.last().loops({{c.y, 2, loop::parallel}});
  c.bufs[1]->store_at({&c.last(), c.y});
  pipeline p = build_pipeline(c.ctx, {c.bufs.front()}, {c.bufs.back()});
  run_2d r(p, {W + 2, H + 2}, {-1, -1}, &pool, 7);
  const buffer<int, 2>& in_buf = r.in;
  const buffer<int, 2>& out_buf = r.out;
  const memory_counter& m = r.m;
  buffer<int, 2> expected = reference(in_buf, c.stages, W, H);
  for (index_t yy = 0; yy < H; ++yy) {
    for (index_t xx = 0; xx < W; ++xx) ASSERT_EQ(out_buf(xx, yy), expected(xx, yy));
  }
  EXPECT_EQ(c.counters[0]->max_count(), 2);  // the rows between two windows
  for (index_t size : m.sizes) EXPECT_LE(size, (W + 2) * 4 * index_t{sizeof(int)});
}

// A producer feeding two consumers in a parallel loop, one a 3x3 stencil and one elementwise:
// out = box(a) + a * 3 + 1 with a = in * 3 + 1. a's windows overlap (the stencil's do), so it is
// shared and computed once; the elementwise consumer's intermediate keeps per-worker blocks.
TEST(parallel_sliding, producer_with_two_consumers) {
  test_pool pool(2);
  for (index_t step : {1, 3}) {
    node_context ctx;
    auto in = buffer_expr::make(ctx, "in", 2, sizeof(int));
    auto a = buffer_expr::make(ctx, "a", 2, sizeof(int));
    auto boxed = buffer_expr::make(ctx, "boxed", 2, sizeof(int));
    auto scaled = buffer_expr::make(ctx, "scaled", 2, sizeof(int));
    auto out = buffer_expr::make(ctx, "out", 2, sizeof(int));
    var x(ctx, "x"), y(ctx, "y");
    write_counter ca, cb, cs;
    func fa = func::make(times_3(ca), {{in, {point(x), point(y)}}}, {{a, {x, y}}}, {.name = "a"});
    func fb = func::make(sum_3x3(cb), {{a, {bounds(x - 1, x + 1), bounds(y - 1, y + 1)}}}, {{boxed, {x, y}}},
                         {.name = "boxed"});
    func fs = func::make(times_3(cs), {{a, {point(x), point(y)}}}, {{scaled, {x, y}}}, {.name = "scaled"});
    func fo = func::make(
        [](const buffer<const int>& b, const buffer<const int>& s, const buffer<int>& o) -> index_t {
          for (index_t yy = o.dim(1).min(); yy <= o.dim(1).max(); ++yy) {
            for (index_t xx = o.dim(0).min(); xx <= o.dim(0).max(); ++xx) o(xx, yy) = b(xx, yy) + s(xx, yy);
          }
          return 0;
        },
        {{boxed, {point(x), point(y)}}, {scaled, {point(x), point(y)}}}, {{out, {x, y}}}, {.name = "out"});
    fo.loops({{y, step, loop::parallel}});
    pipeline p = build_pipeline(ctx, {in}, {out});

    run_2d r(p, {W + 2, H + 2}, {-1, -1}, &pool, 3);
    const buffer<int, 2>& in_buf = r.in;
    const buffer<int, 2>& out_buf = r.out;
    const memory_counter& m = r.m;
    for (index_t yy = 0; yy < H; ++yy) {
      for (index_t xx = 0; xx < W; ++xx) {
        int sum = 0;
        for (int dy = -1; dy <= 1; ++dy) {
          for (int dx = -1; dx <= 1; ++dx) sum += in_buf(xx + dx, yy + dy) * 3 + 1;
        }
        ASSERT_EQ(out_buf(xx, yy), sum + (in_buf(xx, yy) * 3 + 1) * 3 + 1) << xx << ", " << yy << ", step " << step;
      }
    }
    EXPECT_EQ(ca.max_count(), 1) << "step " << step;
    EXPECT_EQ(ca.elements(), static_cast<std::size_t>((W + 2) * (H + 2)));
    EXPECT_EQ(cb.max_count(), 1);
    EXPECT_EQ(cs.max_count(), 1);
    EXPECT_EQ(cs.elements(), static_cast<std::size_t>(W * H));
    EXPECT_EQ(m.allocations, m.frees);
  }
}

// out(x, y) = col(x) * row(y), with col = in_x * 3 + 1 and row = in_y * 3 + 1, looped over y
// (outer) and x (inner), serial or parallel. By default col would be computed in the x loop, in
// every row y; its region does not move with y, so the builder computes it outside the y loop,
// once (docs/builder.md, "Where funcs run"). row moves with y: it stays inside, one row each.
TEST(parallel_sliding, invariant_producer_is_computed_once) {
  test_pool pool(2);
  for (bool parallel_y : {false, true}) {
    for (bool parallel_x : {false, true}) {
      for (index_t step : {1, 3}) {
        node_context ctx;
        auto in_x = buffer_expr::make(ctx, "in_x", 1, sizeof(int));
        auto in_y = buffer_expr::make(ctx, "in_y", 1, sizeof(int));
        auto col = buffer_expr::make(ctx, "col", 1, sizeof(int));
        auto row = buffer_expr::make(ctx, "row", 1, sizeof(int));
        auto out = buffer_expr::make(ctx, "out", 2, sizeof(int));
        var x(ctx, "x"), y(ctx, "y");
        write_counter c_col, c_row;
        func f_col = func::make(times_3(c_col), {{in_x, {point(x)}}}, {{col, {x}}}, {.name = "col"});
        func f_row = func::make(times_3(c_row), {{in_y, {point(y)}}}, {{row, {y}}}, {.name = "row"});
        func f_out = func::make(
            [](const buffer<const int>& c, const buffer<const int>& r, const buffer<int>& o) -> index_t {
              for (index_t yy = o.dim(1).min(); yy <= o.dim(1).max(); ++yy) {
                for (index_t xx = o.dim(0).min(); xx <= o.dim(0).max(); ++xx) o(xx, yy) = c(xx) * r(yy);
              }
              return 0;
            },
            {{col, {point(x)}}, {row, {point(y)}}}, {{out, {x, y}}}, {.name = "out"});
        f_out.loops({{x, step, parallel_x ? loop::parallel : loop::serial},
                     {y, 1, parallel_y ? loop::parallel : loop::serial}});
        pipeline p = build_pipeline(ctx, {in_x, in_y}, {out});

        buffer<int, 1> in_x_buf({W});
        buffer<int, 1> in_y_buf({H});
        in_x_buf.allocate();
        in_y_buf.allocate();
        test::fill_random(in_x_buf, 1);
        test::fill_random(in_y_buf, 2);
        buffer<int, 2> out_buf({W, H});
        out_buf.allocate();
        memory_counter m;
        m.config.thread_pool = &pool;
        ASSERT_EQ(p.evaluate({&in_x_buf, &in_y_buf}, {&out_buf}, m.context), 0);
        const std::string what = std::string(parallel_y ? "parallel" : "serial") + " y, " +
                                 (parallel_x ? "parallel" : "serial") + " x, step " + std::to_string(step);
        for (index_t yy = 0; yy < H; ++yy) {
          for (index_t xx = 0; xx < W; ++xx) {
            ASSERT_EQ(out_buf(xx, yy), (in_x_buf(xx) * 3 + 1) * (in_y_buf(yy) * 3 + 1)) << what;
          }
        }
        EXPECT_EQ(c_col.max_count(), 1) << what;
        EXPECT_EQ(c_col.elements(), static_cast<std::size_t>(W)) << what;
        EXPECT_EQ(c_row.max_count(), 1) << what;
        EXPECT_EQ(c_row.elements(), static_cast<std::size_t>(H)) << what;
        EXPECT_EQ(m.allocations, m.frees);
      }
    }
  }
}

// in -> a (times_3) -> b (times_3, with a loop of its own over x) -> out(x, y) = the sum of
// b(x .. x + 5, y), with out's x loop parallel (2 workers). b's windows overlap: it is shared and
// pipelined, and a's producer, computed in b's loop by default, becomes a stage of the parallel
// loop. b's stage computes one new column per iteration, so a's ring buffer holds the columns
// of the 2 iterations in flight, not b's whole 6-column window (and b's the window plus a column).
TEST(parallel_sliding, producer_moved_out_of_a_nested_loop_folds_to_its_columns) {
  test_pool pool(2);
  for (thread_pool* tp : pool_or_none(pool)) {
    node_context ctx;
    auto in = buffer_expr::make(ctx, "in", 2, sizeof(int));
    auto a = buffer_expr::make(ctx, "a", 2, sizeof(int));
    auto b = buffer_expr::make(ctx, "b", 2, sizeof(int));
    auto out = buffer_expr::make(ctx, "out", 2, sizeof(int));
    var x(ctx, "x"), y(ctx, "y");
    write_counter c_a, c_b;
    func f_a = func::make(times_3(c_a), {{in, {point(x), point(y)}}}, {{a, {x, y}}}, {.name = "a"});
    func f_b = func::make(times_3(c_b), {{a, {point(x), point(y)}}}, {{b, {x, y}}}, {.name = "b"});
    func f_out = func::make(sum_6_columns, {{b, {bounds(x, x + 5), point(y)}}}, {{out, {x, y}}}, {.name = "out"});
    f_b.loops({{x, 1}});
    f_out.loops({{x, 1, 2}});
    pipeline p = build_pipeline(ctx, {in}, {out});

    run_2d r(p, {W + 5, H}, {0, 0}, tp, 3);
    const buffer<int, 2>& in_buf = r.in;
    const buffer<int, 2>& out_buf = r.out;
    const memory_counter& m = r.m;
    for (index_t yy = 0; yy < H; ++yy) {
      for (index_t xx = 0; xx < W; ++xx) {
        int expected = 0;
        for (index_t k = 0; k <= 5; ++k) expected += (in_buf(xx + k, yy) * 3 + 1) * 3 + 1;
        ASSERT_EQ(out_buf(xx, yy), expected) << xx << ", " << yy;
      }
    }
    for (const write_counter* c : {&c_a, &c_b}) {
      EXPECT_EQ(c->max_count(), 1);
      EXPECT_EQ(c->elements(), static_cast<std::size_t>((W + 5) * H));
    }
    const index_t column = H * sizeof(int);
    std::vector<index_t> sizes = m.sizes;
    std::sort(sizes.begin(), sizes.end());
    EXPECT_EQ(sizes, (std::vector<index_t>{2 * column, 7 * column}));
    EXPECT_EQ(m.allocations, m.frees);
  }
}

// out(x, y) = the sum of b(x - 1 .. x + 1, y) with b = in * 3 + 1, looped over x (outer, serial)
// and y (inner, parallel or serial). The windows overlap across x but not across y: b slides
// along x, stored outside both loops as it is serially (3 columns), and the iterations of the
// parallel loop write disjoint rows of it, in any order (no pipeline). Each point is computed
// once and b is allocated once.
TEST(parallel_sliding, inner_parallel_loop_keeps_the_outer_slide) {
  test_pool pool(2);
  for (bool parallel : {false, true}) {
    node_context ctx;
    auto in = buffer_expr::make(ctx, "in", 2, sizeof(int));
    auto b = buffer_expr::make(ctx, "b", 2, sizeof(int));
    auto out = buffer_expr::make(ctx, "out", 2, sizeof(int));
    var x(ctx, "x"), y(ctx, "y");
    write_counter c_b;
    func f_b = func::make(times_3(c_b), {{in, {point(x), point(y)}}}, {{b, {x, y}}}, {.name = "b"});
    func f_out = func::make(
        [](const buffer<const int>& i, const buffer<int>& o) -> index_t {
          for (index_t yy = o.dim(1).min(); yy <= o.dim(1).max(); ++yy) {
            for (index_t xx = o.dim(0).min(); xx <= o.dim(0).max(); ++xx)
              o(xx, yy) = i(xx - 1, yy) + i(xx, yy) + i(xx + 1, yy);
          }
          return 0;
        },
        {{b, {bounds(x - 1, x + 1), point(y)}}}, {{out, {x, y}}}, {.name = "out"});
    f_out.loops({{y, 1, parallel ? loop::parallel : loop::serial}, {x, 1}});
    pipeline p = build_pipeline(ctx, {in}, {out});
    // No semaphores: the parallel loop is not pipelined.
    std::ostringstream program;
    program << p.body;
    EXPECT_EQ(program.str().find("semaphore"), std::string::npos) << program.str();

    run_2d r(p, {W + 2, H}, {-1, 0}, &pool, 4);
    const buffer<int, 2>& in_buf = r.in;
    const buffer<int, 2>& out_buf = r.out;
    const memory_counter& m = r.m;
    for (index_t yy = 0; yy < H; ++yy) {
      for (index_t xx = 0; xx < W; ++xx) {
        int expected = 0;
        for (index_t k = -1; k <= 1; ++k) expected += in_buf(xx + k, yy) * 3 + 1;
        ASSERT_EQ(out_buf(xx, yy), expected) << xx << ", " << yy;
      }
    }
    EXPECT_EQ(c_b.max_count(), 1);
    EXPECT_EQ(c_b.elements(), static_cast<std::size_t>((W + 2) * H));
    EXPECT_EQ(m.sizes, std::vector<index_t>{3 * H * index_t{sizeof(int)}});
    EXPECT_EQ(m.allocations, m.frees);
  }
}

// col(x) = in(x) * 3 + 1; b(x, y) = col(x) * 3 + 1 (the same in every row); c(x, y) = b(x, y) +
// b(x + 1, y), with a loop of its own over y; out(x, y) = the sum of c(x, y .. y + 3). out loops
// over x (inner, parallel) and y (outer, serial). b's windows overlap across x: b is pipelined
// along x, with c and col as stages of their own. col does not move with y: it is computed once,
// before the loops, as it is serially; b's ring buffer holds the one row c reads per iteration.
TEST(parallel_sliding, stage_invariant_in_an_outer_loop_is_computed_once) {
  test_pool pool(2);
  for (bool parallel : {false, true}) {
    node_context ctx;
    auto in = buffer_expr::make(ctx, "in", 1, sizeof(int));
    auto col = buffer_expr::make(ctx, "col", 1, sizeof(int));
    auto b = buffer_expr::make(ctx, "b", 2, sizeof(int));
    auto c = buffer_expr::make(ctx, "c", 2, sizeof(int));
    auto out = buffer_expr::make(ctx, "out", 2, sizeof(int));
    var x(ctx, "x"), y(ctx, "y");
    write_counter c_col, c_b, c_c;
    func f_col = func::make(times_3(c_col), {{in, {point(x)}}}, {{col, {x}}}, {.name = "col"});
    func f_b = func::make(
        [&](const buffer<const int>& i, const buffer<int>& o) -> index_t {
          c_b.record(o);
          for (index_t yy = o.dim(1).min(); yy <= o.dim(1).max(); ++yy) {
            for (index_t xx = o.dim(0).min(); xx <= o.dim(0).max(); ++xx) o(xx, yy) = i(xx) * 3 + 1;
          }
          return 0;
        },
        {{col, {point(x)}}}, {{b, {x, y}}}, {.name = "b"});
    func f_c = func::make(
        [&](const buffer<const int>& i, const buffer<int>& o) -> index_t {
          c_c.record(o);
          for (index_t yy = o.dim(1).min(); yy <= o.dim(1).max(); ++yy) {
            for (index_t xx = o.dim(0).min(); xx <= o.dim(0).max(); ++xx) o(xx, yy) = i(xx, yy) + i(xx + 1, yy);
          }
          return 0;
        },
        {{b, {bounds(x, x + 1), point(y)}}}, {{c, {x, y}}}, {.name = "c"});
    func f_out = func::make(
        [](const buffer<const int>& i, const buffer<int>& o) -> index_t {
          for (index_t yy = o.dim(1).min(); yy <= o.dim(1).max(); ++yy) {
            for (index_t xx = o.dim(0).min(); xx <= o.dim(0).max(); ++xx) {
              o(xx, yy) = i(xx, yy) + i(xx, yy + 1) + i(xx, yy + 2) + i(xx, yy + 3);
            }
          }
          return 0;
        },
        {{c, {point(x), bounds(y, y + 3)}}}, {{out, {x, y}}}, {.name = "out"});
    f_c.loops({{y, 1}});
    f_out.loops({{x, 1, parallel ? loop::parallel : loop::serial}, {y, 1}});
    pipeline p = build_pipeline(ctx, {in}, {out});

    buffer<int, 1> in_buf({W + 1});
    in_buf.allocate();
    test::fill_random(in_buf, 5);
    buffer<int, 2> out_buf({W, H});
    out_buf.allocate();
    memory_counter m;
    m.config.thread_pool = &pool;
    ASSERT_EQ(p.evaluate({&in_buf}, {&out_buf}, m.context), 0);
    auto b_at = [&](index_t xx) { return (in_buf(xx) * 3 + 1) * 3 + 1; };
    for (index_t yy = 0; yy < H; ++yy) {
      for (index_t xx = 0; xx < W; ++xx) ASSERT_EQ(out_buf(xx, yy), 4 * (b_at(xx) + b_at(xx + 1))) << xx << ", " << yy;
    }
    const char* what = parallel ? "parallel" : "serial";
    EXPECT_EQ(c_col.max_count(), 1) << what;
    EXPECT_EQ(c_col.elements(), static_cast<std::size_t>(W + 1)) << what;
    for (const write_counter* counter : {&c_b, &c_c}) EXPECT_EQ(counter->max_count(), 1) << what;
    // b: one row of W + 1 pipelined; serially, the two columns its window slides through along
    // the inner loop over x (its rows are not read again in later iterations of the outer loop
    // over y, so it folds along both loops). col: W + 1; c: W columns of its 4-row window.
    std::vector<index_t> sizes = m.sizes;
    std::sort(sizes.begin(), sizes.end());
    const index_t row = (W + 1) * index_t{sizeof(int)};
    const index_t b_size = parallel ? row : 2 * index_t{sizeof(int)};
    std::vector<index_t> expected = {b_size, row, 4 * W * index_t{sizeof(int)}};
    std::sort(expected.begin(), expected.end());
    EXPECT_EQ(sizes, expected) << what;
    EXPECT_EQ(m.allocations, m.frees);
  }
}

// a = in * 3 + 1, b = a * 3 + 1 with a loop of its own over y, out = b * 3 + 1, looped over y
// (inner, parallel) and x (outer, serial), with a stored at out's x loop: outside the parallel
// loop, by the client. a's producer runs inside b's loop, whose range moves with y, so it does
// not slide; its windows do not overlap across y either. The parallel loop is pipelined so that
// the iterations in flight (2 with max_workers = 2) take turns in a ring buffer of their rows of
// a: a column of 2 rows, where storing it unfolded would take the column's H rows.
TEST(parallel_sliding, client_storage_outside_a_parallel_loop_folds_for_the_iterations_in_flight) {
  test_pool pool(2);
  for (thread_pool* tp : pool_or_none(pool)) {
    node_context ctx;
    auto in = buffer_expr::make(ctx, "in", 2, sizeof(int));
    auto a = buffer_expr::make(ctx, "a", 2, sizeof(int));
    auto b = buffer_expr::make(ctx, "b", 2, sizeof(int));
    auto out = buffer_expr::make(ctx, "out", 2, sizeof(int));
    var x(ctx, "x"), y(ctx, "y");
    write_counter c_a, c_b, c_out;
    func f_a = func::make(times_3(c_a), {{in, {point(x), point(y)}}}, {{a, {x, y}}}, {.name = "a"});
    func f_b = func::make(times_3(c_b), {{a, {point(x), point(y)}}}, {{b, {x, y}}}, {.name = "b"});
    func f_out = func::make(times_3(c_out), {{b, {point(x), point(y)}}}, {{out, {x, y}}}, {.name = "out"});
    f_b.loops({{y, 1}});
    f_out.loops({{y, 1, 2}, {x, 1}});
    a->store_at({&f_out, x});
    pipeline p = build_pipeline(ctx, {in}, {out});

    run_2d r(p, {W, H}, {0, 0}, tp, 5);
    for (index_t yy = 0; yy < H; ++yy) {
      for (index_t xx = 0; xx < W; ++xx) {
        ASSERT_EQ(r.out(xx, yy), ((r.in(xx, yy) * 3 + 1) * 3 + 1) * 3 + 1) << xx << ", " << yy;
      }
    }
    for (const write_counter* c : {&c_a, &c_b, &c_out}) {
      EXPECT_EQ(c->max_count(), 1);
      EXPECT_EQ(c->elements(), static_cast<std::size_t>(W * H));
    }
    // a: one allocation per column, of 2 rows; b: one element per iteration (per worker and
    // iteration, stored inside the parallel loop by default).
    std::vector<index_t> a_sizes;
    for (index_t size : r.m.sizes) {
      if (size != index_t{sizeof(int)}) a_sizes.push_back(size);
    }
    EXPECT_EQ(a_sizes, std::vector<index_t>(W, 2 * index_t{sizeof(int)}));
    EXPECT_EQ(r.m.allocations, r.m.frees);
  }
}

// out(x, y) = b(2x, y) + b(2x + 1, y) + b(2x + 2, y), b = in * 3 + 1, looped over columns
// (outer, parallel) and rows (inner, serial): b's windows overlap across x (2x + 2 is the next
// iteration's 2x) and move by 2 columns per iteration. b is computed once, at the parallel loop
// (whole columns, a stage of its own), into a ring buffer holding the windows of the 2 iterations
// in flight: columns 2x .. 2x + 4, (K - 1) * 2 + 3 = 5 columns (docs/threads.md).
TEST(parallel_sliding, strided_window_folds_over_the_hull_of_the_iterations_in_flight) {
  test_pool pool(2);
  for (thread_pool* tp : pool_or_none(pool)) {
    node_context ctx;
    auto in = buffer_expr::make(ctx, "in", 2, sizeof(int));
    auto b = buffer_expr::make(ctx, "b", 2, sizeof(int));
    auto out = buffer_expr::make(ctx, "out", 2, sizeof(int));
    var x(ctx, "x"), y(ctx, "y");
    write_counter c_b;
    func f_b = func::make(times_3(c_b), {{in, {point(x), point(y)}}}, {{b, {x, y}}}, {.name = "b"});
    func f_out = func::make(
        [](const buffer<const int>& i, const buffer<int>& o) -> index_t {
          for (index_t yy = o.dim(1).min(); yy <= o.dim(1).max(); ++yy) {
            for (index_t xx = o.dim(0).min(); xx <= o.dim(0).max(); ++xx) {
              o(xx, yy) = i(2 * xx, yy) + i(2 * xx + 1, yy) + i(2 * xx + 2, yy);
            }
          }
          return 0;
        },
        {{b, {bounds(2 * x, 2 * x + 2), point(y)}}}, {{out, {x, y}}}, {.name = "out"});
    f_out.loops({{y, 1}, {x, 1, 2}});
    pipeline p = build_pipeline(ctx, {in}, {out});

    run_2d r(p, {2 * W + 1, H}, {0, 0}, tp, 6);
    for (index_t yy = 0; yy < H; ++yy) {
      for (index_t xx = 0; xx < W; ++xx) {
        int expected = 0;
        for (index_t k = 0; k <= 2; ++k) expected += r.in(2 * xx + k, yy) * 3 + 1;
        ASSERT_EQ(r.out(xx, yy), expected) << xx << ", " << yy;
      }
    }
    EXPECT_EQ(c_b.max_count(), 1);
    EXPECT_EQ(c_b.elements(), static_cast<std::size_t>((2 * W + 1) * H));
    EXPECT_EQ(r.m.sizes, std::vector<index_t>{5 * H * index_t{sizeof(int)}});
    EXPECT_EQ(r.m.allocations, r.m.frees);
  }
}

// c(x, y) = a(x, x) (a diagonal read of a = in * 3 + 1), out(x, y) = the sum of c(x .. x + 5, y),
// columns in a parallel loop. c's windows overlap: c is pipelined and slides, computing one new
// column per iteration; a's window moves in both dimensions, so a cannot slide and stays inside
// the loop, where each iteration allocates what it computes and c reads: the one element
// (x + 5, x + 5), not the 6 x 6 box c's whole window would read.
TEST(parallel_sliding, storage_inside_a_pipelined_loop_holds_what_one_iteration_reads) {
  test_pool pool(2);
  for (thread_pool* tp : pool_or_none(pool)) {
    node_context ctx;
    auto in = buffer_expr::make(ctx, "in", 2, sizeof(int));
    auto a = buffer_expr::make(ctx, "a", 2, sizeof(int));
    auto c = buffer_expr::make(ctx, "c", 2, sizeof(int));
    auto out = buffer_expr::make(ctx, "out", 2, sizeof(int));
    var x(ctx, "x"), y(ctx, "y");
    write_counter c_a;
    func f_a = func::make(times_3(c_a), {{in, {point(x), point(y)}}}, {{a, {x, y}}}, {.name = "a"});
    func f_c = func::make(
        [](const buffer<const int>& i, const buffer<int>& o) -> index_t {
          for (index_t yy = o.dim(1).min(); yy <= o.dim(1).max(); ++yy) {
            for (index_t xx = o.dim(0).min(); xx <= o.dim(0).max(); ++xx) o(xx, yy) = i(xx, xx);
          }
          return 0;
        },
        {{a, {point(x), point(x)}}}, {{c, {x, y}}}, {.name = "c"});
    func f_out = func::make(sum_6_columns, {{c, {bounds(x, x + 5), point(y)}}}, {{out, {x, y}}}, {.name = "out"});
    f_out.loops({{x, 1, 2}});
    pipeline p = build_pipeline(ctx, {in}, {out});

    run_2d r(p, {W + 5, W + 5}, {0, 0}, tp, 7);
    for (index_t yy = 0; yy < H; ++yy) {
      for (index_t xx = 0; xx < W; ++xx) {
        int expected = 0;
        for (index_t k = 0; k <= 5; ++k) expected += r.in(xx + k, xx + k) * 3 + 1;
        ASSERT_EQ(r.out(xx, yy), expected) << xx << ", " << yy;
      }
    }
    EXPECT_EQ(c_a.max_count(), 1);
    EXPECT_EQ(c_a.elements(), static_cast<std::size_t>(W + 5));
    index_t largest_a = 0;
    for (index_t size : r.m.sizes) {
      if (size < index_t{H * sizeof(int)}) largest_a = std::max(largest_a, size);
    }
    EXPECT_EQ(largest_a, index_t{sizeof(int)});
    EXPECT_EQ(r.m.allocations, r.m.frees);
  }
}

// c(x, y) = b(x / 2, y) + b(x / 2 + 1, y), b = in * 3 + 1 stored at the root by the client,
// out(x, y) = c(clamp(x, 0, 16), y), so c is needed in columns [0, 16] at most; c in rows
// (serial), each row in chunks of 100 columns in a parallel loop. The parallel loop's range is
// provably one iteration, but b's window in it ([x / 2, x / 2 + 50]) is wider than half a step,
// so the loop starts one step early to warm up, and the second iteration computes only the
// columns the first did not: it reads column 8 of b from the first. b folds along the rows, not
// along the parallel loop, so only the overlap of the windows says that the loop must be
// pipelined, and the loop's range proper has no second iteration to compare with (found by the
// random tester, which lost the race about one run in 30). The first call of b sleeps: a second
// iteration that does not wait for the first reads column 8 before it is written.
TEST(parallel_sliding, warm_up_iteration_of_a_one_iteration_loop_is_waited_for) {
  test_pool pool(2);
  for (thread_pool* tp : pool_or_none(pool)) {
    node_context ctx;
    auto in = buffer_expr::make(ctx, "in", 2, sizeof(int));
    auto b = buffer_expr::make(ctx, "b", 2, sizeof(int));
    auto c = buffer_expr::make(ctx, "c", 2, sizeof(int));
    auto out = buffer_expr::make(ctx, "out", 2, sizeof(int));
    var x(ctx, "x"), y(ctx, "y");
    write_counter c_b;
    std::atomic<int> b_calls{0};
    func f_b = func::make(
        [&](const buffer<const int>& i, const buffer<int>& o) -> index_t {
          if (b_calls++ == 0) std::this_thread::sleep_for(std::chrono::milliseconds(50));
          return times_3(c_b)(i, o);
        },
        {{in, {point(x), point(y)}}}, {{b, {x, y}}}, {.name = "b"});
    func f_c = func::make(
        [](const buffer<const int>& i, const buffer<int>& o) -> index_t {
          for (index_t yy = o.dim(1).min(); yy <= o.dim(1).max(); ++yy) {
            for (index_t xx = o.dim(0).min(); xx <= o.dim(0).max(); ++xx) {
              o(xx, yy) = i(xx / 2, yy) + i(xx / 2 + 1, yy);
            }
          }
          return 0;
        },
        {{b, {bounds(x / 2, x / 2 + 1), point(y)}}}, {{c, {x, y}}}, {.name = "c"});
    func f_out = func::make(
        [](const buffer<const int>& i, const buffer<int>& o) -> index_t {
          for (index_t yy = o.dim(1).min(); yy <= o.dim(1).max(); ++yy) {
            for (index_t xx = o.dim(0).min(); xx <= o.dim(0).max(); ++xx) {
              o(xx, yy) = i(std::clamp<index_t>(xx, 0, 16), yy);
            }
          }
          return 0;
        },
        {{c, {point(clamp(x, 0, 16)), point(y)}}}, {{out, {x, y}}}, {.name = "out"});
    f_c.loops({{x, 100, loop::parallel}, {y, 1}});
    f_c.compute_root();
    b->store_root();
    pipeline p = build_pipeline(ctx, {in}, {out});
    std::ostringstream program;
    program << p.body;
    EXPECT_NE(program.str().find("semaphore_wait"), std::string::npos) << program.str();

    const index_t w = 17, h = 3;
    buffer<int, 2> in_buf({w / 2 + 2, h}), out_buf({w, h});
    in_buf.allocate();
    out_buf.allocate();
    for (index_t yy = 0; yy < h; ++yy) {
      for (index_t xx = 0; xx < w / 2 + 2; ++xx) in_buf(xx, yy) = static_cast<int>(xx * 7 + yy * 5 + 2);
    }
    eval_context ectx;
    eval_config config;
    config.thread_pool = tp;
    ectx.config = &config;
    ASSERT_EQ(p.evaluate({&in_buf}, {&out_buf}, ectx), 0);
    for (index_t yy = 0; yy < h; ++yy) {
      for (index_t xx = 0; xx < w; ++xx) {
        ASSERT_EQ(out_buf(xx, yy), in_buf(xx / 2, yy) * 3 + 1 + in_buf(xx / 2 + 1, yy) * 3 + 1) << xx << ", " << yy;
      }
    }
    EXPECT_EQ(c_b.max_count(), 1);
    EXPECT_EQ(c_b.elements(), static_cast<std::size_t>((w / 2 + 2) * h));
  }
}

}  // namespace
}  // namespace slinky
