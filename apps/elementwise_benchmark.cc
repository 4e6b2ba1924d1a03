// Benchmark 3 of docs/benchmarks.md: a chain of K = 4 and 8 elementwise float funcs over 16M elements,
// no schedule vs chunks of 1K..64K elements, beside a hand-written chunk loop and a fused pass.
// Usage: elementwise_benchmark [--quick] [--cpu-time] [--reps N] [--n N] [--csv FILE]
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "benchmark_util.h"
#include "elementwise_stage.h"
#include "pipeline_bench.h"
#include "slinky/builder/pipeline.h"

using namespace slinky;
using namespace slinky_bench;

namespace {

// The chain in -> b1 -> ... -> b(K-1) -> out, with out looped in chunks of `chunk` (0: no loop).
// The other funcs are computed where they are needed by default: inside that loop.
struct chain {
  node_context ctx;
  pipeline p;
  std::vector<var> intermediates;

  chain(int k, index_t chunk) {
    std::vector<buffer_expr_ptr> bufs;
    bufs.push_back(buffer_expr::make(ctx, "in", 1, sizeof(float)));
    for (int i = 1; i < k; ++i) {
      bufs.push_back(buffer_expr::make(ctx, std::string("b").append(std::to_string(i)), 1, sizeof(float)));
      intermediates.push_back(bufs.back()->sym());
    }
    bufs.push_back(buffer_expr::make(ctx, "out", 1, sizeof(float)));
    var x(ctx, "x");
    std::vector<func> funcs;
    for (int i = 0; i < k; ++i) {
      funcs.push_back(func::make<const float, float>(stage{scale(i), offset(i)}, {{bufs[i], {point(x)}}},
                                                     {{bufs[i + 1], {x}}}, {.name = "stage" + std::to_string(i)}));
    }
    if (chunk > 0) funcs.back().loops({{x, chunk}});
    p = build_pipeline(ctx, {bufs.front()}, {bufs.back()});
  }
};

// The best any runtime can do with these kernels: a C++ loop over chunks, each chunk going
// through the K kernels with two chunk-sized scratch buffers.
void hand_chunk_loop(int k, const float* in, float* out, index_t n, index_t chunk, float* s0, float* s1) {
  for (index_t x = 0; x < n; x += chunk) {
    const index_t m = std::min(chunk, n - x);
    const float* src = in + x;
    float* scratch[2] = {s0, s1};
    for (int i = 0; i < k; ++i) {
      float* dst = i + 1 == k ? out + x : scratch[i % 2];
      kernel(src, dst, m, scale(i), offset(i));
      src = dst;
    }
  }
}

// What any runtime can reach with these callbacks: the hand chunk loop, but each stage runs its
// callback (stage::operator(), as func::make calls it) through a function pointer, with a
// descriptor per buffer made for the chunk, as a runtime's crops make them. It takes none of a
// runtime's decisions (no bounds, no crops of a general kind, no allocation), so it is the floor
// of the "chunks of 1024" row: what is left between it and the hand chunk loop is the callbacks'
// own entry (their checks and address computations, a call that cannot be inlined).
using stage_entry = index_t (*)(const void*, const raw_buffer* const*);
__attribute__((noinline)) index_t call_stage(const void* s, const raw_buffer* const* b) {
  return (*static_cast<const stage*>(s))(b[0]->cast<const float>(), b[1]->cast<float>());
}
// Read through a volatile so that the compiler cannot inline the callback, as a runtime cannot.
stage_entry volatile stage_entry_point = call_stage;

void hand_callback_loop(int k, const float* in, float* out, index_t n, index_t chunk, float* s0, float* s1) {
  std::vector<stage> stages;
  for (int i = 0; i < k; ++i) stages.push_back(stage{scale(i), offset(i)});
  const stage_entry entry = stage_entry_point;
  for (index_t x = 0; x < n; x += chunk) {
    const index_t m = std::min(chunk, n - x);
    // Buffer i: the input (i = 0), the output (i = k), else scratch; each described as [x, x + m).
    dim dims[2];
    raw_buffer bufs[2];
    const raw_buffer* args[2] = {&bufs[0], &bufs[1]};
    for (int i = 0; i < k; ++i) {
      for (int j = 0; j < 2; ++j) {
        const int b = i + j;
        const float* base = b == 0 ? in + x : b == k ? out + x : (b % 2 ? s0 : s1);
        dims[j] = dim(x, x + m - 1, sizeof(float));
        bufs[j] = raw_buffer{const_cast<float*>(base), sizeof(float), 1, &dims[j]};
      }
      if (entry(&stages[i], args) != 0) wrong_result("hand callback loop: a stage failed");
    }
  }
}

// One pass in -> out doing the K stages on each element.
template <int K>
void hand_fused(const float* __restrict in, float* __restrict out, index_t n) {
  float a[K], b[K];
  for (int i = 0; i < K; ++i) {
    a[i] = scale(i);
    b[i] = offset(i);
  }
  for (index_t x = 0; x < n; ++x) {
    float v = in[x];
    for (int i = 0; i < K; ++i) v = v * a[i] + b[i];
    out[x] = v;
  }
}

// An allocate hook that puts the intermediates of a chunked chain in two blocks, alternately (the
// chain's nested allocations come outermost first, so neighbours in the chain get different
// blocks), as the hand chunk loop's two scratch buffers do. The builder shares storage within an
// iteration the same way by default (docs/builder.md, emit_program: the chain allocates two
// blocks), so this row is now a check that its sharing costs nothing over the hook's. Correct for
// these chains only because every stage reads only what its predecessor wrote in the same
// iteration (the output is checked).
struct two_blocks {
  eval_config config;
  eval_context context;
  std::vector<char> blocks[2];
  int next = 0;

  two_blocks() {
    config.auto_stack_threshold = 0;
    config.allocate = [this](var, raw_buffer* b) -> void* {
      const index_t size = static_cast<index_t>(b->init_strides().value_or(0));
      std::vector<char>& block = blocks[next++ % 2];
      if (static_cast<index_t>(block.size()) < size + 64) block.resize(size + 64);
      b->base = reinterpret_cast<void*>((reinterpret_cast<std::uintptr_t>(block.data()) + 63) & ~std::uintptr_t{63});
      return b->base;
    };
    config.free = [this](var, raw_buffer*, void*) { next = 0; };
    context.config = &config;
  }
};

struct row {
  std::string variant;
  double ms = 0;
  double ms_heap = -1;       // time with auto_stack_threshold = 0 (chunked variants only)
  index_t peak = -1;         // peak intermediate bytes (slinky variants only)
  index_t allocations = -1;  // allocations through the hooks per run
  int reps = 0;
  std::string key = "";  // the variant in the CSV
  index_t chunk = 0;     // elements per chunk (0: none)
};

}  // namespace

int main(int argc, char** argv) {
  const bool quick = has_flag(argc, argv, "--quick");
  const bool cpu_time = has_flag(argc, argv, "--cpu-time");
  const int reps = std::stoi(arg(argc, argv, "--reps", quick ? "5" : "11"));
  const int slow_reps = 3;
  const index_t n = std::stol(arg(argc, argv, "--n", quick ? "4194304" : "16777216"));
  print_machine("Benchmark 3: elementwise chains, no schedule vs chunks vs hand-written limits");
  print_fresh_page_cost();
  std::printf("%lld floats (%lld MiB) per buffer. Times are medians of %d repetitions interleaved in rounds\n",
              static_cast<long long>(n), static_cast<long long>(n * 4 >> 20), reps);
  std::printf("(after one warm-up), with the default eval_config (auto_stack_threshold 4096); \"time, all on\n");
  std::printf("heap\" uses auto_stack_threshold = 0, the config in which the peak intermediate memory is\n");
  std::printf("measured (allocate/free hooks). \"no schedule (malloc)\" allocates its intermediates with the\n");
  std::printf("default allocator on every run: fresh pages, whose first touch is very slow on this sandboxed\n");
  std::printf("machine; it is timed alone, median of %d runs. \"no schedule (memory reused)\" gets its\n", slow_reps);
  std::printf("intermediates from an allocate hook that reuses the blocks of the previous run.\n");
  std::printf("Clock: %s.\n", clock_name(cpu_time));
#ifdef SLINKY_BENCHMARK_ALIGNED_LOOPS
  std::printf(
      "Loops aligned to 64 bytes (-falign-loops=64; see apps/CMakeLists.txt): the hand loop's kernel and the\n");
  std::printf("callback's sit alike relative to cache lines, whatever the link.\n\n");
#else
  std::printf("Loops not aligned: where the linker puts the two kernels' loops can move the ratios by 1.5x.\n\n");
#endif

  const std::vector<index_t> chunks = {1024, 4096, 16384, 65536};
  buffer<float, 1> in_buf({n}), out_buf({n}), ref({n});
  in_buf.allocate();
  out_buf.allocate();
  ref.allocate();
  for (index_t i = 0; i < n; ++i) in_buf(i) = static_cast<float>(i % 1000) * 0.001f;
  std::vector<float> s0(chunks.back()), s1(chunks.back());
  csv_writer csv(argc, argv,
                 {"k_funcs", "elements", "variant", "chunk_elements", "repetitions", "time_ms", "time_all_on_heap_ms",
                  "gb_per_s", "vs_best_hand_chunk_loop", "peak_intermediate_bytes", "allocations_per_run"});

  for (int k : {4, 8}) {
    // The reference: the stages one after the other, element by element.
    for (index_t i = 0; i < n; ++i) {
      float v = in_buf(i);
      for (int s = 0; s < k; ++s) v = v * scale(s) + offset(s);
      ref(i) = v;
    }
    auto check = [&](const std::string& what) {
      for (index_t i = 0; i < n; ++i) {
        if (!(std::abs(out_buf(i) - ref(i)) <= 1e-5f * std::abs(ref(i)))) {
          wrong_result("K = " + std::to_string(k) + ", " + what + ": out(" + std::to_string(i) +
                       ") = " + std::to_string(out_buf(i)) + ", expected " + std::to_string(ref(i)));
        }
      }
    };
    auto clear = [&]() { std::memset(out_buf.base(), 0, n * sizeof(float)); };
    auto run = [&](const pipeline& p, eval_context* ctx) {
      const index_t r = ctx ? p.evaluate({&in_buf}, {&out_buf}, *ctx) : p.evaluate({&in_buf}, {&out_buf});
      if (r != 0) wrong_result("K = " + std::to_string(k) + ": evaluate failed");
    };

    // The pipelines: no schedule (chunk 0) and the chunk sizes; each run checked with the default
    // config and with all allocations seen by the hooks.
    std::vector<index_t> schedules = {0};
    schedules.insert(schedules.end(), chunks.begin(), chunks.end());
    std::vector<std::unique_ptr<chain>> pipelines;
    std::vector<std::unique_ptr<alloc_tracker>> heap;  // auto_stack_threshold = 0
    for (index_t c : schedules) {
      pipelines.push_back(std::make_unique<chain>(k, c));
      heap.push_back(std::make_unique<alloc_tracker>(0, /*reuse_memory=*/c == 0));
      const std::string name = c == 0 ? std::string("no schedule") : "chunks of " + std::to_string(c);
      clear();
      run(pipelines.back()->p, nullptr);
      check(name);
      clear();
      run(pipelines.back()->p, &heap.back()->context);
      check(name + " (auto_stack_threshold = 0)");
    }
    for (index_t c : chunks) {
      clear();
      hand_chunk_loop(k, in_buf.base(), out_buf.base(), n, c, s0.data(), s1.data());
      check("hand chunk loop " + std::to_string(c));
    }
    clear();
    hand_callback_loop(k, in_buf.base(), out_buf.base(), n, chunks[0], s0.data(), s1.data());
    check("hand chunk loop calling the callbacks");
    clear();
    if (k == 4)
      hand_fused<4>(in_buf.base(), out_buf.base(), n);
    else
      hand_fused<8>(in_buf.base(), out_buf.base(), n);
    check("hand fused");

    std::vector<row> rows;
    // No schedule with the default allocator: slow, timed alone.
    rows.push_back({"slinky, no schedule (malloc)"});
    rows.back().ms = median_of([&]() { run(pipelines[0]->p, nullptr); }, slow_reps, 0, cpu_time) * 1e3;
    rows.back().reps = slow_reps;
    rows.back().key = "no_schedule_malloc";
    rows.back().peak = heap[0]->peak;
    rows.back().allocations = heap[0]->allocations;
    check("no schedule, after timing");

    // Everything else timed in interleaved rounds: fns[i] gives rows[i + 1].ms, then the
    // chunked variants again with all allocations on the heap.
    std::vector<std::function<void()>> fns;
    rows.push_back({"slinky, no schedule (memory reused)"});
    rows.back().key = "no_schedule_memory_reused";
    rows.back().peak = heap[0]->peak;
    rows.back().allocations = heap[0]->allocations;
    fns.push_back([&]() { run(pipelines[0]->p, &heap[0]->context); });
    for (std::size_t i = 1; i < pipelines.size(); ++i) {
      rows.push_back({"slinky, chunks of " + std::to_string(schedules[i])});
      rows.back().key = "slinky_chunks";
      rows.back().chunk = schedules[i];
      rows.back().peak = heap[i]->peak;
      rows.back().allocations = heap[i]->allocations;
      fns.push_back([&, i]() { run(pipelines[i]->p, nullptr); });
    }
    for (index_t c : chunks) {
      rows.push_back({"hand-written chunk loop, chunks of " + std::to_string(c)});
      rows.back().key = "hand_chunk_loop";
      rows.back().chunk = c;
      fns.push_back([&, c]() { hand_chunk_loop(k, in_buf.base(), out_buf.base(), n, c, s0.data(), s1.data()); });
    }
    rows.push_back({"hand chunk loop calling the callbacks, chunks of 1024 (floor of any runtime)"});
    rows.back().key = "hand_callback_loop";
    rows.back().chunk = chunks[0];
    fns.push_back([&]() { hand_callback_loop(k, in_buf.base(), out_buf.base(), n, chunks[0], s0.data(), s1.data()); });
    const std::size_t callback_row = rows.size() - 1;
    rows.push_back({"hand-fused single pass"});
    rows.back().key = "hand_fused";
    fns.push_back([&]() {
      if (k == 4)
        hand_fused<4>(in_buf.base(), out_buf.base(), n);
      else
        hand_fused<8>(in_buf.base(), out_buf.base(), n);
    });
    const std::size_t fused_row = rows.size() - 1;
    // The chain in chunks of 1024 with its intermediates in two blocks (two_blocks).
    two_blocks shared;
    clear();
    run(pipelines[1]->p, &shared.context);
    check("chunks of 1024, intermediates in two blocks");
    rows.push_back({"slinky, chunks of 1024, intermediates in 2 blocks (allocate hook)"});
    rows.back().key = "slinky_chunks_two_blocks";
    rows.back().chunk = schedules[1];
    fns.push_back([&]() { run(pipelines[1]->p, &shared.context); });
    const std::size_t num_main = fns.size();
    for (std::size_t i = 1; i < pipelines.size(); ++i) {
      fns.push_back([&, i]() { run(pipelines[i]->p, &heap[i]->context); });
    }
    std::vector<double> s = interleaved_medians(fns, reps, cpu_time);
    check("after timing");
    for (std::size_t i = 0; i < num_main; ++i) {
      rows[i + 1].ms = s[i] * 1e3;
      rows[i + 1].reps = reps;
    }
    for (std::size_t i = 1; i < pipelines.size(); ++i) rows[i + 1].ms_heap = s[num_main + i - 1] * 1e3;

    // The first chunked row is rows[2], the first hand chunk loop rows[2 + chunks.size()].
    const std::size_t first_chunked = 2, first_hand = 2 + chunks.size();
    std::size_t best_chunked = first_chunked, best_hand = first_hand;
    for (std::size_t i = first_chunked; i < first_hand; ++i) {
      if (rows[i].ms < rows[best_chunked].ms) best_chunked = i;
    }
    for (std::size_t i = first_hand; i < first_hand + chunks.size(); ++i) {
      if (rows[i].ms < rows[best_hand].ms) best_hand = i;
    }
    const double hand_ms = rows[best_hand].ms;

    std::printf("## K = %d\n\n", k);
    table t({"variant", "repetitions", "time (ms)", "time, all on heap (ms)", "GB/s (in + out)",
             "vs best hand chunk loop", "peak intermediates (bytes)", "allocations per run"});
    for (const row& r : rows) {
      t.add({r.variant, std::to_string(r.reps), fmt(r.ms, 2), r.ms_heap < 0 ? "" : fmt(r.ms_heap, 2),
             fmt(2.0 * n * sizeof(float) / (r.ms * 1e6), 2), fmt(r.ms / hand_ms, 2),
             r.peak < 0 ? "" : std::to_string(r.peak), r.allocations < 0 ? "" : std::to_string(r.allocations)});
    }
    t.print();
    for (const row& r : rows) {
      csv.add({k, n, r.key, csv_writer::if_measured(r.chunk > 0, r.chunk), r.reps, r.ms,
               csv_writer::if_measured(r.ms_heap >= 0, r.ms_heap), 2.0 * n * sizeof(float) / (r.ms * 1e6),
               r.ms / hand_ms, csv_writer::if_measured(r.peak >= 0, r.peak),
               csv_writer::if_measured(r.allocations >= 0, r.allocations)});
    }
    const double ratio = rows[best_chunked].ms / hand_ms;
    std::printf("K = %d: best chunked: %s, %.2f ms; best hand chunk loop: %s, %.2f ms; hand-fused: %.2f ms\n", k,
                rows[best_chunked].variant.c_str(), rows[best_chunked].ms, rows[best_hand].variant.c_str(), hand_ms,
                rows[fused_row].ms);
    std::printf("K = %d: chunks of 1024 / hand chunk loop in chunks of 1024: %.2f (target <= 1.08): %s; with the "
                "intermediates in two blocks: %.2f\n",
                k, rows[first_chunked].ms / rows[first_hand].ms,
                pass_or_miss(rows[first_chunked].ms <= 1.08 * rows[first_hand].ms),
                rows.back().ms / rows[first_hand].ms);
    std::printf("K = %d: the floor of any runtime with these callbacks (the hand chunk loop calling them) / hand "
                "chunk loop: %.2f; chunks of 1024 / that floor: %.2f\n",
                k, rows[callback_row].ms / rows[first_hand].ms, rows[first_chunked].ms / rows[callback_row].ms);
    std::printf("K = %d: best chunked / best hand chunk loop: %.2f (target <= 1.05): %s\n", k, ratio,
                pass_or_miss(ratio <= 1.05));
    std::printf("K = %d: peak intermediates of the best chunked schedule: %lld bytes (target <= 2 MiB): %s\n\n", k,
                static_cast<long long>(rows[best_chunked].peak),
                pass_or_miss(rows[best_chunked].peak <= 2 * 1024 * 1024));
  }
  return 0;
}
