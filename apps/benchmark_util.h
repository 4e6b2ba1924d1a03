// Shared helpers of every benchmark program, independent of slinky (no slinky header): timing
// (warm-up, repetitions, median), the machine description every report starts with, a table
// printed as markdown, and results as CSV (--csv). What needs slinky (memory through the
// allocation hooks, the stencil chain's stages) is in pipeline_bench.h.
#ifndef SLINKY_APPS_BENCHMARK_UTIL_H
#define SLINKY_APPS_BENCHMARK_UTIL_H

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <iostream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace slinky_bench {

// Seconds taken by one call of fn: the median of `reps` timed calls after `warmup` untimed ones.
inline double median_seconds(const std::function<void()>& fn, int reps = 9, int warmup = 2) {
  for (int i = 0; i < warmup; ++i) fn();
  std::vector<double> times;
  for (int i = 0; i < reps; ++i) {
    auto t0 = std::chrono::steady_clock::now();
    fn();
    auto t1 = std::chrono::steady_clock::now();
    times.push_back(std::chrono::duration<double>(t1 - t0).count());
  }
  std::sort(times.begin(), times.end());
  return times[times.size() / 2];
}

// Medians of several alternatives timed in interleaved rounds, so that noise from the shared
// machine affects them alike, each timed by `seconds` (a clock in seconds: the wall clock by
// default). Each alternative runs once untimed first. Every round runs them in a different order
// (a shuffle from a fixed seed: the same orders in every run of the program), so that no
// alternative runs mostly after the same one, whose data it would find in the caches or whose
// dirty lines it would write back (a rotation of a fixed order keeps each one's predecessor).
template <typename Clock>
std::vector<double> interleaved_medians_by(const std::vector<std::function<void()>>& fns, int reps, Clock seconds) {
  for (const auto& fn : fns) fn();
  std::vector<std::vector<double>> times(fns.size());
  std::vector<std::size_t> order(fns.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::uint64_t state = 0x9e3779b97f4a7c15u;
  for (int r = 0; r < reps; ++r) {
    // Fisher-Yates with a 64-bit LCG: the same orders with every standard library.
    for (std::size_t i = order.size(); i > 1; --i) {
      state = state * 6364136223846793005u + 1442695040888963407u;
      std::swap(order[i - 1], order[(state >> 33) % i]);
    }
    for (std::size_t i : order) {
      const double t0 = seconds();
      fns[i]();
      times[i].push_back(seconds() - t0);
    }
  }
  std::vector<double> result;
  for (auto& t : times) {
    std::sort(t.begin(), t.end());
    result.push_back(t[t.size() / 2]);
  }
  return result;
}

inline double wall_seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// interleaved_medians_by the wall clock.
inline std::vector<double> interleaved_median_seconds(const std::vector<std::function<void()>>& fns, int reps = 9) {
  return interleaved_medians_by(fns, reps, wall_seconds);
}

inline std::string cpu_model() {
  std::ifstream f("/proc/cpuinfo");
  std::string line;
  while (std::getline(f, line)) {
    if (line.rfind("model name", 0) == 0) {
      auto colon = line.find(':');
      return colon == std::string::npos ? line : line.substr(colon + 2);
    }
  }
  return "unknown";
}

inline void print_machine(const char* title) {
  std::printf("# %s\n\n", title);
  std::printf("- compiler: %s\n", __VERSION__);
#ifdef NDEBUG
  std::printf("- build: optimized, NDEBUG (see CMAKE_BUILD_TYPE; no -march=native)\n");
#else
  std::printf("- build: assertions enabled (not a Release build: figures are not meaningful)\n");
#endif
  std::printf("- machine: %u hardware threads, %s\n\n", std::thread::hardware_concurrency(), cpu_model().c_str());
}

// A table printed as markdown.
class table {
  std::vector<std::string> header_;
  std::vector<std::vector<std::string>> rows_;

public:
  explicit table(std::vector<std::string> header) : header_(std::move(header)) {}
  void add(std::vector<std::string> row) { rows_.push_back(std::move(row)); }

  void print() const {
    auto line = [](const std::vector<std::string>& cells) {
      std::string s = "|";
      for (const auto& c : cells) s += " " + c + " |";
      std::printf("%s\n", s.c_str());
    };
    line(header_);
    std::string sep = "|";
    for (std::size_t i = 0; i < header_.size(); ++i) sep += " --- |";
    std::printf("%s\n", sep.c_str());
    for (const auto& r : rows_) line(r);
    std::printf("\n");
  }
};

// A benchmark's results as CSV, for plots (tools/plots.py) and comparisons over time, written to
// the file given by `--csv FILE` (nothing without it): one header line, then one row per measured
// point. Columns name what was varied, then what was measured, with their units in the name
// (`chunk_elements`, `time_ms`, `peak_intermediate_bytes`). Numbers are written unformatted (6
// significant digits), a cell not measured for a row is empty, and text is quoted when it holds a
// comma or a quote. Rows are written as they are added, so a run that stops early leaves the rows
// it had measured. A file that cannot be written ends the program with an error.
class csv_writer {
  std::ofstream file_;
  std::string path_;
  std::size_t columns_;

  void check() {
    if (file_) return;
    std::fprintf(stderr, "could not write %s\n", path_.c_str());
    std::exit(1);
  }

public:
  // One cell: a number, text, or nothing (an empty cell).
  struct cell {
    std::string text;
    cell() = default;
    cell(const char* s) : cell(std::string(s)) {}
    cell(const std::string& s) : text(quoted(s)) {}
    cell(double x) {
      char buf[32];
      std::snprintf(buf, sizeof(buf), "%.6g", x);
      text = buf;
    }
    cell(float x) : cell(static_cast<double>(x)) {}
    cell(int x) : text(std::to_string(x)) {}
    cell(unsigned x) : text(std::to_string(x)) {}
    cell(long x) : text(std::to_string(x)) {}
    cell(long long x) : text(std::to_string(x)) {}
    cell(unsigned long x) : text(std::to_string(x)) {}
    cell(unsigned long long x) : text(std::to_string(x)) {}
    cell(bool) = delete;  // say what it means: a 0/1 column or words
  };
  // s, between quotes (doubled inside) if it holds a comma, a quote or a line break.
  static std::string quoted(const std::string& s) {
    if (s.find_first_of(",\"\n") == std::string::npos) return s;
    std::string q = "\"";
    for (char c : s) {
      q += c;
      if (c == '"') q += c;
    }
    return q + "\"";
  }
  // x, or an empty cell where it was not measured.
  template <typename T>
  static cell if_measured(bool measured, T x) {
    return measured ? cell(x) : cell();
  }

  // Opens the file of `--csv FILE` (if given) and writes the header.
  csv_writer(int argc, char** argv, const std::vector<std::string>& columns) : columns_(columns.size()) {
    for (int i = 1; i + 1 < argc; ++i) {
      if (std::strcmp(argv[i], "--csv") == 0) path_ = argv[i + 1];
    }
    if (path_.empty()) return;
    file_.open(path_);
    std::vector<cell> header(columns.begin(), columns.end());
    write(header);
  }
  bool enabled() const { return !path_.empty(); }

  // Writes one row, with as many cells as there are columns.
  void add(const std::vector<cell>& row) {
    if (!enabled()) return;
    if (row.size() != columns_) {
      std::fprintf(stderr, "%s: a row of %zu cells under %zu columns\n", path_.c_str(), row.size(), columns_);
      std::exit(1);
    }
    write(row);
  }

private:
  void write(const std::vector<cell>& row) {
    for (std::size_t i = 0; i < row.size(); ++i) file_ << (i ? "," : "") << row[i].text;
    file_ << "\n";
    file_.flush();
    check();
  }
};

inline std::string fmt(double x, int precision = 3) {
  std::ostringstream os;
  os.precision(precision);
  os << std::fixed << x;
  return os.str();
}

// The value of `--name VALUE` in argv, or def.
inline std::string arg(int argc, char** argv, const char* name, const std::string& def = "") {
  for (int i = 1; i + 1 < argc; ++i) {
    if (std::strcmp(argv[i], name) == 0) return argv[i + 1];
  }
  return def;
}

inline const char* pass_or_miss(bool pass) { return pass ? "PASS" : "MISS"; }

// Fails the program loudly: a fast wrong answer is not a result.
[[noreturn]] inline void wrong_result(const std::string& what) {
  std::fprintf(stderr, "WRONG RESULT: %s\n", what.c_str());
  std::exit(1);
}

}  // namespace slinky_bench

#endif  // SLINKY_APPS_BENCHMARK_UTIL_H
