// Trailing broadcast dims of the buffers statements make: allocate, make_buffer and transpose drop
// them (the rank shrinks), and copies into such buffers still see those dims as broadcasts.
// Each program runs in the tree interpreter and in the executable form.
#include <gtest/gtest.h>

#include <cstdlib>
#include <vector>

#include "slinky/runtime/buffer.h"
#include "slinky/runtime/evaluate.h"
#include "slinky/runtime/expr.h"
#include "slinky/runtime/pipeline.h"
#include "slinky/runtime/stmt.h"

namespace slinky {
namespace {

node_context ctx;
var in(ctx, "in");
var b(ctx, "b");
var c(ctx, "c");
var x(ctx, "x");
var y(ctx, "y");

// The dims of the buffers `record` is called with.
struct recorder {
  std::vector<std::vector<dim>> seen;
  stmt call(var buf) {
    return call_stmt::make(
        [this](const call_stmt* op, eval_context& e) -> index_t {
          const raw_buffer* r = e.lookup_buffer(op->outputs[0]);
          seen.emplace_back(r->dims, r->dims + r->rank);
          return 0;
        },
        {}, {buf}, {}, {});
  }
};

// Runs s with `input` bound to `in`, in the interpreter and then in the executable form (a runtime
// pipeline), each with the given config. Returns both results.
std::vector<index_t> run_both(const stmt& s, const raw_buffer* input, const eval_config& config) {
  std::vector<index_t> results;
  eval_context interpreted;
  interpreted.config = &config;
  interpreted[in] = reinterpret_cast<index_t>(input);
  results.push_back(evaluate(s, interpreted));
  pipeline p;
  p.inputs = {in};
  p.body = s;
  eval_context compiled;
  compiled.config = &config;
  const raw_buffer* inputs[] = {input};
  results.push_back(p.evaluate(inputs, {}, compiled));
  return results;
}

const dim_expr broadcast = dim::broadcast();
const dim_expr row{bounds(0, 9), expr(), expr()};

TEST(trailing_broadcasts, allocate_drops_them) {
  eval_config config;
  config.auto_stack_threshold = 0;
  std::vector<std::size_t> sizes;
  config.allocate = [&](var, raw_buffer* r) {
    sizes.push_back(r->size_bytes());
    return r->allocate();
  };
  buffer<int, 1> unused({1});
  recorder r;
  const stmt body = r.call(b);
  const std::vector<std::vector<dim_expr>> cases = {
      {row, broadcast, broadcast},
      {row, broadcast, row},
      {broadcast},
      // A stride-0 dim carrying a fold factor (data a callback reads) is not dropped, nor is one
      // declared unfolded (a reduction's dummy dim of extent 1).
      {row, dim_expr(dim(0, 0, 0, 7))},
      {row, dim_expr(dim(0, 0, 0, dim::unfolded))},
      // Nor is a stride-0 dim of more than one coordinate.
      {row, dim_expr(dim(0, 3, 0))},
  };
  for (const std::vector<dim_expr>& dims : cases) {
    EXPECT_EQ(run_both(allocate::make(b, memory_type::heap, 4, dims, body), &unused, config),
              (std::vector<index_t>{0, 0}));
  }
  ASSERT_EQ(r.seen.size(), 2 * cases.size());
  const std::vector<std::size_t> ranks = {1, 3, 0, 2, 2, 2};
  for (std::size_t k = 0; k < r.seen.size(); ++k) EXPECT_EQ(r.seen[k].size(), ranks[k / 2]) << k;
  EXPECT_EQ(r.seen[0][0], dim(0, 9, 4));
  EXPECT_EQ(r.seen[2][1], dim(0, 0, 0, 0));
  EXPECT_EQ(r.seen[2][2], dim(0, 9, 40));
  EXPECT_EQ(r.seen[6][1], dim(0, 0, 0, 7));
  // The memory is that of the remaining dims.
  EXPECT_EQ(r.seen[8][1], dim(0, 0, 0, dim::unfolded));
  EXPECT_EQ(sizes, (std::vector<std::size_t>{40, 40, 400, 400, 4, 4, 40, 40, 40, 40, 40, 40}));
}

TEST(trailing_broadcasts, make_buffer_and_transpose_drop_them) {
  buffer<int, 2> src({4, 3});
  src.allocate();
  eval_config config;
  recorder r;
  const stmt body = r.call(c);
  const dim_expr d0{bounds(0, 3), 4, expr()};
  const std::vector<stmt> programs = {
      make_buffer::make(c, buffer_at(in), 4, {d0, broadcast}, body),
      make_buffer::make(c, buffer_at(in), 4, {d0, broadcast, d0}, body),
      // Indices at or beyond the source's rank are broadcasts: dropped when trailing.
      transpose::make(c, in, {1, 0, 2, 5}, body),
      transpose::make(c, in, {0, 2, 1}, body),
      transpose::make_truncate(c, in, 4, body),
      transpose::make(c, in, {transpose::new_dim}, body),
  };
  for (const stmt& s : programs) EXPECT_EQ(run_both(s, &src, config), (std::vector<index_t>{0, 0}));
  const std::vector<std::size_t> ranks = {1, 3, 2, 3, 2, 0};
  ASSERT_EQ(r.seen.size(), 2 * ranks.size());
  for (std::size_t k = 0; k < r.seen.size(); ++k) EXPECT_EQ(r.seen[k].size(), ranks[k / 2]) << k;
  EXPECT_EQ(r.seen[4][0], src.dim(1));
  EXPECT_EQ(r.seen[4][1], src.dim(0));
  EXPECT_EQ(r.seen[6][1], dim::broadcast());
}

TEST(trailing_broadcasts, transpose_drops_broadcasts_of_the_source) {
  // The source's own trailing broadcast (a buffer made by a client) goes too.
  buffer<int, 3> src({4, 3, 1});
  src.mutable_dim(2) = dim::broadcast();
  src.allocate();
  eval_config config;
  recorder r;
  EXPECT_EQ(run_both(transpose::make(c, in, {0, 1, 2}, r.call(c)), &src, config), (std::vector<index_t>{0, 0}));
  ASSERT_EQ(r.seen.size(), 2);
  EXPECT_EQ(r.seen[0].size(), 2);
  EXPECT_EQ(r.seen[1].size(), 2);
}

TEST(trailing_broadcasts, copy_into_a_buffer_that_lost_them) {
  // b is allocated as [0, 9] x broadcast: rank 1. A copy indexed by (x, y) writes it (y only
  // takes 0 there) and a second copy reads it back into a rank-2 clone of the input's shape.
  buffer<int, 2> src({10, 3});
  src.allocate();
  for (index_t j = 0; j < 3; ++j) {
    for (index_t i = 0; i < 10; ++i) src(i, j) = static_cast<int>(i + 100 * j);
  }
  buffer<int, 2> dst({10, 3});
  dst.allocate();
  const stmt fill = copy_stmt::make(nullptr, in, {x, 2}, b, {x, y}, var());
  std::vector<int> seen;
  const stmt read = call_stmt::make(
      [&](const call_stmt* op, eval_context& e) -> index_t {
        const raw_buffer* r = e.lookup_buffer(op->inputs[0]);
        EXPECT_EQ(r->rank, 1);
        for (index_t i = 0; i < 10; ++i) seen.push_back(*static_cast<const int*>(r->address_at(i)));
        return 0;
      },
      {b}, {}, {}, {});
  const stmt program = allocate::make(b, memory_type::heap, 4, {row, broadcast}, block::make({fill, read}));
  eval_config config;
  EXPECT_EQ(run_both(program, &src, config), (std::vector<index_t>{0, 0}));
  ASSERT_EQ(seen.size(), 20);
  for (index_t i = 0; i < 20; ++i) EXPECT_EQ(seen[i], i % 10 + 200);

  // A destination of higher rank than the copy's dims still fails the rank check.
  eval_config failing;
  int failures = 0;
  failing.check_failed = [&](const expr&) { ++failures; };
  const stmt wrong = copy_stmt::make(nullptr, in, {x, 2}, b, {x}, var());
  const stmt allocated = allocate::make(b, memory_type::heap, 4, {row, row}, wrong);
  for (index_t result : run_both(allocated, &src, failing)) EXPECT_NE(result, 0);
  EXPECT_EQ(failures, 2);
}

}  // namespace
}  // namespace slinky
