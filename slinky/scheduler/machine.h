/// \file
/// The machine the scheduler plans for: data cache sizes, worker threads, the cost of one call of
/// a callback inside a pipeline loop, and the cost per byte moved from each level of memory.
/// machine::host() reads them from this machine once per process; every field may be overridden.
#ifndef SLINKY_SCHEDULER_MACHINE_H
#define SLINKY_SCHEDULER_MACHINE_H

#include <string>

#include "slinky/runtime/buffer.h"

namespace slinky {

/// A description of the machine the scheduler plans for (docs/scheduler.md).
struct machine {
  /// Data (or unified) cache capacity per level, in bytes, as seen by one core. 0 means "no such
  /// level" (the scheduler then plans as if that level were the next one out).
  ///@{
  index_t l1_bytes = 32 * 1024;
  index_t l2_bytes = 512 * 1024;
  index_t l3_bytes = 8 * 1024 * 1024;
  ///@}
  /// Threads that can run a parallel loop's iterations at once (the pool's workers plus the thread
  /// that waits). 1: the scheduler makes no parallel loops.
  int threads = 1;
  /// The time one call of a callback costs inside a pipeline loop, beyond the callback's own work
  /// (the loop iteration, the crops of its buffers, the call dispatch), in nanoseconds.
  double call_overhead_ns = 30;
  /// Time per byte a simple streaming callback spends on data in each level (L1, L2, L3, main
  /// memory), in nanoseconds. With hardware prefetching, L2 streams nearly as fast as L1; the
  /// step that matters most is leaving the core's caches.
  /// Defaults of the right order for a current x86 core (machine::host() measures the ratio of
  /// L2's to L1's: calibrate_ns_per_byte): L1 and L2 at 200 and 125 GB/s, the L3 at 60, memory at
  /// 30 GB/s for one core. With them the model's estimates of benchmark 3's chains and benchmark 4's
  /// stencils are within about 25% of their times on the 2-core development machine (the
  /// previous defaults, 4 times larger, overestimated them 3 to 4 times, which made calls and
  /// parallel iterations look cheap beside the bytes).
  double ns_per_byte[4] = {0.005, 0.008, 0.016, 0.035};
  /// The most buffers one iteration of a serial loop may stream through (intermediates in the
  /// loop, those sharing storage counted once per block; windows of inputs moving with it; not
  /// operands read whole) for its working set to be priced at L1's rate: with more, chunks of
  /// different buffers at the same offsets within a page compete for the same sets and for the
  /// L1's fill bandwidth, and the scheduler prices L1 like L2. Parallel loops are priced at L2's
  /// rate too (their iterations pay more per step). The default is that of an 8-way L1;
  /// machine::host() derives it from the L1's associativity (l1_buffers_for_ways).
  int l1_buffers = 4;
  /// The first touch of a fresh page of memory (a page fault), in nanoseconds per 4 KiB page: what
  /// a large intermediate allocated with the default allocator costs on every evaluation.
  double page_touch_ns = 250;
  /// The size from which a block comes from the allocator as fresh pages on every evaluation, in
  /// bytes: smaller blocks are reused from the heap after the first evaluation (glibc's malloc
  /// maps blocks above its mmap threshold, which rises with the blocks freed up to 32 MiB on
  /// 64-bit). 0: every block is fresh.
  index_t fresh_block_bytes = 32 << 20;
  /// The bytes of a stream from main memory that the hardware prefetcher fetches ahead of a loop
  /// reading (or writing) it chunk by chunk, while the loop's other work runs. Up to this many
  /// bytes of each iteration's chunk of each stream from memory cost nothing beyond the
  /// iteration's other work (its calls, the callbacks' work, the bytes in cache), as long as there
  /// is as much other work to hide them behind: a chain of 4 elementwise funcs over buffers in
  /// memory runs 1.7x faster in chunks of 2 KiB than in chunks of 16 KiB on the 2-core development
  /// machine, the rest of the chain alike. 0: every byte from memory costs its rate
  /// (ns_per_byte[3]). machine::host() measures it (measure_prefetch_bytes) and takes
  /// host_prefetch_bytes where it measures less than three quarters of that.
  ///
  index_t prefetch_bytes = 0;

  /// The host, detected once per process (thread-safe): cache sizes and the L1's associativity
  /// (l1_buffers) from sysfs (/sys/devices/system/cpu/cpu0/cache/index*/{level,type,size,
  /// ways_of_associativity}), else from sysconf's _SC_LEVEL*_CACHE_SIZE and
  /// _SC_LEVEL1_DCACHE_ASSOC (glibc reads cpuid; a level it gives associativity 0 is ignored),
  /// else the defaults above, then keep_plausible_cache_sizes; threads from host_cpus();
  /// call_overhead_ns from calibrate_call_overhead_ns(); L2's ns_per_byte from
  /// calibrate_ns_per_byte (its ratio to L1's measured); prefetch_bytes from
  /// measure_prefetch_bytes() where cache lines can be flushed from user code and it measures at
  /// least three quarters of host_prefetch_bytes, else host_prefetch_bytes (a smaller window is
  /// measured in a stretch where the core runs slower, or on a core whose prefetcher reaches less
  /// far, and its choices were no faster, with up to 16 times the memory: scheduler_internal::
  /// usual_prefetch_bytes); then the call overhead once more (measure_call_overhead_ns), the
  /// smaller of the two kept. About 4 to 7 ms in all on 2-core Xeon and AMD EPYC VMs; up to 45
  /// where the core runs slower throughout the first 30 ms or the window measured is small.
  static const machine& host();

  /// machine::host()'s prefetch_bytes where it cannot measure it (no cache line can be flushed from
  /// user code: measure_prefetch_bytes) or measures less than three quarters of it: 2 KiB, measured
  /// on a 2-core AMD EPYC VM (1.8 to 2.0 KiB, the chains of funcs fastest in chunks of 2 KiB per
  /// buffer), of the order of the L2 stream prefetchers of current x86 and ARM cores. A 2-core Xeon
  /// VM measures 0.65 to 1.1 KiB.
  static constexpr index_t host_prefetch_bytes = 2048;
};

/// The size in bytes of a cache size string as sysfs writes it: a decimal number, optionally
/// followed by K, M or G (powers of 1024; lower case too), surrounding whitespace ignored: "48K"
/// is 49152, "32M" is 33554432, "512" is 512. Returns 0 if the string is not of this form or the
/// size does not fit in index_t.
index_t parse_cache_size(const std::string& s);

/// The cache sizes described by a sysfs cpu cache directory (the `index*` subdirectories of
/// `dir`, each with files `level`, `type` and `size`): the first Data or Unified cache of each
/// level 1, 2 and 3 sets l1_bytes, l2_bytes, l3_bytes of `m`; instruction caches are skipped.
/// The level 1 cache's `ways_of_associativity`, where the file is there and gives a number of
/// ways, sets l1_buffers (l1_buffers_for_ways). Returns true if it set at least one level; the
/// other fields of `m` are left as they are.
bool read_sysfs_cache_sizes(const std::string& dir, machine& m);

/// machine::l1_buffers for an L1 data cache of `ways` ways: half of them, at least 1 (a chunk
/// streamed through a set holds a line in use and the next one fetched, and chunks of several
/// buffers at the same offsets in a page share the sets: past half the ways they evict each
/// other's lines). 4 for an 8-way L1, 6 for a 12-way one. For 0 or less (unknown; sysfs writes 0
/// for a fully associative cache, which has no such conflicts but has no figure either),
/// machine's default.
int l1_buffers_for_ways(index_t ways);

/// Replaces the cache sizes no real cache has with machine's defaults, so that a hypervisor's
/// made-up figures do not steer the scheduler: L1 outside [4 KiB, 1 MiB], L2 outside
/// [64 KiB, 64 MiB] or smaller than L1, L3 outside [1 MiB, 256 MiB] (the largest L3 one core
/// shares today is 96 MiB) or smaller than L2. 0 ("no such level") is kept. An L3 replaced by a
/// default smaller than L2 becomes L2's size. Returns true if it replaced any. machine::host()
/// applies it to what it detects.
bool keep_plausible_cache_sizes(machine& m);

/// The CPUs a cgroup's cpu.max lets its processes use (cgroup v2: a quota and a period in
/// microseconds, as in "200000 100000", or "max" and a period): ceil(quota / period), at least
/// 1. 0 for no limit ("max") or a string not of this form.
int parse_cgroup_cpu_max(const std::string& s);

/// The CPU limit of the cgroup this process is in, as CPUs (0 if none is found): the smallest
/// limit of its cgroup and the cgroup's ancestors. `proc_cgroup` is a file like
/// /proc/self/cgroup, `root` the cgroup file system's mount point. A v2 entry ("0::" then the
/// cgroup's path P) reads cpu.max in the directory `root` + P and in each parent up to `root`; a
/// v1 entry whose controllers include "cpu" reads cpu.cfs_quota_us and cpu.cfs_period_us in
/// `root` + "/cpu,cpuacct" + P or `root` + "/cpu" + P, and their parents (a quota of -1 is no
/// limit).
int read_cgroup_cpu_limit(const std::string& proc_cgroup, const std::string& root);

/// The threads this process can run at once: std::thread::hardware_concurrency(), at most the
/// CPUs of its affinity mask (sched_getaffinity: a container or `taskset` given 2 of 64 CPUs) and
/// the CPU limit of its cgroup (read_cgroup_cpu_limit("/proc/self/cgroup", "/sys/fs/cgroup"): a
/// container given a quota of 2 CPUs); at least 1.
int host_cpus();

/// Measures the overhead of one call of a callback in a pipeline loop: builds a pipeline of two
/// trivial funcs in a loop of step 1 over 1024 elements and times its evaluation (the fastest of at
/// least two and at most 16 runs, within about 3 ms after building). Returns the nanoseconds per
/// call, or 0 if the measurement failed.
double measure_call_overhead_ns();

/// The first call measures (measure_call_overhead_ns, about 4 ms); later calls, from any thread,
/// return the same value. Always a positive, finite number of nanoseconds: machine's default if
/// the measurement failed.
double calibrate_call_overhead_ns();

/// Measures the time per byte a simple streaming loop (y = x * 0.5 + 1 over floats, x and y
/// arrays of `bytes` / 2 each, passed back and forth, compiled like the library) spends on data
/// held in the cache level `bytes` fits: the fastest of at least three and at most 32 timed runs
/// of about 1 MiB moved each (or one pass each way, for arrays larger than that), within about
/// 0.5 ms after a warm-up pass. `bytes` is taken between 512 bytes and 128 MiB. Returns
/// nanoseconds per byte moved (read and written), or 0 if the measurement failed.
double measure_stream_ns_per_byte(index_t bytes);

/// L2's rate of machine::ns_per_byte from L1's in `m` and the ratio of the two measured on this
/// host: the streaming loop of measure_stream_ns_per_byte over half of each level's capacity (the
/// part the scheduler fills by default), the runs of the two interleaved within about 1 ms, the
/// ratio taken between 1 and 4. The L3's and memory's rates are raised to at least the level
/// before's. Only the ratio is measured: a process's first milliseconds run the loop up to twice
/// as slowly as later ones, alike for both sizes. Where L1 or L2 is missing (size 0) or a
/// measurement fails, m's rates are left as they are. Returns true if it set them.
/// machine::host() applies it once per process.
bool calibrate_ns_per_byte(machine& m);

/// Measures machine::prefetch_bytes on this host: a chain of six streaming passes (y = x * 0.5 + 1
/// over floats, as measure_stream_ns_per_byte's) in chunks, the first reading a stream of 256 KiB
/// and the last writing another, the four between on chunks in L1; timed with the two streams in
/// cache and flushed from every cache level to memory before the run (clflushopt, or clflush where
/// the CPU lacks it, on x86-64; dc civac on Linux AArch64), in chunks of 2, 4 and 16 KiB, the runs
/// interleaved (the fastest of 2 rounds of each: one estimate, about 1 ms). The time the flush adds
/// (the stall) at a chunk size b against 16 KiB's, f, gives W by the cost model's law of the bytes
/// hidden (b up to W, then (4W - b) / 3, none from 4W): W = (4 - 3f) b / 4, from the chunks of 2
/// KiB (or of 4 KiB where those of 2 KiB hid all; 0 where they hid nothing), between 0 and 4 KiB.
/// The result is the median of the settled estimates, those whose runs in cache were within 1.2
/// times the fastest's (the smaller of the middle two of an even count): a core shared with another
/// tenant runs stretches of milliseconds to seconds 1.6 to 2 times slower, and hides nothing there.
/// Estimates are taken until three are settled (at least three in all, about 3 ms), or, where the
/// settled ones give less than three quarters of host_prefetch_bytes, for 30 ms (a slow stretch may
/// cover the first milliseconds); at most 40 ms. Returns 0 where no cache line can be flushed from
/// user code, where the flushed runs are not slower by at least a part of a stream from memory in
/// any of the first three (the flush did not reach memory), or where a measurement fails.
index_t measure_prefetch_bytes();

}  // namespace slinky

#endif  // SLINKY_SCHEDULER_MACHINE_H
