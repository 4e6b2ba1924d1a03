// Compatibility tests for the behaviour a production client relies on beyond signatures
// (docs/api.md section 11, except the host thread pool, which is in thread_pool.cc): trace
// names, setup by pointer, broadcast dims, fold factors as data, truncated loop tails, empty
// input crops, in-place calls, absent optional inputs, allocation hooks. C++20.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "slinky/base/thread_pool_impl.h"
#include "slinky/builder/pipeline.h"
#include "slinky/runtime/buffer.h"
#include "slinky/runtime/evaluate.h"
#include "slinky/runtime/expr.h"
#include "slinky/runtime/pipeline.h"

namespace {

using namespace slinky;

// out(x) = in(x) + k over out's crop.
auto add_k(int k) {
  return [k](const buffer<const int>& a, const buffer<int>& b) -> index_t {
    for (index_t x = b.dim(0).begin(); x < b.dim(0).end(); ++x) b(x) = a(x) + k;
    return 0;
  };
}

struct test_buffers {
  buffer<int, 1> in, out;
  test_buffers(index_t min, index_t n) : in({n}), out({n}) {
    in.translate(min);
    out.translate(min);
    in.allocate();
    out.allocate();
    for (index_t x = min; x < min + n; ++x) in(x) = static_cast<int>(x * 7 % 13);
  }
};

}  // namespace

TEST(compat_behaviour, trace_event_names) {
  node_context ctx;
  var x(ctx, "x");
  auto in = buffer_expr::make(ctx, "in", 1, sizeof(int));
  auto t = buffer_expr::make(ctx, "t", 1, sizeof(int));
  auto out = buffer_expr::make(ctx, "out", 1, sizeof(int));
  func f = func::make(add_k(1), {{in, {point(x)}}}, {{t, {x}}}, {.name = "f_call"});
  func g = func::make(add_k(2), {{t, {point(x)}}}, {{out, {x}}}, {.name = "g_call"});
  g.loops({{x, 2}});
  f.compute_at({&g, x});
  pipeline p = build_pipeline(ctx, {in}, {out}, build_options{.trace = true});

  std::vector<std::string> events;
  std::map<index_t, std::string> names;
  index_t next_token = 1;
  eval_config cfg;
  cfg.trace_begin = [&](const char* name) -> index_t {
    events.push_back(std::string("begin ") + name);
    names[next_token] = name;
    return next_token++;
  };
  cfg.trace_end = [&](index_t token) {
    ASSERT_TRUE(names.count(token)) << token;
    events.push_back("end " + names[token]);
  };
  eval_context ectx;
  ectx.config = &cfg;
  test_buffers bufs(0, 10);
  const raw_buffer* inputs[] = {&bufs.in};
  const raw_buffer* outputs[] = {&bufs.out};
  ASSERT_EQ(p.evaluate(inputs, outputs, ectx), 0);
  for (index_t i = 0; i < 10; ++i) EXPECT_EQ(bufs.out(i), bufs.in(i) + 3);

  ASSERT_FALSE(events.empty());
  EXPECT_EQ(events.front(), "begin pipeline");
  EXPECT_EQ(events.back(), "end pipeline");
  auto count = [&](const std::string& e) { return std::count(events.begin(), events.end(), e); };
  EXPECT_EQ(count("begin loop x"), 1);
  EXPECT_EQ(count("begin loop x iteration"), 5);
  EXPECT_EQ(count("begin f_call"), 5);
  EXPECT_EQ(count("begin g_call"), 5);
  // Properly nested: every end closes the latest open begin.
  std::vector<std::string> open;
  for (const std::string& e : events) {
    if (e.rfind("begin ", 0) == 0) {
      open.push_back(e.substr(6));
    } else {
      ASSERT_FALSE(open.empty());
      EXPECT_EQ(open.back(), e.substr(4));
      open.pop_back();
    }
  }
  EXPECT_TRUE(open.empty());
  // Iterations are inside the loop, calls inside iterations.
  auto first = [&](const std::string& e) { return std::find(events.begin(), events.end(), e) - events.begin(); };
  EXPECT_LT(first("begin loop x"), first("begin loop x iteration"));
  EXPECT_LT(first("begin loop x iteration"), first("begin f_call"));

  // Without build_options::trace, nothing is traced even with the hooks set.
  events.clear();
  pipeline untraced = build_pipeline(ctx, {in}, {out});
  ASSERT_EQ(untraced.evaluate(inputs, outputs, ectx), 0);
  EXPECT_EQ(count("begin loop x"), 0);
  EXPECT_EQ(count("begin pipeline"), 0);
}

TEST(compat_behaviour, setup_binds_buffers_by_pointer) {
  node_context ctx;
  var x(ctx, "x");
  auto in = buffer_expr::make(ctx, "in", 1, sizeof(int));
  auto out = buffer_expr::make(ctx, "out", 1, sizeof(int));
  func f = func::make(add_k(5), {{in, {point(x)}}}, {{out, {x}}});
  f.loops({{x, 3}});
  pipeline p = build_pipeline(ctx, {in}, {out});

  test_buffers first(0, 10), second(-4, 17);
  dim in_dim = first.in.dim(0), out_dim = first.out.dim(0);
  raw_buffer in_raw{first.in.base(), sizeof(int), 1, &in_dim};
  raw_buffer out_raw{first.out.base(), sizeof(int), 1, &out_dim};
  const raw_buffer* inputs[] = {&in_raw};
  const raw_buffer* outputs[] = {&out_raw};
  eval_context ectx;
  p.setup(inputs, outputs, ectx);
  ASSERT_EQ(p.evaluate(ectx), 0);
  for (index_t i = 0; i < 10; ++i) EXPECT_EQ(first.out(i), first.in(i) + 5);

  // Same raw_buffer objects, new memory and bounds: evaluate again without setup.
  in_raw.base = second.in.base();
  out_raw.base = second.out.base();
  in_dim = second.in.dim(0);
  out_dim = second.out.dim(0);
  ASSERT_EQ(p.evaluate(ectx), 0);
  for (index_t i = -4; i < 13; ++i) EXPECT_EQ(second.out(i), second.in(i) + 5);
  // Other expressions may be evaluated against the same context.
  EXPECT_EQ(evaluate(buffer_extent(in->sym(), 0), ectx), 17);
  EXPECT_EQ(evaluate(buffer_min(out->sym(), 0), ectx), -4);
}

TEST(compat_behaviour, broadcast_dims) {
  // An intermediate with a broadcast dim: allocated with stride 0 there; cropping it is a no-op.
  node_context ctx;
  var x(ctx, "x"), y(ctx, "y");
  const index_t w = 6, h = 4;
  auto in = buffer_expr::make(ctx, "in", 1, sizeof(int));
  auto t = buffer_expr::make(ctx, "t", 2, sizeof(int));
  auto out = buffer_expr::make(ctx, "out", 2, sizeof(int));
  t->dim(1) = dim::broadcast();
  std::atomic<int> bad_strides{0};
  func f = func::make(
      [&](const buffer<const int>& a, const buffer<int>& b) -> index_t {
        if (b.dim(1).stride() != 0) ++bad_strides;
        for (index_t j = b.dim(1).begin(); j < b.dim(1).end(); ++j) {
          for (index_t i = b.dim(0).begin(); i < b.dim(0).end(); ++i) b(i, j) = a(i) * 10;
        }
        return 0;
      },
      {{in, {point(x)}}}, {{t, {x, y}}});
  func g = func::make(
      [](const buffer<const int>& a, const buffer<int>& b) -> index_t {
        for (index_t j = b.dim(1).begin(); j < b.dim(1).end(); ++j) {
          for (index_t i = b.dim(0).begin(); i < b.dim(0).end(); ++i) b(i, j) = a(i, j) + static_cast<int>(j);
        }
        return 0;
      },
      {{t, {point(x), point(y)}}}, {{out, {x, y}}});
  for (int schedule = 0; schedule < 2; ++schedule) {
    if (schedule == 1) {
      g.loops({{y, 1}});
      f.compute_at({&g, y});
    }
    pipeline p = build_pipeline(ctx, {in}, {out});
    buffer<int, 1> in_buf({w});
    buffer<int, 2> out_buf({w, h});
    in_buf.allocate();
    out_buf.allocate();
    for (index_t i = 0; i < w; ++i) in_buf(i) = static_cast<int>(i + 1);
    const raw_buffer* inputs[] = {&in_buf};
    const raw_buffer* outputs[] = {&out_buf};
    ASSERT_EQ(p.evaluate(inputs, outputs), 0) << schedule;
    EXPECT_EQ(bad_strides, 0);
    for (index_t j = 0; j < h; ++j) {
      for (index_t i = 0; i < w; ++i) EXPECT_EQ(out_buf(i, j), (i + 1) * 10 + j) << i << " " << j;
    }
  }
}

TEST(compat_behaviour, broadcast_output) {
  // A pipeline output may have a stride-0 dim.
  node_context ctx;
  var x(ctx, "x"), y(ctx, "y");
  auto in = buffer_expr::make(ctx, "in", 1, sizeof(int));
  auto out = buffer_expr::make(ctx, "out", 2, sizeof(int));
  func f = func::make(
      [](const buffer<const int>& a, const buffer<int>& b) -> index_t {
        for (index_t j = b.dim(1).begin(); j < b.dim(1).end(); ++j) {
          for (index_t i = b.dim(0).begin(); i < b.dim(0).end(); ++i) b(i, j) = a(i) * 3;
        }
        return 0;
      },
      {{in, {point(x)}}}, {{out, {x, y}}});
  pipeline p = build_pipeline(ctx, {in}, {out});
  buffer<int, 1> in_buf({5});
  in_buf.allocate();
  for (index_t i = 0; i < 5; ++i) in_buf(i) = static_cast<int>(i);
  buffer<int, 2> out_buf({5, 3});
  out_buf.mutable_dim(1).set_stride(0);
  out_buf.allocate();
  const raw_buffer* inputs[] = {&in_buf};
  const raw_buffer* outputs[] = {&out_buf};
  ASSERT_EQ(p.evaluate(inputs, outputs), 0);
  for (index_t i = 0; i < 5; ++i) EXPECT_EQ(out_buf(i, 2), i * 3);
}

TEST(compat_behaviour, fold_factor_as_data) {
  // A buffer of elem_size 0 and stride 0 carries a "split size" in its fold factor.
  node_context ctx;
  var x(ctx, "x");
  const dim split_dim(0, 0, 0, 7);
  slinky::raw_buffer_ptr split = raw_buffer::make(1, 0, &split_dim);
  static char dummy = 0;
  split->base = &dummy;
  auto s = buffer_expr::make_constant(ctx, "split", split);
  auto in = buffer_expr::make(ctx, "in", 1, sizeof(int));
  auto out = buffer_expr::make(ctx, "out", 1, sizeof(int));
  std::vector<index_t> seen_folds;
  func f = func::make(
      [&](const raw_buffer& sb, const buffer<const int>& a, const buffer<int>& b) -> index_t {
        seen_folds.push_back(sb.dim(0).fold_factor());
        EXPECT_EQ(sb.dim(0).stride(), 0);
        EXPECT_EQ(sb.elem_size, 0u);
        for (index_t i = b.dim(0).begin(); i < b.dim(0).end(); ++i)
          b(i) = a(i) + static_cast<int>(sb.dim(0).fold_factor());
        return 0;
      },
      {{s, {point(0)}}, {in, {point(x)}}}, {{out, {x}}});
  f.loops({{x, 4}});
  pipeline p = build_pipeline(ctx, {in}, {out});
  eval_config cfg;
  int allocations = 0;
  auto prev = cfg.allocate;
  cfg.allocate = [&](var v, raw_buffer* b) {
    ++allocations;
    return prev(v, b);
  };
  eval_context ectx;
  ectx.config = &cfg;
  test_buffers bufs(0, 10);
  const raw_buffer* inputs[] = {&bufs.in};
  const raw_buffer* outputs[] = {&bufs.out};
  ASSERT_EQ(p.evaluate(inputs, outputs, ectx), 0);
  for (index_t i = 0; i < 10; ++i) EXPECT_EQ(bufs.out(i), bufs.in(i) + 7);
  ASSERT_FALSE(seen_folds.empty());
  for (index_t fold : seen_folds) EXPECT_EQ(fold, 7);
  EXPECT_EQ(allocations, 0);
}

TEST(compat_behaviour, loop_tails_are_truncated) {
  // Steps and max_workers are run-time expressions; the last chunk is [v, max], and every
  // chunk's min is aligned to the step from the loop's min.
  node_context ctx;
  var x(ctx, "x"), step(ctx, "step"), workers(ctx, "workers");
  auto in = buffer_expr::make(ctx, "in", 1, sizeof(int));
  auto t = buffer_expr::make(ctx, "t", 1, sizeof(int));
  auto out = buffer_expr::make(ctx, "out", 1, sizeof(int));
  std::mutex m;
  std::vector<std::pair<index_t, index_t>> chunks;
  func f = func::make(add_k(1), {{in, {point(x)}}}, {{t, {x}}});
  func g = func::make(
      [&](const buffer<const int>& a, const buffer<int>& b) -> index_t {
        {
          std::lock_guard<std::mutex> l(m);
          chunks.emplace_back(b.dim(0).min(), b.dim(0).max());
        }
        return add_k(10)(a, b);
      },
      {{t, {point(x)}}}, {{out, {x}}});
  g.loops({{x, step, workers}});
  f.compute_at({&g, x});
  pipeline p = build_pipeline(ctx, {step, workers}, {in}, {out});
  thread_pool_impl pool(2);
  eval_config cfg;
  cfg.thread_pool = &pool;
  struct run {
    index_t min, n, step, workers;
  };
  for (const run& r : {run{0, 10, 4, 1}, run{3, 10, 4, 1}, run{-5, 11, 3, 2}, run{0, 7, 7, 3}, run{1, 9, 5, 8}}) {
    chunks.clear();
    eval_context ectx;
    ectx.config = &cfg;
    test_buffers bufs(r.min, r.n);
    const index_t args[] = {r.step, r.workers};
    const raw_buffer* inputs[] = {&bufs.in};
    const raw_buffer* outputs[] = {&bufs.out};
    ASSERT_EQ(p.evaluate(args, inputs, outputs, ectx), 0);
    for (index_t i = r.min; i < r.min + r.n; ++i) ASSERT_EQ(bufs.out(i), bufs.in(i) + 11);
    std::sort(chunks.begin(), chunks.end());
    ASSERT_EQ(static_cast<index_t>(chunks.size()), (r.n + r.step - 1) / r.step) << r.min << " " << r.step;
    for (std::size_t c = 0; c < chunks.size(); ++c) {
      EXPECT_EQ(chunks[c].first, r.min + static_cast<index_t>(c) * r.step);
      EXPECT_EQ(chunks[c].second, std::min(r.min + static_cast<index_t>(c + 1) * r.step - 1, r.min + r.n - 1));
    }
  }
}

TEST(compat_behaviour, input_crop_may_be_empty) {
  // out = concatenation of a ([0, 4]) and b ([0, 4]) by a callback, computed in chunks of 5: in
  // each chunk one input is cropped to nothing, and the callback still runs.
  node_context ctx;
  var x(ctx, "x");
  auto a = buffer_expr::make(ctx, "a", 1, sizeof(int));
  auto b = buffer_expr::make(ctx, "b", 1, sizeof(int));
  auto t = buffer_expr::make(ctx, "t", 1, sizeof(int));
  auto out = buffer_expr::make(ctx, "out", 1, sizeof(int));
  int calls = 0, empty_a = 0, empty_b = 0;
  func cat = func::make(
      [&](const buffer<const int>& ab, const buffer<const int>& bb, const buffer<int>& o) -> index_t {
        ++calls;
        if (ab.dim(0).empty()) ++empty_a;
        if (bb.dim(0).empty()) ++empty_b;
        for (index_t i = o.dim(0).begin(); i < o.dim(0).end(); ++i) o(i) = i < 5 ? ab(i) : bb(i - 5);
        return 0;
      },
      {{a, {point(x)}, {bounds(0, 4)}}, {b, {point(expr(x) - 5)}, {bounds(0, 4)}}}, {{t, {x}}});
  func g = func::make(add_k(0), {{t, {point(x)}}}, {{out, {x}}});
  g.loops({{x, 5}});
  cat.compute_at({&g, x});
  pipeline p = build_pipeline(ctx, {a, b}, {out});
  buffer<int, 1> a_buf({5}), b_buf({5}), out_buf({10});
  a_buf.allocate();
  b_buf.allocate();
  out_buf.allocate();
  for (int i = 0; i < 5; ++i) {
    a_buf(i) = i;
    b_buf(i) = 50 + i;
  }
  const raw_buffer* inputs[] = {&a_buf, &b_buf};
  const raw_buffer* outputs[] = {&out_buf};
  ASSERT_EQ(p.evaluate(inputs, outputs), 0);
  for (int i = 0; i < 10; ++i) EXPECT_EQ(out_buf(i), i < 5 ? i : 50 + i - 5) << i;
  EXPECT_EQ(calls, 2);
  EXPECT_EQ(empty_a, 1);
  EXPECT_EQ(empty_b, 1);
}

TEST(compat_behaviour, in_place_memcpy) {
  // A "memcpy" call allowed to work in place between two intermediates: the runtime puts both in
  // one memory and the callback skips the copy.
  node_context ctx;
  var x(ctx, "x");
  auto in = buffer_expr::make(ctx, "in", 1, sizeof(int));
  auto t1 = buffer_expr::make(ctx, "t1", 1, sizeof(int));
  auto t2 = buffer_expr::make(ctx, "t2", 1, sizeof(int));
  auto out = buffer_expr::make(ctx, "out", 1, sizeof(int));
  int copies = 0, skipped = 0;
  func f = func::make(add_k(1), {{in, {point(x)}}}, {{t1, {x}}});
  func memcpy_fn = func::make(
      [&](const buffer<const int>& src, const buffer<int>& dst) -> index_t {
        if (src.base() == dst.base()) {
          ++skipped;
          return 0;
        }
        ++copies;
        return add_k(0)(src, dst);
      },
      {{t1, {point(x)}}}, {{t2, {x}}}, {.allow_in_place = 1, .name = "memcpy"});
  func g = func::make(add_k(2), {{t2, {point(x)}}}, {{out, {x}}});
  pipeline p = build_pipeline(ctx, {in}, {out});
  test_buffers bufs(0, 16);
  const raw_buffer* inputs[] = {&bufs.in};
  const raw_buffer* outputs[] = {&bufs.out};
  ASSERT_EQ(p.evaluate(inputs, outputs), 0);
  for (index_t i = 0; i < 16; ++i) EXPECT_EQ(bufs.out(i), bufs.in(i) + 3);
  EXPECT_GE(skipped, 1);
  EXPECT_EQ(copies, 0);
}

TEST(compat_behaviour, absent_optional_input) {
  // A rank-0 constant with a null base is accepted and reaches the callback as such.
  node_context ctx;
  var x(ctx, "x");
  slinky::raw_buffer_ptr none = std::make_shared<raw_buffer>();
  none->elem_size = sizeof(int);
  auto bias = buffer_expr::make_constant(ctx, "bias", none);
  auto in = buffer_expr::make(ctx, "in", 1, sizeof(int));
  auto out = buffer_expr::make(ctx, "out", 1, sizeof(int));
  int null_bias_calls = 0;
  func f = func::make(
      [&](const buffer<const int>& a, const buffer<const int>& bb, const buffer<int>& o) -> index_t {
        if (bb.rank == 0 && bb.base() == nullptr) ++null_bias_calls;
        const int k = bb.base() ? bb() : 0;
        for (index_t i = o.dim(0).begin(); i < o.dim(0).end(); ++i) o(i) = a(i) + k;
        return 0;
      },
      {{in, {point(x)}}, {bias, {}}}, {{out, {x}}});
  pipeline p = build_pipeline(ctx, {in}, {out});
  test_buffers bufs(0, 8);
  const raw_buffer* inputs[] = {&bufs.in};
  const raw_buffer* outputs[] = {&bufs.out};
  ASSERT_EQ(p.evaluate(inputs, outputs), 0);
  for (index_t i = 0; i < 8; ++i) EXPECT_EQ(bufs.out(i), bufs.in(i));
  EXPECT_GE(null_bias_calls, 1);
}

TEST(compat_behaviour, allocations_go_through_the_hook_or_the_stack) {
  struct allocation_case {
    index_t n;
    std::size_t threshold;
    memory_type storage;
    bool expect_heap;
  };
  const allocation_case cases[] = {
      {100, 4096, memory_type::automatic, false},         // 400 bytes: stack
      {10000, 64 * 1024, memory_type::automatic, false},  // 40 KB under a 64 KiB threshold: stack
      {20000, 64 * 1024, memory_type::automatic, true},   // 80 KB: heap, through the hook
      {100, 4096, memory_type::heap, true},               // explicitly on the heap
  };
  for (const allocation_case& c : cases) {
    node_context ctx;
    var x(ctx, "x");
    auto in = buffer_expr::make(ctx, "in", 1, sizeof(int));
    auto t = buffer_expr::make(ctx, "t", 1, sizeof(int));
    auto out = buffer_expr::make(ctx, "out", 1, sizeof(int));
    func f = func::make(add_k(1), {{in, {point(x)}}}, {{t, {x}}});
    func g = func::make(add_k(1), {{t, {point(x)}}}, {{out, {x}}});
    t->store_in(c.storage);
    pipeline p = build_pipeline(ctx, {in}, {out});

    eval_config cfg;
    cfg.auto_stack_threshold = c.threshold;
    int allocations = 0, frees = 0;
    bool aligned = true;
    cfg.allocate = [&](var, raw_buffer* b) -> void* {
      ++allocations;
      void* allocation = b->allocate(64);
      aligned = aligned && reinterpret_cast<std::uintptr_t>(b->base) % 64 == 0;
      return allocation;
    };
    cfg.free = [&](var, raw_buffer*, void* allocation) {
      ++frees;
      std::free(allocation);
    };
    eval_context ectx;
    ectx.config = &cfg;
    test_buffers bufs(0, c.n);
    const raw_buffer* inputs[] = {&bufs.in};
    const raw_buffer* outputs[] = {&bufs.out};
    ASSERT_EQ(p.evaluate(inputs, outputs, ectx), 0);
    for (index_t i = 0; i < c.n; ++i) ASSERT_EQ(bufs.out(i), bufs.in(i) + 2);
    EXPECT_EQ(allocations, c.expect_heap ? 1 : 0) << c.n;
    EXPECT_EQ(frees, allocations);
    EXPECT_TRUE(aligned);
  }
}
