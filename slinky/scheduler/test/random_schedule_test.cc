// The scheduler on random graphs (test/random_pipeline's generator and reference): every
// schedule it makes builds, and computes exactly the reference's outputs, with callbacks checking
// that they never read outside their inputs or write outside what the unscheduled pipeline
// computes. Machines with tiny caches make it choose loops on these small buffers.
// SLINKY_SCHEDULER_RANDOM_CASES (default 60) and SLINKY_SCHEDULER_RANDOM_SEED (default 1) choose
// the graphs; each runs on 3 machines (one with 3 threads, run with a thread pool). The tester's
// auto mode (random_pipeline/auto.h) is tested here too: which cases it takes, and a time-boxed
// batch of auto-mode cases (SLINKY_SCHEDULER_AUTO_SECONDS, default 30; SLINKY_RANDOM_SEED).
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "random_pipeline/auto.h"
#include "random_pipeline/auto_schedule/auto_schedule.h"
#include "random_pipeline/build.h"
#include "random_pipeline/check.h"
#include "random_pipeline/generate.h"
#include "random_pipeline/run.h"
#include "slinky/scheduler/schedule.h"

namespace slinky {

using namespace random_test;

namespace {

// Auto mode's implementation, for the tests below (random_pipeline/auto_schedule/auto_schedule.h).
const bool auto_mode_enabled = []() {
  enable_auto_mode();
  return true;
}();

int env_int(const char* name, int def) {
  const char* v = std::getenv(name);
  return v ? std::atoi(v) : def;
}

machine tiny_machine(int kind) {
  machine m;
  m.l1_bytes = kind == 0 ? 16 : 64;
  m.l2_bytes = kind == 0 ? 64 : 256;
  m.l3_bytes = 1024;
  // Calls nearly free and fresh memory expensive: loops pay off even on buffers of a few elements.
  m.call_overhead_ns = 0.001;
  m.page_touch_ns = 1e5;
  m.fresh_block_bytes = 0;
  m.threads = kind == 2 ? 3 : 1;
  return m;
}

// Schedules the case's graph for machine `kind`, runs it, and returns "" if it matches the
// reference; sets looped if the scheduler made a loop.
std::string run_auto(const case_spec& c, int kind, bool& looped, std::string& report) {
  const graph_spec& g = c.graph;
  const plan p = make_plan(g);
  std::vector<std::unique_ptr<host_buffer>> inputs;
  std::vector<const raw_buffer*> input_raw, all_input_raw;
  for (std::size_t b = 0; b < g.buffers.size(); ++b) {
    if (!g.buffers[b].input) continue;
    inputs.push_back(internal_run::make_buffer(g.buffers[b], p.bounds[b]));
    fill(*inputs.back(), c.data_seed + b);
    all_input_raw.push_back(&inputs.back()->raw());
    if (!g.buffers[b].constant) input_raw.push_back(&inputs.back()->raw());
  }
  const auto expected = reference(g, p, all_input_raw);
  monitor m;
  m.allowed.resize(g.buffers.size());
  for (std::size_t b = 0; b < g.buffers.size(); ++b) {
    if (!g.buffers[b].input) m.allowed[b] = p.bounds[b];
  }
  // The graph unscheduled, then scheduled and built again.
  std::unique_ptr<built> bl = build(g, p, nullptr, &m, c.data_seed);
  std::vector<buffer_expr_ptr> ins, outs;
  schedule_shapes shapes;
  for (std::size_t b = 0; b < g.buffers.size(); ++b) {
    const bool input = g.buffers[b].input && !g.buffers[b].constant;
    if (input) ins.push_back(bl->buffers[b]);
    if (g.buffers[b].output) outs.push_back(bl->buffers[b]);
    if (!input && !g.buffers[b].output) continue;
    schedule_shapes::buffer_shape s;
    s.buffer = bl->buffers[b];
    for (const ival& i : p.bounds[b]) s.bounds.emplace_back(i.min, i.max);
    shapes.buffers.push_back(s);
  }
  // The radices given at run time (random_test::radix_lets), bound by the pipeline's lets.
  shapes.scalars = bl->lets;
  const schedule_report r = schedule(ins, outs, shapes, tiny_machine(kind));
  report = r.to_string(&bl->ctx);
  looped = false;
  for (const auto& l : r.loops) looped = looped || l.looped;
  bl->p = build_pipeline(bl->ctx, {}, ins, outs, pipeline_lets(*bl));

  std::vector<std::unique_ptr<host_buffer>> outputs;
  std::vector<const raw_buffer*> output_raw;
  std::vector<int> output_index;
  for (std::size_t i = 0; i < g.buffers.size(); ++i) {
    if (!g.buffers[i].output) continue;
    outputs.push_back(internal_run::make_buffer(g.buffers[i], p.bounds[i]));
    outputs.back()->fill_bytes(0xa5);
    output_raw.push_back(&outputs.back()->raw());
    output_index.push_back(static_cast<int>(i));
  }
  eval_hooks hooks(bl->p.body.symbols.get());
  if (kind == 2) hooks.config.thread_pool = shared_thread_pool(2);
  const index_t result = bl->p.evaluate(input_raw, output_raw, hooks.context);
  if (!m.kind().empty()) return m.kind() + ": " + m.failure();
  if (!hooks.check().empty()) return "check failed: " + hooks.check();
  if (result != 0) return "evaluate returned " + std::to_string(result);
  for (std::size_t i = 0; i < outputs.size(); ++i) {
    const std::string diff = compare(expected[output_index[i]]->raw(), outputs[i]->raw());
    if (!diff.empty()) return "output " + buffer_name(g, output_index[i]) + ": " + diff;
  }
  if (hooks.allocations() != hooks.frees()) return "leak";
  return "";
}

}  // namespace

TEST(random_schedule, computes_the_reference) {
  const int cases = env_int("SLINKY_SCHEDULER_RANDOM_CASES", 60);
  const int seed = env_int("SLINKY_SCHEDULER_RANDOM_SEED", 1);
  int runs = 0, looped_runs = 0;
  for (int i = 0; i < cases; ++i) {
    case_spec c = generate_case(static_cast<std::uint64_t>(seed) * 1000003 + i, features(), 0);
    c.graph.fail_stage = -1;
    for (int kind = 0; kind < 3; ++kind) {
      bool looped = false;
      std::string report;
      const std::string failure = run_auto(c, kind, looped, report);
      EXPECT_EQ(failure, "") << "case " << i << " of seed " << seed << ", machine " << kind << "\n" << report;
      ++runs;
      looped_runs += looped;
    }
  }
  std::printf("%d runs, %d with a loop\n", runs, looped_runs);
  // The tiny machines make the scheduler loop on most graphs: the test checks schedules, not
  // just unscheduled pipelines.
  EXPECT_GE(looped_runs * 2, runs);
}

// Auto mode: a quarter of the cases, chosen by seed, get three schedules for the scheduler (on the
// unscheduled graph, after a random schedule it leaves alone, and rescheduling one) on one
// machine; the rest of the case is what it is without auto mode.
TEST(random_schedule, auto_mode_cases) {
  features f, off, all;
  ASSERT_TRUE(off.parse("-auto"));
  EXPECT_FALSE(off.auto_schedule);
  ASSERT_TRUE(all.parse("auto_only"));
  int autos = 0, checked = 0;
  for (std::uint64_t i = 0; i < 400; ++i) {
    const std::uint64_t seed = case_seed(1, i);
    EXPECT_FALSE(auto_case(seed, off));
    EXPECT_TRUE(auto_case(seed, all));
    if (!auto_case(seed, f)) continue;
    ++autos;
    if (checked >= 8) continue;
    ++checked;
    const case_spec c = generate_case(seed, f);
    const case_spec plain = generate_case(seed, off);
    ASSERT_EQ(c.schedules.size(), 3u);
    EXPECT_EQ(c.schedules[0].automatic, auto_mode::fresh);
    EXPECT_EQ(c.schedules[1].automatic, auto_mode::keep);
    EXPECT_EQ(c.schedules[2].automatic, auto_mode::reschedule);
    for (const schedule_spec& s : c.schedules) {
      EXPECT_EQ(s.auto_machine, c.schedules[0].auto_machine);
      if (auto_machine_threads(s.auto_machine) > 1) {
        EXPECT_TRUE(s.thread_pool);
      }
    }
    for (const stage_schedule& st : c.schedules[0].stages) EXPECT_TRUE(st.loops.empty() && !st.compute_at);
    ASSERT_EQ(plain.schedules.size(), 6u);
    for (const schedule_spec& s : plain.schedules) EXPECT_EQ(s.automatic, auto_mode::none);
    EXPECT_EQ(plain.data_seed, c.data_seed);
    EXPECT_EQ(plain.graph.stages.size(), c.graph.stages.size());
    EXPECT_EQ(plain.schedules[0].stages.size(), c.schedules[1].stages.size());
    // Each auto schedule is built and run once, after the unscheduled pipeline.
    const outcome o = run_case(c, f);
    EXPECT_TRUE(o.ok()) << o.kind << ": " << o.message;
    EXPECT_EQ(o.runs, 4);
  }
  EXPECT_GT(autos, 60);
  EXPECT_LT(autos, 140);
}

// The cases the builder's random regression tests regenerate as canaries
// (slinky/builder/test/random_regressions_test.cc), which run there without auto mode: here with
// the tester's default features, auto mode included, as they were found.
TEST(random_schedule, builder_canaries_with_auto_mode) {
  const features f;
  const std::pair<std::uint64_t, std::int64_t> cases[] = {{1, 1056},  {6, 307},    {910, 51},
                                                          {71, 1638}, {1001, 425}, {1003, 2895}};
  for (auto [seed, index] : cases) {
    const case_spec c = generate_case(case_seed(seed, index), f);
    const outcome o = run_case(c, f);
    EXPECT_TRUE(o.ok()) << "seed " << seed << " case " << index << ": " << o.kind << ": " << o.message;
  }
}

// A batch of the tester in auto mode only: each case's three auto schedules build and compute what
// the unscheduled pipeline and the reference compute.
TEST(random_schedule, auto_mode_batch) {
  ASSERT_TRUE(auto_mode_enabled);
  batch_options o;
  o.seed = static_cast<std::uint64_t>(env_int("SLINKY_RANDOM_SEED", 1));
  o.seconds = env_int("SLINKY_SCHEDULER_AUTO_SECONDS", 30);
  ASSERT_TRUE(o.f.parse("auto_only"));
  const batch_result r = run_batch(o);
  std::printf("auto mode: %d cases (%d auto schedules, %d with a loop) in %.1f s\n", static_cast<int>(r.cases),
              static_cast<int>(3 * r.auto_cases), static_cast<int>(r.auto_looped), r.seconds);
  EXPECT_GT(r.auto_cases, 0);
  for (const std::string& f : r.failures) ADD_FAILURE() << f;
}

}  // namespace slinky
