// Random pipeline testing, part 1: a plain description of a graph of funcs and of schedules
// for it, the builder's rules for where funcs run and buffers live, and the shapes of the
// buffers by plain interpretation of the graph.
#ifndef SLINKY_TOOLS_RANDOM_PIPELINE_SPEC_H
#define SLINKY_TOOLS_RANDOM_PIPELINE_SPEC_H

#include <algorithm>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "slinky/base/arithmetic.h"
#include "slinky/runtime/buffer.h"
#include "slinky/runtime/stmt.h"

namespace slinky {
namespace random_test {

// The most dimensions any buffer or func has.
constexpr int max_rank = 3;

// An inclusive range of coordinates; empty when max < min.
struct ival {
  index_t min = 0;
  index_t max = -1;

  bool empty() const { return max < min; }
  index_t extent() const { return empty() ? 0 : max - min + 1; }
  bool contains(const ival& o) const { return o.empty() || (min <= o.min && o.max <= max); }
  ival& operator|=(const ival& o) {
    if (o.empty()) return *this;
    if (empty()) return *this = o;
    min = std::min(min, o.min);
    max = std::max(max, o.max);
    return *this;
  }
  bool operator==(const ival& o) const { return (empty() && o.empty()) || (min == o.min && max == o.max); }
};
using box = std::vector<ival>;

inline index_t elem_count(const box& b) {
  index_t n = 1;
  for (const ival& i : b) n *= i.extent();
  return n;
}

// Bounds beyond this are unbounded (a crop side that is expr()).
constexpr index_t unbounded = index_t(1) << 40;

inline ival intersect(const ival& a, const ival& b) {
  if (a.empty() || b.empty()) return {};
  return {std::max(a.min, b.min), std::min(a.max, b.max)};
}

// One dimension of a func's input as a function of the func's output variables:
// [t(x) + mul2 * y + lo, t(x) + mul2 * y + hi] where x is output variable `var`, t(x) is
// floor(mul * x / div) (mul may be negative: a flip), or euclidean x % mod when mod > 0, and y
// is output variable var2 (if var2 >= 0: a reshape, x + W * y); the constant [lo, hi] when
// var < 0; the whole dimension of the buffer (a pipeline input) when `whole`, written
// in_buffer->dim(d).bounds. With `flat` (a digit of a flat index re-split in another radix),
// t(x) + mul2 * y is instead (floor((mul * x + mul2 * y + mul3 * z) / div)) % mod (euclidean, no %
// when mod is 0), z the output variable var3 (if var3 >= 0: a flat index of three variables); with `symbolic` too, the
// pipeline takes div and mod as symbols bound at run time (lets of build_pipeline, radix_lets), so the builder knows
// only their names.
struct access {
  int var = -1;
  index_t mul = 1;
  index_t div = 1;
  index_t lo = 0;
  index_t hi = 0;
  bool whole = false;
  index_t mod = 0;
  int var2 = -1;
  index_t mul2 = 0;
  bool flat = false;
  bool symbolic = false;
  int var3 = -1;
  index_t mul3 = 0;

  bool is_point() const { return !whole && lo == hi; }
};

// The first coordinate an access reads at the output point p (the last is that + hi - lo).
inline index_t access_at(const access& a, const index_t* p) {
  if (a.var < 0) return a.lo;
  if (a.flat) {
    index_t t = floor_div(
        a.mul * p[a.var] + (a.var2 >= 0 ? a.mul2 * p[a.var2] : 0) + (a.var3 >= 0 ? a.mul3 * p[a.var3] : 0), a.div);
    if (a.mod > 0) t = euclidean_mod(t, a.mod);
    return t + a.lo;
  }
  index_t t = a.mod > 0 ? euclidean_mod(p[a.var], a.mod) : floor_div(a.mul * p[a.var], a.div);
  if (a.var2 >= 0) t += a.mul2 * p[a.var2];
  return t + a.lo;
}

// The interval an access reads when the output variables range over `vars`. Unless `exact`,
// x % W is [0, W - 1], as the builder's bounds inference takes it.
ival map_access(const access& a, const box& vars, bool exact = false);

// A copy's input: besides the accesses (points), the part of the source that is copied (outside
// it, the pad's value: input_crop, in source coordinates) and the part of the output it writes
// (output_crop, in output coordinates); empty: no crop.
struct stage_input {
  int buffer = -1;
  std::vector<access> dims;
  box input_crop = {};
  box output_crop = {};
};

// How a copy is made: func::make_copy of one input (plain), of one input with a pad (padded),
// of several inputs with output crops along dimension `dim` (multi), or func::make_concat or
// func::make_stack along `dim`.
enum class copy_kind { plain, padded, multi, concat, stack };

inline bool contains(const box& crop, const index_t* p) {
  for (std::size_t d = 0; d < crop.size(); ++d) {
    if (p[d] < crop[d].min || p[d] > crop[d].max) return false;
  }
  return true;
}

// A func: output variables x, y, z (its rank), its inputs and its outputs, each of them indexed
// by all the variables in order. A copy has point accesses and one output; its output is
// written by the first input whose output_crop contains the point.
struct stage_spec {
  int rank = 1;
  std::vector<stage_input> inputs;
  std::vector<int> outputs;
  bool copy = false;
  copy_kind op = copy_kind::plain;
  // padded: the pad, a constant buffer of rank 0 (its one value), or a buffer of the output's rank
  // (a constant or a pipeline input) read at the output's point.
  int pad = -1;
  // multi, concat, stack: the dimension of the output the inputs are laid along.
  int dim = 0;
  // stack: the output takes no variable for dim (func::input::output_slice), so no loop of the
  // schedule runs over it.
  bool sliced = false;
  // concat: input i covers [cat_bounds[i], cat_bounds[i + 1]) of the output along dim.
  std::vector<index_t> cat_bounds;
};

// True if variable v of stage st indexes its output in the func built (not the stacked dim of a
// sliced stack), so that a loop may run over it.
inline bool loopable(const stage_spec& st, int v) {
  return v >= 0 && v < st.rank && !(st.copy && st.op == copy_kind::stack && st.sliced && v == st.dim);
}

// Makes the accesses and crops of a concat or stack what make_concat and make_stack make of
// their inputs (after inputs are added or removed).
void normalize_copy(stage_spec& st);

struct buffer_spec {
  int rank = 1;
  int elem_size = 4;
  bool input = false;
  bool output = false;
  int producer = -1;
  // A pipeline input whose contents are given to the builder (buffer_expr::make_constant, or
  // make_scalar for rank 0) instead of being passed to evaluate.
  bool constant = false;
  // Intermediates: a fold factor per dim set on the buffer_expr (0: none; empty: none).
  std::vector<index_t> fold;
  // Outputs: the bounds asked for (the buffer also covers what its consumers read). Inputs: a
  // region covered even where nothing reads it (dims read whole), and margins added around
  // everything that is read.
  box base;
  std::vector<index_t> margin_lo, margin_hi;
  // Inputs and outputs: the order of the dims in memory (innermost first), and elements of
  // padding after each (see host_buffer). Empty: dense, dim 0 innermost.
  std::vector<int> order;
  std::vector<index_t> padding;
};

// Stages are in topological order: a stage reads only pipeline inputs and outputs of earlier
// stages.
struct graph_spec {
  std::vector<buffer_spec> buffers;
  std::vector<stage_spec> stages;
  // All funcs use the same variables x, y, z; otherwise each func has its own (x0, y0, ...).
  bool shared_vars = false;
  // A func whose callback fails (returns injected_failure) on its fail_call-th call of a run
  // (-1: none).
  int fail_stage = -1;
  int fail_call = 1;
};

// What a callback that fails on purpose returns.
constexpr index_t injected_failure = 42;

std::string buffer_name(const graph_spec& g, int b);
// The name of variable v of a stage's output.
std::string var_name(const graph_spec& g, int stage, int v);

// ---------------------------------------------------------------------------------------------
// Schedules.

// A loop of a func: the func (stage index) and its variable. stage < 0 is the root.
struct level {
  int stage = -1;
  int var = -1;

  bool root() const { return stage < 0; }
  bool operator==(const level& o) const { return stage == o.stage && (stage < 0 || var == o.var); }
  bool operator!=(const level& o) const { return !(*this == o); }
};

struct loop_spec {
  int var = 0;
  index_t step = 1;
  bool parallel = false;
};

struct stage_schedule {
  // Innermost first, as func::loops takes them.
  std::vector<loop_spec> loops;
  std::optional<level> compute_at;
};

struct buffer_schedule {
  std::optional<level> store_at;
  memory_type storage = memory_type::automatic;
};

// Auto mode (docs/random_testing.md): after the loops, compute_at and storage of a schedule_spec
// are set, slinky::schedule() (slinky/scheduler) schedules the graph for the shapes of the plan.
enum class auto_mode {
  // No: the schedule_spec is the whole schedule.
  none,
  // The scheduler on the unscheduled graph (the schedule_spec sets nothing).
  fresh,
  // The scheduler with its default options after the schedule_spec's schedule: it must leave the
  // funcs with loops or compute_at alone.
  keep,
  // The scheduler with schedule_options::reschedule after the schedule_spec's schedule, which it
  // replaces.
  reschedule,
};

struct schedule_spec {
  std::vector<stage_schedule> stages;
  std::vector<buffer_schedule> buffers;
  bool no_alias_buffers = false;
  // Run with a thread pool (when one is available), so parallel loops really run in parallel,
  // of this many workers besides the calling thread (1 to 3).
  bool thread_pool = false;
  int pool_workers = 1;
  // Allow an intermediate to be stored outside a parallel loop around its producer, which
  // workers then share (a pipelined loop when it slides).
  bool parallel_shared_storage = false;
  // Keep every intermediate stored outside every serial loop around its producer (the storage
  // of all outputs of a func at one level, and no func computed in a parallel loop inside a
  // serial one, whose default storage would be inside): buffers stored inside a loop that
  // others slide over are miscomputed (see random_regressions_test.cc).
  bool outer_storage_only = false;
  // Auto mode, and the machine the scheduler plans for (an index of auto_machine, auto.h).
  auto_mode automatic = auto_mode::none;
  int auto_machine = 0;
};

// The stages that read an output of stage s, without duplicates.
std::vector<int> consumers_of(const graph_spec& g, int s);

bool produces_output(const graph_spec& g, int s);

int loop_index(const stage_schedule& s, int var);

// Where each stage runs, as the builder resolves it (docs/builder.md, schedule_graph): the
// loops around it (outermost first), and the loops around its call (those and its own loops).
struct placement {
  std::vector<level> compute;
  std::vector<std::vector<level>> compute_chain;
  std::vector<std::vector<level>> call_chain;
};

bool is_parallel(const schedule_spec& s, const level& l);

// Makes a schedule legal for the builder, and resolves where everything runs: loops over
// variables the func does not have (or twice) are dropped, and a compute_at or store_at the
// builder would reject is reset to the default. With `choose`, compute_at and store_at are
// instead chosen at random among the legal places (choose(n) returns a number in [0, n), or -1
// for the default). No buffer is stored outside a parallel loop around its producer unless
// s.parallel_shared_storage.
placement place(const graph_spec& g, schedule_spec& s, const std::function<int(int)>& choose);

placement legalize(const graph_spec& g, schedule_spec& s);

// Windows of intermediates that sliding and folding get wrong (see random_regressions_test.cc),
// over a loop (serial or pipelined) inside the intermediate's storage: a window moving in two dimensions with
// the loop (a diagonal, or the bounding box of consumers reading it in different orders), and a
// window that is the hull of a part moving with the loop and a part fixed in it. For a buffer
// stored by default, the parallel loops around it along which its windows may overlap (and the
// loops inside the outermost of them) count as inside its storage: the builder may move it out
// of them for its producer to slide (docs/threads.md).
struct risky_windows {
  bool two_dims = false;
  bool fixed_and_moving = false;
  // Also: a func computed inside a loop whose range is a constant (not from the bounds of an
  // output, or bounded by a copy's crops on both sides): the first window of what slides over it
  // is not computed.
  bool constant_loop = false;
  // Also (shared variables only): a func computed inside another's loop over a variable whose
  // name the func also has, for a dimension that does not move with that loop: bounds inference
  // of the pipeline's inputs mixes the two up (bug C4 of random_regressions_copies_test.cc).
  bool shadowed = false;
};

using levels = std::vector<level>;
// window_deps(...)[stage][var]: the loops of the stage's compute chain its region along a variable
// moves with, one set per consumer's access.
using window_dependencies = std::vector<std::vector<std::vector<levels>>>;

// The union of the sets of a window_dependencies entry.
levels all_levels(const std::vector<levels>& contributions);

// The loops each dimension of a stage's region depends on, found consumers first, through the
// accesses; each consumer's access contributes a set.
window_dependencies window_deps(const graph_spec& g, const schedule_spec& s, const placement& p);

// Finds the risky windows of a schedule.
risky_windows find_risky_windows(const graph_spec& g, const schedule_spec& s, const placement& p);

// Whether a schedule lets the builder compute a stage on more points than the unscheduled
// pipeline computes. Only a stage computed inside loops of other stages can recompute anything,
// and it must not, unless:
// - the user stores one of its outputs inside such a loop (store_at a loop, not the root): then
//   each iteration owns its window and recomputes its halo, the user's choice;
// - a consumer reads it through an access whose window cannot slide along a loop: x % W (fixed
//   wherever x is), a flip (moves backwards) or a reshape x + W * y (moves in steps of W);
// - its region moves with two or more loops of its compute chain (a tile moving in y and x, or a
//   loop of a consumer nested in another's loop over the same dimension): a window slides along
//   one loop only, the innermost it moves with, and is recomputed where the outer ones move it;
// - its region does not move with a loop of its compute chain, and the user placed it there (a
//   compute_at), or placed another func or buffer at a loop of its chain (which pins it inside):
//   by default the builder computes such a func outside that loop instead (once), but a func
//   computed inside it computes its region in each of its iterations.
// Schedules with risky windows (find_risky_windows) are not checked at all.
// Returns, per stage, whether it may recompute. Stages come consumers last, so each stage's
// answer can use its consumers', found first; the window dependencies are found once.
std::vector<bool> may_recompute(const graph_spec& g, const schedule_spec& s, const placement& p);

// The copies the builder makes views of their sources in the unscheduled pipeline (docs/copies.md,
// "From the source"), among those the generator draws with view_copies: a plain copy of one
// intermediate into another, neither with a fold factor, that broadcasts (a variable of the
// output no access reads) or is a stencil (in(x * S + dx * D)), every access linear (no
// division, modulus or flip), and the destination read by no copy (which could make it a view of
// its own destination first, or read it through an input_crop).
// Returns their destinations (buffer indices): the unscheduled pipeline allocates none of them
// and calls no copy for them.
std::vector<int> predicted_view_copies(const graph_spec& g);

// True if buffer b (an intermediate) is stored outside every loop: one allocation per evaluation.
bool stored_at_root(const graph_spec& g, const schedule_spec& s, const placement& p, int b);

// True if intermediate b may hold more than the memory bound of parallel loops (docs/threads.md)
// says, because its producer recomputes (per stage: `predicted` by may_recompute, or `observed`:
// it computed more points with the parallel loops than unscheduled, or a point twice (the monitor's
// repeated_points), so its windows overlap across
// the iterations of a loop and it does not slide along it) and a parallel loop is in its compute
// chain: stored outside that loop by the user, it is not folded along it when windows overlap
// (docs/threads.md, Limits); stored inside (by the user, or by default where its producer cannot
// slide), each worker's block holds the whole window of an iteration, where a serial loop may
// slide it down to the new part. Such buffers are bounded by the unscheduled size only.
//
// The prediction does not exempt a buffer the user stores at a loop at or inside every parallel
// loop of its producer's compute chain (client_storage_within_parallel_loops; may_recompute
// predicts recomputing for every buffer the user stores in a loop): each iteration of its storage
// loop allocates it whatever the parallel loops around do, so its size is that of the same
// schedule run serially, or of stages_at_parallel_loops when the builder moves its producer (or
// a consumer of it) to a parallel loop, unless its producer is observed to recompute, or
// recomputes along an outer parallel loop (kept_inside_an_inner_parallel_loop).
//
// Also such a buffer: one read by a func observed to recompute with a parallel loop in its compute
// chain: that func's block per worker holds an iteration's whole window where the serial loop
// slides it, and it reads b over that whole window, which b then holds.
bool unbounded_by_parallel_fold(const graph_spec& g, const schedule_spec& s, const placement& p,
                                const std::vector<bool>& predicted, const std::vector<bool>& observed, int b);

// True if the user stores intermediate b at a loop (not the root) and its producer's compute
// chain has a parallel loop, none of them inside that loop.
bool client_storage_within_parallel_loops(const graph_spec& g, const schedule_spec& s, const placement& p, int b);

// True if b's producer recomputes along a parallel loop of its compute chain because the builder
// keeps a buffer stored by default inside an inner parallel loop: an intermediate b2 without
// store_at, produced by b's producer or by a func reading one of its outputs (directly or not), whose windows may
// overlap across a parallel loop outside the innermost one of its producer's chain, also in the
// chain of b's producer. Where they do not overlap across the innermost one, the builder stores
// b2 inside it (its iterations write disjoint parts of it) and moves it out only along a loop
// across which its windows overlap, that one or a serial one outside (docs/threads.md, "Default
// storage in parallel loops"); where they do, b2 would have to slide along both loops, which it
// cannot (a window moving in two dimensions), and goes back inside. Either way b2's producer does
// not slide along the outer parallel loop, so each of its iterations computes its whole window of
// b2, and of b where the serial loop slides them down to the new part.
bool kept_inside_an_inner_parallel_loop(const graph_spec& g, const schedule_spec& s, const placement& p, int b);

// The third bounding schedule of the memory bound of parallel loops (docs/random_testing.md,
// oracle item 8): `s` (legal, placed as `p`) with its loops serial and every func placed by
// default (no compute_at) inside a loop nested in a parallel loop, or at a parallel loop nested
// directly in another one, computed at the outermost of the parallel loops directly around each
// other that end at the innermost parallel loop of its compute chain instead (the builder moves
// a buffer out of each of them in turn while its windows overlap), or at the outermost of them
// at which no compute_at or store_at of the user names a loop inside it along its chain. It is
// what the builder does to a func that becomes a stage of its own of a pipelined loop, and to the
// funcs it reads, which follow it (docs/threads.md, "Default storage in parallel loops"): each
// then computes its region over one iteration of the parallel loop, which a buffer stored by the
// user at that loop holds whole.
schedule_spec stages_at_parallel_loops(const graph_spec& g, const schedule_spec& s, const placement& p);

// ---------------------------------------------------------------------------------------------
// Shapes: what the unscheduled pipeline computes, by plain interpretation of the graph.

// The values a stage's callback needs: its index (which salts its values), the accesses of its
// inputs with `whole` dims resolved to the bounds of the pipeline input, and the buffers it
// writes (to look up what they may cover).
struct kernel_spec {
  int stage = 0;
  std::vector<std::vector<access>> inputs;
  std::vector<int> outputs;
  // Fail on this call (counted by the monitor; 0: never).
  int fail_on_call = 0;
};

struct plan {
  // Per stage, per variable: the region the unscheduled pipeline computes.
  std::vector<box> regions;
  // Per buffer: the bounds of inputs and outputs as passed to the pipeline; for intermediates,
  // the region their producer computes (what the unscheduled pipeline allocates).
  std::vector<box> bounds;
  std::vector<kernel_spec> kernels;
  // The elements of all buffers, and the elements read by all stages: a measure of the cost.
  index_t elements = 0;
  index_t work = 0;
};

plan make_plan(const graph_spec& g);

// True if every copy with several inputs writes all of what the unscheduled pipeline computes
// of its output (the output crops of its inputs cover its region along its dim), every input of
// a copy is read (its output_crop and input_crop meet what is computed), and every
// user fold factor is at least the extent of its buffer's region (so no schedule needs a
// larger one).
bool well_formed(const graph_spec& g, const plan& p);

}  // namespace random_test
}  // namespace slinky

#endif  // SLINKY_TOOLS_RANDOM_PIPELINE_SPEC_H
