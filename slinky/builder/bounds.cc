// Bounds inference: the region of each func's outputs that must be computed where the func runs,
// in each view, what an iteration produces, the region each buffer must cover, and the pipeline
// outputs each func reaches. Sliding and warm-up starts are in bounds_sliding.cc, pipelined loops
// in bounds_pipelining.cc, fold factors in bounds_folding.cc.
#include "slinky/builder/bounds.h"

#include <algorithm>
#include <iterator>
#include <optional>

#include "slinky/base/assert.h"
#include "slinky/builder/bounds_internal.h"
#include "slinky/builder/substitute.h"
#include "slinky/runtime/node_finder.h"
#include "slinky/runtime/node_mutator.h"

namespace slinky {

using internal::simplify_or_empty;

namespace internal {

namespace {

monotonic negate(monotonic m) {
  switch (m) {
  case monotonic::increasing: return monotonic::decreasing;
  case monotonic::decreasing: return monotonic::increasing;
  case monotonic::constant:
  case monotonic::unknown: return m;
  }
  return m;
}

monotonic combine(monotonic a, monotonic b) {
  if (a == monotonic::constant) return b;
  if (b == monotonic::constant || a == b) return a;
  return monotonic::unknown;
}

}  // namespace

// A structural test: sums, differences, scaling and division by constants, min and max of
// monotonic terms are monotonic.
monotonic is_monotonic(const expr& e, var v) {
  if (!depends_on(e, v)) return monotonic::constant;
  if (const variable* x = e.as<variable>()) {
    return x->sym == v && x->field == buffer_field::none ? monotonic::increasing : monotonic::constant;
  }
  if (const add* op = e.as<add>()) return combine(is_monotonic(op->a, v), is_monotonic(op->b, v));
  if (const sub* op = e.as<sub>()) return combine(is_monotonic(op->a, v), negate(is_monotonic(op->b, v)));
  if (const minimum* op = e.as<minimum>()) return combine(is_monotonic(op->a, v), is_monotonic(op->b, v));
  if (const maximum* op = e.as<maximum>()) return combine(is_monotonic(op->a, v), is_monotonic(op->b, v));
  const expr* scaled = nullptr;
  std::optional<index_t> c;
  if (const mul* op = e.as<mul>()) scaled = &op->a, c = as_constant(op->b);
  // Euclidean division by a positive constant is non-decreasing.
  if (const div* op = e.as<div>()) scaled = &op->a, c = as_constant(op->b);
  if (scaled && c) {
    if (*c == 0) return monotonic::constant;
    return *c > 0 ? is_monotonic(*scaled, v) : negate(is_monotonic(*scaled, v));
  }
  return monotonic::unknown;
}

interval_expr simplify_or_empty(const interval_expr& i) {
  // Nothing reads this variable's dimension: compute nothing.
  if (is_positive_infinity(i.min) && is_negative_infinity(i.max)) return interval_expr(0, -1);
  return simplify(i);
}

}  // namespace internal

bool refers_to_itself(const expr& e, var sym) { return e.defined() && depends_on(e, sym).any(); }

box_expr declared_region(const buffer_expr& b, box_expr need) {
  const var sym = b.sym();
  const std::vector<dim_expr> inferred = make_dims_from_bounds(need);
  for (std::size_t d = 0; d < b.rank() && d < need.size(); ++d) {
    const interval_expr& declared = b.dim(d).bounds;
    // Nothing is read: nothing to compute, whatever the declaration.
    if (is_positive_infinity(need[d].min) && is_negative_infinity(need[d].max)) continue;
    if (is_zero(b.dim(d).stride) && declared.min.defined() && declared.max.defined() &&
        !refers_to_itself(declared.min, sym) && !refers_to_itself(declared.max, sym)) {
      // A dim declared with stride 0 (dim::broadcast()) holds one element for every coordinate:
      // crops leave it alone, so its producer writes the declared bounds whatever the consumers
      // read (ynnpack packs a broadcast operand into such a dim, and its input has only those).
      need[d] = declared;
      continue;
    }
    if (!refers_to_itself(declared.min, sym) && !refers_to_itself(declared.max, sym)) continue;
    const interval_expr i = substitute_buffer(declared, sym, inferred);
    need[d] = interval_expr(i.min.defined() ? i.min : need[d].min, i.max.defined() ? i.max : need[d].max);
  }
  return need;
}

namespace {

// The union over all values of the symbols in `b` of the interval i: only non-empty intervals
// contribute points, so it is the smallest min to the largest max.
interval_expr widen(const interval_expr& i, const bounds_map& b) {
  if (i.is_point()) return bounds_of(i.min, b);
  return interval_expr(bounds_of(i.min, b).min, bounds_of(i.max, b).max);
}

}  // namespace

bounds_inference::scratch_bounds::scratch_bounds(const bounds_inference& bi) : bi_(bi) {
  if (bi.scratch_pool_.empty()) return;
  map_ = std::move(bi.scratch_pool_.back());
  bi.scratch_pool_.pop_back();
}

bounds_inference::scratch_bounds::~scratch_bounds() {
  for (var v : set_) map_.erase(v);
  bi_.scratch_pool_.push_back(std::move(map_));
}

std::optional<interval_expr>& bounds_inference::scratch_bounds::operator[](var v) {
  set_.push_back(v);
  return map_[v];
}

std::optional<std::size_t> bounds_inference::find_var(int fi, var v) const {
  const std::vector<var>& vs = funcs[fi].vars;
  for (std::size_t i = 0; i < vs.size(); ++i) {
    if (vs[i] == v) return i;
  }
  return std::nullopt;
}

std::size_t bounds_inference::index_of_var(int fi, var v) const {
  const std::optional<std::size_t> i = find_var(fi, v);
  SLINKY_CHECK(i, "bounds_inference: the variable is not one of the func's output dims (check_graph rejects a "
                  "loop over such a variable)");
  return *i;
}

bounds_inference::bounds_inference(const graph& g)
    : g_(g), funcs(g.funcs.size()), folds(g.buffers.size()), folded_along(g.buffers.size()), needed(g.buffers.size()) {
  for (std::size_t fi = 0; fi < g.funcs.size(); ++fi) {
    for (const func::output& o : g.funcs[fi].f->outputs()) {
      for (var v : o.dims) {
        if (!find_var(fi, v)) funcs[fi].vars.push_back(v);
      }
    }
  }
  find_reach();
  // Consumers first: a func's regions depend on its consumers'. The first pass finds the
  // windows and where loops must start; the second what each iteration computes, which needs
  // the final loop starts (warm-up iterations read too).
  for (int fi = static_cast<int>(g.funcs.size()) - 1; fi >= 0; --fi) {
    funcs[fi].full = needs_of_consumers(fi, view::full);
    for (interval_expr& i : funcs[fi].full) i = simplify_or_empty(i);
    funcs[fi].steady = needs_of_consumers(fi, view::steady);
    for (interval_expr& i : funcs[fi].steady) i = simplify_or_empty(i);
    decide_slides(fi);
  }
  compute_loop_starts();
  find_pipelined_loops();
  for (int fi = static_cast<int>(g.funcs.size()) - 1; fi >= 0; --fi) infer_func(fi);

  for (std::size_t bi = 0; bi < g.buffers.size(); ++bi) {
    const buffer_node& b = g.buffers[bi];
    if (b.producer >= 0 && !b.is_output && !b.is_input) {
      box_expr total;
      for (const func::output& o : g.funcs[b.producer].f->outputs()) {
        if (o.buffer.get() != b.buffer.get()) continue;
        for (var v : o.dims) total.push_back(funcs[b.producer].full[index_of_var(b.producer, v)]);
      }
      const std::vector<loop_level>& chain = g.funcs[b.producer].compute_chain;
      needed[bi] = lift(total, chain, b.store, view::full) & lift(total, chain, loop_level(), view::full);
      if (!b.store.root()) {
        // Stored inside a loop, the buffer holds what one iteration of it computes and reads:
        // consumers that slide along that loop (stored outside it) read only their new part.
        box_expr actual;
        for (const func::output& o : g.funcs[b.producer].f->outputs()) {
          if (o.buffer.get() != b.buffer.get()) continue;
          for (var v : o.dims) actual.push_back(funcs[b.producer].actual[index_of_var(b.producer, v)]);
        }
        needed[bi] = needed[bi] & lift(actual, chain, b.store, view::actual);
      }
      // Trailing dims no variable indexes (a call may leave them out) are computed whole: the
      // producer writes all the buffer holds there, which is what its consumers read.
      if (needed[bi].size() < b.buffer->rank()) {
        const box_expr read = consumers_need(static_cast<int>(bi));
        for (std::size_t d = needed[bi].size(); d < read.size(); ++d) needed[bi].push_back(read[d]);
      }
      for (interval_expr& i : needed[bi]) i = simplify(i);
      folds[bi] = fold_factors(static_cast<int>(bi), folded_along[bi]);
      continue;
    }
    needed[bi] = consumers_need(static_cast<int>(bi));
  }
  check_invariants();
}

void bounds_inference::check_invariants() const {
#if !defined(NDEBUG) || defined(SLINKY_ASSERTIONS)
  SLINKY_ASSERT(funcs.size() == g_.funcs.size(), "bounds for each func");
  for (std::size_t fi = 0; fi < funcs.size(); ++fi) {
    const func_bounds& fb = funcs[fi];
    const std::size_t n = fb.vars.size();
    SLINKY_ASSERT(fb.full.size() == n && fb.steady.size() == n && fb.steady_produce.size() == n &&
                      fb.actual.size() == n && fb.produce.size() == n,
                  "a func's region has one interval per variable in each view");
    SLINKY_ASSERT(fb.slides.size() == n && fb.slides_up.size() == n, "a slide decision per variable");
    for (int k : fb.slides) {
      SLINKY_ASSERT(k >= -1 && k < static_cast<int>(g_.funcs[fi].compute_chain.size()),
                    "a slide names a loop of the func's compute chain, or -1");
    }
  }
  SLINKY_ASSERT(folds.size() == g_.buffers.size() && needed.size() == g_.buffers.size(), "bounds for each buffer");
  SLINKY_ASSERT(reach.size() == g_.funcs.size() && readers_reach.size() == g_.buffers.size(), "reach of each node");
  for (std::size_t bi = 0; bi < g_.buffers.size(); ++bi) {
    const std::size_t rank = g_.buffers[bi].buffer->rank();
    SLINKY_ASSERT(needed[bi].size() == rank, "the region needed of a buffer has one interval per dim");
    SLINKY_ASSERT(folds[bi].empty() || folds[bi].size() == rank, "fold factors: none, or one per dim");
    SLINKY_ASSERT(folded_along[bi].size() == folds[bi].size(), "a fold loop per fold factor");
  }
  for (const auto& s : loop_starts_) SLINKY_ASSERT(g_.valid(s.first), "a loop start is of a loop of the graph");
  for (loop_level l : warm_up_) SLINKY_ASSERT(g_.valid(l), "a warm-up is of a loop of the graph");
#endif
}

box_expr bounds_inference::consumers_need(int bi) const {
  const buffer_node& b = g_.buffers[bi];
  box_expr need(b.buffer->rank(), interval_expr::none());
  for (int c : b.consumers) {
    box_expr c_need = lifted_need(c, bi, loop_level(), view::full);
    need = need | guard_need(std::move(c_need), c, readers_reach[bi]);
  }
  for (interval_expr& i : need) i = simplify(i);
  return need;
}

void bounds_inference::find_reach() {
  reach.resize(g_.funcs.size());
  readers_reach.resize(g_.buffers.size());
  auto merge = [](std::vector<int>& into, const std::vector<int>& from) {
    std::vector<int> result;
    std::set_union(into.begin(), into.end(), from.begin(), from.end(), std::back_inserter(result));
    into = std::move(result);
  };
  // Consumers come after their producers.
  for (int fi = static_cast<int>(g_.funcs.size()) - 1; fi >= 0; --fi) {
    for (const func::output& o : g_.funcs[fi].f->outputs()) {
      const int bi = g_.buffer_index(o.buffer.get());
      if (g_.buffers[bi].is_output) merge(reach[fi], {bi});
      for (int c : g_.buffers[bi].consumers) merge(reach[fi], reach[c]);
    }
  }
  for (std::size_t bi = 0; bi < g_.buffers.size(); ++bi) {
    for (int c : g_.buffers[bi].consumers) merge(readers_reach[bi], reach[c]);
  }
}

expr bounds_inference::all_empty(const std::vector<int>& outputs) const {
  if (outputs.empty()) return expr(0);
  expr result;
  for (int bi : outputs) {
    const buffer_node& b = g_.buffers[bi];
    if (b.buffer->rank() == 0) return expr(0);  // A scalar output is never empty.
    const expr empty = b.empty_sym.defined() ? expr(b.empty_sym) : g_.is_empty(b);
    result = result.defined() ? result && empty : empty;
  }
  return simplify(result);
}

box_expr bounds_inference::guard_need(box_expr need, int c, const std::vector<int>& all) const {
  if (reach[c].empty() || reach[c].size() == all.size()) return need;
  // Written like the empty outputs of a func with several outputs: infinite ends keep the need
  // empty through the widening of further producers.
  const expr idle = all_empty(reach[c]);
  for (interval_expr& i : need) {
    i = interval_expr(select(idle, positive_infinity(), i.min), select(idle, negative_infinity(), i.max));
  }
  return need;
}

interval_expr bounds_inference::loop_bounds(loop_level l, view which) const {
  const std::vector<interval_expr>& r = which == view::actual ? funcs[l.func].produce : funcs[l.func].full;
  return r[index_of_var(l.func, g_.user_var(l))];
}

const std::vector<interval_expr>& bounds_inference::crop_view(int fi, view which) const {
  switch (which) {
  case view::full: return funcs[fi].full;
  case view::steady: return funcs[fi].steady_produce;
  case view::actual: return funcs[fi].produce;
  }
  return funcs[fi].full;
}

interval_expr bounds_inference::crop_at_call(int fi, var v, view which) const {
  const interval_expr& region = crop_view(fi, which)[index_of_var(fi, v)];
  const std::vector<func::loop_info>& loops = g_.funcs[fi].f->loops();
  for (std::size_t k = 0; k < loops.size(); ++k) {
    if (loops[k].var != v) continue;
    const var u = g_.funcs[fi].loop_syms[k];
    const interval_expr chunk(u, simplify(min(u + loops[k].step - 1, region.max)));
    // The crop of each chunk is clamped to the region (it is a crop of the region's crop): in
    // warm-up iterations before the region, the func reads nothing.
    if (which == view::actual && has_warm_up({fi, static_cast<int>(k)})) {
      return interval_expr(simplify(max(u, region.min)), chunk.max);
    }
    return chunk;
  }
  return region;
}

box_expr bounds_inference::need_at_call(int fi, int buffer, view which) const {
  scratch_bounds crops(*this);
  for (var v : funcs[fi].vars) crops[v] = crop_at_call(fi, v, which);
  return need_for_crops(fi, buffer, crops, nullptr);
}

namespace {

bool has_modulus(const expr& e) {
  return any_node(e, [](const mod*) { return true; });
}

bool reads_through_modulus(const func& f, const buffer_expr* b) {
  for (const func::input& i : f.inputs()) {
    if (i.buffer.get() != b) continue;
    for (const interval_expr& d : i.bounds) {
      if (has_modulus(d.min) || has_modulus(d.max)) return true;
    }
  }
  return false;
}

}  // namespace

box_expr bounds_inference::lifted_need(int fi, int buffer, loop_level to, view which) const {
  const std::vector<loop_level>& chain = g_.funcs[fi].call_chain;
  box_expr need = lift(need_at_call(fi, buffer, which), chain, to, which);
  if (chain.empty() || chain.back() == to || !reads_through_modulus(*g_.funcs[fi].f, g_.buffers[buffer].buffer.get())) {
    return need;
  }
  // The bounds of a % W over one iteration's crop are [0, W - 1] unless the crop is known to be
  // within [0, W - 1] (the simplifier prefers that range to the value, so that a func read
  // through a modulus does not move with its consumer's loops), and lifting that over the loops
  // keeps it, even where the loops cover only part of [0, W - 1]. The bounds of the access over
  // the crops lifted first contain what every iteration reads too (the access is taken over at
  // least the union of the crops), so the need is within both.
  box_expr lifted_crops;
  for (var v : funcs[fi].vars) lifted_crops.push_back(crop_at_call(fi, v, which));
  lifted_crops = lift(std::move(lifted_crops), chain, to, which);
  scratch_bounds crops(*this);
  for (std::size_t j = 0; j < funcs[fi].vars.size(); ++j) crops[funcs[fi].vars[j]] = lifted_crops[j];
  const box_expr whole = need_for_crops(fi, buffer, crops, has_modulus);
  for (std::size_t d = 0; d < need.size() && d < whole.size(); ++d) {
    // A dim not read through a modulus is left as none().
    if (is_positive_infinity(whole[d].min) && is_negative_infinity(whole[d].max)) continue;
    need[d] = simplify(need[d] & whole[d]);
  }
  return need;
}

box_expr bounds_inference::need_for_crops(int fi, int buffer, scratch_bounds& crops, bool (*only)(const expr&)) const {
  const func& f = *g_.funcs[fi].f;
  const buffer_expr* b = g_.buffers[buffer].buffer.get();
  box_expr result(b->rank(), interval_expr::none());
  std::vector<std::pair<var, std::optional<interval_expr>>> saved;
  for (const func::input& i : f.inputs()) {
    if (i.buffer.get() != b) continue;
    // A copy input with an output_crop is read only for that part of the output; one with an
    // input_crop only inside it (padding comes from elsewhere). The crops are narrowed for this
    // input, then restored.
    const std::vector<var>& dims = f.outputs()[0].dims;
    saved.clear();
    for (std::size_t d = 0; d < i.output_crop.size() && d < dims.size(); ++d) {
      std::optional<interval_expr>& crop = crops[dims[d]];
      saved.emplace_back(dims[d], crop);
      crop = crop ? *crop & i.output_crop[d] : i.output_crop[d];
    }
    for (std::size_t d = 0; d < b->rank() && d < i.bounds.size(); ++d) {
      if (only && !only(i.bounds[d].min) && !only(i.bounds[d].max)) continue;
      interval_expr need = widen(i.bounds[d], crops.map());
      if (d < i.input_crop.size()) need &= i.input_crop[d];
      result[d] |= need;
    }
    // A box shorter than the rank (allowed for pipeline inputs and constants, check_graph) reads
    // the rest whole: no requirement there.
    for (std::size_t d = i.bounds.size(); d < b->rank(); ++d) result[d] = interval_expr::all();
    for (std::size_t k = saved.size(); k-- > 0;) crops[saved[k].first] = std::move(saved[k].second);
  }
  for (interval_expr& i : result) i = simplify(i);
  return result;
}

box_expr bounds_inference::lift(box_expr b, const std::vector<loop_level>& chain, loop_level to, view which,
                                bool warm_up) const {
  int stop = -1;
  if (!to.root()) {
    auto i = std::find(chain.begin(), chain.end(), to);
    stop = i == chain.end() ? -1 : static_cast<int>(i - chain.begin());
  }
  for (int j = static_cast<int>(chain.size()) - 1; j > stop; --j) {
    scratch_bounds loop_range(*this);
    interval_expr range = loop_bounds(chain[j], which);
    // Warm-up iterations run too (they are empty for the loop's owner, not for its producers).
    if (warm_up) range.min = loop_start(chain[j]);
    loop_range[g_.loop_var(chain[j])] = range;
    for (interval_expr& i : b) i = simplify(widen(i, loop_range.map()));
  }
  return b;
}

namespace {

// True if v indexes an output of f other than o.
bool indexes_another_output(const func& f, const func::output& o, var v) {
  for (const func::output& other : f.outputs()) {
    if (&other == &o) continue;
    if (std::find(other.dims.begin(), other.dims.end(), v) != other.dims.end()) return true;
  }
  return false;
}

}  // namespace

std::vector<interval_expr> bounds_inference::needs_of_consumers(int fi, view which) const {
  const func_node& fn = g_.funcs[fi];
  std::vector<interval_expr> region(funcs[fi].vars.size(), interval_expr::none());
  for (const func::output& o : fn.f->outputs()) {
    const int bi = g_.buffer_index(o.buffer.get());
    const buffer_node& b = g_.buffers[bi];
    if (b.is_output) {
      // A pipeline output is computed over its whole bounds.
      const var sym = b.buffer->sym();
      if (fn.f->outputs().size() == 1) {
        for (std::size_t d = 0; d < o.dims.size(); ++d) {
          region[index_of_var(fi, o.dims[d])] |= buffer_bounds(sym, static_cast<index_t>(d));
        }
        continue;
      }
      // Of a func with several outputs, an empty output contributes nothing to a variable that
      // indexes another output too: the bounds of an empty buffer can be anywhere, and the hull
      // with them would make the func compute (and read) more than its other outputs need. (Only
      // here: the selects hide a window's structure from sliding and folding.) A variable only
      // this output has (a reduction's dummy output has its own) takes the bounds as they are.
      const expr empty = all_empty({bi});
      for (std::size_t d = 0; d < o.dims.size(); ++d) {
        const interval_expr bounds = buffer_bounds(sym, static_cast<index_t>(d));
        interval_expr& r = region[index_of_var(fi, o.dims[d])];
        if (!indexes_another_output(*fn.f, o, o.dims[d])) {
          r |= bounds;
          continue;
        }
        r |= interval_expr(select(empty, positive_infinity(), bounds.min),
                           select(empty, negative_infinity(), bounds.max));
      }
      continue;
    }
    if (b.consumers.empty()) {
      // An intermediate nothing consumes (a reduction's dummy output of element size 0, which
      // carries the reduction's loops) is computed over the bounds the client declared for it.
      // Default bounds (the buffer's own) or bounds in terms of itself declare nothing.
      const var sym = b.buffer->sym();
      for (std::size_t d = 0; d < o.dims.size() && d < b.buffer->rank(); ++d) {
        const interval_expr& declared = b.buffer->dim(d).bounds;
        if (!declared.min.defined() || !declared.max.defined()) continue;
        if (depends_on(declared.min, sym).any() || depends_on(declared.max, sym).any()) continue;
        region[index_of_var(fi, o.dims[d])] |= declared;
      }
      continue;
    }
    box_expr need(b.buffer->rank(), interval_expr::none());
    for (int c : b.consumers) {
      // Over a whole loop between the consumer and this func, its warm-up iterations compute the
      // rest of the window: the steady view of one iteration does not bound it, the full view does.
      const std::vector<loop_level>& chain = g_.funcs[c].call_chain;
      const bool crosses_loop = !chain.empty() && chain.back() != fn.compute;
      const view w = which == view::steady && crosses_loop ? view::full : which;
      const box_expr c_need = guard_need(lifted_need(c, bi, fn.compute, w), c, reach[fi]);
      for (std::size_t d = 0; d < need.size() && d < c_need.size(); ++d) need[d] |= c_need[d];
    }
    need = declared_region(*b.buffer, std::move(need));
    for (std::size_t d = 0; d < o.dims.size() && d < need.size(); ++d) {
      region[index_of_var(fi, o.dims[d])] |= need[d];
    }
  }
  return region;
}

// The number of loops of fi's compute chain outside the innermost storage of its outputs: only
// loops inside every output's storage keep what earlier iterations computed.
std::size_t bounds_inference::storage_depth(int fi) const {
  const func_node& fn = g_.funcs[fi];
  std::size_t depth = 0;
  for (const func::output& o : fn.f->outputs()) {
    const buffer_node& b = g_.buffers[g_.buffer_index(o.buffer.get())];
    if (b.is_output || b.store.root()) continue;
    auto i = std::find(fn.compute_chain.begin(), fn.compute_chain.end(), b.store);
    depth = std::max<std::size_t>(depth, i - fn.compute_chain.begin() + 1);
  }
  return depth;
}

void bounds_inference::infer_func(int fi) {
  func_bounds& fb = funcs[fi];
  const func_node& fn = g_.funcs[fi];
  // The loops around the func bound their variables: with them, clamps that cannot bind
  // simplify away, so regions stay small along chains of funcs (without them, each stage
  // would nest its consumer's clamps, and build time would grow with the cube of the chain).
  // The range starts a step early: the producers of this func find their previous iteration's
  // window by substituting v - step into its crop, which must still be valid there (a clamp
  // dropped because it cannot bind in the first iteration binds in the one before).
  scratch_bounds loops(*this);
  for (loop_level l : fn.compute_chain) {
    const expr step = g_.loop(l).step;
    loops[g_.loop_var(l)] = interval_expr(simplify(loop_start(l) - step), loop_bounds(l).max);
  }
  // Simplified without the loops' bounds: the previous iteration's window is found by
  // substituting v - step for v, which is outside those bounds in the first iteration.
  fb.actual = needs_of_consumers(fi, view::actual);
  for (interval_expr& i : fb.actual) i = simplify_or_empty(i);
  // Never more than the total the func must compute where its outputs are stored.
  const std::size_t depth = storage_depth(fi);
  const loop_level storage = depth == 0 ? loop_level() : fn.compute_chain[depth - 1];
  const box_expr whole(fb.full.begin(), fb.full.end());
  // Also within the total over every loop: warm-up iterations of a loop outside the storage
  // must not make a func compute beyond what anything needs.
  // And within this iteration's full window: the producers of a func stored inside the loop
  // provide no more (a region simplified as if an empty crop were not empty can be larger).
  box_expr total = lift(whole, fn.compute_chain, storage, view::full) &
                   lift(whole, fn.compute_chain, loop_level(), view::full) & whole;
  fb.produce = fb.actual;
  for (std::size_t j = 0; j < fb.vars.size(); ++j) {
    interval_expr& p = fb.produce[j];
    const int k = fb.slides[j];
    // What the previous iteration computed covers this one's other dimensions only if they do
    // not move with the loop. (The steady window's do not, or the dimension would not slide; the
    // region's may, where an empty crop was simplified as if it were not, e.g. x % 2 as x over a
    // crop of one point: the iteration before computed nothing then.)
    bool others_fixed = true;
    for (std::size_t jj = 0; k >= 0 && jj < fb.vars.size(); ++jj) {
      if (jj != j && depends_on(fb.actual[jj], g_.loop_var(fn.compute_chain[k]))) others_fixed = false;
    }
    if (k >= 0 && others_fixed) {
      const func::loop_info& info = g_.loop(fn.compute_chain[k]);
      const var v = g_.loop_var(fn.compute_chain[k]);
      const interval_expr prev = substitute(fb.actual[j], v, v - info.step);
      // The previous iteration computed at least the hull of its region and its steady window.
      // Before the first iteration that hull must be below what is needed: the steady window
      // is (the loop starts early enough for it), the region need not be (it may be an empty
      // crop widened to a non-empty interval), so the trim is limited by both.
      const interval_expr prev_steady = substitute(fb.steady[j], v, v - info.step);
      // (Equal operands are merged first: the simplifier would remove them only by proofs.)
      if (fb.slides_up[j]) {
        p.min = max(p.min, (match(prev.max, prev_steady.max) ? prev.max : min(prev.max, prev_steady.max)) + 1);
      } else {
        p.max = min(p.max, (match(prev.min, prev_steady.min) ? prev.min : max(prev.min, prev_steady.min)) - 1);
      }
    }
    // Within the total, where the region is not obviously within it already: p is within the
    // region (actual), so an end of the total equal to the region's binds nothing. (An undefined
    // end of an interval is unbounded: & takes the other side.)
    interval_expr within = total[j];
    if (match(within.min, fb.actual[j].min)) within.min = expr();
    if (match(within.max, fb.actual[j].max) || match(within.max, p.max)) within.max = expr();
    p = simplify(p & within, loops.map());
  }
}

}  // namespace slinky
