// Benchmark 7 of docs/benchmarks.md: benchmarks 3 (elementwise chains) and 4 (stencil chains) with their
// loop serial vs loop::parallel on 2 threads (thread_pool_impl(1): one worker plus the calling
// thread). The stencils run parallel three ways: with default storage (the stencil's windows
// overlap between iterations, so the intermediates are shared ring buffers and the loop is
// pipelined: each value computed once), with the intermediates stored inside the loop by
// store_at (data-parallel: each iteration recomputes its halo), and stored at the root by
// store_root (pipelined, like the default). The elementwise chains' windows do not overlap: by
// default each worker keeps its own blocks. --threads T runs the parallel loops on T threads
// (T - 1 workers) instead of 2, for curves of speed-up against threads on larger machines. --pool
// runs on a host pool adapter (slinky/adapters, when built) instead of thread_pool_impl, with the
// same workers: the outputs are checked the same way, and the callback points must not change.
// Usage: parallel_benchmark [--quick] [--reps N] [--size N] [--n N] [--threads T] [--print] [--csv FILE]
//                           [--pool bundled|pthreadpool|tbb]
#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "benchmark_util.h"
#include "elementwise_stage.h"
#include "pipeline_bench.h"
#include "slinky/base/thread_pool_impl.h"
#include "slinky/builder/pipeline.h"
#include "slinky/runtime/print.h"
#include "workloads.h"
#ifdef SLINKY_HAVE_PTHREADPOOL
#include "slinky/adapters/pthreadpool_thread_pool.h"
#endif
#ifdef SLINKY_HAVE_TBB
#include "slinky/adapters/tbb_thread_pool.h"
#endif

using namespace slinky;
using namespace slinky_bench;
using namespace slinky_bench::stencil_chain;

namespace {

// Peak intermediate memory of parallel runs, allocating with the default hooks (and the pipeline's
// base alignment) and evaluating on the given thread pool.
struct memory_tracker {
  eval_config config;
  eval_context context;
  std::mutex mutex;
  index_t live = 0, peak = 0, allocations = 0;
  std::map<void*, index_t> sizes;

  explicit memory_tracker(thread_pool* pool) {
    config.thread_pool = pool;
    config.auto_stack_threshold = 0;
    config.allocate = [this](var sym, raw_buffer* b) {
      void* p = default_allocate(sym, b, config.base_alignment);
      std::lock_guard<std::mutex> lock(mutex);
      const index_t size = b->size_bytes();
      sizes[p] = size;
      live += size;
      peak = std::max(peak, live);
      ++allocations;
      return p;
    };
    config.free = [this](var sym, raw_buffer* b, void* p) {
      {
        std::lock_guard<std::mutex> lock(mutex);
        live -= sizes[p];
        sizes.erase(p);
      }
      default_free(sym, b, p);
    };
    context.config = &config;
  }
};

enum class mode { serial, parallel, store_inside, store_root };

const char* mode_name(mode m) {
  switch (m) {
  case mode::serial: return "serial";
  case mode::parallel: return "parallel, default storage";
  case mode::store_inside: return "parallel, store_at inside (data-parallel)";
  case mode::store_root: return "parallel, store_root (pipelined)";
  }
  return "";
}

// The loop in the CSV.
const char* mode_key(mode m) {
  switch (m) {
  case mode::serial: return "serial";
  case mode::parallel: return "parallel";
  case mode::store_inside: return "parallel_store_inside";
  case mode::store_root: return "parallel_store_root";
  }
  return "";
}

// The points every callback of the running pipeline computed.
std::atomic<index_t> points{0};
template <typename Fn>
auto counted(Fn fn) {
  return [fn](const buffer<const float>& in, const buffer<float>& out) -> index_t {
    index_t n = 1;
    for (std::size_t d = 0; d < out.rank; ++d) n *= out.dim(d).extent();
    points += n;
    return fn(in, out);
  };
}

// Each stage's callback counts the points it computes.
const workloads::stage_wrapper count_points = [](workloads::float_stage s) -> workloads::float_stage {
  return counted(std::move(s));
};

// in -> b1 -> ... -> out (K funcs, workloads::elementwise_chain), out in a loop of chunks, serial or
// parallel.
pipeline make_chain(int k, index_t chunk, mode m) {
  node_context ctx;
  graph g = workloads::elementwise_chain(ctx, k, count_points);
  func& last = g.funcs.back();
  last.loops({{last.outputs()[0].dims[0], chunk, m == mode::serial ? loop::serial : loop::parallel}});
  return build_pipeline(ctx, g.inputs, g.outputs);
}

// in -> e -> b1 [-> b2] = out (workloads::stencil_chain), out in a loop over strips of rows;
// store_inside stores e (and b1) inside the loop, store_root at the root.
pipeline make_stencil(int stages, index_t strip, mode m) {
  node_context ctx;
  graph g = workloads::stencil_chain(ctx, stages, count_points);
  func& last = g.funcs.back();
  const var y = last.outputs()[0].dims[1];
  last.loops({{y, strip, m == mode::serial ? loop::serial : loop::parallel}});
  // The intermediates: e, and b1 with 3 stages.
  for (std::size_t i = 0; i + 1 < g.funcs.size(); ++i) {
    const buffer_expr_ptr& b = g.funcs[i].outputs()[0].buffer;
    if (m == mode::store_root) {
      b->store_root();
    } else if (m == mode::store_inside) {
      b->store_at({&last, y});
    }
  }
  return build_pipeline(ctx, g.inputs, g.outputs);
}

// A compute loop with no memory traffic, to measure how much of its threads this machine gives now.
double spin(index_t n, index_t seed) {
  double x = static_cast<double>(seed);
  for (index_t i = 0; i < n; ++i) x = x * 0.999999 + 1.0;
  return x;
}

// The speed-up of pool.parallel_for over `threads` parts of a compute loop vs the whole loop on one
// thread: the ceiling of any speed-up on that many threads in this run (2 on an idle machine with
// 2 cores and 2 threads).
double parallel_ceiling(thread_pool& pool, int threads, int reps) {
  const index_t n = 20000000;
  // One result per part, so that no two threads write the same variable; volatile, so that the
  // loops are not optimized away.
  std::unique_ptr<volatile double[]> sink(new volatile double[threads]());
  std::vector<double> t = interleaved_median_seconds(
      {[&]() { sink[0] = spin(n, 1); },
       [&]() {
         pool.parallel_for(threads, [&](std::size_t i) { sink[i] = spin(n / threads, static_cast<index_t>(i)); });
       }},
      reps);
  return t[0] / t[1];
}

// The CPU time of the whole process (all threads), in seconds.
double process_cpu_seconds() {
  timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

// The median CPU time of all threads per call of each fn, interleaved like the wall times: the
// work a variant does, including its synchronization (and the pool's spinning while it waits).
std::vector<double> interleaved_median_cpu_seconds(const std::vector<std::function<void()>>& fns, int reps) {
  return interleaved_medians_by(fns, reps, process_cpu_seconds);
}

// The pool named by --pool, with `workers` workers (and the caller's thread); null for an unknown
// name or an adapter that was not built.
std::unique_ptr<thread_pool> make_pool(const std::string& name, int workers) {
  if (name == "bundled") return std::make_unique<thread_pool_impl>(workers);
#ifdef SLINKY_HAVE_PTHREADPOOL
  if (name == "pthreadpool") return std::make_unique<pthreadpool_thread_pool>(workers);
#endif
#ifdef SLINKY_HAVE_TBB
  if (name == "tbb") return std::make_unique<tbb_thread_pool>(workers);
#endif
  return nullptr;
}

// How make_pool's pool is described in the report.
std::string pool_description(const std::string& name, int workers) {
  const std::string w = std::to_string(workers);
  if (name == "pthreadpool") return "pthreadpool_thread_pool(" + w + ") (a pthreadpool of " + w + " threads)";
  if (name == "tbb") return "tbb_thread_pool(" + w + ") (a oneTBB arena with " + w + " workers)";
  return "thread_pool_impl(" + w + ")";
}

struct result_row {
  std::string workload, schedule;
  mode m;
  std::string key;  // the workload in the CSV
  index_t size;     // elements (elementwise) or the image's side (stencil)
  index_t step;     // elements per chunk or rows per strip
  double ms;
  double cpu_ms;
  double speedup;  // vs the serial loop of the same chunk or strip
  index_t peak_bytes;
  index_t points;  // computed by all callbacks in one run
  bool has_target;
};

}  // namespace

int main(int argc, char** argv) {
  const bool quick = has_flag(argc, argv, "--quick");
  const bool print_programs = has_flag(argc, argv, "--print");
  const int reps = std::stoi(arg(argc, argv, "--reps", quick ? "3" : "9"));
  const index_t size = std::stol(arg(argc, argv, "--size", quick ? "1024" : "4096"));
  const index_t n = std::stol(arg(argc, argv, "--n", quick ? "1048576" : "16777216"));
  const int threads = std::stoi(arg(argc, argv, "--threads", "2"));
  const double target = 1.7;
  if (threads < 2) {
    std::fprintf(stderr, "--threads: at least 2\n");
    return 1;
  }

  // One row per workload, step and loop, and two for the ceiling (a speed-up only).
  csv_writer csv(argc, argv,
                 {"workload", "size", "step", "loop", "threads", "repetitions", "time_ms", "speedup_vs_serial",
                  "cpu_all_threads_ms", "peak_intermediate_bytes", "callback_points"});
  const std::string pool_name = arg(argc, argv, "--pool", "bundled");
  std::unique_ptr<thread_pool> pool_ptr = make_pool(pool_name, threads - 1);
  if (!pool_ptr) {
    std::fprintf(stderr, "--pool %s: not one of bundled, pthreadpool, tbb, or its adapter was not built\n",
                 pool_name.c_str());
    return 2;
  }
  thread_pool& pool = *pool_ptr;
  print_machine(("Benchmark 7: parallel loops on " + std::to_string(threads) + " threads vs serial").c_str());
  {
    // Parallel speed-ups mean little on a machine busy with other work: say how busy it was.
    std::ifstream loadavg("/proc/loadavg");
    std::string one, five;
    loadavg >> one >> five;
    std::printf("Load average when starting (1 and 5 min): %s %s on %u hardware threads.\n", one.c_str(), five.c_str(),
                std::thread::hardware_concurrency());
  }
  const std::string workers = threads == 2 ? "one worker" : std::to_string(threads - 1) + " workers";
  std::printf("%s: %d threads (%s plus the calling thread). Times are wall-clock\n",
              pool_description(pool_name, threads - 1).c_str(), pool.thread_count() + 1, workers.c_str());
  std::printf("medians of %d repetitions, the serial and parallel variants of each workload interleaved in\n", reps);
  std::printf("rounds after one warm-up run each. Every variant's output is checked against plain C++.\n");
  std::printf("Peak intermediates: the most bytes live at once through the allocate/free hooks\n");
  std::printf("(auto_stack_threshold = 0) in a separate, checked run on the pool. CPU: median process CPU\n");
  std::printf("time per run (all threads, including the pool's spinning while it waits), timed in a second\n");
  std::printf("interleaved pass. Speed-up: serial time / variant time, same chunk or strip. Target\n");
  std::printf("(docs/benchmarks.md): >= %.1fx on 2 threads for the compute-bound stencil; the elementwise\n", target);
  std::printf("chains are memory-bound and have no target.\n\n");

  const double ceiling_before = parallel_ceiling(pool, threads, reps);
  std::vector<result_row> rows;
  // key, size and steps[s] (the chunk or strip of schedules[s]) describe the rows in the CSV.
  auto timed = [&](const std::string& workload, const std::string& key, index_t size, const std::vector<index_t>& steps,
                   const std::vector<std::string>& schedules, const std::vector<mode>& modes,
                   const std::vector<std::vector<pipeline>>& pipelines,
                   const std::function<index_t(const pipeline&, eval_context&)>& run,
                   const std::function<void(const std::string&)>& check, bool has_target) {
    for (std::size_t s = 0; s < schedules.size(); ++s) {
      std::vector<std::function<void()>> fns;
      eval_config config;
      config.thread_pool = &pool;
      eval_context context;
      context.config = &config;
      std::vector<index_t> peaks, counts;
      for (std::size_t m = 0; m < modes.size(); ++m) {
        const pipeline& p = pipelines[s][m];
        const std::string what = workload + ", " + schedules[s] + ", " + mode_name(modes[m]);
        if (print_programs) std::cout << "### " << what << "\n\n```\n" << p.body << "```\n\n";
        memory_tracker memory(&pool);
        points = 0;
        if (run(p, memory.context) != 0) wrong_result(what + ": evaluate failed");
        check(what + " (memory run)");
        peaks.push_back(memory.peak);
        counts.push_back(points);
        fns.push_back([&, m, what]() {
          if (run(pipelines[s][m], context) != 0) wrong_result(what + ": evaluate failed");
        });
      }
      std::vector<double> t = interleaved_median_seconds(fns, reps);
      std::vector<double> cpu = interleaved_median_cpu_seconds(fns, reps);
      check(workload + ", " + schedules[s] + ", after timing");
      for (std::size_t m = 0; m < modes.size(); ++m) {
        rows.push_back({workload, schedules[s], modes[m], key, size, steps[s], t[m] * 1e3, cpu[m] * 1e3, t[0] / t[m],
                        peaks[m], counts[m], has_target});
      }
    }
  };

  // Benchmark 3: elementwise chains.
  {
    buffer<float, 1> in_buf({n}), out_buf({n}), ref({n});
    in_buf.allocate();
    out_buf.allocate();
    ref.allocate();
    for (index_t i = 0; i < n; ++i) in_buf(i) = static_cast<float>(i % 1000) * 0.001f;
    const std::vector<index_t> chunks = quick ? std::vector<index_t>{16384} : std::vector<index_t>{4096, 65536};
    for (int k : {4, 8}) {
      // The reference: the same kernels over the whole array, stage by stage.
      std::vector<float> tmp(in_buf.base(), in_buf.base() + n);
      for (int i = 0; i < k; ++i) kernel(tmp.data(), tmp.data(), n, scale(i), offset(i));
      std::copy(tmp.begin(), tmp.end(), ref.base());
      auto check = [&](const std::string& what) {
        for (index_t i = 0; i < n; ++i) {
          if (out_buf(i) != ref(i)) {
            wrong_result(what + ": out(" + std::to_string(i) + ") = " + std::to_string(out_buf(i)) + ", expected " +
                         std::to_string(ref(i)));
          }
        }
        std::memset(out_buf.base(), 0, n * sizeof(float));
      };
      const std::vector<mode> modes = {mode::serial, mode::parallel};
      std::vector<std::string> schedules;
      std::vector<std::vector<pipeline>> pipelines;
      for (index_t c : chunks) {
        schedules.push_back("chunks of " + std::to_string(c));
        pipelines.push_back({make_chain(k, c, mode::serial), make_chain(k, c, mode::parallel)});
      }
      auto run = [&](const pipeline& p, eval_context& ctx) { return p.evaluate({&in_buf}, {&out_buf}, ctx); };
      timed("elementwise K = " + std::to_string(k) + ", " + std::to_string(n) + " floats",
            "elementwise_k" + std::to_string(k), n, chunks, schedules, modes, pipelines, run, check, false);
    }
  }

  // Benchmark 4: stencil chains.
  {
    const std::vector<index_t> strips = quick ? std::vector<index_t>{8} : std::vector<index_t>{8, 32};
    for (int stages : {2, 3}) {
      const int border = stages - 1;
      buffer<float, 2> in_buf({size + 2 * border, size + 2 * border}), out_buf({size, size}), ref({size, size});
      in_buf.translate(-border, -border);
      in_buf.allocate();
      out_buf.allocate();
      ref.allocate();
      fill_stencil_chain_input(in_buf, size, border);
      stencil_chain_reference(in_buf, size, stages, ref);
      auto check = [&](const std::string& what) {
        for (index_t y = 0; y < size; ++y) {
          for (index_t x = 0; x < size; ++x) {
            if (out_buf(x, y) != ref(x, y)) {
              wrong_result(what + ": out(" + std::to_string(x) + ", " + std::to_string(y) +
                           ") = " + std::to_string(out_buf(x, y)) + ", expected " + std::to_string(ref(x, y)));
            }
          }
        }
        std::memset(out_buf.base(), 0, size * size * sizeof(float));
      };
      const std::vector<mode> modes = {mode::serial, mode::parallel, mode::store_inside, mode::store_root};
      std::vector<std::string> schedules;
      std::vector<std::vector<pipeline>> pipelines;
      for (index_t s : strips) {
        schedules.push_back("strips of " + std::to_string(s) + " rows");
        pipelines.push_back({});
        for (mode m : modes) pipelines.back().push_back(make_stencil(stages, s, m));
      }
      auto run = [&](const pipeline& p, eval_context& ctx) { return p.evaluate({&in_buf}, {&out_buf}, ctx); };
      timed("stencil, " + std::to_string(stages) + " stages, " + std::to_string(size) + "x" + std::to_string(size),
            "stencil_" + std::to_string(stages) + "stages", size, strips, schedules, modes, pipelines, run, check,
            true);
    }
  }

  const double ceiling_after = parallel_ceiling(pool, threads, reps);
  std::printf("Ceiling: a compute loop without memory traffic split over the same %d threads ran %.2fx (before)\n"
              "and %.2fx (after) faster than on one thread. On an idle %d-core machine it is about %d; below the\n"
              "target, the target cannot be met by any schedule in this run (other processes hold the cores).\n\n",
              threads, ceiling_before, ceiling_after, threads, threads);
  table tab({"workload", "schedule", "loop", "repetitions", "time (ms)", "speed-up vs serial", "target",
             "CPU, all threads (ms)", "peak intermediates (bytes)", "callback points", "points vs serial"});
  bool all_pass = true, points_equal = true;
  std::map<std::string, double> best;
  index_t serial_points = 0;
  for (const result_row& r : rows) {
    const bool parallel = r.m != mode::serial;
    if (!parallel) serial_points = r.points;
    std::string target_cell;
    // The target is for the default storage; the store_at variants are the client's choices.
    if (r.m == mode::parallel && r.has_target) {
      target_cell = std::string(">= ") + fmt(target, 1) + ": " + pass_or_miss(r.speedup >= target);
      all_pass = all_pass && r.speedup >= target;
      best[r.workload] = std::max(best[r.workload], r.speedup);
    }
    std::string points_cell;
    if (parallel) {
      points_cell = fmt(static_cast<double>(r.points) / static_cast<double>(serial_points), 3) + "x";
      if (r.m == mode::parallel) points_equal = points_equal && r.points == serial_points;
    }
    tab.add({r.workload, r.schedule, mode_name(r.m), std::to_string(reps), fmt(r.ms, 2),
             parallel ? fmt(r.speedup, 2) : std::string("1.00"), target_cell, fmt(r.cpu_ms, 2),
             std::to_string(r.peak_bytes), std::to_string(r.points), points_cell});
  }
  tab.print();
  for (const result_row& r : rows) {
    csv.add({r.key, r.size, r.step, mode_key(r.m), r.m == mode::serial ? 1 : threads, reps, r.ms, r.speedup, r.cpu_ms,
             r.peak_bytes, r.points});
  }
  const std::pair<const char*, double> ceilings[] = {{"ceiling_before", ceiling_before},
                                                     {"ceiling_after", ceiling_after}};
  for (const auto& [key, ceiling] : ceilings) {
    csv.add({key, {}, {}, "parallel_for", threads, reps, {}, ceiling, {}, {}, {}});
  }
  for (const auto& b : best) {
    std::printf("%s, default storage: best parallel speed-up %.2f (target >= %.1f): %s\n", b.first.c_str(), b.second,
                target, pass_or_miss(b.second >= target));
  }
  std::printf("every default-storage stencil variant >= %.1f: %s\n", target, pass_or_miss(all_pass));
  std::printf("default storage computes the same callback points as serial: %s\n", pass_or_miss(points_equal));
  if (std::min(ceiling_before, ceiling_after) < target) {
    std::printf("(the machine's %d-thread ceiling, %.2f, was below the target in this run)\n", threads,
                std::min(ceiling_before, ceiling_after));
  }
  return 0;
}
