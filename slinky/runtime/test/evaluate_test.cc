// Tests of the interpreter: every expression and statement kind, the eval_config hooks, and a
// hand-built version of the README's 2-stage stencil program.
#include <gtest/gtest.h>

#include <cstdlib>
#include <limits>
#include <string>
#include <vector>

#include "slinky/runtime/buffer.h"
#include "slinky/runtime/evaluate.h"
#include "slinky/runtime/expr.h"
#include "slinky/runtime/pipeline.h"
#include "slinky/runtime/print.h"
#include "slinky/runtime/stmt.h"

namespace slinky {
namespace {

node_context ctx;
var x(ctx, "x");
var y(ctx, "y");
var z(ctx, "z");
var b0(ctx, "b0");
var b1(ctx, "b1");
var b2(ctx, "b2");

index_t buffer_value(const raw_buffer& b) { return reinterpret_cast<index_t>(&b); }

TEST(evaluate, arithmetic) {
  eval_context c;
  c[x] = 7;
  c[y] = -3;
  EXPECT_EQ(evaluate(x + y, c), 4);
  EXPECT_EQ(evaluate(x - y, c), 10);
  EXPECT_EQ(evaluate(x * y, c), -21);
  EXPECT_EQ(evaluate(expr(x) / 2, c), 3);
  EXPECT_EQ(evaluate(-expr(x) / 2, c), -4);
  EXPECT_EQ(evaluate(expr(x) / -2, c), -3);
  EXPECT_EQ(evaluate(-expr(x) / -2, c), 4);
  EXPECT_EQ(evaluate(-expr(x) % 2, c), 1);
  EXPECT_EQ(evaluate(expr(x) % -2, c), 1);
  EXPECT_EQ(evaluate(expr(x) / 0, c), 0);
  EXPECT_EQ(evaluate(expr(x) % 0, c), 0);
  EXPECT_EQ(evaluate(expr(x) / y, c), -2);
  EXPECT_EQ(evaluate(expr(x) % y, c), 1);
  EXPECT_EQ(evaluate(min(x, y), c), -3);
  EXPECT_EQ(evaluate(max(x, y), c), 7);
  EXPECT_EQ(evaluate(clamp(x, 0, 5), c), 5);
  EXPECT_EQ(evaluate(abs(y), c), 3);
  EXPECT_EQ(evaluate(align_down(x, 4), c), 4);
  EXPECT_EQ(evaluate(align_up(x, 4), c), 8);
  EXPECT_EQ(evaluate(align_down(y, 4), c), -4);
  EXPECT_EQ(evaluate(align_up(y, 4), c), 0);
}

TEST(evaluate, euclidean_identity) {
  eval_context c;
  for (index_t a = -20; a <= 20; ++a) {
    for (index_t b = -7; b <= 7; ++b) {
      if (b == 0) continue;
      c[x] = a;
      c[y] = b;
      index_t q = evaluate(expr(x) / y, c);
      index_t r = evaluate(expr(x) % y, c);
      EXPECT_EQ(a, q * b + r) << a << " " << b;
      EXPECT_GE(r, 0);
      EXPECT_LT(r, std::abs(b));
    }
  }
}

TEST(evaluate, comparisons_and_logic) {
  eval_context c;
  c[x] = 2;
  c[y] = 5;
  EXPECT_EQ(evaluate(x == y, c), 0);
  EXPECT_EQ(evaluate(x != y, c), 1);
  EXPECT_EQ(evaluate(x < y, c), 1);
  EXPECT_EQ(evaluate(x <= y, c), 1);
  EXPECT_EQ(evaluate(x > y, c), 0);
  EXPECT_EQ(evaluate(x >= y, c), 0);
  EXPECT_EQ(evaluate(x < y && y < x, c), 0);
  EXPECT_EQ(evaluate(x < y || y < x, c), 1);
  EXPECT_EQ(evaluate(!(x < y), c), 0);
  EXPECT_EQ(evaluate(select(x < y, x * 10, y * 10), c), 20);
  EXPECT_EQ(evaluate(select(x > y, x * 10, y * 10), c), 50);
  // Booleans are 0 and 1 even for non-zero operands.
  EXPECT_EQ(evaluate(expr(x) && y, c), 1);
  EXPECT_EQ(evaluate(!expr(y), c), 0);
}

TEST(evaluate, let_and_shadowing) {
  eval_context c;
  c[x] = 1;
  EXPECT_EQ(evaluate(let::make({{x, 10}, {y, expr(x) + 1}}, expr(x) * y), c), 110);
  // The outer value is restored.
  EXPECT_EQ(evaluate(x, c), 1);
}

TEST(evaluate, infinities_saturate) {
  EXPECT_EQ(evaluate(positive_infinity()), std::numeric_limits<index_t>::max());
  EXPECT_EQ(evaluate(negative_infinity()), std::numeric_limits<index_t>::min());
  EXPECT_EQ(evaluate(positive_infinity() + 1), std::numeric_limits<index_t>::max());
  EXPECT_EQ(evaluate(negative_infinity() - 1), std::numeric_limits<index_t>::min());
}

TEST(evaluate, buffer_metadata) {
  buffer<int, 3> b({10, 20, 30});
  b.translate(-3);
  eval_context c;
  c[b0] = buffer_value(b);
  EXPECT_EQ(evaluate(buffer_rank(b0), c), 3);
  EXPECT_EQ(evaluate(buffer_elem_size(b0), c), 4);
  EXPECT_EQ(evaluate(buffer_min(b0, 0), c), -3);
  EXPECT_EQ(evaluate(buffer_max(b0, 0), c), 6);
  EXPECT_EQ(evaluate(buffer_extent(b0, 1), c), 20);
  EXPECT_EQ(evaluate(buffer_stride(b0, 1), c), 40);
  EXPECT_EQ(evaluate(buffer_stride(b0, 2), c), 800);
  EXPECT_EQ(evaluate(buffer_fold_factor(b0, 0), c), dim::unfolded);
  // Dimensions past the rank are broadcasts.
  EXPECT_EQ(evaluate(buffer_stride(b0, 5), c), 0);
  b.allocate();
  EXPECT_EQ(evaluate(buffer_at(b0, 0, 1), c), reinterpret_cast<index_t>(&b(0, 1, 0)));
  EXPECT_EQ(evaluate(buffer_at(b0), c), reinterpret_cast<index_t>(b.base()));
}

// A callback that records the buffers it is called with.
struct recorded_call {
  std::vector<dim> in_dims;
  std::vector<dim> out_dims;
};

stmt record_call(std::vector<recorded_call>& calls, var in, var out) {
  return call_stmt::make(
      [&calls](const call_stmt* op, eval_context& c) -> index_t {
        const raw_buffer* i = c.lookup_buffer(op->inputs[0]);
        const raw_buffer* o = c.lookup_buffer(op->outputs[0]);
        calls.push_back({std::vector<dim>(i->dims, i->dims + i->rank), std::vector<dim>(o->dims, o->dims + o->rank)});
        return 0;
      },
      {in}, {out}, {}, call_stmt::attributes{.name = "record"});
}

TEST(evaluate, loop_and_crop_dim) {
  buffer<int, 2> in({10, 20});
  buffer<int, 2> out({10, 20});
  std::vector<recorded_call> calls;
  stmt body = crop_dim::make(b1, b1, 1, bounds(y, y + 2), record_call(calls, b0, b1));
  stmt program = loop::make(y, loop::serial, bounds(buffer_min(b1, 1), buffer_max(b1, 1)), 3, body);
  eval_context c;
  c[b0] = buffer_value(in);
  c[b1] = buffer_value(out);
  ASSERT_EQ(evaluate(program, c), 0);
  ASSERT_EQ(calls.size(), 7);
  for (std::size_t i = 0; i < calls.size(); ++i) {
    EXPECT_EQ(calls[i].out_dims[1].min(), static_cast<index_t>(i) * 3);
    // The last crop is clamped to the buffer's bounds.
    EXPECT_EQ(calls[i].out_dims[1].max(), std::min<index_t>(i * 3 + 2, 19));
    EXPECT_EQ(calls[i].out_dims[0].extent(), 10);
    EXPECT_EQ(calls[i].in_dims[1].extent(), 20);
  }
  // The outer buffer is not changed by the crops.
  EXPECT_EQ(out.dim(1).min(), 0);
  EXPECT_EQ(out.dim(1).max(), 19);
}

TEST(evaluate, loop_bounds_edge_cases) {
  int count = 0;
  stmt counter = call_stmt::make(
      [&count](const call_stmt*, eval_context&) -> index_t {
        ++count;
        return 0;
      },
      {}, {}, {}, {});
  // Empty range: no iterations.
  EXPECT_EQ(evaluate(loop::make(x, loop::serial, bounds(5, 4), 1, counter)), 0);
  EXPECT_EQ(count, 0);
  // Near the top of index_t: no overflow.
  const index_t top = std::numeric_limits<index_t>::max();
  EXPECT_EQ(evaluate(loop::make(x, loop::serial, bounds(top - 5, top), 4, counter)), 0);
  EXPECT_EQ(count, 2);
  // Over the whole range of index_t (max - min overflows): at -2^63, -2^62, 0 and 2^62.
  count = 0;
  const index_t bottom = std::numeric_limits<index_t>::min();
  EXPECT_EQ(evaluate(loop::make(x, loop::serial, bounds(bottom, top), index_t{1} << 62, counter)), 0);
  EXPECT_EQ(count, 4);
  // A non-positive step fails instead of looping forever.
  eval_config config;
  int checks = 0;
  config.check_failed = [&](const expr&) { ++checks; };
  eval_context c;
  c.config = &config;
  EXPECT_NE(evaluate(loop::make(x, loop::serial, bounds(0, 10), 0, counter), c), 0);
  EXPECT_EQ(checks, 1);
  // Parallel loops without a thread pool run serially and correctly.
  count = 0;
  EXPECT_EQ(evaluate(loop::make(x, loop::parallel, bounds(0, 9), 1, counter)), 0);
  EXPECT_EQ(count, 10);
}

TEST(evaluate, crop_buffer_slice_transpose) {
  buffer<int, 3> b({4, 5, 6});
  b.allocate();
  for_each_element([](int* p) { *p = 0; }, b);
  eval_context c;
  c[b0] = buffer_value(b);
  std::vector<std::vector<dim>> seen;
  stmt capture = call_stmt::make(
      [&seen](const call_stmt* op, eval_context& c) -> index_t {
        const raw_buffer* o = c.lookup_buffer(op->outputs[0]);
        seen.emplace_back(o->dims, o->dims + o->rank);
        return 0;
      },
      {}, {b1}, {}, {});
  ASSERT_EQ(evaluate(crop_buffer::make(b1, b0, {bounds(1, 2), interval_expr(), bounds(-5, 3)}, capture), c), 0);
  ASSERT_EQ(evaluate(slice_dim::make(b1, b0, 1, 2, capture), c), 0);
  ASSERT_EQ(evaluate(slice_buffer::make(b1, b0, {expr(), 3, 4}, capture), c), 0);
  ASSERT_EQ(evaluate(transpose::make(b1, b0, {2, 0}, capture), c), 0);
  ASSERT_EQ(evaluate(clone_buffer::make(b1, b0, capture), c), 0);
  ASSERT_EQ(seen.size(), 5);
  EXPECT_EQ(seen[0].size(), 3);
  EXPECT_EQ(seen[0][0], dim(1, 2, 4));
  EXPECT_EQ(seen[0][1], dim(0, 4, 16));
  EXPECT_EQ(seen[0][2], dim(0, 3, 80));
  EXPECT_EQ(seen[1].size(), 2);
  EXPECT_EQ(seen[1][1], dim(0, 5, 80));
  EXPECT_EQ(seen[2].size(), 1);
  EXPECT_EQ(seen[2][0], dim(0, 3, 4));
  EXPECT_EQ(seen[3].size(), 2);
  EXPECT_EQ(seen[3][0], dim(0, 5, 80));
  EXPECT_EQ(seen[3][1], dim(0, 3, 4));
  EXPECT_EQ(seen[4].size(), 3);
}

TEST(evaluate, empty_crops_keep_the_base) {
  // A crop to an empty region leaves the base where it is (the callback may slice the buffer's
  // other dims before it finds the empty one); raw_buffer::crop makes it null.
  buffer<int, 2> b({4, 5});
  b.allocate();
  eval_context c;
  c[b0] = buffer_value(b);
  std::vector<std::pair<const void*, std::vector<dim>>> seen;
  stmt capture = call_stmt::make(
      [&seen](const call_stmt* op, eval_context& c) -> index_t {
        const raw_buffer* o = c.lookup_buffer(op->outputs[0]);
        seen.emplace_back(o->base, std::vector<dim>(o->dims, o->dims + o->rank));
        return 0;
      },
      {}, {b1}, {}, {});
  ASSERT_EQ(evaluate(crop_buffer::make(b1, b0, {bounds(1, 2), bounds(7, 9)}, capture), c), 0);
  ASSERT_EQ(evaluate(crop_dim::make(b1, b0, 1, bounds(3, 2), capture), c), 0);
  ASSERT_EQ(seen.size(), 2);
  EXPECT_EQ(seen[0].first, &b(1, 0));
  EXPECT_TRUE(seen[0].second[1].empty());
  EXPECT_EQ(seen[1].first, b.base());
  EXPECT_TRUE(seen[1].second[1].empty());
  raw_buffer r = b;
  r.crop(1, 7, 9);
  EXPECT_EQ(r.base, nullptr);
}

TEST(evaluate, empty_allocations_have_a_base) {
  // An intermediate allocated empty (a reduction over nothing) still has a base wherever it is
  // stored: callbacks slice its non-empty dims before they look at the empty one.
  for (memory_type storage : {memory_type::stack, memory_type::heap, memory_type::automatic}) {
    std::vector<std::pair<const void*, index_t>> seen;
    stmt capture = call_stmt::make(
        [&seen](const call_stmt* op, eval_context& c) -> index_t {
          const raw_buffer* o = c.lookup_buffer(op->outputs[0]);
          seen.emplace_back(o->base, o->dim(1).extent());
          return 0;
        },
        {}, {b1}, {}, {});
    eval_context c;
    stmt program =
        allocate::make(b1, storage, 4, {{bounds(0, 3), expr(), expr()}, {bounds(0, -1), expr(), expr()}}, capture);
    ASSERT_EQ(evaluate(program, c), 0) << to_string(storage);
    ASSERT_EQ(seen.size(), 1);
    EXPECT_NE(seen[0].first, nullptr) << to_string(storage);
    EXPECT_EQ(seen[0].second, 0);
  }
}

TEST(evaluate, make_buffer) {
  std::vector<int> data(12, 0);
  std::vector<index_t> sizes;
  stmt write = call_stmt::make(
      [&](const call_stmt* op, eval_context& c) -> index_t {
        const raw_buffer* o = c.lookup_buffer(op->outputs[0]);
        for_each_element([](int* p) { *p = 7; }, o->cast<int>());
        sizes.push_back(o->size_bytes());
        return 0;
      },
      {}, {b1}, {}, {});
  expr base = reinterpret_cast<index_t>(data.data() + 2);
  stmt program = make_buffer::make(b1, base, 4, {{bounds(0, 2), 4, expr()}, {bounds(0, 1), 20, expr()}}, write);
  ASSERT_EQ(evaluate(program), 0);
  EXPECT_EQ(data, std::vector<int>({0, 0, 7, 7, 7, 0, 0, 7, 7, 7, 0, 0}));
}

struct allocation_log {
  int allocations = 0;
  int frees = 0;
  std::vector<index_t> sizes;
  eval_config config;

  allocation_log() {
    config.allocate = [this](var, raw_buffer* b) {
      ++allocations;
      sizes.push_back(b->size_bytes());
      return b->allocate();
    };
    config.free = [this](var, raw_buffer*, void* p) {
      ++frees;
      std::free(p);
    };
  }
};

stmt fill_output(var out, int value) {
  return call_stmt::make(
      [value](const call_stmt* op, eval_context& c) -> index_t {
        const raw_buffer* o = c.lookup_buffer(op->outputs[0]);
        for_each_element([value](int* p) { *p = value; }, o->cast<int>());
        return 0;
      },
      {}, {out}, {}, {});
}

TEST(evaluate, allocate_stack_and_heap) {
  for (memory_type storage : {memory_type::automatic, memory_type::stack, memory_type::heap}) {
    for (index_t n : {10, 10000}) {
      allocation_log log;
      eval_context c;
      c.config = &log.config;
      stmt program = allocate::make(b1, storage, 4, {{bounds(0, n - 1), expr(), expr()}}, fill_output(b1, 3));
      ASSERT_EQ(evaluate(program, c), 0);
      bool heap = storage == memory_type::heap || (storage == memory_type::automatic && n * 4 > 4096);
      EXPECT_EQ(log.allocations, heap ? 1 : 0) << to_string(storage) << " " << n;
      EXPECT_EQ(log.frees, log.allocations);
      if (heap) {
        EXPECT_EQ(log.sizes[0], n * 4);
      }
    }
  }
  // auto_stack_threshold = 0 sends every automatic allocation through the hook.
  allocation_log log;
  log.config.auto_stack_threshold = 0;
  eval_context c;
  c.config = &log.config;
  stmt program = allocate::make(b1, memory_type::automatic, 4, {{bounds(0, 1), expr(), expr()}}, fill_output(b1, 3));
  ASSERT_EQ(evaluate(program, c), 0);
  EXPECT_EQ(log.allocations, 1);
}

TEST(evaluate, allocate_overflowing_size_fails) {
  for (memory_type storage : {memory_type::automatic, memory_type::stack, memory_type::heap}) {
    // 2^62 + 1 elements of 4 bytes: the size wraps around to 4 bytes.
    allocation_log log;
    std::vector<std::string> failed;
    log.config.check_failed = [&](const expr& e) { failed.push_back(to_string(e)); };
    eval_context c;
    c.config = &log.config;
    stmt program = allocate::make(b1, storage, 4, {{bounds(0, index_t{1} << 62), expr(), expr()}}, fill_output(b1, 3));
    EXPECT_NE(evaluate(program, c), 0);
    ASSERT_EQ(failed.size(), 1u);
    EXPECT_NE(failed[0].find("buffer_size_bytes("), std::string::npos) << failed[0];
    EXPECT_EQ(log.allocations, 0);
    EXPECT_EQ(log.frees, 0);
  }
  // default_allocate does not round an overflowing size up to a small one.
  dim dims[] = {dim(0, index_t{1} << 62)};
  raw_buffer buf(nullptr, 4, 1, dims);
  EXPECT_EQ(default_allocate(var(), &buf, 64), nullptr);
  EXPECT_EQ(buf.base, nullptr);
  dims[0] = dim(0, std::numeric_limits<index_t>::max() / 4 - 2);
  EXPECT_EQ(default_allocate(var(), &buf, 64), nullptr);
}

TEST(evaluate, allocate_from_the_hull_of_no_region_is_empty) {
  // The extent the body sees of an allocation of `bounds`, and the bytes allocated (all through
  // the allocate hook).
  auto allocated = [](const interval_expr& bounds, index_t& bytes) {
    allocation_log log;
    log.config.auto_stack_threshold = 0;
    eval_context c;
    c.config = &log.config;
    index_t extent = -1;
    stmt program = allocate::make(b1, memory_type::automatic, 4, {{bounds, expr(), expr()}},
                                  call_stmt::make(
                                      [&](const call_stmt*, eval_context& ctx) -> index_t {
                                        extent = ctx.lookup_buffer(b1)->dim(0).extent();
                                        return 0;
                                      },
                                      {}, {b1}, {}, {}));
    EXPECT_EQ(evaluate(program, c), 0);
    bytes = 0;
    for (index_t s : log.sizes) bytes += s;
    return extent;
  };
  // The hull of no region has min +oo; shifted by 3, [oo + 3, oo + 2] saturates to [oo, oo].
  // Such a dim is empty (the region of nothing), not one element; likewise a max at -oo.
  const expr oo = positive_infinity();
  const expr neg_oo = negative_infinity();
  for (const interval_expr& b :
       {interval_expr(oo + 3, oo + 2), interval_expr(oo + 1, oo + 5), interval_expr(neg_oo - 2, neg_oo - 3)}) {
    index_t bytes = -1;
    EXPECT_EQ(allocated(b, bytes), 0) << b;
    EXPECT_EQ(bytes, 0) << b;
  }
  // Finite bounds near the ends of the range are left alone.
  const index_t big = std::numeric_limits<index_t>::max() / 8;
  index_t bytes = -1;
  EXPECT_EQ(allocated(bounds(big, big + 1), bytes), 2);
  EXPECT_EQ(bytes, 8);
}

TEST(evaluate, allocate_folded) {
  allocation_log log;
  eval_context c;
  c.config = &log.config;
  stmt program = allocate::make(b1, memory_type::heap, 4, {{bounds(0, 9), expr(), expr()}, {bounds(0, 99), expr(), 3}},
                                fill_output(b1, 3));
  ASSERT_EQ(evaluate(program, c), 0);
  ASSERT_EQ(log.allocations, 1);
  EXPECT_EQ(log.sizes[0], 10 * 3 * 4);
}

TEST(evaluate, check_failure) {
  buffer<int, 1> b({10});
  eval_context c;
  c[b0] = buffer_value(b);
  std::vector<std::string> failures;
  eval_config config;
  config.check_failed = [&](const expr& e) { failures.push_back(std::to_string(evaluate(e, c))); };
  c.config = &config;
  int calls = 0;
  stmt after = call_stmt::make(
      [&](const call_stmt*, eval_context&) -> index_t {
        ++calls;
        return 0;
      },
      {}, {}, {}, {});
  stmt program = block::make({check::make(buffer_max(b0, 0) >= 20), after});
  EXPECT_NE(evaluate(program, c), 0);
  EXPECT_EQ(failures.size(), 1);
  // Nothing after the failed check runs.
  EXPECT_EQ(calls, 0);
  EXPECT_EQ(evaluate(block::make({check::make(buffer_max(b0, 0) >= 9), after}), c), 0);
  EXPECT_EQ(calls, 1);
}

TEST(evaluate, if_then_else) {
  int a = 0, b = 0;
  auto counter = [](int& n, index_t result) {
    return call_stmt::make(
        [&n, result](const call_stmt*, eval_context&) -> index_t {
          ++n;
          return result;
        },
        {}, {}, {}, {});
  };
  eval_context c;
  c[x] = 3;
  EXPECT_EQ(evaluate(if_then_else::make(expr(x) < 5, counter(a, 0), counter(b, 0)), c), 0);
  EXPECT_EQ(a, 1);
  EXPECT_EQ(b, 0);
  EXPECT_EQ(evaluate(if_then_else::make(expr(x) > 5, counter(a, 0), counter(b, 0)), c), 0);
  EXPECT_EQ(a, 1);
  EXPECT_EQ(b, 1);
  // Without an else, nothing runs; a failure of the body is the result.
  EXPECT_EQ(evaluate(if_then_else::make(expr(x) > 5, counter(a, 0)), c), 0);
  EXPECT_EQ(a, 1);
  EXPECT_EQ(evaluate(if_then_else::make(x, counter(a, 7)), c), 7);
  EXPECT_EQ(a, 2);
  EXPECT_EQ(to_string(if_then_else::make(expr(x) < 5, check::make(y), check::make(z)), &ctx),
            "if (x < 5) {\n  check(y)\n}\nelse {\n  check(z)\n}\n");
}

TEST(evaluate, default_check_failed_reports_and_returns) {
  buffer<int, 1> b({10});
  node_context names;
  var buf(names, "my_input");
  eval_context c;
  c.symbols = &names;
  c[buf] = buffer_value(b);
  testing::internal::CaptureStderr();
  EXPECT_NE(evaluate(check::make(buffer_max(buf, 0) >= 20), c), 0);
  std::string message = testing::internal::GetCapturedStderr();
  EXPECT_NE(message.find("check failed"), std::string::npos) << message;
  EXPECT_NE(message.find("buffer_max(my_input, 0)"), std::string::npos) << message;
  EXPECT_NE(message.find("= 9"), std::string::npos) << message;
}

TEST(evaluate, call_failure) {
  int failed = 0;
  int after = 0;
  eval_config config;
  config.call_failed = [&](const call_stmt* op) {
    ++failed;
    EXPECT_EQ(op->attrs.name, "bad");
  };
  eval_context c;
  c.config = &config;
  stmt bad = call_stmt::make([](const call_stmt*, eval_context&) -> index_t { return 42; }, {}, {}, {},
                             call_stmt::attributes{.name = "bad"});
  stmt ok = call_stmt::make(
      [&](const call_stmt*, eval_context&) -> index_t {
        ++after;
        return 0;
      },
      {}, {}, {}, {});
  stmt program = loop::make(x, loop::serial, bounds(0, 9), 1, block::make({ok, bad}));
  EXPECT_EQ(evaluate(program, c), 42);
  EXPECT_EQ(failed, 1);
  EXPECT_EQ(after, 1);
}

TEST(evaluate, let_stmt) {
  index_t seen = 0;
  stmt capture = call_stmt::make(
      [&](const call_stmt*, eval_context& c) -> index_t {
        seen = c.lookup(y);
        return 0;
      },
      {}, {}, {}, {});
  eval_context c;
  c[x] = 4;
  ASSERT_EQ(evaluate(let_stmt::make({{y, expr(x) * 2}, {y, expr(y) + 1}}, capture), c), 0);
  EXPECT_EQ(seen, 9);
  EXPECT_EQ(c.lookup(y), 0);
}

TEST(evaluate, copy_stmt_elementwise) {
  buffer<int, 2> src({4, 3});
  buffer<int, 2> dst({3, 4});
  src.allocate();
  dst.allocate();
  for (int j = 0; j < 3; ++j) {
    for (int i = 0; i < 4; ++i) src(i, j) = i * 10 + j;
  }
  auto pad = raw_buffer::make_scalar<int>(-1);
  eval_context c;
  c[b0] = buffer_value(src);
  c[b1] = buffer_value(dst);
  c[b2] = buffer_value(*pad);
  // A transpose, shifted by one so part of dst is padding.
  stmt program = copy_stmt::make(copy, b0, {expr(y) + 1, x}, b1, {x, y}, b2);
  ASSERT_EQ(evaluate(program, c), 0);
  for (int j = 0; j < 4; ++j) {
    for (int i = 0; i < 3; ++i) EXPECT_EQ(dst(i, j), j + 1 < 4 ? (j + 1) * 10 + i : -1) << i << " " << j;
  }
}

// A copy reading a folded (ring buffer) source across its fold boundary is split there: two
// calls of impl, each on plain strided memory.
TEST(evaluate, copy_stmt_splits_at_fold_of_source) {
  buffer<int, 2> src({5, 4});
  src.allocate();
  // Rows 2..5 of a ring buffer of 4 rows: row y lives in slot y % 4.
  src.dims[1] = dim(2, 5, src.dim(1).stride(), 4);
  for (index_t y = 2; y <= 5; ++y) {
    for (index_t i = 0; i < 5; ++i) src(i, y) = static_cast<int>(i + 10 * y);
  }
  buffer<int, 2> dst({5, 4});
  dst.allocate();
  int calls = 0;
  copy_stmt::callable counting = [&](const raw_buffer& s, const raw_buffer& d, const raw_buffer& p) {
    ++calls;
    for (std::size_t k = 0; k < s.rank; ++k) EXPECT_FALSE(s.dim(k).is_folded(s.dim(k).min(), s.dim(k).max()));
    copy(s, d, p);
  };
  eval_context c;
  c[b0] = buffer_value(src);
  c[b1] = buffer_value(dst);
  ASSERT_EQ(evaluate(copy_stmt::make(counting, b0, {x, expr(y) + 2}, b1, {x, y}), c), 0);
  EXPECT_EQ(calls, 2);
  for (index_t y = 0; y < 4; ++y) {
    for (index_t i = 0; i < 5; ++i) EXPECT_EQ(dst(i, y), i + 10 * (y + 2));
  }
}

// The same with a folded destination, and a flip: dst(x, y) = src(4 - x, y).
TEST(evaluate, copy_stmt_splits_at_fold_of_destination) {
  buffer<int, 2> src({5, 4});
  src.allocate();
  for (index_t y = 0; y < 4; ++y) {
    for (index_t i = 0; i < 5; ++i) src(i, y) = static_cast<int>(i + 10 * y);
  }
  buffer<int, 2> dst({5, 3});
  dst.allocate();
  dst.dims[1] = dim(1, 3, dst.dim(1).stride(), 3);
  int calls = 0;
  copy_stmt::callable counting = [&](const raw_buffer& s, const raw_buffer& d, const raw_buffer& p) {
    ++calls;
    copy(s, d, p);
  };
  eval_context c;
  c[b0] = buffer_value(src);
  c[b1] = buffer_value(dst);
  ASSERT_EQ(evaluate(copy_stmt::make(counting, b0, {4 - expr(x), y}, b1, {x, y}), c), 0);
  EXPECT_EQ(calls, 2);
  for (index_t y = 1; y <= 3; ++y) {
    for (index_t i = 0; i < 5; ++i) EXPECT_EQ(dst(i, y), (4 - i) + 10 * y);
  }
}

// A padded copy from a folded source into a folded destination, both wrapping inside the copied
// range: src holds [5, 8] in a ring of 4, dst is [5, 12] in a ring of 9, [9, 12] is padding.
// Every call writes inside one period of dst: the copy splits its pieces at the destination's
// folds first, since a piece's padding is written through one view of it (a view running past
// the ring's end writes out of bounds). Found by the random tester:
// random_regressions.padded_copy_between_two_folded_buffers.
TEST(evaluate, copy_stmt_padded_between_folded_buffers) {
  buffer<int, 1> src({4});
  src.allocate();
  src.dims[0] = dim(5, 8, sizeof(int), 4);
  for (index_t i = 5; i <= 8; ++i) src(i) = static_cast<int>(i * 10);
  buffer<int, 1> dst({9});
  dst.allocate();
  dst.dims[0] = dim(5, 12, sizeof(int), 9);
  auto pad = raw_buffer::make_scalar<int>(-1);
  int calls = 0;
  copy_stmt::callable counting = [&](const raw_buffer& s, const raw_buffer& d, const raw_buffer& p) {
    ++calls;
    for (std::size_t k = 0; k < d.rank; ++k) EXPECT_FALSE(d.dim(k).is_folded(d.dim(k).min(), d.dim(k).max()));
    copy(s, d, p);
  };
  eval_context c;
  c[b0] = buffer_value(src);
  c[b1] = buffer_value(dst);
  c[b2] = buffer_value(*pad);
  ASSERT_EQ(evaluate(copy_stmt::make(counting, b0, {x}, b1, {x}, b2), c), 0);
  for (index_t i = 5; i <= 12; ++i) EXPECT_EQ(dst(i), i <= 8 ? i * 10 : -1) << i;
  EXPECT_LE(calls, 4);
}

// A copy crossing many periods of a folded destination (each period overwrites the last; the
// program is odd but must not recurse per period): one call per period, the last values kept.
TEST(evaluate, copy_stmt_many_fold_periods) {
  buffer<int, 1> src({100});
  src.allocate();
  for (index_t i = 0; i < 100; ++i) src(i) = static_cast<int>(i);
  buffer<int, 1> dst({4});
  dst.allocate();
  dst.dims[0] = dim(0, 99, sizeof(int), 4);
  int calls = 0;
  copy_stmt::callable counting = [&](const raw_buffer& s, const raw_buffer& d, const raw_buffer& p) {
    ++calls;
    copy(s, d, p);
  };
  eval_context c;
  c[b0] = buffer_value(src);
  c[b1] = buffer_value(dst);
  ASSERT_EQ(evaluate(copy_stmt::make(counting, b0, {x}, b1, {x}), c), 0);
  EXPECT_EQ(calls, 25);
  for (index_t i = 96; i < 100; ++i) EXPECT_EQ(dst(i), i);
}

// copy_stmt::make works out which dst dimensions are affine.
TEST(evaluate, copy_stmt_plan) {
  stmt s = copy_stmt::make(nullptr, b0, {x + 1, (expr(y) + 3) / 4, (expr(y) + 3) % 4 + z * 2, x * x}, b1, {x, y, z});
  const copy_stmt* op = s.as<copy_stmt>();
  ASSERT_TRUE(op);
  EXPECT_FALSE(op->plan[0].period.defined());  // x * x.
  EXPECT_TRUE(is_constant(op->plan[1].period, 4));
  EXPECT_TRUE(is_constant(op->plan[1].offset, 3) || match(op->plan[1].offset, 3));
  EXPECT_TRUE(is_constant(op->plan[2].period, 1));
  stmt t = copy_stmt::make(nullptr, b0, {expr(y) / 4, expr(y) % 2}, b1, {y});
  EXPECT_FALSE(t.as<copy_stmt>()->plan[0].period.defined());  // Two different periods.
  stmt u = copy_stmt::make(nullptr, b0, {(expr(y) + 1) / 4, expr(y) % 4}, b1, {y});
  EXPECT_FALSE(u.as<copy_stmt>()->plan[0].period.defined());  // Two different offsets.
}

TEST(evaluate, free_intrinsic_releases_early) {
  allocation_log log;
  eval_context c;
  c.config = &log.config;
  int frees_seen_in_body = -1;
  stmt after = call_stmt::make(
      [&](const call_stmt*, eval_context&) -> index_t {
        frees_seen_in_body = log.frees;
        return 0;
      },
      {}, {}, {}, {});
  stmt body = block::make({fill_output(b1, 1), check::make(call::make(intrinsic::free, {b1})), after});
  stmt program = allocate::make(b1, memory_type::heap, 4, {{bounds(0, 99), expr(), expr()}}, body);
  ASSERT_EQ(evaluate(program, c), 0);
  EXPECT_EQ(frees_seen_in_body, 1);
  EXPECT_EQ(log.allocations, 1);
  EXPECT_EQ(log.frees, 1);
}

// The allocate and free hooks' calls in order: which buffer, allocated (+) or freed (-), and its
// size in bytes as the hook sees it.
struct hook_events {
  std::vector<std::string> events;
  eval_config config;
  hook_events() {
    config.allocate = [this](var sym, raw_buffer* b) {
      events.push_back(
          std::string("+").append(ctx.name(sym.sym())).append(":").append(std::to_string(b->size_bytes())));
      return b->allocate();
    };
    config.free = [this](var sym, raw_buffer* b, void* p) {
      events.push_back(
          std::string("-").append(ctx.name(sym.sym())).append(":").append(std::to_string(b->size_bytes())));
      std::free(p);
    };
  }
};

// A heap allocation of n ints over [0, n - 1] (with stride -4 if `reversed`).
stmt allocate_ints(var sym, index_t n, stmt body, bool reversed = false) {
  return allocate::make(sym, memory_type::heap, 4, {{bounds(0, n - 1), reversed ? expr(-4) : expr(), expr()}},
                        std::move(body));
}

// A call that checks that `sym` holds `value` everywhere (unless it is null) and records its base.
stmt check_filled(var sym, int value, std::vector<const void*>& bases) {
  return call_stmt::make(
      [value, &bases](const call_stmt* op, eval_context& c) -> index_t {
        const raw_buffer* b = c.lookup_buffer(op->inputs[0]);
        bases.push_back(b->base);
        if (!b->base) return 0;
        index_t wrong = 0;
        for_each_element([&](const int* p) { wrong += *p != value; }, b->cast<const int>());
        return wrong;
      },
      {sym}, {}, {}, {});
}

// After free(b0), the next heap allocation takes b0's block if it fits and wastes at most a
// quarter of it; otherwise, or if anything runs in between, the block is given back first.
TEST(evaluate, freed_block_handed_to_the_next_allocation) {
  struct test_case {
    index_t first, second;
    bool call_between, reversed;
    std::vector<std::string> events;
  };
  const std::vector<test_case> cases = {
      {100, 100, false, false, {"+b0:400", "-b0:400"}},
      {100, 80, false, false, {"+b0:400", "-b0:400"}},
      {100, 70, false, false, {"+b0:400", "-b0:400", "+b1:280", "-b1:280"}},
      {100, 101, false, false, {"+b0:400", "-b0:400", "+b1:404", "-b1:404"}},
      {100, 100, true, false, {"+b0:400", "-b0:400", "+b1:400", "-b1:400"}},
      {100, 100, false, true, {"+b0:400", "-b0:400", "+b1:400", "-b1:400"}},
  };
  for (const test_case& t : cases) {
    hook_events log;
    eval_context c;
    c.config = &log.config;
    std::vector<const void*> bases;
    stmt second = allocate_ints(b1, t.second, block::make({fill_output(b1, 2), check_filled(b1, 2, bases)}));
    stmt between = t.call_between ? check_filled(b0, 0, bases) : stmt();
    stmt first_body = block::make({fill_output(b0, 1), check_filled(b0, 1, bases),
                                   check::make(call::make(intrinsic::free, {b0})), between, second});
    ASSERT_EQ(evaluate(allocate_ints(b0, t.first, first_body, t.reversed), c), 0);
    EXPECT_EQ(log.events, t.events) << t.first << " then " << t.second;
    // The freed buffer is null to a call between.
    if (t.call_between) {
      EXPECT_EQ(bases[1], nullptr);
    }
    if (log.events.size() == 2) {
      EXPECT_EQ(bases.front(), bases.back());
    }
  }
}

// A block handed on is freed once, with the buffer it was allocated for, even after passing
// through several buffers; the last holder's scope ends it.
TEST(evaluate, freed_block_handed_on_twice) {
  hook_events log;
  eval_context c;
  c.config = &log.config;
  std::vector<const void*> bases;
  stmt third = allocate_ints(b2, 90, block::make({fill_output(b2, 3), check_filled(b2, 3, bases)}));
  stmt second = allocate_ints(b1, 100,
                              block::make({fill_output(b1, 2), check_filled(b1, 2, bases),
                                           check::make(call::make(intrinsic::free, {b1})), third}));
  stmt first = allocate_ints(b0, 100,
                             block::make({fill_output(b0, 1), check_filled(b0, 1, bases),
                                          check::make(call::make(intrinsic::free, {b0})), second}));
  ASSERT_EQ(evaluate(first, c), 0);
  EXPECT_EQ(log.events, (std::vector<std::string>{"+b0:400", "-b0:400"}));
  ASSERT_EQ(bases.size(), 3);
  EXPECT_EQ(bases[0], bases[1]);
  EXPECT_EQ(bases[1], bases[2]);
}

// The README's 2-stage stencil, by hand: intm = in * 2 over a ring buffer of 3 rows, and
// out(x, y) = the sum of the 3x3 neighbourhood of intm. The row loop starts two rows early to
// warm up the ring buffer; the consumer's crops are empty during the warm-up.
TEST(evaluate, hand_built_stencil_program) {
  const int W = 20, H = 15;
  buffer<int, 2> in({W + 2, H + 2});
  in.translate(-1, -1);
  in.allocate();
  for (int y = -1; y <= H; ++y) {
    for (int x = -1; x <= W; ++x) in(x, y) = x * 7 + y * 3;
  }
  buffer<int, 2> out({W, H});
  out.allocate();

  int produced_rows = 0;
  int empty_consumer_calls = 0;
  stmt produce = call_stmt::make(
      [&](const call_stmt* op, eval_context& c) -> index_t {
        const buffer<int>& i = c.lookup_buffer(op->inputs[0])->cast<int>();
        const buffer<int>& o = c.lookup_buffer(op->outputs[0])->cast<int>();
        for (index_t y = o.dim(1).min(); y <= o.dim(1).max(); ++y) {
          ++produced_rows;
          for (index_t x = o.dim(0).min(); x <= o.dim(0).max(); ++x) o(x, y) = i(x, y) * 2;
        }
        return 0;
      },
      {b0}, {b2}, {}, call_stmt::attributes{.name = "mul"});
  stmt consume = call_stmt::make(
      [&](const call_stmt* op, eval_context& c) -> index_t {
        const buffer<int>& i = c.lookup_buffer(op->inputs[0])->cast<int>();
        const buffer<int>& o = c.lookup_buffer(op->outputs[0])->cast<int>();
        if (o.dim(1).empty()) ++empty_consumer_calls;
        for (index_t y = o.dim(1).min(); y <= o.dim(1).max(); ++y) {
          for (index_t x = o.dim(0).min(); x <= o.dim(0).max(); ++x) {
            int sum = 0;
            for (int dy = -1; dy <= 1; ++dy) {
              for (int dx = -1; dx <= 1; ++dx) sum += i(x + dx, y + dy);
            }
            o(x, y) = sum;
          }
        }
        return 0;
      },
      {b2}, {b1}, {}, call_stmt::attributes{.name = "stencil"});

  stmt body = block::make({
      crop_dim::make(b2, b2, 1, point(expr(y) + 1), produce),
      crop_dim::make(b1, b1, 1, point(y), consume),
  });
  stmt program = allocate::make(b2, memory_type::heap, 4,
                                {
                                    {bounds(buffer_min(b1, 0) - 1, buffer_max(b1, 0) + 1), expr(), expr()},
                                    {bounds(buffer_min(b1, 1) - 1, buffer_max(b1, 1) + 1), expr(), 3},
                                },
                                loop::make(y, loop::serial, bounds(buffer_min(b1, 1) - 2, buffer_max(b1, 1)), 1, body));
  program = block::make({
      check::make(buffer_min(b0, 0) <= buffer_min(b1, 0) - 1),
      check::make(buffer_max(b0, 0) >= buffer_max(b1, 0) + 1),
      check::make(buffer_min(b0, 1) <= buffer_min(b1, 1) - 1),
      check::make(buffer_max(b0, 1) >= buffer_max(b1, 1) + 1),
      program,
  });

  allocation_log log;
  log.config.auto_stack_threshold = 0;
  eval_context c;
  c.config = &log.config;
  c[b0] = buffer_value(in);
  c[b1] = buffer_value(out);
  ASSERT_EQ(evaluate(program, c), 0);

  ASSERT_EQ(log.allocations, 1);
  EXPECT_EQ(log.sizes[0], (W + 2) * 3 * 4);
  EXPECT_EQ(produced_rows, H + 2);
  EXPECT_EQ(empty_consumer_calls, 2);
  for (int y = 0; y < H; ++y) {
    for (int x = 0; x < W; ++x) {
      int expected = 0;
      for (int dy = -1; dy <= 1; ++dy) {
        for (int dx = -1; dx <= 1; ++dx) expected += in(x + dx, y + dy) * 2;
      }
      ASSERT_EQ(out(x, y), expected) << x << " " << y;
    }
  }

  // A too-small input fails a check and writes nothing.
  buffer<int, 2> small({W, H});
  small.allocate();
  for_each_element([](int* p) { *p = -7; }, out);
  c[b0] = buffer_value(small);
  int checks = 0;
  log.config.check_failed = [&](const expr&) { ++checks; };
  EXPECT_NE(evaluate(program, c), 0);
  EXPECT_EQ(checks, 1);
  EXPECT_EQ(out(0, 0), -7);
}

TEST(pipeline, evaluate_binds_arguments) {
  pipeline p;
  p.args = {x};
  p.inputs = {b0};
  p.outputs = {b1};
  p.body = call_stmt::make(
      [](const call_stmt* op, eval_context& c) -> index_t {
        const buffer<int>& i = c.lookup_buffer(op->inputs[0])->cast<int>();
        const buffer<int>& o = c.lookup_buffer(op->outputs[0])->cast<int>();
        index_t k = c.lookup(x);
        for (index_t j = o.dim(0).min(); j <= o.dim(0).max(); ++j) o(j) = i(j) * k;
        return 0;
      },
      {b0}, {b1}, {}, {});
  buffer<int, 1> in({5}), out({5});
  in.allocate();
  out.allocate();
  for (int i = 0; i < 5; ++i) in(i) = i;
  const raw_buffer* ins[] = {&in};
  const raw_buffer* outs[] = {&out};
  const index_t args[] = {3};
  ASSERT_EQ(p.evaluate(args, ins, outs), 0);
  for (int i = 0; i < 5; ++i) EXPECT_EQ(out(i), i * 3);
  // Braced lists work too.
  ASSERT_EQ(p.evaluate({4}, {&in}, {&out}), 0);
  EXPECT_EQ(out(2), 8);
  // Wrong numbers of arguments fail without running.
  testing::internal::CaptureStderr();
  EXPECT_NE(p.evaluate({&in}, {&out}), 0);
  EXPECT_NE(testing::internal::GetCapturedStderr().find("expected 1 scalar arguments"), std::string::npos);
}

}  // namespace
}  // namespace slinky
