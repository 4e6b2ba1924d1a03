// Random pipeline testing, part 1: see spec.h.
#include "random_pipeline/spec.h"

#include <algorithm>
#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace slinky {
namespace random_test {

ival map_access(const access& a, const box& vars, bool exact) {
  if (a.var < 0) return {a.lo, a.hi};
  const ival& x = vars[a.var];
  if (x.empty()) return {};
  if (a.flat) {
    // mul and mul2 are not negative: the flat index is monotonic in both variables.
    index_t u = a.mul * x.min, v = a.mul * x.max;
    if (a.var2 >= 0) {
      const ival& y = vars[a.var2];
      if (y.empty()) return {};
      u += a.mul2 * y.min;
      v += a.mul2 * y.max;
    }
    if (a.var3 >= 0) {
      const ival& z = vars[a.var3];
      if (z.empty()) return {};
      u += a.mul3 * z.min;
      v += a.mul3 * z.max;
    }
    if (a.symbolic && a.div != 1 && a.mod == 0 && !exact) {
      // Divided by a symbol, with no % after: the builder may bound flat / Q by |flat| (it
      // does where the flat index's bounds are sums of selects with infinite parts, as with
      // several variables of an output that may be empty; see docs/copies.md, the bounds of a
      // reshape by a run-time radix), which holds the exact range.
      const index_t m = std::max(v, -u);
      return {std::min(-m, floor_div(u, a.div)) + a.lo, std::max(m, floor_div(v, a.div)) + a.hi};
    }
    u = floor_div(u, a.div);
    v = floor_div(v, a.div);
    if (a.mod > 0) {
      if (exact && floor_div(u, a.mod) == floor_div(v, a.mod)) {
        u = euclidean_mod(u, a.mod);
        v = euclidean_mod(v, a.mod);
      } else {
        u = 0;
        v = a.mod - 1;
      }
    }
    return {u + a.lo, v + a.hi};
  }
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

void normalize_copy(stage_spec& st) {
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

std::string buffer_name(const graph_spec& g, int b) {
  const buffer_spec& s = g.buffers[b];
  return (s.constant ? "c" : s.input ? "in" : s.output ? "out" : "t") + std::to_string(b);
}

std::string var_name(const graph_spec& g, int stage, int v) {
  static const char* names[] = {"x", "y", "z", "w"};
  return names[v] + (g.shared_vars ? std::string() : std::to_string(stage));
}

std::vector<int> consumers_of(const graph_spec& g, int s) {
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

bool produces_output(const graph_spec& g, int s) {
  for (int o : g.stages[s].outputs) {
    if (g.buffers[o].output) return true;
  }
  return false;
}

int loop_index(const stage_schedule& s, int var) {
  for (std::size_t k = 0; k < s.loops.size(); ++k) {
    if (s.loops[k].var == var) return static_cast<int>(k);
  }
  return -1;
}

bool is_parallel(const schedule_spec& s, const level& l) {
  const stage_schedule& owner = s.stages[l.stage];
  return owner.loops[loop_index(owner, l.var)].parallel;
}

placement place(const graph_spec& g, schedule_spec& s, const std::function<int(int)>& choose) {
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
      if (loopable(g.stages[i], l.var) && !dup) loops.push_back({l.var, std::max<index_t>(1, l.step), l.parallel});
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

placement legalize(const graph_spec& g, schedule_spec& s) { return place(g, s, std::function<int(int)>()); }

levels all_levels(const std::vector<levels>& contributions) {
  levels result;
  for (const levels& c : contributions) {
    for (const level& l : c) {
      if (std::find(result.begin(), result.end(), l) == result.end()) result.push_back(l);
    }
  }
  return result;
}

window_dependencies window_deps(const graph_spec& g, const schedule_spec& s, const placement& p) {
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
            for (int v : {a.var2, a.var3}) {
              if (v < 0) continue;
              for (const level& l : all(deps[c][v])) from.push_back(l);
              if (loop_index(s.stages[c], v) >= 0) from.push_back({c, v});
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

namespace {

// wide[stage][var]: the loops of the stage's compute chain along which its region along the
// variable may overlap the previous iteration's, as far as the accesses show: some access on the
// way from the loop to the stage reads more than a point per point (a window, a division, a hull
// of two variables, a flat or whole read), or the stage's consumers read it at several places
// moving with the loop (the hull of the two). A conservative guess: a window of points moving by
// one step per iteration is disjoint from the previous one, anything wider may not be.
window_dependencies wide_windows(const graph_spec& g, const schedule_spec& s, const placement& p,
                                 const window_dependencies& deps) {
  const int n = static_cast<int>(g.stages.size());
  window_dependencies wide(n);
  for (int st = n - 1; st >= 0; --st) {
    wide[st].resize(g.stages[st].rank);
    const levels& chain = p.compute_chain[st];
    for (int c = st + 1; c < n; ++c) {
      for (const stage_input& in : g.stages[c].inputs) {
        if (g.buffers[in.buffer].producer != st) continue;
        for (std::size_t d = 0; d < in.dims.size() && d < wide[st].size(); ++d) {
          const access& a = in.dims[d];
          if (a.var < 0 || a.mod != 0) continue;
          const bool widens = !a.is_point() || a.whole || a.flat || a.div != 1 || a.var2 >= 0;
          levels from = all_levels(widens ? deps[c][a.var] : wide[c][a.var]);
          if (widens && loop_index(s.stages[c], a.var) >= 0) from.push_back({c, a.var});
          // The hull of two or three variables moves with the loops of each (as window_deps):
          // x + 3 z over z in steps of 6 and x in [0, 3] reads [3 z, 3 z + 18] in each
          // iteration, one element of it the next one's.
          for (int v : {a.var2, a.var3}) {
            if (!widens || v < 0) continue;
            for (const level& l : all_levels(deps[c][v])) from.push_back(l);
            if (loop_index(s.stages[c], v) >= 0) from.push_back({c, v});
          }
          levels contribution;
          for (const level& l : from) {
            if (std::find(chain.begin(), chain.end(), l) != chain.end()) contribution.push_back(l);
          }
          wide[st][d].push_back(contribution);
        }
      }
    }
    // Several reads moving with the same loop: their hull may overlap the previous iteration's.
    for (std::size_t d = 0; d < wide[st].size() && d < deps[st].size(); ++d) {
      for (const level& l : chain) {
        int reads = 0;
        for (const levels& c : deps[st][d]) reads += std::find(c.begin(), c.end(), l) != c.end() ? 1 : 0;
        if (reads > 1) wide[st][d].push_back({l});
      }
    }
  }
  return wide;
}

}  // namespace

risky_windows find_risky_windows(const graph_spec& g, const schedule_spec& s, const placement& p) {
  const int n = static_cast<int>(g.stages.size());
  const window_dependencies deps = window_deps(g, s, p);
  const window_dependencies wide = wide_windows(g, s, p, deps);
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
          if (a.var3 >= 0 && !constant[c][a.var3] && !cropped) constant[st][d] = false;
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
    const bool default_storage = !s.buffers[b].store_at;
    if (!default_storage) {
      if (!s.buffers[b].store_at->root()) {
        inside = std::find(chain.begin(), chain.end(), *s.buffers[b].store_at) - chain.begin() + 1;
      }
    } else {
      for (std::size_t k = 0; k < chain.size(); ++k) {
        if (is_parallel(s, chain[k])) inside = k + 1;
      }
    }
    // Parallel loops inside the storage slide too (they are pipelined). A buffer stored by
    // default inside a parallel loop is moved outside the loops along which its windows overlap
    // (docs/threads.md), so its producer slides along them: a window that is the hull of a part
    // fixed in such a loop and a part moving with it (whose windows always overlap, in the fixed
    // part) is then as risky as over a serial loop outside the storage.
    //
    // A window moving in two dimensions with the loops inside its storage is risky too. The
    // outermost parallel loop around a buffer stored by default along which its windows may
    // overlap (every dimension moving with it is wide along it, or fixed in part) is where the
    // builder may move the buffer out to (docs/threads.md): the loops from it on are then inside
    // the storage, and a window moving in two dimensions with one of them is not slid exactly
    // (docs/builder.md: a dimension is trimmed only while the others do not move), so its
    // producer recomputes.
    std::size_t moved_out = inside;
    for (std::size_t k = default_storage ? 0 : inside; k < chain.size(); ++k) {
      int moving = 0;
      bool overlaps = true;
      const std::vector<std::vector<levels>>& wide_dims = wide[bs.producer];
      for (std::size_t d = 0; d < deps[bs.producer].size(); ++d) {
        const std::vector<levels>& dim = deps[bs.producer][d];
        int with = 0, without = 0;
        for (const levels& c : dim) {
          (std::find(c.begin(), c.end(), chain[k]) != c.end() ? with : without)++;
        }
        moving += with > 0 ? 1 : 0;
        if (with > 0 && without > 0) result.fixed_and_moving = true;
        const levels wide_along = d < wide_dims.size() ? all_levels(wide_dims[d]) : levels();
        const bool wide_dim = std::find(wide_along.begin(), wide_along.end(), chain[k]) != wide_along.end();
        if (with > 0 && without == 0 && !wide_dim) overlaps = false;
      }
      if (k < moved_out && is_parallel(s, chain[k]) && moving > 0 && overlaps) moved_out = k;
      if (moving > 1 && k >= std::min(inside, moved_out)) result.two_dims = true;
    }
  }
  return result;
}

std::vector<bool> may_recompute(const graph_spec& g, const schedule_spec& s, const placement& p) {
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

std::vector<int> predicted_view_copies(const graph_spec& g) {
  auto intermediate = [&](int b) {
    const buffer_spec& bs = g.buffers[b];
    if (bs.input || bs.output || bs.producer < 0) return false;
    return std::all_of(bs.fold.begin(), bs.fold.end(), [](index_t f) { return f <= 0; });
  };
  std::vector<int> result;
  for (const stage_spec& st : g.stages) {
    if (!st.copy || st.op != copy_kind::plain || st.inputs.size() != 1 || st.pad >= 0) continue;
    const stage_input& in = st.inputs[0];
    if (!in.input_crop.empty() || !in.output_crop.empty()) continue;
    const int dst = st.outputs[0];
    if (!intermediate(in.buffer) || !intermediate(dst)) continue;
    std::vector<bool> used(st.rank, false);
    bool linear = true, stencil = false;
    for (const access& a : in.dims) {
      if (a.whole || a.mod > 0 || a.div != 1 || a.mul < 0) linear = false;
      if (a.var >= 0) used[a.var] = true;
      if (a.var2 >= 0) used[a.var2] = true;
      if (a.var3 >= 0) used[a.var3] = true;
      if (a.var2 >= 0 && a.mul != 1) stencil = true;
    }
    const bool broadcast = std::find(used.begin(), used.end(), false) != used.end();
    if (!linear || (!broadcast && !stencil)) continue;
    // A destination copied again is not predicted: the builder may make it a view of that copy's
    // destination instead ("Into the destination", which it tries first), and the copy then runs
    // into that memory.
    bool copied_again = false;
    for (const stage_spec& c : g.stages) {
      for (const stage_input& i : c.inputs) copied_again = copied_again || (c.copy && i.buffer == dst);
    }
    if (!copied_again) result.push_back(dst);
  }
  return result;
}

bool stored_at_root(const graph_spec& g, const schedule_spec& s, const placement& p, int b) {
  const std::optional<level>& at = s.buffers[b].store_at;
  if (at) return at->root();
  // Default storage is inside the innermost parallel loop its producer is computed in, if any
  // (or outside it, when consumers' windows overlap between its iterations).
  for (const level& l : p.compute_chain[g.buffers[b].producer]) {
    if (is_parallel(s, l)) return false;
  }
  return true;
}

namespace {

// Whether stage `st` reads an output of stage `producer`, directly or through other stages.
bool reads_transitively(const graph_spec& g, int st, int producer) {
  for (const stage_input& in : g.stages[st].inputs) {
    const int pr = g.buffers[in.buffer].producer;
    if (pr == producer) return true;
    if (pr >= 0 && pr < st && reads_transitively(g, pr, producer)) return true;
  }
  return false;
}

}  // namespace

bool kept_inside_an_inner_parallel_loop(const graph_spec& g, const schedule_spec& s, const placement& p, int b) {
  const int producer = g.buffers[b].producer;
  if (producer < 0) return false;
  const window_dependencies deps = window_deps(g, s, p);
  const window_dependencies wide = wide_windows(g, s, p, deps);
  // Whether the windows of stage st's output may overlap along the loop at chain[k]: some dim
  // moves with it, and every dim moving with it is wide along it (as find_risky_windows).
  auto overlaps = [&](int st, const level& l) {
    int moving = 0;
    for (std::size_t d = 0; d < deps[st].size(); ++d) {
      int with = 0, without = 0;
      for (const levels& c : deps[st][d]) (std::find(c.begin(), c.end(), l) != c.end() ? with : without)++;
      moving += with > 0 ? 1 : 0;
      const levels wide_along = d < wide[st].size() ? all_levels(wide[st][d]) : levels();
      const bool wide_dim = std::find(wide_along.begin(), wide_along.end(), l) != wide_along.end();
      if (with > 0 && without == 0 && !wide_dim) return false;
    }
    return moving > 0;
  };
  for (std::size_t b2 = 0; b2 < g.buffers.size(); ++b2) {
    const buffer_spec& bs = g.buffers[b2];
    if (bs.input || bs.output || bs.producer < 0 || s.buffers[b2].store_at) continue;
    const int st = bs.producer;
    if (st != producer && !reads_transitively(g, st, producer)) continue;
    const levels& chain = p.compute_chain[st];
    std::size_t inner = chain.size();
    for (std::size_t k = chain.size(); k-- > 0;) {
      if (is_parallel(s, chain[k])) {
        inner = k;
        break;
      }
    }
    // (Overlapping along the innermost one too, b2 is moved out of it, then out of the outer one,
    // where its producer would slide along both loops: a window moving in two dimensions, which
    // is not slid exactly (docs/builder.md), so the builder puts it back inside
    // (share_overlapping_windows) and it recomputes along the outer loop all the same.)
    if (inner == chain.size()) continue;
    const levels& producer_chain = p.compute_chain[producer];
    for (std::size_t k = 0; k < inner; ++k) {
      if (!is_parallel(s, chain[k]) || !overlaps(st, chain[k])) continue;
      if (std::find(producer_chain.begin(), producer_chain.end(), chain[k]) != producer_chain.end()) return true;
    }
  }
  return false;
}

bool unbounded_by_parallel_fold(const graph_spec& g, const schedule_spec& s, const placement& p,
                                const std::vector<bool>& predicted, const std::vector<bool>& observed, int b) {
  const int producer = g.buffers[b].producer;
  if (producer < 0) return false;
  auto in_parallel_loop = [&](int stage) {
    for (const level& l : p.compute_chain[stage]) {
      if (is_parallel(s, l)) return true;
    }
    return false;
  };
  // Client storage within parallel loops is not exempt on the prediction (which predicts
  // recomputing for every buffer the client stores in a loop): each iteration of its storage
  // loop allocates it whatever the parallel loops around do, and the bounding schedules give its
  // size, unless its producer recomputes along a parallel loop outside the innermost one
  // (kept_inside_an_inner_parallel_loop).
  const bool recomputes =
      observed[producer] || (predicted[producer] && (!client_storage_within_parallel_loops(g, s, p, b) ||
                                                     kept_inside_an_inner_parallel_loop(g, s, p, b)));
  if (recomputes && in_parallel_loop(producer)) return true;
  // A consumer that recomputes in a parallel loop (its block per worker holds an iteration's
  // whole window, which a serial loop slides) reads its whole window of b in each iteration
  // where the serial run reads the new part: b holds that window.
  for (std::size_t c = 0; c < g.stages.size(); ++c) {
    if (!observed[c] || !in_parallel_loop(static_cast<int>(c))) continue;
    for (const stage_input& in : g.stages[c].inputs) {
      if (in.buffer == b) return true;
    }
  }
  return false;
}

bool client_storage_within_parallel_loops(const graph_spec& g, const schedule_spec& s, const placement& p, int b) {
  const int producer = g.buffers[b].producer;
  const std::optional<level>& at = s.buffers[b].store_at;
  if (producer < 0 || !at || at->root()) return false;
  const std::vector<level>& chain = p.compute_chain[producer];
  const auto store = std::find(chain.begin(), chain.end(), *at);
  if (store == chain.end()) return false;
  bool parallel = false;
  for (auto l = chain.begin(); l != chain.end(); ++l) {
    if (!is_parallel(s, *l)) continue;
    if (l > store) return false;
    parallel = true;
  }
  return parallel;
}

schedule_spec stages_at_parallel_loops(const graph_spec& g, const schedule_spec& s, const placement& p) {
  schedule_spec result = s;
  for (std::size_t st = 0; st < s.stages.size(); ++st) {
    if (s.stages[st].compute_at) continue;
    const std::vector<level>& chain = p.compute_chain[st];
    std::size_t k = chain.size();
    for (std::size_t i = chain.size(); i-- > 0;) {
      if (is_parallel(s, chain[i])) {
        k = i;
        break;
      }
    }
    if (k == chain.size()) continue;
    // A buffer moved out of a parallel loop is stored at the next loop out, and moved out of that
    // one too if it is parallel and the windows overlap there: the producer goes to the
    // outermost of the parallel loops directly around the innermost one (also from the
    // innermost one itself), or the outermost of them at which no compute_at or store_at of the
    // user names a loop inside it.
    std::size_t outer = k;
    while (outer > 0 && is_parallel(s, chain[outer - 1])) --outer;
    // Computed at the only parallel loop of the run already: not moved.
    if (outer == k && k + 1 == chain.size()) continue;
    auto pinned_inside = [&](std::size_t at) {
      auto inside = [&](const std::optional<level>& l) {
        return l && std::find(chain.begin() + at + 1, chain.end(), *l) != chain.end();
      };
      bool pinned = false;
      for (const stage_schedule& ss : s.stages) pinned = pinned || inside(ss.compute_at);
      for (const buffer_schedule& bs : s.buffers) pinned = pinned || inside(bs.store_at);
      return pinned;
    };
    for (std::size_t at = outer; at <= k; ++at) {
      if (pinned_inside(at)) continue;
      // (Computed there already: left placed by default.)
      if (at + 1 < chain.size()) result.stages[st].compute_at = chain[at];
      break;
    }
  }
  for (stage_schedule& ss : result.stages) {
    for (loop_spec& l : ss.loops) l.parallel = false;
  }
  legalize(g, result);
  return result;
}

plan make_plan(const graph_spec& g) {
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
      // A pad from a buffer is read at the output's points where the copy pads: at most the
      // copy's region, which the builder requires it to cover.
      if (st.copy && st.pad == b && g.buffers[b].rank > 0) {
        for (int d = 0; d < g.buffers[b].rank && d < st.rank; ++d) need[d] |= p.regions[c][d];
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
        if (dims[d].whole) {
          // The constant bounds of the input.
          access constant;
          constant.lo = p.bounds[i.buffer][d].min;
          constant.hi = p.bounds[i.buffer][d].max;
          dims[d] = constant;
        }
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

bool well_formed(const graph_spec& g, const plan& p) {
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
