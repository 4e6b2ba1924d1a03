// The scheduler's view of the graph: the walk from the outputs and the whole regions.
#include "slinky/scheduler/sched_graph.h"

#include <algorithm>
#include <cmath>

#include "slinky/base/assert.h"
#include "slinky/builder/alias_views.h"
#include "slinky/builder/graph.h"

namespace slinky {
namespace scheduler_internal {

index_t sched_graph::elem_size(const buffer_expr* b) const {
  const index_t c = b->constant_elem_size();
  if (c > 0) return c;
  auto s = shape_elem_size.find(b);
  if (s != shape_elem_size.end() && s->second > 0) return s->second;
  return 4;
}

int sched_graph::producer_of(const buffer_expr* b) const {
  auto i = produced.find(b);
  SLINKY_ASSERT(i == produced.end() || (i->second.first >= 0 && i->second.first < static_cast<int>(nodes.size())),
                "a produced buffer's producer is a node of the graph");
  return i == produced.end() ? -1 : i->second.first;
}

region_env sched_graph::env(const sched_node& n, const index_range* regions) const {
  region_env e;
  e.vars = n.f->outputs()[0].dims.data();
  e.ranges = regions + n.slot;
  e.num_vars = n.rank;
  e.scalars = &scalars;
  e.buffers = &shapes;
  return e;
}

double sched_graph::region_bytes(const sched_node& n, const index_range* regions) const {
  double total = 0;
  for (std::size_t k = 0; k < n.out_slots.size(); ++k) {
    double elems = static_cast<double>(n.out_elem_size[k]);
    for (int s : n.out_slots[k]) {
      if (s < 0) return 0;
      elems *= static_cast<double>(regions[n.slot + s].extent());
    }
    total += elems;
  }
  return total;
}

namespace {

// Records the func of node i: its variable slots, output element sizes, client schedule.
void init_node(sched_graph& g, func* f, int i) {
  sched_node& n = g.nodes[i];
  n.f = f;
  n.user_scheduled = !f->loops().empty() || f->compute_at().has_value();
  n.client_loops = !f->loops().empty();
  for (const func::output& o : f->outputs()) {
    if (o.buffer->store_at() && !o.buffer->store_at()->root()) n.client_loops = true;
  }
  if (f->compute_at()) {
    n.pinned_root = f->compute_at()->root();
    n.pinned_loop = !f->compute_at()->root();
  }
  static const std::vector<var> no_vars;
  const std::vector<var>& vars = f->outputs().empty() ? no_vars : f->outputs()[0].dims;
  n.rank = vars.size();
  n.slot = g.num_slots;
  g.num_slots += n.rank;
  for (std::size_t k = 0; k < f->outputs().size(); ++k) {
    const func::output& o = f->outputs()[k];
    std::vector<int> slots;
    for (const var& v : o.dims) {
      auto j = std::find(vars.begin(), vars.end(), v);
      slots.push_back(j == vars.end() ? -1 : static_cast<int>(j - vars.begin()));
    }
    n.out_slots.push_back(std::move(slots));
    n.out_elem_size.push_back(g.elem_size(o.buffer.get()));
    g.produced[o.buffer.get()] = {i, static_cast<int>(k)};
  }
}

}  // namespace

namespace {

// sched_node::writes_into_copy (the consumers known).
bool writes_into_copy(const sched_graph& g, const sched_node& n) {
  if (n.f->outputs().size() != 1 || n.consumers.size() != 1) return false;
  const buffer_expr* b = n.f->outputs()[0].buffer.get();
  if (g.outputs.count(b) || declares_layout(*b)) return false;
  const func& c = *g.nodes[n.consumers[0]].f;
  // A padded copy's second input is its pad.
  if (!c.is_copy() || c.inputs().size() != (c.is_padded_copy() ? 2u : 1u) || c.outputs().size() != 1) return false;
  if (c.is_padded_copy() && c.inputs()[1].buffer.get() == b) return false;
  const func::input& in = c.inputs()[0];
  const std::vector<var>& dims = c.outputs()[0].dims;
  if (in.buffer.get() != b || !in.output_crop.empty() || !in.output_slice.empty() || in.bounds.size() != dims.size() ||
      b->rank() != dims.size()) {
    return false;
  }
  for (std::size_t d = 0; d < dims.size(); ++d) {
    if (!in.bounds[d].is_point() || !match(in.bounds[d].min, dims[d])) return false;
  }
  return true;
}

// sched_node::view_of_source (the consumers and writes_into_copy known).
bool view_of_source(const sched_graph& g, const sched_node& n) {
  const func& c = *n.f;
  if (!c.is_copy() || c.is_padded_copy() || c.inputs().size() != 1 || c.outputs().size() != 1) return false;
  const buffer_expr* d = c.outputs()[0].buffer.get();
  if (g.outputs.count(d) || declares_layout(*d)) return false;
  const func::input& in = c.inputs()[0];
  if (!in.input_crop.empty() || !in.output_crop.empty() || !in.output_slice.empty()) return false;
  const int p = g.producer_of(in.buffer.get());
  if (p >= 0 && (declares_layout(*in.buffer) || g.nodes[p].writes_into_copy)) return false;
  // A consumer reading the view through a crop (where a broadcast's stride may be 0): kept a copy.
  for (int k : n.consumers) {
    for (const func::input& ci : g.nodes[k].f->inputs()) {
      if (ci.buffer.get() == d && !ci.input_crop.empty()) return false;
    }
  }
  linear_map m;
  return m.match(in, c.outputs()[0].dims, [](const expr&) { return false; });
}

}  // namespace

void build_sched_graph(const std::vector<buffer_expr_ptr>& inputs, const std::vector<buffer_expr_ptr>& outputs,
                       const schedule_shapes& shapes, sched_graph& g) {
  for (const schedule_shapes::buffer_shape& s : shapes.buffers) {
    if (!s.buffer) continue;
    std::vector<index_range>& r = g.shape_store[s.buffer->sym().sym()];
    r.clear();
    for (const auto& d : s.bounds) r.push_back({d.first, d.second});
    g.shape_elem_size[s.buffer.get()] = s.elem_size;
  }
  for (const auto& i : g.shape_store) g.shapes[i.first] = &i.second;
  for (const auto& s : shapes.scalars) g.scalars[s.first.sym()] = s.second;

  std::unordered_set<const buffer_expr*> stop;
  for (const buffer_expr_ptr& b : inputs) stop.insert(b.get());
  for (const buffer_expr_ptr& b : outputs) g.outputs.insert(b.get());

  // An iterative depth-first search from the outputs' producers: post-order puts producers
  // before consumers. Nodes are numbered in the order they are found, which depends only on the
  // graph's structure (the order of outputs and of each func's inputs): deterministic.
  std::unordered_map<const func*, int> index;
  std::vector<int> post_order;
  std::vector<std::pair<int, std::size_t>> stack;  // node, next input
  auto visit = [&](const func* f) -> int {
    auto found = index.find(f);
    if (found != index.end()) return -found->second - 1;
    const int i = static_cast<int>(g.nodes.size());
    index[f] = i;
    g.nodes.emplace_back();
    // The funcs belong to the client, who made them non-const; buffer_expr hands out const
    // pointers only.
    init_node(g, const_cast<func*>(f), i);
    return i;
  };
  for (const buffer_expr_ptr& o : outputs) {
    if (stop.count(o.get()) || !o->producer()) continue;
    const int root = visit(o->producer());
    g.nodes[root < 0 ? -root - 1 : root].head = true;
    if (root < 0) continue;
    stack.emplace_back(root, 0);
    while (!stack.empty()) {
      const int c = stack.back().first;
      const std::vector<func::input>& ins = g.nodes[c].f->inputs();
      std::size_t& next = stack.back().second;
      if (next == ins.size()) {
        post_order.push_back(c);
        stack.pop_back();
        continue;
      }
      const buffer_expr* b = ins[next++].buffer.get();
      if (!b || stop.count(b) || !b->producer()) continue;
      const int p = visit(b->producer());
      const int pi = p < 0 ? -p - 1 : p;
      std::vector<int>& cs = g.nodes[pi].consumers;
      if (std::find(cs.begin(), cs.end(), c) == cs.end()) cs.push_back(c);
      if (p >= 0) stack.emplace_back(p, 0);
    }
  }
  g.order.assign(post_order.rbegin(), post_order.rend());

  for (sched_node& n : g.nodes) n.writes_into_copy = writes_into_copy(g, n);
  for (sched_node& n : g.nodes) n.view_of_source = view_of_source(g, n);

  // Groups: a head is its own group; a func whose consumers all belong to one group belongs to it.
  for (int i : g.order) {
    sched_node& n = g.nodes[i];
    if (n.head) {
      n.group = i;
      continue;
    }
    n.group = n.consumers.empty() ? -1 : g.nodes[n.consumers[0]].group;
    for (int c : n.consumers) {
      if (g.nodes[c].group != n.group) n.group = -1;
    }
  }
}

double box_bytes(const std::vector<index_range>& box, index_t elem_size) {
  double b = static_cast<double>(elem_size);
  for (const index_range& r : box) b *= static_cast<double>(r.extent());
  return b;
}

bool consumer_reads(const sched_graph& g, const sched_node& c, const index_range* regions, const func::input& in,
                    std::vector<index_range>& result) {
  // An output_slice (a stack's input) needs no special case: the bounds are in terms of the
  // consumer's variables, the sliced one unused, and the output_crop pins it to the slice.
  if (in.output_crop.empty()) return needed_region(in, g.env(c, regions), result);
  // Restrict the consumer's region to the part of its first output this input is copied to.
  index_range restricted[8];
  if (c.rank > 8) return false;
  std::copy(regions + c.slot, regions + c.slot + c.rank, restricted);
  const region_env e = g.env(c, regions);
  // A copy whose sources slice its output may give the sliced dims no variable (no slot): their
  // output_crop only pins the slice.
  const bool unindexed_slices = c.out_slots[0].size() < c.f->outputs()[0].buffer->rank();
  for (std::size_t d = 0, j = 0; d < in.output_crop.size() && j < c.out_slots[0].size(); ++d) {
    if (unindexed_slices && d < in.output_slice.size() && in.output_slice[d].defined()) continue;
    const int s = c.out_slots[0][j++];
    const interval_expr& crop = in.output_crop[d];
    if (s < 0) return false;
    index_range lo, hi;
    if (crop.min.defined() && is_infinity(crop.min) == 0) {
      if (!eval_range(crop.min, e, lo)) return false;
      restricted[s].min = std::max(restricted[s].min, lo.min);
    }
    if (crop.max.defined() && is_infinity(crop.max) == 0) {
      if (!eval_range(crop.max, e, hi)) return false;
      restricted[s].max = std::min(restricted[s].max, hi.max);
    }
  }
  // The consumer writes none of this input's part (a part of a concatenation outside the
  // consumer's region): it reads nothing of it.
  for (int d = 0; d < static_cast<int>(c.rank); ++d) {
    if (restricted[d].empty()) {
      result.assign(internal::used_bounds(in).size(), index_range());
      return true;
    }
  }
  region_env re = e;
  re.ranges = restricted;
  return needed_region(in, re, result);
}

void add_to_region(const sched_node& p, int k, const std::vector<index_range>& needed, index_range* regions) {
  SLINKY_ASSERT(k >= 0 && k < static_cast<int>(p.out_slots.size()), "an output of the func");
  const std::vector<int>& slots = p.out_slots[k];
  for (std::size_t d = 0; d < slots.size() && d < needed.size(); ++d) {
    if (slots[d] < 0) continue;
    SLINKY_ASSERT(static_cast<std::size_t>(slots[d]) < p.rank, "an output dim's slot is one of the func's variables");
    index_range& r = regions[p.slot + slots[d]];
    r = hull(r, needed[d]);
  }
}

namespace {

// The footprint of one point of node n's region (sched_node::footprint_bytes): what it reads for
// the point in the middle of `regions` (n's slots of it, left as they were) and writes.
double footprint_of_point(const sched_graph& g, const sched_node& n, index_range* regions,
                          std::vector<index_range>& needed) {
  index_range saved[8];
  if (n.rank > 8) return 0;
  std::copy_n(regions + n.slot, n.rank, saved);
  for (std::size_t v = 0; v < n.rank; ++v) {
    const index_range& r = saved[v];
    const index_t mid = r.min + (r.max - r.min) / 2;
    regions[n.slot + v] = {mid, mid};
  }
  double bytes = 0;
  for (index_t e : n.out_elem_size) bytes += static_cast<double>(e);
  for (const func::input& in : n.f->inputs()) {
    if (!consumer_reads(g, n, regions, in, needed)) continue;
    double b = static_cast<double>(g.elem_size(in.buffer.get()));
    for (const index_range& r : needed) b *= static_cast<double>(r.extent());
    bytes += b;
  }
  std::copy_n(saved, n.rank, regions + n.slot);
  return bytes;
}

// Whether two boxes of the same rank have no element in common.
bool disjoint(const std::vector<index_range>& a, const std::vector<index_range>& b) {
  for (std::size_t d = 0; d < a.size() && d < b.size(); ++d) {
    if (intersect(a[d], b[d]).empty()) return true;
  }
  return false;
}

// sched_node::row_window_share of input `in` of node c, whose window for its whole region
// (`regions`, c's slots final) is `needed`: the window of the middle row (`row`), and those of
// its neighbours along each other slot (`next`).
double row_window_share(const sched_graph& g, const sched_node& c, index_range* regions, const func::input& in,
                        int row_slot, const std::vector<index_range>& needed, std::vector<index_range>& row,
                        std::vector<index_range>& next) {
  index_range saved[8];
  if (c.rank > 8) return 0;
  std::copy_n(regions + c.slot, c.rank, saved);
  for (std::size_t v = 0; v < c.rank; ++v) {
    if (static_cast<int>(v) == row_slot) continue;
    const index_range& r = saved[v];
    const index_t mid = r.min + (r.max - r.min) / 2;
    regions[c.slot + v] = {mid, mid};
  }
  double share = 0;
  if (consumer_reads(g, c, regions, in, row) && row.size() == needed.size() &&
      std::none_of(row.begin(), row.end(), [](const index_range& r) { return r.empty(); })) {
    if (row == needed) {
      share = 1;
    } else {
      // Rows sharing their window along some slot, none overlapping a neighbour's in part.
      bool shared = false, partial = false;
      for (std::size_t v = 0; v < c.rank && !partial; ++v) {
        if (static_cast<int>(v) == row_slot || saved[v].extent() < 2) continue;
        const index_t mid = regions[c.slot + v].min;
        const index_t other = mid < saved[v].max ? mid + 1 : mid - 1;
        regions[c.slot + v] = {other, other};
        if (!consumer_reads(g, c, regions, in, next) || next.size() != row.size()) {
          partial = true;
        } else if (next == row) {
          shared = true;
        } else if (!disjoint(next, row)) {
          partial = true;
        }
        regions[c.slot + v] = {mid, mid};
      }
      if (shared && !partial) share = box_bytes(row, 1) / box_bytes(needed, 1);
    }
  }
  std::copy_n(saved, c.rank, regions + c.slot);
  return share;
}

// Whether, along the destination's dim `x`, the source advances its own dim `x` by one element and
// no other dim (the coefficients of a linear map, linear_map::coeff[source dim][destination dim]).
bool unit_step(const linear_map& m, std::size_t x) {
  if (x >= m.coeff.size()) return false;
  for (std::size_t k = 0; k < m.coeff.size(); ++k) {
    auto a = as_constant(m.coeff[k][x]);
    if (!a || *a != (k == x ? 1 : 0)) return false;
  }
  return true;
}

// sched_node::strided_copy for node n over its whole region (regions, n's slots final).
bool strided_copy(const sched_graph& g, const sched_node& n, const index_range* regions,
                  std::vector<index_range>& needed) {
  const func& c = *n.f;
  if (!c.is_copy() || c.outputs().size() != 1 || c.inputs().size() != (c.is_padded_copy() ? 2u : 1u)) return false;
  if (n.out_slots.empty() || n.out_slots[0].empty() || n.out_slots[0][0] < 0) return false;
  const func::input& in = c.inputs()[0];
  const std::vector<var>& dims = c.outputs()[0].dims;
  linear_map m;
  if (!m.match(in, dims, [](const expr&) { return false; }) || m.coeff.empty()) return false;
  for (const std::vector<expr>& row : m.coeff) {
    for (const expr& a : row) {
      if (!as_constant(a)) return false;
    }
  }
  if (!unit_step(m, 0)) return true;
  const index_t run = regions[n.slot + n.out_slots[0][0]].extent();
  if (static_cast<double>(run * n.out_elem_size[0]) >= cost_model::contiguous_run_bytes) return false;
  // Short runs the runtime fuses with the next dim into long ones: the source's and destination's
  // dim 0 of the same extent, dim 1 advancing by one in both (a dense copy of a buffer of 3
  // channels). The source's extent is known for an input of known shape and for an intermediate
  // this copy alone reads (allocated for what it reads).
  if (dims.size() < 2 || n.out_slots[0].size() < 2 || n.out_slots[0][1] < 0 || !unit_step(m, 1)) return true;
  if (!consumer_reads(g, n, regions, in, needed) || needed.empty() || needed[0].extent() != run) return true;
  const buffer_expr* b = in.buffer.get();
  const int p = g.producer_of(b);
  index_t src_extent = -1;
  if (p >= 0 && g.nodes[p].consumers.size() == 1 && !declares_layout(*b)) src_extent = needed[0].extent();
  auto s = g.shapes.find(b->sym().sym());
  if (p < 0 && s != g.shapes.end() && !s->second->empty()) src_extent = (*s->second)[0].extent();
  return src_extent != run;
}

}  // namespace

double hinted_point_ns(const func& f) {
  const double t = f.hints().ns_per_point;
  return std::isfinite(t) && t >= 0 ? t : -1;
}

double hinted_call_ns(const func& f) {
  const double t = f.hints().ns_per_call;
  return std::isfinite(t) && t > 0 ? t : 0;
}

index_t hinted_multiple(const func& f, int dim) {
  const func::cost_hints& h = f.hints();
  return dim >= 0 && h.dim == dim && h.multiple > 1 ? h.multiple : 1;
}

void full_regions(sched_graph& g, const cost_model& model, std::vector<index_range>& regions) {
  regions.assign(g.num_slots, index_range());
  // Funcs shared by several outputs are not analyzed (the scheduler leaves them at the root).
  for (sched_node& n : g.nodes) n.full_known = n.group >= 0;
  std::vector<index_range> needed, row_needed, next_needed;
  for (int i : g.order) {
    sched_node& c = g.nodes[i];
    if (c.head) {
      // The shape of each output given, else the region is unknown.
      for (std::size_t k = 0; k < c.out_slots.size(); ++k) {
        auto s = g.shapes.find(c.f->outputs()[k].buffer->sym().sym());
        if (s == g.shapes.end() || s->second->size() != c.out_slots[k].size()) {
          if (k == 0) {
            c.full_known = false;
            c.shape_rank_mismatch = s != g.shapes.end();
          }
          continue;
        }
        add_to_region(c, static_cast<int>(k), *s->second, regions.data());
        if (k == 0) {
          c.empty_output =
              std::any_of(s->second->begin(), s->second->end(), [](const index_range& r) { return r.empty(); });
        }
      }
    }
    if (c.full_known) {
      for (std::size_t s = 0; s < c.rank; ++s) {
        if (regions[c.slot + s].empty()) c.full_known = false;
      }
    }
    c.full_bytes = c.full_known ? g.region_bytes(c, regions.data()) : 0;
    c.full_elements = 0;
    c.footprint_bytes = 0;
    if (c.full_known) {
      c.full_elements = 1;
      for (std::size_t s = 0; s < c.rank; ++s) c.full_elements *= static_cast<double>(regions[c.slot + s].extent());
      c.footprint_bytes = footprint_of_point(g, c, regions.data(), needed);
    }
    c.at_root.region_bytes = c.full_bytes;
    c.at_root.region_level = model.level_of(c.full_bytes);
    c.at_root.points = c.full_elements;
    c.at_root.footprint_bytes = c.footprint_bytes;
    c.at_root.hinted_point_ns = hinted_point_ns(*c.f);
    c.at_root.hinted_call_ns = hinted_call_ns(*c.f);
    c.strided_copy = c.full_known && strided_copy(g, c, regions.data(), needed);
    c.at_root.strided_copy = c.strided_copy;
    // An output's region is the client's buffer, not allocated by the pipeline.
    c.at_root.allocated = !c.head;
    c.row_window_share.assign(c.f->inputs().size(), 0);
    c.at_root.rereads.clear();
    // The rows of its region: the points over the extent of the variable of its output's dim 0.
    const int row_slot =
        c.full_known && c.rank >= 2 && !c.out_slots.empty() && !c.out_slots[0].empty() ? c.out_slots[0][0] : -1;
    const double rows = row_slot >= 0 ? c.full_elements / static_cast<double>(regions[c.slot + row_slot].extent()) : 0;
    for (std::size_t k = 0; k < c.f->inputs().size(); ++k) {
      const func::input& in = c.f->inputs()[k];
      const buffer_expr* b = in.buffer.get();
      const int p = g.producer_of(b);
      const bool ok = c.full_known && consumer_reads(g, c, regions.data(), in, needed);
      if (ok && rows >= 2) {
        const double share = row_window_share(g, c, regions.data(), in, row_slot, needed, row_needed, next_needed);
        c.row_window_share[k] = share;
        // Beyond the first read of the whole window, the rows' reads of theirs, from the level one
        // row's window fits in.
        const double bytes = box_bytes(needed, g.elem_size(b));
        const double again = (rows * share - 1) * bytes;
        if (share > 0 && again > 0) c.at_root.rereads.push_back({again, model.level_of(share * bytes)});
      }
      if (p >= 0 && !g.nodes[p].head && g.nodes[p].group == c.group && c.group >= 0) {
        if (ok) {
          add_to_region(g.nodes[p], g.produced.at(b).second, needed, regions.data());
        } else {
          g.nodes[p].full_known = false;
        }
        continue;
      }
      if (!ok) continue;
      // Read from outside the group: at the level its whole size fits in.
      double bytes = static_cast<double>(g.elem_size(b));
      for (const index_range& r : needed) bytes *= static_cast<double>(r.extent());
      double total = bytes;
      auto s = g.shapes.find(b->sym().sym());
      if (s != g.shapes.end()) {
        total = static_cast<double>(g.elem_size(b));
        for (const index_range& r : *s->second) total *= static_cast<double>(r.extent());
      }
      c.at_root.reads.push_back({bytes, model.level_of(total)});
    }
  }
  // The views' sources are known now (producers after consumers): a view's consumers read its
  // source's memory, at the level the source fits in.
  for (sched_node& c : g.nodes) {
    c.at_root.view = c.view_of_source && c.full_known;
    if (!c.at_root.view) continue;
    c.at_root.allocated = false;
    const int p = g.producer_of(c.f->inputs()[0].buffer.get());
    c.at_root.view_level = p >= 0                     ? g.nodes[p].at_root.region_level
                           : !c.at_root.reads.empty() ? c.at_root.reads[0].level
                                                      : c.at_root.region_level;
  }
}

}  // namespace scheduler_internal
}  // namespace slinky
