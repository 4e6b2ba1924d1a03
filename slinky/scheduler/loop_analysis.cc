// The analysis of a candidate loop: what one iteration touches, as counts (docs/scheduler.md).
#include "slinky/scheduler/loop_analysis.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <unordered_map>

#include "slinky/base/assert.h"

namespace slinky {
namespace scheduler_internal {

namespace {

// A buffer read by the loop's funcs from outside the loop: the hull of what they read in each
// probe, and the level its whole buffer is in.
struct external_read {
  std::vector<index_range> box[3];
  index_t elem_size = 4;
  double total_bytes = -1;
  // The rows of the funcs reading it row by row at each probe, each counted as its share of the
  // window (sched_node::row_window_share), and the largest share.
  double rows[3] = {0, 0, 0};
  double row_share = 0;
};

// Whether a window of `rank` dims at two consecutive iterations (w0, w1) moves along its outermost
// dim: one dim differs, and every dim after it spans at most one element. Outside a tile its inner
// dims are whole, and each iteration's new part then continues the previous one's in memory
// (level_bytes::continuing).
bool moves_along_outermost(const index_range* w0, const index_range* w1, std::size_t rank) {
  int moving = -1;
  for (std::size_t d = 0; d < rank; ++d) {
    if (w0[d] == w1[d]) continue;
    if (moving >= 0) return false;
    moving = static_cast<int>(d);
  }
  if (moving < 0) return false;
  for (std::size_t d = moving + 1; d < rank; ++d) {
    if (w0[d].extent() > 1) return false;
  }
  return true;
}

// Accounts for a window read from outside the loop, of `bytes[q]` at the probes (q = 0: step S
// at y; 1: step S at y + S; 2: step 2S at y), `overlap_bytes` of the first two in common, from a
// buffer at `level`; the funcs reading it row by row read `rows[q]` times the window, the largest
// share of it one row reads is `row_share` (sched_node::row_window_share); `continuing`: its new
// part continues the previous iteration's in memory (moves_along_outermost, outside a tile).
void add_external(loop_analysis& a, const cost_model& model, const double bytes[3], double overlap_bytes, int level,
                  const double rows[3], double row_share, bool continuing) {
  loop_counts& c = a.counts;
  if (bytes[0] == bytes[1] && bytes[0] == bytes[2] && overlap_bytes >= bytes[0]) {
    c.invariant_bytes += bytes[0];
    c.invariant_reads.push_back({bytes[0], level});
    if (rows[0] > 0) {
      c.rereads.push_back({{rows[0] * bytes[0], rows[2] * bytes[0]},
                           bytes[0],
                           model.level_of(row_share * bytes[0]),
                           model.level_of(bytes[0])});
    } else {
      c.refetched.push_back({bytes[0], model.level_of(bytes[0])});
    }
    return;
  }
  ++c.buffers;
  // What is new in each iteration comes from where the whole buffer is; the rest was read by the
  // previous iteration and is in the working set's level (serially).
  const double advance = std::max(0.0, bytes[1] - overlap_bytes);
  const double advance_2s = std::min(bytes[2], 2 * advance);
  c.external_window.add(bytes[0], bytes[2]);
  c.external_cached_bytes.add(bytes[0] - std::min(bytes[0], advance), bytes[2] - advance_2s);
  c.external_cached.push_back({{bytes[0] - std::min(bytes[0], advance), bytes[2] - advance_2s}, level});
  c.streamed.push_back({{std::min(bytes[0], advance), advance_2s}, level, continuing});
}

// Marks the term of `copy` in `roots` as a copy the builder removes (root_term::removed_copy).
void mark_removed_copy(std::vector<root_term>& roots, const sched_node& copy) {
  for (root_term& r : roots) {
    if (r.counts == &copy.at_root) r.removed_copy = true;
  }
}

// Classifies member n from its windows at the three probes: in the loop if they are one
// translation along one variable (moving by a non-zero shift between consecutive iterations),
// with the other variables' ranges independent of the step. Sets the moving slot and shift.
place_reason classify(const sched_node& n, const loop_analyzer::scratch& s, int& slot, index_t& shift) {
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

// One analysis: the members of the group, consumers first, each placed and accounted for.
class analysis_pass {
  const sched_graph& g;
  const int h;
  const std::vector<int>& members;
  const std::vector<index_range>& full;
  const cost_model& model;
  loop_analyzer::scratch& s;
  loop_analysis& plan;
  // The loop's chunk at each probe.
  index_range chunk[3];
  // With a tile: the slot of the outer loop's variable in the head's variables and the strip's
  // range of it (slot -1: no tile).
  int strip_slot = -1;
  index_range strip_range;
  // Buffers read from outside the loop, in the order first read (deterministic).
  std::unordered_map<const buffer_expr*, external_read> externals;
  std::vector<const buffer_expr*> external_order;

public:
  analysis_pass(const sched_graph& g, int h, const std::vector<int>& members, const std::vector<index_range>& full,
                const cost_model& model, loop_analyzer::scratch& s, loop_analysis& plan)
      : g(g), h(h), members(members), full(full), model(model), s(s), plan(plan) {}

  void run(int dim, bool recompute, strip outer);

private:
  void reset(int dim);
  place_reason place(int i, int& moving, index_t& shift);
  void account_root(int i, place_reason why);
  void account_in_loop(int i, int moving, index_t shift);
  void read_inputs(int i);
  void account_externals();
  void account_copies_removed();
  void account_views_in_loop();
  void account_shared_storage();
  // Member i writes into the copy that reads it, which the builder removes (both in the loop).
  bool writes_into_copy(int i) const { return plan.in_loop[i] && g.nodes[i].writes_into_copy; }
  // Member i is a copy in the loop the builder makes a view of its source (account_views_in_loop).
  bool view_in_loop(int i) const;
  // Whether a window at the first two probes (w0, w1, `rank` dims) continues the previous
  // iteration's in memory (level_bytes::continuing): outside a tile, moving along its outermost dim.
  bool continuing(const index_range* w0, const index_range* w1, std::size_t rank) const {
    return !plan.outer.active() && moves_along_outermost(w0, w1, rank);
  }
  // Calls f(i, w) for each member i in the loop, in the members' order, w its entry in
  // plan.counts.work (one per member in the loop, in that order).
  template <typename F>
  void for_each_in_loop(F f) const {
    std::size_t w = 0;
    for (int i : members) {
      if (plan.in_loop[i]) f(i, w++);
    }
  }
  // Takes member i's window out of the iteration's storage and streams (no fold, not a buffer
  // streamed through, not sliding: its writes go elsewhere or nowhere); returns the bytes it
  // produces per iteration at the probes.
  linear_in_step unstore(int i);
};

// `to` takes `from`'s memory, emptied.
template <typename T>
void reuse(std::vector<T>& from, std::vector<T>& to) {
  to = std::move(from);
  to.clear();
}

// A fresh plan, keeping the vectors' memory: the per-node ones are reset for the group's members
// only, so that planning every output of a graph with many outputs stays linear.
void analysis_pass::reset(int dim) {
  loop_analysis old = std::move(plan);
  plan = loop_analysis();
  // (Moved, then resized below: their other entries are not read.)
  plan.in_loop = std::move(old.in_loop);
  plan.reason = std::move(old.reason);
  plan.moving_dim = std::move(old.moving_dim);
  plan.elements = std::move(old.elements);
  loop_counts& c = plan.counts;
  reuse(old.counts.external_cached, c.external_cached);
  reuse(old.counts.streamed, c.streamed);
  reuse(old.counts.work, c.work);
  reuse(old.counts.roots, c.roots);
  reuse(old.counts.invariant_reads, c.invariant_reads);
  reuse(old.counts.rereads, c.rereads);
  reuse(old.counts.refetched, c.refetched);
  plan.in_loop.resize(g.nodes.size());
  plan.reason.resize(g.nodes.size());
  plan.moving_dim.resize(g.nodes.size());
  plan.elements.resize(g.nodes.size());
  if (s.failed.size() < g.nodes.size()) {
    for (int q = 0; q < 3; ++q) {
      s.window[q].resize(g.num_slots);
      s.produce[q].resize(g.num_slots);
      s.reads[q].resize(g.nodes.size());
      s.rows[q].resize(g.nodes.size());
    }
    s.failed.resize(g.nodes.size());
    s.row_share.resize(g.nodes.size());
    s.member_mark.resize(g.nodes.size());
    s.position.resize(g.nodes.size());
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
      s.rows[q][i] = 0;
    }
    s.failed[i] = 0;
    s.row_share[i] = 0;
    s.member_mark[i] = s.mark;
  }
  SLINKY_ASSERT(h == members.front(), "the head is the first member");
  SLINKY_ASSERT(dim >= 0 && dim < static_cast<int>(g.nodes[h].out_slots[0].size()), "a dim of the head's output");
  plan.dim = dim;
  plan.slot = g.nodes[h].out_slots[0][dim];
}

void analysis_pass::run(int dim, bool recompute, strip outer) {
  reset(dim);
  plan.recompute = recompute;
  const sched_node& head = g.nodes[h];
  if (plan.slot < 0) return;
  if (outer.active()) {
    if (outer.dim == dim || outer.dim >= static_cast<int>(head.out_slots[0].size())) return;
    SLINKY_ASSERT(outer.dim >= 0, "an active strip has a dim");
    strip_slot = head.out_slots[0][outer.dim];
    if (strip_slot < 0 || strip_slot == plan.slot) return;
    SLINKY_ASSERT(static_cast<std::size_t>(strip_slot) < head.rank, "the strip's slot is one of the head's variables");
    // The strip probed: the second one where there are three or more (the first and last may be
    // clamped by the consumers' bounds), else the first.
    const index_range w = full[head.slot + strip_slot];
    if (outer.step >= w.extent()) return;
    const index_t first = w.extent() >= 3 * outer.step ? w.min + outer.step : w.min;
    strip_range = {first, first + outer.step - 1};
    plan.outer = outer;
    plan.strips = (w.extent() + outer.step - 1) / outer.step;
  }
  const index_range whole = full[head.slot + plan.slot];
  loop_counts& counts = plan.counts;
  counts.extent = whole.extent();
  if (counts.extent < 2) return;
  // The probes: iterations at y and y + S with step S, and at y with step 2S, inside the loop's
  // range (away from its end, where the last chunk is truncated).
  // S a power of two: the shifts of funcs that move one element per block of the loop's elements
  // (granularity) divide it.
  const index_t S = floor_power_of_two(std::max<index_t>(1, counts.extent / 4));
  const index_t y = counts.extent >= 4 ? whole.min + S : whole.min;
  chunk[0] = {y, y + S - 1};
  chunk[1] = {y + S, y + 2 * S - 1};
  chunk[2] = {y, y + 2 * S - 1};
  counts.probe_step = static_cast<double>(S);

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
  account_copies_removed();
  account_views_in_loop();
  account_shared_storage();
  plan.ok = true;
}

// Where member i goes (its consumers are placed already), and for the loop, the variable slot
// that moves with it and by how much per iteration.
place_reason analysis_pass::place(int i, int& moving, index_t& shift) {
  const sched_node& n = g.nodes[i];
  if (i == h) {
    for (int q = 0; q < 3; ++q) {
      std::copy_n(full.begin() + n.slot, n.rank, s.window[q].begin() + n.slot);
      s.window[q][n.slot + plan.slot] = chunk[q];
      if (strip_slot >= 0) s.window[q][n.slot + strip_slot] = strip_range;
    }
    moving = plan.slot;
    shift = static_cast<index_t>(plan.counts.probe_step);
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
void analysis_pass::account_root(int i, place_reason why) {
  const sched_node& n = g.nodes[i];
  int root_consumers = 0;
  for (int c : n.consumers) root_consumers += plan.in_loop[c] ? 0 : 1;
  // A copy the builder removes, at the root with it (its term is before: consumers first).
  if (n.writes_into_copy && !plan.in_loop[n.consumers[0]]) {
    plan.counts.roots.push_back({&n.at_root, 0, false, true});
    mark_removed_copy(plan.counts.roots, g.nodes[n.consumers[0]]);
    return;
  }
  plan.counts.roots.push_back({&n.at_root, root_consumers});
  if (n.at_root.allocated) plan.counts.root_bytes += n.full_bytes;
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
  const double rows[3] = {s.rows[0][i], s.rows[1][i], s.rows[2][i]};
  add_external(plan, model, bytes, g.region_bytes(n, s.produce[0].data()), model.level_of(n.full_bytes), rows,
               s.row_share[i], continuing(s.window[0].data() + n.slot, s.window[1].data() + n.slot, n.rank));
}

// Member i in the loop: what each iteration computes (the part of its window earlier iterations
// did not: the builder's sliding window, or the whole window where consecutive windows do not
// overlap), its ring buffer, and the bytes it writes and its consumers read.
void analysis_pass::account_in_loop(int i, int moving, index_t shift) {
  const sched_node& n = g.nodes[i];
  SLINKY_ASSERT(moving >= 0 && static_cast<std::size_t>(moving) < n.rank, "a func in the loop moves along a variable");
  SLINKY_ASSERT(shift != 0, "a func in the loop moves between iterations");
  plan.in_loop[i] = 1;
  for (std::size_t d = 0; d < n.out_slots[0].size(); ++d) {
    if (n.out_slots[0][d] == moving) plan.moving_dim[i] = static_cast<int>(d);
  }
  loop_counts& counts = plan.counts;
  ++counts.calls_per_iteration;
  ++counts.buffers;
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
  counts.work.push_back({{computed0, computed2}, n.footprint_bytes, hinted_point_ns(*n.f), n.strided_copy});
  counts.hinted_call_ns += hinted_call_ns(*n.f);
  const index_t ashift = shift < 0 ? -shift : shift;
  const index_t S = static_cast<index_t>(counts.probe_step);
  // A granularity beyond the loop's extent would leave one iteration: keep the largest that fits.
  auto add_granularity = [&](index_t g) {
    const index_t lcm = plan.granularity / std::gcd(plan.granularity, g) * g;
    plan.granularity = lcm <= counts.extent ? lcm : std::max(plan.granularity, g <= counts.extent ? g : 1);
  };
  if (ashift > 0 && ashift < S && S % ashift == 0) add_granularity(S / ashift);
  // The func's hint: calls computing a multiple of m elements of the moving dim. Where it moves
  // one element per element of the loop, steps in multiples of m give it such calls.
  const index_t m = hinted_multiple(*n.f, plan.moving_dim[i]);
  if (m > 1 && ashift == S) {
    add_granularity(m);
    plan.hinted_multiple = std::max(plan.hinted_multiple, m);
  }
  if (i == h) {
    counts.output_chunk.add(window0, window2);
    counts.streamed.push_back({{window0, window2},
                               model.level_of(n.full_bytes),
                               continuing(s.window[0].data() + n.slot, s.window[1].data() + n.slot, n.rank)});
    return;
  }
  counts.fold.add(window0, window2);
  counts.internal_bytes.add(produced0 + s.reads[0][i], produced2 + s.reads[2][i]);
  if (produced0 < window0) {
    plan.reason[i] = place_reason::slides;
    ++counts.sliding;
    counts.sliding_shift_bytes.add(produced0, produced2);
    counts.overlap_bytes.add(window0 - produced0, window2 - produced2);
  } else if (overlaps && plan.recompute) {
    plan.reason[i] = place_reason::recomputed;
    ++plan.recomputed;
  }
}

// What member i (in the loop) reads in each iteration: into its producers' windows when they are
// members, else into the external windows.
void analysis_pass::read_inputs(int i) {
  const sched_node& n = g.nodes[i];
  // The rows of what it computes at each probe (for the inputs it reads per row).
  const int row_slot = n.rank >= 2 && !n.out_slots.empty() && !n.out_slots[0].empty() ? n.out_slots[0][0] : -1;
  double rows[3] = {0, 0, 0};
  if (row_slot >= 0) {
    for (int q = 0; q < 3; ++q) {
      rows[q] = 1;
      for (std::size_t v = 0; v < n.rank; ++v) {
        if (static_cast<int>(v) != row_slot) rows[q] *= static_cast<double>(s.produce[q][n.slot + v].extent());
      }
    }
  }
  for (std::size_t k = 0; k < n.f->inputs().size(); ++k) {
    const func::input& in = n.f->inputs()[k];
    const double share = row_slot >= 0 && k < n.row_window_share.size() ? n.row_window_share[k] : 0;
    const bool per_row = share > 0;
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
        SLINKY_ASSERT(!plan.in_loop[p], "producers are placed after their consumers");
        add_to_region(g.nodes[p], g.produced.at(b).second, s.needed, s.window[q].data());
        s.reads[q][p] += box_bytes(s.needed, g.elem_size(b));
        if (per_row) {
          s.rows[q][p] += rows[q] * share;
          s.row_share[p] = std::max(s.row_share[p], share);
        }
        continue;
      }
      if (per_row) {
        ext->rows[q] += rows[q] * share;
        ext->row_share = std::max(ext->row_share, share);
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

// Storage shared within an iteration, as the builder shares it (docs/builder.md): the funcs run
// producers first (the members reversed); an intermediate in the loop that does not slide, with
// one output in automatic or stack memory, takes the memory of an earlier one of the same size
// class (its windows' bytes at the probes, constant element size, rank and memory) whose users
// are all before it, greedily in that order. (The builder also proves the extents equal and keeps
// views and client strides apart; the model does not see those.)
void analysis_pass::account_shared_storage() {
  using block = loop_analyzer::scratch::storage_block;
  std::vector<block>& blocks = s.blocks;
  blocks.clear();
  loop_counts& counts = plan.counts;
  const std::size_t m = members.size();
  for (std::size_t k = 0; k < m; ++k) s.position[members[k]] = m - 1 - k;
  for (std::size_t k = m; k-- > 0;) {
    const int i = members[k];
    if (i == h || !plan.in_loop[i] || plan.reason[i] == place_reason::slides || writes_into_copy(i) ||
        view_in_loop(i)) {
      continue;
    }
    const sched_node& n = g.nodes[i];
    if (n.f->outputs().size() != 1) continue;
    const buffer_expr* b = n.f->outputs()[0].buffer.get();
    if (b->storage() == memory_type::heap || !b->has_elem_size() || !as_constant(b->elem_size())) continue;
    const double bytes[2] = {g.region_bytes(n, s.window[0].data()), g.region_bytes(n, s.window[2].data())};
    const index_t elem_size = *as_constant(b->elem_size());
    const std::size_t rank = b->rank();
    // Its position and its last user's, counted from the first func run.
    const std::size_t pos = s.position[i];
    std::size_t last = pos;
    for (int c : n.consumers) last = std::max(last, s.position[c]);
    auto fits = [&](const block& x) {
      return x.bytes[0] == bytes[0] && x.bytes[1] == bytes[1] && x.elem_size == elem_size && x.rank == rank &&
             x.storage == b->storage() && x.free_after < pos;
    };
    auto donor = std::find_if(blocks.begin(), blocks.end(), fits);
    if (donor == blocks.end()) {
      blocks.push_back({{bytes[0], bytes[1]}, elem_size, rank, b->storage(), last});
      continue;
    }
    donor->free_after = last;
    counts.shared_bytes.add(bytes[0], bytes[1]);
    ++counts.shared_buffers;
  }
}

linear_in_step analysis_pass::unstore(int i) {
  const sched_node& n = g.nodes[i];
  loop_counts& counts = plan.counts;
  const double window0 = g.region_bytes(n, s.window[0].data()), window2 = g.region_bytes(n, s.window[2].data());
  const double produced0 = g.region_bytes(n, s.produce[0].data()), produced2 = g.region_bytes(n, s.produce[2].data());
  counts.fold.add(-window0, -window2);
  --counts.buffers;
  if (plan.reason[i] == place_reason::slides) {
    --counts.sliding;
    counts.sliding_shift_bytes.add(-produced0, -produced2);
    counts.overlap_bytes.add(produced0 - window0, produced2 - window2);
  }
  return {produced0, produced2};
}

// The copies the builder removes (sched_node::writes_into_copy, docs/copies.md): a func in the loop
// whose only consumer is a copy reading it point for point writes straight into the copy's
// destination (its window, or the output's chunk where the copy is the head). Its window is not
// stored, it is not a buffer the iteration streams through, and nothing reads it; the copy writes
// only its padding, a few elements per row, which the model takes as no work (its call remains).
// As the builder does it in a pipelined parallel loop too (the copy's ring buffer takes its
// writes), its shifts are not counted again.
void analysis_pass::account_copies_removed() {
  loop_counts& counts = plan.counts;
  for_each_in_loop([&](int i, std::size_t w) {
    if (i == h || !writes_into_copy(i)) return;
    const sched_node& n = g.nodes[i];
    const int c = n.consumers[0];
    const linear_in_step produced = unstore(i);
    // The copy's reads of it, and the copy's writes (or, into the output's chunk, its own: the
    // chunk is streamed whatever writes it).
    counts.internal_bytes.add(-s.reads[0][i], -s.reads[2][i]);
    if (c == h) {
      counts.internal_bytes.add(-produced.at_s, -produced.at_2s);
    } else {
      const sched_node& cn = g.nodes[c];
      counts.internal_bytes.add(-g.region_bytes(cn, s.produce[0].data()), -g.region_bytes(cn, s.produce[2].data()));
    }
    // The copy's work: its entry is the one of the member in the loop it is (consumers first).
    std::size_t cw = 0;
    for (int m : members) {
      if (m == c) break;
      cw += plan.in_loop[m] ? 1 : 0;
    }
    SLINKY_ASSERT(cw < w && cw < counts.work.size(), "the copy is in the loop, before its producer");
    counts.work[cw].points = linear_in_step();
  });
}

void analysis_pass::account_externals() {
  for (const buffer_expr* b : external_order) {
    const external_read& e = externals[b];
    if (e.box[0].empty() || e.box[1].empty() || e.box[2].empty()) continue;
    double bytes[3];
    for (int q = 0; q < 3; ++q) bytes[q] = box_bytes(e.box[q], e.elem_size);
    std::vector<index_range> overlap = e.box[0];
    for (std::size_t d = 0; d < overlap.size() && d < e.box[1].size(); ++d) {
      overlap[d] = intersect(e.box[0][d], e.box[1][d]);
    }
    const double total = e.total_bytes >= 0 ? e.total_bytes : bytes[0] * plan.counts.extent / plan.counts.probe_step;
    add_external(plan, model, bytes, box_bytes(overlap, e.elem_size), model.level_of(total), e.rows, e.row_share,
                 e.box[0].size() == e.box[1].size() && continuing(e.box[0].data(), e.box[1].data(), e.box[0].size()));
  }
}

// Copies the builder makes views of their sources in the loop (sched_node::view_of_source): a
// member in the loop whose source is an input or a member at the root (not a ring buffer of the
// loop) is a view of it there too (docs/copies.md, "From the source"). Its window is not stored,
// it makes no call, does no work and writes nothing; its consumers read the source through it
// (their reads stay, at the working set's level, and the copy's own reads of the source stand
// for the source's window).
bool analysis_pass::view_in_loop(int i) const {
  const sched_node& n = g.nodes[i];
  if (i == h || !plan.in_loop[i] || !n.view_of_source) return false;
  const int p = g.producer_of(n.f->inputs()[0].buffer.get());
  return p < 0 || (s.member_mark[p] == s.mark && !plan.in_loop[p]);
}

void analysis_pass::account_views_in_loop() {
  loop_counts& counts = plan.counts;
  for_each_in_loop([&](int i, std::size_t w) {
    if (!view_in_loop(i)) return;
    const linear_in_step produced = unstore(i);
    --counts.calls_per_iteration;
    counts.internal_bytes.add(-produced.at_s, -produced.at_2s);
    SLINKY_ASSERT(w < counts.work.size(), "a work entry per member in the loop");
    counts.work[w].points = linear_in_step();
  });
}

}  // namespace

void loop_analyzer::analyze(int h, int dim, const std::vector<int>& members, bool recompute, loop_analysis& result,
                            strip outer) {
  analysis_pass(g_, h, members, full_, model_, scratch_, result).run(dim, recompute, outer);
}

void loop_analyzer::unscheduled(const std::vector<int>& members, std::vector<root_term>& roots) const {
  roots.clear();
  for (int i : members) {
    const sched_node& n = g_.nodes[i];
    // The head's consumers are outside the group (a subgroup's head feeds a loop of another
    // group, which prices its reads as an external window): as in analyze, only its writes.
    const bool head = i == members.front();
    if (n.writes_into_copy) {
      roots.push_back({&n.at_root, 0, false, true});
      mark_removed_copy(roots, g_.nodes[n.consumers[0]]);
      continue;
    }
    roots.push_back({&n.at_root, head ? 0 : static_cast<int>(n.consumers.size())});
  }
}

index_t floor_power_of_two(index_t x) {
  index_t p = 1;
  while (p <= x / 2) p *= 2;
  return p;
}

}  // namespace scheduler_internal
}  // namespace slinky
