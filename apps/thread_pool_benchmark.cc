// The overhead of thread_pool_impl: ns per parallel_for (or enqueue + wait_for) of N items whose
// body does nothing, on a pool of 1 worker (2 threads), beside the same loop run serially.
//
// Usage: thread_pool_benchmark [--reps R] [--csv FILE]
#include <cstddef>
#include <cstdio>
#include <functional>
#include <string>
#include <vector>

#include "benchmark_util.h"
#include "slinky/base/thread_pool_impl.h"
#include "slinky/base/util.h"

using namespace slinky;
using namespace slinky_bench;

namespace {

// An empty body the compiler cannot remove.
void empty_body(std::size_t i) { asm volatile("" : : "r"(i) : "memory"); }

// Calls body(i) for i in [0, n) through Body (a function_ref, as the pool calls an enqueue_ref
// body, or a std::function, as it calls a thread's copy of an enqueue body).
template <typename Body>
SLINKY_NO_INLINE void serial_indirect(const Body& body, std::size_t n) {
  // Hide the target from the optimizer, as it is hidden from the pool.
  asm volatile("" : : "r"(&body) : "memory");
  for (std::size_t i = 0; i < n; ++i) body(i);
}

// Wraps fn in a batch of calls long enough (>= 20 us) for the clock; returns the batch and sets
// calls to the number of calls of fn in it.
std::function<void()> batch(const std::function<void()>& fn, int& calls) {
  calls = 1;
  for (;;) {
    auto run = [fn, n = calls]() {
      for (int i = 0; i < n; ++i) fn();
    };
    if (calls >= (1 << 24) || median_seconds(run, 5, 2) >= 20e-6) return run;
    calls *= 2;
  }
}

}  // namespace

int main(int argc, char** argv) {
  print_machine("thread_pool_impl overhead: an empty parallel_for of N items");
  const int reps = std::stoi(arg(argc, argv, "--reps", "501"));
  thread_pool_impl pool(1);
  thread_pool_impl lone(0);
  auto body = [](std::size_t i) { empty_body(i); };

  table t({"N", "parallel_for, 1 worker (ns)", "enqueue + wait_for, 1 worker (ns)",
           "enqueue_ref + wait_for, 1 worker (ns)", "parallel_for, 0 workers (ns)", "serial loop (ns)",
           "serial loop through function_ref (ns)", "serial loop through task_body (ns)",
           "parallel_for, 1 worker, per item (ns)"});
  // The alternatives in the CSV, in the order of the table's columns.
  const char* keys[] = {
      "parallel_for_1_worker", "enqueue_wait_for_1_worker", "enqueue_ref_wait_for_1_worker", "parallel_for_0_workers",
      "serial_loop",           "serial_loop_function_ref",  "serial_loop_task_body"};
  csv_writer csv(argc, argv, {"items", "alternative", "repetitions", "time_ns", "time_per_item_ns"});
  for (std::size_t n : {1, 2, 16, 1024, 65536}) {
    std::vector<std::size_t> counts(n, 0);
    // A real (not empty) body first, to check every item runs once.
    pool.parallel_for(n, [&](std::size_t i) { counts[i]++; });
    for (std::size_t c : counts) {
      if (c != 1) wrong_result("an item did not run exactly once");
    }

    std::vector<std::function<void()>> alternatives = {
        [&]() { pool.parallel_for(n, body); },
        [&]() {
          ref_count<thread_pool::task> task = pool.enqueue(n, body);
          pool.wait_for(task.get());
        },
        [&]() {
          ref_count<thread_pool::task> task = pool.enqueue_ref(n, body);
          pool.wait_for(task.get());
        },
        [&]() { lone.parallel_for(n, body); },
        [&]() {
          for (std::size_t i = 0; i < n; ++i) body(i);
        },
        [&]() { serial_indirect(function_ref<void(std::size_t)>(body), n); },
        [&]() { serial_indirect(thread_pool::task_body(body), n); },
    };
    std::vector<std::function<void()>> batches;
    std::vector<int> calls(alternatives.size());
    for (std::size_t a = 0; a < alternatives.size(); ++a) batches.push_back(batch(alternatives[a], calls[a]));
    std::vector<double> seconds = interleaved_median_seconds(batches, reps);
    std::vector<std::string> row = {std::to_string(n)};
    for (std::size_t a = 0; a < seconds.size(); ++a) row.push_back(fmt(seconds[a] * 1e9 / calls[a], 1));
    row.push_back(fmt(seconds[0] * 1e9 / calls[0] / static_cast<double>(n), 2));
    t.add(row);
    for (std::size_t a = 0; a < seconds.size(); ++a) {
      const double ns = seconds[a] * 1e9 / calls[a];
      csv.add({n, keys[a], reps, ns, ns / static_cast<double>(n)});
    }
  }
  t.print();
  std::printf("Medians of %d batches (each >= 20 us) after warm-up, alternatives interleaved. parallel_for runs\n"
              "N = 1 inline and a 0-worker pool's loops serially; enqueue (+ wait_for) always goes through the\n"
              "pool. The loops through function_ref and task_body make the indirect call per item that the pool\n"
              "makes for enqueue_ref and for enqueue (each thread calls its copy of the std::function).\n",
              reps);
  return 0;
}
