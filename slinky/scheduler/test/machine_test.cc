// The machine description: parsing of cache sizes as sysfs writes them, reading a sysfs-like cache
// directory, and the calibration of the per-call overhead.
#include <gtest/gtest.h>

#include <time.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <thread>
#include <vector>

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
    }
  }
  ~fake_sysfs() { std::filesystem::remove_all(dir); }
};

}  // namespace

TEST(machine, read_sysfs_cache_sizes) {
  fake_sysfs fs(
      {{"1", "Data", "48K"}, {"1", "Instruction", "32K"}, {"2", "Unified", "2048K"}, {"3", "Unified", "32M"}});
  machine m;
  m.l1_bytes = m.l2_bytes = m.l3_bytes = 1;
  ASSERT_TRUE(read_sysfs_cache_sizes(fs.dir.string(), m));
  EXPECT_EQ(m.l1_bytes, 48 * 1024);
  EXPECT_EQ(m.l2_bytes, 2048 * 1024);
  EXPECT_EQ(m.l3_bytes, 32 * 1024 * 1024);
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

TEST(machine, host) {
  const machine& m = machine::host();
  EXPECT_GT(m.l1_bytes, 0);
  EXPECT_GE(m.l2_bytes, m.l1_bytes);
  // What host() detects has been made plausible.
  machine checked = m;
  EXPECT_FALSE(keep_plausible_cache_sizes(checked));
  EXPECT_GE(m.threads, 1);
  EXPECT_GT(m.call_overhead_ns, 0);
  EXPECT_EQ(&m, &machine::host());
}

}  // namespace slinky
