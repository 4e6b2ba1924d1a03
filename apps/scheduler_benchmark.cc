// The automatic scheduler (slinky/scheduler, docs/scheduler.md) against the best hand schedule and
// no schedule, on benchmark 3's elementwise chains (K = 4, 8) and benchmark 4's stencil chains (2,
// 3 stages) at sizes whose intermediates exceed the last-level cache; then the time schedule()
// takes on chains of 100 and 1000 funcs; then the cost of the just-in-time entry (auto_pipeline):
// the first evaluation of a shape class (schedule + build) and the lookup of a cached class.
// Usage: scheduler_benchmark [--quick] [--cpu-time] [--reps N] [--explain] [--csv FILE] [--jit-only]
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "bench_extras.h"
#include "benchmark_util.h"
#include "elementwise_stage.h"
#include "slinky/base/thread_pool_impl.h"
#include "slinky/builder/pipeline.h"
#include "slinky/scheduler/auto_pipeline.h"
#include "slinky/scheduler/schedule.h"

using namespace slinky;
using namespace slinky_bench;

namespace {

// A graph and the pipeline built from it, with the schedule a `scheduler` function sets.
struct built {
  node_context ctx;
  std::vector<buffer_expr_ptr> bufs;
  std::vector<func> funcs;
  buffer_expr_ptr in, out;
  pipeline p;
  std::string description;
  double schedule_us = -1;
};
using scheduler_fn = std::function<void(built&)>;

std::unique_ptr<built> make_elementwise_chain(int k, const scheduler_fn& sched) {
  auto b = std::make_unique<built>();
  var x(b->ctx, "x");
  b->in = buffer_expr::make(b->ctx, "in", 1, sizeof(float));
  buffer_expr_ptr prev = b->in;
  for (int i = 0; i < k; ++i) {
    auto next =
        buffer_expr::make(b->ctx, i + 1 == k ? std::string("out") : "b" + std::to_string(i + 1), 1, sizeof(float));
    b->funcs.push_back(func::make<const float, float>(stage{scale(i), offset(i)}, {{prev, {point(x)}}}, {{next, {x}}},
                                                      {.name = "stage" + std::to_string(i)}));
    prev = next;
  }
  b->out = prev;
  sched(*b);
  b->p = build_pipeline(b->ctx, {b->in}, {b->out});
  return b;
}

// Benchmark 4's chains: in -> e -> box [-> box].
std::unique_ptr<built> make_stencil_chain(int stages, const scheduler_fn& sched) {
  using namespace slinky_bench::stencil_chain;
  auto b = std::make_unique<built>();
  var x(b->ctx, "x"), y(b->ctx, "y");
  const box_expr pt = {point(x), point(y)};
  const box_expr nbhd = {bounds(x - 1, x + 1), bounds(y - 1, y + 1)};
  b->in = buffer_expr::make(b->ctx, "in", 2, sizeof(float));
  auto e = buffer_expr::make(b->ctx, "e", 2, sizeof(float));
  b->funcs.push_back(func::make(scale_offset, {{b->in, pt}}, {{e, {x, y}}}, {.name = "scale_offset"}));
  buffer_expr_ptr prev = e;
  for (int s = 1; s < stages; ++s) {
    auto next =
        buffer_expr::make(b->ctx, s + 1 == stages ? std::string("out") : "b" + std::to_string(s), 2, sizeof(float));
    b->funcs.push_back(func::make(box, {{prev, nbhd}}, {{next, {x, y}}}, {.name = "box" + std::to_string(s)}));
    prev = next;
  }
  b->out = prev;
  sched(*b);
  b->p = build_pipeline(b->ctx, {b->in}, {b->out});
  return b;
}

// The automatic schedule for machine m and these shapes; its time is the median of repeated
// calls (with reschedule: each call schedules from scratch and gives the same schedule).
scheduler_fn auto_schedule(const machine& m, std::vector<index_t> in_extents, std::vector<index_t> out_extents,
                           bool explain) {
  return [=](built& b) {
    schedule_shapes shapes;
    shapes.add(b.in, in_extents).add(b.out, out_extents);
    schedule_options o;
    o.reschedule = true;
    std::vector<double> us;
    schedule_report r;
    for (int i = 0; i < 21; ++i) {
      auto t0 = std::chrono::steady_clock::now();
      r = schedule({b.in}, {b.out}, shapes, m, o);
      auto t1 = std::chrono::steady_clock::now();
      us.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count());
    }
    std::sort(us.begin(), us.end());
    b.schedule_us = us[us.size() / 2];
    const schedule_report::loop_decision& l = r.loops[0];
    b.description = !l.looped ? std::string("no loop")
                              : std::string(l.dim == 0 ? "chunks of " : "strips of ") + std::to_string(l.step) +
                                    (l.parallel ? ", parallel" : "");
    if (explain) std::printf("```\n%s```\n\n", r.to_string(&b.ctx).c_str());
  };
}

struct row {
  std::string pipeline, variant, schedule;
  double ms = 0;
  index_t peak = 0;
  double schedule_us = -1;
  double speedup_vs_none = 0, speedup_vs_malloc = 0, vs_hand = 0;
};

// Times the variants of one pipeline (no schedule, the hand schedules, auto serial, auto with the
// host's threads) interleaved, checks each result, and adds three or four rows to the table.
void compare(const std::string& name, std::vector<std::unique_ptr<built>>& v, std::size_t num_hand,
             const std::function<index_t(const pipeline&, eval_context*)>& run, const std::function<void()>& clear,
             const std::function<void(const std::string&)>& check, int reps, int malloc_reps, bool cpu_time,
             eval_context* parallel_ctx, std::vector<row>& rows) {
  // v: [0] no schedule, [1, num_hand] hand schedules, then auto (serial), auto (host threads).
  std::vector<std::unique_ptr<alloc_tracker>> trackers;
  for (std::size_t i = 0; i < v.size(); ++i) {
    const bool parallel = i == v.size() - 1;
    trackers.push_back(std::make_unique<alloc_tracker>(0, /*reuse_memory=*/true));
    if (parallel) trackers.back()->config.thread_pool = parallel_ctx->config->thread_pool;
    clear();
    if (run(v[i]->p, parallel ? parallel_ctx : nullptr) != 0) wrong_result(name + ": evaluate failed");
    check(v[i]->description);
    clear();
    if (run(v[i]->p, &trackers.back()->context) != 0) wrong_result(name + ": evaluate failed");
    check(v[i]->description + " (auto_stack_threshold = 0)");
  }
  // No schedule with the default allocator: fresh pages on every run (slow to touch on this
  // sandboxed machine), timed alone.
  const double t_malloc = median_of([&]() { run(v[0]->p, nullptr); }, malloc_reps, 0, cpu_time);
  std::vector<std::function<void()>> fns;
  // No schedule with its intermediates' memory reused between runs (no fresh pages: fair to it).
  fns.push_back([&]() { run(v[0]->p, &trackers[0]->context); });
  for (std::size_t i = 1; i + 1 < v.size(); ++i) fns.push_back([&, i]() { run(v[i]->p, nullptr); });
  auto parallel_run = [&]() { run(v.back()->p, parallel_ctx); };
  // A parallel run's CPU time on the calling thread leaves out the workers': it is timed by the
  // wall clock, alone, with --cpu-time.
  if (!cpu_time) fns.push_back(parallel_run);
  std::vector<double> t = interleaved_medians(fns, reps, cpu_time);
  // With --cpu-time: the parallel run and the serial automatic schedule timed by the wall clock in
  // rounds of their own; the row gives the parallel run's wall time, and its ratios are those of
  // the serial run scaled by the wall-clock speed-up of parallel over serial.
  double wall_speedup = 1;
  if (cpu_time) {
    const std::vector<double> w =
        interleaved_medians({[&]() { run(v[num_hand + 1]->p, nullptr); }, parallel_run}, reps, false);
    t.push_back(w[1]);
    wall_speedup = w[0] / w[1];
  }
  check("after timing");
  std::size_t best_hand = 1;
  for (std::size_t i = 1; i <= num_hand; ++i) {
    if (t[i] < t[best_hand]) best_hand = i;
  }
  auto add = [&](const std::string& variant, std::size_t i) {
    row r;
    r.pipeline = name;
    r.variant = variant;
    r.schedule = v[i]->description;
    r.ms = t[i] * 1e3;
    r.peak = trackers[i]->peak;
    r.schedule_us = v[i]->schedule_us;
    r.speedup_vs_none = t[0] / t[i];
    r.speedup_vs_malloc = t_malloc / t[i];
    r.vs_hand = t[best_hand] / t[i];
    rows.push_back(r);
  };
  add("no schedule (malloc)", 0);
  rows.back().ms = t_malloc * 1e3;
  rows.back().speedup_vs_none = t[0] / t_malloc;
  rows.back().speedup_vs_malloc = 1;
  rows.back().vs_hand = t[best_hand] / t_malloc;
  add("no schedule (memory reused)", 0);
  add("best hand schedule", best_hand);
  add("auto (threads = 1)", num_hand + 1);
  add("auto (host threads, thread pool)", num_hand + 2);
  if (cpu_time) {
    // Ratios through the serial automatic schedule (CPU time) and the wall-clock speed-up.
    const row& serial = rows[rows.size() - 2];
    row& r = rows.back();
    r.variant += "; wall time, ratios via auto (threads = 1)";
    r.vs_hand = serial.vs_hand * wall_speedup;
    r.speedup_vs_none = serial.speedup_vs_none * wall_speedup;
    r.speedup_vs_malloc = serial.speedup_vs_malloc * wall_speedup;
  }
}

// The time schedule() takes on an elementwise chain of n funcs (median of reps calls).
double chain_schedule_us(int n, int reps) {
  auto b = std::make_unique<built>();
  var x(b->ctx, "x");
  b->in = buffer_expr::make(b->ctx, "in", 1, sizeof(float));
  buffer_expr_ptr prev = b->in;
  for (int i = 0; i < n; ++i) {
    auto next = buffer_expr::make(b->ctx, "b", 1, sizeof(float));
    b->funcs.push_back(func::make<const float, float>(stage{scale(i), offset(i)}, {{prev, {point(x)}}}, {{next, {x}}}));
    prev = next;
  }
  b->out = prev;
  const index_t size = 1 << 24;
  schedule_shapes shapes;
  shapes.add(b->in, {size}).add(b->out, {size});
  schedule_options o;
  o.reschedule = true;
  machine m = machine::host();
  m.threads = 1;
  std::vector<double> us;
  for (int i = 0; i < reps; ++i) {
    auto t0 = std::chrono::steady_clock::now();
    schedule_report r = schedule({b->in}, {b->out}, shapes, m, o);
    auto t1 = std::chrono::steady_clock::now();
    if (!r.loops[0].looped) wrong_result("the chain of " + std::to_string(n) + " funcs got no loop");
    us.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count());
  }
  std::sort(us.begin(), us.end());
  return us[us.size() / 2];
}

}  // namespace

// The just-in-time entry on stencil chains of `size` x `size` floats: the time the first
// evaluation of a shape class spends scheduling and building (pipeline_for on a fresh
// auto_pipeline, median of fresh graphs), an evaluation of the cached class through the
// auto_pipeline and of the same pipeline directly, and the time to look a cached class up.
void jit_table(index_t size, int reps, bool cpu_time) {
  table t({"pipeline", "first evaluate of a class: schedule + build (ms)", "evaluate, cached class (ms)",
           "same pipeline evaluated directly (ms)", "lookup of a cached class (us)"});
  for (int stages : {2, 3}) {
    const int border = stages - 1;
    buffer<float, 2> in_buf({size + 2 * border, size + 2 * border}), out_buf({size, size});
    in_buf.translate(-border, -border);
    in_buf.allocate();
    out_buf.allocate();
    fill_stencil_chain_input(in_buf, size, border);
    const raw_buffer* ins[] = {&in_buf};
    const raw_buffer* outs[] = {&out_buf};
    auto none = [](built&) {};
    std::vector<double> build_ms;
    for (int i = 0; i < reps; ++i) {
      std::unique_ptr<built> b = make_stencil_chain(stages, none);
      const auto_pipeline p(b->ctx, {b->in}, {b->out});
      const auto t0 = std::chrono::steady_clock::now();
      p.pipeline_for({}, ins, outs);
      build_ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
    }
    std::sort(build_ms.begin(), build_ms.end());
    std::unique_ptr<built> b = make_stencil_chain(stages, none);
    const auto_pipeline p(b->ctx, {b->in}, {b->out});
    const std::shared_ptr<const pipeline> direct = p.pipeline_for({}, ins, outs);
    const std::vector<double> eval = interleaved_medians(
        {[&] { p.evaluate({&in_buf}, {&out_buf}); }, [&] { direct->evaluate({&in_buf}, {&out_buf}); }}, reps, cpu_time);
    const int lookups = 10000;
    const auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < lookups; ++i) p.pipeline_for({}, ins, outs);
    const double lookup_us =
        std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count() / lookups;
    t.add({"stencil, " + std::to_string(stages) + " stages, " + std::to_string(size) + "x" + std::to_string(size),
           fmt(build_ms[build_ms.size() / 2], 2), fmt(eval[0] * 1e3, 2), fmt(eval[1] * 1e3, 2), fmt(lookup_us, 3)});
  }
  t.print();
}

int main(int argc, char** argv) {
  const bool quick = has_flag(argc, argv, "--quick");
  const bool cpu_time = has_flag(argc, argv, "--cpu-time");
  const bool explain = has_flag(argc, argv, "--explain");
  const int reps = std::stoi(arg(argc, argv, "--reps", quick ? "5" : "9"));
  const index_t n = quick ? 4 << 20 : 16 << 20;
  const index_t size = quick ? 2048 : 4096;
  if (has_flag(argc, argv, "--jit-only")) {
    jit_table(quick ? 512 : 1024, reps, cpu_time);
    return 0;
  }
  print_machine("The automatic scheduler: auto vs the best hand schedule vs no schedule");
  print_fresh_page_cost();

  const auto c0 = std::chrono::steady_clock::now();
  const machine& host = machine::host();
  const double detect_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - c0).count();
  std::printf("Machine description (machine::host(), detected and calibrated in %.2f ms): L1 %lld, L2 %lld, L3 %lld "
              "bytes; %d threads; %.1f ns per call.\n",
              detect_ms, static_cast<long long>(host.l1_bytes), static_cast<long long>(host.l2_bytes),
              static_cast<long long>(host.l3_bytes), host.threads, host.call_overhead_ns);
  std::printf("Elementwise chains over %lld floats (%lld MiB per buffer), stencil chains on %lldx%lld floats (%lld "
              "MiB).\n",
              static_cast<long long>(n), static_cast<long long>(n * 4 >> 20), static_cast<long long>(size),
              static_cast<long long>(size), static_cast<long long>(size * size * 4 >> 20));
  std::printf("Times: medians of %d repetitions interleaved in rounds, %s. The machine is shared with other\n"
              "agents' builds and tests: absolute times are noisy, ratios from the same rounds less so.\n",
              reps, clock_name(cpu_time));
  std::printf(
      "\"no schedule (malloc)\": the default allocator, fresh pages every run, timed alone (3 runs, 1 with --quick);\n"
      "\"memory reused\": an allocate hook hands back the previous run's blocks (in the rounds).\n"
      "\"best hand schedule\": the fastest of benchmark 3's chunks (1024, 4096, 16384, 65536 elements) or\n"
      "benchmark 4's strips (1, 8, 32 rows), measured in the same rounds. \"auto (threads = 1)\": the host's\n"
      "description with threads = 1 (serial, like the hand schedules); \"auto (host threads)\": the host's\n"
      "description as detected, run with a thread pool of that many threads. Peak intermediate memory:\n"
      "allocate/free hooks with auto_stack_threshold = 0. Scheduling time: median of 21 schedule() calls.\n\n");

  machine serial = host;
  serial.threads = 1;
  thread_pool_impl pool(std::max(0, host.threads - 1));
  eval_config parallel_config;
  parallel_config.thread_pool = &pool;
  eval_context parallel_ctx;
  parallel_ctx.config = &parallel_config;

  std::vector<row> rows;
  {
    buffer<float, 1> in_buf({n}), out_buf({n}), ref({n});
    in_buf.allocate();
    out_buf.allocate();
    ref.allocate();
    for (index_t i = 0; i < n; ++i) in_buf(i) = static_cast<float>(i % 1000) * 0.001f;
    for (int k : {4, 8}) {
      for (index_t i = 0; i < n; ++i) {
        float v = in_buf(i);
        for (int s = 0; s < k; ++s) v = v * scale(s) + offset(s);
        ref(i) = v;
      }
      const std::string name = "elementwise K = " + std::to_string(k);
      std::vector<std::unique_ptr<built>> v;
      v.push_back(make_elementwise_chain(k, [](built& b) { b.description = "none"; }));
      const std::vector<index_t> chunks = {1024, 4096, 16384, 65536};
      for (index_t c : chunks) {
        v.push_back(make_elementwise_chain(k, [c](built& b) {
          b.funcs.back().loops({{b.funcs.back().outputs()[0].dims[0], c}});
          b.description = "chunks of " + std::to_string(c);
        }));
      }
      if (explain) std::printf("### %s\n\n", name.c_str());
      v.push_back(make_elementwise_chain(k, auto_schedule(serial, {n}, {n}, explain)));
      v.push_back(make_elementwise_chain(k, auto_schedule(host, {n}, {n}, explain)));
      compare(
          name, v, chunks.size(),
          [&](const pipeline& p, eval_context* ctx) {
            return ctx ? p.evaluate({&in_buf}, {&out_buf}, *ctx) : p.evaluate({&in_buf}, {&out_buf});
          },
          [&]() { std::memset(out_buf.base(), 0, n * sizeof(float)); },
          [&](const std::string& what) {
            for (index_t i = 0; i < n; ++i) {
              if (!(std::abs(out_buf(i) - ref(i)) <= 1e-5f * std::abs(ref(i)))) {
                wrong_result(name + ", " + what + ": out(" + std::to_string(i) + ") = " + std::to_string(out_buf(i)) +
                             ", expected " + std::to_string(ref(i)));
              }
            }
          },
          reps, quick ? 1 : 3, cpu_time, &parallel_ctx, rows);
    }
  }
  for (int stages : {2, 3}) {
    const int border = stages - 1;
    buffer<float, 2> in_buf({size + 2 * border, size + 2 * border}), out_buf({size, size}), ref({size, size});
    in_buf.translate(-border, -border);
    in_buf.allocate();
    out_buf.allocate();
    ref.allocate();
    fill_stencil_chain_input(in_buf, size, border);
    stencil_chain_reference(in_buf, size, stages, ref);
    const std::string name = "stencil, " + std::to_string(stages) + " stages";
    std::vector<std::unique_ptr<built>> v;
    v.push_back(make_stencil_chain(stages, [](built& b) { b.description = "none"; }));
    const std::vector<index_t> strips = {1, 8, 32};
    for (index_t s : strips) {
      v.push_back(make_stencil_chain(stages, [s](built& b) {
        b.funcs.back().loops({{b.funcs.back().outputs()[0].dims[1], s}});
        b.description = "strips of " + std::to_string(s);
      }));
    }
    if (explain) std::printf("### %s\n\n", name.c_str());
    const std::vector<index_t> in_extents = {size + 2 * border, size + 2 * border}, out_extents = {size, size};
    v.push_back(make_stencil_chain(stages, auto_schedule(serial, in_extents, out_extents, explain)));
    v.push_back(make_stencil_chain(stages, auto_schedule(host, in_extents, out_extents, explain)));
    compare(
        name, v, strips.size(),
        [&](const pipeline& p, eval_context* ctx) {
          return ctx ? p.evaluate({&in_buf}, {&out_buf}, *ctx) : p.evaluate({&in_buf}, {&out_buf});
        },
        [&]() { std::memset(out_buf.base(), 0, size * size * sizeof(float)); },
        [&](const std::string& what) {
          for (index_t y = 0; y < size; ++y) {
            for (index_t x = 0; x < size; ++x) {
              if (out_buf(x, y) != ref(x, y)) {
                wrong_result(name + ", " + what + ": out(" + std::to_string(x) + ", " + std::to_string(y) +
                             ") = " + std::to_string(out_buf(x, y)) + ", expected " + std::to_string(ref(x, y)));
              }
            }
          }
        },
        reps, quick ? 1 : 3, cpu_time, &parallel_ctx, rows);
  }

  table t({"pipeline", "variant", "schedule", "time (ms)", "throughput vs best hand",
           "speed-up vs no schedule (memory reused)", "speed-up vs no schedule (malloc)", "peak intermediates (bytes)",
           "scheduling time (us)"});
  for (const row& r : rows) {
    t.add({r.pipeline, r.variant, r.schedule, fmt(r.ms, 2), fmt(r.vs_hand, 2), fmt(r.speedup_vs_none, 2),
           fmt(r.speedup_vs_malloc, 2), std::to_string(r.peak), r.schedule_us < 0 ? "" : fmt(r.schedule_us, 1)});
  }
  t.print();
  csv_writer csv(argc, argv,
                 {"pipeline", "variant", "schedule", "time_ms", "throughput_vs_best_hand", "speedup_vs_none_reused",
                  "speedup_vs_none_malloc", "peak_intermediate_bytes", "scheduling_time_us"});
  for (const row& r : rows) {
    csv.add({r.pipeline, r.variant, r.schedule, r.ms, r.vs_hand, r.speedup_vs_none, r.speedup_vs_malloc,
             static_cast<long long>(r.peak), csv_writer::if_measured(r.schedule_us >= 0, r.schedule_us)});
  }

  // Scheduling time against the length of a chain.
  const double us100 = chain_schedule_us(100, quick ? 21 : 51);
  const double us1000 = chain_schedule_us(1000, quick ? 11 : 21);
  table s({"elementwise chain", "schedule() time (us)", "per func (us)"});
  s.add({"100 funcs", fmt(us100, 1), fmt(us100 / 100, 3)});
  s.add({"1000 funcs", fmt(us1000, 1), fmt(us1000 / 1000, 3)});
  s.print();
  std::printf("100 funcs: %.3f ms (target < 0.3 ms): %s; 1000 funcs / 100 funcs: %.1fx (near linear: about 10x)\n",
              us100 * 1e-3, pass_or_miss(us100 < 300), us1000 / us100);

  // The just-in-time entry.
  jit_table(quick ? 512 : 1024, reps, cpu_time);
  return 0;
}
