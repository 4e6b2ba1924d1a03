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
// in_buffer->dim(d).bounds.
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

  bool is_point() const { return !whole && lo == hi; }
};

// The first coordinate an access reads at the output point p (the last is that + hi - lo).
inline index_t access_at(const access& a, const index_t* p) {
  if (a.var < 0) return a.lo;
  index_t t = a.mod > 0 ? euclidean_mod(p[a.var], a.mod) : floor_div(a.mul * p[a.var], a.div);
  if (a.var2 >= 0) t += a.mul2 * p[a.var2];
  return t + a.lo;
}

// The interval an access reads when the output variables range over `vars`. Unless `exact`,
// x % W is [0, W - 1], as the builder's bounds inference takes it.
inline ival map_access(const access& a, const box& vars, bool exact = false) {
  if (a.var < 0) return {a.lo, a.hi};
  const ival& x = vars[a.var];
  if (x.empty()) return {};
  ival t;
  if (a.mod > 0) {
    if (exact && floor_div(x.min, a.mod) == floor_div(x.max, a.mod)) {
      t = {euclidean_mod(x.min, a.mod), euclidean_mod(x.max, a.mod)};
    } else {
      t = {0, a.mod - 1};
    }
  } else {
    const index_t u = floor_div(a.mul * x.min, a.div), v = floor_div(a.mul * x.max, a.div);
    t = {std::min(u, v), std::max(u, v)};
  }
  if (a.var2 >= 0) {
    const ival& y = vars[a.var2];
    if (y.empty()) return {};
    const index_t u = a.mul2 * y.min, v = a.mul2 * y.max;
    t.min += std::min(u, v);
    t.max += std::max(u, v);
  }
  return {t.min + a.lo, t.max + a.hi};
}

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
  // padded: the pad, a constant buffer of rank 0.
  int pad = -1;
  // multi, concat, stack: the dimension of the output the inputs are laid along.
  int dim = 0;
  // concat: input i covers [cat_bounds[i], cat_bounds[i + 1]) of the output along dim.
  std::vector<index_t> cat_bounds;
};

// Makes the accesses and crops of a concat or stack what make_concat and make_stack make of
// their inputs (after inputs are added or removed).
inline void normalize_copy(stage_spec& st) {
  if (!st.copy || (st.op != copy_kind::concat && st.op != copy_kind::stack)) return;
  if (st.op == copy_kind::concat) st.cat_bounds.resize(st.inputs.size() + 1, st.cat_bounds.back());
  for (std::size_t i = 0; i < st.inputs.size(); ++i) {
    stage_input& in = st.inputs[i];
    in.input_crop.clear();
    in.output_crop.assign(st.rank, ival{-unbounded, unbounded});
    in.dims.clear();
    for (int v = 0; v < st.rank; ++v) {
      if (st.op == copy_kind::stack && v == st.dim) continue;
      access a;
      a.var = v;
      if (st.op == copy_kind::concat && v == st.dim) a.lo = a.hi = -st.cat_bounds[i];
      in.dims.push_back(a);
    }
    if (st.op == copy_kind::concat) {
      in.output_crop[st.dim] = {st.cat_bounds[i], st.cat_bounds[i + 1] - 1};
    } else {
      in.output_crop[st.dim] = {static_cast<index_t>(i), static_cast<index_t>(i)};
    }
  }
}

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

inline std::string buffer_name(const graph_spec& g, int b) {
  const buffer_spec& s = g.buffers[b];
  return (s.constant ? "c" : s.input ? "in" : s.output ? "out" : "t") + std::to_string(b);
}
// The name of variable v of a stage's output.
inline std::string var_name(const graph_spec& g, int stage, int v) {
  static const char* names[] = {"x", "y", "z", "w"};
  return names[v] + (g.shared_vars ? std::string() : std::to_string(stage));
}

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
};

// The stages that read an output of stage s, without duplicates.
inline std::vector<int> consumers_of(const graph_spec& g, int s) {
  std::vector<int> result;
  for (int c = s + 1; c < static_cast<int>(g.stages.size()); ++c) {
    for (const stage_input& i : g.stages[c].inputs) {
      if (g.buffers[i.buffer].producer == s && std::find(result.begin(), result.end(), c) == result.end()) {
        result.push_back(c);
      }
    }
  }
  return result;
}

inline bool produces_output(const graph_spec& g, int s) {
  for (int o : g.stages[s].outputs) {
    if (g.buffers[o].output) return true;
  }
  return false;
}

inline int loop_index(const stage_schedule& s, int var) {
  for (std::size_t k = 0; k < s.loops.size(); ++k) {
    if (s.loops[k].var == var) return static_cast<int>(k);
  }
  return -1;
}

// Where each stage runs, as the builder resolves it (docs/builder.md, schedule_graph): the
// loops around it (outermost first), and the loops around its call (those and its own loops).
struct placement {
  std::vector<level> compute;
  std::vector<std::vector<level>> compute_chain;
  std::vector<std::vector<level>> call_chain;
};

inline bool is_parallel(const schedule_spec& s, const level& l) {
  const stage_schedule& owner = s.stages[l.stage];
  return owner.loops[loop_index(owner, l.var)].parallel;
}

// Makes a schedule legal for the builder, and resolves where everything runs: loops over
// variables the func does not have (or twice) are dropped, and a compute_at or store_at the
// builder would reject is reset to the default. With `choose`, compute_at and store_at are
// instead chosen at random among the legal places (choose(n) returns a number in [0, n), or -1
// for the default). No buffer is stored outside a parallel loop around its producer unless
// s.parallel_shared_storage.
inline placement place(const graph_spec& g, schedule_spec& s, const std::function<int(int)>& choose) {
  const int n = static_cast<int>(g.stages.size());
  s.stages.resize(n);
  s.buffers.resize(g.buffers.size());
  placement p;
  p.compute.resize(n);
  p.compute_chain.resize(n);
  p.call_chain.resize(n);
  for (int i = 0; i < n; ++i) {
    std::vector<loop_spec> loops;
    for (const loop_spec& l : s.stages[i].loops) {
      bool dup = false;
      for (const loop_spec& k : loops) dup = dup || k.var == l.var;
      if (l.var >= 0 && l.var < g.stages[i].rank && !dup)
        loops.push_back({l.var, std::max<index_t>(1, l.step), l.parallel});
    }
    s.stages[i].loops = loops;
  }
  // Consumers first: a stage's legal places depend on where its consumers run.
  for (int i = n - 1; i >= 0; --i) {
    stage_schedule& ss = s.stages[i];
    std::vector<level> common;
    const std::vector<int> consumers = consumers_of(g, i);
    const bool at_root_only = produces_output(g, i) || consumers.empty();
    if (!at_root_only) {
      common = p.call_chain[consumers[0]];
      for (int c : consumers) {
        const std::vector<level>& other = p.call_chain[c];
        std::size_t k = 0;
        while (k < common.size() && k < other.size() && common[k] == other[k]) ++k;
        common.resize(k);
      }
    }
    if (choose) {
      // Half the time the default, then the root, then each legal loop.
      const int pick = choose(static_cast<int>(common.size()) + 1);
      if (pick < 0) {
        ss.compute_at.reset();
      } else if (pick == 0) {
        ss.compute_at = level();
      } else {
        ss.compute_at = common[pick - 1];
      }
    } else if (ss.compute_at && !ss.compute_at->root()) {
      if (std::find(common.begin(), common.end(), *ss.compute_at) == common.end()) ss.compute_at.reset();
    }
    level at = ss.compute_at ? *ss.compute_at : common.empty() ? level() : common.back();
    if (s.outer_storage_only) {
      // The deepest legal level whose loops have no parallel loop inside a serial one.
      std::size_t ok = 0;
      bool serial = false;
      for (; ok < common.size(); ++ok) {
        if (serial && is_parallel(s, common[ok])) break;
        serial = serial || !is_parallel(s, common[ok]);
      }
      const auto depth = std::find(common.begin(), common.end(), at) - common.begin();
      if (!at.root() && depth >= static_cast<std::ptrdiff_t>(ok)) {
        ss.compute_at = ok == 0 ? level() : common[ok - 1];
        at = *ss.compute_at;
      }
    }
    p.compute[i] = at;
    if (!at.root()) {
      p.compute_chain[i] = p.compute_chain[at.stage];
      const stage_schedule& owner = s.stages[at.stage];
      for (int k = static_cast<int>(owner.loops.size()) - 1; k >= loop_index(owner, at.var); --k) {
        p.compute_chain[i].push_back({at.stage, owner.loops[k].var});
      }
    }
    p.call_chain[i] = p.compute_chain[i];
    for (int k = static_cast<int>(ss.loops.size()) - 1; k >= 0; --k) p.call_chain[i].push_back({i, ss.loops[k].var});
  }
  for (std::size_t b = 0; b < g.buffers.size(); ++b) {
    const buffer_spec& bs = g.buffers[b];
    buffer_schedule& sched = s.buffers[b];
    if (bs.input || bs.output) {
      sched = buffer_schedule();
      continue;
    }
    const std::vector<level>& chain = p.compute_chain[bs.producer];
    std::vector<level> legal = {level()};
    legal.insert(legal.end(), chain.begin(), chain.end());
    if (s.outer_storage_only) {
      const int first = g.stages[bs.producer].outputs[0];
      if (first != static_cast<int>(b)) {
        sched.store_at = s.buffers[first].store_at;
        continue;
      }
      for (std::size_t k = 0; k < chain.size(); ++k) {
        if (is_parallel(s, chain[k])) continue;
        legal.resize(k + 1);
        break;
      }
    }
    if (!s.parallel_shared_storage) {
      for (std::size_t k = chain.size(); k-- > 0;) {
        if (is_parallel(s, chain[k])) {
          legal.erase(legal.begin(), std::min(legal.end(), legal.begin() + k + 1));
          break;
        }
      }
    }
    if (legal.empty()) {
      sched.store_at.reset();
    } else if (choose) {
      const int pick = choose(static_cast<int>(legal.size()));
      if (pick < 0) {
        sched.store_at.reset();
      } else {
        sched.store_at = legal[pick];
      }
    } else if (sched.store_at && std::find(legal.begin(), legal.end(), *sched.store_at) == legal.end()) {
      sched.store_at.reset();
    }
  }
  return p;
}

inline placement legalize(const graph_spec& g, schedule_spec& s) { return place(g, s, std::function<int(int)>()); }

// Windows of intermediates that sliding and folding get wrong (see random_regressions_test.cc),
// over a loop (serial or pipelined) inside the intermediate's storage: a window moving in two dimensions with
// the loop (a diagonal, or the bounding box of consumers reading it in different orders), and a
// window that is the hull of a part moving with the loop and a part fixed in it.
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
inline levels all_levels(const std::vector<levels>& contributions) {
  levels result;
  for (const levels& c : contributions) {
    for (const level& l : c) {
      if (std::find(result.begin(), result.end(), l) == result.end()) result.push_back(l);
    }
  }
  return result;
}

// The loops each dimension of a stage's region depends on, found consumers first, through the
// accesses; each consumer's access contributes a set.
inline window_dependencies window_deps(const graph_spec& g, const schedule_spec& s, const placement& p) {
  const int n = static_cast<int>(g.stages.size());
  window_dependencies deps(n);
  auto all = all_levels;
  for (int st = n - 1; st >= 0; --st) {
    deps[st].resize(g.stages[st].rank);
    const levels& chain = p.compute_chain[st];
    for (int c = st + 1; c < n; ++c) {
      for (const stage_input& in : g.stages[c].inputs) {
        if (g.buffers[in.buffer].producer != st) continue;
        for (std::size_t d = 0; d < in.dims.size(); ++d) {
          const access& a = in.dims[d];
          levels contribution;
          // x % W is read over [0, W - 1] wherever x is: it does not move.
          if (a.var >= 0 && a.mod == 0) {
            levels from = all(deps[c][a.var]);
            if (loop_index(s.stages[c], a.var) >= 0) from.push_back({c, a.var});
            if (a.var2 >= 0) {
              for (const level& l : all(deps[c][a.var2])) from.push_back(l);
              if (loop_index(s.stages[c], a.var2) >= 0) from.push_back({c, a.var2});
            }
            for (const level& l : from) {
              if (std::find(chain.begin(), chain.end(), l) != chain.end()) contribution.push_back(l);
            }
          }
          deps[st][d].push_back(contribution);
        }
      }
    }
  }
  return deps;
}

// Finds the risky windows of a schedule.
inline risky_windows find_risky_windows(const graph_spec& g, const schedule_spec& s, const placement& p) {
  const int n = static_cast<int>(g.stages.size());
  const window_dependencies deps = window_deps(g, s, p);
  risky_windows result;
  for (int st = 0; g.shared_vars && st < n; ++st) {
    for (const level& l : p.compute_chain[st]) {
      if (l.stage == st || l.var >= g.stages[st].rank) continue;
      for (const levels& c : deps[st][l.var]) {
        if (std::find(c.begin(), c.end(), l) == c.end()) result.shadowed = true;
      }
    }
  }
  // constant[stage][var]: the region of the variable is a constant interval.
  std::vector<std::vector<bool>> constant(n);
  for (int st = n - 1; st >= 0; --st) {
    constant[st].assign(g.stages[st].rank, true);
    for (int o : g.stages[st].outputs) {
      if (g.buffers[o].output) constant[st].assign(g.stages[st].rank, false);
    }
    for (int c = st + 1; c < n; ++c) {
      for (const stage_input& in : g.stages[c].inputs) {
        if (g.buffers[in.buffer].producer != st) continue;
        for (std::size_t d = 0; d < in.dims.size(); ++d) {
          const access& a = in.dims[d];
          // A copy's crop bounded on both sides bounds the region by constants too.
          auto bounded = [](const box& crop, int i) {
            return i >= 0 && i < static_cast<int>(crop.size()) && crop[i].min > -unbounded && crop[i].max < unbounded;
          };
          const bool cropped = g.stages[c].copy && (bounded(in.output_crop, a.var) || bounded(in.input_crop, d));
          if (a.var >= 0 && a.mod == 0 && !constant[c][a.var] && !cropped) constant[st][d] = false;
          if (a.var2 >= 0 && !constant[c][a.var2] && !cropped) constant[st][d] = false;
        }
      }
    }
  }
  for (int st = 0; st < n; ++st) {
    for (const level& l : p.compute_chain[st]) {
      if (constant[l.stage][l.var]) result.constant_loop = true;
    }
  }
  for (std::size_t b = 0; b < g.buffers.size(); ++b) {
    const buffer_spec& bs = g.buffers[b];
    if (bs.input || bs.output) continue;
    const levels& chain = p.compute_chain[bs.producer];
    // Where it is stored: the loops of the chain from `inside` on are inside the storage.
    std::size_t inside = 0;
    if (s.buffers[b].store_at) {
      if (!s.buffers[b].store_at->root()) {
        inside = std::find(chain.begin(), chain.end(), *s.buffers[b].store_at) - chain.begin() + 1;
      }
    } else {
      for (std::size_t k = 0; k < chain.size(); ++k) {
        if (is_parallel(s, chain[k])) inside = k + 1;
      }
    }
    // Parallel loops inside the storage slide too (they are pipelined).
    for (std::size_t k = inside; k < chain.size(); ++k) {
      int moving = 0;
      for (const std::vector<levels>& dim : deps[bs.producer]) {
        int with = 0, without = 0;
        for (const levels& c : dim) {
          (std::find(c.begin(), c.end(), chain[k]) != c.end() ? with : without)++;
        }
        moving += with > 0 ? 1 : 0;
        if (with > 0 && without > 0) result.fixed_and_moving = true;
      }
      if (moving > 1) result.two_dims = true;
    }
  }
  return result;
}

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
inline std::vector<bool> may_recompute(const graph_spec& g, const schedule_spec& s, const placement& p) {
  const int n = static_cast<int>(g.stages.size());
  const window_dependencies deps = window_deps(g, s, p);
  std::vector<bool> result(n, false);
  auto decide = [&](int st) {
    const levels& chain = p.compute_chain[st];
    // (The points a func with several outputs computes are not comparable between schedules:
    // each call computes each output over its own buffer's crop, which aliasing changes.)
    if (g.stages[st].outputs.size() > 1) return true;
    if (chain.empty()) return false;
    levels moving;
    for (const std::vector<levels>& dim : deps[st]) {
      for (const level& l : all_levels(dim)) {
        if (std::find(moving.begin(), moving.end(), l) == moving.end()) moving.push_back(l);
      }
    }
    if (moving.size() > 1) return true;
    if (moving.size() < chain.size()) {
      auto in_chain = [&](const std::optional<level>& at) {
        return at && std::find(chain.begin(), chain.end(), *at) != chain.end();
      };
      bool pinned = false;
      for (const stage_schedule& ss : s.stages) pinned = pinned || in_chain(ss.compute_at);
      for (const buffer_schedule& bs : s.buffers) pinned = pinned || in_chain(bs.store_at);
      if (pinned) return true;
    }
    for (int o : g.stages[st].outputs) {
      const std::optional<level>& at = s.buffers[o].store_at;
      if (at && !at->root()) return true;
    }
    // Through any chain of consumers: a func's window is made of its consumers' windows.
    for (int c = st + 1; c < n; ++c) {
      for (const stage_input& in : g.stages[c].inputs) {
        if (g.buffers[in.buffer].producer != st) continue;
        for (const access& a : in.dims) {
          if (a.mod > 0 || a.mul < 0 || a.var2 >= 0) return true;
        }
        // A copy of several inputs, each over a crop of its output (make_copy of several
        // inputs, make_concat, make_stack): the builder's region of an input is the hull of what
        // each input reads, where an input whose crop is empty in an iteration still contributes
        // the bounds of its (empty) window, so the region spans more than is read.
        if (g.stages[c].copy && g.stages[c].inputs.size() > 1) return true;
        if (!p.compute_chain[c].empty() && result[c]) return true;
      }
    }
    return false;
  };
  for (int st = n - 1; st >= 0; --st) result[st] = decide(st);
  return result;
}

// True if buffer b (an intermediate) is stored outside every loop: one allocation per evaluation.
inline bool stored_at_root(const graph_spec& g, const schedule_spec& s, const placement& p, int b) {
  const std::optional<level>& at = s.buffers[b].store_at;
  if (at) return at->root();
  // Default storage is inside the innermost parallel loop its producer is computed in, if any
  // (or outside it, when consumers' windows overlap between its iterations).
  for (const level& l : p.compute_chain[g.buffers[b].producer]) {
    if (is_parallel(s, l)) return false;
  }
  return true;
}

// True if intermediate b may hold more than the memory bound of parallel loops (docs/threads.md)
// says, because its producer may recompute (may_recompute: its window cannot slide along some
// loop of its compute chain) and a parallel loop is inside its storage: stored outside that loop
// by the user, it is not folded along it when windows overlap (docs/threads.md, Limits); stored
// inside (by the user, or by default where its producer cannot slide), each worker's block holds
// the whole window of an iteration, where a serial loop may slide it down to the new part. Such
// buffers are bounded by the unscheduled size only, as the computed-once oracle does not hold
// for their producers either.
inline bool unbounded_by_parallel_fold(const graph_spec& g, const schedule_spec& s, const placement& p,
                                       const std::vector<bool>& recompute, int b) {
  const int producer = g.buffers[b].producer;
  if (producer < 0 || !recompute[producer]) return false;
  for (const level& l : p.compute_chain[producer]) {
    if (is_parallel(s, l)) return true;
  }
  return false;
}

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

inline plan make_plan(const graph_spec& g) {
  const int n = static_cast<int>(g.stages.size());
  plan p;
  p.regions.resize(n);
  p.bounds.resize(g.buffers.size());
  auto need_of = [&](int b) {
    box need(g.buffers[b].rank);
    for (int c = 0; c < n; ++c) {
      const stage_spec& st = g.stages[c];
      for (const stage_input& i : st.inputs) {
        if (i.buffer != b) continue;
        box vars = p.regions[c];
        if (st.copy) {
          for (std::size_t d = 0; d < i.output_crop.size(); ++d) vars[d] = intersect(vars[d], i.output_crop[d]);
        }
        for (int d = 0; d < g.buffers[b].rank; ++d) {
          if (i.dims[d].whole) continue;
          ival m = map_access(i.dims[d], vars);
          if (st.copy && !i.input_crop.empty()) m = intersect(m, i.input_crop[d]);
          need[d] |= m;
        }
      }
    }
    return need;
  };
  for (int s = n - 1; s >= 0; --s) {
    box& region = p.regions[s];
    region.assign(g.stages[s].rank, ival());
    for (int o : g.stages[s].outputs) {
      box need = need_of(o);
      if (g.buffers[o].output) {
        for (int d = 0; d < g.buffers[o].rank; ++d) need[d] |= g.buffers[o].base[d];
        p.bounds[o] = need;
      }
      for (int d = 0; d < g.stages[s].rank; ++d) region[d] |= need[d];
    }
    for (int o : g.stages[s].outputs) {
      if (!g.buffers[o].output) p.bounds[o] = region;
    }
  }
  for (std::size_t b = 0; b < g.buffers.size(); ++b) {
    const buffer_spec& bs = g.buffers[b];
    if (!bs.input) continue;
    box need = need_of(static_cast<int>(b));
    for (int d = 0; d < bs.rank; ++d) {
      need[d] |= bs.base[d];
      need[d].min -= bs.margin_lo[d];
      need[d].max += bs.margin_hi[d];
    }
    p.bounds[b] = need;
  }
  for (int s = 0; s < n; ++s) {
    kernel_spec k;
    k.stage = s;
    k.outputs = g.stages[s].outputs;
    if (g.fail_stage == s) k.fail_on_call = g.fail_call;
    index_t reads = 1;
    for (const stage_input& i : g.stages[s].inputs) {
      std::vector<access> dims = i.dims;
      index_t box_size = 1;
      for (std::size_t d = 0; d < dims.size(); ++d) {
        if (dims[d].whole) dims[d] = {-1, 1, 1, p.bounds[i.buffer][d].min, p.bounds[i.buffer][d].max};
        box_size *= dims[d].hi - dims[d].lo + 1;
      }
      reads += box_size;
      k.inputs.push_back(std::move(dims));
    }
    p.kernels.push_back(std::move(k));
    for (int o : g.stages[s].outputs) p.work += elem_count(p.bounds[o]) * reads;
  }
  for (const box& b : p.bounds) p.elements += elem_count(b);
  return p;
}

// True if every copy with several inputs writes all of what the unscheduled pipeline computes
// of its output (the output crops of its inputs cover its region along its dim), every input of
// a copy is read (its output_crop and input_crop meet what is computed), and every
// user fold factor is at least the extent of its buffer's region (so no schedule needs a
// larger one).
inline bool well_formed(const graph_spec& g, const plan& p) {
  for (std::size_t s = 0; s < g.stages.size(); ++s) {
    const stage_spec& st = g.stages[s];
    if (!st.copy) continue;
    // Each input of a copy is needed somewhere: an empty region of a producer through a stencil
    // still needs its input (bug 14 of random_regressions_test.cc).
    for (const stage_input& i : st.inputs) {
      box vars = p.regions[s];
      for (std::size_t d = 0; d < i.output_crop.size(); ++d) vars[d] = intersect(vars[d], i.output_crop[d]);
      if (elem_count(vars) == 0 && elem_count(p.regions[s]) > 0) return false;
      for (std::size_t d = 0; d < i.input_crop.size(); ++d) {
        if (intersect(map_access(i.dims[d], vars), i.input_crop[d]).empty()) return false;
      }
    }
    if (st.inputs.empty() || st.inputs[0].output_crop.empty()) continue;
    const ival region = p.regions[s][st.dim];
    if (region.empty()) continue;
    std::vector<ival> crops;
    for (const stage_input& i : st.inputs) crops.push_back(i.output_crop[st.dim]);
    std::sort(crops.begin(), crops.end(), [](const ival& a, const ival& b) { return a.min < b.min; });
    index_t next = region.min;
    for (const ival& c : crops) {
      if (c.empty()) continue;
      if (c.min > next) break;
      next = std::max(next, c.max + 1);
    }
    if (next <= region.max) return false;
  }
  for (std::size_t b = 0; b < g.buffers.size(); ++b) {
    for (std::size_t d = 0; d < g.buffers[b].fold.size(); ++d) {
      if (g.buffers[b].fold[d] > 0 && g.buffers[b].fold[d] < p.bounds[b][d].extent()) return false;
    }
  }
  return true;
}

}  // namespace random_test
}  // namespace slinky

#endif  // SLINKY_TOOLS_RANDOM_PIPELINE_SPEC_H
