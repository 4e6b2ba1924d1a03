// The scheduler's entry point: chooses a loop per output with the cost model of loop_plan.h and
// sets the schedule on the funcs.
#include "slinky/scheduler/schedule.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <iterator>
#include <sstream>
#include <unordered_map>

#include "slinky/scheduler/graph_walk.h"
#include "slinky/scheduler/loop_plan.h"

namespace slinky {

using namespace scheduler_internal;

schedule_shapes& schedule_shapes::add(buffer_expr_ptr b, const std::vector<index_t>& extents) {
  buffer_shape s;
  s.buffer = std::move(b);
  for (index_t e : extents) s.bounds.emplace_back(0, e - 1);
  buffers.push_back(std::move(s));
  return *this;
}

schedule_shapes& schedule_shapes::add(buffer_expr_ptr b, const raw_buffer& like) {
  buffer_shape s;
  s.buffer = std::move(b);
  for (std::size_t d = 0; d < like.rank; ++d) s.bounds.emplace_back(like.dim(d).min(), like.dim(d).max());
  s.elem_size = static_cast<index_t>(like.elem_size);
  buffers.push_back(std::move(s));
  return *this;
}

schedule_shapes& schedule_shapes::add_scalar(var v, index_t value) {
  scalars.emplace_back(v, value);
  return *this;
}

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

// How much more than the cheapest step's estimate a serial loop's step with a smaller working set
// may cost and be preferred (best_step).
const double step_cost_tolerance = 0.03;

// The best step for a plan with `workers` iterations in flight, of the candidates: 1 and the
// largest steps fitting the L1 and L2 budgets, each a multiple of the plan's granularity; the L3
// budget is considered only when not even a step of 1 fits L2. L2 is the core's own; L3 is shared
// with the other cores and processes, and the model's figures for it are the least reliable. A
// parallel loop also prices the powers of two up to max_step. The cheapest candidate, or for a
// serial loop the one with the smallest working set within step_cost_tolerance of it. Sets `cost`
// to the chosen step's estimate and `cheapest` to the cheapest candidate's (the loop's value beside
// other loops and no loop: what it can do at best).
index_t best_step(const loop_plan& plan, int workers, index_t max_step, const machine& m, double fraction, double& cost,
                  double& cheapest) {
  const index_t caps[3] = {m.l1_bytes, m.l2_bytes, m.l3_bytes};
  struct candidate {
    index_t step;
    double cost, working_set;
    int level;
  };
  // At most 1 + 2 per level + one per power of two.
  candidate candidates[72];
  int n = 0;
  // Prices `step` (once) and returns the level its working set is served from.
  auto consider = [&](index_t step) {
    for (int i = 0; i < n; ++i) {
      if (candidates[i].step == step) return candidates[i].level;
    }
    if (n == static_cast<int>(std::size(candidates))) return 3;
    candidate& c = candidates[n++];
    c.step = step;
    c.cost = plan_cost(plan, step, workers, m, fraction, &c.working_set, &c.level);
    return c.level;
  };
  consider(aligned_step(plan, 1, max_step));
  bool fits_l2 = false;
  for (int level = 0; level < 3; ++level) {
    if (caps[level] <= 0 || (level == 2 && fits_l2)) continue;
    double budget = fraction * static_cast<double>(caps[level]);
    // The workers of a data-parallel loop share the L3, each with its own working set.
    if (level == 2 && workers > 1 && plan.sliding == 0) budget /= workers;
    const index_t step = largest_step_within(plan, budget, workers, max_step);
    if (step == 0) continue;
    consider(aligned_step(plan, step, max_step));
    // A parallel loop also tries the power of two below: with a power-of-two extent its
    // iterations are then all whole and spread evenly over the workers.
    if (workers > 1) {
      const index_t p = floor_power_of_two(step);
      if (p != step) consider(aligned_step(plan, p, max_step));
    }
    fits_l2 = true;
  }
  // A parallel loop's larger steps have fewer iterations to hand to workers (and, pipelined, fewer
  // overlaps to pass between cores; data-parallel, fewer to recompute): the powers of two beyond
  // the budgets are priced too (the model weighs these against the slower level the larger
  // working set is served from), up to the last whose working set fits the L3's budget (when
  // some step fits L2's). Beyond, the times were erratic: the 2-stage stencil pipelined in strips
  // of 64 rows (4 MiB of ring buffers and windows) took 5.7 ms in one run of
  // `scheduler_benchmark --cpu-time --only parallel` and 7.7 and 7.9 ms in two others, where
  // strips of 32 (2 MiB) took 5.6 to 5.7 ms in all three; the 3-stage one in strips of 64, 10.2
  // to 12.8 ms against 9.3 to 9.6 in strips of 32.
  if (workers > 1) {
    for (index_t p = 2; p <= max_step; p *= 2) {
      const int before = n;
      if (consider(aligned_step(plan, p, max_step)) > 2 && fits_l2) {
        // Served from memory: not a candidate, nor any larger step.
        n = before;
        break;
      }
    }
  }
  cheapest = candidates[0].cost;
  for (int i = 1; i < n; ++i) cheapest = std::min(cheapest, candidates[i].cost);
  // The model's estimates are not finer than a few percent: of the steps of a serial loop priced
  // within step_cost_tolerance of the cheapest, the one with the smallest working set (less
  // memory for about the same time), the larger step on a tie. Not for a parallel loop: its
  // smaller steps cost more than the model sees (more iterations handed out, chunks of 16384 of
  // the parallel chain of 4 took 0.89-0.94 of the time of 24576's at 3% more estimated).
  const double limit = cheapest * (1 + (workers == 1 ? step_cost_tolerance : 0));
  const candidate* best = nullptr;
  for (int i = 0; i < n; ++i) {
    const candidate& c = candidates[i];
    if (c.cost > limit) continue;
    if (!best || c.working_set < best->working_set || (c.working_set == best->working_set && c.step > best->step)) {
      best = &c;
    }
  }
  cost = best->cost;
  return best->step;
}

struct group_choice {
  // Some loop could be analyzed (a dim of extent >= 2 with known regions).
  bool considered = false;
  bool looped = false;
  int dim = -1;
  index_t step = 0;
  bool parallel = false;
  // Parallel, and data-parallel although windows overlap: the funcs whose windows overlap
  // recompute the overlap in each iteration instead of sliding.
  bool recompute = false;
  int workers = 1;
  // The estimate of the chosen step, and the cheapest of the loop's steps (best_step), by which
  // the choices are compared.
  double cost = 0, cheapest = 0;
  double unscheduled = 0;
};

// Chooses the loop of head h's group: the cheapest dim and step, serial or parallel, or none.
group_choice choose_loop(const sched_graph& g, int h, const std::vector<int>& members,
                         const std::vector<index_range>& full, const machine& m, const schedule_options& o,
                         plan_scratch& scratch, loop_plan& plan, loop_plan& recompute_plan) {
  group_choice best;
  best.unscheduled = unscheduled_cost(g, members, m, o.cache_fraction);
  best.cost = best.cheapest = best.unscheduled;
  const sched_node& head = g.nodes[h];
  // The outermost dims first: on a tie the outer dim wins (longer contiguous rows per call).
  for (int d = static_cast<int>(head.out_slots[0].size()) - 1; d >= 0; --d) {
    plan_loop(g, h, d, members, full, m, o.cache_fraction, scratch, plan);
    if (!plan.ok) continue;
    best.considered = true;
    group_choice c;
    c.looped = true;
    c.dim = d;
    c.step = best_step(plan, 1, plan.extent, m, o.cache_fraction, c.cost, c.cheapest);
    if (o.parallel && m.threads > 1) {
      // At least two iterations per worker.
      const index_t max_step = std::max<index_t>(1, plan.extent / (2 * m.threads));
      // Parallel only for a clear gain: the model does not see memory bandwidth shared by the cores.
      double limit = 0.8 * c.cheapest;
      auto consider_parallel = [&](const loop_plan& p, int workers, bool recompute) {
        if (workers < 2) return;
        double par_cost, par_cheapest;
        const index_t par_step = best_step(p, workers, max_step, m, o.cache_fraction, par_cost, par_cheapest);
        if (par_cheapest < limit) {
          limit = par_cheapest;
          c.step = par_step;
          c.cost = par_cost;
          c.cheapest = par_cheapest;
          c.parallel = true;
          c.recompute = recompute;
          c.workers = workers;
        }
      };
      // A loop whose funcs slide is pipelined: at most one iteration in flight per func in it.
      consider_parallel(plan, plan.sliding > 0 ? std::min(m.threads, plan.calls_per_iteration) : m.threads, false);
      if (plan.sliding > 0) {
        // Or data-parallel, every iteration computing its funcs' whole windows: all the workers,
        // independent iterations, the overlaps computed again.
        plan_loop(g, h, d, members, full, m, o.cache_fraction, scratch, recompute_plan, true);
        if (recompute_plan.ok) consider_parallel(recompute_plan, m.threads, true);
      }
    }
    if (c.cheapest < best.cheapest) {
      c.unscheduled = best.unscheduled;
      c.considered = true;
      best = c;
    }
    // The model prices bytes and calls, not the shape of the pieces: a loop over an inner dim cuts
    // rows into short, strided pieces (partial cache lines, short loops in the callbacks). So the
    // outermost dim whose loop beats no loop with a working set within the L2 budget is taken, and
    // so is the outermost dim whose loop is parallel (its steps pass the budgets where fewer,
    // larger iterations pay: the workers' hand-offs and recomputed overlaps).
    double ws = 0;
    plan_cost(c.recompute ? recompute_plan : plan, c.step, c.workers, m, o.cache_fraction, &ws);
    if (best.looped && best.dim == d && (c.parallel || level_of(ws, m, o.cache_fraction) <= 1)) break;
  }
  return best;
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

namespace {

// Decides, sets and reports the schedule of head h's group: an output's (subgroup false), or the
// funcs feeding only a func left at the root by its own group's loop (subgroup true; h keeps its
// placement and gets a loop of its own when one pays). Appends to `at_root` the members left at
// the root that may head subgroups: after a loop, or when no loop could be analyzed at all (an
// output of one element, say); not when no loop was cheaper, where a subgroup's loops would be
// the loops just rejected.
void schedule_group(const sched_graph& g, int h, const std::vector<int>& group, bool subgroup,
                    const std::vector<index_range>& full, const machine& m, const schedule_options& options,
                    plan_scratch& scratch, loop_plan& plan, loop_plan& recompute_plan, schedule_report& report,
                    std::vector<int>& at_root) {
  const sched_node& head = g.nodes[h];
  schedule_report::loop_decision ld;
  ld.f = head.f;
  ld.produces_output = !subgroup;
  if (!subgroup) {
    report.funcs[h].where = schedule_report::placement::output;
    const bool pinned_inside =
        std::any_of(group.begin(), group.end(), [&](int i) { return g.nodes[i].pinned_loop && i != h; });
    const bool loops_inside =
        std::any_of(group.begin(), group.end(), [&](int i) { return g.nodes[i].client_loops && i != h; });
    const char* left_alone =
        head.user_scheduled        ? "the client scheduled the func of this output"
        : pinned_inside            ? "a func feeding this output is computed at a loop by the client"
        : loops_inside             ? "a func feeding this output has loops or storage at a loop set by the client"
        : head.empty_output        ? "the output is empty: nothing to compute"
        : head.shape_rank_mismatch ? "the shape given for this output has another rank than its buffer"
        : !head.full_known         ? "no shape given for this output"
                                   : nullptr;
    if (left_alone) {
      ld.why = left_alone;
      for (int i : group) report.funcs[i].why = i == h ? "produces an output left alone" : left_alone;
      report.loops.push_back(ld);
      return;
    }
    report.funcs[h].why = "produces an output";
  }
  const group_choice c = choose_loop(g, h, group, full, m, options, scratch, plan, recompute_plan);
  ld.cost_ns = c.cost;
  ld.unscheduled_cost_ns = c.unscheduled;
  auto may_head_subgroup = [&](int i) { return i != h && !g.nodes[i].user_scheduled; };
  if (!c.looped) {
    if (!c.considered) {
      std::copy_if(group.begin(), group.end(), std::back_inserter(at_root), may_head_subgroup);
    }
    // A subgroup without a loop stays as its group's loop left it: nothing to report.
    if (subgroup) return;
    ld.why = c.considered ? "no loop is cheaper than any loop the cost model considered"
                          : "no loop can be analyzed (no dim of extent 2 or more with known regions)";
    for (int i : group) {
      if (i == h) continue;
      const bool client = g.nodes[i].user_scheduled;
      report.funcs[i].where = client ? schedule_report::placement::left_alone : schedule_report::placement::root;
      report.funcs[i].why = client ? "scheduled by the client" : "its output has no loop: root";
    }
    report.loops.push_back(ld);
    return;
  }
  // The chosen plan again, for its decisions per func.
  plan_loop(g, h, c.dim, group, full, m, options.cache_fraction, scratch, plan, c.recompute);
  double ws = 0;
  int level = 3;
  plan_cost(plan, c.step, c.workers, m, options.cache_fraction, &ws, &level);
  ld.looped = true;
  ld.why = c.recompute  ? "cheapest loop; parallel, data-parallel with the overlaps recomputed"
           : c.parallel ? "cheapest loop; parallel"
                        : "cheapest loop";
  ld.dim = c.dim;
  ld.loop_var = head.f->outputs()[0].dims[c.dim];
  ld.step = c.step;
  ld.parallel = c.parallel;
  ld.recomputes = c.recompute;
  ld.iterations = (plan.extent + c.step - 1) / c.step;
  ld.working_set_bytes = static_cast<index_t>(std::ceil(ws));
  ld.workers = c.workers;
  ld.level = level + 1;
  const index_t caps[4] = {m.l1_bytes, m.l2_bytes, m.l3_bytes, 0};
  ld.budget_bytes = static_cast<index_t>(options.cache_fraction * static_cast<double>(caps[ld.level - 1]));
  ld.calls = ld.iterations * plan.calls_per_iteration;
  ld.granularity = plan.granularity;
  ld.invariant_bytes = static_cast<index_t>(plan.invariant_bytes);
  head.f->loops({func::loop_info(ld.loop_var, c.step, c.parallel ? loop::parallel : loop::serial)});
  for (int i : group) {
    schedule_report::func_decision& d = report.funcs[i];
    const sched_node& n = g.nodes[i];
    if (plan.in_loop[i]) {
      d.elements_per_iteration =
          static_cast<index_t>(plan.elements[i](static_cast<double>(c.step), plan.probe_step) + 0.5);
      d.moving_dim = plan.moving_dim[i];
    } else {
      ld.calls += 1;
    }
    if (i == h) continue;
    if (n.user_scheduled) {
      d.where = schedule_report::placement::left_alone;
      d.why = "scheduled by the client";
      continue;
    }
    d.where = plan.in_loop[i] ? schedule_report::placement::in_loop : schedule_report::placement::root;
    d.why = describe(plan.reason[i]);
    if (plan.in_loop[i]) {
      // The builder's default placement: the innermost loop containing its consumers (a subgroup's
      // members were set at the root by the enclosing group).
      n.f->compute_at(std::optional<loop_id>());
      // In a data-parallel loop, stored inside it: each iteration its own windows (the builder
      // would store a func whose windows overlap outside the loop and pipeline it).
      if (c.recompute) {
        for (const func::output& o : n.f->outputs()) o.buffer->store_at(loop_id{head.f, ld.loop_var});
      }
    } else {
      n.f->compute_root();
      at_root.push_back(i);
    }
  }
  report.loops.push_back(ld);
}

// The subgroups among `at_root` (members of one group left at the root, consumers first): each
// func whose consumers all belong to one subgroup joins it; any other heads a new one. claim[i]
// holds (round, subgroup head) for the funcs placed in this round.
void find_subgroups(const sched_graph& g, const std::vector<int>& at_root, int round,
                    std::vector<std::pair<int, int>>& claim, std::vector<std::pair<int, std::vector<int>>>& out) {
  std::vector<std::pair<int, std::vector<int>>> found;
  std::unordered_map<int, std::size_t> index;
  for (int i : at_root) {
    const sched_node& n = g.nodes[i];
    int owner = -1;
    for (std::size_t k = 0; k < n.consumers.size(); ++k) {
      const std::pair<int, int>& c = claim[n.consumers[k]];
      const int o = c.first == round ? c.second : -1;
      if (o < 0 || (k > 0 && o != owner)) {
        owner = -1;
        break;
      }
      owner = o;
    }
    if (owner >= 0) {
      claim[i] = {round, owner};
      found[index.at(owner)].second.push_back(i);
    } else if (n.full_known && n.rank > 0) {
      claim[i] = {round, i};
      index[i] = found.size();
      found.push_back({i, {i}});
    }
  }
  for (auto& f : found) out.push_back(std::move(f));
}

// The machine description the cost model can use: a client fills it in by hand, and zeros,
// negatives, NaNs and huge sizes must not turn into undefined conversions or endless loops.
machine usable_machine(const machine& given) {
  const machine defaults;
  machine m = given;
  // No cache is larger than 2^50 bytes; budgets computed from these stay far from index_t's limit.
  const index_t largest = index_t{1} << 50;
  for (index_t* bytes : {&m.l1_bytes, &m.l2_bytes, &m.l3_bytes}) *bytes = std::clamp<index_t>(*bytes, 0, largest);
  m.threads = std::clamp(m.threads, 1, 1 << 16);
  auto time = [](double t, double fallback) { return std::isfinite(t) && t >= 0 ? t : fallback; };
  m.call_overhead_ns = time(m.call_overhead_ns, defaults.call_overhead_ns);
  for (int i = 0; i < 4; ++i) m.ns_per_byte[i] = time(m.ns_per_byte[i], defaults.ns_per_byte[i]);
  m.page_touch_ns = time(m.page_touch_ns, defaults.page_touch_ns);
  m.l1_buffers = std::max(0, m.l1_buffers);
  m.fresh_block_bytes = std::max<index_t>(0, m.fresh_block_bytes);
  return m;
}

double usable_cache_fraction(double f) {
  if (!(f > 0)) return schedule_options().cache_fraction;  // 0, negative or NaN
  return std::min(f, 1.0);
}

}  // namespace

schedule_report schedule(const std::vector<buffer_expr_ptr>& inputs, const std::vector<buffer_expr_ptr>& outputs,
                         const schedule_shapes& shapes, const machine& given_machine,
                         const schedule_options& given_options) {
  const machine m = usable_machine(given_machine);
  schedule_options options = given_options;
  options.cache_fraction = usable_cache_fraction(options.cache_fraction);
  sched_graph g;
  build_sched_graph(inputs, outputs, shapes, g);
  if (options.reschedule) {
    for (sched_node& n : g.nodes) clear_schedule(n, g);
  }
  std::vector<index_range> full;
  full_regions(g, m, options.cache_fraction, full);

  // The members of each head's group, consumers first (the head first).
  std::vector<std::vector<int>> members(g.nodes.size());
  for (int i : g.order) {
    if (g.nodes[i].group >= 0) members[g.nodes[i].group].push_back(i);
  }

  schedule_report report;
  report.funcs.resize(g.nodes.size());
  for (std::size_t i = 0; i < g.nodes.size(); ++i) {
    schedule_report::func_decision& d = report.funcs[i];
    d.f = g.nodes[i].f;
    // Funcs feeding several outputs stay where the builder puts them: at the root (the innermost
    // loop containing all their consumers, which are in different outputs' loops).
    const bool shared = g.nodes[i].group < 0;
    const bool client = g.nodes[i].user_scheduled;
    d.where = shared && !client ? schedule_report::placement::root : schedule_report::placement::left_alone;
    d.why = !shared ? "" : client ? "scheduled by the client" : "feeds several outputs: root";
  }
  // Heads in the order found (the order of the outputs), then the subgroups in the order found:
  // deterministic. The members planned in subgroups are bounded by a few times the graph's funcs
  // (a chain of reductions would otherwise plan a subgroup per func, quadratic in its length).
  std::vector<std::pair<int, std::vector<int>>> queue;
  for (std::size_t h = 0; h < g.nodes.size(); ++h) {
    if (g.nodes[h].head) queue.push_back({static_cast<int>(h), std::move(members[h])});
  }
  const std::size_t heads = queue.size();
  std::size_t budget = 4 * g.nodes.size() + 64;
  std::vector<std::pair<int, int>> claim(g.nodes.size(), {-1, -1});
  plan_scratch scratch;
  loop_plan plan, recompute_plan;
  std::vector<int> at_root;
  for (std::size_t q = 0; q < queue.size(); ++q) {
    const int h = queue[q].first;
    std::vector<int> group = std::move(queue[q].second);
    at_root.clear();
    schedule_group(g, h, group, q >= heads, full, m, options, scratch, plan, recompute_plan, report, at_root);
    const std::size_t first = queue.size();
    find_subgroups(g, at_root, static_cast<int>(q), claim, queue);
    for (std::size_t k = first; k < queue.size(); ++k) {
      const std::size_t size = queue[k].second.size();
      if (size > budget) {
        queue.resize(k);
        break;
      }
      budget -= size;
    }
  }
  // With SLINKY_PRINT_SCHEDULE set, every schedule's report goes to stderr (as SLINKY_PRINT_PASSES
  // prints build_pipeline's passes): a refactoring of the scheduler diffs these over the tests and
  // benchmarks to show that it leaves every schedule as it was.
  static const bool print = std::getenv("SLINKY_PRINT_SCHEDULE") != nullptr;
  if (print) {
    std::cerr << "// schedule\n" << report.to_string();
    // The estimates to the last bit (the report rounds them to microseconds).
    for (const schedule_report::loop_decision& l : report.loops) {
      char buf[96];
      std::snprintf(buf, sizeof(buf), "// estimates (ns): %a, %a\n", l.cost_ns, l.unscheduled_cost_ns);
      std::cerr << buf;
    }
  }
  return report;
}

std::string schedule_report::to_string(const node_context* ctx) const {
  std::ostringstream os;
  char buf[256];
  for (const loop_decision& l : loops) {
    os << (l.produces_output ? "output of " : "loop of ") << l.f->name(ctx)
       << (l.produces_output ? ": " : " (at the root, with the funcs feeding only it): ");
    if (!l.looped) {
      os << "no loop (" << l.why << ")";
      if (l.unscheduled_cost_ns > 0) {
        std::snprintf(buf, sizeof(buf), "; estimated %.3f ms", l.unscheduled_cost_ns * 1e-6);
        os << buf;
      }
      os << "\n";
      continue;
    }
    os << "loop over dim " << l.dim << " (" << (ctx ? ctx->name(l.loop_var) : "_" + std::to_string(l.loop_var.id))
       << ") in steps of " << l.step
       << (l.recomputes ? ", parallel (data-parallel, overlaps recomputed)"
           : l.parallel ? ", parallel"
                        : ", serial")
       << ", " << l.iterations << " iterations, " << l.calls << " calls; working set " << l.working_set_bytes
       << " bytes (budget " << l.budget_bytes << ", ";
    if (l.level <= 3) {
      os << "L" << l.level;
      if (l.level == 3 && l.workers > 1) {
        os << ", shared by " << l.workers << " iterations at once";
      }
    } else {
      os << "memory";
    }
    std::snprintf(buf, sizeof(buf), "); estimated %.3f ms, no schedule %.3f ms", l.cost_ns * 1e-6,
                  l.unscheduled_cost_ns * 1e-6);
    os << buf;
    if (l.granularity > 1) os << "; steps in multiples of " << l.granularity << " (blocks read)";
    if (l.invariant_bytes > 0) os << "; " << l.invariant_bytes << " bytes read whole by every iteration";
    os << "\n";
  }
  for (const func_decision& d : funcs) {
    static const char* names[] = {"output", "in loop", "root", "left alone"};
    os << "  " << d.f->name(ctx) << ": " << names[static_cast<int>(d.where)];
    if (d.where == placement::in_loop || d.elements_per_iteration > 0) {
      os << ", " << d.elements_per_iteration << " elements per iteration";
      if (d.moving_dim >= 0) os << ", moving along dim " << d.moving_dim;
    }
    if (d.why && *d.why) os << " (" << d.why << ")";
    os << "\n";
  }
  return os.str();
}

}  // namespace slinky
