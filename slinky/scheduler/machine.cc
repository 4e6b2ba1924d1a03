// The host's machine description: cache sizes from sysfs or sysconf, and micro-calibrations of
// the per-call overhead of a pipeline loop and of the time per byte streamed from L1 and L2; the
// measurement of the bytes of a stream from memory the prefetcher hides.
#include "slinky/scheduler/machine.h"

#include <unistd.h>
#ifdef __linux__
#include <sched.h>
#endif

#include <algorithm>
#include <atomic>
#include <cctype>
#include <chrono>
#include <cmath>
#include <fstream>
#include <functional>
#include <limits>
#include <sstream>
#include <thread>
#include <vector>

#include "slinky/builder/pipeline.h"
#include "slinky/scheduler/cost_model.h"

#if defined(__x86_64__) || defined(_M_X64)
#include <immintrin.h>
#if defined(__GNUC__)
#include <cpuid.h>
#endif
#endif

namespace slinky {

namespace {

// The decimal number at the start of `s` once surrounding whitespace is dropped: its value and,
// in `rest`, what follows it. False if there is no digit or the value does not fit in index_t.
bool parse_leading_decimal(const std::string& s, index_t& value, std::string& rest) {
  std::size_t i = 0, end = s.size();
  while (i < end && std::isspace(static_cast<unsigned char>(s[i]))) ++i;
  while (end > i && std::isspace(static_cast<unsigned char>(s[end - 1]))) --end;
  if (i == end || !std::isdigit(static_cast<unsigned char>(s[i]))) return false;
  const index_t limit = std::numeric_limits<index_t>::max();
  value = 0;
  for (; i < end && std::isdigit(static_cast<unsigned char>(s[i])); ++i) {
    const index_t digit = s[i] - '0';
    if (value > (limit - digit) / 10) return false;
    value = value * 10 + digit;
  }
  rest = s.substr(i, end - i);
  return true;
}

}  // namespace

index_t parse_cache_size(const std::string& s) {
  index_t value;
  std::string rest;
  if (!parse_leading_decimal(s, value, rest)) return 0;
  // At most one suffix letter: K, M or G (powers of 1024, either case).
  if (rest.size() > 1) return 0;
  index_t scale = 1;
  if (!rest.empty()) {
    switch (rest[0]) {
    case 'K':
    case 'k': scale = index_t{1} << 10; break;
    case 'M':
    case 'm': scale = index_t{1} << 20; break;
    case 'G':
    case 'g': scale = index_t{1} << 30; break;
    default: return 0;
    }
  }
  if (value > std::numeric_limits<index_t>::max() / scale) return 0;
  return value * scale;
}

namespace {

// The first line of a file, or "" if it cannot be read.
std::string read_line(const std::string& path) {
  std::ifstream f(path);
  std::string line;
  std::getline(f, line);
  return line;
}

index_t& level_field(machine& m, int level) {
  if (level == 1) return m.l1_bytes;
  if (level == 2) return m.l2_bytes;
  return m.l3_bytes;
}

}  // namespace

int l1_buffers_for_ways(index_t ways) {
  if (ways <= 0) return machine().l1_buffers;
  // More ways than any L1 has (64) would not change the decision: the loops the scheduler makes
  // stream a few buffers.
  return static_cast<int>(std::max<index_t>(1, std::min<index_t>(ways, 64) / 2));
}

bool read_sysfs_cache_sizes(const std::string& dir, machine& m) {
  bool seen[4] = {false, false, false, false};
  bool any = false;
  // Linux numbers the entries index0, index1, ... without gaps; a few more than any real CPU has.
  for (int i = 0; i < 16; ++i) {
    const std::string entry = dir + "/index" + std::to_string(i) + "/";
    const std::string level_text = read_line(entry + "level");
    if (level_text.empty()) break;
    const std::string type = read_line(entry + "type");
    if (type != "Data" && type != "Unified") continue;
    const int level = std::atoi(level_text.c_str());
    if (level < 1 || level > 3 || seen[level]) continue;
    const index_t size = parse_cache_size(read_line(entry + "size"));
    if (size <= 0) continue;
    level_field(m, level) = size;
    if (level == 1) {
      index_t ways = 0;
      std::string rest;
      if (parse_leading_decimal(read_line(entry + "ways_of_associativity"), ways, rest) && rest.empty() && ways > 0) {
        m.l1_buffers = l1_buffers_for_ways(ways);
      }
    }
    seen[level] = true;
    any = true;
  }
  return any;
}

namespace {

// sysconf's cache sizes (glibc computes them from cpuid on x86; other C libraries may not have
// the names). Sets the levels it knows; returns true if it set any.
bool read_sysconf_cache_sizes(machine& m) {
  bool any = false;
  // assoc: the level's associativity, or -1 if sysconf has no name for it. A cache of
  // associativity 0 does not exist: glibc reports 0 where cpuid's field says the level is absent
  // or disabled, and a hypervisor may still give it a size (508 MiB of L3 on the development
  // machine).
  auto set = [&](int name, index_t& field, long assoc = -1) {
    const long size = sysconf(name);
    if (size > 0 && assoc != 0) {
      field = size;
      any = true;
    }
  };
#ifdef _SC_LEVEL1_DCACHE_SIZE
  set(_SC_LEVEL1_DCACHE_SIZE, m.l1_bytes);
#endif
#ifdef _SC_LEVEL1_DCACHE_ASSOC
  const long l1_ways = sysconf(_SC_LEVEL1_DCACHE_ASSOC);
  if (l1_ways > 0) m.l1_buffers = l1_buffers_for_ways(l1_ways);
#endif
#ifdef _SC_LEVEL2_CACHE_SIZE
  set(_SC_LEVEL2_CACHE_SIZE, m.l2_bytes);
#endif
#if defined(_SC_LEVEL3_CACHE_SIZE) && defined(_SC_LEVEL3_CACHE_ASSOC)
  set(_SC_LEVEL3_CACHE_SIZE, m.l3_bytes, sysconf(_SC_LEVEL3_CACHE_ASSOC));
#elif defined(_SC_LEVEL3_CACHE_SIZE)
  set(_SC_LEVEL3_CACHE_SIZE, m.l3_bytes);
#endif
  (void)set;
  return any;
}

bool in_range(index_t bytes, index_t lo, index_t hi) { return bytes == 0 || (bytes >= lo && bytes <= hi); }

index_t copy_one(const buffer<const int>& in, const buffer<int>& out) {
  for (index_t x = out.dim(0).min(); x <= out.dim(0).max(); ++x) out(x) = in(x);
  return 0;
}

}  // namespace

bool keep_plausible_cache_sizes(machine& m) {
  const machine defaults;
  constexpr index_t KiB = 1024, MiB = 1024 * 1024;
  bool replaced = false;
  auto keep = [&](index_t& field, index_t default_value, bool plausible) {
    if (plausible) return;
    field = default_value;
    replaced = true;
  };
  keep(m.l1_bytes, defaults.l1_bytes, in_range(m.l1_bytes, 4 * KiB, 1 * MiB));
  keep(m.l2_bytes, defaults.l2_bytes,
       in_range(m.l2_bytes, 64 * KiB, 64 * MiB) && (m.l2_bytes == 0 || m.l2_bytes >= m.l1_bytes));
  keep(m.l3_bytes, defaults.l3_bytes,
       in_range(m.l3_bytes, 1 * MiB, 256 * MiB) && (m.l3_bytes == 0 || m.l3_bytes >= m.l2_bytes));
  if (m.l3_bytes != 0 && m.l3_bytes < m.l2_bytes) m.l3_bytes = m.l2_bytes;
  return replaced;
}

namespace {

// A non-negative decimal integer filling `s` (surrounding whitespace ignored), or -1.
index_t parse_count(const std::string& s) {
  index_t value;
  std::string rest;
  return parse_leading_decimal(s, value, rest) && rest.empty() ? value : -1;
}

// Keeps in `result` the smallest positive limit seen (0: none yet).
void keep_smallest(int& result, int limit) {
  if (limit > 0 && (result == 0 || limit < result)) result = limit;
}

// ceil(quota / period) CPUs, or 0 if either is not a positive count.
int cpus_of(index_t quota, index_t period) {
  if (quota <= 0 || period <= 0) return 0;
  const index_t cpus = quota / period + (quota % period != 0);
  return static_cast<int>(std::min<index_t>(cpus, std::numeric_limits<int>::max()));
}

// The smallest positive limit `limit_at(dir)` gives for `root` + `path` and its parents up to
// `root`; 0 if none.
template <typename Fn>
int smallest_limit_up(const std::string& root, std::string path, Fn limit_at) {
  int result = 0;
  while (true) {
    while (path.size() > 1 && path.back() == '/') path.pop_back();
    keep_smallest(result, limit_at(root + (path == "/" ? "" : path)));
    if (path.empty() || path == "/") break;
    const std::size_t slash = path.rfind('/');
    path = slash == std::string::npos || slash == 0 ? "/" : path.substr(0, slash);
  }
  return result;
}

}  // namespace

int parse_cgroup_cpu_max(const std::string& s) {
  std::istringstream in(s);
  std::string quota, period, rest;
  if (!(in >> quota >> period) || (in >> rest)) return 0;
  if (quota == "max") return 0;
  return cpus_of(parse_count(quota), parse_count(period));
}

int read_cgroup_cpu_limit(const std::string& proc_cgroup, const std::string& root) {
  std::ifstream f(proc_cgroup);
  std::string line;
  int result = 0;
  auto take = [&](int limit) { keep_smallest(result, limit); };
  while (std::getline(f, line)) {
    // hierarchy-ID:controller-list:cgroup-path
    const std::size_t a = line.find(':');
    const std::size_t b = a == std::string::npos ? a : line.find(':', a + 1);
    if (b == std::string::npos) continue;
    const std::string controllers = line.substr(a + 1, b - a - 1);
    const std::string path = line.substr(b + 1);
    if (path.empty() || path[0] != '/') continue;
    if (line.compare(0, a, "0") == 0 && controllers.empty()) {
      take(smallest_limit_up(root, path,
                             [](const std::string& dir) { return parse_cgroup_cpu_max(read_line(dir + "/cpu.max")); }));
      continue;
    }
    std::istringstream list(controllers);
    std::string c;
    bool cpu = false;
    while (std::getline(list, c, ',')) cpu = cpu || c == "cpu";
    if (!cpu) continue;
    for (const char* mount : {"/cpu,cpuacct", "/cpuacct,cpu", "/cpu"}) {
      take(smallest_limit_up(root + mount, path, [](const std::string& dir) {
        return cpus_of(parse_count(read_line(dir + "/cpu.cfs_quota_us")),
                       parse_count(read_line(dir + "/cpu.cfs_period_us")));
      }));
    }
  }
  return result;
}

int host_cpus() {
  int cpus = std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
#ifdef __linux__
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof(set), &set) == 0) {
    const int allowed = CPU_COUNT(&set);
    if (allowed > 0) cpus = std::min(cpus, allowed);
  }
  const int limit = read_cgroup_cpu_limit("/proc/self/cgroup", "/sys/fs/cgroup");
  if (limit > 0) cpus = std::min(cpus, limit);
#endif
  return std::max(1, cpus);
}

double measure_call_overhead_ns() {
  using clock = std::chrono::steady_clock;
  const auto start = clock::now();
  // Building takes about 1 ms; the timed runs stop after 3 ms in all (at least two are made, each
  // about 40 us), so the whole calibration stays under 5 ms unless the machine is overloaded.
  const auto budget = std::chrono::microseconds(3000);

  node_context ctx;
  auto in = buffer_expr::make(ctx, "in", 1, sizeof(int));
  auto t = buffer_expr::make(ctx, "t", 1, sizeof(int));
  auto out = buffer_expr::make(ctx, "out", 1, sizeof(int));
  var x(ctx, "x");
  func f1 = func::make(copy_one, {{in, {point(x)}}}, {{t, {x}}});
  func f2 = func::make(copy_one, {{t, {point(x)}}}, {{out, {x}}});
  f2.loops({{x, 1}});
  build_options options;
  options.no_checks = true;
  pipeline p = build_pipeline(ctx, {in}, {out}, options);

  constexpr index_t n = 1024;
  std::vector<int> in_data(n, 0), out_data(n, 0);
  buffer<int, 1> in_buf(in_data.data(), n), out_buf(out_data.data(), n);
  const raw_buffer* inputs[] = {&in_buf};
  const raw_buffer* outputs[] = {&out_buf};
  eval_context ectx;
  if (p.evaluate(inputs, outputs, ectx) != 0) return 0;  // warm-up

  double best = std::numeric_limits<double>::infinity();
  for (int rep = 0; rep < 16 && (rep < 2 || clock::now() - start < budget); ++rep) {
    const auto t0 = clock::now();
    if (p.evaluate(inputs, outputs, ectx) != 0) return 0;
    const auto t1 = clock::now();
    best = std::min(best, std::chrono::duration<double, std::nano>(t1 - t0).count());
  }
  // Two calls per iteration.
  const double per_call = best / (2.0 * n);
  return std::isfinite(per_call) && per_call > 0 ? per_call : 0;
}

double calibrate_call_overhead_ns() {
  // A function-local static is initialized once, and other threads wait for it (C++11).
  static const double overhead = []() {
    const double measured = measure_call_overhead_ns();
    return measured > 0 ? measured : machine().call_overhead_ns;
  }();
  return overhead;
}

namespace {

// One pass of the streaming loop the rates stand for: y = x * 0.5 + 1 (repeated back and forth it
// converges to 2: no overflow, no denormals). Not inlined, so that the passes are not folded.
__attribute__((noinline)) void stream_pass(const float* __restrict x, float* __restrict y, index_t n) {
  for (index_t i = 0; i < n; ++i) y[i] = x[i] * 0.5f + 1.0f;
}

// Two arrays of `bytes` / 2 for the streaming loop, and the pairs of passes of one timed run (about
// 1 MiB moved).
struct stream_arrays {
  index_t n;
  std::vector<float> a, b;
  index_t pairs;
  explicit stream_arrays(index_t bytes)
      : n(std::clamp<index_t>(bytes / static_cast<index_t>(2 * sizeof(float)), 64, index_t{1} << 24)), a(n, 1.0f),
        b(n, 1.0f), pairs(std::max<index_t>(1, (index_t{1} << 20) / (n * static_cast<index_t>(4 * sizeof(float))))) {}
  // One timed run, in ns per byte moved.
  double run() {
    using clock = std::chrono::steady_clock;
    const auto t0 = clock::now();
    for (index_t k = 0; k < pairs; ++k) {
      stream_pass(a.data(), b.data(), n);
      stream_pass(b.data(), a.data(), n);
    }
    const auto t1 = clock::now();
    const double moved = 4.0 * sizeof(float) * static_cast<double>(n) * static_cast<double>(pairs);
    return std::chrono::duration<double, std::nano>(t1 - t0).count() / moved;
  }
  // The result read, so that the passes are not dropped.
  bool ok() const { return a[n / 2] > 0; }
};

// The fastest runs of each array set, interleaved (so that a change of the core's clock or load
// during the calibration reaches all alike): at least 3 and at most 32 rounds, within `budget`.
void fastest_runs(std::vector<stream_arrays>& sets, std::vector<double>& best, std::chrono::microseconds budget) {
  using clock = std::chrono::steady_clock;
  const auto start = clock::now();
  best.assign(sets.size(), std::numeric_limits<double>::infinity());
  for (stream_arrays& s : sets) s.run();  // warm-up: the arrays into the cache
  for (int rep = 0; rep < 32 && (rep < 3 || clock::now() - start < budget); ++rep) {
    for (std::size_t i = 0; i < sets.size(); ++i) best[i] = std::min(best[i], sets[i].run());
  }
  for (std::size_t i = 0; i < sets.size(); ++i) {
    if (!sets[i].ok() || !std::isfinite(best[i]) || !(best[i] > 0)) best[i] = 0;
  }
}

}  // namespace

double measure_stream_ns_per_byte(index_t bytes) {
  std::vector<stream_arrays> sets;
  sets.emplace_back(bytes);
  std::vector<double> best;
  fastest_runs(sets, best, std::chrono::microseconds(500));
  return best[0];
}

namespace scheduler_internal {

namespace {
std::atomic<double> fastest_probe{std::numeric_limits<double>::infinity()};
}  // namespace

double fastest_speed_probe_ns() { return fastest_probe.load(std::memory_order_relaxed); }

double speed_probe_ns() {
  using clock = std::chrono::steady_clock;
  constexpr index_t n = 1024;
  // Thread-local arrays: the refinement of one class runs on one thread, but classes of different
  // auto_pipelines may be refined on several at once.
  thread_local std::vector<float> a(n, 1.0f), b(n, 1.0f);
  double best = std::numeric_limits<double>::infinity();
  for (int run = 0; run < 3; ++run) {
    const auto t0 = clock::now();
    for (int k = 0; k < 4; ++k) {
      stream_pass(a.data(), b.data(), n);
      stream_pass(b.data(), a.data(), n);
    }
    best = std::min(best, std::chrono::duration<double, std::nano>(clock::now() - t0).count());
  }
  if (!(a[n / 2] > 0)) return 0;  // the result read, so that the passes are kept
  double seen = fastest_probe.load(std::memory_order_relaxed);
  while (best < seen && !fastest_probe.compare_exchange_weak(seen, best, std::memory_order_relaxed)) {
  }
  return best;
}

double settled_time(const std::function<double()>& run, const std::function<double()>& probe, double process_fastest,
                    std::chrono::nanoseconds max_wait, speed_reference& ref) {
  using clock = std::chrono::steady_clock;
  if (ref.fastest < 0) ref.fastest = process_fastest;
  double s = 0;
  for (int attempt = 0;; ++attempt) {
    const double before = probe();
    s = run();
    const double after = probe();
    ref.fastest = std::min({ref.fastest, before, after});
    const double slowest = std::max(before, after);
    if (slowest <= settled_speed * ref.fastest) break;
    if (attempt == 2) {
      ref.fastest = slowest;
      break;
    }
    ++ref.retimed;
    const auto start = clock::now();
    while (probe() > settled_speed * ref.fastest && clock::now() - start < max_wait) {
    }
  }
  return s;
}

}  // namespace scheduler_internal

bool calibrate_ns_per_byte(machine& m) {
  if (m.l1_bytes <= 0 || m.l2_bytes <= 0) return false;
  std::vector<stream_arrays> sets;
  sets.emplace_back(m.l1_bytes / 2);
  sets.emplace_back(m.l2_bytes / 2);
  std::vector<double> best;
  fastest_runs(sets, best, std::chrono::microseconds(1000));
  const double l1 = best[0], l2 = best[1];
  if (!(l1 > 0) || !(l2 > 0)) return false;
  // The ratio only: the first milliseconds of a process run this loop up to twice as slowly as
  // later ones (the core's clock, measured on the 2-core development machine), alike for both
  // sizes; the absolute rates stay machine's defaults, which the estimates were checked against.
  m.ns_per_byte[1] = m.ns_per_byte[0] * std::clamp(l2 / l1, 1.0, 4.0);
  m.ns_per_byte[2] = std::max(m.ns_per_byte[2], m.ns_per_byte[1]);
  m.ns_per_byte[3] = std::max(m.ns_per_byte[3], m.ns_per_byte[2]);
  return true;
}

namespace {

// Whether flush_lines can evict lines from every cache level to memory from user code.
#if defined(__x86_64__) || defined(_M_X64) || (defined(__aarch64__) && defined(__linux__))
constexpr bool can_flush_lines = true;
#else
constexpr bool can_flush_lines = false;
#endif

#if (defined(__x86_64__) || defined(_M_X64)) && defined(__GNUC__)
// Whether this x86-64 CPU has clflushopt (CPUID leaf 7, EBX bit 23): clflush waits for each line
// in turn (105 ns a line on a 2-core Xeon VM, 215 us for 128 KiB), clflushopt overlaps them
// (11 us).
bool has_clflushopt() {
  static const bool has = []() {
    unsigned a = 0, b = 0, c = 0, d = 0;
    if (__get_cpuid_max(0, nullptr) < 7) return false;
    __cpuid_count(7, 0, a, b, c, d);
    return ((b >> 23) & 1) != 0;
  }();
  return has;
}
#endif

// Writes back and evicts the cache lines of [p, p + bytes) from every level (x86-64's clflushopt
// where the CPU has it, else clflush; AArch64's dc civac, which Linux lets user code run), then
// waits for them.
void flush_lines(const void* p, std::size_t bytes) {
  const char* c = static_cast<const char*>(p);
#if (defined(__x86_64__) || defined(_M_X64)) && defined(__GNUC__)
  if (has_clflushopt()) {
    for (std::size_t i = 0; i < bytes; i += 64) asm volatile("clflushopt %0" : : "m"(c[i]) : "memory");
    _mm_mfence();
    return;
  }
#endif
#if defined(__x86_64__) || defined(_M_X64)
  for (std::size_t i = 0; i < bytes; i += 64) _mm_clflush(c + i);
  _mm_mfence();
#elif defined(__aarch64__) && defined(__linux__)
  for (std::size_t i = 0; i < bytes; i += 64) asm volatile("dc civac, %0" : : "r"(c + i) : "memory");
  asm volatile("dsb ish" : : : "memory");
#else
  (void)c;
  (void)bytes;
#endif
}

// measure_prefetch_bytes's chain: a stream read from `in` and one written to `out` (stream_bytes
// each), chunk by chunk, with the passes between them on chunks of `stages` small buffers.
struct prefetch_chain {
  static constexpr index_t stream_bytes = 256 * 1024;
  static constexpr index_t largest_chunk = 16 * 1024;
  static constexpr int stages = 4;
  std::vector<float> in, out;
  std::vector<std::vector<float>> between;
  prefetch_chain()
      : in(stream_bytes / sizeof(float), 1.0f), out(stream_bytes / sizeof(float), 1.0f),
        between(stages + 1, std::vector<float>(largest_chunk / sizeof(float), 1.0f)) {}
  // One run in chunks of `chunk_bytes`, with the streams flushed to memory first if `flush`; its
  // time in ns.
  double run(index_t chunk_bytes, bool flush) {
    using clock = std::chrono::steady_clock;
    if (flush) {
      flush_lines(in.data(), stream_bytes);
      flush_lines(out.data(), stream_bytes);
    }
    const index_t n = static_cast<index_t>(in.size());
    const index_t c = chunk_bytes / static_cast<index_t>(sizeof(float));
    const auto t0 = clock::now();
    for (index_t x = 0; x < n; x += c) {
      stream_pass(&in[x], between[0].data(), c);
      for (int s = 0; s < stages; ++s) stream_pass(between[s].data(), between[s + 1].data(), c);
      stream_pass(between[stages].data(), &out[x], c);
    }
    return std::chrono::duration<double, std::nano>(clock::now() - t0).count();
  }
};

// One estimate of measure_prefetch_bytes, from `rounds` rounds; its window -1 if the flush did not
// reach memory.
scheduler_internal::prefetch_estimate estimate_prefetch_bytes(prefetch_chain& chain, int rounds) {
  const index_t chunks[] = {2048, 4096, prefetch_chain::largest_chunk};
  double cached[3], flushed[3];
  std::fill(std::begin(cached), std::end(cached), std::numeric_limits<double>::infinity());
  std::fill(std::begin(flushed), std::end(flushed), std::numeric_limits<double>::infinity());
  scheduler_internal::prefetch_estimate result;
  result.window = -1;
  chain.run(chunks[0], false);  // the streams into the cache (each flushed run leaves them there)
  for (int round = 0; round < rounds; ++round) {
    double round_cached = 0;
    for (int i = 0; i < 3; ++i) {
      const double c = chain.run(chunks[i], false);
      round_cached += c;
      cached[i] = std::min(cached[i], c);
      flushed[i] = std::min(flushed[i], chain.run(chunks[i], true));
    }
    result.cached_ns = std::max(result.cached_ns, round_cached);
  }
  if (!(chain.out[chain.out.size() / 2] > 0)) return result;  // the result read: the passes are kept
  // The stall of the largest chunks must be at least memory's part of the two streams at a rate
  // well below any memory's (0.005 ns per byte, L1's default): else the flush did not reach memory.
  const double full = flushed[2] - cached[2];
  if (!(full >= 2.0 * prefetch_chain::stream_bytes * 0.005)) return result;
  // The window with which the cost model hides, at 2 KiB, what the flush showed hidden there
  // (scheduler_internal::cost_model::prefetch_window); the largest chunks hide nothing. From the
  // chunks of 4 KiB where those of 2 KiB hid all; none where they hid nothing.
  double best = 0;
  for (int i = 0; i < 2; ++i) {
    const double b = static_cast<double>(chunks[i]);
    const double f = std::clamp((flushed[i] - cached[i]) / full, 0.0, 1.0);
    if (i == 0 && f >= 1) break;
    // (Where 2 KiB's hid all, W is at least 2 KiB whatever 4 KiB's show.)
    best = std::max(best, scheduler_internal::cost_model::prefetch_window(b, f));
    if (f > 0) break;
  }
  result.window = std::clamp(best, 0.0, 4096.0);
  return result;
}

}  // namespace

index_t measure_prefetch_bytes() {
  if (!can_flush_lines) return 0;
  using clock = std::chrono::steady_clock;
  const auto start = clock::now();
  // Estimates (about 1.1 ms each on the 2-core AMD EPYC) until enough are settled, taken at the
  // fastest speed seen (scheduler_internal::prefetch_estimates_done).
  prefetch_chain chain;
  std::vector<scheduler_internal::prefetch_estimate> estimates;
  for (int made = 1;; ++made) {
    const scheduler_internal::prefetch_estimate e = estimate_prefetch_bytes(chain, 2);
    if (e.window >= 0) estimates.push_back(e);
    scheduler_internal::speed_probe_ns();  // the process's fastest probe, for the refinement
    const double elapsed_ms = std::chrono::duration<double, std::milli>(clock::now() - start).count();
    if (scheduler_internal::prefetch_estimates_done(estimates, made, elapsed_ms)) break;
  }
  int settled = 0;
  return static_cast<index_t>(scheduler_internal::settled_prefetch_window(estimates, settled));
}

const machine& machine::host() {
  static const machine m = []() {
    machine result;
    if (!read_sysfs_cache_sizes("/sys/devices/system/cpu/cpu0/cache", result)) read_sysconf_cache_sizes(result);
    keep_plausible_cache_sizes(result);
    result.threads = host_cpus();
    result.call_overhead_ns = calibrate_call_overhead_ns();
    calibrate_ns_per_byte(result);
    result.prefetch_bytes = scheduler_internal::usual_prefetch_bytes(measure_prefetch_bytes());
    // The call overhead again, milliseconds later, the faster of the two: a stretch of the slower
    // speed (see scheduler_internal::settled_prefetch_window) made the first up to 1.5 times the
    // other on the 2-core AMD EPYC (15 against 10 ns).
    const double again = measure_call_overhead_ns();
    if (again > 0) result.call_overhead_ns = std::min(result.call_overhead_ns, again);
    return result;
  }();
  return m;
}

}  // namespace slinky
