// The analysis of a candidate loop and the cost model (docs/scheduler.md).
#include "slinky/scheduler/loop_plan.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <unordered_map>

namespace slinky {
namespace scheduler_internal {

double linear_in_step::operator()(double step, double s) const {
  return std::max(0.0, at_s + (at_2s - at_s) * (step - s) / s);
}

namespace {

// The cost of starting and joining a parallel loop (enqueue, wake the workers, wait). Not
// measured yet (docs/scheduler.md).
constexpr double fork_join_ns = 5000;
// The share of the ideal speed-up a parallel loop reaches, pipelined or data-parallel: measured
// alike on 2 workers once the pipelined loop's hand-offs (plan_cost: the overlap its iterations
// read from the core that computed it) are priced apart. scheduler_benchmark --sweep
// (2026-12-04): the stencil chains of 4096 x 4096 in strips of 32 to 64 rows, 5.5 to 6.1 ms (2
// stages) and 9.2 to 10.2 ms (3 stages) either way, against 10.3 and 17.1 to 18.4 ms serially.
// (Until then a pipelined loop was priced at 0.75, which also stood for its hand-offs.)
constexpr double parallel_efficiency = 0.9;
// The cost of one iteration of a parallel loop beyond its calls: handing it to a worker (atomics
// and cache lines moving between cores) and allocating the buffers of its funcs, which a parallel
// loop cannot hoist out of its iterations. An estimate from the chain into a parallel reduction
// (scheduler_benchmark, 2026-12-03): 256 iterations on 2 workers took 0.10 to 0.15 ms longer
// than 32, about 1 us of CPU time per iteration, where its 3 calls cost 0.07 us. (In the sweep
// above, the 3-stage data-parallel stencil in strips of 4 and 8 rows took 0.6 to 1.5 ms more than
// the model's estimate, 2 to 4 us per iteration, the 2-stage one as estimated: the term is a
// floor.)
constexpr double parallel_iteration_ns = 1000;
// The time per byte of the overlap a pipelined iteration reads from the core that computed it,
// as a multiple of memory's. Measured on the 2-core development machine (scheduler_benchmark,
// 2026-12-04, stencil chains of 4096 x 4096 pipelined in strips of 2 to 8 rows): each iteration
// took 1.6 us (2 stages: 32 KiB of overlap) and 4.5 us (3 stages: 64 KiB) more than the model
// without hand-offs, 0.05 to 0.07 ns per byte beyond the L2's rate, where memory streams at 0.035.
constexpr double handoff_memory_ratio = 2;

// The first touch of the pages of `bytes` allocated per evaluation, if the allocator hands them out
// fresh (machine::fresh_block_bytes; for the folds of a loop, their sum stands for the largest).
double page_ns(double bytes, const machine& m) {
  return bytes >= static_cast<double>(m.fresh_block_bytes) ? bytes / 4096.0 * m.page_touch_ns : 0;
}

// One iteration's working set without the windows read whole: the folds (with `workers`
// iterations in flight, the extra shifts of the sliding funcs), the moving external windows and
// the output's chunk.
double moving_set(const loop_plan& plan, double step, int workers) {
  const double S = plan.probe_step;
  return plan.fold(step, S) + (workers - 1) * plan.sliding_shift_bytes(step, S) + plan.external_window(step, S) +
         plan.output_chunk(step, S);
}

// The windows read whole by every iteration as a working set fitted to `budget` counts them:
// where they fit alone (else they stream from a larger level whatever the step).
double invariant_within(const loop_plan& plan, double budget) {
  return plan.invariant_bytes <= budget ? plan.invariant_bytes : 0;
}

// The bytes of an external buffer's box.
double box_bytes(const std::vector<index_range>& box, index_t elem_size) {
  double b = static_cast<double>(elem_size);
  for (const index_range& r : box) b *= static_cast<double>(r.extent());
  return b;
}

// A buffer read by the loop's funcs from outside the loop: the hull of what they read in each
// probe, and the level its whole buffer is in.
struct external_read {
  std::vector<index_range> box[3];
  index_t elem_size = 4;
  double total_bytes = -1;
};

// Accounts for a window read from outside the loop, of `bytes[q]` at the probes (q = 0: step S
// at y; 1: step S at y + S; 2: step 2S at y), `overlap_bytes` of the first two in common, from a
// buffer of total_bytes.
void add_external(loop_plan& plan, const double bytes[3], double overlap_bytes, double total_bytes, const machine& m,
                  double fraction) {
  // What is new in each iteration comes from where the whole buffer is; the rest was read by the
  // previous iteration and is in the working set's level.
  const double c = m.ns_per_byte[level_of(total_bytes, m, fraction)];
  if (bytes[0] == bytes[1] && bytes[0] == bytes[2] && overlap_bytes >= bytes[0]) {
    plan.invariant_bytes += bytes[0];
    plan.invariant_read_ns += bytes[0] * c;
    return;
  }
  ++plan.buffers;
  const double advance = std::max(0.0, bytes[1] - overlap_bytes);
  const double advance_2s = std::min(bytes[2], 2 * advance);
  plan.external_window.add(bytes[0], bytes[2]);
  plan.external_cached_bytes.add(bytes[0] - std::min(bytes[0], advance), bytes[2] - advance_2s);
  plan.external_cached_ns.add((bytes[0] - std::min(bytes[0], advance)) * c, (bytes[2] - advance_2s) * c);
  plan.streamed_ns.add(std::min(bytes[0], advance) * c, advance_2s * c);
}

// The time of a func computed at the root (its whole region), with `root_consumers` of its
// consumers reading it at the root too.
double root_func_ns(const sched_node& n, int root_consumers, const machine& m, double fraction) {
  const double c = m.ns_per_byte[level_of(n.full_bytes, m, fraction)];
  double t = n.full_bytes * c * (1 + root_consumers) + n.full_external_read_ns + m.call_overhead_ns +
             n.full_elements * n.work_ns_per_point;
  if (!n.head) t += page_ns(n.full_bytes, m);
  return t;
}

// Classifies member n from its windows at the three probes: in the loop if they are one
// translation along one variable (moving by a non-zero shift between consecutive iterations),
// with the other variables' ranges independent of the step. Sets the moving slot and shift.
place_reason classify(const sched_node& n, const plan_scratch& s, int& slot, index_t& shift) {
  slot = -1;
  for (std::size_t v = 0; v < n.rank; ++v) {
    const index_range& a = s.window[0][n.slot + v];
    const index_range& b = s.window[1][n.slot + v];
    const index_range& c = s.window[2][n.slot + v];
    if (a.empty() || b.empty() || c.empty()) return place_reason::empty_window;
    if (a == b) {
      if (a != c) return place_reason::not_a_translation;
      continue;
    }
    if (slot >= 0) return place_reason::not_a_translation;
    if (b.min - a.min != b.max - a.max) return place_reason::not_a_translation;
    slot = static_cast<int>(v);
    shift = b.min - a.min;
  }
  return slot < 0 ? place_reason::invariant : place_reason::moves;
}

}  // namespace

namespace {

// One plan_loop: the members of the group, consumers first, each placed and accounted for.
class loop_planner {
  const sched_graph& g;
  const int h;
  const std::vector<int>& members;
  const std::vector<index_range>& full;
  const machine& m;
  const double fraction;
  plan_scratch& s;
  loop_plan& plan;
  // The loop's chunk at each probe.
  index_range chunk[3];
  // Buffers read from outside the loop, in the order first read (deterministic).
  std::unordered_map<const buffer_expr*, external_read> externals;
  std::vector<const buffer_expr*> external_order;

public:
  loop_planner(const sched_graph& g, int h, const std::vector<int>& members, const std::vector<index_range>& full,
               const machine& m, double fraction, plan_scratch& s, loop_plan& plan)
      : g(g), h(h), members(members), full(full), m(m), fraction(fraction), s(s), plan(plan) {}

  void run(int dim, bool recompute);

private:
  void reset(int dim);
  place_reason place(int i, int& moving, index_t& shift);
  void account_root(int i, place_reason why);
  void account_in_loop(int i, int moving, index_t shift);
  void read_inputs(int i);
  void account_externals();
};

// A fresh plan, keeping the per-node vectors' memory: they are reset for the group's members
// only, so that planning every output of a graph with many outputs stays linear.
void loop_planner::reset(int dim) {
  std::vector<char> in_loop = std::move(plan.in_loop);
  std::vector<place_reason> reason = std::move(plan.reason);
  std::vector<int> moving_dim = std::move(plan.moving_dim);
  std::vector<linear_in_step> elements = std::move(plan.elements);
  plan = loop_plan();
  plan.in_loop = std::move(in_loop);
  plan.reason = std::move(reason);
  plan.moving_dim = std::move(moving_dim);
  plan.elements = std::move(elements);
  plan.in_loop.resize(g.nodes.size());
  plan.reason.resize(g.nodes.size());
  plan.moving_dim.resize(g.nodes.size());
  plan.elements.resize(g.nodes.size());
  if (s.failed.size() < g.nodes.size()) {
    for (int q = 0; q < 3; ++q) {
      s.window[q].resize(g.num_slots);
      s.produce[q].resize(g.num_slots);
      s.reads[q].resize(g.nodes.size());
    }
    s.failed.resize(g.nodes.size());
    s.member_mark.resize(g.nodes.size());
  }
  ++s.mark;
  for (int i : members) {
    const sched_node& n = g.nodes[i];
    plan.in_loop[i] = 0;
    plan.reason[i] = place_reason::unknown_region;
    plan.moving_dim[i] = -1;
    plan.elements[i] = linear_in_step();
    for (int q = 0; q < 3; ++q) {
      std::fill_n(s.window[q].begin() + n.slot, n.rank, index_range());
      s.reads[q][i] = 0;
    }
    s.failed[i] = 0;
    s.member_mark[i] = s.mark;
  }
  plan.dim = dim;
  plan.slot = g.nodes[h].out_slots[0][dim];
}

void loop_planner::run(int dim, bool recompute) {
  reset(dim);
  plan.recompute = recompute;
  const sched_node& head = g.nodes[h];
  if (plan.slot < 0) return;
  const index_range whole = full[head.slot + plan.slot];
  plan.extent = whole.extent();
  if (plan.extent < 2) return;
  // The probes: iterations at y and y + S with step S, and at y with step 2S, inside the loop's
  // range (away from its end, where the last chunk is truncated).
  // S a power of two: the shifts of funcs that move one element per block of the loop's elements
  // (granularity) divide it.
  const index_t S = floor_power_of_two(std::max<index_t>(1, plan.extent / 4));
  const index_t y = plan.extent >= 4 ? whole.min + S : whole.min;
  chunk[0] = {y, y + S - 1};
  chunk[1] = {y + S, y + 2 * S - 1};
  chunk[2] = {y, y + 2 * S - 1};
  plan.probe_step = static_cast<double>(S);

  for (int i : members) {
    int moving = -1;
    index_t shift = 0;
    const place_reason why = place(i, moving, shift);
    plan.reason[i] = why;
    if (why != place_reason::output && why != place_reason::moves) {
      account_root(i, why);
      continue;
    }
    account_in_loop(i, moving, shift);
    read_inputs(i);
  }
  account_externals();
  plan.ok = true;
}

// Where member i goes (its consumers are placed already), and for the loop, the variable slot
// that moves with it and by how much per iteration.
place_reason loop_planner::place(int i, int& moving, index_t& shift) {
  const sched_node& n = g.nodes[i];
  if (i == h) {
    for (int q = 0; q < 3; ++q) {
      std::copy_n(full.begin() + n.slot, n.rank, s.window[q].begin() + n.slot);
      s.window[q][n.slot + plan.slot] = chunk[q];
    }
    moving = plan.slot;
    shift = static_cast<index_t>(plan.probe_step);
    return place_reason::output;
  }
  if (n.pinned_root) return place_reason::pinned_root;
  if (s.failed[i] || !n.full_known) return place_reason::unknown_region;
  if (std::any_of(n.consumers.begin(), n.consumers.end(), [&](int c) { return !plan.in_loop[c]; })) {
    return place_reason::consumer_at_root;
  }
  return classify(n, s, moving, shift);
}

// Member i at the root: its whole region once; what the loop's funcs read of it is an external
// window.
void loop_planner::account_root(int i, place_reason why) {
  const sched_node& n = g.nodes[i];
  int root_consumers = 0;
  for (int c : n.consumers) root_consumers += plan.in_loop[c] ? 0 : 1;
  plan.root_ns += root_func_ns(n, root_consumers, m, fraction);
  // (An empty window at a probe is not linear in the step: not priced as an external window.)
  if (root_consumers == static_cast<int>(n.consumers.size()) || why == place_reason::unknown_region ||
      why == place_reason::empty_window) {
    return;
  }
  double bytes[3];
  for (int q = 0; q < 3; ++q) bytes[q] = g.region_bytes(n, s.window[q].data());
  // The overlap of consecutive windows (produce[0] is free for this: a func at the root reads
  // nothing in the loop).
  for (std::size_t v = 0; v < n.rank; ++v) {
    s.produce[0][n.slot + v] = intersect(s.window[0][n.slot + v], s.window[1][n.slot + v]);
  }
  add_external(plan, bytes, g.region_bytes(n, s.produce[0].data()), n.full_bytes, m, fraction);
}

// Member i in the loop: what each iteration computes (the part of its window earlier iterations
// did not: the builder's sliding window, or the whole window where consecutive windows do not
// overlap), its ring buffer, and the bytes it writes and its consumers read.
void loop_planner::account_in_loop(int i, int moving, index_t shift) {
  const sched_node& n = g.nodes[i];
  plan.in_loop[i] = 1;
  for (std::size_t d = 0; d < n.out_slots[0].size(); ++d) {
    if (n.out_slots[0][d] == moving) plan.moving_dim[i] = static_cast<int>(d);
  }
  ++plan.calls_per_iteration;
  ++plan.buffers;
  // Whether consecutive windows overlap: then a serial loop slides (each iteration computes the
  // new part only) and a data-parallel one recomputes the overlap.
  bool overlaps = false;
  for (int q = 0; q < 3; ++q) {
    std::copy_n(s.window[q].begin() + n.slot, n.rank, s.produce[q].begin() + n.slot);
    const index_range w = s.window[q][n.slot + moving];
    const index_t d = q == 2 ? 2 * shift : shift;
    const index_t ad = d < 0 ? -d : d;
    if (ad < w.extent() && q == 0) overlaps = true;
    if (ad < w.extent() && !plan.recompute) {
      s.produce[q][n.slot + moving] = d > 0 ? index_range{w.max - ad + 1, w.max} : index_range{w.min, w.min + ad - 1};
    }
  }
  const double produced0 = g.region_bytes(n, s.produce[0].data());
  const double produced2 = g.region_bytes(n, s.produce[2].data());
  const double window0 = g.region_bytes(n, s.window[0].data());
  const double window2 = g.region_bytes(n, s.window[2].data());
  double elems0 = 1, elems2 = 1, computed0 = 1, computed2 = 1;
  for (std::size_t v = 0; v < n.rank; ++v) {
    elems0 *= static_cast<double>(s.window[0][n.slot + v].extent());
    elems2 *= static_cast<double>(s.window[2][n.slot + v].extent());
    computed0 *= static_cast<double>(s.produce[0][n.slot + v].extent());
    computed2 *= static_cast<double>(s.produce[2][n.slot + v].extent());
  }
  plan.elements[i] = {elems0, elems2};
  plan.work_ns.add(computed0 * n.work_ns_per_point, computed2 * n.work_ns_per_point);
  const index_t ashift = shift < 0 ? -shift : shift;
  const index_t S = static_cast<index_t>(plan.probe_step);
  if (ashift > 0 && ashift < S && S % ashift == 0) {
    const index_t g = S / ashift;
    const index_t lcm = plan.granularity / std::gcd(plan.granularity, g) * g;
    // A granularity beyond the loop's extent would leave one iteration: keep the largest that fits.
    plan.granularity = lcm <= plan.extent ? lcm : std::max(plan.granularity, g <= plan.extent ? g : 1);
  }
  if (i == h) {
    plan.output_chunk.add(window0, window2);
    const double c = m.ns_per_byte[level_of(n.full_bytes, m, fraction)];
    plan.streamed_ns.add(window0 * c, window2 * c);
    return;
  }
  plan.fold.add(window0, window2);
  plan.internal_bytes.add(produced0 + s.reads[0][i], produced2 + s.reads[2][i]);
  if (produced0 < window0) {
    plan.reason[i] = place_reason::slides;
    ++plan.sliding;
    plan.sliding_shift_bytes.add(produced0, produced2);
    plan.overlap_bytes.add(window0 - produced0, window2 - produced2);
  } else if (overlaps && plan.recompute) {
    plan.reason[i] = place_reason::recomputed;
    ++plan.recomputed;
  }
}

// What member i (in the loop) reads in each iteration: into its producers' windows when they are
// members, else into the external windows.
void loop_planner::read_inputs(int i) {
  const sched_node& n = g.nodes[i];
  for (const func::input& in : n.f->inputs()) {
    const buffer_expr* b = in.buffer.get();
    const int p = g.producer_of(b);
    const bool member = p >= 0 && p != h && s.member_mark[p] == s.mark;
    external_read* ext = nullptr;
    if (!member) {
      auto e = externals.find(b);
      if (e == externals.end()) {
        e = externals.emplace(b, external_read()).first;
        external_order.push_back(b);
        e->second.elem_size = g.elem_size(b);
        auto shape = g.shapes.find(b->sym().sym());
        if (shape != g.shapes.end()) e->second.total_bytes = box_bytes(*shape->second, e->second.elem_size);
        // A func of another group: its whole region, if it was analyzed (not for funcs feeding
        // several outputs, whose total is then estimated from the window, in account_externals).
        if (p >= 0 && g.nodes[p].full_bytes > 0) e->second.total_bytes = g.nodes[p].full_bytes;
      }
      ext = &e->second;
    }
    for (int q = 0; q < 3; ++q) {
      if (!consumer_reads(g, n, s.produce[q].data(), in, s.needed)) {
        if (member) s.failed[p] = 1;
        break;
      }
      if (!member && std::any_of(s.needed.begin(), s.needed.end(), [](const index_range& r) { return r.empty(); })) {
        // Nothing read at this probe: not linear in the step, not priced.
        break;
      }
      if (member) {
        add_to_region(g.nodes[p], g.produced.at(b).second, s.needed, s.window[q].data());
        s.reads[q][p] += box_bytes(s.needed, g.elem_size(b));
        continue;
      }
      std::vector<index_range>& box = ext->box[q];
      if (box.empty()) {
        box = s.needed;
      } else {
        for (std::size_t d = 0; d < box.size() && d < s.needed.size(); ++d) box[d] = hull(box[d], s.needed[d]);
      }
    }
  }
}

void loop_planner::account_externals() {
  for (const buffer_expr* b : external_order) {
    const external_read& e = externals[b];
    if (e.box[0].empty() || e.box[1].empty() || e.box[2].empty()) continue;
    double bytes[3];
    for (int q = 0; q < 3; ++q) bytes[q] = box_bytes(e.box[q], e.elem_size);
    std::vector<index_range> overlap = e.box[0];
    for (std::size_t d = 0; d < overlap.size() && d < e.box[1].size(); ++d) {
      overlap[d] = intersect(e.box[0][d], e.box[1][d]);
    }
    const double total = e.total_bytes >= 0 ? e.total_bytes : bytes[0] * plan.extent / plan.probe_step;
    add_external(plan, bytes, box_bytes(overlap, e.elem_size), total, m, fraction);
  }
}

}  // namespace

void plan_loop(const sched_graph& g, int h, int dim, const std::vector<int>& members,
               const std::vector<index_range>& full, const machine& m, double fraction, plan_scratch& s,
               loop_plan& plan, bool recompute) {
  loop_planner(g, h, members, full, m, fraction, s, plan).run(dim, recompute);
}

double plan_cost(const loop_plan& plan, index_t step, int workers, const machine& m, double fraction,
                 double* working_set, int* served_from) {
  const double S = plan.probe_step;
  const double st = static_cast<double>(step);
  const double iterations = std::ceil(static_cast<double>(plan.extent) / st);
  const double fold = plan.fold(st, S) + (workers - 1) * plan.sliding_shift_bytes(st, S);
  const double moving = moving_set(plan, st, workers);
  // The first level holding the working set, with the invariant windows where they fit alone.
  const index_t caps[3] = {m.l1_bytes, m.l2_bytes, m.l3_bytes};
  int level = 3;
  double ws = moving + plan.invariant_bytes;
  // The working set as level l sees it (the invariant windows where they fit alone), and what
  // it must fit (the workers of a data-parallel loop share the L3, each with its own working set).
  auto seen_by = [&](int l) {
    const double budget = fraction * static_cast<double>(caps[l]);
    const double sharing = l == 2 && workers > 1 && plan.sliding == 0 ? workers : 1;
    return moving * sharing + invariant_within(plan, budget);
  };
  for (int l = 0; l < 3 && level == 3; ++l) {
    const double budget = fraction * static_cast<double>(caps[l]);
    if (caps[l] > 0 && seen_by(l) <= budget) {
      level = l;
      ws = moving + invariant_within(plan, budget);
    }
  }
  if (working_set) *working_set = ws;
  if (served_from) *served_from = level;
  // L1's rate only for serial loops over few buffers (machine::l1_buffers).
  const bool l1_rate = workers == 1 && plan.buffers <= m.l1_buffers;
  auto rate = [&](int l) { return m.ns_per_byte[l == 0 && !l1_rate ? 1 : l]; };
  double c = rate(level);
  // Beyond a level's budget but within its capacity, the rate rises from that level's to the
  // next one's: the budget leaves room for other data and conflicts, which take a growing share
  // of the level as the working set grows, not all of it at once.
  for (int l = level - 1; l >= 0; --l) {
    if (caps[l] <= 0) continue;
    const double budget = fraction * static_cast<double>(caps[l]);
    const double cap = static_cast<double>(caps[l]);
    const double w = seen_by(l);
    if (w < cap && cap > budget) c = rate(l) + (rate(level) - rate(l)) * (w - budget) / (cap - budget);
    break;
  }
  const double calls_ns = plan.calls_per_iteration * m.call_overhead_ns;
  // In a parallel loop the previous iteration ran on another core (the workers take turns): the
  // parts of the external windows it read come from where their buffers are, not from this
  // core's cache.
  const double cached_ns = workers > 1 ? plan.external_cached_ns(st, S) : plan.external_cached_bytes(st, S) * c;
  const double work_and_bytes_ns =
      plan.internal_bytes(st, S) * c + cached_ns + plan.streamed_ns(st, S) + plan.work_ns(st, S);
  double loop_ns;
  if (workers > 1) {
    // The critical path: the iterations of the busiest worker.
    const double per_worker = std::ceil(iterations / workers);
    // A pipelined iteration reads the overlap of its windows from the core that ran the
    // previous iteration: lines held modified in another core's cache, which move one by one
    // through the coherence protocol (no prefetcher streams them), at twice memory's time per
    // byte (handoff_memory_ratio).
    const double handoff_ns =
        plan.sliding > 0 ? plan.overlap_bytes(st, S) * std::max(0.0, handoff_memory_ratio * m.ns_per_byte[3] - c) : 0;
    loop_ns = per_worker * (calls_ns + work_and_bytes_ns + handoff_ns + parallel_iteration_ns) / parallel_efficiency +
              fork_join_ns;
  } else {
    // Every iteration calls; the bytes are those of the whole extent (the last chunk is truncated).
    loop_ns = iterations * calls_ns + static_cast<double>(plan.extent) / st * work_and_bytes_ns;
  }
  return loop_ns + plan.root_ns + plan.invariant_read_ns + page_ns(fold, m);
}

double unscheduled_cost(const sched_graph& g, const std::vector<int>& members, const machine& m, double fraction) {
  double t = 0;
  for (int i : members) {
    const sched_node& n = g.nodes[i];
    // The head's consumers are outside the group (a subgroup's head feeds a loop of another
    // group, which prices its reads as an external window): as in plan_loop, only its writes.
    const bool head = i == members.front();
    t += root_func_ns(n, head ? 0 : static_cast<int>(n.consumers.size()), m, fraction);
  }
  return t;
}

index_t largest_step_within(const loop_plan& plan, double budget, int workers, index_t max_step) {
  const double S = plan.probe_step;
  const double invariant = invariant_within(plan, budget);
  auto ws = [&](double st) { return moving_set(plan, st, workers) + invariant; };
  if (ws(1) > budget) return 0;
  // The working set is linear in the step: solve ws(step) <= budget.
  const double slope = ws(S + 1) - ws(S);
  index_t step = max_step;
  if (slope > 0) {
    const double s = 1 + (budget - ws(1)) / slope;
    if (s < static_cast<double>(max_step)) step = std::max<index_t>(1, static_cast<index_t>(s));
  }
  // Keep 3 significant bits: steps like 14336 rather than 14563 keep chunks aligned.
  index_t bits = 0;
  while ((step >> bits) >= 8) ++bits;
  step = (step >> bits) << bits;
  while (step > 1 && ws(static_cast<double>(step)) > budget) --step;
  const index_t g = plan.granularity;
  if (step >= g) step -= step % g;
  return std::max<index_t>(1, step);
}

index_t floor_power_of_two(index_t x) {
  index_t p = 1;
  while (p <= x / 2) p *= 2;
  return p;
}

index_t aligned_step(const loop_plan& plan, index_t step, index_t max_step) {
  const index_t g = plan.granularity;
  step = step >= g ? step - step % g : g;
  return std::max<index_t>(1, std::min(step, max_step));
}

}  // namespace scheduler_internal
}  // namespace slinky
