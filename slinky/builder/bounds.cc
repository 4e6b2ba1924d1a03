// Bounds inference, sliding windows and storage folding over the scheduled graph.
#include "slinky/builder/bounds.h"

#include <algorithm>
#include <iterator>
#include <optional>
#include <thread>

#include "slinky/base/arithmetic.h"
#include "slinky/runtime/node_mutator.h"

namespace slinky {

namespace {

// The union over all values of the symbols in `b` of the interval i: only non-empty intervals
// contribute points, so it is the smallest min to the largest max.
interval_expr widen(const interval_expr& i, const bounds_map& b) {
  if (i.is_point()) return bounds_of(i.min, b);
  return interval_expr(bounds_of(i.min, b).min, bounds_of(i.max, b).max);
}

// How an expression changes as a variable increases.
enum class monotonic { constant, increasing, decreasing, unknown };

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

// A value w of v such that the increasing expression e is <= t at v = w (and so for every v <=
// w), as large as the structure of e allows; undefined if none can be found.
expr solve_upper(const expr& e, var v, const expr& t) {
  if (!depends_on(e, v)) return expr();
  if (const variable* x = e.as<variable>()) return x->sym == v && x->field == buffer_field::none ? t : expr();
  if (const add* op = e.as<add>()) {
    if (!depends_on(op->b, v)) return solve_upper(op->a, v, t - op->b);
    if (!depends_on(op->a, v)) return solve_upper(op->b, v, t - op->a);
    return expr();
  }
  if (const sub* op = e.as<sub>()) {
    if (!depends_on(op->b, v)) return solve_upper(op->a, v, t + op->b);
    return expr();
  }
  if (const mul* op = e.as<mul>()) {
    std::optional<index_t> c = as_constant(op->b);
    // a * c <= t if a <= floor(t / c).
    if (c && *c > 0) return solve_upper(op->a, v, t / *c);
    return expr();
  }
  if (const div* op = e.as<div>()) {
    std::optional<index_t> c = as_constant(op->b);
    // floor(a / c) <= t if a <= t * c + c - 1.
    if (c && *c > 0) return solve_upper(op->a, v, t * *c + (*c - 1));
    return expr();
  }
  if (const minimum* op = e.as<minimum>()) {
    // min(a, b) <= t if either is.
    expr a = solve_upper(op->a, v, t);
    expr b = solve_upper(op->b, v, t);
    if (a.defined() && b.defined()) return max(a, b);
    return a.defined() ? a : b;
  }
  if (const maximum* op = e.as<maximum>()) {
    // max(a, b) <= t if both are; a term without v must be shown <= t.
    expr a = depends_on(op->a, v) ? solve_upper(op->a, v, t) : expr();
    expr b = depends_on(op->b, v) ? solve_upper(op->b, v, t) : expr();
    if (!depends_on(op->a, v) && prove_true(op->a <= t)) return b;
    if (!depends_on(op->b, v) && prove_true(op->b <= t)) return a;
    if (a.defined() && b.defined()) return min(a, b);
    return expr();
  }
  return expr();
}

// An upper bound of hi - lo, where the interval arithmetic of bounds_of cannot see one: the two
// are the same expression up to constant offsets, products and floor divisions by the same
// constant and clamps ((y + 1) / 2 - y / 2 <= 1; min(y + 1, n) - min(y - 1, n) <= 2; a clamp of the high end,
// the last chunk of a loop, only lowers it).
std::optional<index_t> difference_bound(const expr& hi, const expr& lo) {
  if (match(hi, lo)) return 0;
  // (a + k1) - (b + k2) = (a - b) + k1 - k2.
  auto split = [](const expr& e, expr& a) -> index_t {
    a = e;
    if (const add* op = e.as<add>()) {
      if (std::optional<index_t> k = as_constant(op->b)) {
        a = op->a;
        return *k;
      }
    }
    return 0;
  };
  expr a, b;
  const index_t ka = split(hi, a), kb = split(lo, b);
  if (ka != 0 || kb != 0) {
    std::optional<index_t> d = difference_bound(a, b);
    if (d) return *d + ka - kb;
  }
  // p * c - q * c = (p - q) * c <= bound(p - q) * c for c > 0 (strided windows: x * 2).
  const mul* ma = hi.as<mul>();
  const mul* mb = lo.as<mul>();
  if (ma && mb) {
    std::optional<index_t> c = as_constant(ma->b);
    if (c && *c > 0 && as_constant(mb->b) == c) {
      std::optional<index_t> inner = difference_bound(ma->a, mb->a);
      if (inner) return *inner * *c;
    }
  }
  // floor(p / d) - floor(q / d) <= ceil((p - q) / d) for d > 0.
  const div* da = hi.as<div>();
  const div* db = lo.as<div>();
  if (da && db) {
    std::optional<index_t> d = as_constant(da->b);
    if (d && *d > 0 && as_constant(db->b) == d) {
      std::optional<index_t> inner = difference_bound(da->a, db->a);
      if (inner) return ceil_div<index_t>(*inner, *d);
    }
  }
  // min(p, n) - min(q, n) <= max(p - q, 0), and the same for max.
  const minimum* mina = hi.as<minimum>();
  const minimum* minb = lo.as<minimum>();
  const maximum* maxa = hi.as<maximum>();
  const maximum* maxb = lo.as<maximum>();
  auto same_clamp = [](const expr& pa, const expr& pb, const expr& qa, const expr& qb) -> std::optional<index_t> {
    std::optional<index_t> d;
    if (match(pb, qb)) d = difference_bound(pa, qa);
    if (!d && match(pa, qa)) d = difference_bound(pb, qb);
    if (!d && match(pa, qb)) d = difference_bound(pb, qa);
    if (!d && match(pb, qa)) d = difference_bound(pa, qb);
    if (d) return std::max<index_t>(*d, 0);
    return std::nullopt;
  };
  if (mina && minb) {
    if (std::optional<index_t> d = same_clamp(mina->a, mina->b, minb->a, minb->b)) return d;
  }
  if (maxa && maxb) {
    if (std::optional<index_t> d = same_clamp(maxa->a, maxa->b, maxb->a, maxb->b)) return d;
  }
  // min(p, q) <= p, and max(p, q) >= p: the tightest bound through either side.
  std::optional<index_t> best;
  auto consider = [&](std::optional<index_t> d) {
    if (d && (!best || *d < *best)) best = d;
  };
  if (mina) {
    consider(difference_bound(mina->a, lo));
    consider(difference_bound(mina->b, lo));
  }
  if (maxb) {
    consider(difference_bound(hi, maxb->a));
    consider(difference_bound(hi, maxb->b));
  }
  return best;
}

expr difference_upper_bound(const expr& hi, const expr& lo) {
  std::optional<index_t> d = difference_bound(hi, lo);
  return d ? expr(*d) : expr();
}

interval_expr simplify_or_empty(const interval_expr& i) {
  // Nothing reads this variable's dimension: compute nothing.
  if (is_positive_infinity(i.min) && is_negative_infinity(i.max)) return interval_expr(0, -1);
  return simplify(i);
}

}  // namespace

int bounds_inference::index_of_var(int fi, var v) const {
  const std::vector<var>& vs = vars[fi];
  for (std::size_t i = 0; i < vs.size(); ++i) {
    if (vs[i] == v) return static_cast<int>(i);
  }
  return -1;
}

bounds_inference::bounds_inference(const graph& g)
    : g_(g), vars(g.funcs.size()), full(g.funcs.size()), steady(g.funcs.size()), steady_produce(g.funcs.size()),
      regions(g.funcs.size()), produce(g.funcs.size()), slides(g.funcs.size()), slides_up(g.funcs.size()),
      folds(g.buffers.size()), needed(g.buffers.size()) {
  for (std::size_t fi = 0; fi < g.funcs.size(); ++fi) {
    for (const func::output& o : g.funcs[fi].f->outputs()) {
      for (var v : o.dims) {
        if (index_of_var(fi, v) < 0) vars[fi].push_back(v);
      }
    }
  }
  find_reach();
  // Consumers first: a func's regions depend on its consumers'. The first pass finds the
  // windows and where loops must start; the second what each iteration computes, which needs
  // the final loop starts (warm-up iterations read too).
  for (int fi = static_cast<int>(g.funcs.size()) - 1; fi >= 0; --fi) {
    full[fi] = needs_of_consumers(fi, view::full);
    for (interval_expr& i : full[fi]) i = simplify_or_empty(i);
    steady[fi] = needs_of_consumers(fi, view::steady);
    for (interval_expr& i : steady[fi]) i = simplify_or_empty(i);
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
        for (var v : o.dims) total.push_back(full[b.producer][index_of_var(b.producer, v)]);
      }
      const std::vector<loop_level>& chain = g.funcs[b.producer].compute_chain;
      needed[bi] = lift(total, chain, b.store, view::full) & lift(total, chain, loop_level(), view::full);
      if (!b.store.root()) {
        // Stored inside a loop, the buffer holds what one iteration of it computes and reads:
        // consumers that slide along that loop (stored outside it) read only their new part.
        box_expr actual;
        for (const func::output& o : g.funcs[b.producer].f->outputs()) {
          if (o.buffer.get() != b.buffer.get()) continue;
          for (var v : o.dims) actual.push_back(regions[b.producer][index_of_var(b.producer, v)]);
        }
        needed[bi] = needed[bi] & lift(actual, chain, b.store, view::actual);
      }
      for (interval_expr& i : needed[bi]) i = simplify(i);
      folds[bi] = fold_factors(static_cast<int>(bi));
      continue;
    }
    box_expr need(b.buffer->rank(), interval_expr::none());
    for (int c : b.consumers) {
      box_expr c_need = lift(need_at_call(c, bi, view::full), g.funcs[c].call_chain, loop_level(), view::full);
      need = need | guard_need(std::move(c_need), c, readers_reach[bi]);
    }
    for (interval_expr& i : need) i = simplify(i);
    needed[bi] = std::move(need);
  }
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
    const buffer_expr& b = *g_.buffers[bi].buffer;
    expr empty;
    for (std::size_t d = 0; d < b.rank(); ++d) {
      const int dd = static_cast<int>(d);
      const expr e = buffer_max(b.sym(), dd) < buffer_min(b.sym(), dd);
      empty = empty.defined() ? empty || e : e;
    }
    if (!empty.defined()) return expr(0);  // A scalar output is never empty.
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
  const std::vector<interval_expr>& r = which == view::actual ? produce[l.func] : full[l.func];
  return r[index_of_var(l.func, g_.user_var(l))];
}

void bounds_inference::compute_loop_starts() {
  std::vector<std::pair<loop_level, expr>> earliest;
  for (const auto& s : starts_) {
    auto i = std::find_if(earliest.begin(), earliest.end(), [&](const auto& e) { return e.first == s.first; });
    if (i == earliest.end()) {
      earliest.push_back(s);
    } else {
      i->second = simplify(min(i->second, s.second));
    }
  }
  for (const auto& e : earliest) {
    // Whole steps before the first value, so the iterations after warm-up are the same. The first
    // value is the full region's: the loop's owner is computed before (it is a consumer).
    const loop_level l = e.first;
    const expr first = loop_bounds(l, view::full).min;
    const expr step = g_.funcs[l.func].f->loops()[l.loop].step;
    const expr start = simplify(first - align_up(max(first - e.second, 0), step));
    loop_starts_.emplace_back(l, start);
    if (!is_zero(simplify(first - start))) warm_up_.push_back(l);
  }
}

bool bounds_inference::has_warm_up(loop_level l) const {
  return std::find(warm_up_.begin(), warm_up_.end(), l) != warm_up_.end();
}

expr bounds_inference::loop_start(loop_level l) const {
  for (const auto& s : loop_starts_) {
    if (s.first == l) return s.second;
  }
  return loop_bounds(l).min;
}

const std::vector<interval_expr>& bounds_inference::crop_view(int fi, view which) const {
  switch (which) {
  case view::full: return full[fi];
  case view::steady: return steady_produce[fi];
  case view::actual: return produce[fi];
  }
  return full[fi];
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
  const func& f = *g_.funcs[fi].f;
  const buffer_expr* b = g_.buffers[buffer].buffer.get();
  bounds_map crops;
  for (var v : vars[fi]) crops[v] = crop_at_call(fi, v, which);
  box_expr result(b->rank(), interval_expr::none());
  for (const func::input& i : f.inputs()) {
    if (i.buffer.get() != b) continue;
    // A copy input with an output_crop is read only for that part of the output; one with an
    // input_crop only inside it (padding comes from elsewhere).
    bounds_map input_crops = crops;
    const std::vector<var>& dims = f.outputs()[0].dims;
    for (std::size_t d = 0; d < i.output_crop.size() && d < dims.size(); ++d) {
      std::optional<interval_expr>& crop = input_crops[dims[d]];
      crop = crop ? *crop & i.output_crop[d] : i.output_crop[d];
    }
    for (std::size_t d = 0; d < b->rank() && d < i.bounds.size(); ++d) {
      interval_expr need = widen(i.bounds[d], input_crops);
      if (d < i.input_crop.size()) need &= i.input_crop[d];
      result[d] |= need;
    }
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
    bounds_map loop_range;
    interval_expr range = loop_bounds(chain[j], which);
    // Warm-up iterations run too (they are empty for the loop's owner, not for its producers).
    if (warm_up) range.min = loop_start(chain[j]);
    loop_range[g_.loop_var(chain[j])] = range;
    for (interval_expr& i : b) i = simplify(widen(i, loop_range));
  }
  return b;
}

box_expr bounds_inference::output_region(int buffer) const {
  const buffer_node& b = g_.buffers[buffer];
  for (const func::output& o : g_.funcs[b.producer].f->outputs()) {
    if (o.buffer.get() != b.buffer.get()) continue;
    box_expr result;
    for (var v : o.dims) result.push_back(produce[b.producer][index_of_var(b.producer, v)]);
    return result;
  }
  return box_expr();
}

std::vector<interval_expr> bounds_inference::needs_of_consumers(int fi, view which) const {
  const func_node& fn = g_.funcs[fi];
  std::vector<interval_expr> region(vars[fi].size(), interval_expr::none());
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
      // Of a func with several outputs, an empty output contributes nothing: the bounds of an
      // empty buffer can be anywhere, and the hull with them would make the func compute (and
      // read) more than its other outputs need. (Only here: the selects hide a window's
      // structure from sliding and folding.)
      expr empty = expr(0);
      for (std::size_t d = 0; d < o.dims.size(); ++d) {
        empty = empty || buffer_max(sym, static_cast<index_t>(d)) < buffer_min(sym, static_cast<index_t>(d));
      }
      empty = simplify(empty);
      for (std::size_t d = 0; d < o.dims.size(); ++d) {
        const interval_expr bounds = buffer_bounds(sym, static_cast<index_t>(d));
        region[index_of_var(fi, o.dims[d])] |= interval_expr(select(empty, positive_infinity(), bounds.min),
                                                             select(empty, negative_infinity(), bounds.max));
      }
      continue;
    }
    for (int c : b.consumers) {
      // Over a whole loop between the consumer and this func, its warm-up iterations compute the
      // rest of the window: the steady view of one iteration does not bound it, the full view does.
      const std::vector<loop_level>& chain = g_.funcs[c].call_chain;
      const bool crosses_loop = !chain.empty() && chain.back() != fn.compute;
      const view w = which == view::steady && crosses_loop ? view::full : which;
      box_expr need = guard_need(lift(need_at_call(c, bi, w), chain, fn.compute, w), c, reach[fi]);
      for (std::size_t d = 0; d < o.dims.size() && d < need.size(); ++d) {
        region[index_of_var(fi, o.dims[d])] |= need[d];
      }
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

void bounds_inference::find_pipelined_loops() {
  // Each iteration in flight holds its window of the ring buffers, so the workers are bounded at
  // build time.
  auto pipeline = [&](loop_level l, bool ordered_stages) {
    const func::loop_info& info = g_.funcs[l.func].f->loops()[l.loop];
    // Stages wait for the previous iteration's, so more workers than stages would mostly wait.
    // A loop whose only stage is its owner (which starts at once and only finishes in order)
    // runs on as many workers as there are hardware threads.
    index_t stages = 1;
    for (const func_node& other : g_.funcs) stages += other.compute == l ? 1 : 0;
    const unsigned hw = std::thread::hardware_concurrency();
    index_t workers = ordered_stages || stages > 1 ? stages : std::max<index_t>(1, hw);
    // No more iterations run at once than the machine has hardware threads: folding for more
    // only makes the ring buffers larger (and slower, once they leave the cache).
    if (hw) workers = std::min<index_t>(workers, hw);
    if (std::optional<index_t> c = as_constant(info.max_workers)) workers = std::max<index_t>(1, std::min(workers, *c));
    // Inside another parallel loop, which gives the parallelism, a pipelined loop runs serially:
    // a worker waiting on a stage may run another pipeline's items (thread_pool.h), which could
    // wait in turn for the first one.
    const std::vector<loop_level> chain = g_.chain(l);
    for (std::size_t j = 0; j + 1 < chain.size(); ++j) {
      if (g_.funcs[chain[j].func].f->loops()[chain[j].loop].is_parallel()) workers = 1;
    }
    pipelined_.emplace_back(l, workers);
  };
  for (std::size_t fi = 0; fi < g_.funcs.size(); ++fi) {
    for (int k : slides[fi]) {
      if (k < 0) continue;
      const loop_level l = g_.funcs[fi].compute_chain[k];
      const func::loop_info& info = g_.funcs[l.func].f->loops()[l.loop];
      if (!info.is_parallel() || pipelined(l)) continue;
      // Iterations that write disjoint windows of what fi produces need no order among them,
      // unless a buffer would fold along l (the outermost loop inside its storage): iterations in
      // flight then take turns in its rows. (A buffer kept outside the loop to slide along a
      // serial loop further out folds along that one.)
      bool ordered = false;
      for (const func::output& o : g_.funcs[fi].f->outputs()) {
        const int bi = g_.buffer_index(o.buffer.get());
        if (g_.buffers[bi].is_output) continue;
        ordered = ordered || windows_overlap(bi, l) || fold_loop(bi) == l;
      }
      if (ordered) pipeline(l, /*ordered_stages=*/true);
    }
  }
  // A buffer stored outside a parallel loop whose producer does not slide with it (it runs in a
  // loop inside l whose range moves with l, say) but whose windows move with l and are disjoint
  // across its iterations: pipelined, the iterations in flight take turns in a ring buffer of
  // their windows, instead of each writing its own part of a buffer as large as all of them.
  // (Windows that overlap without sliding are left as they are: iterations in flight would write
  // the same elements.)
  for (std::size_t bi = 0; bi < g_.buffers.size(); ++bi) {
    const buffer_node& b = g_.buffers[bi];
    if (b.producer < 0 || b.is_output || b.is_input) continue;
    const std::optional<loop_level> l = fold_loop(static_cast<int>(bi));
    if (!l || pipelined(*l) || !g_.funcs[l->func].f->loops()[l->loop].is_parallel()) continue;
    if (!window_moves(static_cast<int>(bi), *l) || windows_overlap(static_cast<int>(bi), *l)) continue;
    pipeline(*l, /*ordered_stages=*/false);
  }
}

box_expr bounds_inference::window_in_iteration(int buffer, loop_level l) const {
  const buffer_node& b = g_.buffers[buffer];
  if (b.producer < 0) return {};
  const int fi = b.producer;
  const func_node& fn = g_.funcs[fi];
  if (std::find(fn.compute_chain.begin(), fn.compute_chain.end(), l) == fn.compute_chain.end()) return {};
  box_expr window;
  for (const func::output& o : fn.f->outputs()) {
    if (o.buffer.get() != b.buffer.get()) continue;
    for (var v : o.dims) window.push_back(full[fi][index_of_var(fi, v)]);
  }
  // Over the loops inside l: what one iteration of l needs.
  return lift(window, fn.compute_chain, l, view::full, /*warm_up=*/false);
}

bool bounds_inference::window_moves(int buffer, loop_level l) const {
  const box_expr window = window_in_iteration(buffer, l);
  const var v = g_.loop_var(l);
  return std::any_of(window.begin(), window.end(), [&](const interval_expr& i) { return depends_on(i, v); });
}

bool bounds_inference::windows_overlap(int buffer, loop_level l) const {
  const box_expr window = window_in_iteration(buffer, l);
  const var v = g_.loop_var(l);
  const expr& step = g_.funcs[l.func].f->loops()[l.loop].step;
  // Within the loop (after its first iteration, which has no previous one).
  bounds_map loop_range;
  const interval_expr range = loop_bounds(l, view::full);
  loop_range[v] = interval_expr(simplify(range.min + step), range.max);
  for (const interval_expr& i : window) {
    if (!depends_on(i, v)) continue;
    const interval_expr prev = substitute(i, v, v - step);
    const monotonic lo = is_monotonic(i.min, v);
    const monotonic hi = is_monotonic(i.max, v);
    // Overlapping unless proven disjoint in every iteration: a window that overlaps the previous
    // one in some iterations only (x / 2 over x, say) still computes those values twice.
    if (lo == monotonic::increasing && hi == monotonic::increasing) {
      if (!prove_true(prev.max < i.min, loop_range)) return true;
    } else if (lo == monotonic::decreasing && hi == monotonic::decreasing) {
      if (!prove_true(i.max < prev.min, loop_range)) return true;
    }
  }
  return false;
}

bool bounds_inference::slides_with(int fi, loop_level l) const {
  const func_node& fn = g_.funcs[fi];
  for (int k : slides[fi]) {
    if (k >= 0 && fn.compute_chain[k] == l) return true;
  }
  return false;
}

bool bounds_inference::pipelined(loop_level l) const {
  return std::any_of(pipelined_.begin(), pipelined_.end(), [&](const auto& p) { return p.first == l; });
}

index_t bounds_inference::pipeline_workers(loop_level l) const {
  for (const auto& p : pipelined_) {
    if (p.first == l) return p.second;
  }
  return 1;
}

// Decides which dimensions of func fi slide with which loop: a serial loop inside the storage
// of its outputs (so what earlier iterations computed is still there), a dimension that moves
// with that loop alone and monotonically, and a warm-up start that can be solved for. Each
// iteration then computes only the part of the steady window the previous one did not.
void bounds_inference::decide_slides(int fi) {
  const func_node& fn = g_.funcs[fi];
  slides[fi].assign(vars[fi].size(), -1);
  slides_up[fi].assign(vars[fi].size(), true);
  steady_produce[fi] = steady[fi];
  const std::size_t depth = storage_depth(fi);
  if (depth >= fn.compute_chain.size()) return;
  const loop_level storage = depth == 0 ? loop_level() : fn.compute_chain[depth - 1];
  box_expr total(full[fi].begin(), full[fi].end());
  total = lift(total, fn.compute_chain, storage, view::full);
  for (std::size_t k = depth; k < fn.compute_chain.size(); ++k) {
    const loop_level l = fn.compute_chain[k];
    // A parallel loop slides too: it is then pipelined (see find_pipelined_loops).
    const func::loop_info& info = g_.funcs[l.func].f->loops()[l.loop];
    const var v = g_.loop_var(l);
    // The loop's owner must compute its whole range of v: a loop that is itself a slice of a
    // sliding window would restart its warm-up over values computed before.
    if (slides[l.func][index_of_var(l.func, g_.user_var(l))] >= 0) continue;
    // A loop inside l whose range moves with l (over a diagonal, say) is empty in some
    // iterations of l, its warm-up ones first: the func does not run in them, and the part of
    // its window they should compute never would be.
    bool inner_loop_moves = false;
    for (std::size_t m = k + 1; m < fn.compute_chain.size(); ++m) {
      inner_loop_moves = inner_loop_moves || depends_on(loop_bounds(fn.compute_chain[m], view::full), v);
    }
    if (inner_loop_moves) continue;
    // A window moving in several dimensions with one loop does not leave a box to compute.
    int moving = 0;
    for (const interval_expr& i : steady[fi]) moving += depends_on(i, v) ? 1 : 0;
    if (moving > 1) continue;
    for (std::size_t j = 0; j < vars[fi].size(); ++j) {
      const interval_expr& i = steady[fi][j];
      if (slides[fi][j] >= 0 || !depends_on(i, v)) continue;
      bool other_loop = false;
      for (loop_level other : fn.compute_chain) {
        other_loop = other_loop || (other != l && depends_on(i, g_.loop_var(other)));
      }
      if (other_loop) continue;
      const monotonic lo = is_monotonic(i.min, v);
      const monotonic hi = is_monotonic(i.max, v);
      const interval_expr prev = substitute(i, v, v - info.step);
      interval_expr trimmed = i;
      expr last_before;
      const bool up = lo == monotonic::increasing && hi == monotonic::increasing;
      const bool down = lo == monotonic::decreasing && hi == monotonic::decreasing;
      if (up) {
        trimmed.min = max(i.min, prev.max + 1);
        last_before = solve_upper(i.max, v, total[j].min - 1);
      } else if (down) {
        trimmed.max = min(i.max, prev.min - 1);
        last_before = solve_upper(simplify(-i.min), v, -(total[j].max + 1));
      }
      if (!last_before.defined()) continue;
      slides[fi][j] = static_cast<int>(k);
      slides_up[fi][j] = up;
      steady_produce[fi][j] = simplify(trimmed);
      starts_.emplace_back(l, simplify(last_before + info.step));
    }
  }
}

void bounds_inference::infer_func(int fi) {
  const func_node& fn = g_.funcs[fi];
  // The loops around the func bound their variables: with them, clamps that cannot bind
  // simplify away, so regions stay small along chains of funcs (without them, each stage
  // would nest its consumer's clamps, and build time would grow with the cube of the chain).
  // The range starts a step early: the producers of this func find their previous iteration's
  // window by substituting v - step into its crop, which must still be valid there (a clamp
  // dropped because it cannot bind in the first iteration binds in the one before).
  bounds_map loops;
  for (loop_level l : fn.compute_chain) {
    const expr step = g_.funcs[l.func].f->loops()[l.loop].step;
    loops[g_.loop_var(l)] = interval_expr(simplify(loop_start(l) - step), loop_bounds(l).max);
  }
  // Simplified without the loops' bounds: the previous iteration's window is found by
  // substituting v - step for v, which is outside those bounds in the first iteration.
  regions[fi] = needs_of_consumers(fi, view::actual);
  for (interval_expr& i : regions[fi]) i = simplify_or_empty(i);
  // Never more than the total the func must compute where its outputs are stored.
  const std::size_t depth = storage_depth(fi);
  const loop_level storage = depth == 0 ? loop_level() : fn.compute_chain[depth - 1];
  const box_expr whole(full[fi].begin(), full[fi].end());
  // Also within the total over every loop: warm-up iterations of a loop outside the storage
  // must not make a func compute beyond what anything needs.
  // And within this iteration's full window: the producers of a func stored inside the loop
  // provide no more (a region simplified as if an empty crop were not empty can be larger).
  box_expr total = lift(whole, fn.compute_chain, storage, view::full) &
                   lift(whole, fn.compute_chain, loop_level(), view::full) & whole;
  produce[fi] = regions[fi];
  for (std::size_t j = 0; j < vars[fi].size(); ++j) {
    interval_expr& p = produce[fi][j];
    const int k = slides[fi][j];
    // What the previous iteration computed covers this one's other dimensions only if they do
    // not move with the loop. (The steady window's do not, or the dimension would not slide; the
    // region's may, where an empty crop was simplified as if it were not, e.g. x % 2 as x over a
    // crop of one point: the iteration before computed nothing then.)
    bool others_fixed = true;
    for (std::size_t jj = 0; k >= 0 && jj < vars[fi].size(); ++jj) {
      if (jj != j && depends_on(regions[fi][jj], g_.loop_var(fn.compute_chain[k]))) others_fixed = false;
    }
    if (k >= 0 && others_fixed) {
      const func::loop_info& info = g_.funcs[fn.compute_chain[k].func].f->loops()[fn.compute_chain[k].loop];
      const var v = g_.loop_var(fn.compute_chain[k]);
      const interval_expr prev = substitute(regions[fi][j], v, v - info.step);
      // The previous iteration computed at least the hull of its region and its steady window.
      // Before the first iteration that hull must be below what is needed: the steady window
      // is (the loop starts early enough for it), the region need not be (it may be an empty
      // crop widened to a non-empty interval), so the trim is limited by both.
      const interval_expr prev_steady = substitute(steady[fi][j], v, v - info.step);
      if (slides_up[fi][j]) {
        p.min = max(p.min, min(prev.max, prev_steady.max) + 1);
      } else {
        p.max = min(p.max, max(prev.min, prev_steady.min) - 1);
      }
    }
    p = simplify(p & total[j], loops);
  }
}

std::optional<loop_level> bounds_inference::fold_loop(int buffer) const {
  const buffer_node& b = g_.buffers[buffer];
  const std::vector<loop_level>& chain = g_.funcs[b.producer].compute_chain;
  // The outermost loop inside the storage level: the buffer lives across its iterations.
  std::size_t k = 0;
  if (!b.store.root()) {
    auto i = std::find(chain.begin(), chain.end(), b.store);
    if (i == chain.end()) return std::nullopt;
    k = i - chain.begin() + 1;
  }
  if (k >= chain.size()) return std::nullopt;
  return chain[k];
}

std::vector<expr> bounds_inference::fold_factors(int buffer) const {
  const buffer_node& b = g_.buffers[buffer];
  const int fi = b.producer;
  const func_node& fn = g_.funcs[fi];
  std::vector<expr> result(b.buffer->rank());
  const std::optional<loop_level> folded_along = fold_loop(buffer);
  if (!folded_along) return result;
  const loop_level l = *folded_along;
  const func::loop_info& info = g_.funcs[l.func].f->loops()[l.loop];
  // The iterations of a parallel loop that is not pipelined may all run at once.
  if (info.is_parallel() && !pipelined(l)) return result;
  // What is live in one iteration of that loop: the steady window (warm-up and the last
  // iterations only ever need less). A func moved out of a loop to be a stage of a pipelined loop
  // of its own (see parallel_storage.h) is computed outside its consumers' inner loops: its
  // steady window is their needs over those whole loops, which do not slide the way the
  // consumers do; what they actually read in one iteration bounds what is live.
  std::vector<interval_expr> actual_needs;
  if (!fn.hoisted_to.root()) {
    actual_needs = needs_of_consumers(fi, view::actual);
    for (interval_expr& i : actual_needs) i = simplify_or_empty(i);
  }
  const std::vector<interval_expr>& live = fn.hoisted_to.root() ? steady[fi] : actual_needs;
  box_expr window;
  for (const func::output& o : fn.f->outputs()) {
    if (o.buffer.get() != b.buffer.get()) continue;
    for (var v : o.dims) window.push_back(live[index_of_var(fi, v)]);
  }
  // Over the loops inside l, including their warm-up iterations: the func runs in them too
  // (a window moving with both an inner loop and l is wider by the inner warm-up).
  window = lift(window, fn.compute_chain, l, view::steady, /*warm_up=*/true);
  bounds_map loop_range;
  const var v = g_.loop_var(l);
  loop_range[v] = interval_expr(loop_start(l), loop_bounds(l).max);
  // A pipelined loop has up to `workers` consecutive iterations in flight (its iterations finish
  // in order): what is live is the hull of their windows.
  const index_t workers = info.is_parallel() ? pipeline_workers(l) : 1;
  for (std::size_t d = 0; d < window.size(); ++d) {
    if (!depends_on(window[d], v)) continue;
    if (workers > 1) {
      const interval_expr last = substitute(window[d], v, v + info.step * (workers - 1));
      const monotonic lo = is_monotonic(window[d].min, v);
      const monotonic hi = is_monotonic(window[d].max, v);
      if (lo == monotonic::increasing && hi == monotonic::increasing) {
        window[d].max = simplify(last.max);
      } else if (lo == monotonic::decreasing && hi == monotonic::decreasing) {
        window[d].min = simplify(last.min);
      } else {
        // Not monotonic: the hull of the first and last window need not bound the others.
        continue;
      }
    }
    expr extent = simplify(window[d].max - window[d].min + 1);
    expr largest = bounds_of(extent, loop_range).max;

    expr difference = difference_upper_bound(window[d].max, window[d].min);
    if (difference.defined()) largest = largest.defined() ? min(largest, difference + 1) : difference + 1;
    if (!largest.defined() || is_infinity(largest)) continue;
    // Never larger than the whole allocation (when the step exceeds the extent).
    result[d] = simplify(max(min(largest, needed[buffer][d].extent()), 1));
  }
  return result;
}

}  // namespace slinky
