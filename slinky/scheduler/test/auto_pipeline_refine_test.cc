// auto_pipeline's measured refinement, its walk: the neighbours of the model's choice, the steps
// followed further, plateaus, the model's next-best candidate, tiles, a faulty timer, and the
// budget, all with injected tables of timings.
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

TEST(auto_pipeline, refinement_keeps_the_fastest_measured_neighbour) {
  const index_t w = 64, h = 256;
  stencil_graph plain;
  const auto_pipeline unrefined(plain.ctx, {plain.in}, {plain.out}, build_options(), small_machine());
  ASSERT_EQ(mismatches(run(unrefined, w, h), reference(w, h)), 0u);
  const std::string model_report = unrefined.last_report();
  // The model's step on this machine (the report: "in steps of N").
  const std::size_t at = model_report.find("in steps of ");
  ASSERT_NE(at, std::string::npos) << model_report;
  const index_t model_step = std::stoll(model_report.substr(at + 12));
  ASSERT_LT(model_step, 32) << model_report;
  EXPECT_EQ(model_report.find("refinement"), std::string::npos);

  // The table is fastest at 8 times the model's step: doubling three times gets there, each
  // round trying the step doubled and halved (the halved ones slower).
  for (int budget : {20, 3, 1}) {
    refined_stencil r(w, h);
    r.refine(budget, [&](const std::string& candidate, index_t) {
      if (is_next_best(candidate)) return 10e-3;
      const double s = static_cast<double>(step_of(candidate));
      return 1e-3 * (1 + std::abs(std::log2(s) - std::log2(static_cast<double>(8 * model_step))));
    });
    const std::string& report = r.report;
    const std::vector<std::string>& calls = r.calls;
    // The model's choice, then `budget` candidates, none twice; then, timed again (not counted in
    // the budget), the fastest and the model's choice with its smaller step, and nothing else: in
    // one round, and 2 more where the step kept after it is at least 4 times the model's (keeping
    // it would multiply the model's memory).
    ASSERT_GE(calls.size(), 2u) << report;
    const std::size_t evaluated_at = report.find(" candidates evaluated");
    ASSERT_NE(evaluated_at, std::string::npos) << report;
    const int explored = std::stoi(report.substr(report.rfind(' ', evaluated_at - 1) + 1));
    EXPECT_LE(explored, budget) << report;
    const std::size_t walk = 1 + static_cast<std::size_t>(explored);
    EXPECT_EQ(step_of(calls[0]), model_step);
    for (std::size_t i = 0; i < walk; ++i) {
      for (std::size_t j = 0; j < i; ++j) EXPECT_NE(calls[i], calls[j]);
    }
    // Within the budget, the largest step reached: 2, 4, then 8 times the model's (the first
    // round tries doubled, halved and the model's next-best: 3 evaluations; the next rounds
    // doubled only, the halved step was tried).
    const index_t kept = budget >= 5 ? 8 * model_step : budget >= 4 ? 4 * model_step : 2 * model_step;
    const std::size_t rounds = kept >= 4 * model_step ? 3 : 1;
    ASSERT_EQ(calls.size(), walk + 2 * rounds) << report;
    EXPECT_NE(std::find(calls.begin(), calls.begin() + walk, calls[walk]), calls.begin() + walk) << report;
    for (std::size_t r = 0; r < rounds; ++r) {
      EXPECT_EQ(calls[walk + 2 * r], calls[walk]) << report;
      EXPECT_EQ(calls[walk + 2 * r + 1], calls[0]) << report;
    }
    EXPECT_NE(report.find("timed again, interleaved, 1 rounds:"), std::string::npos) << report;
    EXPECT_EQ(report.find("timed again, interleaved, 2 rounds more (the one kept after 1 takes 8 times the steps of "
                          "the model's choice):") != std::string::npos,
              rounds == 3)
        << report;
    EXPECT_NE(report.find("refinement kept: a measured neighbour"), std::string::npos) << report;
    // The pipeline evaluated from now on is the kept one: box2 called once per iteration.
    r.expect_kept(kept);
    EXPECT_EQ(r.p.builds(), 1u);
  }
}

TEST(auto_pipeline, refinement_with_a_faulty_timer) {
  // A timer that returns a time that is not a number, infinite or negative: such a candidate
  // counts as infinitely slow. With every time faulty, the model's choice is kept; with the
  // faulty times on the steps above the model's, one of the others.
  const index_t w = 64, h = 256;
  const double faulty[] = {std::numeric_limits<double>::quiet_NaN(), std::numeric_limits<double>::infinity(), -1e-3};
  for (double bad : faulty) {
    for (bool all : {true, false}) {
      refined_stencil r(w, h);
      r.refine(8, [&](const std::string& candidate, index_t model_step) {
        if (all || is_next_best(candidate) || step_of(candidate) > model_step) return bad;
        return 1e-3 * static_cast<double>(step_of(candidate));
      });
      const std::string& report = r.report;
      ASSERT_GE(r.model_step, 2) << report;
      ASSERT_GE(r.calls.size(), 2u) << report;
      // With finite times below the model's step (a time proportional to the step), the
      // smallest step tried is the fastest.
      index_t kept = r.model_step;
      if (!all) {
        for (const std::string& c : r.calls) {
          if (!is_next_best(c)) kept = std::min(kept, step_of(c));
        }
      }
      EXPECT_LT(kept, all ? r.model_step + 1 : r.model_step) << report;
      expect_kept_rows(r.p, r.g, w, h, kept, report);
    }
  }
}

TEST(auto_pipeline, refinement_is_deterministic_and_bounded) {
  const index_t w = 64, h = 256;
  std::string reports[2];
  for (std::string& report : reports) {
    refined_stencil r(w, h);
    refine_options o;
    o.max_evaluations = 6;
    o.repetitions = 3;
    o.max_slowdown = 1.5;
    // Every other step than the model's is 3x slower: one repetition each (past max_slowdown),
    // and the model's choice is kept.
    r.refine(o, [](const std::string& candidate, index_t model_step) {
      return step_of(candidate) == model_step ? 1e-3 : 3e-3;
    });
    report = r.report;
    const std::vector<std::string>& calls = r.calls;
    EXPECT_NE(report.find("refinement kept: the model's choice"), std::string::npos) << report;
    EXPECT_NE(report.find("the slowest 3.00x the model's choice"), std::string::npos) << report;
    // The model's choice 3 times; the neighbours (doubled, halved, the model's next-best: no
    // others on one thread) once, then the budget's 3 left on the step's line further up and
    // down (4 times, a quarter, 8 times the model's step), once each.
    ASSERT_GE(calls.size(), 6u) << report;
    EXPECT_EQ(calls.size(), 3u + 6u) << report;
    EXPECT_TRUE(is_next_best(calls[5])) << report;
    EXPECT_NE(report.find("6 candidates evaluated"), std::string::npos) << report;
  }
  EXPECT_EQ(reports[0], reports[1]);
}

TEST(auto_pipeline, refinement_crosses_a_plateau) {
  // As slow on 2 times the model's step as on it, twice as fast from 4 times: the walk goes on
  // across the equal neighbour and keeps 4 times the model's step.
  refined_stencil r;
  r.refine(8, [](const std::string& candidate, index_t model_step) {
    return step_of(candidate) >= 4 * model_step ? 0.5e-3 : 1e-3;
  });
  ASSERT_LT(r.model_step, 32) << r.report;
  EXPECT_NE(r.report.find("refinement kept: a measured neighbour"), std::string::npos) << r.report;
  r.expect_kept(4 * r.model_step);
}

TEST(auto_pipeline, refinement_goes_on_past_a_slower_step) {
  // Faster at half the model's step, slower below it and at twice, twice as fast from 4 times the
  // model's step up: the walk goes down to half and stops there (no neighbour left, or a slower
  // one), then, with budget left, follows the step's line up past the slower twice, finds 4
  // times faster, walks on from there and keeps it (the smallest of the fastest steps).
  refined_stencil r;
  r.refine(8, [](const std::string& candidate, index_t model_step) {
    if (is_next_best(candidate)) return 10e-3;
    const index_t s = step_of(candidate);
    if (s >= 4 * model_step) return 0.5e-3;
    if (s == 2 * model_step) return 1.2e-3;
    if (s == model_step / 2) return 0.95e-3;
    return s < model_step ? 1.2e-3 : 1e-3;
  });
  const std::string& report = r.report;
  const index_t model_step = r.model_step;
  ASSERT_GE(model_step, 2) << report;
  ASSERT_LE(model_step, 16) << report;
  EXPECT_NE(report.find("8 candidates evaluated"), std::string::npos) << report;
  // The walk: doubled, halved, the next-best, then on from half; the line followed up after
  // that.
  const std::vector<index_t> order = steps_timed(r.calls);
  const auto first = [&](index_t s) { return std::find(order.begin(), order.end(), s) - order.begin(); };
  ASSERT_LT(first(4 * model_step), static_cast<std::ptrdiff_t>(order.size())) << report;
  EXPECT_LT(first(model_step / 2), first(4 * model_step)) << report;
  EXPECT_GE(first(4 * model_step), 3) << report;
  EXPECT_LT(first(4 * model_step), first(8 * model_step)) << report;
  EXPECT_NE(report.find("refinement kept: a measured neighbour"), std::string::npos) << report;
  r.expect_kept(4 * model_step);
}

TEST(auto_pipeline, refinement_halves_a_step_to_the_power_of_two_below_it) {
  // Rows of 16 floats on the small machine: the model's step is 12 (from its budget). Halved, it
  // goes to 8, the largest power of two below it (callbacks' fast paths are blocks of 2, 4, 8
  // rows), not to 6 and then 3; from 8 on by halves. Smaller steps faster: the walk goes down.
  refined_stencil r(16, 256);
  r.refine(5, [](const std::string& candidate, index_t) {
    return is_next_best(candidate) ? 10e-3 : 1e-3 * (1 + 0.1 * static_cast<double>(step_of(candidate)));
  });
  const std::string& report = r.report;
  ASSERT_EQ(r.model_step, 12) << report;
  const std::vector<index_t> order = steps_timed(r.calls);
  ASSERT_GE(order.size(), 3u) << report;
  EXPECT_EQ(order[0], 12) << report;
  EXPECT_EQ(order[1], 24) << report;
  EXPECT_EQ(order[2], 8) << report;
  EXPECT_NE(std::find(order.begin(), order.end(), 4), order.end()) << report;
  for (index_t odd : {6, 3}) EXPECT_EQ(std::find(order.begin(), order.end(), odd), order.end()) << report;
}

TEST(auto_pipeline, refinement_times_again_a_neighbour_slower_by_a_little) {
  // Twice the model's step timed 5% slower the first time (the machine was busy then), as fast
  // after; 4 times twice as fast. The walk's neighbour is beyond min_gain but within the noise:
  // it and the current candidate are timed again, interleaved, and the walk goes on through it to
  // 4 times the model's step within a budget of 4.
  refined_stencil r;
  int doubled_timings = 0;
  r.refine(4, [&](const std::string& candidate, index_t model_step) {
    if (is_next_best(candidate)) return 10e-3;
    const index_t s = step_of(candidate);
    if (s == 2 * model_step) return doubled_timings++ == 0 ? 1.05e-3 : 1e-3;
    if (s >= 4 * model_step) return 0.5e-3;
    return s < model_step ? 1.2e-3 : 1e-3;
  });
  const std::string& report = r.report;
  const std::vector<std::string>& calls = r.calls;
  const index_t model_step = r.model_step;
  ASSERT_GE(model_step, 2) << report;
  EXPECT_NE(report.find("timed again (a neighbour slower by a little)"), std::string::npos) << report;
  // The model's choice, doubled, halved, the next-best; the model's choice and doubled again; then
  // 4 times the model's step, a neighbour of the doubled.
  ASSERT_GE(calls.size(), 7u) << report;
  EXPECT_EQ(step_of(calls[4]), model_step) << report;
  EXPECT_EQ(step_of(calls[5]), 2 * model_step) << report;
  EXPECT_EQ(step_of(calls[6]), 4 * model_step) << report;
  EXPECT_EQ(doubled_timings, 2) << report;
  r.expect_kept(4 * model_step);
}

TEST(auto_pipeline, refinement_takes_the_smallest_steps_when_times_are_equal) {
  // Every candidate 1 ms, but the doubled step 1% faster (within min_gain and equal_time): the
  // walk crosses the plateau, and of the equal candidates the smallest step is kept, half the
  // model's.
  refined_stencil r;
  r.refine(4, [](const std::string& candidate, index_t model_step) {
    return step_of(candidate) == 2 * model_step ? 0.99e-3 : 1e-3;
  });
  ASSERT_GE(r.model_step, 2) << r.report;
  EXPECT_NE(r.report.find("4 candidates evaluated"), std::string::npos) << r.report;
  r.expect_kept(r.model_step / 2);
}

TEST(auto_pipeline, refinement_tries_the_models_next_best_candidate) {
  // The model's next-best candidate (a loop over another dim, or no loop) twice as fast as every
  // step of the model's loop: kept, and the pipeline computes what the model's does.
  refined_stencil r;
  r.refine(4, [](const std::string& candidate, index_t) { return is_next_best(candidate) ? 0.5e-3 : 1e-3; });
  const std::string& report = r.report;
  // The model's choice, its step doubled and halved, then the next-best.
  ASSERT_GE(r.calls.size(), 4u) << report;
  EXPECT_FALSE(is_next_best(r.calls[0])) << report;
  EXPECT_TRUE(is_next_best(r.calls[3])) << report;
  ASSERT_NE(report.find("refinement kept: a measured neighbour"), std::string::npos) << report;
  // The kept candidate is the next-best or a step of its loop.
  EXPECT_TRUE(is_next_best(r.kept_line())) << report;
  EXPECT_EQ(mismatches(run(r.p, r.w, r.h), reference(r.w, r.h)), 0u);
  EXPECT_EQ(r.p.builds(), 1u);
}

// The tile the model takes for the stencil of rows of 1024 floats on a machine with an L2 of 8 KiB
// (strips of columns, rows inside, the intermediates stored at the strip): its strips and its
// inner step.
void model_tile(index_t w, index_t h, index_t& model_strip, index_t& model_step) {
  stencil_graph g;
  const auto_pipeline unrefined(g.ctx, {g.in}, {g.out}, build_options(), small_machine());
  ASSERT_EQ(mismatches(run(unrefined, w, h), reference(w, h)), 0u);
  const std::string report = unrefined.last_report();
  const std::size_t inside = report.find("inside a loop over dim 0 (x) in steps of ");
  ASSERT_NE(inside, std::string::npos) << report;
  model_strip = std::stoll(report.substr(inside + 41));
  model_step = std::stoll(report.substr(report.find("in steps of ") + 12));
  ASSERT_GE(model_strip, 32) << report;
  ASSERT_LT(model_strip, w) << report;
}

index_t strip_of(const std::string& candidate) {
  const std::size_t at = candidate.find("strips of ");
  return at == std::string::npos ? -1 : std::stoll(candidate.substr(at + 10));
}

// Expects the refinement of p (the report) to have kept a measured neighbour, box2 in strips of
// `strip` and rows in steps of `step`, and the kept pipeline to call box2 once per row block of
// every strip.
void expect_kept_tile(const auto_pipeline& p, stencil_graph& g, index_t w, index_t h, index_t step, index_t strip,
                      const std::string& report) {
  const std::string kept = "box2: step " + std::to_string(step) + ", strips of " + std::to_string(strip) + "\n";
  EXPECT_NE(report.find("refinement kept: a measured neighbour"), std::string::npos) << report;
  EXPECT_NE(report.find("  " + kept, report.find("refinement kept")), std::string::npos) << report;
  g.box2_calls = 0;
  EXPECT_EQ(mismatches(run(p, w, h), reference(w, h)), 0u);
  EXPECT_EQ(g.box2_calls.load(), static_cast<int>(((w + strip - 1) / strip) * ((h + step - 1) / step))) << report;
}

TEST(auto_pipeline, refinement_of_a_tile_walks_its_strips) {
  // Rows of 1024 floats on a machine with an L2 of 8 KiB: the model takes a tile. The walk tries
  // the inner loop's step doubled and halved and the next-best candidates (the loop the tile beat,
  // alone and at the tile's step), then, none of them faster, the strips doubled and halved; every
  // candidate computes the reference, and a table fastest at other strips keeps those: the kept
  // pipeline calls box2 once per row block of every strip.
  const index_t w = 1024, h = 256;
  index_t model_strip = -1, model_step = -1;
  ASSERT_NO_FATAL_FAILURE(model_tile(w, h, model_strip, model_step));
  // Halved if that is still a strip of at least 32 columns, else doubled.
  const index_t target = model_strip / 2 >= 32 ? model_strip / 2 : model_strip * 2;
  refined_stencil r(w, h);
  r.refine(6, [&](const std::string& candidate, index_t) {
    return strip_of(candidate) == target && step_of(candidate) == model_step ? 0.5e-3 : 1e-3;
  });
  const std::string& report = r.report;
  ASSERT_NE(report.find("(a tile)"), std::string::npos) << report;
  ASSERT_GE(r.calls.size(), 2u) << report;
  EXPECT_EQ(strip_of(r.calls[0]), model_strip) << report;
  bool tried_target = false;
  std::size_t first_next_best = r.calls.size(), first_other_strips = r.calls.size();
  for (std::size_t i = 0; i < r.calls.size(); ++i) {
    const std::string& c = r.calls[i];
    if (is_next_best(c)) {
      first_next_best = std::min(first_next_best, i);
      continue;
    }
    // Every candidate of the tile keeps strips of 32 columns or more.
    EXPECT_GE(strip_of(c), 32) << report;
    if (strip_of(c) != model_strip) first_other_strips = std::min(first_other_strips, i);
    tried_target = tried_target || (strip_of(c) == target && step_of(c) == model_step);
  }
  // The strips change after the candidates that keep them.
  EXPECT_LT(first_next_best, first_other_strips) << report;
  EXPECT_TRUE(tried_target) << report;
  expect_kept_tile(r.p, r.g, w, h, model_step, target, report);
}

TEST(auto_pipeline, refinement_of_a_tile_widens_its_strips_to_a_single_one) {
  // The same tile, a table faster the wider the strips at the model's step: the strips double up
  // to one strip of the whole width (the loop over rows alone, at the tile's step), which is kept;
  // box2 is called once per row block.
  const index_t w = 1024, h = 256;
  index_t model_strip = -1, model_step = -1;
  ASSERT_NO_FATAL_FAILURE(model_tile(w, h, model_strip, model_step));
  refined_stencil r(w, h);
  r.refine(24, [&](const std::string& candidate, index_t) {
    const index_t strip = strip_of(candidate);
    return strip > 0 && step_of(candidate) == model_step ? 1e-3 * static_cast<double>(model_strip) / strip : 2e-3;
  });
  expect_kept_tile(r.p, r.g, w, h, model_step, w, r.report);
}

TEST(auto_pipeline, refinement_of_a_tile_tries_its_area_in_other_shapes) {
  // The same tile: the walk also tries the strips doubled with the inner step halved, and halved
  // with it doubled (the same area, about the same memory). A table fastest only at the first
  // (where the model's step can be halved, else at the second) keeps it, within a budget of 8
  // (the candidates that keep the strips first, then the two single changes of the strips).
  const index_t w = 1024, h = 256;
  index_t model_strip = -1, model_step = -1;
  ASSERT_NO_FATAL_FAILURE(model_tile(w, h, model_strip, model_step));
  const bool wider = model_step >= 2 && model_strip * 2 < w;
  const index_t target_strip = wider ? model_strip * 2 : model_strip / 2;
  const index_t target_step = wider ? model_step / 2 : model_step * 2;
  ASSERT_GE(target_strip, 32);
  refined_stencil r(w, h);
  r.refine(8, [&](const std::string& candidate, index_t) {
    return strip_of(candidate) == target_strip && step_of(candidate) == target_step ? 0.5e-3 : 1e-3;
  });
  ASSERT_NE(r.report.find("(a tile)"), std::string::npos) << r.report;
  expect_kept_tile(r.p, r.g, w, h, target_step, target_strip, r.report);
}

TEST(auto_pipeline, refinement_of_a_tile_tries_the_loop_it_beat) {
  // The same tile: its next-best candidate is the loop the tile beat (rows, or no loop), with the
  // tile's funcs stored by default (that loop has no outer loop). A table fastest only there
  // keeps it: the kept pipeline computes the reference with box2 called once per row block (or
  // once), no strips.
  const index_t w = 1024, h = 256;
  index_t model_strip = -1, model_step = -1;
  ASSERT_NO_FATAL_FAILURE(model_tile(w, h, model_strip, model_step));
  refined_stencil r(w, h);
  r.refine(8, [](const std::string& candidate, index_t) { return is_next_best(candidate) ? 0.5e-3 : 1e-3; });
  const std::string& report = r.report;
  ASSERT_NE(report.find("(a tile)"), std::string::npos) << report;
  bool tried = false;
  for (const std::string& c : r.calls) tried = tried || is_next_best(c);
  ASSERT_TRUE(tried) << report;
  ASSERT_NE(report.find("refinement kept: a measured neighbour"), std::string::npos) << report;
  const std::string kept = r.kept_line();
  EXPECT_TRUE(is_next_best(kept)) << report;
  EXPECT_EQ(strip_of(kept), -1) << report;
  r.g.box2_calls = 0;
  EXPECT_EQ(mismatches(run(r.p, w, h), reference(w, h)), 0u);
  const index_t step = step_of(kept);
  EXPECT_EQ(r.g.box2_calls.load(), step > 0 ? static_cast<int>((h + step - 1) / step) : 1) << report;
  EXPECT_EQ(r.p.builds(), 1u);
}

TEST(auto_pipeline, refinement_of_a_tile_takes_its_strips_away_at_the_step_it_walked_to) {
  // The same tile, its next-best the loop over rows it beat. A table where the tile is faster at
  // twice the model's inner step, and the loop over rows without strips at that step fastest of
  // all: the walk moves to the doubled step, then tries its strips taken away, and keeps that.
  const index_t w = 1024, h = 256;
  index_t model_strip = -1, model_step = -1;
  ASSERT_NO_FATAL_FAILURE(model_tile(w, h, model_strip, model_step));
  refined_stencil r(w, h);
  const index_t target = 2 * model_step;
  r.refine(16, [&](const std::string& candidate, index_t) {
    if (step_of(candidate) != target) return 1e-3;
    return is_next_best(candidate) ? 0.5e-3 : 0.8e-3;
  });
  const std::string& report = r.report;
  ASSERT_NE(report.find("(a tile)"), std::string::npos) << report;
  const std::string kept = r.kept_line();
  ASSERT_TRUE(is_next_best(kept)) << report;
  EXPECT_EQ(step_of(kept), target) << report;
  EXPECT_EQ(strip_of(kept), -1) << report;
  r.g.box2_calls = 0;
  EXPECT_EQ(mismatches(run(r.p, w, h), reference(w, h)), 0u);
  EXPECT_EQ(r.g.box2_calls.load(), static_cast<int>((h + target - 1) / target)) << report;
}

}  // namespace slinky
