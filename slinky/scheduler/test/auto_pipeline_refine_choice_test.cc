// auto_pipeline's measured refinement, its choice: the finalists timed again and what is kept
// (memory when time is equal, parallel candidates round by round, more rounds before
// multiplying the memory), and where it does not run, with injected tables of timings.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "slinky/scheduler/test/auto_pipeline_test_util.h"

namespace slinky {

using namespace auto_pipeline_test;

TEST(auto_pipeline, refinement_tries_pipelined_and_data_parallel) {
  // On a pool of 2 threads the model takes a parallel loop over rows, pipelined or data-parallel
  // (intermediates stored in the loop). The walk tries the other form of the same loop; a table
  // where only that form is fast keeps it, the report names it, and the kept pipeline computes
  // the reference (on the pool), as does every candidate.
  refined_stencil r(64, 256, /*threads=*/2);
  bool model_data_parallel = false;
  r.refine(8, [&](const std::string& candidate, index_t) {
    if (r.calls.size() == 1) model_data_parallel = candidate.find("data-parallel") != std::string::npos;
    const bool data_parallel = candidate.find("data-parallel") != std::string::npos;
    return data_parallel != model_data_parallel && candidate.find(", parallel") != std::string::npos ? 0.5e-3 : 1e-3;
  });
  const std::string& report = r.report;
  ASSERT_FALSE(r.calls.empty()) << report;
  ASSERT_NE(r.calls[0].find(", parallel"), std::string::npos) << report;
  ASSERT_NE(report.find("refinement kept: a measured neighbour"), std::string::npos) << report;
  const std::string kept_line = r.kept_line();
  EXPECT_NE(kept_line.find(", parallel"), std::string::npos) << report;
  EXPECT_EQ(kept_line.find("data-parallel") != std::string::npos, !model_data_parallel) << report;
  EXPECT_EQ(mismatches(run_on_a_pool(r.p, r.w, r.h), reference(r.w, r.h)), 0u);
  EXPECT_EQ(r.p.builds(), 1u);
}

TEST(auto_pipeline, refinement_does_not_walk_on_to_a_slower_switch_of_the_same_steps) {
  // A parallel loop on a pool of 2 threads. The model's form (pipelined or data-parallel) is 1%
  // faster at half the model's step, twice as fast from 4 times it; the other form as fast as
  // the model's choice at every step, the serial loop and the next-best far slower. The walk
  // goes on to half the step, and not on to the other form there (slower, within min_gain: it
  // only switches the loop), so the budget left follows the step's line and finds 4 times the
  // model's step. Walking on through the other form spent the budget on its line.
  refined_stencil r(64, 256, /*threads=*/2);
  bool model_data_parallel = false;
  r.refine(12, [&](const std::string& candidate, index_t model_step) {
    if (r.calls.size() == 1) model_data_parallel = candidate.find("data-parallel") != std::string::npos;
    if (is_next_best(candidate)) return 10e-3;
    if (candidate.find(", parallel") == std::string::npos) return 2e-3;
    if ((candidate.find("data-parallel") != std::string::npos) != model_data_parallel) return 1e-3;
    const index_t s = step_of(candidate);
    if (s >= 4 * model_step) return 0.5e-3;
    if (s == model_step) return 1e-3;
    if (s == model_step / 2) return 0.99e-3;
    return s == 2 * model_step ? 1.01e-3 : 1.2e-3;
  });
  const std::string& report = r.report;
  ASSERT_FALSE(r.calls.empty()) << report;
  ASSERT_NE(r.calls[0].find(", parallel"), std::string::npos) << report;
  ASSERT_GE(r.model_step, 2) << report;
  ASSERT_LE(r.model_step, 32) << report;
  const std::string kept_line = r.kept_line();
  EXPECT_EQ(step_of(kept_line), 4 * r.model_step) << report;
  EXPECT_NE(kept_line.find(", parallel"), std::string::npos) << report;
  EXPECT_EQ(kept_line.find("data-parallel") != std::string::npos, model_data_parallel) << report;
  EXPECT_EQ(mismatches(run_on_a_pool(r.p, r.w, r.h), reference(r.w, r.h)), 0u);
}

TEST(auto_pipeline, refinement_counts_the_synchronisation_of_smaller_parallel_steps) {
  // A parallel loop on a pool of 2 threads, every parallel candidate timed alike (serial ones and
  // the next-best twice as slow). Where a candidate takes 100 ms, the synchronisation a smaller
  // step adds (cost_model::parallel_iteration_ns per iteration) is lost in equal_time and a
  // smaller step than the model's is kept (memory when time is equal); where it takes 50 us, a
  // smaller step adds more than equal_time of it and the model's step is kept.
  for (double t : {100e-3, 50e-6}) {
    refined_stencil r(64, 256, /*threads=*/2);
    r.refine(6, [t](const std::string& candidate, index_t) {
      const bool parallel = candidate.find(", parallel") != std::string::npos;
      return parallel && !is_next_best(candidate) ? t : 2 * t;
    });
    const std::string& report = r.report;
    ASSERT_GE(r.model_step, 2) << report;
    ASSERT_LE(r.model_step, 32) << report;
    ASSERT_NE(report.find("refinement kept: "), std::string::npos) << report;
    const std::string kept_line = r.kept_line();
    EXPECT_NE(kept_line.find(", parallel"), std::string::npos) << report;
    EXPECT_FALSE(is_next_best(kept_line)) << report;
    if (t > 1e-3) {
      EXPECT_LT(step_of(kept_line), r.model_step) << report;
    } else {
      EXPECT_EQ(step_of(kept_line), r.model_step) << report;
    }
  }
}

TEST(auto_pipeline, refinement_compares_parallel_steps_round_by_round) {
  // A parallel loop on a pool of 2 threads, the model's step and larger ones timed alike (serial
  // candidates and the next-best twice as slow), 100 ms per evaluation (the synchronisation a
  // smaller step adds is lost in equal_time). The parallel finalists are timed again in 3 times
  // `repetitions` rounds. In the first case the load changes from round to round: the model's
  // step takes 90, 90, then 100 ms, the smaller steps 96, 96, 106, 106, 100 and 100: at the
  // medians (100 ms each) they are equal, but each is beyond equal_time of the model's step in
  // the same round in 4 of the 6 rounds, and the model's step is kept. In the second the smaller
  // steps are 4% slower and 3% faster in turn (within equal_time in every round): the smallest
  // is kept, memory when time is equal.
  for (bool often_beyond : {true, false}) {
    refined_stencil r(64, 256, /*threads=*/2);
    refine_options o;
    o.max_evaluations = 6;
    o.repetitions = 2;
    std::map<std::string, int> timings;
    int rounds = 0;
    r.refine(o, [&](const std::string& candidate, index_t model_step) {
      const std::string& model = r.calls[0];
      const int n = timings[candidate]++;
      // The model's choice (the fastest, the first measured of the equal ones) is timed 2 times,
      // then once in each round of the end (round n - 2).
      rounds += candidate == model && n >= 2;
      const bool parallel = candidate.find(", parallel") != std::string::npos;
      if (!parallel || is_next_best(candidate)) return 200e-3;
      if (candidate == model && often_beyond && n >= 2 && n < 4) return 90e-3;
      if (step_of(candidate) >= model_step) return 100e-3;
      if (often_beyond) return n < 2 ? 104e-3 : n < 4 ? 96e-3 : n < 6 ? 106e-3 : 100e-3;
      return n % 2 == 0 ? 104e-3 : 97e-3;
    });
    const std::string& report = r.report;
    const index_t model_step = r.model_step;
    ASSERT_GE(model_step, 2) << report;
    ASSERT_NE(r.calls[0].find(", parallel"), std::string::npos) << report;
    EXPECT_NE(report.find("timed again, interleaved, 6 rounds"), std::string::npos) << report;
    EXPECT_EQ(rounds, 6) << report;
    ASSERT_NE(report.find("refinement kept: "), std::string::npos) << report;
    const std::string kept_line = r.kept_line();
    EXPECT_NE(kept_line.find(", parallel"), std::string::npos) << report;
    if (often_beyond) {
      EXPECT_NE(report.find("beyond equal_time of the fastest in 4 of 6 rounds (more than half), not kept"),
                std::string::npos)
          << report;
      EXPECT_EQ(step_of(kept_line), model_step) << report;
    } else {
      EXPECT_EQ(report.find("beyond equal_time of the fastest in "), std::string::npos) << report;
      EXPECT_LT(step_of(kept_line), model_step) << report;
    }
  }
}

TEST(auto_pipeline, refinement_times_the_smaller_steps_again) {
  // Every candidate 1 ms, but the first timing of half the model's step 15% slower (the machine
  // was busy then): the walk's times alone keep the model's step; timed again, interleaved with
  // the fastest, half the model's step is as fast, and is kept.
  refined_stencil r;
  int half_timings = 0;
  r.refine(3, [&](const std::string& candidate, index_t model_step) {
    if (step_of(candidate) == model_step / 2 && half_timings++ == 0) return 1.15e-3;
    return 1e-3;
  });
  const std::string& report = r.report;
  const std::vector<std::string>& calls = r.calls;
  const index_t model_step = r.model_step;
  ASSERT_GE(model_step, 2) << report;
  EXPECT_NE(report.find("3 candidates evaluated"), std::string::npos) << report;
  EXPECT_NE(report.find("timed again, interleaved, 1 rounds"), std::string::npos) << report;
  EXPECT_EQ(half_timings, 2) << report;
  // The model's choice, 3 candidates, then the fastest (the model's choice, the first measured of
  // the equally fast) and the halved step again.
  ASSERT_EQ(calls.size(), 6u) << report;
  EXPECT_EQ(step_of(calls[4]), model_step) << report;
  EXPECT_EQ(step_of(calls[5]), model_step / 2) << report;
  r.expect_kept(model_step / 2);
}

TEST(auto_pipeline, refinement_keeps_smaller_steps_than_the_models_only_if_as_fast_as_it) {
  // The model's step and larger ones take 1 ms, half the model's step `half` ms, smaller steps and
  // the next-best 1.5 ms. Half the model's step is within equal_time (5%) of the fastest (the
  // model's choice) at 4% and at 1.5% slower; with smaller steps than the model's choice, it is
  // kept only where it is within min_gain (2%) of the fastest: the model sized its steps to the
  // caches, and 4% is what a choice among several candidates timed within the band may have
  // gained by chance.
  for (double half : {1.04e-3, 1.015e-3}) {
    refined_stencil r;
    r.refine(4, [half](const std::string& candidate, index_t model_step) {
      if (is_next_best(candidate)) return 1.5e-3;
      const index_t s = step_of(candidate);
      return s >= model_step ? 1e-3 : s == model_step / 2 ? half : 1.5e-3;
    });
    const std::string& report = r.report;
    const index_t model_step = r.model_step;
    ASSERT_GE(model_step, 2) << report;
    const std::string half_step = "box2: step " + std::to_string(model_step / 2);
    ASSERT_NE(report.find("ms: " + half_step + "\n"), std::string::npos) << report;
    if (half > 1.02e-3) {
      EXPECT_NE(report.find("1.04x the fastest, smaller steps than the model's choice, not kept: " + half_step + "\n"),
                std::string::npos)
          << report;
      EXPECT_NE(report.find("refinement kept: the model's choice"), std::string::npos) << report;
      r.expect_kept(model_step);
    } else {
      EXPECT_EQ(report.find("not kept"), std::string::npos) << report;
      r.expect_kept(model_step / 2);
    }
  }
}

// The stencil refined under a table where the time falls from half the model's step to 8 times
// it, 16 times and beyond slower: 4 times is timed 6% slower the first time (the machine was
// busy), as fast as 8 times after; half the model's step is timed 18% slower, or, where
// `half_fast_later`, as fast as 8 times after its first timing.
struct falling_times_refinement : refined_stencil {
  int quadruple_timings = 0, half_timings = 0;

  explicit falling_times_refinement(bool half_fast_later) {
    refine(8, [this, half_fast_later](const std::string& candidate, index_t model_step) {
      if (is_next_best(candidate)) return 10e-3;
      const index_t s = step_of(candidate);
      if (s == 4 * model_step) return quadruple_timings++ == 0 ? 1.06e-3 : 1e-3;
      if (s == 8 * model_step) return 1e-3;
      if (s > 8 * model_step) return 1.1e-3;
      if (s == model_step / 2 && half_fast_later) return half_timings++ == 0 ? 1.18e-3 : 1e-3;
      return s == 2 * model_step ? 1.12e-3 : s == model_step ? 1.15e-3 : 1.18e-3;
    });
  }
};

TEST(auto_pipeline, refinement_times_again_the_fastest_of_the_smaller_steps) {
  // Of the smaller steps than the fastest (8 times the model's), the fastest three besides the
  // model's choice are timed again (and the model's choice), in one round and then 2 more (4
  // times the model's step, chosen after the first, would multiply its memory), and 4 times the
  // model's step is kept.
  falling_times_refinement r(/*half_fast_later=*/false);
  ASSERT_GE(r.model_step, 1) << r.report;
  ASSERT_LE(r.model_step, 16) << r.report;
  EXPECT_EQ(r.quadruple_timings, 1 + 3) << r.report;
  r.expect_kept(4 * r.model_step);
}

TEST(auto_pipeline, refinement_times_again_smaller_steps_besides_the_models_choice) {
  // Half the model's step, timed 18% slower by the walk (slower than the model's choice, within
  // the band of those timed again), is as fast as the fastest after. The model's choice is timed
  // again and takes none of the three places of the others (4 and 2 times its step, and half), so
  // half its step is timed again too, and kept: the smallest step as fast as the fastest.
  falling_times_refinement r(/*half_fast_later=*/true);
  ASSERT_GE(r.model_step, 2) << r.report;
  ASSERT_LE(r.model_step, 16) << r.report;
  EXPECT_EQ(r.half_timings, 2) << r.report;
  r.expect_kept(r.model_step / 2);
}

TEST(auto_pipeline, refinement_times_again_in_more_rounds_before_multiplying_the_memory) {
  // The time falls from the model's step to 8 times it, 16 times and more slower, smaller steps
  // slower. The finalists, timed again, are 8, 4 and 2 times the model's step and the model's
  // choice, which is timed 30% slower in the first of those rounds and as fast as 8 times its step
  // after. After one round, 8 times its step would be kept: it would multiply the model's memory,
  // so the finalists are timed in 2 more rounds, and the model's choice, as fast at the median, is
  // kept.
  refined_stencil r;
  int model_timings = 0;
  r.refine(8, [&](const std::string& candidate, index_t model_step) {
    if (is_next_best(candidate)) return 10e-3;
    const index_t s = step_of(candidate);
    if (s == model_step) {
      const int i = model_timings++;
      return i == 0 ? 1.1e-3 : i == 1 ? 1.3e-3 : 1e-3;
    }
    if (s == 2 * model_step) return 1.08e-3;
    if (s == 4 * model_step) return 1.06e-3;
    if (s == 8 * model_step) return 1e-3;
    return s > 8 * model_step ? 1.1e-3 : 1.5e-3;
  });
  const std::string& report = r.report;
  ASSERT_GE(r.model_step, 1) << report;
  ASSERT_LE(r.model_step, 16) << report;
  EXPECT_EQ(model_timings, 1 + 3) << report;
  EXPECT_NE(report.find("timed again, interleaved, 2 rounds more (the one kept after 1 takes 8 times the steps of the "
                        "model's choice)"),
            std::string::npos)
      << report;
  EXPECT_NE(report.find("refinement kept: the model's choice"), std::string::npos) << report;
  r.expect_kept(r.model_step);
}

TEST(auto_pipeline, refinement_widens_the_band_of_equal_times_with_the_memory_saved) {
  // From 4 times the model's step up, 5.8% faster than the model's step, then 7% faster: beyond
  // equal_time (5%) both, but the model's step saves 4 times the memory, which widens its band
  // to 6.25% (an eighth of equal_time for each halving): the model's choice is kept in the first
  // table, 4 times its step in the second.
  for (double faster : {0.945e-3, 0.935e-3}) {
    refined_stencil r;
    r.refine(8, [&](const std::string& candidate, index_t model_step) {
      if (is_next_best(candidate)) return 10e-3;
      const index_t s = step_of(candidate);
      if (s >= 4 * model_step) return faster;
      return s < model_step ? 1.2e-3 : 1e-3;
    });
    ASSERT_GE(r.model_step, 1) << r.report;
    ASSERT_LE(r.model_step, 16) << r.report;
    ASSERT_NE(r.report.find("box2: step " + std::to_string(4 * r.model_step) + "\n"), std::string::npos) << r.report;
    r.expect_kept(faster > 0.94e-3 ? r.model_step : 4 * r.model_step);
  }
}

TEST(auto_pipeline, refinement_times_the_models_choice_again) {
  // The model's step timed 30% slower the first time (the machine was busy then), as fast as
  // twice it after; every other candidate slower. The walk goes to twice the model's step, and
  // the model's choice, beyond the band of the smaller steps timed again, is timed again with
  // it, interleaved, all the same: equal, the model's smaller step is kept.
  refined_stencil r;
  int model_timings = 0;
  r.refine(3, [&](const std::string& candidate, index_t model_step) {
    if (is_next_best(candidate)) return 10e-3;
    const index_t s = step_of(candidate);
    if (s == model_step) return model_timings++ == 0 ? 1.3e-3 : 1e-3;
    return s == 2 * model_step ? 1e-3 : 1.5e-3;
  });
  const std::string& report = r.report;
  const std::vector<std::string>& calls = r.calls;
  const index_t model_step = r.model_step;
  ASSERT_GE(model_step, 2) << report;
  ASSERT_LE(model_step, 16) << report;
  EXPECT_NE(report.find("3 candidates evaluated"), std::string::npos) << report;
  EXPECT_EQ(model_timings, 2) << report;
  // The model's choice, 3 candidates, then the fastest (twice the model's step) and the model's
  // choice again.
  ASSERT_EQ(calls.size(), 6u) << report;
  EXPECT_EQ(step_of(calls[4]), 2 * model_step) << report;
  EXPECT_EQ(step_of(calls[5]), model_step) << report;
  EXPECT_NE(report.find("refinement kept: the model's choice"), std::string::npos) << report;
  r.expect_kept(model_step);
}

TEST(auto_pipeline, refinement_times_the_models_choice_again_with_a_faster_smaller_step) {
  // Half the model's step timed at half its time once (a moment of the walk), 1.5 times it after;
  // every other candidate slower. The walk's fastest has smaller steps than the model's choice:
  // both are timed again, interleaved, and the model's choice, the faster there, is kept.
  refined_stencil r;
  int half_timings = 0;
  r.refine(3, [&](const std::string& candidate, index_t model_step) {
    if (is_next_best(candidate)) return 10e-3;
    const index_t s = step_of(candidate);
    if (s == model_step) return 1e-3;
    if (2 * s == model_step) return half_timings++ == 0 ? 0.5e-3 : 1.5e-3;
    return 1.5e-3;
  });
  const std::string& report = r.report;
  const std::vector<std::string>& calls = r.calls;
  const index_t model_step = r.model_step;
  ASSERT_GE(model_step, 2) << report;
  ASSERT_LE(model_step, 16) << report;
  EXPECT_EQ(half_timings, 2) << report;
  // The model's choice, 3 candidates, then the fastest (half the model's step) and the model's
  // choice again.
  ASSERT_EQ(calls.size(), 6u) << report;
  EXPECT_EQ(2 * step_of(calls[4]), model_step) << report;
  EXPECT_EQ(step_of(calls[5]), model_step) << report;
  EXPECT_NE(report.find("refinement kept: the model's choice"), std::string::npos) << report;
  r.expect_kept(model_step);
}

TEST(auto_pipeline, refinement_goes_down_a_plateau_before_going_further_up) {
  // The elementwise chain of 8 on the development machine: twice and 4 times the model's step 7%
  // faster than it, larger steps as fast as those (within equal_time: a plateau), half and a
  // quarter of the model's step slower, an eighth as fast as the fastest. The walk climbs the
  // plateau; the budget left goes down the step's line first (the larger steps are as fast and
  // only larger), reaches an eighth of the model's step and keeps it. Following the lines up
  // and down in turn, the budget runs out on the plateau before it gets there.
  // (Rows of 4: the model's step is a power of two, 32, as the chain's chunks are, so that the
  // line's steps are its multiples and fractions by powers of two.)
  refined_stencil r(4, 2048);
  // The steps down the line: the model's halved, halved again, and again.
  index_t half = -1, quarter = -1, eighth = -1;
  r.refine(7, [&](const std::string& candidate, index_t model_step) {
    if (half < 0) {
      half = model_step / 2;
      quarter = half / 2;
      eighth = quarter / 2;
    }
    if (is_next_best(candidate)) return 10e-3;
    const index_t s = step_of(candidate);
    if (s == model_step) return 1e-3;
    if (s == eighth) return 0.935e-3;
    if (s == half) return 1.16e-3;
    if (s < model_step) return 1.25e-3;
    if (s == 2 * model_step) return 0.93e-3;
    if (s == 4 * model_step) return 0.94e-3;
    return s == 8 * model_step ? 0.96e-3 : 0.95e-3;
  });
  const std::string& report = r.report;
  const index_t model_step = r.model_step;
  ASSERT_GE(eighth, 1) << report;
  ASSERT_LE(model_step, 32) << report;
  EXPECT_NE(report.find("7 candidates evaluated"), std::string::npos) << report;
  // The walk: doubled, halved, the next-best, 4 and 8 times the model's step; then down the line
  // (a quarter, an eighth), before 16 times the model's step.
  const std::vector<index_t> order = steps_timed(r.calls);
  const auto first = [&](index_t s) { return std::find(order.begin(), order.end(), s) - order.begin(); };
  ASSERT_LT(first(eighth), static_cast<std::ptrdiff_t>(order.size())) << report;
  EXPECT_LT(first(quarter), first(eighth)) << report;
  EXPECT_LT(first(eighth), first(16 * model_step)) << report;
  r.expect_kept(eighth);
}

TEST(auto_pipeline, no_refinement_in_place) {
  // out = in * 2 + 1 computed in place (out is in's memory): evaluating it again for timing would
  // scale it again. The refinement does not run, the result is that of one evaluation.
  node_context ctx;
  var x(ctx, "x"), y(ctx, "y");
  auto in = buffer_expr::make(ctx, "in", 2, sizeof(float));
  auto mid = buffer_expr::make(ctx, "mid", 2, sizeof(float));
  auto out = buffer_expr::make(ctx, "out", 2, sizeof(float));
  std::vector<func> funcs;
  funcs.push_back(func::make(scale, {{in, {point(x), point(y)}}}, {{mid, {x, y}}}, {.name = "s1"}));
  funcs.push_back(func::make(scale, {{mid, {point(x), point(y)}}}, {{out, {x, y}}}, {.name = "s2"}));
  auto_pipeline p(ctx, {in}, {out}, build_options(), small_machine());
  refine_options o;
  o.max_evaluations = 4;
  int timed = 0;
  o.timer = [&](const std::string&, const std::function<double()>& run) {
    ++timed;
    return run();
  };
  p.set_refinement(o);
  const index_t w = 64, h = 256;
  buffer<float, 2> buf({w, h});
  buf.allocate();
  for (index_t j = 0; j < h; ++j) {
    for (index_t i = 0; i < w; ++i) buf(i, j) = static_cast<float>((i + j) % 5);
  }
  ASSERT_EQ(p.evaluate({&buf}, {&buf}), 0);
  EXPECT_EQ(timed, 0);
  const std::string report = p.last_report();
  ASSERT_NE(report.find("loop over"), std::string::npos) << report;
  EXPECT_NE(report.find("refinement: none, an output overlaps an input"), std::string::npos) << report;
  for (index_t j = 0; j < h; ++j) {
    for (index_t i = 0; i < w; ++i) ASSERT_EQ(buf(i, j), static_cast<float>((i + j) % 5) * 4 + 3) << i << ", " << j;
  }
}

TEST(auto_pipeline, no_refinement_by_default) {
  stencil_graph g;
  const auto_pipeline p(g.ctx, {g.in}, {g.out}, build_options(), small_machine());
  run(p, 64, 256);
  EXPECT_EQ(p.last_report().find("refinement"), std::string::npos) << p.last_report();
}

}  // namespace slinky
