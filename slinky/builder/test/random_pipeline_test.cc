// Random pipelines under random schedules must give the results of the unscheduled pipeline and
// of a plain reference. Time-boxed by SLINKY_RANDOM_SECONDS (default 120), seeded by
// SLINKY_RANDOM_SEED (default 1); SLINKY_RANDOM_FEATURES switches generator features. Auto mode
// (the scheduler's schedules) is off here: the scheduler is a layer above the builder, and its
// tests run auto mode (slinky/scheduler/test/random_schedule_test.cc).
#include <gtest/gtest-spi.h>
#include <gtest/gtest.h>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <functional>
#include <iostream>
#include <string>

#include "random_pipeline/regression_check.h"
#include "random_pipeline/run.h"

namespace slinky {
namespace random_test {
namespace {

std::string env_or(const char* name, const std::string& default_value) {
  const char* s = std::getenv(name);
  return s && *s ? s : default_value;
}

TEST(random_pipeline, reference_of_a_stencil) {
  // out(x) = mix of in(x - 1), in(x), in(x + 1): the reference reads what the access says.
  graph_spec g;
  buffer_spec in;
  in.input = true;
  in.base = {{0, 0}};
  in.margin_lo = in.margin_hi = {0};
  buffer_spec out;
  out.output = true;
  out.producer = 0;
  out.base = {{2, 5}};
  out.margin_lo = out.margin_hi = {0};
  g.buffers = {in, out};
  stage_spec s;
  s.inputs = {{.buffer = 0, .dims = {{.var = 0, .lo = -1, .hi = 1}}}};
  s.outputs = {1};
  g.stages = {s};
  const plan p = make_plan(g);
  EXPECT_EQ(p.bounds[0], (box{{0, 6}}));
  EXPECT_EQ(p.bounds[1], (box{{2, 5}}));
  EXPECT_EQ(p.regions[0], (box{{2, 5}}));
}

TEST(random_pipeline, legal_compute_at) {
  // in -> f0 -> t1 -> f1 -> out2, f1 looped over x: f0 may run in that loop.
  graph_spec g;
  g.buffers.resize(3);
  g.buffers[0].input = true;
  g.buffers[1].producer = 0;
  g.buffers[2].producer = 1;
  g.buffers[2].output = true;
  g.stages.resize(2);
  g.stages[0].inputs = {{.buffer = 0, .dims = {{.var = 0}}}};
  g.stages[0].outputs = {1};
  g.stages[1].inputs = {{.buffer = 1, .dims = {{.var = 0}}}};
  g.stages[1].outputs = {2};
  schedule_spec s;
  s.stages.resize(2);
  s.stages[1].loops = {{.var = 0, .step = 2}};
  s.stages[0].compute_at = level{.stage = 1, .var = 0};
  placement p = legalize(g, s);
  ASSERT_TRUE(s.stages[0].compute_at.has_value());
  EXPECT_EQ(p.compute_chain[0], (std::vector<level>{{.stage = 1, .var = 0}}));
  // f1 produces the output: it cannot be computed inside f0, and a loop it does not have is
  // dropped.
  s.stages[1].compute_at = level{.stage = 0, .var = 0};
  s.stages[1].loops.push_back({.var = 1, .step = 3});
  legalize(g, s);
  EXPECT_FALSE(s.stages[1].compute_at.has_value());
  EXPECT_EQ(s.stages[1].loops.size(), 1u);
}

// out1(x) = in0(x), computed by func f<stage> (whose index salts the values), as a pipeline.
pipeline one_func(int stage, monitor* m) {
  node_context ctx;
  var x(ctx, "x");
  auto in0 = buffer_expr::make(ctx, "in0", 1, 4);
  auto out1 = buffer_expr::make(ctx, "out1", 1, 4);
  func f(kernel({.stage = stage, .inputs = {{{.var = 0}}}, .outputs = {1}}, m), {{in0, {point(x)}}}, {{out1, {x}}}, {},
         {.name = "f"});
  return build_pipeline(ctx, {in0}, {out1});
}

// The messages of the failures a check reports, fatal or not.
std::string failures_of(const std::function<void()>& check) {
  testing::TestPartResultArray results;
  {
    testing::ScopedFakeTestPartResultReporter reporter(
        testing::ScopedFakeTestPartResultReporter::INTERCEPT_ONLY_CURRENT_THREAD, &results);
    check();
  }
  std::string messages;
  for (int i = 0; i < results.size(); ++i) messages.append(results.GetTestPartResult(i).message()).append("\n");
  return messages;
}

// expect_same (random_pipeline/regression_check.h), the check of the regression tests, fails where the
// pipelines differ.
TEST(random_pipeline, expect_same_reports_differences) {
  monitor m;
  m.allowed = {{}, {{0, 3}}};
  const pipeline a = one_func(0, &m), b = one_func(1, &m);
  const comparison c = {.inputs = {{.bounds = {{0, 3}}, .seed = 1}}, .outputs = {{.bounds = {{0, 3}}}}, .monitor = &m};
  EXPECT_EQ(failures_of([&]() { expect_same(a, a, c); }), "");
  // Other values.
  EXPECT_NE(failures_of([&]() { expect_same(a, b, c); }).find("output 0"), std::string::npos);
  comparison wrong_reference = c;
  wrong_reference.reference = {{1, 2, 3, 4}};
  EXPECT_NE(failures_of([&]() { expect_same(a, a, wrong_reference); }).find("of the unscheduled pipeline"),
            std::string::npos);
  // A callback asked to compute more than the monitor allows fails, and so does the run.
  comparison crop = c;
  crop.inputs[0].bounds = {{0, 4}};
  crop.outputs = {{.bounds = {{0, 4}}}};
  EXPECT_NE(failures_of([&]() { expect_same(a, a, crop); }).find("unscheduled"), std::string::npos);
  m.reset();
}

TEST(random_pipeline, forked_children_use_their_own_thread_pools) {
  // The batch forks workers after cases ran in the parent. A child inherits the parent's pool
  // objects but not their threads (and possibly a mutex a parent's worker held at the fork), so
  // it must make its own: the pools are per process. Each child runs a parallel loop on the
  // 3-worker pool under an alarm; one that deadlocks is killed by SIGALRM and fails the test.
  thread_pool* parent = shared_thread_pool(3);
  if (!parent) GTEST_SKIP() << "built without slinky/base/thread_pool_impl.h";
  EXPECT_EQ(shared_thread_pool(3), parent);
  EXPECT_NE(shared_thread_pool(1), parent);
  for (int child = 0; child < 20; ++child) {
    std::atomic<int> sum{0};
    parent->parallel_for(64, [&](std::size_t i) { sum += static_cast<int>(i); });
    ASSERT_EQ(sum.load(), 64 * 63 / 2);
    // Fork while the workers are winding down, when one is most likely to hold the mutex.
    const pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      alarm(10);
      thread_pool* own = shared_thread_pool(3);
      if (own == parent || shared_thread_pool(3) != own) _exit(2);
      std::atomic<int> child_sum{0};
      own->parallel_for(64, [&](std::size_t i) { child_sum += static_cast<int>(i); });
      _exit(child_sum.load() == 64 * 63 / 2 ? 0 : 3);
    }
    int status = 0;
    ASSERT_EQ(waitpid(pid, &status, 0), pid);
    ASSERT_TRUE(WIFEXITED(status)) << "child " << child << " killed by signal "
                                   << (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
    EXPECT_EQ(WEXITSTATUS(status), 0) << "child " << child;
  }
}

TEST(random_pipeline, schedules_do_not_change_results) {
  batch_options o;
  o.seed = std::strtoull(env_or("SLINKY_RANDOM_SEED", "1").c_str(), nullptr, 10);
  o.seconds = std::atof(env_or("SLINKY_RANDOM_SECONDS", "120").c_str());
  o.fork = env_or("SLINKY_RANDOM_FORK", "1") != "0";
  const std::string features = env_or("SLINKY_RANDOM_FEATURES", "");
  ASSERT_TRUE(o.f.parse("-auto"));
  ASSERT_TRUE(o.f.parse(features)) << "unknown feature in SLINKY_RANDOM_FEATURES=" << features;
  std::cout << "random pipelines: SLINKY_RANDOM_SEED=" << o.seed << ", SLINKY_RANDOM_SECONDS=" << o.seconds
            << (features.empty() ? "" : ", SLINKY_RANDOM_FEATURES=" + features) << "\nfeatures " << o.f.to_string()
            << "\n";
  const batch_result r = run_batch(o);
  std::cout << "random pipelines: " << r.cases << " cases, " << r.runs << " pipelines built and run in " << r.seconds
            << " s\nper mode: " << r.cases - r.auto_cases << " random, " << r.auto_cases << " auto ("
            << 3 * r.auto_cases << " auto schedules, " << r.auto_looped << " with a loop)\n";
  EXPECT_GT(r.cases, 0);
  for (const std::string& f : r.failures) ADD_FAILURE() << f;
}

}  // namespace
}  // namespace random_test
}  // namespace slinky
