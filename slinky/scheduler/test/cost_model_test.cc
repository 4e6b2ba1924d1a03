// The cost model's pricing of one candidate loop (loop_analysis.h and cost_model.h, internal): the
// rates between a level's budget and its capacity, the overlap a pipelined iteration reads from
// another core, the external windows a parallel iteration reads again, and the overlap a serial
// iteration reads again from a near cache. docs/scheduler.md, "The
// cost model".
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <memory>
#include <vector>

#include "slinky/builder/pipeline.h"
#include "slinky/scheduler/cost_model.h"
#include "slinky/scheduler/loop_analysis.h"
#include "slinky/scheduler/schedule.h"

namespace slinky {

using namespace scheduler_internal;

namespace {

index_t copy_kernel(const buffer<const float>&, const buffer<float>&) { return 0; }

// out = in, element by element (a pipeline evaluated for its memory).
index_t copy_1d(const buffer<const float>& in, const buffer<float>& out) {
  for (index_t x = out.dim(0).begin(); x < out.dim(0).end(); ++x) out(x) = in(x);
  return 0;
}

index_t product_kernel(const buffer<const float>&, const buffer<const float>&, const buffer<float>&) { return 0; }

// A graph analyzed as schedule() does, with the plan of a loop over one dim of its output.
struct planned {
  node_context ctx;
  buffer_expr_ptr in, out;
  std::vector<func> funcs;
  sched_graph g;
  std::vector<index_range> full;
  std::vector<int> members;
  std::unique_ptr<cost_model> model;
  std::unique_ptr<loop_analyzer> analyzer;

  void analyze(const schedule_shapes& shapes, const machine& m) {
    model = std::make_unique<cost_model>(m, 0.5);
    build_sched_graph({in}, {out}, shapes, g);
    full_regions(g, *model, full);
    for (int i : g.order) {
      if (g.nodes[i].group >= 0) members.push_back(i);
    }
    analyzer = std::make_unique<loop_analyzer>(g, full, *model);
  }
  loop_analysis plan(int dim, bool recompute = false) {
    loop_analysis a;
    analyzer->analyze(members[0], dim, members, recompute, a);
    return a;
  }
};

// The cost of a loop over the analyzed dim in steps of `step` on machine m.
double cost(const loop_analysis& a, index_t step, int workers, const machine& m, double* working_set = nullptr,
            int* level = nullptr) {
  const loop_estimate e = cost_model(m, 0.5).loop(a.counts, step, workers);
  if (working_set) *working_set = e.working_set;
  if (level) *level = e.level;
  return e.ns;
}

int level_of(double bytes, const machine& m) { return cost_model(m, 0.5).level_of(bytes); }

// in -> f0 -> ... -> f(k - 1) = out, element by element, 1-D; the intermediates in `storage`.
std::unique_ptr<planned> chain(int k, index_t n, const machine& m, memory_type storage = memory_type::automatic) {
  auto p = std::make_unique<planned>();
  var x(p->ctx, "x");
  p->in = buffer_expr::make(p->ctx, "in", 1, sizeof(float));
  buffer_expr_ptr prev = p->in;
  for (int i = 0; i < k; ++i) {
    auto next = buffer_expr::make(p->ctx, i + 1 == k ? std::string("out") : std::string("b").append(std::to_string(i)),
                                  1, sizeof(float));
    if (i + 1 < k) next->store_in(storage);
    p->funcs.push_back(
        func::make(copy_1d, {{prev, {point(x)}}}, {{next, {x}}}, {.name = std::string("f").append(std::to_string(i))}));
    prev = next;
  }
  p->out = prev;
  p->analyze(schedule_shapes().add(p->in, {n}).add(p->out, {n}), m);
  return p;
}

// in -> e (point) -> b1 (3x3) -> out (3x3), 2-D, w x h.
std::unique_ptr<planned> stencil3(index_t w, index_t h, const machine& m) {
  auto p = std::make_unique<planned>();
  var x(p->ctx, "x"), y(p->ctx, "y");
  const box_expr pt = {point(x), point(y)};
  const box_expr nbhd = {bounds(x - 1, x + 1), bounds(y - 1, y + 1)};
  p->in = buffer_expr::make(p->ctx, "in", 2, sizeof(float));
  auto e = buffer_expr::make(p->ctx, "e", 2, sizeof(float));
  auto b1 = buffer_expr::make(p->ctx, "b1", 2, sizeof(float));
  p->out = buffer_expr::make(p->ctx, "out", 2, sizeof(float));
  p->funcs.push_back(func::make(copy_kernel, {{p->in, pt}}, {{e, {x, y}}}, {.name = "e"}));
  p->funcs.push_back(func::make(copy_kernel, {{e, nbhd}}, {{b1, {x, y}}}, {.name = "b1"}));
  p->funcs.push_back(func::make(copy_kernel, {{b1, nbhd}}, {{p->out, {x, y}}}, {.name = "b2"}));
  p->analyze(schedule_shapes().add(p->in, {w + 4, h + 4}).add(p->out, {w, h}), m);
  return p;
}

// An evaluation context whose hooks allocate every intermediate and track the peak of their bytes.
struct peak_counter {
  index_t live = 0, peak = 0;
  eval_config config;
  eval_context context;

  peak_counter() {
    config.auto_stack_threshold = 0;
    config.allocate = [this](var, raw_buffer* b) -> void* {
      live += b->size_bytes();
      peak = std::max(peak, live);
      return b->allocate();
    };
    config.free = [this](var, raw_buffer* b, void* base) {
      live -= b->size_bytes();
      std::free(base);
    };
    context.config = &config;
  }
};

// The peak of the intermediates' memory while p evaluates the 1-D planned graph on n elements;
// its output is `factor` times its input.
index_t peak_bytes_1d(planned& p, index_t n, float factor = 1) {
  const pipeline pl = build_pipeline(p.ctx, {p.in}, {p.out});
  peak_counter counter;
  buffer<float, 1> in({n}), out({n});
  in.allocate();
  out.allocate();
  for (index_t x = 0; x < n; ++x) in(x) = static_cast<float>(x);
  EXPECT_EQ(pl.evaluate({&in}, {&out}, counter.context), 0);
  EXPECT_EQ(out(n - 1), factor * static_cast<float>(n - 1));
  EXPECT_EQ(counter.live, 0);
  return counter.peak;
}

machine test_machine() {
  machine m;
  m.l1_bytes = 32 * 1024;
  m.l2_bytes = 1024 * 1024;
  m.l3_bytes = 8 * 1024 * 1024;
  m.threads = 2;
  m.call_overhead_ns = 10;
  return m;
}

}  // namespace

// A working set just past the L2 budget costs just more than one just within it (before, the
// whole working set was priced at L3's rate from the first byte past the budget: a jump of a
// third of the loop's time here); one as large as the whole L2 costs what the L3 level costs.
TEST(cost_model, rates_rise_from_the_budget_to_the_capacity) {
  const machine m = test_machine();
  // In heap memory, the intermediates do not share storage.
  auto p = chain(4, 1 << 24, m, memory_type::heap);
  const loop_analysis plan = p->plan(0);
  ASSERT_TRUE(plan.ok);
  // 5 buffers of floats per element (in, 3 intermediates, out): 20 bytes. The budget, half the
  // L2, holds 26214 elements.
  double ws_in = 0, ws_past = 0;
  int level_in = -1, level_past = -1;
  const double in = cost(plan, 26214, 1, m, &ws_in, &level_in);
  const double past = cost(plan, 26500, 1, m, &ws_past, &level_past);
  EXPECT_DOUBLE_EQ(ws_in, 20 * 26214);
  EXPECT_EQ(level_in, 1);
  EXPECT_EQ(level_past, 2);
  EXPECT_LE(ws_in, 0.5 * m.l2_bytes);
  EXPECT_GT(ws_past, 0.5 * m.l2_bytes);
  EXPECT_GT(past, in);
  EXPECT_LT(past, 1.03 * in);

  // The same loop on a machine pricing L2 like L3: at the L2's capacity the rates agree.
  machine flat = m;
  flat.ns_per_byte[1] = flat.ns_per_byte[2];
  const index_t full_l2 = m.l2_bytes / 20;
  EXPECT_NEAR(cost(plan, full_l2, 1, m), cost(plan, full_l2, 1, flat), 1e-4 * cost(plan, full_l2, 1, m));
  // Halfway from the budget to the capacity, halfway from L2's rate to L3's on the bytes moved in
  // the loop (the calls and the streamed input and output are the same on both machines).
  machine l2_rate = m;
  l2_rate.ns_per_byte[2] = l2_rate.ns_per_byte[1];
  const index_t halfway = 3 * m.l2_bytes / 4 / 20;
  const double at_l2 = cost(plan, halfway, 1, l2_rate);
  const double at_l3 = cost(plan, halfway, 1, flat);
  EXPECT_NEAR(cost(plan, halfway, 1, m), (at_l2 + at_l3) / 2, 1e-4 * (at_l3 - at_l2));
  EXPECT_GT(at_l3, 1.1 * at_l2);
}

// Pipelined, each iteration reads from the core that computed them the rows of e and b1 that the
// previous iteration computed: 2 rows of each (a 3x3 stencil's overlap), priced at twice memory's
// rate beyond the working set's.
TEST(cost_model, pipelined_iterations_pay_for_the_overlap_they_hand_off) {
  const index_t w = 1024, h = 512;
  const machine m = test_machine();
  auto p = stencil3(w, h, m);
  const loop_analysis plan = p->plan(1);
  ASSERT_TRUE(plan.ok);
  EXPECT_EQ(plan.counts.sliding, 2);
  const double row_e = (w + 4) * 4.0, row_b1 = (w + 2) * 4.0;
  for (index_t step : {4, 16, 64}) {
    EXPECT_DOUBLE_EQ(plan.counts.overlap_bytes(step, plan.probe_step()), 2 * row_e + 2 * row_b1) << step;
  }
  // The pipelined cost's dependence on memory's rate, at a step whose working set is in L2:
  // per worker iteration, the overlap at twice the change of memory's rate, over the efficiency
  // of 0.9. (Nothing else in this loop is priced at memory's rate: its input and output fit the
  // L3's budget.)
  const index_t step = 4;
  machine slower = m;
  slower.ns_per_byte[3] += 0.01;
  ASSERT_EQ(level_of((w + 4) * (h + 4) * 4.0, m), 2);
  const double per_worker = std::ceil(static_cast<double>(h) / step / 2);
  const double expected = per_worker * (2 * row_e + 2 * row_b1) * 2 * 0.01 / 0.9;
  EXPECT_NEAR(cost(plan, step, 2, slower) - cost(plan, step, 2, m), expected, 1e-6 * expected);
  // Serially, the overlap stays in the core's cache: memory's rate does not matter.
  EXPECT_DOUBLE_EQ(cost(plan, step, 1, slower), cost(plan, step, 1, m));
}

// Data-parallel, the workers take turns: the rows of the input an iteration reads that the
// previous one read too (4 rows: the halo of two 3x3 stencils) come from where the input is, not
// from the core's cache, as they do serially.
TEST(cost_model, parallel_iterations_read_the_external_overlap_again) {
  const index_t w = 1024, h = 1024;
  machine m = test_machine();
  // An input that does not fit the L3: its overlap comes from memory.
  m.l3_bytes = 2 * 1024 * 1024;
  auto p = stencil3(w, h, m);
  const loop_analysis plan = p->plan(1, /*recompute=*/true);
  ASSERT_TRUE(plan.ok);
  ASSERT_EQ(level_of((w + 4) * (h + 4) * 4.0, m), 3);
  // e's window of in is step + 4 rows; consecutive windows share 4 rows.
  const double row_in = (w + 4) * 4.0;
  EXPECT_DOUBLE_EQ(plan.counts.external_cached_bytes(8, plan.probe_step()), 4 * row_in);
  // From memory, where the whole input is.
  ASSERT_EQ(plan.counts.external_cached.size(), 1);
  EXPECT_EQ(plan.counts.external_cached[0].level, memory_level);
  EXPECT_DOUBLE_EQ(plan.counts.external_cached[0].bytes(8, plan.probe_step()), 4 * row_in);
  // Changing memory's rate changes the parallel cost by the streamed bytes plus that overlap.
  const index_t step = 8;
  machine slower = m;
  slower.ns_per_byte[3] += 0.01;
  const loop_analysis& slower_plan = plan;
  const double streamed_per_iteration = (step * row_in + step * w * 4.0) * 0.01;
  const double per_worker = std::ceil(static_cast<double>(h) / step / 2);
  const double expected = per_worker * (streamed_per_iteration + 4 * row_in * 0.01) / 0.9;
  EXPECT_NEAR(cost(slower_plan, step, 2, slower) - cost(plan, step, 2, m), expected, 1e-6 * expected);
  // Serially, the overlap is in the core's cache: only the streamed bytes change.
  const double serial_expected = std::ceil(static_cast<double>(h) / step) * streamed_per_iteration;
  EXPECT_NEAR(cost(slower_plan, step, 1, slower) - cost(plan, step, 1, m), serial_expected, 1e-6 * serial_expected);
}

// Serially, the rows of e and b1 an iteration reads again of the previous one's windows (2 of each:
// the overlap of two 3x3 stencils) come from a near cache while the callbacks compute: where the
// working set is in L2, cost_model::overlap_hidden of them is not charged; where it is in the L3,
// all of them are.
TEST(cost_model, serial_iterations_hide_most_of_the_overlap_they_read_again_from_a_near_cache) {
  const index_t w = 1024, h = 512, step = 8;
  const double row_e = (w + 4) * 4.0, row_b1 = (w + 2) * 4.0;
  const double iterations = static_cast<double>(h / step);
  // The change of the cost with the rate of `level`, and what it charges at that rate per
  // iteration with `hidden` of the overlap not charged.
  auto check = [&](const machine& m, int level, double hidden) {
    auto p = stencil3(w, h, m);
    const loop_analysis plan = p->plan(1);
    ASSERT_TRUE(plan.ok);
    const double S = plan.probe_step();
    ASSERT_DOUBLE_EQ(plan.counts.overlap_bytes(step, S), 2 * row_e + 2 * row_b1);
    int at = -1;
    cost(plan, step, 1, m, nullptr, &at);
    ASSERT_EQ(at, level);
    machine slower = m;
    slower.ns_per_byte[level] += 0.01;
    const double charged = plan.counts.internal_bytes(step, S) - hidden * plan.counts.overlap_bytes(step, S) +
                           (1 - hidden) * plan.counts.external_cached_bytes(step, S);
    const double expected = iterations * charged * 0.01;
    EXPECT_NEAR(cost(plan, step, 1, slower) - cost(plan, step, 1, m), expected, 1e-6 * expected);
  };
  // The working set (about 150 KB) past the L1's capacity, within the L2's budget; the input and
  // output in the L3.
  const machine m = test_machine();
  check(m, 1, cost_model::overlap_hidden);
  // An L2 of 64 KiB and an L3 of 1 MiB: the working set in the L3, the input and output in memory
  // (no prefetching, which would hide some of memory's time behind the rest).
  machine small = m;
  small.l1_bytes = 16 * 1024;
  small.l2_bytes = 64 * 1024;
  small.l3_bytes = 1024 * 1024;
  small.prefetch_bytes = 0;
  check(small, 2, 0);
  EXPECT_GT(cost_model::overlap_hidden, 0);
  EXPECT_LT(cost_model::overlap_hidden, 1);
}

// (a x b) x c, n x n, looped over rows of abc: ab's rows move with the loop, b and c are read whole
// by every iteration. A serial loop whose steps the model prices within step_cost_tolerance (1%)
// of each other takes the one with the least memory: rows of 1 here, not the L1 budget's 4 rows
// (2 KiB of ab per row against 8 KiB, for about the same time: the loop's time is in the
// products).
TEST(cost_model, serial_steps_priced_alike_take_the_smaller_working_set) {
  const index_t n = 512;
  machine m = test_machine();
  m.threads = 1;
  node_context ctx;
  var i(ctx, "i"), j(ctx, "j");
  auto a = buffer_expr::make(ctx, "a", 2, sizeof(float));
  auto b = buffer_expr::make(ctx, "b", 2, sizeof(float));
  auto c = buffer_expr::make(ctx, "c", 2, sizeof(float));
  auto ab = buffer_expr::make(ctx, "ab", 2, sizeof(float));
  auto abc = buffer_expr::make(ctx, "abc", 2, sizeof(float));
  const interval_expr k = bounds(0, n - 1);
  func f_ab = func::make(product_kernel, {{a, {k, point(i)}}, {b, {point(j), k}}}, {{ab, {j, i}}}, {.name = "ab"});
  func f_abc = func::make(product_kernel, {{ab, {k, point(i)}}, {c, {point(j), k}}}, {{abc, {j, i}}}, {.name = "abc"});
  const schedule_shapes shapes = schedule_shapes().add(a, {n, n}).add(b, {n, n}).add(c, {n, n}).add(abc, {n, n});

  sched_graph g;
  build_sched_graph({a, b, c}, {abc}, shapes, g);
  const cost_model model(m, 0.5);
  std::vector<index_range> full;
  full_regions(g, model, full);
  std::vector<int> members;
  for (int node : g.order) {
    if (g.nodes[node].group >= 0) members.push_back(node);
  }
  loop_analyzer analyzer(g, full, model);
  loop_analysis plan;
  analyzer.analyze(members[0], 1, members, /*recompute=*/false, plan);
  ASSERT_TRUE(plan.ok);
  double ws1 = 0, ws4 = 0;
  const double one = cost(plan, 1, 1, m, &ws1);
  const double four = cost(plan, 4, 1, m, &ws4);
  EXPECT_DOUBLE_EQ(ws1, 2 * n * 4.0 + n * 4.0);
  EXPECT_DOUBLE_EQ(ws4, 4 * ws1);
  // 4 rows fit the L1 budget (16 KiB) and cost less than 1 row; within the tolerance.
  EXPECT_LT(four, one);
  EXPECT_LT(one, (1 + cost_model::step_cost_tolerance) * four);

  schedule_report r = schedule({a, b, c}, {abc}, shapes, m);
  ASSERT_TRUE(r.loops[0].looped) << r.to_string(&ctx);
  EXPECT_EQ(r.loops[0].dim, 1) << r.to_string(&ctx);
  EXPECT_EQ(r.loops[0].step, 1) << r.to_string(&ctx);
  EXPECT_DOUBLE_EQ(r.loops[0].cost_ns, one);
}

// An elementwise chain of 8 funcs over 16M floats on the development machine (48 KiB L1, 1 MiB L2,
// 11 ns per call), its intermediates in heap memory (not shared: 9 buffers, priced at L2's rate):
// the L2 budget's chunks of 14336 are the cheapest step, chunks of 8192 cost less than 1% more
// and hold 7 folds of 32 KiB instead of 56: the search takes them (the powers of two below the
// budget's step are priced too). Chunks of 4096 (1.6% more) are beyond the tolerance.
TEST(cost_model, serial_steps_priced_alike_take_the_least_memory) {
  machine m = test_machine();
  m.l1_bytes = 48 * 1024;
  m.l1_buffers = 6;
  m.call_overhead_ns = 11;
  m.threads = 1;
  const index_t n = 16 << 20;
  auto p = chain(8, n, m, memory_type::heap);
  const loop_analysis plan = p->plan(0);
  ASSERT_TRUE(plan.ok);
  double mem_budget = 0, mem_8192 = 0;
  const double at_budget = cost(plan, 14336, 1, m);
  const double at_8192 = cost(plan, 8192, 1, m);
  const double at_4096 = cost(plan, 4096, 1, m);
  mem_budget = cost_model(m, 0.5).loop(plan.counts, 14336, 1).memory;
  mem_8192 = cost_model(m, 0.5).loop(plan.counts, 8192, 1).memory;
  EXPECT_DOUBLE_EQ(mem_budget, 7 * 14336 * 4.0);
  EXPECT_DOUBLE_EQ(mem_8192, 7 * 8192 * 4.0);
  EXPECT_LT(at_budget, at_8192);
  EXPECT_LT(at_8192, (1 + cost_model::step_cost_tolerance) * at_budget);
  EXPECT_GT(at_4096, (1 + cost_model::step_cost_tolerance) * at_budget);

  schedule_report r = schedule({p->in}, {p->out}, schedule_shapes().add(p->in, {n}).add(p->out, {n}), m);
  ASSERT_TRUE(r.loops[0].looped) << r.to_string(&p->ctx);
  EXPECT_EQ(r.loops[0].step, 8192) << r.to_string(&p->ctx);
  EXPECT_DOUBLE_EQ(r.loops[0].cost_ns, at_8192);
}

// The builder gives an intermediate computed in a serial loop the memory of an earlier one of the
// same size whose users are all done (docs/builder.md, storage shared within an iteration): a
// chain of 8 funcs in chunks stores two blocks, not 7. The model counts the two blocks in the
// memory and the working set, and in the buffers an iteration streams through (4: L1's rate
// applies); in heap memory, which the builder never shares, all 7. The estimate's memory is the
// peak the allocation hooks see when the scheduled pipeline is evaluated.
TEST(cost_model, intermediates_share_storage_within_an_iteration) {
  machine m = test_machine();
  m.threads = 1;
  const index_t n = 1 << 20;
  for (memory_type storage : {memory_type::automatic, memory_type::heap}) {
    const bool shared = storage == memory_type::automatic;
    SCOPED_TRACE(shared ? "automatic" : "heap");
    auto p = chain(8, n, m, storage);
    const loop_analysis plan = p->plan(0);
    ASSERT_TRUE(plan.ok);
    const int stored = shared ? 2 : 7;
    const cost_model model(m, 0.5);
    for (index_t step : {256, 1024, 4096}) {
      const loop_estimate e = model.loop(plan.counts, step, 1);
      const double chunk = step * 4.0;
      EXPECT_DOUBLE_EQ(e.memory, stored * chunk) << step;
      EXPECT_DOUBLE_EQ(e.working_set, (stored + 2) * chunk) << step;
    }
    EXPECT_EQ(plan.counts.streamed_buffers(1), stored + 2);

    schedule_report r = schedule({p->in}, {p->out}, schedule_shapes().add(p->in, {n}).add(p->out, {n}), m);
    ASSERT_TRUE(r.loops[0].looped) << r.to_string(&p->ctx);
    const index_t step = r.loops[0].step;
    EXPECT_EQ(r.loops[0].memory_bytes, static_cast<index_t>(model.loop(plan.counts, step, 1).memory)) << step;
    EXPECT_EQ(peak_bytes_1d(*p, n), r.loops[0].memory_bytes) << step;
  }
}

// out = a + b, element by element.
index_t add_1d(const buffer<const float>& a, const buffer<const float>& b, const buffer<float>& out) {
  for (index_t x = out.dim(0).begin(); x < out.dim(0).end(); ++x) out(x) = a(x) + b(x);
  return 0;
}

// A 1-D graph of elementwise funcs: func i reads the buffers `reads[i]` (0: the input, j > 0: the
// output of func j - 1); the last func's output is the pipeline's.
std::unique_ptr<planned> dag(const std::vector<std::vector<int>>& reads, index_t n, const machine& m) {
  auto p = std::make_unique<planned>();
  var x(p->ctx, "x");
  std::vector<buffer_expr_ptr> bufs = {buffer_expr::make(p->ctx, "in", 1, sizeof(float))};
  for (std::size_t i = 0; i < reads.size(); ++i) {
    const std::string name = std::string(1, static_cast<char>('a' + i));
    bufs.push_back(buffer_expr::make(p->ctx, i + 1 == reads.size() ? std::string("out") : name, 1, sizeof(float)));
    const std::vector<int>& r = reads[i];
    if (r.size() == 1) {
      p->funcs.push_back(func::make(copy_1d, {{bufs[r[0]], {point(x)}}}, {{bufs.back(), {x}}}, {.name = name}));
    } else {
      p->funcs.push_back(func::make(add_1d, {{bufs[r[0]], {point(x)}}, {bufs[r[1]], {point(x)}}}, {{bufs.back(), {x}}},
                                    {.name = name}));
    }
  }
  p->in = bufs.front();
  p->out = bufs.back();
  p->analyze(schedule_shapes().add(p->in, {n}).add(p->out, {n}), m);
  return p;
}

// Graphs that are not chains: the blocks the model counts are those the builder allocates, the
// report's memory (schedule_report::loop_decision::memory_bytes) the peak the hooks see.
TEST(cost_model, shared_storage_of_graphs_that_are_not_chains) {
  machine m = test_machine();
  m.threads = 1;
  const index_t n = 1 << 20;
  struct graph_case {
    const char* what;
    std::vector<std::vector<int>> reads;
    int blocks;
  };
  const graph_case cases[] = {
      // a feeds b and c, both feed out: a is live until c is done, so a, b and c need 3 blocks.
      {"diamond", {{0}, {1}, {1}, {2, 3}}, 3},
      // a feeds b and d: c takes no block of a or b (a is read later by d, b by c itself); d takes b's.
      {"skip connection", {{0}, {1}, {2}, {3, 1}, {4}}, 3},
      // a chain of 6 with a skip from b to the output's producer.
      {"long skip", {{0}, {1}, {2}, {3}, {4}, {5, 2}, {6}}, 3},
  };
  for (const graph_case& c : cases) {
    SCOPED_TRACE(c.what);
    auto p = dag(c.reads, n, m);
    const loop_analysis plan = p->plan(0);
    ASSERT_TRUE(plan.ok);
    const int intermediates = static_cast<int>(c.reads.size()) - 1;
    EXPECT_EQ(plan.counts.shared_buffers, intermediates - c.blocks);
    schedule_report r = schedule({p->in}, {p->out}, schedule_shapes().add(p->in, {n}).add(p->out, {n}), m);
    ASSERT_TRUE(r.loops[0].looped) << r.to_string(&p->ctx);
    const index_t step = r.loops[0].step;
    EXPECT_EQ(r.loops[0].memory_bytes, c.blocks * step * 4) << step;
    // Every graph adds two paths of copies of the input.
    EXPECT_EQ(peak_bytes_1d(*p, n, 2), r.loops[0].memory_bytes) << step;
  }
}

// in -> a -> b -> c -> d elementwise, out a 3x3 stencil of d, looped over rows: d slides (a ring
// buffer, never shared), a, b and c compute one iteration's rows of w + 2 each. Serially, c takes
// a's memory (a's user, b, is done before c is computed); b cannot (its user is c): the builder's
// peak in a loop of 4 rows is the model's memory. In a pipelined parallel loop, iterations overlap
// and nothing is shared.
TEST(cost_model, storage_is_shared_only_where_the_loop_is_not_pipelined) {
  const index_t w = 1024, h = 512;
  const machine m = test_machine();
  node_context ctx;
  var x(ctx, "x"), y(ctx, "y");
  const box_expr pt = {point(x), point(y)};
  auto in = buffer_expr::make(ctx, "in", 2, sizeof(float));
  auto out = buffer_expr::make(ctx, "out", 2, sizeof(float));
  std::vector<func> funcs;
  buffer_expr_ptr prev = in;
  for (const char* name : {"a", "b", "c", "d"}) {
    auto next = buffer_expr::make(ctx, name, 2, sizeof(float));
    funcs.push_back(func::make(copy_kernel, {{prev, pt}}, {{next, {x, y}}}, {.name = name}));
    prev = next;
  }
  funcs.push_back(func::make(copy_kernel, {{prev, {bounds(x - 1, x + 1), bounds(y - 1, y + 1)}}}, {{out, {x, y}}},
                             {.name = "out"}));
  planned p;
  p.in = in;
  p.out = out;
  p.analyze(schedule_shapes().add(in, {w + 2, h + 2}).add(out, {w, h}), m);
  const loop_analysis plan = p.plan(1);
  ASSERT_TRUE(plan.ok);
  EXPECT_EQ(plan.counts.sliding, 1);
  EXPECT_EQ(plan.counts.shared_buffers, 1);
  const double row = (w + 2) * 4.0;
  for (index_t step : {4, 16}) {
    const double rows = step * row, ring = (step + 2) * row;
    EXPECT_DOUBLE_EQ(plan.counts.folds(step, 1), 2 * rows + ring) << step;
    EXPECT_DOUBLE_EQ(plan.counts.memory_bytes(step, 1), 2 * rows + ring) << step;
    // Two iterations in flight: the three windows, the ring buffer and one more shift of it.
    EXPECT_DOUBLE_EQ(plan.counts.folds(step, 2), 3 * rows + ring + rows) << step;
  }
  EXPECT_EQ(plan.counts.streamed_buffers(1), plan.counts.buffers - 1);
  EXPECT_EQ(plan.counts.streamed_buffers(2), plan.counts.buffers);

  // The builder's allocations in a serial loop of 4 rows: the peak is the model's memory.
  funcs.back().loops({{y, 4}});
  const pipeline pl = build_pipeline(ctx, {in}, {out});
  peak_counter counter;
  buffer<float, 2> in_buf({w + 2, h + 2}), out_buf({w, h});
  in_buf.translate(-1, -1);
  in_buf.allocate();
  out_buf.allocate();
  ASSERT_EQ(pl.evaluate({&in_buf}, {&out_buf}, counter.context), 0);
  EXPECT_EQ(counter.peak, static_cast<index_t>(plan.counts.memory_bytes(4, 1)));
}

// in -> scaled (point) -> padded (a padded copy of scaled: zeros outside in's bounds) -> out (3x3
// box of padded), w x h. The builder removes the copy (docs/copies.md, "Into the destination"):
// scale writes into padded's ring buffer. In a loop over rows the model stores padded's window
// only and prices no copy; the builder's peak is the model's memory. When out also reads scaled
// (`second_reader`), the copy stays, and both store scaled's rows as well.
TEST(cost_model, copies_the_builder_removes_take_no_storage) {
  const index_t w = 1024, h = 256;
  machine m = test_machine();
  m.threads = 1;
  for (bool second_reader : {false, true}) {
    SCOPED_TRACE(second_reader ? "scaled read by out too" : "scaled read by the copy only");
    planned p;
    var x(p.ctx, "x"), y(p.ctx, "y");
    p.in = buffer_expr::make(p.ctx, "in", 2, sizeof(float));
    auto scaled = buffer_expr::make(p.ctx, "scaled", 2, sizeof(float));
    auto padded = buffer_expr::make(p.ctx, "padded", 2, sizeof(float));
    p.out = buffer_expr::make(p.ctx, "out", 2, sizeof(float));
    auto zero = buffer_expr::make_scalar<float>(p.ctx, "zero", 0.0f);
    p.funcs.push_back(func::make(copy_kernel, {{p.in, {point(x), point(y)}}}, {{scaled, {x, y}}}, {.name = "scale"}));
    p.funcs.push_back(func::make_copy({scaled, {point(x), point(y)}, p.in->bounds()}, {padded, {x, y}}, {zero, {}}));
    const box_expr nbhd = {bounds(x - 1, x + 1), bounds(y - 1, y + 1)};
    if (second_reader) {
      p.funcs.push_back(func::make(product_kernel, {{padded, nbhd}, {scaled, {point(x), point(y)}}}, {{p.out, {x, y}}},
                                   {.name = "box"}));
    } else {
      p.funcs.push_back(func::make(copy_kernel, {{padded, nbhd}}, {{p.out, {x, y}}}, {.name = "box"}));
    }
    const schedule_shapes shapes = schedule_shapes().add(p.in, {w, h}).add(p.out, {w, h});
    p.analyze(shapes, m);
    ASSERT_EQ(p.g.nodes.size(), 3u);
    int removed = 0;
    for (const sched_node& n : p.g.nodes) removed += n.writes_into_copy ? 1 : 0;
    EXPECT_EQ(removed, second_reader ? 0 : 1);
    const loop_analysis plan = p.plan(1);
    ASSERT_TRUE(plan.ok);
    const double padded_row = (w + 2) * 4.0, scaled_row = w * 4.0;
    for (index_t step : {4, 16}) {
      const double ring = (step + 2) * padded_row;
      // Scaled's rows, where it is stored: the copy computes the step's new rows of padded only
      // (it slides) and reads those of scaled, out reads the step's rows: step + 1.
      const double expected = second_reader ? ring + (step + 1) * scaled_row : ring;
      EXPECT_DOUBLE_EQ(plan.counts.memory_bytes(step, 1), expected) << step;
    }
    // out's chunk, padded's ring, in's window and, where the copy stays, scaled's.
    EXPECT_EQ(plan.counts.buffers, second_reader ? 4 : 3);
    // The copy's work (its entry is the second: out, the copy, scale): none where it is removed.
    ASSERT_EQ(plan.counts.work.size(), 3u);
    const double copied = plan.counts.work[1].points(4, plan.probe_step());
    if (second_reader) {
      EXPECT_GT(copied, 0);
    } else {
      EXPECT_EQ(copied, 0);
    }
    // Without a loop (all at the root): the copy writes nothing and scale allocates nothing, where
    // the copy is removed.
    std::vector<root_term> roots;
    p.analyzer->unscheduled(p.members, roots);
    ASSERT_EQ(roots.size(), 3u);
    EXPECT_EQ(roots[1].removed_copy, !second_reader);
    EXPECT_EQ(roots[2].into_copy, !second_reader);
    EXPECT_EQ(roots[2].root_consumers, second_reader ? 2 : 0);

    // The builder's peak in a loop of the step schedule() takes: the report's memory.
    schedule_report r = schedule({p.in}, {p.out}, shapes, m);
    ASSERT_TRUE(r.loops[0].looped) << r.to_string(&p.ctx);
    const pipeline pl = build_pipeline(p.ctx, {p.in}, {p.out});
    peak_counter counter;
    buffer<float, 2> in_buf({w, h}), out_buf({w, h});
    in_buf.allocate();
    out_buf.allocate();
    ASSERT_EQ(pl.evaluate({&in_buf}, {&out_buf}, counter.context), 0);
    EXPECT_EQ(counter.peak, r.loops[0].memory_bytes) << r.to_string(&p.ctx);
  }
}

}  // namespace slinky

namespace slinky {

namespace {

// test_machine with the given prefetch window and an L3 too small for the chains' inputs and
// outputs (they stream from memory).
machine prefetching_machine(index_t prefetch_bytes) {
  machine m = test_machine();
  m.l3_bytes = 2 * 1024 * 1024;
  m.threads = 1;
  m.prefetch_bytes = prefetch_bytes;
  return m;
}

}  // namespace

// Of each iteration's chunk of a stream from memory, the prefetcher's window is hidden behind the
// iteration's other work (machine::prefetch_bytes): all of a chunk within it, (4W - b) / 3 of a
// chunk of b bytes up to 4W, nothing beyond.
TEST(cost_model, streams_from_memory_within_the_prefetch_window_are_hidden) {
  const index_t n = 1 << 22;
  const index_t window = 2048;
  const machine without = prefetching_machine(0), with = prefetching_machine(window);
  auto p = chain(4, n, with);
  const loop_analysis a = p->plan(0);
  ASSERT_TRUE(a.ok);
  const double rate = with.ns_per_byte[memory_level];
  // The input's new part and the output's chunk: two streams from memory, continuing.
  int streams = 0;
  for (const level_bytes& b : a.counts.streamed) {
    if (b.level != memory_level) continue;
    EXPECT_TRUE(b.continuing);
    ++streams;
  }
  ASSERT_EQ(streams, 2);
  // Chunks of 2 KiB (512 floats) hidden whole; of 4 KiB, (8 - 4) / 3 KiB; of 8 KiB and more, none.
  const double hidden_of[][2] = {{256, 1024}, {512, 2048}, {1024, (4 * 2048 - 4096) / 3.0}, {2048, 0}, {8192, 0}};
  for (const auto& [step, hidden] : hidden_of) {
    const index_t s = static_cast<index_t>(step);
    SCOPED_TRACE(std::string("step ").append(std::to_string(s)));
    const double iterations = static_cast<double>(n) / step;
    const double full = cost(a, s, 1, without);
    EXPECT_NEAR(full - cost(a, s, 1, with), iterations * 2 * hidden * rate, 1e-6 * full);
    // The estimate says what it took off (what a parallel loop is judged against adds it back).
    const loop_estimate e = cost_model(with, 0.5).loop(a.counts, s, 1);
    EXPECT_NEAR(e.prefetched_ns, iterations * 2 * hidden * rate, 1e-6 * full);
    EXPECT_NEAR(e.ns + e.prefetched_ns, full, 1e-6 * full);
  }
  // At most the iteration's other work: with none (no calls, bytes in cache and work free), nothing
  // is hidden.
  machine idle = with;
  idle.call_overhead_ns = 0;
  for (int l = 0; l < memory_level; ++l) idle.ns_per_byte[l] = 0;
  machine idle_without = idle;
  idle_without.prefetch_bytes = 0;
  EXPECT_DOUBLE_EQ(cost(a, 512, 1, idle), cost(a, 512, 1, idle_without));
  // Parallel loops alike, on each worker.
  EXPECT_LT(cost(a, 512, 2, with), cost(a, 512, 2, without));
  const loop_estimate par = cost_model(with, 0.5).loop(a.counts, 512, 2);
  EXPECT_NEAR(par.ns + par.prefetched_ns, cost(a, 512, 2, without), 1e-6 * par.ns);
}

// measure_prefetch_bytes reads the window from the stall of chunks of 2 KiB through the inverse of
// the law the model hides with: a window so found makes the model hide what was measured.
TEST(cost_model, the_measured_window_is_the_inverse_of_the_hiding_law) {
  // Chunks of 2 KiB hide all of themselves from a window of 2 KiB, nothing up to 512 bytes.
  EXPECT_DOUBLE_EQ(cost_model::prefetch_hidden_bytes(2048, 2048), 2048);
  EXPECT_DOUBLE_EQ(cost_model::prefetch_hidden_bytes(2048, 4096), 2048);
  EXPECT_DOUBLE_EQ(cost_model::prefetch_hidden_bytes(2048, 512), 0);
  EXPECT_DOUBLE_EQ(cost_model::prefetch_hidden_bytes(2048, 100), 0);
  EXPECT_DOUBLE_EQ(cost_model::prefetch_hidden_bytes(2048, 1024), (4096 - 2048) / 3.0);
  EXPECT_DOUBLE_EQ(cost_model::prefetch_window(2048, 1), 512);
  for (double chunk : {2048.0, 4096.0}) {
    for (double window = chunk / 4 + 1; window < chunk; window += 97) {
      const double stall = 1 - cost_model::prefetch_hidden_bytes(chunk, window) / chunk;
      ASSERT_GT(stall, 0);
      EXPECT_NEAR(cost_model::prefetch_window(chunk, stall), window, 1e-9 * window) << chunk;
    }
  }
}

// measure_prefetch_bytes keeps the estimates taken at the fastest speed it saw (their runs in cache
// within settled_speed of the fastest's) and gives their median: estimates from a stretch where the
// core ran slower (0 to 750 bytes where the settled ones give 1.8 to 2 KiB) are not the result.
TEST(cost_model, the_prefetch_window_is_read_from_the_settled_estimates) {
  int settled = -1;
  EXPECT_EQ(settled_prefetch_window({}, settled), 0);
  EXPECT_EQ(settled, 0);
  // Two slow estimates, three settled (within 1.2 times the fastest's 100 us).
  const std::vector<prefetch_estimate> mixed = {{0, 180e3}, {1950, 105e3}, {500, 200e3}, {1900, 100e3}, {1920, 119e3}};
  EXPECT_EQ(settled_prefetch_window(mixed, settled), 1920);
  EXPECT_EQ(settled, 3);
  // The first's speed is no reference: an estimate becomes unsettled when a faster one comes.
  std::vector<prefetch_estimate> series = {{0, 170e3}, {400, 175e3}, {0, 180e3}};
  EXPECT_EQ(settled_prefetch_window(series, settled), 0);
  EXPECT_EQ(settled, 3);
  series.push_back({1980, 95e3});
  EXPECT_EQ(settled_prefetch_window(series, settled), 1980);
  EXPECT_EQ(settled, 1);
  // Of two middle ones, the smaller.
  series.push_back({1800, 100e3});
  EXPECT_EQ(settled_prefetch_window(series, settled), 1800);
  EXPECT_EQ(settled, 2);
}

// measure_prefetch_bytes stops once three estimates are settled at a window of at least
// least_usual_prefetch_bytes; settled at a smaller one (a stretch where the core runs slower, or a
// small window), it goes on until prefetch_low_span_ms, so that a short stretch is outlasted.
TEST(cost_model, the_prefetch_window_is_measured_until_the_usual_speed_is_seen) {
  std::vector<prefetch_estimate> estimates = {{1950, 100e3}, {1900, 101e3}};
  EXPECT_FALSE(prefetch_estimates_done(estimates, 2, 2.2));
  estimates.push_back({1920, 99e3});
  EXPECT_TRUE(prefetch_estimates_done(estimates, 3, 3.3));
  // The flush reached memory in none of the first three: no estimate will come.
  EXPECT_FALSE(prefetch_estimates_done({}, 2, 2.2));
  EXPECT_TRUE(prefetch_estimates_done({}, 3, 3.3));
  // A process starting in a slow stretch: every estimate settled (as slow as the others) and
  // small, 1 KiB among them.
  std::vector<prefetch_estimate> slow;
  for (int i = 0; i < 12; ++i) slow.push_back({i % 4 == 0 ? 1030.0 : 0.0, 200e3 + 1e3 * (i % 3)});
  EXPECT_FALSE(prefetch_estimates_done(slow, 12, 13));
  // The usual speed comes: the slow estimates are no longer settled, three fast ones end it.
  slow.push_back({1950, 105e3});
  slow.push_back({1890, 100e3});
  EXPECT_FALSE(prefetch_estimates_done(slow, 14, 15.5));
  slow.push_back({1930, 102e3});
  EXPECT_TRUE(prefetch_estimates_done(slow, 15, 16.6));
  int settled = 0;
  EXPECT_EQ(settled_prefetch_window(slow, settled), 1930);
  EXPECT_EQ(settled, 3);
  // A small window (a slow stretch longer than the wait, or a Xeon's 0.65 to 1.1 KiB) is the
  // result after the wait.
  const std::vector<prefetch_estimate> small = {{800, 100e3}, {1100, 101e3}, {700, 99e3}};
  EXPECT_FALSE(prefetch_estimates_done(small, 3, 3.3));
  EXPECT_FALSE(prefetch_estimates_done(small, 3, prefetch_low_span_ms - 1));
  EXPECT_TRUE(prefetch_estimates_done(small, 3, prefetch_low_span_ms));
  EXPECT_EQ(settled_prefetch_window(small, settled), 800);
  // 1.1 KiB is small too (below least_usual_prefetch_bytes).
  EXPECT_FALSE(prefetch_estimates_done({{1100, 100e3}, {1200, 101e3}, {1150, 99e3}}, 3, 3.3));
  // Whatever the estimates, it ends at prefetch_span_ms.
  EXPECT_FALSE(prefetch_estimates_done({{1950, 100e3}}, 30, prefetch_span_ms - 1));
  EXPECT_TRUE(prefetch_estimates_done({{1950, 100e3}}, 30, prefetch_span_ms));
}

// machine::host() takes a window measured below least_usual_prefetch_bytes as a slow stretch's (or
// a prefetcher's that reaches less far, whose choices were no faster): the default instead.
TEST(cost_model, a_small_measured_window_gives_way_to_the_default) {
  EXPECT_EQ(least_usual_prefetch_bytes, 1536);
  EXPECT_EQ(usual_prefetch_bytes(0), machine::host_prefetch_bytes);
  EXPECT_EQ(usual_prefetch_bytes(750), machine::host_prefetch_bytes);
  EXPECT_EQ(usual_prefetch_bytes(1100), machine::host_prefetch_bytes);
  EXPECT_EQ(usual_prefetch_bytes(least_usual_prefetch_bytes - 1), machine::host_prefetch_bytes);
  EXPECT_EQ(usual_prefetch_bytes(least_usual_prefetch_bytes), least_usual_prefetch_bytes);
  EXPECT_EQ(usual_prefetch_bytes(1950), 1950);
  EXPECT_EQ(usual_prefetch_bytes(4096), 4096);
}

// A stream continues from one iteration to the next only where the loop moves its window along
// the buffer's outermost dim, the inner dims whole: rows of a 2-D buffer do, columns do not, nor
// do the rows of a tile's strip.
TEST(cost_model, only_windows_moving_along_the_outermost_dim_continue) {
  const machine m = prefetching_machine(2048);
  auto p = stencil3(2048, 2048, m);
  auto continuing = [](const loop_analysis& a) {
    int yes = 0, no = 0;
    for (const level_bytes& b : a.counts.streamed) (b.continuing ? yes : no)++;
    return std::make_pair(yes, no);
  };
  const loop_analysis rows = p->plan(1);
  ASSERT_TRUE(rows.ok);
  EXPECT_EQ(continuing(rows), std::make_pair(2, 0));
  const loop_analysis columns = p->plan(0);
  ASSERT_TRUE(columns.ok);
  EXPECT_EQ(continuing(columns), std::make_pair(0, 2));
  loop_analysis strip_rows;
  p->analyzer->analyze(p->members[0], 1, p->members, /*recompute=*/false, strip_rows, strip{0, 256});
  ASSERT_TRUE(strip_rows.ok);
  EXPECT_EQ(continuing(strip_rows), std::make_pair(0, 2));
}

}  // namespace slinky
