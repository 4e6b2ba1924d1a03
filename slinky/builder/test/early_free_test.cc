// Intermediates give their memory back after their last reader (docs/builder.md, emit_program):
// each allocation is held from the first func that uses it to the last, at every loop level, and
// a later intermediate of the same size takes the memory of one whose readers are done, so
// chains of unscheduled funcs allocate and hold two intermediates, not all of them; within an
// iteration of a loop, intermediates stored outside it share memory when they are not live
// together (a chain in chunks allocates two blocks). Peak bytes
// and allocation counts are measured through the allocate and free hooks; freed memory is
// poisoned so that a read after the free shows in the output.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "slinky/base/thread_pool_impl.h"
#include "slinky/builder/pipeline.h"
#include "slinky/runtime/print.h"
#include "test_funcs.h"

namespace slinky {
namespace {

// The allocate and free hooks of memory_counter, with freed memory overwritten first.
struct poisoning_counter : test::memory_counter {
  poisoning_counter() {
    config.free = [this](var, raw_buffer* b, void* p) {
      ++frees;
      live_bytes -= b->size_bytes();
      std::memset(p, 0xcd, b->size_bytes());
      std::free(p);
    };
  }
};

// out = in + 1.
index_t add_one(const buffer<const int>& in, const buffer<int>& out) {
  return test::elementwise<int>(in, out, [](int v) { return v + 1; });
}

// The 1-D buffers of the hand-written graphs below, of ints.
struct buffers_1d {
  node_context ctx;
  var x{ctx, "x"};
  buffer_expr_ptr make(const char* name) { return buffer_expr::make(ctx, name, 1, sizeof(int)); }
  buffer_expr_ptr in = make("in"), a = make("a"), b = make("b"), c = make("c"), d = make("d"), out = make("out");
};

// A pipeline's input (in_n random values) and output (out_n values), after evaluating it through m.
struct run_1d {
  buffer<int, 1> in, out;

  run_1d(const pipeline& p, index_t in_n, index_t out_n, int seed, poisoning_counter& m) : in({in_n}), out({out_n}) {
    in.allocate();
    test::fill_random(in, seed);
    out.allocate();
    EXPECT_EQ(p.evaluate({&in}, {&out}, m.context), 0);
    EXPECT_EQ(m.allocations, m.frees);
  }
};

// A chain of n elementwise funcs from in to out, unscheduled or with a loop over y of the last.
struct chain {
  node_context ctx;
  var x{ctx, "x"}, y{ctx, "y"};
  std::vector<buffer_expr_ptr> bufs;
  std::vector<func> funcs;

  explicit chain(int n) {
    bufs.push_back(buffer_expr::make(ctx, "in", 2, sizeof(int)));
    for (int i = 0; i < n; ++i) {
      const std::string index = std::to_string(i);
      const std::string name = i + 1 == n ? std::string("out") : std::string("t").append(index);
      bufs.push_back(buffer_expr::make(ctx, name, 2, sizeof(int)));
      funcs.push_back(func::make(add_one, {{bufs[i], {point(x), point(y)}}}, {{bufs[i + 1], {x, y}}},
                                 {.name = std::string("f").append(index)}));
    }
  }

  // Runs on a w x h input and checks the output (in + n); returns the counters.
  void run(poisoning_counter& m, index_t w, index_t h, thread_pool* pool = nullptr) {
    pipeline p = build_pipeline(ctx, {bufs.front()}, {bufs.back()});
    buffer<int, 2> in_buf({w, h});
    in_buf.allocate();
    test::fill_random(in_buf, 5);
    buffer<int, 2> out_buf({w, h});
    out_buf.allocate();
    m.config.thread_pool = pool;
    ASSERT_EQ(p.evaluate({&in_buf}, {&out_buf}, m.context), 0);
    const int n = static_cast<int>(funcs.size());
    for (index_t b = 0; b < h; ++b) {
      for (index_t a = 0; a < w; ++a) ASSERT_EQ(out_buf(a, b), in_buf(a, b) + n) << a << ", " << b;
    }
    EXPECT_EQ(m.allocations, m.frees);
  }
};

TEST(early_free, unscheduled_chain_peaks_at_two_intermediates) {
  constexpr index_t w = 64, h = 32;
  constexpr index_t bytes = w * h * sizeof(int);
  for (int n : {2, 3, 5, 8}) {
    chain c(n);
    poisoning_counter m;
    c.run(m, w, h);
    // n - 1 intermediates of the whole image in at most two allocations, alive at once.
    EXPECT_EQ(m.allocations, std::min(n - 1, 2)) << n << " funcs";
    EXPECT_EQ(m.peak_bytes, std::min<index_t>(n - 1, 2) * bytes) << n << " funcs";
  }
}

TEST(early_free, chain_in_a_loop_frees_per_iteration) {
  // The chain computed per row of the last func, its intermediates stored in the loop: each
  // iteration allocates them, two live at a time. (By default they would be stored outside the
  // loop, one folded row each, alive across iterations.)
  constexpr index_t w = 64, h = 16;
  thread_pool_impl pool(2);
  for (bool parallel : {false, true}) {
    chain c(5);
    c.funcs.back().loops({{c.y, 1, parallel ? loop::parallel : loop::serial}});
    for (std::size_t i = 1; i + 1 < c.bufs.size(); ++i) c.bufs[i]->store_at({&c.funcs.back(), c.y});
    poisoning_counter m;
    c.run(m, w, h, parallel ? &pool : nullptr);
    const index_t row = w * sizeof(int);
    if (!parallel) {
      EXPECT_EQ(m.allocations, 2 * h);
      EXPECT_EQ(m.peak_bytes, 2 * row);
    } else {
      // Each thread running iterations (the pool's 2 and the caller) keeps its two blocks from
      // one iteration to the next.
      EXPECT_LE(m.allocations, 2 * 3);
      EXPECT_LE(m.peak_bytes, 2 * 3 * row);
    }
  }
}

TEST(early_free, buffer_read_by_a_later_func_stays) {
  // in -> a -> b -> c -> d -> out, and out also reads a: a lives until the end, b is freed after
  // c is computed, c after d.
  buffers_1d g;
  const var x = g.x;
  func fa = func::make(add_one, {{g.in, {point(x)}}}, {{g.a, {x}}});
  func fb = func::make(add_one, {{g.a, {point(x)}}}, {{g.b, {x}}});
  func fc = func::make(add_one, {{g.b, {point(x)}}}, {{g.c, {x}}});
  func fd = func::make(add_one, {{g.c, {point(x)}}}, {{g.d, {x}}});
  func fo = func::make(
      [](const buffer<const int>& a, const buffer<const int>& d, const buffer<int>& o) -> index_t {
        for (index_t i = o.dim(0).min(); i <= o.dim(0).max(); ++i) o(i) = a(i) * 1000 + d(i);
        return 0;
      },
      {{g.a, {point(x)}}, {g.d, {point(x)}}}, {{g.out, {x}}});
  pipeline p = build_pipeline(g.ctx, {g.in}, {g.out});
  constexpr index_t n = 100;
  poisoning_counter m;
  run_1d r(p, n, n, 3, m);
  for (index_t i = 0; i < n; ++i) ASSERT_EQ(r.out(i), (r.in(i) + 1) * 1000 + r.in(i) + 4);
  // d takes b's memory.
  EXPECT_EQ(m.allocations, 3);
  // a, b, c while c is computed; a, c, d while d is: never all four.
  EXPECT_EQ(m.peak_bytes, 3 * n * static_cast<index_t>(sizeof(int)));
}

TEST(early_free, memory_of_another_size_is_not_taken) {
  // in -> a (2n) -> b (2n) -> c (n: pairs of b summed) -> d (n) -> out. c and d are first used
  // after a is done, but are half its size: they allocate their own memory.
  buffers_1d g;
  const var x = g.x;
  func fa = func::make(add_one, {{g.in, {point(x)}}}, {{g.a, {x}}});
  func fb = func::make(add_one, {{g.a, {point(x)}}}, {{g.b, {x}}});
  func fc = func::make(
      [](const buffer<const int>& b, const buffer<int>& c) -> index_t {
        for (index_t i = c.dim(0).min(); i <= c.dim(0).max(); ++i) c(i) = b(2 * i) + b(2 * i + 1);
        return 0;
      },
      {{g.b, {bounds(2 * x, 2 * x + 1)}}}, {{g.c, {x}}});
  func fd = func::make(add_one, {{g.c, {point(x)}}}, {{g.d, {x}}});
  func fo = func::make(add_one, {{g.d, {point(x)}}}, {{g.out, {x}}});
  pipeline p = build_pipeline(g.ctx, {g.in}, {g.out});
  constexpr index_t n = 64;
  poisoning_counter m;
  run_1d r(p, 2 * n, n, 9, m);
  for (index_t i = 0; i < n; ++i) ASSERT_EQ(r.out(i), r.in(2 * i) + r.in(2 * i + 1) + 6);
  EXPECT_EQ(m.allocations, 4);
  // a and b while b is computed; less after (a is freed before c is allocated).
  EXPECT_EQ(m.peak_bytes, (2 * n + 2 * n) * static_cast<index_t>(sizeof(int)));
}

// in (w x h) -> a -> b -> c -> out, with b and c transposed (h' x w): a(x, y) = in + 1,
// b(y, x) = a(x, y) + a(x, y + m) (so a has m more rows than b), c = b + 1 or c(y, x) = b(y / 2, x)
// (c twice b's size), out(x, y) = c(y, x). a is dead once b is computed; the builder cannot
// prove c the size of a (their extents are swapped), so c takes a's memory at run time, when it
// fits and wastes at most a quarter of it; otherwise a is given back before c is allocated.
TEST(early_free, transposed_buffer_takes_memory_at_run_time) {
  struct test_case {
    index_t m;
    bool upsample;
    int allocations;
  };
  constexpr index_t w = 24, h = 32;
  constexpr index_t bytes = w * h * sizeof(int);
  for (const test_case& t :
       {test_case{0, false, 2}, test_case{2, false, 2}, test_case{16, false, 3}, test_case{0, true, 3}}) {
    node_context ctx;
    var x(ctx, "x"), y(ctx, "y");
    auto in = buffer_expr::make(ctx, "in", 2, sizeof(int));
    auto a = buffer_expr::make(ctx, "a", 2, sizeof(int));
    auto b = buffer_expr::make(ctx, "b", 2, sizeof(int));
    auto c = buffer_expr::make(ctx, "c", 2, sizeof(int));
    auto out = buffer_expr::make(ctx, "out", 2, sizeof(int));
    const index_t m = t.m;
    func fa = func::make(add_one, {{in, {point(x), point(y)}}}, {{a, {x, y}}});
    func fb = func::make(
        [m](const buffer<const int>& ai, const buffer<int>& bo) -> index_t {
          for (index_t col = bo.dim(1).min(); col <= bo.dim(1).max(); ++col) {
            for (index_t row = bo.dim(0).min(); row <= bo.dim(0).max(); ++row) {
              bo(row, col) = ai(col, row) + ai(col, row + m);
            }
          }
          return 0;
        },
        {{a, {point(x), bounds(y, y + m)}}}, {{b, {y, x}}});
    func fc = t.upsample ? func::make(
                               [](const buffer<const int>& bi, const buffer<int>& co) -> index_t {
                                 for (index_t col = co.dim(1).min(); col <= co.dim(1).max(); ++col) {
                                   for (index_t row = co.dim(0).min(); row <= co.dim(0).max(); ++row) {
                                     co(row, col) = bi(row / 2, col);
                                   }
                                 }
                                 return 0;
                               },
                               {{b, {point(y / 2), point(x)}}}, {{c, {y, x}}})
                         : func::make(add_one, {{b, {point(y), point(x)}}}, {{c, {y, x}}});
    func fo = func::make(
        [](const buffer<const int>& ci, const buffer<int>& o) -> index_t {
          for (index_t row = o.dim(1).min(); row <= o.dim(1).max(); ++row) {
            for (index_t col = o.dim(0).min(); col <= o.dim(0).max(); ++col) o(col, row) = ci(row, col);
          }
          return 0;
        },
        {{c, {point(y), point(x)}}}, {{out, {x, y}}});
    pipeline p = build_pipeline(ctx, {in}, {out});
    const index_t rows_b = t.upsample ? h / 2 : h;
    buffer<int, 2> in_buf({w, rows_b + m});
    in_buf.allocate();
    test::fill_random(in_buf, 6);
    buffer<int, 2> out_buf({w, h});
    out_buf.allocate();
    poisoning_counter mc;
    ASSERT_EQ(p.evaluate({&in_buf}, {&out_buf}, mc.context), 0);
    for (index_t row = 0; row < h; ++row) {
      for (index_t col = 0; col < w; ++col) {
        const index_t rb = t.upsample ? row / 2 : row;
        const int expected = in_buf(col, rb) + in_buf(col, rb + m) + 2 + (t.upsample ? 0 : 1);
        ASSERT_EQ(out_buf(col, row), expected) << col << ", " << row << ", m = " << m;
      }
    }
    EXPECT_EQ(mc.allocations, t.allocations) << "m = " << m << (t.upsample ? ", upsampled" : "");
    EXPECT_EQ(mc.allocations, mc.frees);
    const index_t bytes_a = (rows_b + m) * w * sizeof(int), bytes_b = rows_b * w * sizeof(int);
    // a and b while b is computed; then b and c (a given back first, unless c took its memory).
    const index_t bytes_c = t.allocations == 2 ? 0 : bytes;
    EXPECT_EQ(mc.peak_bytes, std::max(bytes_a + bytes_b, bytes_b + bytes_c)) << "m = " << m;
  }
}

TEST(early_free, aliased_copy_in_a_chain) {
  // in -> a -> (copy, shifted) -> b -> c -> d -> out: the copy makes b a view of a's memory (or
  // a of b's), which is freed after the last user of either; c and d follow as in any chain.
  // With aliasing off, the copy is real and b is a buffer of its own.
  for (bool alias : {true, false}) {
    buffers_1d g;
    const var x = g.x;
    func fa = func::make(add_one, {{g.in, {point(x)}}}, {{g.a, {x}}});
    func fb = func::make_copy({g.a, {point(x + 1)}}, {g.b, {x}});
    func fc = func::make(add_one, {{g.b, {point(x)}}}, {{g.c, {x}}});
    func fd = func::make(add_one, {{g.c, {point(x)}}}, {{g.d, {x}}});
    func fo = func::make(add_one, {{g.d, {point(x)}}}, {{g.out, {x}}});
    build_options options;
    options.no_alias_buffers = !alias;
    pipeline p = build_pipeline(g.ctx, {g.in}, {g.out}, options);
    constexpr index_t n = 50;
    poisoning_counter m;
    run_1d r(p, n + 1, n, 4, m);
    for (index_t i = 0; i < n; ++i) ASSERT_EQ(r.out(i), r.in(i + 1) + 4) << i << (alias ? ", aliased" : "");
    // Aliased: a and b in one allocation, c, then d in the memory of a and b. Copied: a, b, c
    // in a's memory, d in b's.
    EXPECT_EQ(m.allocations, 2) << (alias ? "aliased" : "copied");
  }
}

TEST(early_free, in_place_func_in_a_chain) {
  // in -> a -> b (written over a when aliasing is on) -> c -> d -> out. In place, a and b are
  // one memory, held until c is computed; d then takes it. Either way two blocks at a time.
  for (bool alias : {true, false}) {
    buffers_1d g;
    const var x = g.x;
    const int* a_base = nullptr;
    const int* b_base = nullptr;
    func fa = func::make(add_one, {{g.in, {point(x)}}}, {{g.a, {x}}});
    func fb = func::make(
        [&](const buffer<const int>& i, const buffer<int>& o) -> index_t {
          a_base = &i(i.dim(0).min());
          b_base = &o(o.dim(0).min());
          for (index_t k = o.dim(0).min(); k <= o.dim(0).max(); ++k) o(k) = i(k) * 3;
          return 0;
        },
        {{g.a, {point(x)}}}, {{g.b, {x}}}, {.allow_in_place = 1, .name = "in_place"});
    func fc = func::make(add_one, {{g.b, {point(x)}}}, {{g.c, {x}}});
    func fd = func::make(add_one, {{g.c, {point(x)}}}, {{g.d, {x}}});
    func fo = func::make(add_one, {{g.d, {point(x)}}}, {{g.out, {x}}});
    build_options options;
    options.no_alias_buffers = !alias;
    pipeline p = build_pipeline(g.ctx, {g.in}, {g.out}, options);
    constexpr index_t n = 40;
    poisoning_counter m;
    run_1d r(p, n, n, 2, m);
    for (index_t i = 0; i < n; ++i) ASSERT_EQ(r.out(i), (r.in(i) + 1) * 3 + 3) << i << (alias ? ", in place" : "");
    EXPECT_EQ(a_base == b_base, alias);
    // In place: a and b, then c; d in a's memory. Copied: a, b, then c in a's memory, d in b's.
    EXPECT_EQ(m.allocations, 2) << (alias ? "in place" : "copied");
    EXPECT_EQ(m.peak_bytes, 2 * n * static_cast<index_t>(sizeof(int))) << (alias ? "in place" : "copied");
  }
}

TEST(early_free, pipelined_loop_keeps_its_ring_buffers) {
  // A 3-stage stencil chain with a parallel row loop: its intermediates are ring buffers shared
  // by the iterations in flight, all used by the loop, so none is freed or handed on before the
  // loop ends (each iteration may still read what another wrote). Output checked, one
  // allocation per intermediate.
  thread_pool_impl pool(2);
  node_context ctx;
  var x(ctx, "x"), y(ctx, "y");
  auto in = buffer_expr::make(ctx, "in", 2, sizeof(int));
  auto a = buffer_expr::make(ctx, "a", 2, sizeof(int));
  auto b = buffer_expr::make(ctx, "b", 2, sizeof(int));
  auto out = buffer_expr::make(ctx, "out", 2, sizeof(int));
  auto blur = [](const buffer<const int>& i, const buffer<int>& o) -> index_t {
    for (index_t r = o.dim(1).min(); r <= o.dim(1).max(); ++r) {
      for (index_t col = o.dim(0).min(); col <= o.dim(0).max(); ++col) o(col, r) = i(col, r - 1) + i(col, r + 1);
    }
    return 0;
  };
  func fa = func::make(blur, {{in, {point(x), bounds(y - 1, y + 1)}}}, {{a, {x, y}}});
  func fb = func::make(blur, {{a, {point(x), bounds(y - 1, y + 1)}}}, {{b, {x, y}}});
  func fo = func::make(blur, {{b, {point(x), bounds(y - 1, y + 1)}}}, {{out, {x, y}}});
  fo.loops({{y, 2, loop::parallel}});
  pipeline p = build_pipeline(ctx, {in}, {out});
  constexpr index_t w = 16, h = 40;
  buffer<int, 2> in_buf({w, h + 6});
  in_buf.translate(0, -3);
  in_buf.allocate();
  test::fill_random(in_buf, 8);
  buffer<int, 2> out_buf({w, h});
  out_buf.allocate();
  poisoning_counter m;
  m.config.thread_pool = &pool;
  ASSERT_EQ(p.evaluate({&in_buf}, {&out_buf}, m.context), 0);
  for (index_t r = 0; r < h; ++r) {
    for (index_t col = 0; col < w; ++col) {
      const int expected = in_buf(col, r - 3) + 3 * in_buf(col, r - 1) + 3 * in_buf(col, r + 1) + in_buf(col, r + 3);
      ASSERT_EQ(out_buf(col, r), expected) << col << ", " << r;
    }
  }
  EXPECT_EQ(m.allocations, 2);
  EXPECT_EQ(m.allocations, m.frees);
}

// Attention without a schedule: scores = q k^T (s x s), its row max, e = exp(scores - max)
// (s x s), the row sums, p = e / sum (s x s), out = p v. scores is dead once e is computed, and
// e once p is: two s x s buffers at once.
TEST(early_free, attention_peaks_at_two_score_matrices) {
  constexpr index_t s = 64, d = 8;
  node_context ctx;
  var i(ctx, "i"), j(ctx, "j"), k(ctx, "k");
  auto q = buffer_expr::make(ctx, "q", 2, sizeof(float));
  auto kt = buffer_expr::make(ctx, "kt", 2, sizeof(float));
  auto v = buffer_expr::make(ctx, "v", 2, sizeof(float));
  auto scores = buffer_expr::make(ctx, "scores", 2, sizeof(float));
  auto row_max = buffer_expr::make(ctx, "row_max", 1, sizeof(float));
  auto e = buffer_expr::make(ctx, "e", 2, sizeof(float));
  auto row_sum = buffer_expr::make(ctx, "row_sum", 1, sizeof(float));
  auto prob = buffer_expr::make(ctx, "prob", 2, sizeof(float));
  auto out = buffer_expr::make(ctx, "out", 2, sizeof(float));
  // Buffers are (column, row): scores(j, i) = sum_k q(k, i) * kt(j, k).
  func f_scores = func::make(
      [](const buffer<const float>& q, const buffer<const float>& kt, const buffer<float>& o) -> index_t {
        for (index_t r = o.dim(1).min(); r <= o.dim(1).max(); ++r) {
          for (index_t c = o.dim(0).min(); c <= o.dim(0).max(); ++c) {
            float sum = 0;
            for (index_t kk = q.dim(0).min(); kk <= q.dim(0).max(); ++kk) sum += q(kk, r) * kt(c, kk);
            o(c, r) = sum;
          }
        }
        return 0;
      },
      {{q, {bounds(0, d - 1), point(i)}}, {kt, {point(j), bounds(0, d - 1)}}}, {{scores, {j, i}}});
  func f_max = func::make(
      [](const buffer<const float>& sc, const buffer<float>& o) -> index_t {
        for (index_t r = o.dim(0).min(); r <= o.dim(0).max(); ++r) {
          float m = -INFINITY;
          for (index_t c = sc.dim(0).min(); c <= sc.dim(0).max(); ++c) m = std::max(m, sc(c, r));
          o(r) = m;
        }
        return 0;
      },
      {{scores, {bounds(0, s - 1), point(i)}}}, {{row_max, {i}}});
  func f_exp = func::make(
      [](const buffer<const float>& sc, const buffer<const float>& m, const buffer<float>& o) -> index_t {
        for (index_t r = o.dim(1).min(); r <= o.dim(1).max(); ++r) {
          for (index_t c = o.dim(0).min(); c <= o.dim(0).max(); ++c) o(c, r) = std::exp(sc(c, r) - m(r));
        }
        return 0;
      },
      {{scores, {point(j), point(i)}}, {row_max, {point(i)}}}, {{e, {j, i}}});
  func f_sum = func::make(
      [](const buffer<const float>& ex, const buffer<float>& o) -> index_t {
        for (index_t r = o.dim(0).min(); r <= o.dim(0).max(); ++r) {
          float sum = 0;
          for (index_t c = ex.dim(0).min(); c <= ex.dim(0).max(); ++c) sum += ex(c, r);
          o(r) = sum;
        }
        return 0;
      },
      {{e, {bounds(0, s - 1), point(i)}}}, {{row_sum, {i}}});
  func f_prob = func::make(
      [](const buffer<const float>& ex, const buffer<const float>& sum, const buffer<float>& o) -> index_t {
        for (index_t r = o.dim(1).min(); r <= o.dim(1).max(); ++r) {
          for (index_t c = o.dim(0).min(); c <= o.dim(0).max(); ++c) o(c, r) = ex(c, r) / sum(r);
        }
        return 0;
      },
      {{e, {point(j), point(i)}}, {row_sum, {point(i)}}}, {{prob, {j, i}}});
  func f_out = func::make(
      [](const buffer<const float>& p, const buffer<const float>& v, const buffer<float>& o) -> index_t {
        for (index_t r = o.dim(1).min(); r <= o.dim(1).max(); ++r) {
          for (index_t c = o.dim(0).min(); c <= o.dim(0).max(); ++c) {
            float sum = 0;
            for (index_t jj = p.dim(0).min(); jj <= p.dim(0).max(); ++jj) sum += p(jj, r) * v(c, jj);
            o(c, r) = sum;
          }
        }
        return 0;
      },
      {{prob, {bounds(0, s - 1), point(i)}}, {v, {point(k), bounds(0, s - 1)}}}, {{out, {k, i}}});
  pipeline p = build_pipeline(ctx, {q, kt, v}, {out});

  buffer<float, 2> q_buf({d, s}), kt_buf({s, d}), v_buf({d, s}), out_buf({d, s});
  for (auto* b : {&q_buf, &kt_buf, &v_buf, &out_buf}) b->allocate();
  for (auto* b : {&q_buf, &kt_buf, &v_buf}) {
    int n = 0;
    for_each_element([&](float* x) { *x = static_cast<float>((n++ * 37) % 19) / 19.0f - 0.5f; }, *b);
  }
  poisoning_counter m;
  ASSERT_EQ(p.evaluate({&q_buf, &kt_buf, &v_buf}, {&out_buf}, m.context), 0);
  // The reference, row by row.
  for (index_t r = 0; r < s; ++r) {
    std::vector<float> sc(s);
    float mx = -INFINITY;
    for (index_t c = 0; c < s; ++c) {
      float sum = 0;
      for (index_t kk = 0; kk < d; ++kk) sum += q_buf(kk, r) * kt_buf(c, kk);
      sc[c] = sum;
      mx = std::max(mx, sum);
    }
    float total = 0;
    for (index_t c = 0; c < s; ++c) total += (sc[c] = std::exp(sc[c] - mx));
    for (index_t col = 0; col < d; ++col) {
      float sum = 0;
      for (index_t c = 0; c < s; ++c) sum += sc[c] / total * v_buf(col, c);
      ASSERT_NEAR(out_buf(col, r), sum, 1e-5f) << col << ", " << r;
    }
  }
  // prob takes the memory of scores, row_sum that of row_max.
  EXPECT_EQ(m.allocations, 3);
  const index_t matrix = s * s * static_cast<index_t>(sizeof(float));
  const index_t vector = s * static_cast<index_t>(sizeof(float));
  // At most two s x s matrices and the two row vectors at once.
  EXPECT_LE(m.peak_bytes, 2 * matrix + 2 * vector);
  EXPECT_GE(m.peak_bytes, 2 * matrix);
}

// Storage shared within an iteration (docs/builder.md, emit_program): intermediates stored outside
// a serial loop whose data does not outlive an iteration share memory when they are not live
// together in the loop's body.

TEST(early_free, chain_in_a_loop_shares_storage_within_an_iteration) {
  // The chain computed in rows (or pairs of rows) of the last func, its intermediates stored
  // outside the loop (the default), one fold of rows each: two blocks for the whole chain.
  constexpr index_t w = 64, h = 16;
  for (index_t step : {1, 2}) {
    for (int n : {2, 3, 5, 8}) {
      chain c(n);
      c.funcs.back().loops({{c.y, step}});
      poisoning_counter m;
      c.run(m, w, h);
      EXPECT_EQ(m.allocations, std::min(n - 1, 2)) << n << " funcs, step " << step;
      EXPECT_EQ(m.peak_bytes, std::min<index_t>(n - 1, 2) * w * step * static_cast<index_t>(sizeof(int)))
          << n << " funcs, step " << step;
      // The same on the stack (the default threshold, and storage the client puts there).
      poisoning_counter on_stack;
      on_stack.config.auto_stack_threshold = 4 * 1024;
      c.run(on_stack, w, h);
      EXPECT_EQ(on_stack.allocations, 0);
      for (std::size_t i = 1; i + 1 < c.bufs.size(); ++i) c.bufs[i]->store_in(memory_type::stack);
      poisoning_counter stack;
      c.run(stack, w, h);
      EXPECT_EQ(stack.allocations, 0);
    }
  }
}

TEST(early_free, buffers_live_together_in_an_iteration_do_not_share) {
  // in -> a -> b, c = a * 1000 + b, d = c + 1, out = d + 1, out in chunks of 4: in the loop's
  // body a is live from fa to fc, b from fb to fc, c from fc to fd, d from fd to the end. c
  // overlaps a and b, so it has memory of its own; d takes a's (freed after fc).
  buffers_1d g;
  const var x = g.x;
  func fa = func::make(add_one, {{g.in, {point(x)}}}, {{g.a, {x}}});
  func fb = func::make(add_one, {{g.a, {point(x)}}}, {{g.b, {x}}});
  func fc = func::make(
      [](const buffer<const int>& a, const buffer<const int>& b, const buffer<int>& c) -> index_t {
        for (index_t i = c.dim(0).min(); i <= c.dim(0).max(); ++i) c(i) = a(i) * 1000 + b(i);
        return 0;
      },
      {{g.a, {point(x)}}, {g.b, {point(x)}}}, {{g.c, {x}}});
  func fd = func::make(add_one, {{g.c, {point(x)}}}, {{g.d, {x}}});
  func fo = func::make(add_one, {{g.d, {point(x)}}}, {{g.out, {x}}});
  fo.loops({{x, 4}});
  pipeline p = build_pipeline(g.ctx, {g.in}, {g.out});
  constexpr index_t n = 99;
  poisoning_counter m;
  run_1d r(p, n, n, 4, m);
  for (index_t i = 0; i < n; ++i) ASSERT_EQ(r.out(i), (r.in(i) + 1) * 1000 + r.in(i) + 2 + 2) << i;
  EXPECT_EQ(m.allocations, 3);
  EXPECT_EQ(m.peak_bytes, 3 * 4 * static_cast<index_t>(sizeof(int)));
}

TEST(early_free, sliding_buffer_does_not_share) {
  // out = b * 1000 + d, b a 3-point stencil of a = in + 1, d a 3-point stencil of c = 3 * in, in
  // a loop of step 1: a and c slide (each iteration computes one new point and reads the two
  // before it), so they hold data from one iteration to the next and never share, although c is
  // first used after a's last reader and both have the same size and fold.
  buffers_1d g;
  const var x = g.x;
  auto sum3 = [](const buffer<const int>& in, const buffer<int>& out) -> index_t {
    for (index_t i = out.dim(0).min(); i <= out.dim(0).max(); ++i) out(i) = in(i) + in(i + 1) + in(i + 2);
    return 0;
  };
  func fa = func::make(add_one, {{g.in, {point(x)}}}, {{g.a, {x}}});
  func fb = func::make(sum3, {{g.a, {bounds(x, x + 2)}}}, {{g.b, {x}}});
  func fc = func::make(
      [](const buffer<const int>& in, const buffer<int>& out) -> index_t {
        return test::elementwise<int>(in, out, [](int v) { return v * 3; });
      },
      {{g.in, {point(x)}}}, {{g.c, {x}}});
  func fd = func::make(sum3, {{g.c, {bounds(x, x + 2)}}}, {{g.d, {x}}});
  func fo = func::make(
      [](const buffer<const int>& b, const buffer<const int>& d, const buffer<int>& o) -> index_t {
        for (index_t i = o.dim(0).min(); i <= o.dim(0).max(); ++i) o(i) = b(i) * 1000 + d(i);
        return 0;
      },
      {{g.b, {point(x)}}, {g.d, {point(x)}}}, {{g.out, {x}}});
  fo.loops({{x, 1}});
  pipeline p = build_pipeline(g.ctx, {g.in}, {g.out});
  constexpr index_t n = 50;
  poisoning_counter m;
  run_1d r(p, n + 2, n, 5, m);
  for (index_t i = 0; i < n; ++i) {
    int b = 0, d = 0;
    for (index_t k = 0; k < 3; ++k) {
      b += r.in(i + k) + 1;
      d += r.in(i + k) * 3;
    }
    ASSERT_EQ(r.out(i), b * 1000 + d) << i;
  }
  // a, b, c and d: b and d are both read by out.
  EXPECT_EQ(m.allocations, 4);
}

TEST(early_free, heap_intermediates_in_a_loop_do_not_share) {
  // Heap storage is the client's: each intermediate keeps its own allocation.
  constexpr index_t w = 64, h = 16;
  chain c(5);
  c.funcs.back().loops({{c.y, 1}});
  for (std::size_t i = 1; i + 1 < c.bufs.size(); ++i) c.bufs[i]->store_in(memory_type::heap);
  poisoning_counter m;
  c.run(m, w, h);
  EXPECT_EQ(m.allocations, 4);
  EXPECT_EQ(m.peak_bytes, 4 * w * static_cast<index_t>(sizeof(int)));
}

}  // namespace
}  // namespace slinky
