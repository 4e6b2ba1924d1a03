// The storage decisions of emit_program (storage_plan.h).
#include "slinky/builder/storage_plan.h"

#include <algorithm>
#include <optional>
#include <type_traits>

#include "slinky/base/assert.h"
#include "slinky/builder/simplify.h"
#include "slinky/builder/substitute.h"

namespace slinky {

storage_planner::storage_planner(const graph& g, const bounds_inference& bounds, const alias_plan& aliases)
    : g_(g), bounds_(bounds), aliases_(aliases), views_(g.buffers.size()) {
  for (std::size_t bi = 0; bi < g.buffers.size(); ++bi) {
    for (int t = aliases.buffers[bi].target; t >= 0; t = aliases.buffers[t].target) {
      views_[t].push_back(static_cast<int>(bi));
    }
  }
}

bool storage_planner::runs_inside(int x, int y) const {
  if (x == y) return true;
  for (loop_level l : g_.funcs[x].compute_chain) {
    if (l.func == y) return true;
  }
  return false;
}

bool storage_planner::runs_in_continuation(int x, loop_level l) const {
  if (x == l.func) return true;
  for (loop_level i : g_.funcs[x].compute_chain) {
    if (i.func == l.func && i.loop < l.loop) return true;
  }
  return false;
}

std::vector<dim_expr> storage_planner::allocation_dims(int bi) const {
  const buffer_expr& buf = *g_.buffers[bi].buffer;
  const var sym = buf.sym();
  std::vector<dim_expr> dims;
  for (std::size_t d = 0; d < buf.rank(); ++d) {
    const dim_expr& declared = buf.dim(d);
    const int dd = static_cast<int>(d);
    dim_expr result;
    result.bounds = bounds_.needed[bi][d];
    // The padding a padded copy writes into this buffer's memory (alias_plan::also_holds).
    const box_expr& holds = aliases_.also_holds[bi];
    if (d < holds.size()) result.bounds = simplify(result.bounds | holds[d]);
    // Declared bounds in terms of the buffer's own bounds are what its producers compute
    // (declared_region), which needed covers; other declared fields read its own bounds as
    // needed.
    auto declared_field = [&](const expr& e) {
      return refers_to_itself(e, sym) ? substitute_buffer(e, sym, make_dims_from_bounds(bounds_.needed[bi])) : e;
    };
    auto declares = [&](const expr& e, const expr& default_value) {
      return !is_default(e, default_value) && !refers_to_itself(e, sym);
    };
    if (declares(declared.bounds.min, buffer_min(sym, dd))) result.bounds.min = declared.bounds.min;
    if (declares(declared.bounds.max, buffer_max(sym, dd))) result.bounds.max = declared.bounds.max;
    if (!is_default(declared.stride, buffer_stride(sym, dd))) result.stride = declared_field(declared.stride);
    // The strides a view of this buffer needs (alias_plan::strides; never with declared ones).
    if (d < aliases_.strides[bi].size()) result.stride = aliases_.strides[bi][d];
    if (!is_default(declared.fold_factor, buffer_fold_factor(sym, dd))) {
      result.fold_factor = declared_field(declared.fold_factor);
    } else {
      result.fold_factor = bounds_.folds[bi][d];
    }
    dims.push_back(std::move(result));
  }
  return dims;
}

bool storage_planner::can_take_memory_of(int b, int a, bool within_iteration) const {
  const buffer_expr& ba = *g_.buffers[a].buffer;
  const buffer_expr& bb = *g_.buffers[b].buffer;
  if (aliases_.buffers[a].target >= 0 || aliases_.buffers[b].target >= 0) return false;
  // (a may have views: its lifetime covers their users.)
  if (!views_[b].empty()) return false;
  if (ba.storage() != bb.storage()) return false;
  if (ba.storage() == (within_iteration ? memory_type::heap : memory_type::stack)) return false;
  if (ba.rank() != bb.rank() || !ba.has_elem_size() || !bb.has_elem_size()) return false;
  const std::optional<index_t> ea = as_constant(ba.elem_size());
  const std::optional<index_t> eb = as_constant(bb.elem_size());
  if (!ea || !eb || *ea != *eb) return false;
  const std::vector<dim_expr> da = allocation_dims(a);
  const std::vector<dim_expr> db = allocation_dims(b);
  auto equal = [](const expr& x, const expr& y) { return match(x, y) || prove_true(x == y); };
  for (std::size_t d = 0; d < da.size(); ++d) {
    if (da[d].stride.defined() || db[d].stride.defined()) return false;
    const bool fa = da[d].fold_factor.defined(), fb = db[d].fold_factor.defined();
    if (fa || fb) {
      if (!within_iteration || !fa || !fb) return false;
      const int dd = static_cast<int>(d);
      if (!is_default(ba.dim(d).fold_factor, buffer_fold_factor(ba.sym(), dd))) return false;
      if (!is_default(bb.dim(d).fold_factor, buffer_fold_factor(bb.sym(), dd))) return false;
      if (!equal(da[d].fold_factor, db[d].fold_factor)) return false;
    }
    if (!equal(da[d].bounds.extent(), db[d].bounds.extent())) return false;
  }
  return true;
}

bool storage_planner::runs_in(const level_item& item, int fi, loop_level l) const {
  switch (item.what) {
  case level_item::kind::func: return runs_inside(fi, item.func);
  case level_item::kind::continuation: return runs_in_continuation(fi, l);
  case level_item::kind::allocation: break;
  }
  SLINKY_ASSERT(false, "the funcs an allocation's statements run are looked up before allocations are made");
  return false;
}

std::optional<allocation> storage_planner::find_allocation(int bi, loop_level l, const std::vector<level_item>& items,
                                                           const std::vector<int>& item_of_func) const {
  const buffer_node& b = g_.buffers[bi];
  std::vector<int> users = b.consumers;
  users.push_back(b.producer);
  for (int ai : views_[bi]) {
    const buffer_node& user = g_.buffers[ai];
    users.insert(users.end(), user.consumers.begin(), user.consumers.end());
    if (user.producer >= 0) users.push_back(user.producer);
  }
  // The items a user runs in (runs_in): the item computing it or a func whose loops contain
  // it, and the continuation.
  std::optional<std::size_t> first;
  std::size_t last = 0;
  auto runs_in_item = [&](int k) {
    if (k < 0) return;
    const std::size_t kk = static_cast<std::size_t>(k);
    first = first ? std::min(*first, kk) : kk;
    last = std::max(last, kk);
  };
  const bool has_continuation = !items.empty() && items.back().what == level_item::kind::continuation;
  for (int u : users) {
    if (u < 0) continue;
    runs_in_item(item_of_func[u]);
    for (loop_level i : g_.funcs[u].compute_chain) {
      if (i.func >= 0) runs_in_item(item_of_func[i.func]);
    }
    if (has_continuation && runs_in_continuation(u, l)) runs_in_item(static_cast<int>(items.size()) - 1);
  }
  if (!first) return std::nullopt;
  const std::vector<int>* same_reach = nullptr;
  if (l.root()) {
    const std::vector<int>& reach = bounds_.reach[b.producer];
    bool same = !reach.empty();
    for (int u : users) same = same && bounds_.reach[u] == reach;
    if (same) same_reach = &reach;
  }
  allocation result{bi, *first, last, aliases_.depth(bi), same_reach, std::nullopt, last, std::nullopt};
  return result;
}

bool storage_planner::computes_whole_need(int fi, const std::vector<loop_level>& chain, std::size_t k0) const {
  auto fixed = [&](const expr& e) {
    for (std::size_t k = k0; k < chain.size(); ++k) {
      if (depends_on(e, g_.loop_var(chain[k])).any()) return false;
    }
    return true;
  };
  auto clamped = [&](const expr& p, const expr& a, auto* op) {
    if (match(p, a)) return true;
    const auto* c = p.as<std::remove_pointer_t<decltype(op)>>();
    if (!c) return false;
    return (match(c->a, a) && fixed(c->b)) || (match(c->b, a) && fixed(c->a));
  };
  const bounds_inference::func_bounds& f = bounds_.funcs[fi];
  for (std::size_t v = 0; v < f.produce.size() && v < f.actual.size(); ++v) {
    if (!clamped(f.produce[v].min, f.actual[v].min, static_cast<const maximum*>(nullptr))) return false;
    if (!clamped(f.produce[v].max, f.actual[v].max, static_cast<const minimum*>(nullptr))) return false;
  }
  return true;
}

std::optional<loop_level> storage_planner::iteration_scope(int bi, loop_level l) const {
  const buffer_node& b = g_.buffers[bi];
  if (b.producer < 0 || aliases_.buffers[bi].target >= 0 || !views_[bi].empty()) return std::nullopt;
  const func_node& p = g_.funcs[b.producer];
  const loop_level c = p.compute;
  if (c == l || c.root()) return std::nullopt;
  const std::vector<loop_level>& chain = p.compute_chain;
  std::size_t k = 0;
  if (!l.root()) {
    auto i = std::find(chain.begin(), chain.end(), l);
    if (i == chain.end()) return std::nullopt;
    k = static_cast<std::size_t>(i - chain.begin()) + 1;
  }
  const std::size_t k0 = k;
  for (; k < chain.size(); ++k) {
    const loop_level i = chain[k];
    if (g_.funcs[i.func].f->loops()[i.loop].is_parallel() || bounds_.pipelined(i)) return std::nullopt;
    if (bounds_.slides_with(b.producer, i) && !computes_whole_need(b.producer, chain, k0) &&
        bounds_.windows_overlap(bi, i)) {
      return std::nullopt;
    }
  }
  for (int u : b.consumers) {
    const std::vector<loop_level>& uc = g_.funcs[u].compute_chain;
    if (std::find(uc.begin(), uc.end(), c) == uc.end() && !runs_in_continuation(u, c)) return std::nullopt;
  }
  return c;
}

std::vector<allocation> storage_planner::level_allocations(loop_level l, const std::vector<level_item>& items) const {
  std::vector<allocation> allocations;
  std::vector<int> item_of_func(g_.funcs.size(), -1);
  for (std::size_t k = 0; k < items.size(); ++k) {
    if (items[k].what == level_item::kind::func) item_of_func[items[k].func] = static_cast<int>(k);
  }
  for (std::size_t bi = 0; bi < g_.buffers.size(); ++bi) {
    const buffer_node& b = g_.buffers[bi];
    if (b.producer < 0 || b.is_output || b.is_input || b.store != l) continue;
    std::optional<allocation> a = find_allocation(static_cast<int>(bi), l, items, item_of_func);
    if (a) allocations.push_back(*a);
  }
  // The items of the bodies of the loops inside l (their funcs, then the continuation: the
  // order emit_level gives them), made once per loop.
  struct loop_body {
    loop_level level;
    std::vector<level_item> items;
    std::vector<int> item_of_func;
  };
  std::vector<loop_body> bodies;
  for (allocation& a : allocations) {
    const std::optional<loop_level> c = iteration_scope(a.buffer, l);
    if (!c) continue;
    auto body = std::find_if(bodies.begin(), bodies.end(), [&](const loop_body& lb) { return lb.level == *c; });
    if (body == bodies.end()) {
      loop_body lb{*c, {}, std::vector<int>(g_.funcs.size(), -1)};
      for (std::size_t fi = 0; fi < g_.funcs.size(); ++fi) {
        if (g_.funcs[fi].compute != *c) continue;
        lb.item_of_func[fi] = static_cast<int>(lb.items.size());
        lb.items.push_back({level_item::kind::func, static_cast<int>(fi), stmt(), {}, nullptr});
      }
      lb.items.push_back({level_item::kind::continuation, 0, stmt(), {}, nullptr});
      bodies.push_back(std::move(lb));
      body = bodies.end() - 1;
    }
    const std::optional<allocation> in = find_allocation(a.buffer, *c, body->items, body->item_of_func);
    if (!in) continue;
    a.inner = c;
    a.inner_first = in->first_user;
    a.inner_last = in->last_user;
    a.memory_inner_last = in->last_user;
  }
  std::stable_sort(allocations.begin(), allocations.end(), [](const allocation& a, const allocation& b) {
    if (a.first_user != b.first_user) return a.first_user < b.first_user;
    return a.alias_depth < b.alias_depth;
  });
  return allocations;
}

void storage_planner::hand_on_memory(std::vector<allocation>& allocations) const {
  for (std::size_t i = 0; i < allocations.size(); ++i) {
    allocation& b = allocations[i];
    if (b.donor) continue;
    int tries = 0;
    for (std::size_t j = i; j-- > 0 && tries < 4;) {
      allocation& a = allocations[j];
      if (a.donor || a.memory_last_user >= b.first_user) continue;
      const bool same_idle = a.reach == b.reach || (a.reach && b.reach && *a.reach == *b.reach);
      if (!same_idle) continue;
      ++tries;
      if (!can_take_memory_of(b.buffer, a.buffer)) continue;
      b.donor = a.buffer;
      a.memory_last_user = b.last_user;
      break;
    }
  }
}

void storage_planner::share_within_iterations(std::vector<allocation>& allocations) const {
  std::vector<std::size_t> order;
  for (std::size_t i = 0; i < allocations.size(); ++i) {
    if (allocations[i].inner) order.push_back(i);
  }
  if (order.size() < 2) return;
  std::stable_sort(order.begin(), order.end(), [&](std::size_t x, std::size_t y) {
    const allocation& a = allocations[x];
    const allocation& b = allocations[y];
    if (a.first_user != b.first_user) return a.first_user < b.first_user;
    return a.inner_first < b.inner_first;
  });
  std::vector<bool> shares(allocations.size(), false);
  bool any = false;
  for (std::size_t oi = 0; oi < order.size(); ++oi) {
    allocation& b = allocations[order[oi]];
    int tries = 0;
    for (std::size_t oj = oi; oj-- > 0 && tries < 4;) {
      allocation& a = allocations[order[oj]];
      if (a.donor || *a.inner != *b.inner || a.first_user != b.first_user || a.alias_depth != b.alias_depth ||
          a.memory_inner_last >= b.inner_first) {
        continue;
      }
      const bool same_idle = a.reach == b.reach || (a.reach && b.reach && *a.reach == *b.reach);
      if (!same_idle) continue;
      ++tries;
      if (!can_take_memory_of(b.buffer, a.buffer, /*within_iteration=*/true)) continue;
      b.donor = a.buffer;
      a.memory_inner_last = b.inner_last;
      shares[order[oi]] = shares[order[oj]] = true;
      any = true;
      break;
    }
  }
  if (!any) return;
  // Allocations of the same first use and depth wrap the same items: among them, those that share
  // nest in the order of their first use in the loop (a memory before the buffers taking it).
  for (std::size_t begin = 0; begin < allocations.size();) {
    std::size_t end = begin + 1;
    while (end < allocations.size() && allocations[end].first_user == allocations[begin].first_user &&
           allocations[end].alias_depth == allocations[begin].alias_depth) {
      ++end;
    }
    std::vector<std::size_t> slots;
    std::vector<allocation> sharing;
    for (std::size_t k = begin; k < end; ++k) {
      if (!shares[k]) continue;
      slots.push_back(k);
      sharing.push_back(allocations[k]);
    }
    std::stable_sort(sharing.begin(), sharing.end(),
                     [](const allocation& a, const allocation& b) { return a.inner_first < b.inner_first; });
    for (std::size_t k = 0; k < slots.size(); ++k) allocations[slots[k]] = std::move(sharing[k]);
    begin = end;
  }
}

void storage_planner::add_frees(std::vector<level_item>& items, const std::vector<allocation>& allocations) const {
  for (const allocation& a : allocations) {
    if (a.memory_last_user + 1 >= items.size() || a.donor || aliases_.is_alias(a.buffer)) continue;
    const var sym = g_.buffers[a.buffer].buffer->sym();
    items[a.memory_last_user].frees.push_back(check::make(call::make(intrinsic::free, {sym})));
  }
}

}  // namespace slinky
