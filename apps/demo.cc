// The founding document's examples (the README's "The founding ideas" lists them), each built
// with no schedule and with a schedule that keeps its intermediates small: the program is
// printed, run, checked against a plain C++ reference, and its time, peak intermediate memory
// (through the allocate/free hooks) and speed-up over no schedule are reported.
//
// The sizes are chosen so that locality matters: the unscheduled intermediates (64 MB for the
// elementwise chain and the stencil) are far larger than the caches, while the scheduled ones
// fit in L1 or L2. The callbacks are written the way a callback should be (docs/api.md, "Writing
// callbacks"): a pointer per row, computed once per row (the ring buffer's fold is handled
// there), and plain pointer arithmetic along the row.
//
// Usage: demo [--print] [--explain] [--auto] [--trace file.json] [--out dir | --no-files]
//   The table of results comes first, with a one-line reading of it; then, on request:
//   --print prints each example's program (what build_pipeline made of it), after the table;
//   --explain prints what the builder decided for the stencil's strips schedule, and why
//   (slinky/builder/explain.h), and with --auto what the automatic scheduler decided;
//   --quiet is accepted and does nothing (the programs are only printed with --print);
//   --auto adds to each example the automatic scheduler's schedule for its shapes and this
//   machine (slinky/scheduler/schedule.h, docs/scheduler.md);
//   --out (default demo_output; --visualize is another name for it) is where the demo writes,
//   and after its table says where: stencil_strips_of_16.html, a page replaying the stencil's
//   strips schedule on a small image (slinky/runtime/visualize.h, docs/tools.md), and
//   trace.json, a Chrome/Perfetto trace of each scheduled example built (build_options::trace)
//   and run once on small buffers: its build, its loops, iterations and calls (open it in
//   ui.perfetto.dev). These take milliseconds, apart from the timed runs. --no-files writes none;
//   --trace builds the pipelines with build_options::trace and writes every timed evaluation's
//   "pipeline", "loop <var>", "loop <var> iteration" and call events to file.json through
//   eval_config's trace_begin/trace_end hooks and a chrome_trace.
#include <malloc.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "benchmark_util.h"
#include "slinky/base/chrome_trace.h"
#include "slinky/builder/explain.h"
#include "slinky/builder/pipeline.h"
#include "slinky/runtime/print.h"
#include "slinky/runtime/visualize.h"
#include "slinky/scheduler/schedule.h"

using namespace slinky;
using namespace slinky_bench;

namespace {

bool print_programs = false;          // set by --print
std::string details;                  // the programs and explanations, printed after the table
chrome_trace* trace = nullptr;        // set by --trace
std::string out_dir = "demo_output";  // --out; empty with --no-files
chrome_trace* small_trace = nullptr;  // out_dir/trace.json
std::vector<std::string> files;       // what the demo wrote, said after the table
bool explain = false;                 // set by --explain
bool automatic = false;               // set by --auto

// The automatic scheduler (slinky/scheduler/schedule.h) on the example's graph, for its shapes and
// this machine; with --explain, what it decided and why.
void auto_schedule(const std::string& example, node_context& ctx, const std::vector<buffer_expr_ptr>& inputs,
                   const std::vector<buffer_expr_ptr>& outputs, const schedule_shapes& shapes) {
  // The demo evaluates without a thread pool: a machine of one thread (no parallel loops).
  machine m = machine::host();
  m.threads = 1;
  const schedule_report r = schedule(inputs, outputs, shapes, m);
  if (explain) {
    details +=
        "What the automatic scheduler decided for " + example + ", and why:\n\n```\n" + r.to_string(&ctx) + "```\n\n";
  }
}

// The schedule's name in the results of an example with a hand schedule named `hand`.
std::string schedule_name(int variant, const std::string& hand) {
  return variant == 0 ? "no schedule" : variant == 1 ? hand : "automatic (schedule(), this machine)";
}

// The build options of every example: tracing brackets when --trace is given.
build_options options() {
  build_options o;
  o.trace = trace != nullptr;
  return o;
}

// Tracing hooks writing to t. The token returned by trace_begin is given back to trace_end: here,
// the name itself.
void trace_to(chrome_trace* t, eval_config& config) {
  config.trace_begin = [t](const char* name) {
    t->begin(name);
    return reinterpret_cast<index_t>(name);
  };
  config.trace_end = [t](index_t token) { t->end(reinterpret_cast<const char*>(token)); };
}

// Into small_trace (when there is one): the example `what` built with build_options::trace and run
// once by `evaluate`, inside an event named `what`.
void traced_small_run(const std::string& what, node_context& ctx, const std::vector<buffer_expr_ptr>& inputs,
                      const std::vector<buffer_expr_ptr>& outputs,
                      const std::function<index_t(const pipeline&, eval_context&)>& evaluate) {
  if (!small_trace) return;
  small_trace->begin(what.c_str());
  build_options o;
  o.trace = true;
  small_trace->begin("build_pipeline");
  pipeline p = build_pipeline(ctx, inputs, outputs, o);
  small_trace->end("build_pipeline");
  eval_config config;
  trace_to(small_trace, config);
  eval_context c;
  c.config = &config;
  if (evaluate(p, c) != 0) wrong_result(what + ": the traced run failed");
  small_trace->end(what.c_str());
}

// Tracks the peak bytes of intermediates allocated while a pipeline runs.
struct memory_tracker {
  index_t live = 0;
  index_t peak = 0;
  eval_config config;
  eval_context context;

  memory_tracker() {
    config.auto_stack_threshold = 0;
    config.allocate = [this](var, raw_buffer* b) {
      live += b->size_bytes();
      peak = std::max(peak, live);
      return b->allocate();
    };
    config.free = [this](var, raw_buffer* b, void* p) {
      live -= b->size_bytes();
      std::free(p);
    };
    if (trace) trace_to(trace, config);
    context.config = &config;
  }
};

struct result {
  std::string example;
  std::string schedule;
  double ms;
  index_t peak_bytes;
  double speedup;  // time with no schedule / this time
  std::string note;
};
std::vector<result> results;

// Prints, runs (timed) and checks one pipeline. `if_slower` says why the schedule may not win.
void run(const std::string& example, const std::string& schedule, const pipeline& p,
         const std::function<index_t(eval_context&)>& evaluate, const std::function<bool()>& check,
         const std::string& if_slower = "") {
  if (print_programs) {
    std::ostringstream program;
    program << "## " << example << ", " << schedule << "\n\n```\n" << p.body << "```\n\n";
    details += program.str();
  }
  memory_tracker m;
  if (evaluate(m.context) != 0) wrong_result(example + ": evaluate failed");
  if (!check()) wrong_result(example + " (" + schedule + ")");
  double t = median_seconds([&]() { evaluate(m.context); }, 5, 1);
  // The unscheduled run of the same example comes first.
  const result* base = nullptr;
  for (const result& r : results) {
    if (r.example == example) base = &r;
    if (base) break;
  }
  const bool unscheduled = base == nullptr;
  const double speedup = unscheduled ? 1.0 : base->ms / (t * 1e3);
  std::string note;
  if (!unscheduled && speedup < 1.0) note = if_slower;
  results.push_back({example, schedule, t * 1e3, m.peak, speedup, note});
}

// A pointer to element (x, y) of b, which must be dense along dim 0 (true of the buffers slinky
// allocates and of the demo's inputs): the row's address is computed once, including the
// modulo of a folded (ring buffer) dim 1.
template <typename T>
T* row(const buffer<T>& b, index_t x, index_t y) {
  return &b(x, y);
}

index_t multiply_2(const buffer<const int>& in, const buffer<int>& out) {
  const index_t x0 = out.dim(0).min();
  const index_t n = out.dim(0).extent();
  const int* __restrict src = &in(x0);
  int* __restrict dst = &out(x0);
  for (index_t i = 0; i < n; ++i) dst[i] = src[i] * 2;
  return 0;
}

index_t add_1(const buffer<const int>& in, const buffer<int>& out) {
  const index_t x0 = out.dim(0).min();
  const index_t n = out.dim(0).extent();
  const int* __restrict src = &in(x0);
  int* __restrict dst = &out(x0);
  for (index_t i = 0; i < n; ++i) dst[i] = src[i] + 1;
  return 0;
}

// variant 0: no schedule; 1: the hand schedule; 2: the automatic scheduler's.
void elementwise(int variant) {
  const bool scheduled = variant == 1;
  const std::string example = "elementwise (in * 2 + 1, 16M ints)";
  const index_t n = 16 << 20;
  node_context ctx;
  auto in = buffer_expr::make(ctx, "in", 1, sizeof(int));
  auto out = buffer_expr::make(ctx, "out", 1, sizeof(int));
  auto intm = buffer_expr::make(ctx, "intm", 1, sizeof(int));
  var x(ctx, "x");
  func mul = func::make(multiply_2, {{in, {point(x)}}}, {{intm, {x}}}, {.name = "multiply_2"});
  func add = func::make(add_1, {{intm, {point(x)}}}, {{out, {x}}}, {.name = "add_1"});
  // The document's second strategy, with chunks large enough to amortize the calls.
  if (scheduled) add.loops({{x, 1024}});
  if (variant == 2) auto_schedule(example, ctx, {in}, {out}, schedule_shapes().add(in, {n}).add(out, {n}));
  pipeline p = build_pipeline(ctx, {in}, {out}, options());

  buffer<int, 1> in_buf({n}), out_buf({n});
  in_buf.allocate();
  out_buf.allocate();
  for (index_t i = 0; i < n; ++i) in_buf(i) = static_cast<int>(i % 1000);
  run(
      example, schedule_name(variant, "loop over x in chunks of 1024"), p,
      [&](eval_context& c) { return p.evaluate({&in_buf}, {&out_buf}, c); },
      [&]() {
        for (index_t i = 0; i < n; ++i) {
          if (out_buf(i) != in_buf(i) * 2 + 1) return false;
        }
        return true;
      },
      "the schedule moves half the bytes through memory (in and out, against in, intm twice and out); "
      "if it is slower, memory bandwidth was not the limit in this run (e.g. another process was using "
      "the cores)");
  if (scheduled) {
    buffer<int, 1> small_in({8192}), small_out({8192});
    small_in.allocate();
    small_out.allocate();
    for_each_element([](int* v) { *v = 1; }, small_in);
    traced_small_run("elementwise, 8192 ints in chunks of 1024", ctx, {in}, {out},
                     [&](const pipeline& tp, eval_context& c) { return tp.evaluate({&small_in}, {&small_out}, c); });
  }
}

// Matrices are indexed (row, column).
index_t matmul(const buffer<const float>& a, const buffer<const float>& b, const buffer<float>& c) {
  for (index_t i = c.dim(0).min(); i <= c.dim(0).max(); ++i) {
    for (index_t j = c.dim(1).min(); j <= c.dim(1).max(); ++j) c(i, j) = 0;
    for (index_t k = a.dim(1).min(); k <= a.dim(1).max(); ++k) {
      const float a_ik = a(i, k);
      for (index_t j = c.dim(1).min(); j <= c.dim(1).max(); ++j) c(i, j) += a_ik * b(k, j);
    }
  }
  return 0;
}

void matrix_product(int variant) {
  const bool scheduled = variant == 1;
  const std::string example = "matrix product (a x b) x c, 128x128";
  const index_t n = 128;
  node_context ctx;
  auto a = buffer_expr::make(ctx, "a", 2, sizeof(float));
  auto b = buffer_expr::make(ctx, "b", 2, sizeof(float));
  auto c = buffer_expr::make(ctx, "c", 2, sizeof(float));
  auto d = buffer_expr::make(ctx, "d", 2, sizeof(float));
  auto ab = buffer_expr::make(ctx, "ab", 2, sizeof(float));
  var i(ctx, "i"), j(ctx, "j");
  auto k_ab = a->dim(1).bounds;
  auto k_d = c->dim(0).bounds;
  func matmul_ab = func::make(matmul, {{a, {point(i), k_ab}}, {b, {k_ab, point(j)}}}, {{ab, {i, j}}}, {.name = "ab"});
  func matmul_abc = func::make(matmul, {{ab, {point(i), k_d}}, {c, {k_d, point(j)}}}, {{d, {i, j}}}, {.name = "abc"});
  // The document's schedule: one row of ab at a time, computed in the loop over rows of d.
  if (scheduled) matmul_abc.loops({{i, 1}});
  if (variant == 2) {
    auto_schedule(example, ctx, {a, b, c}, {d},
                  schedule_shapes().add(a, {n, n}).add(b, {n, n}).add(c, {n, n}).add(d, {n, n}));
  }
  pipeline p = build_pipeline(ctx, {a, b, c}, {d}, options());

  buffer<float, 2> a_buf({n, n}), b_buf({n, n}), c_buf({n, n}), d_buf({n, n}), ref({n, n}), ab_ref({n, n});
  for (auto* buf : {&a_buf, &b_buf, &c_buf, &d_buf, &ref, &ab_ref}) buf->allocate();
  for (index_t y = 0; y < n; ++y) {
    for (index_t x = 0; x < n; ++x) {
      a_buf(x, y) = static_cast<float>((x + 2 * y) % 7) - 3;
      b_buf(x, y) = static_cast<float>((3 * x + y) % 5) - 2;
      c_buf(x, y) = static_cast<float>((x * y) % 3) - 1;
    }
  }
  matmul(a_buf.cast<const float>(), b_buf.cast<const float>(), ab_ref);
  matmul(ab_ref.cast<const float>(), c_buf.cast<const float>(), ref);
  run(
      example, schedule_name(variant, "loop over rows of d"), p,
      [&](eval_context& ctx) {
        return p.evaluate({&a_buf, &b_buf, &c_buf}, {&d_buf}, ctx);
      },
      [&]() {
        for (index_t y = 0; y < n; ++y) {
          for (index_t x = 0; x < n; ++x) {
            if (std::abs(d_buf(x, y) - ref(x, y)) > 1e-3f * (1 + std::abs(ref(x, y)))) return false;
          }
        }
        return true;
      },
      "the products are compute-bound and every row of a x b is computed once either way: the schedule "
      "saves memory (one row of a x b instead of all), not time");
  if (scheduled) {
    buffer<float, 2> sa({16, 16}), sb({16, 16}), sc({16, 16}), sd({16, 16});
    for (auto* buf : {&sa, &sb, &sc, &sd}) {
      buf->allocate();
      for_each_element([](float* v) { *v = 1; }, *buf);
    }
    traced_small_run("matrix product, 16x16, by rows of d", ctx, {a, b, c}, {d},
                     [&](const pipeline& tp, eval_context& ec) {
                       return tp.evaluate({&sa, &sb, &sc}, {&sd}, ec);
                     });
  }
}

index_t sum_3x3(const buffer<const int>& in, const buffer<int>& out) {
  const index_t x0 = out.dim(0).min();
  const index_t n = out.dim(0).extent();
  for (index_t y = out.dim(1).min(); y <= out.dim(1).max(); ++y) {
    // __restrict: the rows do not overlap, so the compiler may vectorize the loop.
    const int* __restrict above = row(in, x0 - 1, y - 1);
    const int* __restrict middle = row(in, x0 - 1, y);
    const int* __restrict below = row(in, x0 - 1, y + 1);
    int* __restrict dst = row(out, x0, y);
    for (index_t i = 0; i < n; ++i) {
      dst[i] = above[i] + above[i + 1] + above[i + 2] + middle[i] + middle[i + 1] + middle[i + 2] + below[i] +
               below[i + 1] + below[i + 2];
    }
  }
  return 0;
}

index_t multiply_2_2d(const buffer<const int>& in, const buffer<int>& out) {
  const index_t x0 = out.dim(0).min();
  const index_t n = out.dim(0).extent();
  for (index_t y = out.dim(1).min(); y <= out.dim(1).max(); ++y) {
    const int* __restrict src = row(in, x0, y);
    int* __restrict dst = row(out, x0, y);
    for (index_t i = 0; i < n; ++i) dst[i] = src[i] * 2;
  }
  return 0;
}

// step 0: no schedule (or, with `automatic`, the automatic scheduler's); otherwise a loop over
// strips of `step` rows of out.
void stencil(index_t step, bool automatic_schedule = false) {
  const std::string example = "3x3 stencil of (in * 2), 4096x4096 ints";
  const index_t w = 4096, h = 4096;
  node_context ctx;
  auto in = buffer_expr::make(ctx, "in", 2, sizeof(int));
  auto intm = buffer_expr::make(ctx, "intm", 2, sizeof(int));
  auto out = buffer_expr::make(ctx, "out", 2, sizeof(int));
  var x(ctx, "x"), y(ctx, "y");
  func mul = func::make(multiply_2_2d, {{in, {point(x), point(y)}}}, {{intm, {x, y}}}, {.name = "multiply_2"});
  func sum =
      func::make(sum_3x3, {{intm, {bounds(x - 1, x + 1), bounds(y - 1, y + 1)}}}, {{out, {x, y}}}, {.name = "sum_3x3"});
  if (step > 0) sum.loops({{y, step}});
  if (automatic_schedule) {
    schedule_shapes shapes;
    shapes.buffers.push_back({in, {{-1, w}, {-1, h}}, sizeof(int)});
    shapes.add(out, {w, h});
    auto_schedule(example, ctx, {in}, {out}, shapes);
  }
  pipeline p = build_pipeline(ctx, {in}, {out}, options());
  if (explain && step > 1) {
    details += "What the builder decided for the stencil in strips of " + std::to_string(step) + " rows, and why:\n\n" +
               explain_pipeline(ctx, {in}, {out}, options()) + "\n";
  }

  buffer<int, 2> in_buf({w + 2, h + 2}), out_buf({w, h});
  in_buf.translate(-1, -1);
  in_buf.allocate();
  out_buf.allocate();
  for (index_t j = -1; j <= h; ++j) {
    for (index_t i = -1; i <= w; ++i) in_buf(i, j) = static_cast<int>((i * 7 + j * 3) % 11);
  }
  run(
      example,
      automatic_schedule ? schedule_name(2, "")
      : step == 0        ? "no schedule"
      : step == 1        ? "loop over rows of out"
                         : "loop over strips of " + std::to_string(step) + " rows of out",
      p, [&](eval_context& c) { return p.evaluate({&in_buf}, {&out_buf}, c); },
      [&]() {
        for (index_t j = 0; j < h; ++j) {
          for (index_t i = 0; i < w; ++i) {
            int expected = 0;
            for (int dy = -1; dy <= 1; ++dy) {
              for (int dx = -1; dx <= 1; ++dx) expected += in_buf(i + dx, j + dy) * 2;
            }
            if (out_buf(i, j) != expected) return false;
          }
        }
        return true;
      },
      "the schedule halves the bytes moved through memory (in and out, against in, intm twice and out), "
      "but on this machine the 3x3 sums, done between the loads of each row instead of hidden behind "
      "one long stream, cost about as much time as the memory traffic saved; strips of rows amortize "
      "the per-call cost");

  // A page replaying the strips schedule on a small image (docs/tools.md): the ring buffer of
  // step + 2 rows, the strips sliding down it; and a trace of it on the same image.
  if (!out_dir.empty() && step > 1) {
    buffer<int, 2> small_in({26, 50}), small_out({24, 48});
    small_in.translate(-1, -1);
    small_in.allocate();
    small_out.allocate();
    for_each_element([](int* v) { *v = 1; }, small_in);
    const std::string path = out_dir + "/stencil_strips_of_" + std::to_string(step) + ".html";
    std::ofstream page(path);
    visualize(page, p, {&small_in}, {&small_out}, &ctx);
    files.push_back(path + (page ? "" : " (could not be written)") +
                    ": a page replaying the 3x3 stencil in strips of " + std::to_string(step) +
                    " rows on a 24x48 image (open it in a browser)");
    traced_small_run("3x3 stencil, 24x48, strips of " + std::to_string(step) + " rows", ctx, {in}, {out},
                     [&](const pipeline& tp, eval_context& c) { return tp.evaluate({&small_in}, {&small_out}, c); });
  }
}

// The table in one line: how much faster, and with how much less intermediate memory, the fastest
// schedule of each example runs than the same example with no schedule.
std::string reading() {
  double min_speedup = 0, max_speedup = 0, min_memory = 0, max_memory = 0;
  int examples = 0;
  for (const result& base : results) {
    if (base.schedule != "no schedule") continue;
    const result* best = nullptr;
    for (const result& r : results) {
      if (r.example == base.example && &r != &base && (!best || r.ms < best->ms)) best = &r;
    }
    if (!best) continue;
    const double memory = static_cast<double>(base.peak_bytes) / std::max<double>(best->peak_bytes, 1);
    if (examples == 0 || best->speedup < min_speedup) min_speedup = best->speedup;
    if (examples == 0 || best->speedup > max_speedup) max_speedup = best->speedup;
    if (examples == 0 || memory < min_memory) min_memory = memory;
    if (examples == 0 || memory > max_memory) max_memory = memory;
    ++examples;
  }
  if (examples == 0) return "";
  return "Reading: the fastest schedule of each of the " + std::to_string(examples) + " examples runs " +
         fmt(min_speedup, 2) + "-" + fmt(max_speedup, 2) + "x the speed of no schedule, with " + fmt(min_memory, 0) +
         "-" + fmt(max_memory, 0) + "x less peak intermediate memory.";
}

}  // namespace

int main(int argc, char** argv) {
  std::ofstream trace_file;
  std::unique_ptr<chrome_trace> trace_writer;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--print") == 0) {
      print_programs = true;
    } else if (std::strcmp(argv[i], "--quiet") == 0) {
    } else if (std::strcmp(argv[i], "--explain") == 0) {
      explain = true;
    } else if ((std::strcmp(argv[i], "--out") == 0 || std::strcmp(argv[i], "--visualize") == 0) && i + 1 < argc) {
      out_dir = argv[++i];
    } else if (std::strcmp(argv[i], "--auto") == 0) {
      automatic = true;
    } else if (std::strcmp(argv[i], "--no-files") == 0) {
      out_dir.clear();
    } else if (std::strcmp(argv[i], "--trace") == 0 && i + 1 < argc) {
      trace_file.open(argv[++i]);
      if (!trace_file) {
        std::fprintf(stderr, "demo: cannot write %s\n", argv[i]);
        return 1;
      }
      trace_writer = std::make_unique<chrome_trace>(trace_file);
      trace = trace_writer.get();
    } else {
      std::fprintf(stderr, "usage: demo [--print] [--explain] [--auto] [--trace file.json] [--out dir | --no-files]\n");
      return 1;
    }
  }
  std::ofstream small_trace_file;
  std::unique_ptr<chrome_trace> small_trace_writer;
  if (!out_dir.empty()) {
    std::error_code error;
    std::filesystem::create_directories(out_dir, error);
    const std::string path = out_dir + "/trace.json";
    small_trace_file.open(path);
    if (!small_trace_file) {
      std::fprintf(stderr, "demo: cannot write %s\n", path.c_str());
      return 1;
    }
    small_trace_writer = std::make_unique<chrome_trace>(small_trace_file);
    small_trace = small_trace_writer.get();
    files.push_back(path + ": a Chrome/Perfetto trace of each scheduled example built and run once on small buffers "
                           "(open it at ui.perfetto.dev)");
  }
  print_machine("slinky demo: the founding document's examples");
  // Keep freed memory in the heap (no mmap per large block, no trimming), so that repeated
  // evaluations reuse the same pages: the times then compare locality, not the page faults of a
  // fresh 64 MB intermediate in every run (which would flatter the schedules even more).
  mallopt(M_MMAP_THRESHOLD, 1 << 30);
  mallopt(M_TRIM_THRESHOLD, 1 << 30);
  std::printf("The allocator keeps freed memory for reuse (mallopt), so times compare locality, not page faults.\n");
  std::printf("Each example runs with no schedule and with a schedule, and each result is checked against a plain C++ "
              "reference (a wrong one stops the demo).\n\n");
  std::fflush(stdout);
  const int variants = automatic ? 3 : 2;
  for (int v = 0; v < variants; ++v) elementwise(v);
  for (int v = 0; v < variants; ++v) matrix_product(v);
  for (index_t step : {0, 1, 16}) stencil(step);
  if (automatic) stencil(0, true);

  table t({"example", "schedule", "time (ms)", "peak intermediate memory (bytes)", "speed vs no schedule"});
  for (const result& r : results) {
    t.add({r.example, r.schedule, fmt(r.ms), std::to_string(static_cast<long long>(r.peak_bytes)),
           fmt(r.speedup, 2) + "x"});
  }
  t.print();
  std::printf("%s\n", reading().c_str());
  for (const result& r : results) {
    if (!r.note.empty())
      std::printf("\n%s, %s: slower than no schedule: %s\n", r.example.c_str(), r.schedule.c_str(), r.note.c_str());
  }
  // The trace is a complete JSON document once its writer is gone.
  small_trace = nullptr;
  small_trace_writer.reset();
  small_trace_file.close();
  if (!files.empty()) std::printf("\nWritten:\n");
  for (const std::string& f : files) std::printf("- %s\n", f.c_str());
  if (!details.empty()) std::printf("\n%s", details.c_str());
  if (!print_programs) std::printf("\nThe programs build_pipeline made of each example: demo --print.\n");
  return 0;
}
