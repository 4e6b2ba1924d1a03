// The founding document's examples (the README's "The founding ideas" lists them), each built
// with no schedule and with a schedule that keeps its intermediates small: the program is
// printed, run, checked against a plain C++ reference, and its time and peak intermediate memory
// (through the allocate/free hooks) are reported.
//
// Usage: demo [--quiet] [--trace file.json]
//   --quiet skips printing the programs;
//   --trace builds the pipelines with build_options::trace and writes every evaluation's
//   "pipeline", "loop <var>", "loop <var> iteration" and call events to file.json through
//   eval_config's trace_begin/trace_end hooks and a chrome_trace (open it in ui.perfetto.dev).
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <functional>
#include <iostream>
#include <memory>
#include <string>

#include "benchmark_util.h"
#include "slinky/base/chrome_trace.h"
#include "slinky/builder/pipeline.h"
#include "slinky/runtime/print.h"

using namespace slinky;
using namespace slinky_bench;

namespace {

bool quiet = false;
chrome_trace* trace = nullptr;  // set by --trace

// The build options of every example: tracing brackets when --trace is given.
build_options options() {
  build_options o;
  o.trace = trace != nullptr;
  return o;
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
    if (trace) {
      // The token returned by trace_begin is given back to trace_end: here, the name itself.
      config.trace_begin = [](const char* name) {
        trace->begin(name);
        return reinterpret_cast<index_t>(name);
      };
      config.trace_end = [](index_t token) { trace->end(reinterpret_cast<const char*>(token)); };
    }
    context.config = &config;
  }
};

struct result {
  std::string example;
  std::string schedule;
  double ms;
  index_t peak_bytes;
};
std::vector<result> results;

// Prints, runs (timed) and checks one pipeline.
void run(const std::string& example, const std::string& schedule, const pipeline& p,
         const std::function<index_t(eval_context&)>& evaluate, const std::function<bool()>& check) {
  std::printf("## %s, %s\n\n", example.c_str(), schedule.c_str());
  if (!quiet) std::cout << "```\n" << p.body << "```\n\n";
  memory_tracker m;
  if (evaluate(m.context) != 0) wrong_result(example + ": evaluate failed");
  if (!check()) wrong_result(example + " (" + schedule + ")");
  double t = median_seconds([&]() { evaluate(m.context); }, 5, 1);
  std::printf("correct; %.3f ms; peak intermediate memory %lld bytes\n\n", t * 1e3, static_cast<long long>(m.peak));
  results.push_back({example, schedule, t * 1e3, m.peak});
}

index_t multiply_2(const buffer<const int>& in, const buffer<int>& out) {
  for (index_t x = out.dim(0).min(); x <= out.dim(0).max(); ++x) out(x) = in(x)*2;
  return 0;
}

index_t add_1(const buffer<const int>& in, const buffer<int>& out) {
  for (index_t x = out.dim(0).min(); x <= out.dim(0).max(); ++x) out(x) = in(x) + 1;
  return 0;
}

void elementwise(bool scheduled) {
  node_context ctx;
  auto in = buffer_expr::make(ctx, "in", 1, sizeof(int));
  auto out = buffer_expr::make(ctx, "out", 1, sizeof(int));
  auto intm = buffer_expr::make(ctx, "intm", 1, sizeof(int));
  var x(ctx, "x");
  func mul = func::make(multiply_2, {{in, {point(x)}}}, {{intm, {x}}}, {.name = "multiply_2"});
  func add = func::make(add_1, {{intm, {point(x)}}}, {{out, {x}}}, {.name = "add_1"});
  // The document's second strategy, with chunks large enough to amortize the calls.
  if (scheduled) add.loops({{x, 1024}});
  pipeline p = build_pipeline(ctx, {in}, {out}, options());

  const index_t n = 1 << 20;
  buffer<int, 1> in_buf({n}), out_buf({n});
  in_buf.allocate();
  out_buf.allocate();
  for (index_t i = 0; i < n; ++i) in_buf(i) = static_cast<int>(i % 1000);
  run(
      "elementwise (in * 2 + 1, 1M ints)", scheduled ? "loop over x in chunks of 1024" : "no schedule", p,
      [&](eval_context& c) { return p.evaluate({&in_buf}, {&out_buf}, c); },
      [&]() {
        for (index_t i = 0; i < n; ++i) {
          if (out_buf(i) != in_buf(i) * 2 + 1) return false;
        }
        return true;
      });
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

void matrix_product(bool scheduled) {
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
  pipeline p = build_pipeline(ctx, {a, b, c}, {d}, options());

  const index_t n = 128;
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
      "matrix product (a x b) x c, 128x128", scheduled ? "loop over rows of d" : "no schedule", p,
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
      });
}

index_t sum_3x3(const buffer<const int>& in, const buffer<int>& out) {
  for (index_t y = out.dim(1).min(); y <= out.dim(1).max(); ++y) {
    for (index_t x = out.dim(0).min(); x <= out.dim(0).max(); ++x) {
      int sum = 0;
      for (int dy = -1; dy <= 1; ++dy) {
        for (int dx = -1; dx <= 1; ++dx) sum += in(x + dx, y + dy);
      }
      out(x, y) = sum;
    }
  }
  return 0;
}

index_t multiply_2_2d(const buffer<const int>& in, const buffer<int>& out) {
  for (index_t y = out.dim(1).min(); y <= out.dim(1).max(); ++y) {
    for (index_t x = out.dim(0).min(); x <= out.dim(0).max(); ++x) out(x, y) = in(x, y) * 2;
  }
  return 0;
}

void stencil(bool scheduled) {
  node_context ctx;
  auto in = buffer_expr::make(ctx, "in", 2, sizeof(int));
  auto intm = buffer_expr::make(ctx, "intm", 2, sizeof(int));
  auto out = buffer_expr::make(ctx, "out", 2, sizeof(int));
  var x(ctx, "x"), y(ctx, "y");
  func mul = func::make(multiply_2_2d, {{in, {point(x), point(y)}}}, {{intm, {x, y}}}, {.name = "multiply_2"});
  func sum =
      func::make(sum_3x3, {{intm, {bounds(x - 1, x + 1), bounds(y - 1, y + 1)}}}, {{out, {x, y}}}, {.name = "sum_3x3"});
  if (scheduled) sum.loops({{y, 1}});
  pipeline p = build_pipeline(ctx, {in}, {out}, options());

  const index_t w = 1024, h = 1024;
  buffer<int, 2> in_buf({w + 2, h + 2}), out_buf({w, h});
  in_buf.translate(-1, -1);
  in_buf.allocate();
  out_buf.allocate();
  for (index_t j = -1; j <= h; ++j) {
    for (index_t i = -1; i <= w; ++i) in_buf(i, j) = static_cast<int>((i * 7 + j * 3) % 11);
  }
  run(
      "3x3 stencil of (in * 2), 1024x1024", scheduled ? "loop over rows of out" : "no schedule", p,
      [&](eval_context& c) { return p.evaluate({&in_buf}, {&out_buf}, c); },
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
      });
}

}  // namespace

int main(int argc, char** argv) {
  std::ofstream trace_file;
  std::unique_ptr<chrome_trace> trace_writer;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--quiet") == 0) {
      quiet = true;
    } else if (std::strcmp(argv[i], "--trace") == 0 && i + 1 < argc) {
      trace_file.open(argv[++i]);
      if (!trace_file) {
        std::fprintf(stderr, "demo: cannot write %s\n", argv[i]);
        return 1;
      }
      trace_writer = std::make_unique<chrome_trace>(trace_file);
      trace = trace_writer.get();
    } else {
      std::fprintf(stderr, "usage: demo [--quiet] [--trace file.json]\n");
      return 1;
    }
  }
  print_machine("slinky demo: the founding document's examples");
  for (bool scheduled : {false, true}) elementwise(scheduled);
  for (bool scheduled : {false, true}) matrix_product(scheduled);
  for (bool scheduled : {false, true}) stencil(scheduled);

  table t({"example", "schedule", "time (ms)", "peak intermediate memory (bytes)"});
  for (const result& r : results) {
    t.add({r.example, r.schedule, fmt(r.ms), std::to_string(static_cast<long long>(r.peak_bytes))});
  }
  t.print();
  return 0;
}
