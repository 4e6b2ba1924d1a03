// Random pipeline testing, part 3: the generator of random graphs, shapes and schedules, and the
// switches (features) that turn parts of it on and off.
#ifndef SLINKY_TOOLS_RANDOM_PIPELINE_GENERATE_H
#define SLINKY_TOOLS_RANDOM_PIPELINE_GENERATE_H

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "random_pipeline/spec.h"

#if __has_include("slinky/base/thread_pool_impl.h")
#define SLINKY_RANDOM_HAVE_THREAD_POOL 1
#else
#define SLINKY_RANDOM_HAVE_THREAD_POOL 0
#endif

namespace slinky {
namespace random_test {

// What the generator may produce. The defaults are what works today; the rest is switched on by
// SLINKY_RANDOM_FEATURES (see parse below) to reproduce known bugs.
struct features {
  int max_stages = 12;
  // Ranks other than the pipeline's first input's (reductions, broadcasts, mixed inputs).
  bool vary_rank = true;
  // Elements of 1 and 2 bytes besides 4.
  bool narrow_types = true;
  // make_copy translations and transposes.
  bool copies = true;
  // Loops over the variables of a copy (bug 1: the evaluator's copy overwrote them; fixed).
  bool copy_loops = true;
  // A pipeline output that is also read by another func.
  bool consumed_outputs = true;
  // A second output that nothing reads.
  bool unused_outputs = true;
  // Pipeline outputs of extent 0 in some dimension.
  bool empty_outputs = true;
  // The same buffer read twice by one func.
  bool duplicate_inputs = true;
  // Input and output buffers with transposed or padded layouts.
  bool layouts = true;
  // Intermediates stored inside serial loops (else only outside them: see
  // schedule_spec::outer_storage_only).
  bool inner_storage = true;
  // Windows that move in two dimensions with one loop: diagonal accesses, and schedules where
  // a bounding box moves so (else such schedules are not generated).
  bool diagonal = true;
  // Windows that are the hull of a part moving with a loop and a fixed part (else schedules
  // with them are not generated).
  bool hull_windows = true;
  // Intermediates stored outside a parallel loop around their producer (pipelined loops when
  // they slide), with or without a thread pool.
  bool parallel_shared_storage = true;
  // Funcs computed inside a loop over a constant range (else such schedules are not generated).
  bool constant_loops = true;
  // Funcs computed inside another's loop over a variable they also have, for a dimension that
  // does not move with it (only with shared_vars; else such schedules are not generated).
  bool shadowed_vars = true;
  // All funcs use the same variables x, y, z (else each its own), so loops of a func inside
  // the loop of another over the same variable shadow it.
  bool shared_vars = true;
  // Loops run in parallel (serially without a thread pool).
  bool parallel = true;
  // Running some schedules with a thread pool; only if slinky/base/thread_pool_impl.h exists.
  bool thread_pool = SLINKY_RANDOM_HAVE_THREAD_POOL;
  bool store_at = true;
  bool compute_at = true;
  bool stack = true;
  // Copies with a pad: func::make_copy(src, dst, pad) with an input_crop, the pad a scalar, of
  // pipeline inputs (and constants).
  bool padded_copies = true;
  // Padded copies of intermediates too.
  bool padded_intermediates = true;
  // func::make_copy of several inputs, each with an output_crop.
  bool multi_copies = true;
  // func::make_concat.
  bool concat = true;
  // func::make_stack.
  bool stack_copies = true;
  // Copies that flip a dimension: point(c - x).
  bool flips = true;
  // Copies that reshape to a lower rank (point(x % W), point(x / W)).
  bool reshapes = true;
  // Copies that reshape to a higher rank (point(y * W + x)).
  bool reshapes_up = true;
  // Stencil copies of one more dim, in(x * S + dx * D + c) with dx the new dim (S, D in 1-3), and
  // the check that the unscheduled pipeline makes no allocation for a broadcast or stencil copy
  // of an intermediate that the builder makes a view of its source (predicted_view_copies).
  bool view_copies = true;
  // Reshapes of mixed radix: the output's flat index (x, or x + W * y) re-split into the digits
  // of the source's dims ((flat / Q) % E, extents that need not divide W).
  bool radix_reshapes = true;
  // With radix_reshapes, the check that the unscheduled pipeline calls such a copy between dense
  // intermediates at most once per maximal run of elements contiguous in both
  // (predicted_copy_calls: copies that read a distinct source element for each destination
  // element, spanning the source's region).
  bool copy_call_counts = true;
  // With radix_reshapes, radices and divisors given at run time: lets of build_pipeline
  // (access::symbolic), which the builder cannot prove to be at least 1 (a reshape view is then
  // made under a condition checked at run time, docs/copies.md).
  bool symbolic_radices = true;
  // Padded copies whose pad is a buffer of the output's rank read at the output's point (a
  // constant or a pipeline input) instead of a scalar.
  bool pad_buffers = true;
  // With radix_reshapes, outputs of rank 3 whose flat index is x + W * y + W * W2 * z (the
  // inverse of a reshape of 3-D to 2-D: nested splits of one flat index).
  bool nested_splits = true;
  // Fold factors set on intermediates (at least the extent of the buffer's region) that copies
  // neither read nor write.
  bool folds = true;
  // Fold factors also on sources and destinations of copies.
  bool copy_folds = true;
  // Constant buffers (make_constant) and scalars (make_scalar) read by funcs.
  bool constants = true;
  // A callback that fails on its first, second or third call.
  bool failures = true;
  // Check, for each schedule with parallel loops, that no intermediate takes more than the
  // machine's hardware threads times what it takes with the loops serial (the bound of
  // docs/threads.md). Off: pipelined loops whose window the simplifier cannot bound over the
  // iterations in flight are not folded (a known gap, see docs/threads.md).
  bool parallel_memory_bound = true;
  // Auto mode (docs/random_testing.md): a quarter of the cases (auto_case) are scheduled by
  // slinky::schedule() instead of random schedules.
  bool auto_schedule = true;
  // Every case in auto mode (with auto_schedule), for long runs of the scheduler alone.
  bool auto_only = false;
  // In auto mode keep, a store_at at a loop (the scheduler once computed the producer, or a func
  // between it and that loop's func, at the root, out of that storage, and the build failed:
  // store_at_of_an_unscheduled_func_kept and store_at_across_an_unscheduled_func_kept in
  // slinky/scheduler/test/random_schedule_regressions_test.cc). Off: keep schedules store nothing
  // at a loop.
  bool auto_store_at = true;

  // A comma-separated list of feature names, each optionally prefixed by '-' to turn it off;
  // "stages=N" sets max_stages. Returns false if a name is unknown.
  bool parse(const std::string& list);

  struct entry {
    const char* name;
    bool features::*flag;
  };
  // Every feature, by name.
  static const std::vector<entry>& entries();
  // The flag of a feature, or null if there is none of that name.
  bool* find(const std::string& name);

  // The features that are on and off, e.g. "on: copies layouts ...; off: copy_loops ...".
  std::string to_string() const;
};

class rng {
  std::mt19937_64 engine_;

public:
  explicit rng(std::uint64_t seed) : engine_(seed) {}
  // A number in [lo, hi].
  index_t uniform(index_t lo, index_t hi) { return std::uniform_int_distribution<index_t>(lo, hi)(engine_); }
  bool chance(double p) { return std::uniform_real_distribution<double>(0, 1)(engine_) < p; }
  template <typename T>
  const T& pick(const std::vector<T>& v) {
    return v[uniform(0, static_cast<index_t>(v.size()) - 1)];
  }
  std::uint64_t next() { return engine_(); }
};

// A seed for each case of a batch, so any case can be run alone.
std::uint64_t case_seed(std::uint64_t seed, std::uint64_t index);

struct case_spec {
  graph_spec graph;
  std::vector<schedule_spec> schedules;
  // Input values, and layouts of the pipeline's buffers.
  std::uint64_t data_seed = 0;
};

// Removes stages and buffers that no pipeline output needs, and renumbers the rest (and the
// schedules) in order. A stage none of whose outputs is read or a pipeline output is removed.
void compact(case_spec& c);

// A random graph of 1 to f.max_stages funcs, with the shapes of its inputs and outputs.
graph_spec generate_graph(rng& r, const features& f);

// True if a copy reads or writes buffer b.
bool copied(const graph_spec& g, int b);

// False if the schedule has windows known to be miscomputed that f does not ask for.
bool allowed_windows(const graph_spec& g, schedule_spec s, const features& f);

// A random schedule: loops over random variables of random funcs with random steps, some of
// them parallel, and random legal compute_at, store_at and storage. Unless f.diagonal, a
// schedule with windows known to be miscomputed is drawn again (see allowed_windows).
schedule_spec generate_schedule(rng& r, const graph_spec& g, const plan& p, const features& f);

// True if the generator with features f could have made c (as far as the features restrict):
// the shrinker keeps to such cases.
bool generated_by(const case_spec& c, const features& f);

// Widens the outer bounds of each concatenation to the region the unscheduled pipeline
// computes of its output (so that it writes all of it), and returns the new plan.
plan widen_concats(graph_spec& g);

// True if the case of this seed (case_seed) is an auto-mode case: one in four with
// f.auto_schedule (all with f.auto_only), decided from the seed alone (the rest of the case is
// generated as without it).
bool auto_case(std::uint64_t seed, const features& f);

// True if the schedule stores buffer b at a loop (not the root; see features::auto_store_at).
bool stored_in_a_loop(const schedule_spec& s, int b);

// A random case: a graph whose buffers are small enough to run quickly, and some schedules.
case_spec generate_case(std::uint64_t seed, const features& f, int num_schedules = 6);

}  // namespace random_test
}  // namespace slinky

#endif  // SLINKY_TOOLS_RANDOM_PIPELINE_GENERATE_H
