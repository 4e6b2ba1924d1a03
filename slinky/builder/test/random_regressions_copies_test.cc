// Bugs found by the random pipeline tester with its copy kinds and schedule features (padded
// copies, concatenations, stacks, flips, reshapes, folds, constants), each shrunk to a
// small graph and schedule, with what went wrong and how it was fixed. A test of a bug not fixed
// yet would be DISABLED_ (run them with --gtest_also_run_disabled_tests).
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "random_pipeline/build.h"
#include "random_pipeline/regression_check.h"
#include "slinky/base/thread_pool.h"

namespace slinky {
namespace {

// Bug C1 (fixed; found with seed 1, case 1783, reshapes_up on; shrunk, the reshape became a func
// reading t3 at y * 5 + x). out4 is [5, 5] x [0, 0] x [0, 0]. t1 (stored at the root) is read by
// f1 at a window fixed in f3's loop over y ([y.f2, y.f2 + 1], from f2's loop) and by f2 at x,
// which moves by 5 with f3's y: its window over f3's loop is the hull of a fixed and a moving part.
// The builder folds t1 by 5 (the allocation is [0, 5] with fold factor 5), but in the warm-up
// iteration y.f2 = -1 of f2's loop, f0 is asked to compute the crop [0, 5] of t1 in one call:
// t1(5) lands on t1(0)'s slot, and f1 then reads t1(5)'s value as t1(0) for t2(5, 0), so
// out4(5, 0, 0) is wrong. The fold factor is one less than the hull's extent (6). Fixed with bug 16
// of random_regressions_test.cc: fold factors take the window over inner loops including their
// warm-up iterations.
TEST(random_regressions, fold_of_hull_window_moving_by_a_reshape_stride) {
  // mismatch: output out4 at (5, 0, 0) expected 2073142405, got -1799317947
  random_test::monitor m;
  m.allowed = {{}, {{0, 5}}, {{5, 5}, {0, 1}}, {{5, 5}, {0, 0}}, {{5, 5}, {0, 0}, {0, 0}}};
  node_context ctx;
  var x(ctx, "x"), y(ctx, "y"), z(ctx, "z");
  auto in0 = buffer_expr::make(ctx, "in0", 2, 4);
  auto t1 = buffer_expr::make(ctx, "t1", 1, 4);
  auto t2 = buffer_expr::make(ctx, "t2", 2, 4);
  auto t3 = buffer_expr::make(ctx, "t3", 2, 4);
  auto out4 = buffer_expr::make(ctx, "out4", 3, 4);
  func f0(random_test::kernel({.stage = 0, .inputs = {{{.var = 0}, {.var = -1}}}, .outputs = {1}}, &m),
          {{in0, {point(x), point(0)}}}, {{t1, {x}}}, {}, {.name = "f0"});
  func f1(random_test::kernel({.stage = 1, .inputs = {{{.var = 1}}}, .outputs = {2}}, &m), {{t1, {point(y)}}},
          {{t2, {x, y}}}, {}, {.name = "f1"});
  func f2(random_test::kernel({.stage = 2, .inputs = {{{.var = 0}, {.var = 1, .hi = 1}}, {{.var = 0}}}, .outputs = {3}},
                              &m),
          {{t2, {point(x), bounds(y, y + 1)}}, {t1, {point(x)}}}, {{t3, {x, y}}}, {}, {.name = "f2"});
  func f3(
      random_test::kernel({.stage = 3, .inputs = {{{.var = 0, .var2 = 1, .mul2 = 5}, {.var = 2}}}, .outputs = {4}}, &m),
      {{t3, {point(y * 5 + x), point(z)}}}, {{out4, {x, y, z}}}, {}, {.name = "f3"});
  pipeline unscheduled = build_pipeline(ctx, {in0}, {out4});
  f2.loops({{y, 1}});
  f3.loops({{y, 1}});
  build_options options;
  pipeline scheduled = build_pipeline(ctx, {in0}, {out4}, options);
  random_test::expect_same(unscheduled, scheduled,
                           {.inputs = {{.bounds = {{0, 5}, {0, 0}}, .seed = 10627921868803421944ull}},
                            .outputs = {{.bounds = {{5, 5}, {0, 0}, {0, 0}}}},
                            .monitor = &m});
}

// Bug C2 (fixed; found with seed 1, case 30, padded_copies on). f1 copies t1 into t3 with the pad
// c2 outside x <= 8 (input_crop); f2 reads t3 over [x - 3] and [x, x + 5], so for out4 = [8, 8]
// t3 is [5, 13] and t1 [5, 8]. In f2's loop (step 8, warm-up iteration x = 0 first) t3 is folded
// by 9 and t1 by 4; the warm-up iteration copies t1 [5, 8] (slots 1, 2, 3, 0: it wraps at 8) into
// t3 [5, 12] (slots 5..8, 0..3: it wraps at 9), padding [9, 12]. out4 is wrong. With either fold
// made large (t1 or t3 ->dim(0).fold_factor = 100) it is right, and with a plain copy instead of
// the padded one too, so the runtime's copy (copy_runner, now copy.cc) mishandles a padded copy
// whose source and destination both wrap around their folds inside the copied range (where it
// splits the pieces at the folds and the edge of the padding). While shrinking, a variant of this
// case also corrupted the heap (malloc_consolidate(): invalid chunk size): a write out of bounds.
// Seed 2, case 286 is the same (a transposing padded copy of 2-byte elements, folds of extent 2
// that wrap: right with either fold set to 4). The copy runner split the source part of a box at
// the source's folds, then wrote the padding of the whole box through one view, across the
// destination's fold: out of bounds. It now splits at the destination's folds first
// (evaluate_test's copy_stmt_padded_between_folded_buffers is the same at the runtime's level).
TEST(random_regressions, padded_copy_between_two_folded_buffers) {
  // mismatch: output out4 at (8, 0) expected -126692594, got 233038816
  random_test::monitor m;
  m.allowed = {{}, {{5, 8}}, {}, {{5, 13}}, {{8, 8}, {0, 0}}};
  node_context ctx;
  var x(ctx, "x"), y(ctx, "y");
  auto in0 = buffer_expr::make(ctx, "in0", 2, 4);
  auto t1 = buffer_expr::make(ctx, "t1", 1, 4);
  auto c2 = buffer_expr::make_scalar<std::int32_t>(ctx, "c2", 411355329);
  auto t3 = buffer_expr::make(ctx, "t3", 1, 4);
  auto out4 = buffer_expr::make(ctx, "out4", 2, 4);
  func f0(random_test::kernel({.stage = 0, .inputs = {{{.var = 0}, {.var = -1}}}, .outputs = {1}}, &m),
          {{in0, {point(x), point(0)}}}, {{t1, {x}}}, {}, {.name = "f0"});
  func f1 = func::make_copy({.buffer = t1, .bounds = {point(x)}, .input_crop = {interval_expr(expr(), 8)}}, {t3, {x}},
                            {c2, {}});
  func f2(random_test::kernel(
              {.stage = 2, .inputs = {{{.var = 0, .hi = 5}}, {{.var = 0, .lo = -3, .hi = -3}}}, .outputs = {4}}, &m),
          {{t3, {bounds(x, x + 5)}}, {t3, {point(x - 3)}}}, {{out4, {x, y}}}, {}, {.name = "f2"});
  pipeline unscheduled = build_pipeline(ctx, {in0}, {out4});
  f1.loops({{x, 8}});
  f2.loops({{x, 8}});
  t3->store_in(memory_type::stack);
  build_options options;
  pipeline scheduled = build_pipeline(ctx, {in0}, {out4}, options);
  random_test::expect_same(unscheduled, scheduled,
                           {.inputs = {{.bounds = {{0, 8}, {0, 0}}, .seed = 11368831756179503113ull}},
                            .outputs = {{.bounds = {{8, 8}, {0, 0}}}},
                            .monitor = &m});
}

// Bug C3 (fixed; found with seed 1, case 30, folds on). t1 has a user fold factor (26, larger than
// its extent 2, so legal). f1 copies t1 to t2 broadcasting over y (t2(x, y, z) = t1(x, z)), and
// the aliaser makes t2 a view of t1 (aliasing from the source) although t1 is folded: the view
// addresses t1 with plain strides, so t1(-1, ...) (slot 25 of the fold) is read at offset -1 of
// slot 0, outside the data. The unscheduled pipeline already gives wrong values of out3; with
// build_options::no_alias_buffers they are right. The rule "S is ... an unfolded intermediate"
// (docs/copies.md) checked the folds the builder chooses, not one the client declared on S's
// dim_expr; it now checks both.
TEST(random_regressions, copy_aliased_to_a_source_with_a_user_fold) {
  for (bool no_alias : {true, false}) {
    random_test::monitor m;
    m.allowed = {{}, {{-1, 0}, {0, 0}}, {{-1, 0}, {0, 0}, {0, 0}}, {{0, 0}, {0, 0}, {-1, 0}}};
    node_context ctx;
    var x(ctx, "x"), y(ctx, "y"), z(ctx, "z");
    auto in0 = buffer_expr::make(ctx, "in0", 2, 4);
    auto t1 = buffer_expr::make(ctx, "t1", 2, 4);
    t1->dim(0).fold_factor = 26;
    auto t2 = buffer_expr::make(ctx, "t2", 3, 4);
    auto out3 = buffer_expr::make(ctx, "out3", 3, 4);
    func f0(random_test::kernel({.stage = 0, .inputs = {{{.var = 0}, {.var = 1}}}, .outputs = {1}}, &m),
            {{in0, {point(x), point(y)}}}, {{t1, {x, y}}}, {}, {.name = "f0"});
    func f1 = func::make_copy({t1, {point(x), point(z)}}, {t2, {x, y, z}});
    func f2(random_test::kernel({.stage = 2, .inputs = {{{.var = 2}, {.var = 1}, {.var = 0}}}, .outputs = {3}}, &m),
            {{t2, {point(z), point(y), point(x)}}}, {{out3, {x, y, z}}}, {}, {.name = "f2"});
    build_options options;
    options.no_alias_buffers = no_alias;
    pipeline p = build_pipeline(ctx, {in0}, {out3}, options);
    random_test::host_buffer in0_buf(4, {{-1, 0}, {0, 0}});
    random_test::fill(in0_buf, 3304079287849856920ull);
    random_test::host_buffer out3_buf(4, {{0, 0}, {0, 0}, {-1, 0}});
    random_test::eval_hooks hooks;
    ASSERT_EQ(p.evaluate({&in0_buf.raw()}, {&out3_buf.raw()}, hooks.context), 0);
    EXPECT_EQ(hooks.check() + m.failure(), "");
    // The reference's values, dim 0 fastest.
    EXPECT_TRUE(random_test::equal_values(out3_buf, {484803739, 2049836070})) << "no_alias_buffers " << no_alias;
  }
}

// Bug C4 (fixed; found with seed 9, case 919, all default features on; the shrunk case uses none of
// the new ones). f0 (variables x, y, z) up-samples in0 in z (z / 3); f1 reads t1 at (x, 0, y), so
// f0's z comes from f1's y, and f0's own y is the constant row 0. f0 is computed in f1's loop over
// y, and the pipeline's check of in0's bounds requires in0 up to 0 in dim 2 (0 <=
// buffer_max(in0, 2)), although only (-8) / 3 = -3 is read: the bounds of f0's z, [y, y] in the
// loop, are taken with f0's own y ([0, 0]) for the loop's y. With distinct names for f0's
// variables (x0, y0, z0) the check passes. Bug 5 (fixed) was the same name collision in the
// loops; this one is in the required bounds of inputs. Fixed with
// loop_variable_captured_by_another_funcs_variable of random_regressions_test.cc: f1's loop binds
// a new symbol, since f0 has a variable y too.
TEST(random_regressions, input_bounds_with_a_loop_variable_shadowing_a_func_variable) {
  random_test::monitor m;
  m.allowed = {{}, {{0, 0}, {0, 0}, {-8, -8}}, {{0, 0}, {-8, -8}}};
  node_context ctx;
  var x(ctx, "x"), y(ctx, "y"), z(ctx, "z");
  auto in0 = buffer_expr::make(ctx, "in0", 3, 4);
  auto t1 = buffer_expr::make(ctx, "t1", 3, 4);
  auto out2 = buffer_expr::make(ctx, "out2", 2, 4);
  func f0(
      random_test::kernel({.stage = 0, .inputs = {{{.var = 0}, {.var = 1}, {.var = 2, .div = 3}}}, .outputs = {1}}, &m),
      {{in0, {point(x), point(y), point(z / 3)}}}, {{t1, {x, y, z}}}, {}, {.name = "f0"});
  func f1(random_test::kernel({.stage = 1, .inputs = {{{.var = 0}, {.var = -1}, {.var = 1}}}, .outputs = {2}}, &m),
          {{t1, {point(x), point(0), point(y)}}}, {{out2, {x, y}}}, {}, {.name = "f1"});
  pipeline unscheduled = build_pipeline(ctx, {in0}, {out2});
  f1.loops({{y, 1}});
  pipeline scheduled = build_pipeline(ctx, {in0}, {out2});
  random_test::expect_same(unscheduled, scheduled,
                           {.inputs = {{.bounds = {{0, 0}, {0, 0}, {-3, -2}}, .seed = 10750087693644716623ull}},
                            .outputs = {{.bounds = {{0, 0}, {-8, -8}}}},
                            .monitor = &m});
}

// Found by a long batch of the tester (seed 2, case 5761, default features; not an auto-mode case;
// fixed). f0 broadcasts the constant c0 into t1 (t1(x, y) = c0(x)); f1 copies t1 transposed into
// t3 (t3(x, y) = t1(y, x)) with a pad (c2) where x < 2 (input_crop of t1's dim 1); t3 has a user
// fold of 17 in dim 0 (its region is [1, 2] x [0, 0]); f2 reads t3 pointwise into t4 and out5.
// out5(1, 0) reads the pad (t1(0, 1) is outside the crop), but got c0's value, as out5(2, 0).
// The user fold only kept t1 from being a view of t3 (a destination with a declared layout);
// t1 was then made a view of c0 (the broadcast removed), with stride 0 in dim 1. A stride-0 dim
// contains every coordinate, so the padded copy's crop of t1 to [2, ...] in dim 1 removed
// nothing and the copy read t1 where it should pad. Now a copy's destination is not a view of
// its source when a consumer reads it through an input_crop bounding a dimension in which the
// view may have stride 0 (alias_test.cc, broadcast_read_through_a_crop and
// copy_of_an_input_read_through_a_crop).
TEST(random_regressions, padded_transposing_copy_into_a_user_folded_buffer) {
  for (bool no_alias : {false, true}) {
    random_test::monitor m;
    m.allowed = {{}, {{0, 0}, {2, 2}}, {}, {{1, 2}, {0, 0}}, {{1, 2}, {0, 0}}, {{1, 2}, {0, 0}}};
    node_context ctx;
    var x(ctx, "x"), y(ctx, "y");
    random_test::host_buffer c0_data(4, {{0, 0}});
    random_test::fill(c0_data, 11870058654847316542ull);
    auto c0 = buffer_expr::make_constant(ctx, "c0", raw_buffer::make_copy(c0_data.raw()));
    auto t1 = buffer_expr::make(ctx, "t1", 2, 4);
    auto c2 = buffer_expr::make_scalar<std::int32_t>(ctx, "c2", 834720001);
    auto t3 = buffer_expr::make(ctx, "t3", 2, 4);
    t3->dim(0).fold_factor = 17;
    auto t4 = buffer_expr::make(ctx, "t4", 2, 4);
    auto out5 = buffer_expr::make(ctx, "out5", 2, 4);
    func f0 = func::make_copy({c0, {point(x)}}, {t1, {x, y}});
    func f1 = func::make_copy(
        {.buffer = t1, .bounds = {point(y), point(x)}, .input_crop = {interval_expr(), interval_expr(2, expr())}},
        {t3, {x, y}}, {c2, {}});
    func f2(random_test::kernel({.stage = 2, .inputs = {{{.var = 0}, {.var = 1}}}, .outputs = {4, 5}}, &m),
            {{t3, {point(x), point(y)}}}, {{t4, {x, y}}, {out5, {x, y}}}, {}, {.name = "f2"});
    build_options options;
    options.no_alias_buffers = no_alias;
    pipeline p = build_pipeline(ctx, {}, {out5}, options);
    random_test::host_buffer out5_buf(4, {{1, 2}, {0, 0}});
    random_test::eval_hooks hooks;
    ASSERT_EQ(p.evaluate({}, {&out5_buf.raw()}, hooks.context), 0);
    EXPECT_EQ(hooks.check() + m.failure(), "");
    // The reference's values, dim 0 fastest.
    EXPECT_TRUE(random_test::equal_values(out5_buf, {-386979943, 655208390})) << "no_alias_buffers " << no_alias;
  }
}

// Found by a long batch of the tester (seed 4, case 9657, default features; the unscheduled
// pipeline of an auto-mode case with auto_only): the unscheduled pipeline crashed (a write out of
// bounds in f0). f0 has two outputs, t1 and t2; t3 is make_stack of t2 alone (stack dim 0); f2
// reads t3 at the constant 6 of dim 1 into out4, which is empty ([0, -1]); f3 reads t1 into out5.
// t2 was a view of t3 (the alias pass), but f0 writes t2 over the region out5 needs of t1, and
// t3, sized by the empty out4, holds none of it. Now a copy's input made by a func with several
// outputs is never a view of the copy's destination.
TEST(random_regressions, stack_of_a_multi_output_func_into_an_empty_output) {
  random_test::monitor m;
  m.allowed = {{}, {{6, 6}}, {{6, 6}}, {{0, -1}, {6, 6}}, {{0, -1}}, {{7, 7}, {0, 0}}};
  node_context ctx;
  var x(ctx, "x"), y(ctx, "y");
  auto in0 = buffer_expr::make(ctx, "in0", 2, 4);
  auto t1 = buffer_expr::make(ctx, "t1", 1, 4);
  auto t2 = buffer_expr::make(ctx, "t2", 1, 2);
  auto t3 = buffer_expr::make(ctx, "t3", 2, 2);
  auto out4 = buffer_expr::make(ctx, "out4", 1, 4);
  auto out5 = buffer_expr::make(ctx, "out5", 2, 4);
  func f0(random_test::kernel({.stage = 0, .inputs = {{{.var = -1}, {.var = 0}}}, .outputs = {1, 2}}, &m),
          {{in0, {point(0), point(x)}}}, {{t1, {x}}, {t2, {x}}}, {}, {.name = "f0"});
  func f1 = func::make_stack({t2}, {t3, {x, y}}, 0);
  func f2(
      random_test::kernel({.stage = 2, .inputs = {{{.var = 0}, {.var = -1, .lo = 6, .hi = 6}}}, .outputs = {4}}, &m),
      {{t3, {point(x), point(6)}}}, {{out4, {x}}}, {}, {.name = "f2"});
  func f3(random_test::kernel({.stage = 3, .inputs = {{{.var = 0, .lo = -1, .hi = -1}}}, .outputs = {5}}, &m),
          {{t1, {point(x - 1)}}}, {{out5, {x, y}}}, {}, {.name = "f3"});
  pipeline unscheduled = build_pipeline(ctx, {in0}, {out4, out5});
  build_options options;
  pipeline scheduled = build_pipeline(ctx, {in0}, {out4, out5}, options);
  random_test::expect_same(unscheduled, scheduled,
                           {.inputs = {{.bounds = {{0, 0}, {0, 6}}, .seed = 10248998657515306243ull}},
                            .outputs = {{.bounds = {{0, -1}}}, {.bounds = {{7, 7}, {0, 0}}}},
                            .monitor = &m});
}

// The counts the tester checks with view_copies and radix_reshapes (docs/random_testing.md, oracle
// items 9 and 10), in the form it prints them: a stencil copy of an intermediate
// (t1(x * 2 + dx)) and a broadcast of one (t1(x) over y) are views of t1, so the unscheduled
// pipeline allocates neither destination and calls neither copy; a reshape of mixed radix
// (t4, 8 x 4, read as t6, 6 x 5, by the digits of x + 6 * y) between dense intermediates keeps
// the flat order, so it is one run contiguous in both: at most one call (none if it is a view).
TEST(random_regressions, view_and_reshape_counts_of_intermediates) {
  random_test::monitor m;
  m.allowed.resize(10);
  node_context ctx;
  var x(ctx, "x"), y(ctx, "y");
  auto in0 = buffer_expr::make(ctx, "in0", 1, 4);
  auto t1 = buffer_expr::make(ctx, "t1", 1, 4);
  auto t2 = buffer_expr::make(ctx, "t2", 2, 4);
  auto t3 = buffer_expr::make(ctx, "t3", 2, 4);
  auto t4 = buffer_expr::make(ctx, "t4", 2, 4);
  auto out5 = buffer_expr::make(ctx, "out5", 2, 4);
  auto t6 = buffer_expr::make(ctx, "t6", 2, 4);
  auto out7 = buffer_expr::make(ctx, "out7", 2, 4);
  func f0(random_test::kernel({.stage = 0, .inputs = {{{.var = 0}}}, .outputs = {1}}, &m), {{in0, {point(x)}}},
          {{t1, {x}}}, {}, {.name = "f0"});
  func f1 = func::make_copy({t1, {point(y * 1 + x * 2)}}, {t2, {x, y}}, random_test::counted_copy(&m, 1));
  func f2 = func::make_copy({t1, {point(x)}}, {t3, {x, y}}, random_test::counted_copy(&m, 2));
  func f3(random_test::kernel({.stage = 3, .inputs = {{{.var = 0}}}, .outputs = {4}}, &m), {{in0, {point(x)}}},
          {{t4, {x, y}}}, {}, {.name = "f3"});
  func f4(random_test::kernel(
              {.stage = 4, .inputs = {{{.var = 0}, {.var = 1}}, {{.var = 0}, {.var = 1}}}, .outputs = {5}}, &m),
          {{t2, {point(x), point(y)}}, {t3, {point(x), point(y)}}}, {{out5, {x, y}}}, {}, {.name = "f4"});
  func f5 = func::make_copy({t4, {point((x + y * 6) % 8), point((x + y * 6) / 8)}}, {t6, {x, y}},
                            random_test::counted_copy(&m, 5));
  func f6(random_test::kernel({.stage = 6, .inputs = {{{.var = 0}, {.var = 1}}}, .outputs = {7}}, &m),
          {{t6, {point(x), point(y)}}}, {{out7, {x, y}}}, {}, {.name = "f6"});
  pipeline unscheduled = build_pipeline(ctx, {in0}, {out5, out7});
  build_options options;
  pipeline scheduled = build_pipeline(ctx, {in0}, {out5, out7}, options);
  random_test::expect_same(unscheduled, scheduled,
                           {.inputs = {{.bounds = {{0, 12}}, .seed = 42ull}},
                            .outputs = {{.bounds = {{0, 4}, {0, 2}}}, {.bounds = {{0, 5}, {0, 4}}}},
                            .monitor = &m,
                            .views = {t2, t3},
                            .view_stages = {1, 2},
                            .copy_calls_at_most = {{5, 1}}});
}

}  // namespace
// Found by a long batch of the tester (seed 11, case 1268, --features auto_only; the unscheduled
// pipeline of an auto-mode case), the cause of padded_transposing_copy_into_a_user_folded_buffer
// again, fixed with it: f0 broadcasts in0 along x into t1,
// which the alias pass made a stride-0 view of in0; the padded copy f1 crops t1's dim 0 to
// [4, ...], a no-op on a stride-0 dim, so t3(2) and t3(3) held in0's value instead of the pad.
TEST(random_regressions, padded_copy_of_a_broadcast_input) {
  random_test::monitor m;
  m.allowed = {{}, {{4, 4}, {0, 0}, {0, 0}}, {}, {{2, 4}, {0, 0}, {0, 0}}, {{4, 8}, {0, 0}, {0, 0}}};
  node_context ctx;
  var x(ctx, "x"), y(ctx, "y"), z(ctx, "z");
  auto in0 = buffer_expr::make(ctx, "in0", 2, 1);
  auto t1 = buffer_expr::make(ctx, "t1", 3, 1);
  auto c2 = buffer_expr::make_scalar<std::int8_t>(ctx, "c2", 36);
  auto t3 = buffer_expr::make(ctx, "t3", 3, 1);
  t3->dim(0).fold_factor = 8;
  auto out4 = buffer_expr::make(ctx, "out4", 3, 4);
  func f0 = func::make_copy({in0, {point(y), point(z)}}, {t1, {x, y, z}});
  func f1 = func::make_copy({.buffer = t1,
                             .bounds = {point(x), point(y), point(z)},
                             .input_crop = {interval_expr(4, expr()), interval_expr(), interval_expr()}},
                            {t3, {x, y, z}}, {c2, {}});
  func f2(
      random_test::kernel({.stage = 2, .inputs = {{{.var = 0, .div = 2}, {.var = 1}, {.var = 2}}}, .outputs = {4}}, &m),
      {{t3, {point(x / 2), point(y), point(z)}}}, {{out4, {x, y, z}}}, {}, {.name = "f2"});
  pipeline unscheduled = build_pipeline(ctx, {in0}, {out4});
  build_options options;
  pipeline scheduled = build_pipeline(ctx, {in0}, {out4}, options);
  random_test::expect_same(unscheduled, scheduled,
                           {.inputs = {{.elem_size = 1, .bounds = {{0, 0}, {0, 0}}, .seed = 10347445319034807295ull}},
                            .outputs = {{.bounds = {{4, 8}, {0, 0}, {0, 0}}}},
                            .monitor = &m,
                            .reference = {{-1429728157, -1419942906, -1420732758, -1429977097, -1420228663}}});
}

// Found by the tester (seed 11, case 3774) while views of outputs were made to take the output's
// fold (API_COMPAT 5.2 item 5): out3 is [4, 4] x [0, 0] x [2, 4]. t2 became a view of out3 with
// out3's fold factors (unfolded here), and t1 a view of t2 in turn; t1's base was taken at
// coordinate 0 of t2, right only for a folded dim, and f0 wrote out of bounds. A view of a view
// that has an output's fold now takes its base like a view of the output itself.
TEST(random_regressions, chain_of_copies_into_an_output_not_at_the_origin) {
  random_test::monitor m;
  m.allowed = {{}, {{4, 4}, {0, 0}, {2, 4}}, {{4, 4}, {0, 0}, {2, 4}}, {{4, 4}, {0, 0}, {2, 4}}};
  node_context ctx;
  var x(ctx, "x"), y(ctx, "y"), z(ctx, "z");
  auto in0 = buffer_expr::make(ctx, "in0", 2, 4);
  auto t1 = buffer_expr::make(ctx, "t1", 3, 2);
  auto t2 = buffer_expr::make(ctx, "t2", 3, 2);
  auto out3 = buffer_expr::make(ctx, "out3", 3, 2);
  func f0(random_test::kernel({.stage = 0, .inputs = {{{.var = 0}, {.var = 1}}}, .outputs = {1}}, &m),
          {{in0, {point(x), point(y)}}}, {{t1, {x, y, z}}}, {}, {.name = "f0"});
  func f1 = func::make_copy({t1, {point(x), point(y), point(z)}}, {t2, {x, y, z}});
  func f2 = func::make_copy({t2, {point(x), point(y), point(z)}}, {out3, {x, y, z}});
  pipeline unscheduled = build_pipeline(ctx, {in0}, {out3});
  build_options options;
  pipeline scheduled = build_pipeline(ctx, {in0}, {out3}, options);
  random_test::expect_same(unscheduled, scheduled,
                           {.inputs = {{.bounds = {{0, 4}, {0, 0}}, .seed = 17757936898113955609ull}},
                            .outputs = {{.elem_size = 2, .bounds = {{4, 4}, {0, 0}, {2, 4}}}},
                            .monitor = &m});
}

}  // namespace slinky
