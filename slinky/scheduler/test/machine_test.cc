// The machine description: parsing of cache sizes as sysfs writes them, reading a sysfs-like cache
// directory, and the calibration of the per-call overhead.
#include <gtest/gtest.h>

#include <time.h>
#ifdef __linux__
#include <sched.h>
#endif

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <thread>
#include <vector>

#include "slinky/scheduler/cost_model.h"
#include "slinky/scheduler/machine.h"

namespace slinky {

TEST(machine, parse_cache_size) {
  EXPECT_EQ(parse_cache_size("48K"), 48 * 1024);
  EXPECT_EQ(parse_cache_size("2048K"), 2048 * 1024);
  EXPECT_EQ(parse_cache_size("32M"), 32 * 1024 * 1024);
  EXPECT_EQ(parse_cache_size("1G"), index_t{1} << 30);
  EXPECT_EQ(parse_cache_size("512"), 512);
  EXPECT_EQ(parse_cache_size("64k"), 64 * 1024);
  // sysfs files end with a newline.
  EXPECT_EQ(parse_cache_size("1024K\n"), 1024 * 1024);
  EXPECT_EQ(parse_cache_size("  8M "), 8 * 1024 * 1024);
}

TEST(machine, parse_cache_size_rejects) {
  for (const char* s : {"", "K", " ", "12Q", "-1K", "12KB", "1.5M", "K12", "99999999999999999999", "9999999999999G"}) {
    EXPECT_EQ(parse_cache_size(s), 0) << "\"" << s << "\"";
  }
}

namespace {

// A sysfs-like cache directory in a fresh temporary folder.
struct fake_sysfs {
  std::filesystem::path dir;

  explicit fake_sysfs(const std::vector<std::vector<std::string>>& entries) {
    dir = std::filesystem::temp_directory_path() /
          ("slinky_machine_test_" + std::to_string(::testing::UnitTest::GetInstance()->random_seed()) + "_" +
           ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir);
    for (std::size_t i = 0; i < entries.size(); ++i) {
      const std::filesystem::path e = dir / ("index" + std::to_string(i));
      std::filesystem::create_directories(e);
      std::ofstream(e / "level") << entries[i][0] << "\n";
      std::ofstream(e / "type") << entries[i][1] << "\n";
      std::ofstream(e / "size") << entries[i][2] << "\n";
      if (entries[i].size() > 3) std::ofstream(e / "ways_of_associativity") << entries[i][3] << "\n";
    }
  }
  ~fake_sysfs() { std::filesystem::remove_all(dir); }
};

}  // namespace

TEST(machine, read_sysfs_cache_sizes) {
  fake_sysfs fs({{"1", "Data", "48K", "12"},
                 {"1", "Instruction", "32K", "8"},
                 {"2", "Unified", "2048K", "16"},
                 {"3", "Unified", "32M", "16"}});
  machine m;
  m.l1_bytes = m.l2_bytes = m.l3_bytes = 1;
  ASSERT_TRUE(read_sysfs_cache_sizes(fs.dir.string(), m));
  EXPECT_EQ(m.l1_bytes, 48 * 1024);
  EXPECT_EQ(m.l2_bytes, 2048 * 1024);
  EXPECT_EQ(m.l3_bytes, 32 * 1024 * 1024);
  // The 12-way L1 data cache, not the 8-way instruction cache nor the 16-way L2.
  EXPECT_EQ(m.l1_buffers, 6);
}

TEST(machine, l1_buffers_for_ways) {
  const int unknown = machine().l1_buffers;
  EXPECT_EQ(unknown, 4);
  EXPECT_EQ(l1_buffers_for_ways(8), 4);
  EXPECT_EQ(l1_buffers_for_ways(12), 6);
  EXPECT_EQ(l1_buffers_for_ways(16), 8);
  EXPECT_EQ(l1_buffers_for_ways(2), 1);
  EXPECT_EQ(l1_buffers_for_ways(1), 1);
  EXPECT_EQ(l1_buffers_for_ways(1000), 32);
  EXPECT_EQ(l1_buffers_for_ways(0), unknown);
  EXPECT_EQ(l1_buffers_for_ways(-3), unknown);
}

TEST(machine, read_sysfs_l1_ways_only_when_a_number_of_ways) {
  // No file, 0 (fully associative: no figure), or not a number: l1_buffers is left as it is.
  for (const char* ways : {"", "0", "many", "12 ways", "-8"}) {
    std::vector<std::string> l1 = {"1", "Data", "32K"};
    if (*ways) l1.push_back(ways);
    fake_sysfs fs({l1});
    machine m;
    m.l1_buffers = 3;
    ASSERT_TRUE(read_sysfs_cache_sizes(fs.dir.string(), m)) << ways;
    EXPECT_EQ(m.l1_bytes, 32 * 1024) << ways;
    EXPECT_EQ(m.l1_buffers, 3) << "\"" << ways << "\"";
  }
}

TEST(machine, read_sysfs_cache_sizes_partial) {
  // The instruction cache comes first and is skipped; a level without a size keeps its value.
  fake_sysfs fs({{"1", "Instruction", "64K"}, {"1", "Data", "32K"}, {"2", "Unified", "bad"}});
  machine m;
  m.l2_bytes = 777;
  m.l3_bytes = 999;
  ASSERT_TRUE(read_sysfs_cache_sizes(fs.dir.string(), m));
  EXPECT_EQ(m.l1_bytes, 32 * 1024);
  EXPECT_EQ(m.l2_bytes, 777);
  EXPECT_EQ(m.l3_bytes, 999);
}

TEST(machine, read_sysfs_cache_sizes_missing) {
  machine m;
  const machine defaults;
  EXPECT_FALSE(read_sysfs_cache_sizes("/nonexistent/slinky/cache", m));
  EXPECT_EQ(m.l1_bytes, defaults.l1_bytes);
  EXPECT_EQ(m.l2_bytes, defaults.l2_bytes);
  EXPECT_EQ(m.l3_bytes, defaults.l3_bytes);
}

TEST(machine, keep_plausible_cache_sizes) {
  const machine defaults;
  constexpr index_t KiB = 1024, MiB = 1024 * 1024;
  // A real machine's figures are kept, "no such level" (0) too.
  machine m;
  m.l1_bytes = 48 * KiB;
  m.l2_bytes = 1 * MiB;
  m.l3_bytes = 96 * MiB;
  EXPECT_FALSE(keep_plausible_cache_sizes(m));
  EXPECT_EQ(m.l1_bytes, 48 * KiB);
  EXPECT_EQ(m.l2_bytes, 1 * MiB);
  EXPECT_EQ(m.l3_bytes, 96 * MiB);
  m.l3_bytes = 0;
  EXPECT_FALSE(keep_plausible_cache_sizes(m));
  EXPECT_EQ(m.l3_bytes, 0);

  // What the development machine's hypervisor reports through cpuid: 508 MiB of L3.
  m.l3_bytes = 532676608;
  EXPECT_TRUE(keep_plausible_cache_sizes(m));
  EXPECT_EQ(m.l1_bytes, 48 * KiB);
  EXPECT_EQ(m.l2_bytes, 1 * MiB);
  EXPECT_EQ(m.l3_bytes, defaults.l3_bytes);

  // Each level out of its range, or smaller than the level inside it, gets the default.
  m = machine();
  m.l1_bytes = 512;
  m.l2_bytes = 128 * MiB;
  m.l3_bytes = -1;
  EXPECT_TRUE(keep_plausible_cache_sizes(m));
  EXPECT_EQ(m.l1_bytes, defaults.l1_bytes);
  EXPECT_EQ(m.l2_bytes, defaults.l2_bytes);
  EXPECT_EQ(m.l3_bytes, defaults.l3_bytes);
  m.l1_bytes = 64 * KiB;
  m.l2_bytes = 32 * KiB;
  m.l3_bytes = 4 * MiB;
  EXPECT_TRUE(keep_plausible_cache_sizes(m));
  EXPECT_EQ(m.l1_bytes, 64 * KiB);
  EXPECT_EQ(m.l2_bytes, defaults.l2_bytes);
  EXPECT_EQ(m.l3_bytes, 4 * MiB);

  // An L3 replaced by a default smaller than the L2 takes the L2's size.
  m.l2_bytes = 16 * MiB;
  m.l3_bytes = 1024 * MiB;
  EXPECT_TRUE(keep_plausible_cache_sizes(m));
  EXPECT_EQ(m.l3_bytes, 16 * MiB);
}

TEST(machine, parse_cgroup_cpu_max) {
  EXPECT_EQ(parse_cgroup_cpu_max("200000 100000\n"), 2);
  EXPECT_EQ(parse_cgroup_cpu_max("150000 100000"), 2);  // 1.5 CPUs: 2 threads can run
  EXPECT_EQ(parse_cgroup_cpu_max("50000 100000"), 1);
  EXPECT_EQ(parse_cgroup_cpu_max("6400000 100000"), 64);
  EXPECT_EQ(parse_cgroup_cpu_max("max 100000"), 0);
  EXPECT_EQ(parse_cgroup_cpu_max(""), 0);
  EXPECT_EQ(parse_cgroup_cpu_max("200000"), 0);
  EXPECT_EQ(parse_cgroup_cpu_max("200000 0"), 0);
  EXPECT_EQ(parse_cgroup_cpu_max("-1 100000"), 0);
  EXPECT_EQ(parse_cgroup_cpu_max("2e5 100000"), 0);
  EXPECT_EQ(parse_cgroup_cpu_max("200000 100000 7"), 0);
}

namespace {

// A fake cgroup file system and /proc/self/cgroup under a temporary directory.
struct fake_cgroups {
  std::filesystem::path dir;

  fake_cgroups() {
    dir = std::filesystem::temp_directory_path() /
          ("slinky_machine_test_cgroups_" + std::to_string(::testing::UnitTest::GetInstance()->random_seed()) + "_" +
           ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir);
    std::filesystem::create_directories(dir);
  }
  ~fake_cgroups() { std::filesystem::remove_all(dir); }
  void write(const std::string& file, const std::string& text) const {
    const std::filesystem::path p = dir / file;
    std::filesystem::create_directories(p.parent_path());
    std::ofstream(p) << text;
  }
  std::string proc() const { return (dir / "proc_cgroup").string(); }
  std::string root() const { return (dir / "cgroup").string(); }
};

}  // namespace

TEST(machine, read_cgroup_cpu_limit_v2) {
  fake_cgroups fs;
  fs.write("proc_cgroup", "0::/user.slice/job/task\n");
  // No cpu.max anywhere: no limit.
  EXPECT_EQ(read_cgroup_cpu_limit(fs.proc(), fs.root()), 0);
  fs.write("cgroup/user.slice/job/task/cpu.max", "max 100000\n");
  EXPECT_EQ(read_cgroup_cpu_limit(fs.proc(), fs.root()), 0);
  // An ancestor's limit applies to its descendants; the smallest wins.
  fs.write("cgroup/user.slice/cpu.max", "400000 100000\n");
  EXPECT_EQ(read_cgroup_cpu_limit(fs.proc(), fs.root()), 4);
  fs.write("cgroup/user.slice/job/task/cpu.max", "300000 100000\n");
  EXPECT_EQ(read_cgroup_cpu_limit(fs.proc(), fs.root()), 3);
  fs.write("cgroup/cpu.max", "200000 100000\n");
  EXPECT_EQ(read_cgroup_cpu_limit(fs.proc(), fs.root()), 2);
  // A missing /proc file: no limit.
  EXPECT_EQ(read_cgroup_cpu_limit(fs.proc() + "_missing", fs.root()), 0);
}

TEST(machine, read_cgroup_cpu_limit_v1) {
  fake_cgroups fs;
  fs.write("proc_cgroup", "12:memory:/job\n4:cpu,cpuacct:/job\n0::/\n");
  fs.write("cgroup/cpu,cpuacct/job/cpu.cfs_quota_us", "-1\n");
  fs.write("cgroup/cpu,cpuacct/job/cpu.cfs_period_us", "100000\n");
  EXPECT_EQ(read_cgroup_cpu_limit(fs.proc(), fs.root()), 0);
  fs.write("cgroup/cpu,cpuacct/job/cpu.cfs_quota_us", "250000\n");
  EXPECT_EQ(read_cgroup_cpu_limit(fs.proc(), fs.root()), 3);
  // The memory controller's hierarchy is not read.
  fs.write("cgroup/memory/job/cpu.cfs_quota_us", "100000\n");
  fs.write("cgroup/memory/job/cpu.cfs_period_us", "100000\n");
  EXPECT_EQ(read_cgroup_cpu_limit(fs.proc(), fs.root()), 3);
}

TEST(machine, host_cpus) {
  const int cpus = host_cpus();
  EXPECT_GE(cpus, 1);
  const int hardware = static_cast<int>(std::thread::hardware_concurrency());
  if (hardware > 0) {
    EXPECT_LE(cpus, hardware);
  }
#ifdef __linux__
  cpu_set_t set;
  CPU_ZERO(&set);
  ASSERT_EQ(sched_getaffinity(0, sizeof(set), &set), 0);
  EXPECT_LE(cpus, CPU_COUNT(&set));
  const int limit = read_cgroup_cpu_limit("/proc/self/cgroup", "/sys/fs/cgroup");
  if (limit > 0) {
    EXPECT_LE(cpus, limit);
  }
  // Restricted to one CPU (as `taskset -c` would), this thread sees one. The mask applies to the
  // calling thread only; it is restored after.
  cpu_set_t one;
  CPU_ZERO(&one);
  for (int c = 0; c < CPU_SETSIZE; ++c) {
    if (CPU_ISSET(c, &set)) {
      CPU_SET(c, &one);
      break;
    }
  }
  ASSERT_EQ(sched_setaffinity(0, sizeof(one), &one), 0);
  EXPECT_EQ(host_cpus(), 1);
  ASSERT_EQ(sched_setaffinity(0, sizeof(set), &set), 0);
  EXPECT_EQ(host_cpus(), cpus);
#endif
}

namespace {

double thread_cpu_ms() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec * 1e-6;
}

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
constexpr double calibration_budget_ms = 50;
#else
constexpr double calibration_budget_ms = 5;
#endif

}  // namespace

TEST(machine, calibration) {
  // The first call measures (the tests of this program do not call it before), from several
  // threads at once: one measures, the others wait and get the same value. Each thread's CPU time
  // around its call: the largest is the measuring thread's.
  std::vector<double> seen(4), cpu_ms(4);
  std::vector<std::thread> threads;
  for (int i = 0; i < 4; ++i) {
    threads.emplace_back([&, i]() {
      const double t0 = thread_cpu_ms();
      seen[i] = calibrate_call_overhead_ns();
      cpu_ms[i] = thread_cpu_ms() - t0;
    });
  }
  for (auto& t : threads) t.join();
  for (double s : seen) EXPECT_EQ(s, seen[0]);
  const double ns = seen[0];
  EXPECT_TRUE(std::isfinite(ns));
  EXPECT_GT(ns, 0);
  // A measurement, not the default used when measuring fails.
  EXPECT_NE(ns, machine().call_overhead_ns);
  // A call costs nanoseconds to a few microseconds, never milliseconds.
  EXPECT_LT(ns, 1e5);
  // The measurement stays within its budget.
  EXPECT_LT(*std::max_element(cpu_ms.begin(), cpu_ms.end()), calibration_budget_ms);
  // Later calls return the value at once.
  const double t2 = thread_cpu_ms();
  EXPECT_EQ(calibrate_call_overhead_ns(), ns);
  EXPECT_LT(thread_cpu_ms() - t2, 0.5);
}

TEST(machine, measure_call_overhead) {
  const double ns = measure_call_overhead_ns();
  EXPECT_TRUE(std::isfinite(ns));
  EXPECT_GT(ns, 0);
  EXPECT_LT(ns, 1e5);
}

// Where measure_prefetch_bytes can flush cache lines from user code (x86-64, Linux on AArch64).
#if defined(__x86_64__) || defined(_M_X64) || (defined(__aarch64__) && defined(__linux__))
constexpr bool lines_can_be_flushed = true;
#else
constexpr bool lines_can_be_flushed = false;
#endif

TEST(machine, host) {
  const machine& m = machine::host();
  EXPECT_GT(m.l1_bytes, 0);
  EXPECT_GE(m.l2_bytes, m.l1_bytes);
  // What host() detects has been made plausible.
  machine checked = m;
  EXPECT_FALSE(keep_plausible_cache_sizes(checked));
  EXPECT_EQ(m.threads, host_cpus());
  EXPECT_GT(m.call_overhead_ns, 0);
  EXPECT_GE(m.l1_buffers, 1);
  // L1's rate is the default; L2's its measured ratio to it (1 to 4); the levels never get faster.
  const machine defaults;
  EXPECT_EQ(m.ns_per_byte[0], defaults.ns_per_byte[0]);
  EXPECT_GE(m.ns_per_byte[1], m.ns_per_byte[0]);
  EXPECT_LE(m.ns_per_byte[1], 4 * m.ns_per_byte[0]);
  EXPECT_GE(m.ns_per_byte[2], m.ns_per_byte[1]);
  EXPECT_GE(m.ns_per_byte[3], m.ns_per_byte[2]);
  // The prefetcher's window is measured where cache lines can be flushed (1.5 to 4 KiB: less gives
  // way to the default, scheduler_internal::usual_prefetch_bytes), else taken
  // (host_prefetch_bytes); a description written by hand has none.
  if (lines_can_be_flushed) {
    EXPECT_GE(m.prefetch_bytes, scheduler_internal::least_usual_prefetch_bytes);
    EXPECT_LE(m.prefetch_bytes, 4096);
  } else {
    EXPECT_EQ(m.prefetch_bytes, machine::host_prefetch_bytes);
  }
  EXPECT_EQ(defaults.prefetch_bytes, 0);
  EXPECT_EQ(&m, &machine::host());
}

TEST(machine, measure_prefetch_bytes) {
  // Between 0 and 4 KiB whatever the machine's state; 0 where no cache line can be flushed.
  const index_t bytes = measure_prefetch_bytes();
  EXPECT_GE(bytes, 0);
  EXPECT_LE(bytes, 4096);
  if (!lines_can_be_flushed) {
    EXPECT_EQ(bytes, 0);
  }
}

TEST(machine, speed_probe) {
  // A short streaming loop: positive, under a millisecond; the process's fastest probe is at most
  // every probe taken.
  for (int i = 0; i < 5; ++i) {
    const double ns = scheduler_internal::speed_probe_ns();
    EXPECT_GT(ns, 0);
    EXPECT_LT(ns, 1e6);
    EXPECT_LE(scheduler_internal::fastest_speed_probe_ns(), ns);
  }
  EXPECT_TRUE(std::isfinite(scheduler_internal::fastest_speed_probe_ns()));
}

TEST(machine, measure_stream_rate) {
  // Nanoseconds per byte of a streaming loop: well under a nanosecond from any cache level.
  // Sizes below the smallest (512 bytes) are measured at it.
  for (index_t bytes : {index_t{-1}, index_t{0}, index_t{4096}, index_t{256} << 10}) {
    const double ns = measure_stream_ns_per_byte(bytes);
    EXPECT_TRUE(std::isfinite(ns)) << bytes;
    EXPECT_GT(ns, 0) << bytes;
    EXPECT_LT(ns, 1.0) << bytes;
  }
}

TEST(machine, calibrate_stream_rates) {
  // The ratio of L2's rate to L1's measured, L1's kept, the slower levels raised to L2's where
  // they were below it.
  machine m;
  m.ns_per_byte[0] = 0.01;
  m.ns_per_byte[1] = 123;
  m.ns_per_byte[2] = 0.001;
  m.ns_per_byte[3] = 0.5;
  ASSERT_TRUE(calibrate_ns_per_byte(m));
  EXPECT_EQ(m.ns_per_byte[0], 0.01);
  EXPECT_GE(m.ns_per_byte[1], 0.01);
  EXPECT_LE(m.ns_per_byte[1], 0.04);
  EXPECT_EQ(m.ns_per_byte[2], m.ns_per_byte[1]);
  EXPECT_EQ(m.ns_per_byte[3], 0.5);
  // No L1 or no L2: nothing to measure, the rates are left alone.
  for (int missing : {0, 1}) {
    machine n;
    (missing == 0 ? n.l1_bytes : n.l2_bytes) = 0;
    n.ns_per_byte[1] = 123;
    EXPECT_FALSE(calibrate_ns_per_byte(n));
    EXPECT_EQ(n.ns_per_byte[1], 123);
  }
}

}  // namespace slinky
