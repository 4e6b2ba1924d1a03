// Random pipeline testing, part 2: the callbacks of the funcs (which check what they are given),
// buffers that own their memory, the reference evaluator, and the construction of a graph and a
// schedule with the builder API.
#ifndef SLINKY_TOOLS_RANDOM_PIPELINE_BUILD_H
#define SLINKY_TOOLS_RANDOM_PIPELINE_BUILD_H

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "random_pipeline/spec.h"
#include "slinky/builder/pipeline.h"
#include "slinky/runtime/buffer.h"
#include "slinky/runtime/pipeline.h"
#include "slinky/runtime/print.h"

namespace slinky {
namespace random_test {

// The iterations of a parallel loop that may be in flight at once, which the memory bound of
// parallel loops multiplies the steps by (docs/random_testing.md, oracle item 8): the machine's
// hardware threads (the builder folds pipelined loops for at most that many, docs/threads.md).
inline index_t in_flight() { return std::max<index_t>(1, std::thread::hardware_concurrency()); }

// Calls fn(const index_t* coordinates) for every point of b, dimension 0 fastest.
template <typename Fn>
void for_each_point(const box& b, const Fn& fn) {
  for (const ival& i : b) {
    if (i.empty()) return;
  }
  index_t at[max_rank + 1] = {};
  const std::size_t rank = b.size();
  for (std::size_t d = 0; d < rank; ++d) at[d] = b[d].min;
  for (;;) {
    fn(static_cast<const index_t*>(at));
    std::size_t d = 0;
    for (; d < rank; ++d) {
      if (++at[d] <= b[d].max) break;
      at[d] = b[d].min;
    }
    if (d == rank) return;
  }
}

inline box bounds_of(const raw_buffer& b) {
  box result(b.rank);
  for (std::size_t d = 0; d < b.rank; ++d) result[d] = {b.dim(d).min(), b.dim(d).max()};
  return result;
}

// Elements are signed integers of 1, 2 or 4 bytes, computed in wrapping unsigned arithmetic.
inline std::uint32_t load(const raw_buffer& b, const index_t* at) {
  const void* p = b.address_at(span<const index_t>(at, b.rank));
  switch (b.elem_size) {
  case 1: return static_cast<std::uint32_t>(static_cast<std::int32_t>(*static_cast<const std::int8_t*>(p)));
  case 2: return static_cast<std::uint32_t>(static_cast<std::int32_t>(*static_cast<const std::int16_t*>(p)));
  default: return *static_cast<const std::uint32_t*>(p);
  }
}
inline void store(const raw_buffer& b, const index_t* at, std::uint32_t v) {
  void* p = b.address_at(span<const index_t>(at, b.rank));
  switch (b.elem_size) {
  case 1: *static_cast<std::int8_t*>(p) = static_cast<std::int8_t>(v); break;
  case 2: *static_cast<std::int16_t*>(p) = static_cast<std::int16_t>(v); break;
  default: *static_cast<std::uint32_t*>(p) = v; break;
  }
}

inline std::uint32_t mix(std::uint32_t h, std::uint32_t v) { return (h ^ (v + 0x9e3779b9u + (h << 6) + (h >> 2))); }

// A box as [min..max, ...].
std::string to_string(const box& b);

// Checks what each call of a pipeline's callbacks is given, and keeps the first failure.
class monitor {
  std::mutex mutex_;
  std::string failure_;
  std::string kind_;

public:
  // Per buffer: the region a callback may be asked to write (empty: not checked).
  std::vector<box> allowed;
  std::atomic<int> calls{0};
  // Calls of the func that fails on purpose, whether it failed, and calls of any callback that
  // began after it failed.
  std::atomic<int> failing_calls{0};
  std::atomic<bool> failed{false};
  std::atomic<int> after_failure{0};
  // Per stage: the points its callback computed (of its first output), over all calls.
  std::vector<index_t> points;

  // Per stage: the points of its first output computed since the last reset, and whether a call
  // computed a point an earlier call had computed. That is a recompute even where the total stays
  // below the unscheduled pipeline's, which computes the hull of the windows where a parallel loop
  // computes their union (a diagonal window overlapping the next iteration's in one element).
  std::vector<std::set<std::vector<index_t>>> computed;
  std::vector<bool> repeated;

  // Counts the points of `crop`, computed by `stage`, and records them.
  void count_points(int stage, const box& crop) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (static_cast<int>(points.size()) <= stage) points.resize(stage + 1, 0);
    points[stage] += elem_count(crop);
    record_points_locked(stage, crop);
  }
  // Records the points of `crop`, written by `stage`, without counting them (a copy: the
  // computed-once oracle does not count copies' points).
  void record_points(int stage, const box& crop) {
    std::lock_guard<std::mutex> lock(mutex_);
    record_points_locked(stage, crop);
  }

private:
  void record_points_locked(int stage, const box& crop) {
    if (elem_count(crop) <= 0) return;
    if (static_cast<int>(computed.size()) <= stage) {
      computed.resize(stage + 1);
      repeated.resize(stage + 1, false);
    }
    std::vector<index_t> at(crop.size());
    for (std::size_t d = 0; d < crop.size(); ++d) at[d] = crop[d].min;
    while (true) {
      if (!computed[stage].insert(at).second) repeated[stage] = true;
      std::size_t d = 0;
      for (; d < crop.size(); ++d) {
        if (++at[d] <= crop[d].max) break;
        at[d] = crop[d].min;
      }
      if (d == crop.size()) break;
    }
  }

public:
  index_t points_of(int stage) {
    std::lock_guard<std::mutex> lock(mutex_);
    return stage < static_cast<int>(points.size()) ? points[stage] : 0;
  }
  bool repeated_points(int stage) {
    std::lock_guard<std::mutex> lock(mutex_);
    return stage < static_cast<int>(repeated.size()) && repeated[stage];
  }
  // Per stage: the calls of a copy's implementation (copies made with counted_copy).
  std::vector<index_t> copy_calls;

  void count_copy(int stage) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (static_cast<int>(copy_calls.size()) <= stage) copy_calls.resize(stage + 1, 0);
    ++copy_calls[stage];
  }
  index_t copy_calls_of(int stage) {
    std::lock_guard<std::mutex> lock(mutex_);
    return stage < static_cast<int>(copy_calls.size()) ? copy_calls[stage] : 0;
  }

  void fail(const std::string& kind, const std::string& message) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (kind_.empty()) {
      kind_ = kind;
      failure_ = message;
    }
  }
  std::string kind() {
    std::lock_guard<std::mutex> lock(mutex_);
    return kind_;
  }
  std::string failure() {
    std::lock_guard<std::mutex> lock(mutex_);
    return failure_;
  }
  void reset() {
    std::lock_guard<std::mutex> lock(mutex_);
    kind_.clear();
    failure_.clear();
    points.clear();
    computed.clear();
    repeated.clear();
    copy_calls.clear();
    calls = 0;
    failing_calls = 0;
    failed = false;
    after_failure = 0;
  }
};

// Computes every output of a stage over that output's own bounds: each element mixes the
// stage, the output, its coordinates and, in order, every element of the box each input is read
// over. Returns an empty string, or why it did not compute (an input that does not cover what
// is read, which it does not read).
std::string compute_stage(const kernel_spec& k, const raw_buffer* const* ins, const raw_buffer* const* outs);

// A copy: each point of out is written by the first input whose output_crop contains it, with
// the element of that input at its point accesses, or the pad's where that is outside the
// input's input_crop. Points no input covers are not written.
void compute_copy(const stage_spec& st, const raw_buffer* const* ins, const raw_buffer* pad, const raw_buffer& out);

// The callback of a stage. With a monitor, failures are reported to it, and each output crop is
// checked against monitor::allowed; without one, they are printed.
call_stmt::callable kernel(kernel_spec k, monitor* m = nullptr);

// The implementation of a copy of stage `stage`: slinky::copy, each call counted by the monitor
// (monitor::copy_calls).
copy_stmt::callable counted_copy(monitor* m, int stage);

// A buffer that owns its memory, with dims of any order in memory and padding between rows.
class host_buffer {
  std::vector<dim> dims_;
  std::vector<std::uint64_t> data_;
  raw_buffer raw_;

public:
  // layout: the order of the dims in memory (innermost first; empty is 0, 1, 2, ...), and
  // elements of padding after each dim.
  host_buffer(int elem_size, const box& bounds, std::vector<int> order = {}, std::vector<index_t> padding = {});
  host_buffer(const host_buffer&) = delete;
  host_buffer& operator=(const host_buffer&) = delete;

  const raw_buffer& raw() const { return raw_; }
  box bounds() const { return bounds_of(raw_); }
  void fill_bytes(unsigned char value) { std::memset(data_.data(), value, data_.size() * sizeof(std::uint64_t)); }
};

// Fills a buffer with values that depend on the seed and the coordinates only.
void fill(const host_buffer& b, std::uint64_t seed);

// The first element where two buffers of the same bounds differ, or an empty string.
std::string compare(const raw_buffer& expected, const raw_buffer& actual);
bool equal(const host_buffer& a, const host_buffer& b);

// True if the values of b (dim 0 fastest, as signed integers) are `values`.
bool equal_values(const host_buffer& b, const std::vector<std::int64_t>& values);

// eval_config hooks for running a pipeline under test: every allocation goes through the
// allocate hook (auto_stack_threshold is 0, so only memory_type::stack allocations do not), which
// records the largest allocation of each buffer, and the free hook poisons what it frees; failed
// checks are recorded instead of printed.
class eval_hooks {
  mutable std::mutex mutex_;
  std::map<std::size_t, index_t> max_bytes_;
  std::map<std::size_t, int> allocations_of_;
  int allocations_ = 0;
  int frees_ = 0;
  int call_failures_ = 0;
  std::string check_;

public:
  eval_config config;
  eval_context context;

  explicit eval_hooks(const node_context* symbols = nullptr);
  eval_hooks(const eval_hooks&) = delete;
  eval_hooks& operator=(const eval_hooks&) = delete;

  // The bytes of the largest heap allocation of buffer `sym` (0 if none).
  index_t max_bytes(var sym) const {
    std::lock_guard<std::mutex> lock(mutex_);
    auto i = max_bytes_.find(sym.sym());
    return i == max_bytes_.end() ? 0 : i->second;
  }
  // Heap allocations of buffer `sym`.
  int allocations(var sym) const {
    std::lock_guard<std::mutex> lock(mutex_);
    auto i = allocations_of_.find(sym.sym());
    return i == allocations_of_.end() ? 0 : i->second;
  }
  int allocations() const { return allocations_; }
  int frees() const { return frees_; }
  // Calls of the call_failed hook.
  int call_failures() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return call_failures_;
  }
  // The condition of the first check that failed, or empty.
  std::string check() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return check_;
  }
};

// The bytes of the largest allocation of each buffer of `syms` in a serial run of p (0 for one
// with no allocation of its own), found by report_memory with the allocate hooks' threshold. The
// hooks do not see an allocation that takes over a block another buffer freed just before
// (docs/runtime.md, "Memory handed on at run time"); this does.
std::vector<index_t> largest_allocations(const pipeline& p, const std::vector<var>& syms,
                                         const std::vector<const raw_buffer*>& inputs,
                                         const std::vector<const raw_buffer*>& outputs);

// The reference: each buffer over its plan bounds, computed stage by stage over whole buffers.
std::vector<std::unique_ptr<host_buffer>> reference(const graph_spec& g, const plan& p,
                                                    const std::vector<const raw_buffer*>& inputs);

// ---------------------------------------------------------------------------------------------
// The pipeline, through the builder API.

// The graph and (with a schedule) its schedule as builder objects, and the pipeline built from
// them. The pipeline does not depend on the rest once built.
// The symbols of the radices and divisors a stage's input gives at run time (access::symbolic):
// per dim, the names whose product is its divisor (none: 1) and the name of its radix (empty: no
// %). The radix of dim d is E<stage>_<input>_<d>; its divisor is 1 if that is its value, else the
// product of the radices of the dims before it when that is its value (as the generator makes
// them), else Q<stage>_<input>_<d>. `lets` are the names with their values, bound by the pipeline.
struct radix_names {
  std::vector<std::vector<std::string>> divisor;
  std::vector<std::string> radix;
  std::vector<std::pair<std::string, index_t>> lets;
};
radix_names symbolic_radices(const stage_input& in, int stage, int input);
// The lets of all the stages' inputs, in order.
std::vector<std::pair<std::string, index_t>> radix_lets(const graph_spec& g);

struct built {
  node_context ctx;
  // The symbols of the radices given at run time (radix_lets), bound by the pipeline.
  std::vector<std::pair<var, index_t>> lets;
  // Per stage, the variables of its outputs.
  std::vector<std::vector<var>> vars;
  std::vector<buffer_expr_ptr> buffers;
  std::vector<std::unique_ptr<func>> funcs;
  pipeline p;
  // Auto mode (auto.h): the scheduler's report, a func it changed that it had to leave alone
  // (empty: none), and whether it made a loop, a parallel loop.
  std::string schedule_report;
  std::string not_left_alone;
  bool auto_looped = false;
  bool auto_parallel = false;
};

// The lets a pipeline of the built graph must bind (build_pipeline's lets): b.lets.
std::vector<std::pair<var, expr>> pipeline_lets(const built& b);

// The value of a constant of rank 0, as a signed integer.
std::int32_t scalar_value(const graph_spec& g, const plan& pl, int b, std::uint64_t seed);

// Constants are filled with data_seed + their index, like inputs. In auto mode (s->automatic),
// slinky::schedule() schedules the graph after s's schedule is set (auto.h, schedule_auto). Without
// make_pipeline, the pipeline is not built (p is empty).
std::unique_ptr<built> build(const graph_spec& g, const plan& pl, const schedule_spec* s, monitor* m,
                             std::uint64_t data_seed = 0, bool make_pipeline = true);

}  // namespace random_test
}  // namespace slinky

#endif  // SLINKY_TOOLS_RANDOM_PIPELINE_BUILD_H
