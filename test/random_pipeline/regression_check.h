// The check of the random pipeline tester's regression tests (random_regressions_test.cc,
// random_regressions_copies_test.cc), which its printed tests (random_test::to_cpp) use too: a
// pipeline built unscheduled and with a schedule, run on the same inputs, must give the same
// results.
#ifndef SLINKY_TOOLS_RANDOM_PIPELINE_REGRESSION_CHECK_H
#define SLINKY_TOOLS_RANDOM_PIPELINE_REGRESSION_CHECK_H

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

#include "random_pipeline/build.h"
#include "slinky/base/thread_pool.h"
#include "slinky/builder/pipeline.h"

namespace slinky {
namespace random_test {

// A buffer passed to evaluate: its element size, bounds and layout (as host_buffer takes them),
// and, for an input, the seed it is filled with (fill).
struct buffer_arg {
  int elem_size = 4;
  box bounds = {};
  std::vector<int> order = {};
  std::vector<index_t> padding = {};
  std::uint64_t seed = 0;
};

// What expect_same runs, and the checks it makes besides the ones it always makes.
struct comparison {
  // The pipeline's inputs and outputs, in the order it takes them.
  std::vector<buffer_arg> inputs = {};
  std::vector<buffer_arg> outputs = {};
  // The monitor of the callbacks (random_test::kernel(..., &monitor)), if they have one.
  random_test::monitor* monitor = nullptr;
  // The pool the scheduled pipeline runs on (none: parallel loops run serially).
  thread_pool* pool = nullptr;
  // A callback fails on purpose (kernel_spec::fail_on_call; needs the monitor). Each run that
  // calls it that often returns its result, and outputs are compared only if neither run did.
  bool failing = false;
  // With a failing callback: the schedule has no parallel loop, so no callback may begin after
  // the failure.
  bool serial = true;
  // Intermediates whose largest heap allocation may not be larger scheduled than unscheduled.
  std::vector<buffer_expr_ptr> no_larger = {};
  // If not empty, the bound of no_larger is the largest allocation of each in any of these
  // pipelines instead of the unscheduled one (the memory bound of parallel loops: the schedule
  // with its parallel loops serial, serial with their steps times in_flight(), and serial with
  // the funcs the builder may make stages of a pipelined loop computed at that loop; see
  // docs/random_testing.md, oracle item 8). They run on the same inputs, without a pool.
  std::vector<const pipeline*> bounded_by = {};
  // Funcs (stage indices) whose callbacks may compute no more points scheduled than unscheduled
  // (needs the monitor).
  std::vector<int> computed_once = {};
  // Copies the unscheduled pipeline makes views: their destinations (intermediates it does not
  // allocate) and their stages (funcs made with random_test::counted_copy, which it does not
  // call; needs the monitor).
  std::vector<buffer_expr_ptr> views = {};
  std::vector<int> view_stages = {};
  // Copies (stage, calls) the unscheduled pipeline calls at most that often (reshapes: the runs
  // contiguous in both buffers; funcs made with random_test::counted_copy; needs the monitor).
  std::vector<std::pair<int, index_t>> copy_calls_at_most = {};
  // Intermediates allocated at most once by the scheduled pipeline.
  std::vector<buffer_expr_ptr> allocated_once = {};
  // Per output, the values the unscheduled pipeline must give (dim 0 fastest); empty: not
  // checked.
  std::vector<std::vector<std::int64_t>> reference = {};
};

// Runs `unscheduled` and then `scheduled` on the same inputs, each with its own eval_hooks (every
// allocation through the hooks, frees poisoned, failed checks recorded), and expects: both runs
// succeed (return 0), with no failed check and no failure of the monitor, as many frees as
// allocations, and the same outputs; then the checks asked for in `c`. With a failing callback,
// the checks of the tester's oracle instead (docs/random_testing.md): a run returns the
// failure's result if the callback failed in it (else 0), call_failed is called once if it did
// (else never), no callback begins after the failure in the unscheduled run (nor in the scheduled
// one if it is serial), nothing fails otherwise, the scheduled run frees what it allocates, and
// the outputs are the same if neither run failed.
inline void expect_same(const pipeline& unscheduled, const pipeline& scheduled, const comparison& c) {
  auto make = [](const std::vector<buffer_arg>& args) {
    std::vector<std::unique_ptr<host_buffer>> result;
    for (const buffer_arg& a : args) {
      result.push_back(std::make_unique<host_buffer>(a.elem_size, a.bounds, a.order, a.padding));
    }
    return result;
  };
  auto raw = [](const std::vector<std::unique_ptr<host_buffer>>& buffers) {
    std::vector<const raw_buffer*> result;
    for (const std::unique_ptr<host_buffer>& b : buffers) result.push_back(&b->raw());
    return result;
  };
  const std::vector<std::unique_ptr<host_buffer>> ins = make(c.inputs);
  for (std::size_t i = 0; i < ins.size(); ++i) fill(*ins[i], c.inputs[i].seed);
  const std::vector<std::unique_ptr<host_buffer>> a = make(c.outputs), b = make(c.outputs);
  eval_hooks a_hooks, b_hooks;
  b_hooks.config.thread_pool = c.pool;
  monitor* m = c.monitor;
  auto monitor_failure = [m]() { return m ? m->failure() : std::string(); };
  ASSERT_TRUE(m || (!c.failing && c.computed_once.empty() && c.view_stages.empty() && c.copy_calls_at_most.empty()))
      << "a failing callback, computed_once, view_stages and copy_calls_at_most need the monitor";

  bool a_failed = false, b_failed = false;
  std::vector<index_t> a_points, a_copy_calls;
  if (c.failing) {
    const index_t a_result = unscheduled.evaluate(raw(ins), raw(a), a_hooks.context);
    a_failed = m->failed;
    EXPECT_EQ(a_result, a_failed ? injected_failure : 0) << "unscheduled";
    EXPECT_EQ(a_hooks.call_failures(), a_failed ? 1 : 0) << "unscheduled";
    EXPECT_EQ(m->after_failure.load(), 0) << "unscheduled";
    EXPECT_EQ(a_hooks.check() + m->failure(), "") << "unscheduled";
    a_points = m->points;
    a_copy_calls = m->copy_calls;
    m->reset();
    const index_t b_result = scheduled.evaluate(raw(ins), raw(b), b_hooks.context);
    b_failed = m->failed;
    EXPECT_EQ(b_result, b_failed ? injected_failure : 0) << "scheduled";
    EXPECT_EQ(b_hooks.call_failures(), b_failed ? 1 : 0) << "scheduled";
    if (c.serial) {
      EXPECT_EQ(m->after_failure.load(), 0) << "scheduled";
    }
    EXPECT_EQ(b_hooks.check() + m->failure(), "") << "scheduled";
    EXPECT_EQ(b_hooks.allocations(), b_hooks.frees()) << "scheduled";
  } else {
    ASSERT_EQ(unscheduled.evaluate(raw(ins), raw(a), a_hooks.context), 0) << "unscheduled";
    EXPECT_EQ(a_hooks.check() + monitor_failure(), "") << "unscheduled";
    EXPECT_EQ(a_hooks.allocations(), a_hooks.frees()) << "unscheduled";
    if (m) {
      a_points = m->points;
      a_copy_calls = m->copy_calls;
      m->points.clear();
      m->computed.clear();
      m->repeated.clear();
      m->copy_calls.clear();
    }
    ASSERT_EQ(scheduled.evaluate(raw(ins), raw(b), b_hooks.context), 0) << "scheduled";
    EXPECT_EQ(b_hooks.check() + monitor_failure(), "") << "scheduled";
    EXPECT_EQ(b_hooks.allocations(), b_hooks.frees()) << "scheduled";
  }
  for (std::size_t i = 0; i < a.size() && !a_failed && !b_failed; ++i) {
    EXPECT_EQ(compare(a[i]->raw(), b[i]->raw()), "") << "output " << i;
  }
  // The bounding pipelines' sizes count the allocations that took over a block freed just before,
  // which the hooks do not see (largest_allocations).
  std::vector<var> no_larger_syms;
  for (const buffer_expr_ptr& t : c.no_larger) no_larger_syms.push_back(t->sym());
  std::vector<index_t> bounds(c.no_larger.size(), 0);
  for (const pipeline* p : c.bounded_by) {
    const std::vector<std::unique_ptr<host_buffer>> outs = make(c.outputs);
    eval_hooks hooks;
    ASSERT_EQ(p->evaluate(raw(ins), raw(outs), hooks.context), 0) << "bounding pipeline";
    const std::vector<index_t> largest = largest_allocations(*p, no_larger_syms, raw(ins), raw(outs));
    for (std::size_t k = 0; k < bounds.size(); ++k) {
      bounds[k] = std::max({bounds[k], largest[k], hooks.max_bytes(no_larger_syms[k])});
    }
  }
  for (std::size_t k = 0; k < c.no_larger.size(); ++k) {
    const var t = no_larger_syms[k];
    const index_t bound = c.bounded_by.empty() ? a_hooks.max_bytes(t) : bounds[k];
    EXPECT_LE(b_hooks.max_bytes(t), bound) << "largest allocation of no_larger[" << k << "]";
  }
  for (int stage : c.computed_once) {
    const index_t before = stage < static_cast<int>(a_points.size()) ? a_points[stage] : 0;
    EXPECT_LE(m->points_of(stage), before) << "points f" << stage << " computes";
  }
  for (std::size_t k = 0; k < c.views.size(); ++k) {
    EXPECT_EQ(a_hooks.allocations(c.views[k]->sym()), 0) << "allocations of views[" << k << "] unscheduled";
  }
  for (const std::pair<int, index_t>& most : c.copy_calls_at_most) {
    const index_t calls = most.first < static_cast<int>(a_copy_calls.size()) ? a_copy_calls[most.first] : 0;
    EXPECT_LE(calls, most.second) << "calls of the copy f" << most.first << " unscheduled";
  }
  for (int stage : c.view_stages) {
    const index_t calls = stage < static_cast<int>(a_copy_calls.size()) ? a_copy_calls[stage] : 0;
    EXPECT_EQ(calls, 0) << "calls of the copy f" << stage << " unscheduled";
  }
  for (std::size_t k = 0; k < c.allocated_once.size(); ++k) {
    EXPECT_LE(b_hooks.allocations(c.allocated_once[k]->sym()), 1) << "allocations of allocated_once[" << k << "]";
  }
  for (std::size_t i = 0; i < c.reference.size(); ++i) {
    EXPECT_TRUE(equal_values(*a[i], c.reference[i])) << "output " << i << " of the unscheduled pipeline";
  }
}

}  // namespace random_test
}  // namespace slinky

#endif  // SLINKY_TOOLS_RANDOM_PIPELINE_REGRESSION_CHECK_H
