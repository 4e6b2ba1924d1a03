// Parallel loops: parallel and serial runs give identical results, intermediates of a parallel
// loop stay small, failures in one worker stop the others and are reported once. Runs under
// ThreadSanitizer in CI, on the bundled pool and (slinky/adapters/test) on each host pool adapter
// (test_pool.h).
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <limits>
#include <thread>
#include <vector>

#include "slinky/base/test/host_thread_pool.h"
#include "slinky/base/test/test_pool.h"
#include "slinky/base/thread_pool_impl.h"
#include "slinky/builder/pipeline.h"
#include "slinky/runtime/print.h"
#include "test_funcs.h"

namespace slinky {
namespace {

using test::memory_counter;

// The iterations of a pipelined loop that can run at once on this machine (bounds.h,
// pipeline_workers).
index_t hardware_threads() {
  const unsigned hw = std::thread::hardware_concurrency();
  return hw == 0 ? std::numeric_limits<index_t>::max() : static_cast<index_t>(hw);
}

index_t times_3(const buffer<const int>& in, const buffer<int>& out) {
  return test::elementwise<int>(in, out, [](int v) { return v * 3 + 1; });
}
index_t sum_3x3(const buffer<const int>& in, const buffer<int>& out) { return test::box_sum<int>(in, out, 1, 1); }

// A 2-stage stencil (elementwise then 3x3) with a loop over y of the given step and workers.
struct stencil_pipeline {
  node_context ctx;
  buffer_expr_ptr in = buffer_expr::make(ctx, "in", 2, sizeof(int));
  buffer_expr_ptr intm = buffer_expr::make(ctx, "intm", 2, sizeof(int));
  buffer_expr_ptr out = buffer_expr::make(ctx, "out", 2, sizeof(int));
  var x{ctx, "x"};
  var y{ctx, "y"};
  func f, g;
  pipeline p;

  // With `pipelined`, intm is stored at the root: the loop slides and is pipelined (as it is by
  // default, since the windows of the stencil overlap). With `store_inside`, intm is stored inside
  // the loop: each iteration computes its own window.
  stencil_pipeline(index_t step, expr workers, bool pipelined = false, bool store_inside = false) {
    f = func::make(times_3, {{in, {point(x), point(y)}}}, {{intm, {x, y}}});
    g = func::make(sum_3x3, {{intm, {bounds(x - 1, x + 1), bounds(y - 1, y + 1)}}}, {{out, {x, y}}});
    g.loops({{y, step, workers}});
    if (pipelined) intm->store_root();
    if (store_inside) intm->store_at({&g, y});
    p = build_pipeline(ctx, {in}, {out});
  }
};

buffer<int, 2> run_stencil(index_t step, expr workers, thread_pool* pool, memory_counter* m = nullptr,
                           bool pipelined = false, bool store_inside = false) {
  const int w = 37, h = 29;
  stencil_pipeline s(step, workers, pipelined, store_inside);
  buffer<int, 2> in_buf({w + 2, h + 2});
  in_buf.translate(-1, -1);
  buffer<int, 2> out_buf({w, h});
  in_buf.allocate();
  out_buf.allocate();
  test::fill_random(in_buf, 17);
  memory_counter local;
  memory_counter& counter = m ? *m : local;
  counter.config.thread_pool = pool;
  EXPECT_EQ(s.p.evaluate({&in_buf}, {&out_buf}, counter.context), 0);
  return out_buf;
}

bool same(const buffer<int, 2>& a, const buffer<int, 2>& b) {
  for (index_t y = a.dim(1).min(); y <= a.dim(1).max(); ++y) {
    for (index_t x = a.dim(0).min(); x <= a.dim(0).max(); ++x) {
      if (a(x, y) != b(x, y)) return false;
    }
  }
  return true;
}

// A pipeline evaluated from several threads at once (each with its own buffers and context):
// the first evaluations compile the program's executable form concurrently (docs/runtime.md),
// a copy of the pipeline shares it, and replacing the body of a copy recompiles only the copy.
TEST(parallel, one_pipeline_evaluated_from_several_threads) {
  const int w = 37, h = 29;
  stencil_pipeline s(4, loop::parallel);
  buffer<int, 2> in_buf({w + 2, h + 2});
  in_buf.translate(-1, -1);
  in_buf.allocate();
  test::fill_random(in_buf, 17);
  buffer<int, 2> expected = run_stencil(1, loop::serial, nullptr);
  test_pool pool(2);
  pipeline copy = s.p;
  std::atomic<int> mismatches{0}, failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t]() {
      const pipeline& p = t % 2 == 0 ? s.p : copy;
      for (int i = 0; i < 20; ++i) {
        buffer<int, 2> out_buf({w, h});
        out_buf.allocate();
        eval_config config;
        if (t >= 2) config.thread_pool = &pool;
        eval_context ctx;
        ctx.config = &config;
        if (p.evaluate({&in_buf}, {&out_buf}, ctx) != 0) ++failures;
        if (!same(expected, out_buf)) ++mismatches;
      }
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(failures.load(), 0);
  EXPECT_EQ(mismatches.load(), 0);
  // A copy whose body is replaced runs its new body; the original keeps its own.
  pipeline changed = s.p;
  changed.body = check::make(expr(0) != 0);
  buffer<int, 2> out_buf({w, h});
  out_buf.allocate();
  memory_counter quiet;
  quiet.config.check_failed = [](const expr&) {};
  EXPECT_NE(changed.evaluate({&in_buf}, {&out_buf}, quiet.context), 0);
  EXPECT_EQ(s.p.evaluate({&in_buf}, {&out_buf}), 0);
  EXPECT_TRUE(same(expected, out_buf));
}

TEST(parallel, stencil_matches_serial) {
  test_pool pool(2);
  buffer<int, 2> serial = run_stencil(1, loop::serial, nullptr);
  for (index_t step : {1, 2, 5, 64}) {
    for (expr workers : {expr(loop::parallel), expr(2)}) {
      buffer<int, 2> parallel = run_stencil(step, workers, &pool);
      EXPECT_TRUE(same(serial, parallel)) << "step " << step;
      // Stored inside the loop: data-parallel, each iteration computes its window.
      buffer<int, 2> data_parallel = run_stencil(step, workers, &pool, nullptr, false, true);
      EXPECT_TRUE(same(serial, data_parallel)) << "step " << step;
    }
  }
  // Without a pool, parallel loops run serially and correctly.
  EXPECT_TRUE(same(serial, run_stencil(3, loop::parallel, nullptr)));
}

TEST(parallel, pipelined_stencil_matches_serial) {
  test_pool pool(2);
  buffer<int, 2> serial = run_stencil(1, loop::serial, nullptr);
  for (index_t step : {1, 2, 5, 64}) {
    for (expr workers : {expr(loop::parallel), expr(2)}) {
      buffer<int, 2> parallel = run_stencil(step, workers, &pool, nullptr, true);
      EXPECT_TRUE(same(serial, parallel)) << "step " << step;
    }
  }
  EXPECT_TRUE(same(serial, run_stencil(3, loop::parallel, nullptr, nullptr, true)));
}

// The default schedule keeps a parallel loop's intermediates small: the stencil's windows overlap
// between iterations, so the intermediate is one ring buffer shared by the pipelined iterations,
// of the serial fold (step + 2 rows) plus a step for the second iteration in flight.
TEST(parallel, intermediates_stay_small) {
  test_pool pool(2);
  memory_counter m;
  run_stencil(4, loop::parallel, &pool, &m);
  EXPECT_EQ(m.allocations, 1);
  for (index_t size : m.sizes) EXPECT_LE(size, (37 + 2) * (2 * 4 + 2) * static_cast<index_t>(sizeof(int)));
  EXPECT_EQ(m.allocations, m.frees);
}

// Stored inside the parallel loop (the client's choice), each worker keeps its window from one
// iteration to the next: 29 iterations of the same shape on 3 threads allocate at most once per
// thread (and per shape), not once per iteration.
TEST(parallel, intermediates_allocated_once_per_worker) {
  test_pool pool(2);
  buffer<int, 2> serial = run_stencil(1, loop::serial, nullptr);
  const int w = 37, h = 29;
  stencil_pipeline s(1, loop::parallel, false, /*store_inside=*/true);
  buffer<int, 2> in_buf({w + 2, h + 2});
  in_buf.translate(-1, -1);
  buffer<int, 2> out_buf({w, h});
  in_buf.allocate();
  out_buf.allocate();
  test::fill_random(in_buf, 17);
  memory_counter m;
  m.config.thread_pool = &pool;
  ASSERT_EQ(s.p.evaluate({&in_buf}, {&out_buf}, m.context), 0);
  EXPECT_TRUE(same(serial, out_buf));
  EXPECT_GT(m.allocations, 0);
  EXPECT_LE(m.allocations, 2 * (pool.thread_count() + 1) + 2);
  EXPECT_EQ(m.allocations, m.frees);
  EXPECT_EQ(m.live_bytes, 0);
}

TEST(parallel, elementwise_chain_repeated) {
  test_pool pool(3);
  node_context ctx;
  auto in = buffer_expr::make(ctx, "in", 1, sizeof(int));
  auto a = buffer_expr::make(ctx, "a", 1, sizeof(int));
  auto b = buffer_expr::make(ctx, "b", 1, sizeof(int));
  auto c = buffer_expr::make(ctx, "c", 1, sizeof(int));
  auto out = buffer_expr::make(ctx, "out", 1, sizeof(int));
  var x(ctx, "x");
  func f1 = func::make(times_3, {{in, {point(x)}}}, {{a, {x}}});
  func f2 = func::make(times_3, {{a, {point(x)}}}, {{b, {x}}});
  func f3 = func::make(times_3, {{b, {point(x)}}}, {{c, {x}}});
  func f4 = func::make(times_3, {{c, {point(x)}}}, {{out, {x}}});
  f4.loops({{x, 7, loop::parallel}});
  pipeline p = build_pipeline(ctx, {in}, {out});
  const int n = 300;
  buffer<int, 1> in_buf({n}), out_buf({n});
  in_buf.allocate();
  out_buf.allocate();
  test::fill_random(in_buf, 18);
  eval_config config;
  config.thread_pool = &pool;
  for (int rep = 0; rep < 200; ++rep) {
    for_each_element([](int* v) { *v = 0; }, out_buf);
    eval_context context;
    context.config = &config;
    ASSERT_EQ(p.evaluate({&in_buf}, {&out_buf}, context), 0);
    for (int i = 0; i < n; ++i) {
      int v = in_buf(i);
      for (int k = 0; k < 4; ++k) v = v * 3 + 1;
      ASSERT_EQ(out_buf(i), v) << "rep " << rep;
    }
  }
}

// Parallel loops over y and, inside, over x.
TEST(parallel, nested_loops) {
  test_pool pool(2);
  node_context ctx;
  auto in = buffer_expr::make(ctx, "in", 2, sizeof(int));
  auto intm = buffer_expr::make(ctx, "intm", 2, sizeof(int));
  auto out = buffer_expr::make(ctx, "out", 2, sizeof(int));
  var x(ctx, "x"), y(ctx, "y");
  func f = func::make(times_3, {{in, {point(x), point(y)}}}, {{intm, {x, y}}});
  func g = func::make(sum_3x3, {{intm, {bounds(x - 1, x + 1), bounds(y - 1, y + 1)}}}, {{out, {x, y}}});
  g.loops({{x, 4, loop::parallel}, {y, 3, loop::parallel}});
  pipeline p = build_pipeline(ctx, {in}, {out});
  buffer<int, 2> in_buf({39, 31});
  in_buf.translate(-1, -1);
  buffer<int, 2> out_buf({37, 29});
  in_buf.allocate();
  out_buf.allocate();
  test::fill_random(in_buf, 17);
  eval_config config;
  config.thread_pool = &pool;
  eval_context context;
  context.config = &config;
  ASSERT_EQ(p.evaluate({&in_buf}, {&out_buf}, context), 0);
  EXPECT_TRUE(same(out_buf, run_stencil(1, loop::serial, nullptr)));
}

// A callback failing in one worker stops the loop; call_failed is called once.
TEST(parallel, failure_in_one_worker) {
  test_pool pool(2);
  node_context ctx;
  auto in = buffer_expr::make(ctx, "in", 1, sizeof(int));
  auto out = buffer_expr::make(ctx, "out", 1, sizeof(int));
  var x(ctx, "x");
  std::atomic<int> calls{0};
  func f = func::make(
      [&](const buffer<const int>&, const buffer<int>& o) -> index_t {
        ++calls;
        return o.dim(0).min() == 40 ? 5 : 0;
      },
      {{in, {point(x)}}}, {{out, {x}}}, {.name = "sometimes_fails"});
  f.loops({{x, 1, loop::parallel}});
  pipeline p = build_pipeline(ctx, {in}, {out});
  buffer<int, 1> in_buf({1000}), out_buf({1000});
  in_buf.allocate();
  out_buf.allocate();
  std::atomic<int> failures{0};
  eval_config config;
  config.thread_pool = &pool;
  config.call_failed = [&](const call_stmt*) { ++failures; };
  eval_context context;
  context.config = &config;
  EXPECT_EQ(p.evaluate({&in_buf}, {&out_buf}, context), 5);
  EXPECT_EQ(failures, 1);
  // The other workers stopped promptly: nowhere near all 1000 iterations ran.
  EXPECT_LT(calls, 1000);
}

// Schedules of the pipelines below: a loop over the rows of the output, serial, data-parallel
// (intermediates stored inside the loop, the default) or pipelined (stored at the root, so the
// loop slides).
enum class mode { unscheduled, serial, data_parallel, pipelined };

const char* to_string(mode m) {
  switch (m) {
  case mode::unscheduled: return "unscheduled";
  case mode::serial: return "serial";
  case mode::data_parallel: return "data_parallel";
  case mode::pipelined: return "pipelined";
  }
  return "";
}

void schedule(func& last, var y, const std::vector<buffer_expr_ptr>& intermediates, mode m, index_t step,
              expr workers = loop::parallel) {
  if (m == mode::unscheduled) return;
  last.loops({{y, step, m == mode::serial ? expr(loop::serial) : workers}});
  if (m != mode::pipelined) return;
  for (const buffer_expr_ptr& b : intermediates) b->store_root();
}

index_t down_2x2(const buffer<const int>& in, const buffer<int>& out) {
  for (index_t y = out.dim(1).min(); y <= out.dim(1).max(); ++y) {
    for (index_t x = out.dim(0).min(); x <= out.dim(0).max(); ++x) {
      out(x, y) = in(2 * x, 2 * y) + in(2 * x + 1, 2 * y) + in(2 * x, 2 * y + 1) + in(2 * x + 1, 2 * y + 1);
    }
  }
  return 0;
}

index_t matmul(const buffer<const int>& a, const buffer<const int>& b, const buffer<int>& c) {
  for (index_t i = c.dim(1).min(); i <= c.dim(1).max(); ++i) {
    for (index_t j = c.dim(0).min(); j <= c.dim(0).max(); ++j) {
      int sum = 0;
      for (index_t k = a.dim(0).min(); k <= a.dim(0).max(); ++k) sum += a(k, i) * b(j, k);
      c(j, i) = sum;
    }
  }
  return 0;
}

// The pipelines: each takes one input (three for matmul) and makes a 2-D output of ints.
enum class kind { elementwise, stencil2, stencil3, pyramid, matmul };

const char* to_string(kind k) {
  switch (k) {
  case kind::elementwise: return "elementwise";
  case kind::stencil2: return "stencil2";
  case kind::stencil3: return "stencil3";
  case kind::pyramid: return "pyramid";
  case kind::matmul: return "matmul";
  }
  return "";
}

pipeline make_pipeline(kind k, mode m, index_t step, expr workers = loop::parallel) {
  node_context ctx;
  var x(ctx, "x"), y(ctx, "y");
  auto in = buffer_expr::make(ctx, "in", 2, sizeof(int));
  auto a = buffer_expr::make(ctx, "a", 2, sizeof(int));
  auto b = buffer_expr::make(ctx, "b", 2, sizeof(int));
  auto out = buffer_expr::make(ctx, "out", 2, sizeof(int));
  const box_expr stencil = {bounds(x - 1, x + 1), bounds(y - 1, y + 1)};
  // -1: max_workers as an expression (3 for the outputs of these tests).
  if (is_constant(workers, -1)) workers = out->dim(1).extent() / 8;
  switch (k) {
  case kind::elementwise: {
    func f = func::make(times_3, {{in, {point(x), point(y)}}}, {{a, {x, y}}});
    func g = func::make(times_3, {{a, {point(x), point(y)}}}, {{out, {x, y}}});
    schedule(g, y, {a}, m, step, workers);
    return build_pipeline(ctx, {in}, {out});
  }
  case kind::stencil2: {
    func f = func::make(times_3, {{in, {point(x), point(y)}}}, {{a, {x, y}}});
    func g = func::make(sum_3x3, {{a, stencil}}, {{out, {x, y}}});
    schedule(g, y, {a}, m, step, workers);
    return build_pipeline(ctx, {in}, {out});
  }
  case kind::stencil3: {
    func f = func::make(times_3, {{in, {point(x), point(y)}}}, {{a, {x, y}}});
    func g = func::make(sum_3x3, {{a, stencil}}, {{b, {x, y}}});
    func h = func::make(sum_3x3, {{b, stencil}}, {{out, {x, y}}});
    schedule(h, y, {a, b}, m, step, workers);
    return build_pipeline(ctx, {in}, {out});
  }
  case kind::pyramid: {
    // Full resolution, then 2x2 down-sampling, then a 3x3 stencil at half resolution.
    func f = func::make(times_3, {{in, {point(x), point(y)}}}, {{a, {x, y}}});
    func g = func::make(down_2x2, {{a, {bounds(2 * x, 2 * x + 1), bounds(2 * y, 2 * y + 1)}}}, {{b, {x, y}}});
    func h = func::make(sum_3x3, {{b, stencil}}, {{out, {x, y}}});
    schedule(h, y, {a, b}, m, step, workers);
    return build_pipeline(ctx, {in}, {out});
  }
  case kind::matmul: {
    // out = (in x b) x c, with the rows of in x b computed in the loop over the rows of out.
    auto bm = buffer_expr::make(ctx, "bm", 2, sizeof(int));
    auto cm = buffer_expr::make(ctx, "cm", 2, sizeof(int));
    func f =
        func::make(matmul, {{in, {in->dim(0).bounds, point(y)}}, {bm, {point(x), in->dim(0).bounds}}}, {{a, {x, y}}});
    func g =
        func::make(matmul, {{a, {cm->dim(1).bounds, point(y)}}, {cm, {point(x), cm->dim(1).bounds}}}, {{out, {x, y}}});
    schedule(g, y, {a}, m, step, workers);
    return build_pipeline(ctx, {in, bm, cm}, {out});
  }
  }
  return pipeline();
}

struct case_inputs {
  static constexpr int w = 37, h = 29;
  buffer<int, 2> in, bm, cm;
  case_inputs(kind k) {
    if (k == kind::matmul) {
      in = buffer<int, 2>({11, h});
      bm = buffer<int, 2>({w, 11});
      cm = buffer<int, 2>({w, w});
      bm.allocate();
      cm.allocate();
      test::fill_random(bm, 2);
      test::fill_random(cm, 3);
    } else {
      // Enough for two 3x3 stencils after a 2x down-sampling.
      in = buffer<int, 2>({2 * w + 8, 2 * h + 8});
      in.translate(-4, -4);
    }
    in.allocate();
    test::fill_random(in, 1);
  }
  std::vector<const raw_buffer*> buffers(kind k) const {
    if (k == kind::matmul) return {&in, &bm, &cm};
    return {&in};
  }
};

buffer<int, 2> run(const pipeline& p, kind k, const case_inputs& inputs, thread_pool* pool,
                   memory_counter* m = nullptr) {
  buffer<int, 2> out({case_inputs::w, case_inputs::h});
  out.allocate();
  memory_counter local;
  memory_counter& counter = m ? *m : local;
  counter.config.thread_pool = pool;
  std::vector<const raw_buffer*> ins = inputs.buffers(k);
  const raw_buffer* outs[] = {&out};
  EXPECT_EQ(p.evaluate(ins, outs, counter.context), 0);
  EXPECT_EQ(counter.allocations, counter.frees);
  return out;
}

// Serial, data-parallel and pipelined loops, with and without a pool, give the result of the
// unscheduled pipeline.
TEST(parallel, all_pipelines_match_unscheduled) {
  test_pool pool(2);
  for (kind k : {kind::elementwise, kind::stencil2, kind::stencil3, kind::pyramid, kind::matmul}) {
    case_inputs inputs(k);
    buffer<int, 2> reference = run(make_pipeline(k, mode::unscheduled, 1), k, inputs, nullptr);
    for (mode m : {mode::serial, mode::data_parallel, mode::pipelined}) {
      for (index_t step : {1, 2, 3, 8, 64}) {
        for (expr workers : {expr(loop::parallel), expr(2), expr(3), expr(-1)}) {
          pipeline p = make_pipeline(k, m, step, workers);
          for (thread_pool* t : {static_cast<thread_pool*>(&pool), static_cast<thread_pool*>(nullptr)}) {
            EXPECT_TRUE(same(reference, run(p, k, inputs, t)))
                << to_string(k) << " " << to_string(m) << " step " << step << " workers " << workers
                << (t ? " with a pool" : " without a pool");
          }
        }
      }
    }
  }
}

// What a pipelined loop costs: each intermediate is a ring buffer of the rows that the iterations
// in flight (as many as the loop has workers, at most its stages) need. For a 2-stage 3x3
// stencil with step s over rows of width W: (W + 2) x (2s + 2) elements, as the original runtime.
TEST(parallel, pipelined_allocation_sizes) {
  test_pool pool(2);
  const index_t w = case_inputs::w;
  const index_t elem = sizeof(int);
  for (kind k : {kind::stencil2, kind::stencil3}) {
    case_inputs inputs(k);
    buffer<int, 2> reference = run(make_pipeline(k, mode::unscheduled, 1), k, inputs, nullptr);
    for (index_t s : {1, 2, 4}) {
      for (expr workers : {expr(loop::parallel), expr(2)}) {
        // The workers (iterations in flight): the stages (funcs computed in the loop, plus the
        // loop's owner), at most the hardware threads and max_workers.
        const index_t stages = k == kind::stencil2 ? 2 : 3;
        const index_t in_flight = std::min(is_constant(workers, 2) ? 2 : stages, hardware_threads());
        const index_t rows = (in_flight - 1) * s + s + 2;
        std::vector<index_t> expected = {(w + 2) * rows * elem};
        if (k == kind::stencil3) expected.push_back((w + 4) * rows * elem);
        for (thread_pool* t : {static_cast<thread_pool*>(&pool), static_cast<thread_pool*>(nullptr)}) {
          memory_counter m;
          EXPECT_TRUE(same(reference, run(make_pipeline(k, mode::pipelined, s, workers), k, inputs, t, &m)));
          std::vector<index_t> sizes = m.sizes;
          std::sort(sizes.begin(), sizes.end());
          EXPECT_EQ(sizes, expected) << to_string(k) << " step " << s << " workers " << workers;
        }
      }
    }
  }
  // The 2-stage stencil with step s: (W + 2) x (2s + 2) elements, whatever max_workers (on a
  // machine with 2 hardware threads or more).
  case_inputs inputs(kind::stencil2);
  const index_t in_flight = std::min<index_t>(2, hardware_threads());
  for (index_t s : {1, 3}) {
    memory_counter m;
    run(make_pipeline(kind::stencil2, mode::pipelined, s), kind::stencil2, inputs, &pool, &m);
    EXPECT_EQ(m.peak_bytes, (w + 2) * (in_flight * s + 2) * elem);
  }
}

// A pipelined 3-stage stencil evaluated many times on a pool of 3 threads: races show up as wrong
// results (and under ThreadSanitizer).
TEST(parallel, pipelined_stencil_repeated) {
  test_pool pool(2);
  case_inputs inputs(kind::stencil3);
  buffer<int, 2> reference = run(make_pipeline(kind::stencil3, mode::unscheduled, 1), kind::stencil3, inputs, nullptr);
  for (index_t step : {1, 4}) {
    pipeline p = make_pipeline(kind::stencil3, mode::pipelined, step);
    for (int rep = 0; rep < 150; ++rep) {
      ASSERT_TRUE(same(reference, run(p, kind::stencil3, inputs, &pool))) << "step " << step << " rep " << rep;
    }
  }
}

// A 3x3 stencil over x (parallel, inner) and y (parallel, outer) with its producer's output stored
// three ways, each evaluated `reps` times on `pool` and compared with the unscheduled pipeline.
void run_nested_pipelines(thread_pool* pool, int reps) {
  case_inputs inputs(kind::stencil2);
  buffer<int, 2> reference = run(make_pipeline(kind::stencil2, mode::unscheduled, 1), kind::stencil2, inputs, nullptr);
  for (int store = 0; store < 3; ++store) {
    node_context ctx;
    var x(ctx, "x"), y(ctx, "y");
    auto in = buffer_expr::make(ctx, "in", 2, sizeof(int));
    auto a = buffer_expr::make(ctx, "a", 2, sizeof(int));
    auto out = buffer_expr::make(ctx, "out", 2, sizeof(int));
    func f = func::make(times_3, {{in, {point(x), point(y)}}}, {{a, {x, y}}});
    func g = func::make(sum_3x3, {{a, {bounds(x - 1, x + 1), bounds(y - 1, y + 1)}}}, {{out, {x, y}}});
    g.loops({{x, 8, loop::parallel}, {y, 2, loop::parallel}});
    // 0: the default (the windows overlap along both loops: stored at the root, f computed at y,
    // y pipelined); 1: between y and x (x is pipelined inside the parallel y); 2: at the root (both
    // slide: y is pipelined, x runs serially inside it).
    if (store == 1) a->store_at({&g, y});
    if (store == 2) a->store_root();
    pipeline p = build_pipeline(ctx, {in}, {out});
    for (int rep = 0; rep < reps; ++rep) {
      ASSERT_TRUE(same(reference, run(p, kind::stencil2, inputs, pool))) << "store " << store;
    }
  }
}

// A pipelined loop nested inside another parallel loop (it then runs serially, each worker of the
// outer loop with its own ring buffers), and a parallel loop inside a pipelined one.
TEST(parallel, nested_pipelined_loops) {
  test_pool pool(2);
  run_nested_pipelines(&pool, 20);
}

// A callback failing in one iteration of a pipelined loop, in the first or the last stage: the
// other workers stop (none waits forever on a stage the failed iteration never finishes),
// call_failed is called once, and evaluate returns the callback's result.
TEST(parallel, failure_in_pipelined_loop) {
  test_pool pool(2);
  for (int failing_stage = 0; failing_stage < 2; ++failing_stage) {
    for (int rep = 0; rep < 50; ++rep) {
      node_context ctx;
      var x(ctx, "x"), y(ctx, "y");
      auto in = buffer_expr::make(ctx, "in", 2, sizeof(int));
      auto a = buffer_expr::make(ctx, "a", 2, sizeof(int));
      auto out = buffer_expr::make(ctx, "out", 2, sizeof(int));
      std::atomic<int> calls{0};
      auto fails_at_row_9 = [&](int stage, const buffer<const int>& i, const buffer<int>& o) -> index_t {
        ++calls;
        if (stage == failing_stage && o.dim(1).min() <= 9 && 9 <= o.dim(1).max()) return 7;
        return stage == 0 ? times_3(i, o) : sum_3x3(i, o);
      };
      func f = func::make([&](const buffer<const int>& i, const buffer<int>& o) { return fails_at_row_9(0, i, o); },
                          {{in, {point(x), point(y)}}}, {{a, {x, y}}});
      func g = func::make([&](const buffer<const int>& i, const buffer<int>& o) { return fails_at_row_9(1, i, o); },
                          {{a, {bounds(x - 1, x + 1), bounds(y - 1, y + 1)}}}, {{out, {x, y}}});
      g.loops({{y, 1, loop::parallel}});
      a->store_root();
      pipeline p = build_pipeline(ctx, {in}, {out});
      buffer<int, 2> in_buf({30, 402}), out_buf({28, 400});
      in_buf.translate(-1, -1);
      in_buf.allocate();
      out_buf.allocate();
      test::fill_random(in_buf, 5);
      std::atomic<int> failures{0};
      memory_counter m;
      m.config.thread_pool = &pool;
      m.config.call_failed = [&](const call_stmt*) { ++failures; };
      m.config.check_failed = [&](const expr&) { ADD_FAILURE() << "a check failed"; };
      EXPECT_EQ(p.evaluate({&in_buf}, {&out_buf}, m.context), 7);
      EXPECT_EQ(failures, 1);
      EXPECT_EQ(m.allocations, m.frees);
      // The others stopped promptly: nowhere near the 800 calls of the whole loop ran.
      EXPECT_LT(calls, 100) << "failing stage " << failing_stage;
    }
  }
}

// A client's host pool (a worker-less thread_pool_impl fed by the host's threads through
// work_until_idle, base/test/host_thread_pool.h) runs data-parallel, pipelined and nested
// parallel loops.
TEST(parallel, host_thread_pool) {
  if (!test_pool_is_bundled) GTEST_SKIP() << "the host pool of the bundled pool's tests";
  host_thread_pool pool(2);
  buffer<int, 2> serial = run_stencil(1, loop::serial, nullptr);
  for (index_t step : {1, 3}) {
    for (bool pipelined : {false, true}) {
      const int enqueues = pool.enqueues.load();
      EXPECT_TRUE(same(serial, run_stencil(step, loop::parallel, &pool, nullptr, pipelined)))
          << "step " << step << " pipelined " << pipelined;
      // The loop went through the host's enqueue (the default enqueue_ref).
      EXPECT_GT(pool.enqueues.load(), enqueues);
    }
  }
  run_nested_pipelines(&pool, 10);
}

}  // namespace
}  // namespace slinky
