// auto_pipeline's measured refinement, the candidates evaluated before the walk: the model's
// choices for other prefetch windows (refine_options::prefetch_windows), with injected tables of
// timings.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "slinky/scheduler/test/auto_pipeline_test_util.h"

namespace slinky {

using namespace auto_pipeline_test;

namespace {

// Rows of 1024 floats on the small machine: the model takes a tile, whose steps depend on the
// prefetch window (the small machine has none).
constexpr index_t w = 1024, h = 256;

// The name of the candidate schedule() takes for the stencil on the small machine with a
// prefetch window of `window` bytes ("box2: step S, strips of T"), and that step and strip.
std::string tile_for_window(index_t window, index_t& step, index_t& strip) {
  stencil_graph g;
  machine m = small_machine();
  m.prefetch_bytes = window;
  const schedule_report r =
      schedule({g.in}, {g.out}, schedule_shapes().add(g.in, {w + 4, h + 4}).add(g.out, {w, h}), m);
  EXPECT_EQ(r.loops.size(), 1u);
  if (r.loops.empty()) return std::string();
  const schedule_report::loop_decision& d = r.loops[0];
  EXPECT_TRUE(d.looped && d.outer_dim >= 0) << r.to_string(&g.ctx);
  step = d.step;
  strip = d.outer_step;
  return "box2: step " + std::to_string(step) + ", strips of " + std::to_string(strip);
}

// The candidate schedule() takes for the stencil on the small machine with an input of iw x ih and
// an output of w x h, named as the refinement names it ("box2: step S[, strips of T]").
std::string choice_for(index_t iw, index_t ih, index_t w, index_t h) {
  stencil_graph g;
  const schedule_report r =
      schedule({g.in}, {g.out}, schedule_shapes().add(g.in, {iw, ih}).add(g.out, {w, h}), small_machine());
  EXPECT_EQ(r.loops.size(), 1u);
  if (r.loops.empty() || !r.loops[0].looped) return std::string();
  const schedule_report::loop_decision& d = r.loops[0];
  std::string name = "box2: step " + std::to_string(d.step);
  if (d.outer_dim >= 0) name += ", strips of " + std::to_string(d.outer_step);
  return name;
}

index_t strip_of(const std::string& candidate) {
  const std::size_t at = candidate.find("strips of ");
  return at == std::string::npos ? -1 : std::stoll(candidate.substr(at + 10));
}

refine_options first_options(int evaluations) {
  refine_options o;
  o.max_evaluations = evaluations;
  o.repetitions = 1;
  o.prefetch_windows = {0, 2048};
  return o;
}

}  // namespace

TEST(auto_pipeline, refinement_evaluates_the_models_choice_for_another_prefetch_window_first) {
  index_t model_step = 0, model_strip = 0, step = 0, strip = 0;
  const std::string model = tile_for_window(0, model_step, model_strip);
  const std::string other = tile_for_window(2048, step, strip);
  ASSERT_NE(model, other) << "the window changes the tile on the small machine";
  ASSERT_NE(strip, model_strip);

  // The other window's choice is the fastest: evaluated right after the model's choice (the
  // window of 0 bytes is the machine's own: skipped), the walk goes on from it (its neighbours
  // keep its strips, the step first), and it is kept; the kept pipeline computes the reference,
  // box2 called once per row block of every strip.
  refined_stencil r(w, h);
  r.refine(first_options(4), [&](const std::string& candidate, index_t) { return candidate == other ? 0.5e-3 : 1e-3; });
  ASSERT_GE(r.calls.size(), 3u) << r.report;
  EXPECT_EQ(r.calls[0], model) << r.report;
  EXPECT_EQ(r.calls[1], other) << r.report;
  EXPECT_EQ(strip_of(r.calls[2]), strip) << r.report;
  EXPECT_NE(r.report.find(other + " (the model's choice for a prefetch window of 2048 bytes)\n"), std::string::npos)
      << r.report;
  EXPECT_EQ(r.report.find("prefetch window of 0 bytes"), std::string::npos) << r.report;
  EXPECT_NE(r.report.find("refinement kept: a measured neighbour"), std::string::npos) << r.report;
  EXPECT_EQ(r.kept_line(), "  " + other) << r.report;
  r.g.box2_calls = 0;
  EXPECT_EQ(mismatches(run(r.p, w, h), reference(w, h)), 0u);
  EXPECT_EQ(r.g.box2_calls.load(), static_cast<int>(((w + strip - 1) / strip) * ((h + step - 1) / step))) << r.report;
}

TEST(auto_pipeline, refinement_walks_from_the_model_where_the_other_window_is_slower) {
  index_t model_step = 0, model_strip = 0, step = 0, strip = 0;
  const std::string model = tile_for_window(0, model_step, model_strip);
  const std::string other = tile_for_window(2048, step, strip);
  ASSERT_NE(model, other);
  // The other window's choice is evaluated (and counted in the budget), slower: the walk starts
  // from the model's choice (its neighbours keep its strips, the step first), which is kept.
  refined_stencil r(w, h);
  r.refine(first_options(3), [&](const std::string& candidate, index_t) {
    return candidate == other ? 2e-3 : candidate == model ? 1e-3 : 1.5e-3;
  });
  ASSERT_GE(r.calls.size(), 3u) << r.report;
  EXPECT_EQ(r.calls[1], other) << r.report;
  EXPECT_EQ(strip_of(r.calls[2]), model_strip) << r.report;
  EXPECT_NE(r.report.find("3 candidates evaluated"), std::string::npos) << r.report;
  EXPECT_NE(r.report.find("refinement kept: the model's choice"), std::string::npos) << r.report;
}

TEST(auto_pipeline, refinement_without_other_windows_or_with_the_machines_own_evaluates_none_first) {
  index_t model_step = 0, model_strip = 0;
  const std::string model = tile_for_window(0, model_step, model_strip);
  for (const std::vector<index_t>& windows : {std::vector<index_t>{}, std::vector<index_t>{0}}) {
    refined_stencil r(w, h);
    refine_options o = first_options(2);
    o.prefetch_windows = windows;
    r.refine(o, [&](const std::string&, index_t) { return 1e-3; });
    EXPECT_EQ(r.report.find("prefetch window"), std::string::npos) << r.report;
    // The first candidate after the model's is its step doubled (the walk's first neighbour).
    ASSERT_GE(r.calls.size(), 2u) << r.report;
    EXPECT_EQ(r.calls[1], "box2: step " + std::to_string(2 * model_step) + ", strips of " + std::to_string(model_strip))
        << r.report;
  }
}

TEST(auto_pipeline, refinement_starts_from_the_models_choice_for_the_evaluations_own_extents) {
  // An output of 300 x 200 is of the class of 512 x 256 (its input of 304 x 204, of 512 x 256):
  // rows of 300 floats and of 512 do not take the same step on the small machine.
  constexpr index_t ow = 300, oh = 200;
  const std::string own = choice_for(ow + 4, oh + 4, ow, oh);
  const std::string largest = choice_for(512, 256, 512, 256);
  ASSERT_FALSE(own.empty());
  ASSERT_FALSE(largest.empty());
  ASSERT_NE(own, largest) << "the extents change the model's choice on the small machine";

  // Refined: the model's choice is the one for the evaluation's own extents (the refinement
  // measures on its buffers), and the class's choice is evaluated right after it; slower, it is
  // not kept, and the walk goes on from the model's choice.
  refined_stencil r(ow, oh);
  refine_options o = first_options(2);
  o.prefetch_windows.clear();
  r.refine(o, [&](const std::string& candidate, index_t) { return candidate == largest ? 2e-3 : 1e-3; });
  ASSERT_GE(r.calls.size(), 2u) << r.report;
  EXPECT_EQ(r.calls[0], own) << r.report;
  EXPECT_EQ(r.calls[1], largest) << r.report;
  EXPECT_NE(r.report.find(largest + " (the model's choice for the class's largest extents)\n"), std::string::npos)
      << r.report;
  EXPECT_EQ(r.kept_line(), "  " + own) << r.report;

  // Faster, the class's choice is kept, and the walk goes on from it.
  refined_stencil faster(ow, oh);
  faster.refine(o, [&](const std::string& candidate, index_t) { return candidate == largest ? 0.5e-3 : 1e-3; });
  EXPECT_EQ(faster.kept_line(), "  " + largest) << faster.report;

  // Not refined, the class is scheduled for its largest shapes (the schedule depends only on the
  // class): the other shape of the class runs the same pipeline.
  stencil_graph g;
  auto_pipeline p(g.ctx, {g.in}, {g.out}, build_options(), small_machine());
  EXPECT_EQ(mismatches(run(p, ow, oh), reference(ow, oh)), 0u);
  const std::string report = p.last_report();
  const index_t step = step_of(largest);
  EXPECT_NE(report.find("in steps of " + std::to_string(step) + ","), std::string::npos) << report;
  EXPECT_EQ(mismatches(run(p, 500, 250), reference(500, 250)), 0u);
  EXPECT_EQ(p.builds(), 1u);
}

}  // namespace slinky
