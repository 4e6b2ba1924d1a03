// The scheduler object: the groups of funcs in order, each one's chosen candidate set on the
// funcs and reported (docs/scheduler.md, "The algorithm").
#include "slinky/scheduler/scheduler.h"

#include <algorithm>
#include <cmath>
#include <iterator>
#include <optional>
#include <unordered_map>

#include "slinky/base/assert.h"

namespace slinky {
namespace scheduler_internal {

namespace {

const char* describe(place_reason r) {
  switch (r) {
  case place_reason::output: return "produces an output";
  case place_reason::slides: return "slides with the loop (computes only the new part of its window)";
  case place_reason::moves: return "moves with the loop";
  case place_reason::pinned_root: return "computed at the root by the client";
  case place_reason::consumer_at_root: return "a consumer is computed at the root";
  case place_reason::invariant: return "its region does not move with the loop (a reduction over it?): root";
  case place_reason::recomputed:
    return "computed whole in each iteration of the data-parallel loop (recomputes the overlap with the previous one)";
  case place_reason::not_a_translation: return "its region does not translate with the loop: root";
  case place_reason::empty_window:
    return "its window is empty in some iterations (clamped by a crop, as a part of a concatenation along the loop's "
           "dim): root";
  case place_reason::unknown_region: return "its region cannot be evaluated: root";
  }
  return "";
}

void clear_schedule(sched_node& n, const sched_graph& g) {
  n.f->loops({});
  n.f->compute_at(std::optional<loop_id>());
  for (const func::output& o : n.f->outputs()) {
    if (!g.outputs.count(o.buffer.get())) o.buffer->store_at(std::optional<loop_id>());
  }
  n.user_scheduled = n.pinned_root = n.pinned_loop = n.client_loops = false;
}

}  // namespace

scheduler::scheduler(const std::vector<buffer_expr_ptr>& inputs, const std::vector<buffer_expr_ptr>& outputs,
                     const schedule_shapes& shapes, const machine& m, const schedule_options& options)
    : model_(m, options.cache_fraction), options_(options), analyzer_(g_, full_, model_) {
  options_.cache_fraction = model_.cache_fraction();
  build_sched_graph(inputs, outputs, shapes, g_);
  if (options_.reschedule) {
    for (sched_node& n : g_.nodes) clear_schedule(n, g_);
  }
  full_regions(g_, model_, full_);
}

schedule_report scheduler::run() {
  // The members of each head's group, consumers first (the head first).
  std::vector<std::vector<int>> members(g_.nodes.size());
  for (int i : g_.order) {
    if (g_.nodes[i].group >= 0) members[g_.nodes[i].group].push_back(i);
  }
  report_.funcs.resize(g_.nodes.size());
  for (std::size_t i = 0; i < g_.nodes.size(); ++i) {
    schedule_report::func_decision& d = report_.funcs[i];
    d.f = g_.nodes[i].f;
    // Funcs feeding several outputs stay where the builder puts them: at the root (the innermost
    // loop containing all their consumers, which are in different outputs' loops).
    const bool shared = g_.nodes[i].group < 0;
    const bool client = g_.nodes[i].user_scheduled;
    d.where = shared && !client ? schedule_report::placement::root : schedule_report::placement::left_alone;
    d.why = !shared ? "" : client ? "scheduled by the client" : "feeds several outputs: root";
  }
  // Heads in the order found (the order of the outputs), then the subgroups in the order found:
  // deterministic. The members planned in subgroups are bounded by a few times the graph's funcs
  // (a chain of reductions would otherwise plan a subgroup per func, quadratic in its length).
  for (std::size_t h = 0; h < g_.nodes.size(); ++h) {
    if (g_.nodes[h].head) queue_.push_back({static_cast<int>(h), std::move(members[h])});
  }
  const std::size_t heads = queue_.size();
  std::size_t budget = 4 * g_.nodes.size() + 64;
  claim_.assign(g_.nodes.size(), {-1, -1});
  std::vector<int> at_root;
  for (std::size_t q = 0; q < queue_.size(); ++q) {
    const int h = queue_[q].first;
    std::vector<int> group = std::move(queue_[q].second);
    at_root.clear();
    schedule_group(h, group, q >= heads, at_root);
    const std::size_t first = queue_.size();
    find_subgroups(at_root, static_cast<int>(q));
    for (std::size_t k = first; k < queue_.size(); ++k) {
      const std::size_t size = queue_[k].second.size();
      if (size > budget) {
        queue_.resize(k);
        break;
      }
      budget -= size;
    }
  }
  return std::move(report_);
}

const char* scheduler::left_alone(int h, const std::vector<int>& group) const {
  const sched_node& head = g_.nodes[h];
  const bool pinned_inside =
      std::any_of(group.begin(), group.end(), [&](int i) { return g_.nodes[i].pinned_loop && i != h; });
  const bool loops_inside =
      std::any_of(group.begin(), group.end(), [&](int i) { return g_.nodes[i].client_loops && i != h; });
  return head.user_scheduled        ? "the client scheduled the func of this output"
         : pinned_inside            ? "a func feeding this output is computed at a loop by the client"
         : loops_inside             ? "a func feeding this output has loops or storage at a loop set by the client"
         : head.empty_output        ? "the output is empty: nothing to compute"
         : head.shape_rank_mismatch ? "the shape given for this output has another rank than its buffer"
         : !head.full_known         ? "no shape given for this output"
                                    : nullptr;
}

// After a loop, or when no loop could be analyzed at all (an output of one element, say), the
// members left at the root may head subgroups; not when no loop was cheaper, where a subgroup's
// loops would be the loops just rejected.
void scheduler::schedule_group(int h, const std::vector<int>& group, bool subgroup, std::vector<int>& at_root) {
  schedule_report::loop_decision ld;
  ld.f = g_.nodes[h].f;
  ld.produces_output = !subgroup;
  if (!subgroup) {
    report_.funcs[h].where = schedule_report::placement::output;
    if (const char* why = left_alone(h, group)) {
      ld.why = why;
      for (int i : group) report_.funcs[i].why = i == h ? "produces an output left alone" : why;
      report_.loops.push_back(ld);
      return;
    }
    report_.funcs[h].why = "produces an output";
  }
  group_choice c = choose(h, group);
  ld.cost_ns = c.best.estimate.ns;
  ld.unscheduled_cost_ns = c.unscheduled_ns;
  ld.reread_cost_ns = c.best.estimate.reread_ns;
  ld.unscheduled_reread_cost_ns = c.unscheduled_reread_ns;
  // For a tile, the loop it beat (the refinement stores the tile's funcs by default when it tries
  // that loop, which has no outer loop to store them at).
  if (c.next && !c.next->recompute && !c.next->tiled()) {
    ld.has_next = true;
    ld.next_cost_ns = c.next->estimate.ns;
    if (c.next->looped()) {
      const loop_level& l = c.next->inner();
      ld.next_dim = l.dim;
      ld.next_var = g_.nodes[h].f->outputs()[0].dims[l.dim];
      ld.next_step = l.step;
      ld.next_iterations = c.next->iterations;
      ld.next_granularity = c.next->granularity;
      ld.next_parallel = l.parallel;
    }
  }
  if (!c.best.looped()) {
    if (!c.considered) {
      std::copy_if(group.begin(), group.end(), std::back_inserter(at_root),
                   [&](int i) { return i != h && !g_.nodes[i].user_scheduled; });
    }
    // A subgroup without a loop stays as its group's loop left it: nothing to report.
    if (!subgroup) report_unlooped(h, group, c, ld);
    return;
  }
  place(h, group, c.best);
  apply(h, c.best, at_root);
  report_loop(h, c.best, ld);
}

void scheduler::report_unlooped(int h, const std::vector<int>& group, const group_choice& c,
                                schedule_report::loop_decision& ld) {
  ld.why = c.considered ? "no loop is cheaper than any loop the cost model considered"
                        : "no loop can be analyzed (no dim of extent 2 or more with known regions)";
  for (int i : group) {
    if (i == h) continue;
    const bool client = g_.nodes[i].user_scheduled;
    report_.funcs[i].where = client ? schedule_report::placement::left_alone : schedule_report::placement::root;
    report_.funcs[i].why = client ? "scheduled by the client" : "its output has no loop: root";
  }
  report_.loops.push_back(ld);
}

void scheduler::place(int h, const std::vector<int>& group, candidate& c) {
  // The chosen loop's analysis again (analysis_ holds the last dim considered), for its decisions
  // per func.
  analyzer_.analyze(h, c.inner().dim, group, c.recompute, analysis_,
                    c.tiled() ? strip{c.loops[0].dim, c.loops[0].step} : strip());
  c.sites.clear();
  for (int i : group) {
    func_site s;
    s.node = i;
    s.in_loop = analysis_.in_loop[i];
    s.stored_in_loop = s.in_loop && c.recompute && i != h;
    s.client = i != h && g_.nodes[i].user_scheduled;
    c.sites.push_back(s);
  }
}

void scheduler::apply(int h, const candidate& c, std::vector<int>& at_root) {
  const sched_node& head = g_.nodes[h];
  SLINKY_ASSERT(c.looped() && c.loops.size() <= 2, "a loop, or a tile's two");
  const loop_level& l = c.inner();
  SLINKY_ASSERT(l.dim >= 0 && static_cast<std::size_t>(l.dim) < head.f->outputs()[0].dims.size() && l.step >= 1,
                "the loop is over a dim of the head's output");
  SLINKY_ASSERT(!c.tiled() || (c.loops[0].dim >= 0 &&
                               static_cast<std::size_t>(c.loops[0].dim) < head.f->outputs()[0].dims.size() &&
                               c.loops[0].dim != l.dim && c.loops[0].step >= 1),
                "a tile's outer loop is over another dim of the head's output");
  SLINKY_ASSERT(!c.sites.empty() && c.sites.front().node == h, "the sites are placed, the head's first");
  const var v = head.f->outputs()[0].dims[l.dim];
  std::vector<func::loop_info> loops = {func::loop_info(v, l.step, l.parallel ? loop::parallel : loop::serial)};
  // A tile's outer loop, after the inner one (innermost first).
  if (c.tiled()) {
    loops.emplace_back(head.f->outputs()[0].dims[c.loops[0].dim], c.loops[0].step,
                       c.loops[0].parallel ? loop::parallel : loop::serial);
  }
  head.f->loops(std::move(loops));
  for (const func_site& s : c.sites) {
    if (s.node == h || s.client) continue;
    const sched_node& n = g_.nodes[s.node];
    if (!s.in_loop) {
      n.f->compute_root();
      at_root.push_back(s.node);
      continue;
    }
    // The builder's default placement: the innermost loop containing its consumers (a subgroup's
    // members were set at the root by the enclosing group).
    n.f->compute_at(std::optional<loop_id>());
    // In a data-parallel loop, stored inside it: each iteration its own windows (the builder
    // would store a func whose windows overlap outside the loop and pipeline it).
    if (s.stored_in_loop) {
      for (const func::output& o : n.f->outputs()) o.buffer->store_at(loop_id{head.f, v});
    }
    // In a tile, stored at the outer loop: each strip allocates its windows once and they slide
    // along the inner loop (stored by default, at the root, they fold along dim 0 by a strip plus
    // the halo, and nearly every call's crop wraps around the fold: the wide stencil's hand
    // tiles took 40 times as long, their callbacks element by element).
    if (c.tiled()) {
      const var outer = head.f->outputs()[0].dims[c.loops[0].dim];
      for (const func::output& o : n.f->outputs()) o.buffer->store_at(loop_id{head.f, outer});
    }
  }
}

void scheduler::report_loop(int h, const candidate& c, schedule_report::loop_decision& ld) {
  const sched_node& head = g_.nodes[h];
  const loop_level& l = c.inner();
  const loop_analysis& a = analysis_;
  ld.looped = true;
  ld.why = c.recompute                        ? "cheapest loop; parallel, data-parallel with the overlaps recomputed"
           : l.parallel                       ? "cheapest loop; parallel"
           : c.tiled() && c.loops[0].parallel ? "cheapest loop; a tile, its strips parallel"
           : c.tiled() && c.estimate.reread_level >= 0
               ? "cheapest loop; a tile (operands read whole for every row are served beyond the L2 without one)"
           : c.tiled() ? "cheapest loop; a tile (the working set of a loop over one dim is served beyond the L2)"
                       : "cheapest loop";
  ld.dim = l.dim;
  ld.loop_var = head.f->outputs()[0].dims[l.dim];
  ld.step = l.step;
  ld.parallel = l.parallel;
  ld.recomputes = c.recompute;
  ld.iterations = (a.extent() + l.step - 1) / l.step;
  ld.working_set_bytes = static_cast<index_t>(std::ceil(c.estimate.working_set));
  ld.workers = c.workers;
  ld.level = c.estimate.level + 1;
  ld.budget_bytes = static_cast<index_t>(model_.budget(c.estimate.level));
  ld.memory_bytes = static_cast<index_t>(std::ceil(c.estimate.memory));
  if (c.tiled()) {
    ld.outer_dim = c.loops[0].dim;
    ld.outer_var = head.f->outputs()[0].dims[ld.outer_dim];
    ld.outer_step = c.loops[0].step;
    ld.outer_iterations = c.strips;
    ld.outer_parallel = c.loops[0].parallel;
  }
  ld.calls = ld.iterations * c.strips * a.counts.calls_per_iteration;
  ld.granularity = a.granularity;
  ld.hinted_multiple = a.hinted_multiple;
  ld.invariant_bytes = static_cast<index_t>(a.counts.invariant_bytes);
  for (const func_site& s : c.sites) {
    schedule_report::func_decision& d = report_.funcs[s.node];
    if (s.in_loop) {
      d.elements_per_iteration =
          static_cast<index_t>(a.elements[s.node](static_cast<double>(l.step), a.probe_step()) + 0.5);
      d.moving_dim = a.moving_dim[s.node];
    } else {
      ld.calls += 1;
    }
    if (s.node == h) continue;
    if (s.client) {
      d.where = schedule_report::placement::left_alone;
      d.why = "scheduled by the client";
      continue;
    }
    d.where = s.in_loop ? schedule_report::placement::in_loop : schedule_report::placement::root;
    d.why = describe(a.reason[s.node]);
  }
  report_.loops.push_back(ld);
}

// Each func whose consumers all belong to one subgroup joins it; any other heads a new one.
void scheduler::find_subgroups(const std::vector<int>& at_root, int round) {
  std::vector<std::pair<int, std::vector<int>>> found;
  std::unordered_map<int, std::size_t> index;
  for (int i : at_root) {
    const sched_node& n = g_.nodes[i];
    int owner = -1;
    for (std::size_t k = 0; k < n.consumers.size(); ++k) {
      const std::pair<int, int>& c = claim_[n.consumers[k]];
      const int o = c.first == round ? c.second : -1;
      if (o < 0 || (k > 0 && o != owner)) {
        owner = -1;
        break;
      }
      owner = o;
    }
    if (owner >= 0) {
      claim_[i] = {round, owner};
      found[index.at(owner)].second.push_back(i);
    } else if (n.full_known && n.rank > 0) {
      claim_[i] = {round, i};
      index[i] = found.size();
      found.push_back({i, {i}});
    }
  }
  for (auto& f : found) queue_.push_back(std::move(f));
}

}  // namespace scheduler_internal
}  // namespace slinky
