// Hostile sizes: buffers and allocations whose address arithmetic would overflow index_t are
// refused by checks (with a message naming the buffer and dimension) instead of wrapping around,
// and nothing is read or written. Run under UBSan too: no signed overflow may happen anywhere.
#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "slinky/builder/pipeline.h"
#include "slinky/builder/simplify.h"
#include "slinky/runtime/node_finder.h"
#include "slinky/runtime/print.h"

namespace slinky {
namespace {

constexpr index_t max_index = std::numeric_limits<index_t>::max();
constexpr index_t min_index = std::numeric_limits<index_t>::min();
// The largest coordinate a buffer passed to a pipeline may have (see emit.cc).
constexpr index_t max_coordinate = max_index / 2;

// Runs a pipeline, recording the failed check's condition (printed with names), the number of
// allocations and frees, and the default message the failure would print.
struct run_result {
  index_t result = 0;
  std::string condition;
  std::string message;
  int allocations = 0;
  int frees = 0;
};

run_result run(const pipeline& p, std::vector<index_t> args, std::vector<const raw_buffer*> inputs,
               std::vector<const raw_buffer*> outputs) {
  run_result r;
  eval_config config;
  config.check_failed = [&](const expr& c) { r.condition = to_string(c, p.body.symbols.get()); };
  config.allocate = [&](var sym, raw_buffer* buf) {
    ++r.allocations;
    return default_allocate(sym, buf, 64);
  };
  config.free = [&](var sym, raw_buffer* buf, void* allocation) {
    ++r.frees;
    default_free(sym, buf, allocation);
  };
  eval_context ctx;
  ctx.config = &config;
  r.result = p.evaluate(args, inputs, outputs, ctx);
  // The default report of the same failure (it goes to stderr).
  if (r.result != 0) {
    testing::internal::CaptureStderr();
    p.evaluate(args, inputs, outputs);
    r.message = testing::internal::GetCapturedStderr();
  }
  return r;
}

// A descriptor over a few real elements, with hostile dims: if the pipeline read or wrote
// through it out of bounds, ASan would report it.
struct fake_buffer {
  int storage[16] = {};
  std::vector<dim> dims;
  raw_buffer buf;

  explicit fake_buffer(std::vector<dim> d) : dims(std::move(d)) {
    buf = raw_buffer(storage, sizeof(int), dims.size(), dims.data());
  }
};

// in -> copy -> out, in rows of 2 with a 3-wide stencil, so the pipeline has a loop, an
// intermediate, and checks on the bounds it needs.
struct stencil_pipeline {
  node_context ctx;
  buffer_expr_ptr in = buffer_expr::make(ctx, "in", 1, sizeof(int));
  buffer_expr_ptr intm = buffer_expr::make(ctx, "intm", 1, sizeof(int));
  buffer_expr_ptr out = buffer_expr::make(ctx, "out", 1, sizeof(int));
  var x{ctx, "x"};
  int calls = 0;
  func f, g;
  pipeline p;

  stencil_pipeline() {
    f = func::make(
        [this](const buffer<const int>& a, const buffer<int>& b) {
          ++calls;
          for (index_t i = b.dim(0).min(); i <= b.dim(0).max(); ++i) b(i) = a(i);
          return 0;
        },
        {{in, {point(x)}}}, {{intm, {x}}}, {.name = "f"});
    g = func::make(
        [this](const buffer<const int>& a, const buffer<int>& b) {
          ++calls;
          for (index_t i = b.dim(0).min(); i <= b.dim(0).max(); ++i) b(i) = a(i - 1) + a(i) + a(i + 1);
          return 0;
        },
        {{intm, {bounds(x - 1, x + 1)}}}, {{out, {x}}}, {.name = "g"});
    g.loops({{x, 2}});
    intm->store_in(memory_type::heap);
    p = build_pipeline(ctx, {in}, {out});
  }
};

TEST(hostile_sizes, good_buffers_work) {
  stencil_pipeline s;
  buffer<int, 1> in({12}), out({10});
  in.translate(-1);
  in.allocate();
  out.allocate();
  for (index_t i = -1; i <= 10; ++i) in(i) = i;
  run_result r = run(s.p, {}, {&in}, {&out});
  ASSERT_EQ(r.result, 0) << r.condition;
  EXPECT_EQ(out(3), 9);
  EXPECT_EQ(r.allocations, 1);
  EXPECT_EQ(r.frees, 1);
}

// Each hostile input or output fails the check `condition` (printed with names); the default
// message names the same buffer and dimension and shows the value; nothing runs.
void expect_refused(const std::vector<dim>& in_dims, const std::vector<dim>& out_dims, const std::string& condition,
                    const std::string& value) {
  stencil_pipeline s;
  fake_buffer in(in_dims);
  fake_buffer out(out_dims);
  run_result r = run(s.p, {}, {&in.buf}, {&out.buf});
  EXPECT_NE(r.result, 0);
  EXPECT_EQ(r.condition, condition);
  EXPECT_NE(r.message.find("check failed: " + condition), std::string::npos) << r.message;
  EXPECT_NE(r.message.find(value), std::string::npos) << r.message;
  EXPECT_EQ(s.calls, 0);
  EXPECT_EQ(r.allocations, 0);
  for (int i : out.storage) EXPECT_EQ(i, 0);
}

const dim small(0, 7, sizeof(int));

TEST(hostile_sizes, huge_extent) {
  // Extent 2^62 with stride 4: the offset of the last element is 2^64 - 4.
  const index_t n = index_t{1} << 62;
  const std::string span_check =
      "abs(buffer_stride(in, 0)) * (buffer_max(in, 0) - buffer_min(in, 0)) <= 4611686018427387903";
  expect_refused({dim(0, n - 1, 4)}, {small}, span_check,
                 "abs(buffer_stride(in, 0)) * (buffer_max(in, 0) - buffer_min(in, 0)) = 9223372036854775807");
  // The same with a negative stride, and for an output.
  expect_refused({dim(0, n - 1, -4)}, {small}, span_check, "= 9223372036854775807");
  expect_refused({dim(-1, 8, 4)}, {dim(0, n - 1, 4)},
                 "abs(buffer_stride(out, 0)) * (buffer_max(out, 0) - buffer_min(out, 0)) <= 4611686018427387903",
                 "= 9223372036854775807");
}

TEST(hostile_sizes, coordinates_near_the_limits) {
  // min near INT64 max: the stencil would need coordinates past it.
  expect_refused({dim(max_index - 3, max_index, 4)}, {small}, "abs(buffer_min(in, 0)) <= 4611686018427387903",
                 "abs(buffer_min(in, 0)) = 9223372036854775804");
  expect_refused({dim(-1, 8, 4)}, {dim(max_index - 3, max_index, 4)}, "abs(buffer_min(out, 0)) <= 4611686018427387903",
                 "= 9223372036854775804");
  // max - min + 1 overflows.
  expect_refused({dim(min_index, max_index, 4)}, {small}, "abs(buffer_min(in, 0)) <= 4611686018427387903",
                 "abs(buffer_min(in, 0)) = 9223372036854775807");
  expect_refused({dim(-1, max_index, 4)}, {small}, "abs(buffer_max(in, 0)) <= 4611686018427387903",
                 "abs(buffer_max(in, 0)) = 9223372036854775807");
}

TEST(hostile_sizes, fold_factors) {
  // Element i of a dim with a fold factor other than dim::unfolded is at euclidean_mod(i, fold) *
  // stride, in [0, |fold| - 1] * stride: a huge fold (of either sign) spans too many bytes.
  const std::string fold_span_check = "abs(buffer_stride(in, 0)) * select(buffer_fold_factor(in, 0) == -1, 0, "
                                      "abs(buffer_fold_factor(in, 0)) - 1) <= 4611686018427387903";
  expect_refused({dim(-1, 8, 4, index_t{1} << 62)}, {small}, fold_span_check, "= 9223372036854775807");
  expect_refused({dim(-1, 8, 4, -(index_t{1} << 62))}, {small}, fold_span_check, "= 9223372036854775807");

  // Unfolded, folded, and any other fold factor (0 or negative: a client may pass one as data,
  // the original accepts them, and they address at most |fold| elements) are fine.
  for (const dim& in_dim : {dim(-1, 10, 4), dim(-1, 10, 4, 16), dim(-1, 10, 0, 0), dim(-1, 10, 0, -7),
                            dim(-1, 10, 4, 0), dim(-1, 10, 4, -3)}) {
    stencil_pipeline s;
    int data[16] = {};
    raw_buffer in{data, sizeof(int), 1, const_cast<dim*>(&in_dim)};
    buffer<int, 1> out({8});
    out.allocate();
    run_result r = run(s.p, {}, {&in}, {&out});
    EXPECT_EQ(r.result, 0) << r.condition;
  }
}

// A descriptor whose addresses wrap around the address space: every number in it is small (no
// size check sees anything), but base is near the top of memory (or, with a negative stride, near
// 0) and the elements run past it. Nothing may be read or written through it.
raw_buffer wrapping(void* base, dim& d) { return raw_buffer{base, sizeof(int), 1, &d}; }

void* address(std::uintptr_t a) { return reinterpret_cast<void*>(a); }

TEST(hostile_sizes, address_range_wraps_around) {
  constexpr std::uintptr_t top = std::numeric_limits<std::uintptr_t>::max();
  struct hostile {
    void* base;
    dim d;
  };
  // 12 ints (48 bytes) from 16 bytes below the top; 10 ints down from address 16.
  for (const hostile& h : {hostile{address(top - 15), dim(-1, 10, 4)}, hostile{address(16), dim(-1, 10, -4)}}) {
    for (bool hostile_input : {true, false}) {
      stencil_pipeline s;
      buffer<int, 1> in({12}), out({10});
      in.translate(-1);
      in.allocate();
      out.allocate();
      dim d = h.d;
      if (!hostile_input) d = dim(0, 9, h.d.stride());
      raw_buffer bad = wrapping(h.base, d);
      eval_config config;
      int failures = 0;
      std::string condition;
      config.check_failed = [&](const expr& c) {
        ++failures;
        condition = to_string(c, s.p.body.symbols.get());
      };
      eval_context ctx;
      ctx.config = &config;
      const index_t result = hostile_input ? s.p.evaluate({&bad}, {&out}, ctx) : s.p.evaluate({&in}, {&bad}, ctx);
      EXPECT_NE(result, 0);
      EXPECT_EQ(failures, 1);
      EXPECT_EQ(condition, hostile_input ? "validate_buffer(in)" : "validate_buffer(out)");
      EXPECT_EQ(s.calls, 0);
      // The default report names the check.
      testing::internal::CaptureStderr();
      if (hostile_input) {
        EXPECT_NE(s.p.evaluate({&bad}, {&out}), 0);
      } else {
        EXPECT_NE(s.p.evaluate({&in}, {&bad}), 0);
      }
      const std::string message = testing::internal::GetCapturedStderr();
      EXPECT_NE(message.find("check failed: " + condition), std::string::npos) << message;
      EXPECT_EQ(s.calls, 0);
    }
  }
  // (good_buffers_work: the same extents at ordinary addresses pass.)
}

TEST(hostile_sizes, bounds_the_pipeline_requires) {
  // The output is addressable, but the stencil needs the input one past its max, beyond the
  // largest coordinate an input may have.
  stencil_pipeline s;
  fake_buffer in({dim(max_coordinate - 9, max_coordinate, 4)});
  fake_buffer out({dim(max_coordinate - 7, max_coordinate, 4)});
  run_result r = run(s.p, {}, {&in.buf}, {&out.buf});
  EXPECT_NE(r.result, 0);
  // (Unless the output is empty, or the region read of the input is.)
  EXPECT_EQ(r.condition, "buffer_max(out, 0) < buffer_min(out, 0) || buffer_max(out, 0) < buffer_min(out, 0) - 2 || "
                         "buffer_max(out, 0) <= buffer_max(in, 0) - 1");
  EXPECT_EQ(s.calls, 0);
  EXPECT_EQ(r.allocations, 0);
}

TEST(hostile_sizes, rank_2_spans) {
  // Each dimension spans less than 2^63 bytes, but the offsets of the last element add up to
  // more: each dimension may span at most 2^62 / rank bytes.
  node_context ctx;
  auto in = buffer_expr::make(ctx, "in", 2, sizeof(int));
  auto out = buffer_expr::make(ctx, "out", 2, sizeof(int));
  var x(ctx, "x"), y(ctx, "y");
  int calls = 0;
  func f = func::make(
      [&](const buffer<const int>&, const buffer<int>&) {
        ++calls;
        return 0;
      },
      {{in, {point(x), point(y)}}}, {{out, {x, y}}}, {.name = "f"});
  pipeline p = build_pipeline(ctx, {in}, {out});
  const index_t n = index_t{1} << 60;
  fake_buffer in_buf({dim(0, 1, 4), dim(0, 1, 4)});
  fake_buffer out_buf({dim(0, n - 1, 4), dim(0, 1, 6 * n)});
  run_result r = run(p, {}, {&in_buf.buf}, {&out_buf.buf});
  EXPECT_NE(r.result, 0);
  EXPECT_EQ(r.condition,
            "abs(buffer_stride(out, 0)) * (buffer_max(out, 0) - buffer_min(out, 0)) <= 2305843009213693951");
  EXPECT_NE(r.message.find("= 4611686018427387900"), std::string::npos) << r.message;
  EXPECT_EQ(calls, 0);
}

// An intermediate whose extent comes from a scalar argument: in rows of 8, out(x) is the sum of
// intm over [x, x + n]; intm(x) = x needs no input.
struct scalar_extent_pipeline {
  node_context ctx;
  buffer_expr_ptr intm = buffer_expr::make(ctx, "intm", 1, sizeof(int));
  buffer_expr_ptr out = buffer_expr::make(ctx, "out", 1, sizeof(int));
  var x{ctx, "x"};
  var n{ctx, "n"};
  int calls = 0;
  func f, g;
  pipeline p;

  explicit scalar_extent_pipeline(memory_type storage) {
    f = func::make(
        [this](const buffer<int>& b) {
          ++calls;
          for (index_t i = b.dim(0).min(); i <= b.dim(0).max(); ++i) b(i) = static_cast<int>(i);
          return 0;
        },
        {}, {{intm, {x}}}, {.name = "f"});
    g = func::make(
        [this](const buffer<const int>& a, const buffer<int>& b) {
          ++calls;
          for (index_t i = b.dim(0).min(); i <= b.dim(0).max(); ++i) {
            int sum = 0;
            for (index_t j = a.dim(0).min(); j <= a.dim(0).max(); ++j) sum += a(j);
            b(i) = sum;
          }
          return 0;
        },
        {{intm, {bounds(x, x + n)}}}, {{out, {x}}}, {.name = "g"});
    f.compute_root();
    intm->store_in(storage);
    p = build_pipeline(ctx, {n}, {}, {out}, {}, build_options{});
  }
};

TEST(hostile_sizes, allocation_size_from_scalar_overflows) {
  for (memory_type storage : {memory_type::heap, memory_type::automatic, memory_type::stack}) {
    // A sane size works.
    scalar_extent_pipeline s(storage);
    buffer<int, 1> out({8});
    out.allocate();
    run_result r = run(s.p, {3}, {}, {&out});
    ASSERT_EQ(r.result, 0) << r.condition;
    // Each output element is the sum of the whole intm, [0, 7 + 3].
    EXPECT_EQ(out(2), 55);
    // (2^62 + 8) * 4 bytes wraps around to 32.
    s.calls = 0;
    for (index_t n : {index_t{1} << 62, max_index / 4, max_index - 100, max_index}) {
      r = run(s.p, {n}, {}, {&out});
      EXPECT_NE(r.result, 0);
      EXPECT_EQ(r.condition, "buffer_size_bytes(intm) < 9223372036854775807");
      EXPECT_NE(r.message.find("buffer_size_bytes(intm) = 9223372036854775807"), std::string::npos) << r.message;
      EXPECT_EQ(r.allocations, 0);
      EXPECT_EQ(r.frees, 0);
      EXPECT_EQ(s.calls, 0);
    }
  }
}

TEST(hostile_sizes, allocation_size_from_input_overflows) {
  // A broadcast input (stride 0) of a huge extent is addressable, but an intermediate holding a
  // copy of it is not.
  node_context ctx;
  auto in = buffer_expr::make(ctx, "in", 2, sizeof(int));
  auto intm = buffer_expr::make(ctx, "intm", 2, sizeof(int));
  auto out = buffer_expr::make(ctx, "out", 1, sizeof(int));
  var x(ctx, "x"), y(ctx, "y");
  int calls = 0;
  auto count = [&](const buffer<const int>&, const buffer<int>&) {
    ++calls;
    return 0;
  };
  func f = func::make(count, {{in, {point(x), point(y)}}}, {{intm, {x, y}}}, {.name = "copy"});
  func g = func::make(count, {{intm, {point(x), in->dim(1).bounds}}}, {{out, {x}}}, {.name = "reduce"});
  pipeline p = build_pipeline(ctx, {in}, {out});

  int element = 1;
  std::vector<dim> dims = {dim(0, 7, 0), dim(0, (index_t{1} << 60) - 1, 0)};
  raw_buffer in_buf(&element, sizeof(int), 2, dims.data());
  buffer<int, 1> out_buf({8});
  out_buf.allocate();
  run_result r = run(p, {}, {&in_buf}, {&out_buf});
  EXPECT_NE(r.result, 0);
  EXPECT_EQ(r.condition, "buffer_size_bytes(intm) < 9223372036854775807");
  EXPECT_EQ(r.allocations, 0);
  EXPECT_EQ(calls, 0);
}

TEST(hostile_sizes, allocation_that_fails) {
  // An allocate hook that cannot allocate (out of memory) fails a check too.
  stencil_pipeline s;
  buffer<int, 1> in({12}), out({10});
  in.translate(-1);
  in.allocate();
  out.allocate();
  eval_config config;
  std::string condition;
  config.check_failed = [&](const expr& c) { condition = to_string(c, s.p.body.symbols.get()); };
  int frees = 0;
  config.allocate = [](var, raw_buffer* buf) -> void* {
    buf->base = nullptr;
    return nullptr;
  };
  config.free = [&](var, raw_buffer*, void*) { ++frees; };
  eval_context ctx;
  ctx.config = &config;
  EXPECT_NE(s.p.evaluate({&in}, {&out}, ctx), 0);
  EXPECT_EQ(condition, "buffer_at(intm) != 0");
  EXPECT_EQ(frees, 0);
  EXPECT_EQ(s.calls, 0);
}

// The size checks are not simplified when the pipeline is built (no fact could prove them): they
// are written as the simplifier would write them, so programs print as if they were, for inputs
// and outputs of rank 1 to 3.
TEST(hostile_sizes, size_checks_are_in_simplified_form) {
  for (std::size_t rank = 1; rank <= 3; ++rank) {
    node_context ctx;
    auto in = buffer_expr::make(ctx, "in", rank, sizeof(int));
    auto out = buffer_expr::make(ctx, "out", rank, sizeof(int));
    std::vector<var> vars;
    std::vector<interval_expr> reads;
    for (std::size_t d = 0; d < rank; ++d) {
      std::string name = "x";
      name += std::to_string(d);
      vars.emplace_back(ctx, name);
      reads.push_back(point(vars.back()));
    }
    func f = func::make([](const raw_buffer&, const raw_buffer&) -> index_t { return 0; }, {{in, reads}}, {{out, vars}},
                        {.name = "f"});
    pipeline p = build_pipeline(ctx, {in}, {out});
    int size_checks = 0;
    int address_checks = 0;
    any_node(p.body, [&](const check* c) {
      // One check per buffer that its addresses do not wrap around (see address_range_wraps_around),
      // also left as it is.
      if (const call* v = c->condition.as<call>(); v && v->intrinsic == intrinsic::validate_buffer) {
        ++address_checks;
        const stmt s(c);
        EXPECT_EQ(to_string(simplify(s), &ctx), to_string(s, &ctx));
      }
      const bool is_size_check = any_node(c->condition, [](const call* op) { return op->intrinsic == intrinsic::abs; });
      if (is_size_check) {
        ++size_checks;
        const stmt s(c);
        EXPECT_EQ(to_string(simplify(s), &ctx), to_string(s, &ctx));
      }
      return false;
    });
    EXPECT_EQ(size_checks, static_cast<int>(8 * rank));
    EXPECT_EQ(address_checks, 2);
  }
}

}  // namespace
}  // namespace slinky
