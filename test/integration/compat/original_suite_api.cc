// Compatibility tests of what running the original's own test suite against ours showed (API_COMPAT
// 5.2, items 4, 8, 10 and 11): buffers whose addresses wrap around are rejected by evaluate; slicing
// leading dims never writes to a shared dims array; substitute_buffer, substitute, match,
// depends_on and is_pure behave as the original's tests expect; and the declarations those tests
// (and clients) combine with their own operators compile and link. Written the way those tests use
// the API, in C++17.
#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "slinky/base/arithmetic.h"
#include "slinky/base/modulus_remainder.h"
#include "slinky/builder/pipeline.h"
#include "slinky/builder/simplify.h"
#include "slinky/builder/substitute.h"
#include "slinky/runtime/buffer.h"
#include "slinky/runtime/depends_on.h"
#include "slinky/runtime/evaluate.h"
#include "slinky/runtime/expr.h"
#include "slinky/runtime/pipeline.h"
#include "slinky/runtime/print.h"
#include "slinky/runtime/stmt.h"

// The original's tests define these themselves, in namespace slinky, not inline (the original
// declares no == for depends_on_result). A client may do the same: ours must neither make a
// comparison ambiguous nor define the same symbol (item 11).
namespace slinky {

int client_equal_calls = 0;
bool operator==(const depends_on_result& a, const depends_on_result& b) {
  ++client_equal_calls;
  return a.var == b.var && a.buffer_input == b.buffer_input && a.buffer_output == b.buffer_output &&
         a.buffer_src == b.buffer_src && a.buffer_dst == b.buffer_dst && a.buffer_base == b.buffer_base &&
         a.buffer_dims == b.buffer_dims && a.buffer_bounds == b.buffer_bounds;
}

std::ostream& operator<<(std::ostream& s, const modulus_remainder<index_t>& x) {
  return s << "client(" << x.modulus << ", " << x.remainder << ")";
}

}  // namespace slinky

namespace {

using namespace slinky;

// A func copying in to out (1-d ints), counting its calls, built into a pipeline.
struct copy_pipeline {
  node_context ctx;
  buffer_expr_ptr in = buffer_expr::make(ctx, "in", 1, sizeof(int));
  buffer_expr_ptr out = buffer_expr::make(ctx, "out", 1, sizeof(int));
  var x{ctx, "x"};
  int calls = 0;
  func f;
  pipeline p;

  copy_pipeline() {
    f = func::make(
        [this](const buffer<const int>& a, const buffer<int>& b) -> index_t {
          ++calls;
          for (index_t i = b.dim(0).begin(); i < b.dim(0).end(); ++i) b(i) = a(i);
          return 0;
        },
        {{in, {point(x)}}}, {{out, {x}}});
    p = build_pipeline(ctx, {in}, {out});
  }
};

void* address(std::uintptr_t a) { return reinterpret_cast<void*>(a); }

// Item 4: a buffer whose addresses wrap around the address space (the base near the top with the
// extent past it, or a negative stride from near 0) fails one check; evaluate returns non-zero and
// no callback runs. Every number in these descriptors is small: only the addresses are wrong.
TEST(compat_original_suite, evaluate_rejects_buffers_that_wrap_around) {
  constexpr std::uintptr_t top = std::numeric_limits<std::uintptr_t>::max();
  struct hostile {
    void* base;
    index_t stride;
  };
  for (const hostile& h : {hostile{address(top - 15), 4}, hostile{address(16), -4}}) {
    for (bool as_input : {true, false}) {
      copy_pipeline c;
      buffer<int, 1> good({10});
      good.allocate();
      dim d(0, 9, h.stride);
      raw_buffer bad{h.base, sizeof(int), 1, &d};
      int failures = 0;
      eval_config config;
      config.check_failed = [&](const expr&) { ++failures; };
      eval_context ctx;
      ctx.config = &config;
      const index_t result = as_input ? c.p.evaluate({&bad}, {&good}, ctx) : c.p.evaluate({&good}, {&bad}, ctx);
      EXPECT_NE(result, 0);
      EXPECT_EQ(failures, 1);
      EXPECT_EQ(c.calls, 0);
    }
  }
  // The same shapes in real memory run.
  copy_pipeline c;
  buffer<int, 1> a({10}), b({10});
  a.allocate();
  b.allocate();
  for (index_t i = 0; i < 10; ++i) a(i) = static_cast<int>(i * 3);
  ASSERT_EQ(c.p.evaluate({&a}, {&b}), 0);
  EXPECT_EQ(b(9), 27);
  EXPECT_EQ(c.calls, 1);
}

// Item 8: slicing leading dims only advances the dims pointer (and lowers the rank); a dims array
// shared with another descriptor is never written.
TEST(compat_original_suite, slicing_leading_dims_does_not_write_shared_dims) {
  int data[64] = {};
  const dim d0(0, 1, 4), d1(0, 3, 8), d2(0, 1, 32), d3(2, 2, 0);
  dim dims[] = {d0, d1, d2, d3};
  const raw_buffer whole{data, sizeof(int), 4, dims};
  auto intact = [&]() { return dims[0] == d0 && dims[1] == d1 && dims[2] == d2 && dims[3] == d3; };

  raw_buffer a = whole;
  a.slice({0, 1});
  EXPECT_TRUE(intact());
  ASSERT_EQ(a.rank, 2u);
  EXPECT_EQ(a.dims, dims + 2);
  EXPECT_EQ(a.dim(0), d2);
  EXPECT_EQ(a.base, data);

  raw_buffer b = whole;
  const std::vector<std::size_t> leading = {0, 1, 2};
  b.slice(leading);
  EXPECT_TRUE(intact());
  ASSERT_EQ(b.rank, 1u);
  EXPECT_EQ(b.dim(0), d3);

  // Leading and trailing dims together.
  raw_buffer c = whole;
  c.slice({0, 3});
  EXPECT_TRUE(intact());
  ASSERT_EQ(c.rank, 2u);
  EXPECT_EQ(c.dim(0), d1);
  EXPECT_EQ(c.dim(1), d2);

  // One at a time, as clients also do.
  raw_buffer e = whole;
  e.slice(0);
  e.slice(0);
  EXPECT_TRUE(intact());
  EXPECT_EQ(e.dims, dims + 2);
}

// Item 10: substitute_buffer with a buffer's full description (no def) reads a stride of 0 in the
// dims beyond its rank (implicit broadcasts).
TEST(compat_original_suite, substitute_buffer_beyond_the_rank) {
  node_context ctx;
  var b(ctx, "b"), x(ctx, "x");
  const std::vector<dim_expr> dims = {dim_expr(bounds(0, x), 4)};
  EXPECT_TRUE(match(substitute_buffer(buffer_stride(b, 1), b, dims), 0));
  EXPECT_TRUE(match(substitute_buffer(buffer_stride(b, 3), b, dims), 0));
  EXPECT_TRUE(match(substitute_buffer(buffer_stride(b, 0), b, dims), 4));
  EXPECT_TRUE(match(substitute_buffer(buffer_max(b, 0), b, dims), x));
}

// Item 10: substitute does not capture. Under slice_dim(b, b, ...), b names the slice, not the
// buffer the replacement means, so the replacement is not put there (the scope is left as it is).
TEST(compat_original_suite, substitute_does_not_capture_under_slice_dim) {
  node_context ctx;
  var b(ctx, "b"), c(ctx, "c"), x(ctx, "x");
  const stmt body = check::make(expr(x) < 10);
  const stmt s = slice_dim::make(b, b, 0, x, body);
  const stmt result = substitute(s, x, buffer_min(b, 1));
  const slice_dim* sliced = result.as<slice_dim>();
  ASSERT_NE(sliced, nullptr);
  // The coordinate is outside the slice's scope: it is substituted.
  EXPECT_TRUE(match(sliced->at, buffer_min(b, 1)));
  // The body is not: buffer_min(b, 1) there would read the slice's dim 1.
  EXPECT_FALSE(depends_on(sliced->body, b).any());
  EXPECT_TRUE(match(sliced->body, body));
  // A slice declaring another symbol does not stop the substitution.
  const stmt other = substitute(slice_dim::make(c, b, 0, 0, body), x, buffer_min(b, 1));
  EXPECT_TRUE(match(other, slice_dim::make(c, b, 0, 0, check::make(buffer_min(b, 1) < 10))));
}

// Item 10: match compares constant buffers by contents, not by address.
TEST(compat_original_suite, match_compares_constant_buffers_by_contents) {
  node_context ctx;
  var k(ctx, "k"), out(ctx, "out");
  const stmt body = call_stmt::make(nullptr, {k}, {out}, {}, {});
  auto make = [](int first) {
    buffer<int, 2> b({3, 2});
    b.allocate();
    for (index_t y = 0; y < 2; ++y) {
      for (index_t x = 0; x < 3; ++x) b(x, y) = first + static_cast<int>(y * 3 + x);
    }
    return raw_buffer::make_copy(b);
  };
  const raw_buffer_ptr a = make(1), same = make(1), other = make(2);
  ASSERT_NE(a.get(), same.get());
  EXPECT_TRUE(match(constant_buffer::make(k, a, body), constant_buffer::make(k, same, body)));
  EXPECT_FALSE(match(constant_buffer::make(k, a, body), constant_buffer::make(k, other, body)));
  EXPECT_TRUE(match(constant_buffer::make(k, raw_buffer::make_scalar<int>(5), body),
                    constant_buffer::make(k, raw_buffer::make_scalar<int>(5), body)));
  EXPECT_FALSE(match(constant_buffer::make(k, raw_buffer::make_scalar<int>(5), body),
                     constant_buffer::make(k, raw_buffer::make_scalar<int>(6), body)));
}

// Item 10: depends_on's fields for buffer_elem_size and for a copy's source, and is_pure of buffer
// metadata. The fields' meanings: buffer_dims is a read of any metadata field, buffer_bounds of a
// min or max, buffer_base of the base pointer, buffer_src the use as a copy's source or pad. So
// reading elem_size is buffer_dims alone, and a copy's source, which the copy implementation
// receives whole (base, strides and fold factors to address it, bounds to find its elements and
// pad the rest), is buffer_src, buffer_base, buffer_dims and buffer_bounds, like a call's input.
TEST(compat_original_suite, depends_on_fields_and_purity) {
  node_context ctx;
  var b(ctx, "b"), src(ctx, "src"), dst(ctx, "dst"), x(ctx, "x");
  depends_on_result elem_size;
  elem_size.buffer_dims = true;
  EXPECT_EQ(depends_on(buffer_elem_size(b), b), elem_size);

  const stmt copy = copy_stmt::make(nullptr, src, {expr(x)}, dst, {x}, var());
  depends_on_result source;
  source.buffer_src = true;
  source.buffer_base = true;
  source.buffer_dims = true;
  source.buffer_bounds = true;
  EXPECT_EQ(depends_on(copy, src), source);
  depends_on_result destination = source;
  destination.buffer_src = false;
  destination.buffer_dst = true;
  EXPECT_EQ(depends_on(copy, dst), destination);

  EXPECT_FALSE(is_pure(buffer_min(b, 0)));
  EXPECT_FALSE(is_pure(expr(x) + buffer_max(b, 1)));
  EXPECT_TRUE(is_pure(expr(x) + 1));
}

// Item 11: a client's operator== for depends_on_result (above) is used, without ambiguity; ours
// does not collide with it at link time.
TEST(compat_original_suite, clients_own_operators) {
  node_context ctx;
  var x(ctx, "x");
  depends_on_result value;
  value.var = true;
  client_equal_calls = 0;
  EXPECT_EQ(depends_on(expr(x) + 1, x), value);
  EXPECT_TRUE(depends_on(expr(x) + 1, x) == value);
  EXPECT_GE(client_equal_calls, 2);

  // The client's operator<< for alignments (above) is chosen in its code, and links beside ours,
  // which the library's own printing (print.cc, linked in for to_string) keeps using.
  std::stringstream s;
  s << modulus_remainder<index_t>(4, 1);
  EXPECT_EQ(s.str(), "client(4, 1)");
  std::stringstream t;
  t << modulus_remainder<int>(4, 1);
  EXPECT_EQ(t.str(), "(4, 1)");
  EXPECT_FALSE(to_string(expr(x) + 1).empty());
}

// Item 11: match(var, integer) and match(integer, var) are not ambiguous; interval<T> has the one-
// (a point) and two-argument constructors.
TEST(compat_original_suite, overloads_that_must_resolve) {
  node_context ctx;
  var x(ctx, "x");
  EXPECT_FALSE(match(x, 0));
  EXPECT_FALSE(match(0, x));
  EXPECT_FALSE(match(x, index_t{7}));
  EXPECT_FALSE(match(index_t{7}, x));
  EXPECT_TRUE(match(expr(7), 7));

  const interval<int> point(3);
  EXPECT_EQ(point.min, 3);
  EXPECT_EQ(point.max, 3);
  const interval<int> range(1, 5);
  EXPECT_EQ(range.min, 1);
  EXPECT_EQ(range.max, 5);
  const interval<index_t> half(std::nullopt, 5);
  EXPECT_FALSE(half.min);
  EXPECT_TRUE(range == interval<int>(1, 5));
  EXPECT_EQ(staircase_sum_bounds(0, 4, 4, 0, 4, -4), interval<int>(0));
}

}  // namespace
