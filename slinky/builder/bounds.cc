// Bounds inference over the scheduled graph.
#include "slinky/builder/bounds.h"

#include <algorithm>

namespace slinky {

namespace {

// The union over all values of the symbols in `b` of the interval i: only non-empty intervals
// contribute points, so it is the smallest min to the largest max.
interval_expr widen(const interval_expr& i, const bounds_map& b) {
  if (i.is_point()) return bounds_of(i.min, b);
  return interval_expr(bounds_of(i.min, b).min, bounds_of(i.max, b).max);
}

int index_of(const std::vector<var>& vars, var v) {
  for (std::size_t i = 0; i < vars.size(); ++i) {
    if (vars[i] == v) return static_cast<int>(i);
  }
  return -1;
}

}  // namespace

bounds_inference::bounds_inference(const graph& g)
    : g_(g), vars(g.funcs.size()), regions(g.funcs.size()), needed(g.buffers.size()) {
  for (std::size_t fi = 0; fi < g.funcs.size(); ++fi) {
    for (const func::output& o : g.funcs[fi].f->outputs()) {
      for (var v : o.dims) {
        if (index_of(vars[fi], v) < 0) vars[fi].push_back(v);
      }
    }
  }
  // Consumers first: a func's region depends on its consumers' regions.
  for (int fi = static_cast<int>(g.funcs.size()) - 1; fi >= 0; --fi) infer_func(fi);

  for (std::size_t bi = 0; bi < g.buffers.size(); ++bi) {
    const buffer_node& b = g.buffers[bi];
    if (b.producer >= 0 && !b.is_output && !b.is_input) {
      needed[bi] = lift(output_region(bi), g.funcs[b.producer].compute_chain, b.store);
      continue;
    }
    box_expr need(b.buffer->rank(), interval_expr::none());
    for (int c : b.consumers) need = need | lift(need_at_call(c, bi), g.funcs[c].call_chain, loop_level());
    for (interval_expr& i : need) i = simplify(i);
    needed[bi] = std::move(need);
  }
}

interval_expr bounds_inference::loop_bounds(loop_level l) const {
  return regions[l.func][index_of(vars[l.func], g_.loop_var(l))];
}

interval_expr bounds_inference::crop_at_call(int fi, var v) const {
  const interval_expr& region = regions[fi][index_of(vars[fi], v)];
  for (const func::loop_info& l : g_.funcs[fi].f->loops()) {
    if (l.sym != v) continue;
    expr max = min(v + l.step - 1, region.max);
    return interval_expr(v, simplify(max));
  }
  return region;
}

box_expr bounds_inference::need_at_call(int fi, int buffer) const {
  const func& f = *g_.funcs[fi].f;
  const buffer_expr* b = g_.buffers[buffer].buffer.get();
  bounds_map crops;
  for (var v : vars[fi]) crops[v] = crop_at_call(fi, v);
  box_expr result(b->rank(), interval_expr::none());
  for (const func::input& i : f.inputs()) {
    if (i.buffer.get() != b) continue;
    for (std::size_t d = 0; d < b->rank() && d < i.bounds.size(); ++d) {
      result[d] |= widen(i.bounds[d], crops);
    }
  }
  for (interval_expr& i : result) i = simplify(i);
  return result;
}

box_expr bounds_inference::lift(box_expr b, const std::vector<loop_level>& chain, loop_level to) const {
  int stop = -1;
  if (!to.root()) {
    auto i = std::find(chain.begin(), chain.end(), to);
    stop = i == chain.end() ? -1 : static_cast<int>(i - chain.begin());
  }
  for (int j = static_cast<int>(chain.size()) - 1; j > stop; --j) {
    bounds_map loop_range;
    loop_range[g_.loop_var(chain[j])] = loop_bounds(chain[j]);
    for (interval_expr& i : b) i = simplify(widen(i, loop_range));
  }
  return b;
}

box_expr bounds_inference::output_region(int buffer) const {
  const buffer_node& b = g_.buffers[buffer];
  const func& f = *g_.funcs[b.producer].f;
  for (const func::output& o : f.outputs()) {
    if (o.buffer.get() != b.buffer.get()) continue;
    box_expr result;
    for (var v : o.dims) result.push_back(regions[b.producer][index_of(vars[b.producer], v)]);
    return result;
  }
  return box_expr();
}

void bounds_inference::infer_func(int fi) {
  const func_node& fn = g_.funcs[fi];
  std::vector<interval_expr>& region = regions[fi];
  region.assign(vars[fi].size(), interval_expr::none());
  for (const func::output& o : fn.f->outputs()) {
    const int bi = g_.buffer_index(o.buffer.get());
    const buffer_node& b = g_.buffers[bi];
    if (b.is_output) {
      // A pipeline output is computed over its whole bounds.
      for (std::size_t d = 0; d < o.dims.size(); ++d) {
        region[index_of(vars[fi], o.dims[d])] |= buffer_bounds(b.buffer->sym(), static_cast<index_t>(d));
      }
      continue;
    }
    for (int c : b.consumers) {
      box_expr need = lift(need_at_call(c, bi), g_.funcs[c].call_chain, fn.compute);
      for (std::size_t d = 0; d < o.dims.size() && d < need.size(); ++d) {
        region[index_of(vars[fi], o.dims[d])] |= need[d];
      }
    }
  }
  for (interval_expr& i : region) {
    // Nothing reads this variable's dimension: compute nothing.
    if (is_positive_infinity(i.min) && is_negative_infinity(i.max)) i = interval_expr(0, -1);
    i = simplify(i);
  }
}

}  // namespace slinky
