// Random pipeline testing, part 3: see generate.h.
#include "random_pipeline/generate.h"

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "random_pipeline/auto.h"

namespace slinky {
namespace random_test {

bool features::parse(const std::string& list) {
  std::size_t begin = 0;
  while (begin < list.size()) {
    std::size_t end = list.find(',', begin);
    if (end == std::string::npos) end = list.size();
    std::string name = list.substr(begin, end - begin);
    begin = end + 1;
    if (name.empty()) continue;
    bool on = true;
    if (name[0] == '-' || name[0] == '+') {
      on = name[0] == '+';
      name = name.substr(1);
    }
    if (name.rfind("stages=", 0) == 0) {
      max_stages = std::max(1, std::atoi(name.c_str() + 7));
      continue;
    }
    bool* flag = find(name);
    if (!flag) return false;
    *flag = on;
  }
  return true;
}

const std::vector<features::entry>& features::entries() {
  static const std::vector<entry> all = {
      {"vary_rank", &features::vary_rank},
      {"narrow_types", &features::narrow_types},
      {"copies", &features::copies},
      {"copy_loops", &features::copy_loops},
      {"consumed_outputs", &features::consumed_outputs},
      {"unused_outputs", &features::unused_outputs},
      {"empty_outputs", &features::empty_outputs},
      {"duplicate_inputs", &features::duplicate_inputs},
      {"layouts", &features::layouts},
      {"inner_storage", &features::inner_storage},
      {"diagonal", &features::diagonal},
      {"hull_windows", &features::hull_windows},
      {"constant_loops", &features::constant_loops},
      {"shadowed_vars", &features::shadowed_vars},
      {"parallel_shared_storage", &features::parallel_shared_storage},
      {"shared_vars", &features::shared_vars},
      {"parallel", &features::parallel},
      {"thread_pool", &features::thread_pool},
      {"parallel_memory_bound", &features::parallel_memory_bound},
      {"store_at", &features::store_at},
      {"compute_at", &features::compute_at},
      {"stack", &features::stack},
      {"padded_copies", &features::padded_copies},
      {"padded_intermediates", &features::padded_intermediates},
      {"multi_copies", &features::multi_copies},
      {"concat", &features::concat},
      {"stack_copies", &features::stack_copies},
      {"flips", &features::flips},
      {"reshapes", &features::reshapes},
      {"reshapes_up", &features::reshapes_up},
      {"view_copies", &features::view_copies},
      {"radix_reshapes", &features::radix_reshapes},
      {"copy_call_counts", &features::copy_call_counts},
      {"symbolic_radices", &features::symbolic_radices},
      {"pad_buffers", &features::pad_buffers},
      {"nested_splits", &features::nested_splits},
      {"folds", &features::folds},
      {"copy_folds", &features::copy_folds},
      {"constants", &features::constants},
      {"failures", &features::failures},
      {"auto", &features::auto_schedule},
      {"auto_only", &features::auto_only},
      {"auto_store_at", &features::auto_store_at},
  };
  return all;
}

bool* features::find(const std::string& name) {
  for (const entry& e : entries()) {
    if (name == e.name) return &(this->*e.flag);
  }
  return nullptr;
}

std::string features::to_string() const {
  std::string on, off;
  for (const entry& e : entries()) (this->*e.flag ? on : off) += std::string(" ") + e.name;
  return "stages=" + std::to_string(max_stages) + "; on:" + on + "; off:" + off;
}

std::uint64_t case_seed(std::uint64_t seed, std::uint64_t index) {
  std::uint64_t z = seed + 0x9e3779b97f4a7c15ull * (index + 1);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

namespace internal_generate {

enum class kind { pointwise, stencil, down, up, transpose, reduce, expand, combine, copy };

// An access of variable v: mostly a point, else a window, down- or up-sampling as asked.
access make_access(rng& r, int v, kind k) {
  access a;
  a.var = v;
  switch (k) {
  case kind::stencil:
    if (r.chance(0.7)) {
      a.lo = -r.uniform(0, 3);
      a.hi = r.uniform(0, 3);
    } else {
      a.lo = a.hi = r.uniform(-2, 2);
    }
    break;
  case kind::down:
    a.mul = r.uniform(2, 3);
    a.lo = r.chance(0.7) ? 0 : -1;
    a.hi = a.mul - 1 + (r.chance(0.7) ? 0 : 1);
    if (r.chance(0.2)) a.hi = a.lo;
    break;
  case kind::up:
    a.div = r.uniform(2, 3);
    if (r.chance(0.3)) a.hi = 1;
    if (r.chance(0.15)) a.mul = a.div + 1;
    break;
  case kind::copy:
    // Translations mostly; else a downsample or stride (2x + c) or an upsample (x / 2 + c).
    a.lo = a.hi = r.chance(0.5) ? 0 : r.uniform(-3, 3);
    if (r.chance(0.15)) {
      a.mul = 2;
    } else if (r.chance(0.15)) {
      a.div = 2;
    }
    break;
  default:
    if (r.chance(0.15)) a.lo = a.hi = r.uniform(-1, 1);
    break;
  }
  return a;
}

// A buffer read by a stage of rank `rank`: its dims map to the variables in `order` (extra dims
// of the buffer are reduced: read over a constant range, or whole for pipeline inputs).
stage_input make_input(rng& r, const graph_spec& g, int b, int rank, const std::vector<int>& order, kind k,
                       bool one_dim_only) {
  stage_input in;
  in.buffer = b;
  const int special = static_cast<int>(r.uniform(0, g.buffers[b].rank - 1));
  for (int d = 0; d < g.buffers[b].rank; ++d) {
    if (d < static_cast<int>(order.size()) && order[d] < rank) {
      const bool plain = one_dim_only && d != special;
      in.dims.push_back(make_access(r, order[d], plain ? kind::pointwise : k));
    } else {
      access a;
      if (g.buffers[b].input && k != kind::copy && r.chance(0.5)) {
        a.whole = true;
      } else {
        a.lo = r.uniform(-2, 2);
        // A copy reads a point of each dimension.
        a.hi = k == kind::copy ? a.lo : a.lo + r.uniform(0, 4);
      }
      in.dims.push_back(a);
    }
  }
  return in;
}

int elem_size(rng& r, const features& f) {
  if (!f.narrow_types) return 4;
  const index_t k = r.uniform(0, 9);
  return k < 6 ? 4 : k < 8 ? 2 : 1;
}

// A buffer for a new stage to read: mostly one nobody reads yet (so chains grow long), else any.
int pick_buffer(rng& r, const graph_spec& g, const std::vector<int>& reads) {
  std::vector<int> unread, recent;
  for (std::size_t b = 0; b < g.buffers.size(); ++b) {
    if (g.buffers[b].rank == 0) continue;
    if (reads[b] == 0) unread.push_back(static_cast<int>(b));
    recent.push_back(static_cast<int>(b));
  }
  if (!unread.empty() && r.chance(0.75)) return r.pick(unread);
  if (recent.size() > 3 && r.chance(0.5)) recent.erase(recent.begin(), recent.end() - 3);
  return r.pick(recent);
}

std::vector<int> identity(int n) {
  std::vector<int> v(n);
  for (int i = 0; i < n; ++i) v[i] = i;
  return v;
}

std::vector<int> shuffled(rng& r, std::vector<int> v) {
  for (std::size_t i = v.size(); i > 1; --i) std::swap(v[i - 1], v[r.uniform(0, static_cast<index_t>(i) - 1)]);
  return v;
}

enum class copy_op { plain, flip, padded, multi, concat, stack, reshape, stencil, radix };

// The kind of a new copy of a buffer of rank ra, among those f allows.
copy_op pick_copy_op(rng& r, const features& f, int ra) {
  std::vector<copy_op> ops = {copy_op::plain, copy_op::plain};
  if (f.flips) ops.push_back(copy_op::flip);
  if (f.padded_copies) ops.push_back(copy_op::padded);
  if (f.multi_copies) ops.push_back(copy_op::multi);
  if (f.concat) ops.push_back(copy_op::concat);
  if (f.stack_copies && f.vary_rank && ra < max_rank) ops.push_back(copy_op::stack);
  if (f.vary_rank && ((f.reshapes && ra >= 2) || (f.reshapes_up && ra < max_rank))) ops.push_back(copy_op::reshape);
  // (Twice: the views the oracle checks need an intermediate on both sides, and few copies have.)
  if (f.view_copies && f.vary_rank && ra < max_rank) ops.insert(ops.end(), {copy_op::stencil, copy_op::stencil});
  if (f.radix_reshapes && f.vary_rank) ops.insert(ops.end(), {copy_op::radix, copy_op::radix});
  if (ops.size() == 2) return copy_op::plain;
  return r.pick(ops);
}

// Sources for a copy of several inputs: a, and 1 or 2 more of a's rank and element size.
std::vector<int> more_sources(rng& r, const graph_spec& g, int a, std::vector<int>& reads) {
  std::vector<int> result = {a};
  const int n = r.chance(0.7) ? 2 : 3;
  while (static_cast<int>(result.size()) < n) {
    int b = pick_buffer(r, g, reads);
    if (g.buffers[b].rank != g.buffers[a].rank || g.buffers[b].elem_size != g.buffers[a].elem_size) b = a;
    result.push_back(b);
  }
  return result;
}

// The inputs of a copy other than a plain one (st.rank is set).
void make_special_copy(rng& r, graph_spec& g, const features& f, stage_spec& st, int a, const std::vector<int>& order,
                       copy_op op, std::vector<int>& reads) {
  const int ra = g.buffers[a].rank;
  switch (op) {
  case copy_op::flip: {
    stage_input in = make_input(r, g, a, st.rank, order, kind::copy, false);
    for (int tries = 0; tries < 4; ++tries) {
      access& x = in.dims[r.uniform(0, ra - 1)];
      if (x.var < 0) continue;
      x.mul = -1;
      x.div = 1;
      x.lo = x.hi = r.uniform(-2, 10);
      if (r.chance(0.5)) break;
    }
    st.inputs.push_back(in);
    break;
  }
  case copy_op::padded: {
    stage_input in = make_input(r, g, a, st.rank, order, kind::copy, false);
    in.input_crop.assign(ra, ival{-unbounded, unbounded});
    const int must = static_cast<int>(r.uniform(0, ra - 1));
    for (int d = 0; d < ra; ++d) {
      if (d != must && r.chance(0.5)) continue;
      const index_t lo = r.uniform(-6, 4);
      const index_t hi = lo + r.uniform(0, 8);
      const index_t side = r.uniform(0, 3);
      if (side != 1) in.input_crop[d].min = lo;
      if (side != 2) in.input_crop[d].max = hi;
    }
    st.inputs.push_back(in);
    buffer_spec pad;
    pad.input = pad.constant = true;
    pad.rank = 0;
    pad.elem_size = g.buffers[a].elem_size;
    if (f.pad_buffers && r.chance(0.5)) {
      // A pad from a buffer of the output's rank, read at the output's point: a constant or a
      // pipeline input.
      pad.rank = st.rank;
      pad.constant = r.chance(0.5);
    }
    g.buffers.push_back(pad);
    reads.push_back(1);
    st.pad = static_cast<int>(g.buffers.size()) - 1;
    st.op = copy_kind::padded;
    break;
  }
  case copy_op::multi: {
    st.op = copy_kind::multi;
    st.dim = static_cast<int>(r.uniform(0, st.rank - 1));
    const std::vector<int> srcs = more_sources(r, g, a, reads);
    index_t split = r.uniform(-6, 6);
    for (std::size_t i = 0; i < srcs.size(); ++i) {
      stage_input in = make_input(r, g, srcs[i], st.rank, i == 0 ? order : identity(ra), kind::copy, false);
      in.output_crop.assign(st.rank, ival{-unbounded, unbounded});
      if (i > 0) in.output_crop[st.dim].min = split;
      if (i + 1 < srcs.size()) {
        if (i > 0) split += r.uniform(1, 5);
        in.output_crop[st.dim].max = split - 1;
      }
      st.inputs.push_back(in);
    }
    break;
  }
  case copy_op::concat:
  case copy_op::stack: {
    st.op = op == copy_op::concat ? copy_kind::concat : copy_kind::stack;
    st.dim = static_cast<int>(r.uniform(0, st.rank - 1));
    st.sliced = op == copy_op::stack && r.uniform(0, 1) == 1;
    const std::vector<int> srcs = more_sources(r, g, a, reads);
    if (op == copy_op::concat) {
      st.cat_bounds = {r.uniform(-8, 0)};
      for (std::size_t i = 0; i < srcs.size(); ++i) st.cat_bounds.push_back(st.cat_bounds.back() + r.uniform(1, 6));
    }
    for (int b : srcs) st.inputs.push_back({b, {}});
    normalize_copy(st);
    break;
  }
  case copy_op::reshape: {
    const index_t w = r.pick(std::vector<index_t>{2, 3, 4, 5, 8});
    stage_input in;
    in.buffer = a;
    if (st.rank > ra) {
      // To a higher rank: src(y * W + x + c, z).
      access x;
      x.var = 0;
      x.var2 = 1;
      x.mul2 = w;
      x.lo = x.hi = r.chance(0.5) ? 0 : r.uniform(-3, 3);
      in.dims.push_back(x);
      for (int d = 1; d < ra; ++d) in.dims.push_back(access{d + 1});
    } else {
      // To a lower rank: src(x % W, x / W + c, y).
      access x;
      x.var = 0;
      x.mod = w;
      access y;
      y.var = 0;
      y.div = w;
      y.lo = y.hi = r.chance(0.5) ? 0 : r.uniform(-3, 3);
      in.dims = {x, y};
      for (int d = 2; d < ra; ++d) in.dims.push_back(access{d - 1});
    }
    st.inputs.push_back(in);
    break;
  }
  case copy_op::stencil: {
    // src(x * S + dx * D + c, y, ...), dx the last dim of the output: the windows of a stencil
    // laid out as a dim of their own (im2col), S the stride and D the dilation.
    stage_input in;
    in.buffer = a;
    access x;
    x.var = 0;
    x.mul = r.uniform(1, 3);
    x.var2 = ra;
    x.mul2 = r.uniform(1, 3);
    x.lo = x.hi = r.chance(0.5) ? 0 : r.uniform(-3, 3);
    in.dims.push_back(x);
    for (int d = 1; d < ra; ++d) in.dims.push_back(access{d});
    st.inputs.push_back(in);
    break;
  }
  case copy_op::radix: {
    // The output's flat index, x or x + W * y, re-split into the source's dims: digit d is
    // (flat / Q_d) % E_d, Q_d the product of the extents before it, the last dim flat / Q
    // (unbounded), in a radix that need not divide W.
    const index_t w = r.pick(std::vector<index_t>{2, 3, 4, 5, 7, 8});
    // With an output of rank 3 (nested_splits), x + W * y + W * W2 * z.
    const index_t w2 = r.pick(std::vector<index_t>{2, 3, 4, 5});
    stage_input in;
    in.buffer = a;
    index_t q = 1;
    const bool symbolic = f.symbolic_radices && r.chance(0.5);
    for (int d = 0; d < ra; ++d) {
      access digit;
      digit.flat = true;
      digit.symbolic = symbolic;
      digit.var = 0;
      if (st.rank > 1) {
        digit.var2 = 1;
        digit.mul2 = w;
      }
      if (st.rank > 2) {
        digit.var3 = 2;
        digit.mul3 = w * w2;
      }
      digit.div = q;
      if (d + 1 < ra) {
        digit.mod = r.pick(std::vector<index_t>{2, 3, 4, 5, 7, 8});
        q *= digit.mod;
      }
      in.dims.push_back(digit);
    }
    st.inputs.push_back(in);
    break;
  }
  case copy_op::plain: break;
  }
}

}  // namespace internal_generate

void compact(case_spec& c) {
  graph_spec& g = c.graph;
  const int n = static_cast<int>(g.stages.size());
  std::vector<bool> live_stage(n, false), live_buffer(g.buffers.size(), false);
  for (int s = n - 1; s >= 0; --s) {
    for (int o : g.stages[s].outputs) {
      if (g.buffers[o].output) live_stage[s] = true;
    }
    for (int c2 = s + 1; c2 < n; ++c2) {
      if (!live_stage[c2]) continue;
      for (const stage_input& i : g.stages[c2].inputs) {
        if (g.buffers[i.buffer].producer == s) live_stage[s] = true;
      }
    }
    if (!live_stage[s]) continue;
    for (int o : g.stages[s].outputs) live_buffer[o] = true;
    for (const stage_input& i : g.stages[s].inputs) live_buffer[i.buffer] = true;
    if (g.stages[s].pad >= 0) live_buffer[g.stages[s].pad] = true;
  }
  std::vector<int> stage_map(n, -1), buffer_map(g.buffers.size(), -1);
  graph_spec result;
  result.shared_vars = g.shared_vars;
  result.fail_call = g.fail_call;
  for (std::size_t b = 0; b < g.buffers.size(); ++b) {
    if (!live_buffer[b]) continue;
    buffer_map[b] = static_cast<int>(result.buffers.size());
    result.buffers.push_back(g.buffers[b]);
  }
  for (int s = 0; s < n; ++s) {
    if (!live_stage[s]) continue;
    stage_map[s] = static_cast<int>(result.stages.size());
    stage_spec st = g.stages[s];
    for (stage_input& i : st.inputs) i.buffer = buffer_map[i.buffer];
    if (st.pad >= 0) st.pad = buffer_map[st.pad];
    normalize_copy(st);
    for (int& o : st.outputs) o = buffer_map[o];
    result.stages.push_back(std::move(st));
  }
  for (buffer_spec& b : result.buffers) {
    if (b.producer >= 0) b.producer = stage_map[b.producer];
  }
  result.fail_stage = g.fail_stage >= 0 ? stage_map[g.fail_stage] : -1;
  auto map_level = [&](std::optional<level>& l) {
    if (!l || l->root()) return;
    if (stage_map[l->stage] < 0) {
      l.reset();
    } else {
      l->stage = stage_map[l->stage];
    }
  };
  for (schedule_spec& s : c.schedules) {
    schedule_spec r = s;
    r.stages.assign(result.stages.size(), stage_schedule());
    r.buffers.assign(result.buffers.size(), buffer_schedule());
    for (int i = 0; i < n && i < static_cast<int>(s.stages.size()); ++i) {
      if (stage_map[i] >= 0) r.stages[stage_map[i]] = s.stages[i];
    }
    for (std::size_t b = 0; b < g.buffers.size() && b < s.buffers.size(); ++b) {
      if (buffer_map[b] >= 0) r.buffers[buffer_map[b]] = s.buffers[b];
    }
    for (stage_schedule& ss : r.stages) map_level(ss.compute_at);
    for (buffer_schedule& bs : r.buffers) map_level(bs.store_at);
    s = std::move(r);
  }
  g = std::move(result);
  for (schedule_spec& s : c.schedules) legalize(g, s);
}

graph_spec generate_graph(rng& r, const features& f) {
  using namespace internal_generate;
  graph_spec g;
  g.shared_vars = f.shared_vars;
  const int base_rank = static_cast<int>(r.uniform(1, max_rank));
  const int num_inputs = r.chance(0.6) ? 1 : static_cast<int>(r.uniform(2, 3));
  for (int i = 0; i < num_inputs; ++i) {
    buffer_spec b;
    b.input = true;
    b.rank = f.vary_rank && r.chance(0.3) ? static_cast<int>(r.uniform(1, max_rank)) : base_rank;
    b.elem_size = elem_size(r, f);
    // A constant read like an input (by copies too).
    b.constant = f.constants && r.chance(0.2);
    g.buffers.push_back(b);
  }
  std::vector<int> reads(g.buffers.size(), 0);
  const int num_stages = static_cast<int>(r.uniform(1, f.max_stages));
  for (int s = 0; s < num_stages; ++s) {
    stage_spec st;
    copy_op op = copy_op::plain;
    const int a = pick_buffer(r, g, reads);
    const int ra = g.buffers[a].rank;
    std::vector<kind> kinds = {kind::pointwise, kind::stencil, kind::stencil, kind::stencil,
                               kind::down,      kind::up,      kind::combine, kind::combine};
    if (ra >= 2) kinds.push_back(kind::transpose);
    if (f.vary_rank && ra >= 2) kinds.push_back(kind::reduce);
    if (f.vary_rank && ra < max_rank) kinds.push_back(kind::expand);
    if (f.copies) kinds.insert(kinds.end(), {kind::copy, kind::copy});
    const kind k = r.pick(kinds);
    std::vector<int> order = identity(ra);
    st.rank = ra;
    switch (k) {
    case kind::transpose:
      order = shuffled(r, order);
      // A diagonal: two dims of the buffer read at the same variable.
      if (f.diagonal && r.chance(0.5)) order[1] = order[0];
      break;
    case kind::reduce:
      st.rank = ra - 1;
      order = identity(ra);
      std::swap(order[r.uniform(0, ra - 1)], order[ra - 1]);
      break;
    case kind::expand: {
      st.rank = ra + 1;
      // The new variable takes the place of one of the buffer's: that one moves to the end.
      const int hole = static_cast<int>(r.uniform(0, ra));
      for (int& v : order) v += v >= hole ? 1 : 0;
      break;
    }
    case kind::copy:
      op = pick_copy_op(r, f, ra);
      if (op == copy_op::padded && !f.padded_intermediates && !g.buffers[a].input) op = copy_op::plain;
      if (op == copy_op::concat || op == copy_op::stack) {
        st.rank = op == copy_op::stack ? ra + 1 : ra;
        st.copy = true;
        break;
      }
      if (op == copy_op::stencil) {
        st.rank = ra + 1;
        st.copy = true;
        break;
      }
      if (op == copy_op::radix) {
        st.rank = ra == 1 ? 2 : static_cast<int>(r.uniform(1, 2));
        if (f.nested_splits && r.chance(0.3)) st.rank = 3;
        st.copy = true;
        break;
      }
      if (op == copy_op::reshape) {
        const bool up = f.reshapes_up && ra < max_rank && (ra == 1 || !f.reshapes || r.chance(0.5));
        st.rank = up ? ra + 1 : ra - 1;
        st.copy = true;
        break;
      }
      if (ra >= 2 && r.chance(0.3)) order = shuffled(r, order);
      if (op == copy_op::multi) {
      } else if (f.vary_rank && ra < max_rank && r.chance(f.view_copies ? 0.3 : 0.15)) {
        // A broadcast: a new variable the source does not depend on.
        st.rank = ra + 1;
        const int hole = static_cast<int>(r.uniform(0, ra));
        for (int& v : order) v += v >= hole ? 1 : 0;
      } else if (f.vary_rank && ra >= 2 && r.chance(0.15)) {
        // A slice: the source's last dimension is read at one point.
        st.rank = ra - 1;
        order = identity(ra);
        std::swap(order[r.uniform(0, ra - 1)], order[ra - 1]);
      }
      st.copy = true;
      break;
    default: break;
    }
    const kind access_kind = k == kind::copy ? kind::copy : k == kind::combine ? kind::stencil : k;
    const bool one_dim = k == kind::down || k == kind::up;
    if (k == kind::copy && op != copy_op::plain) {
      make_special_copy(r, g, f, st, a, order, op, reads);
    } else {
      st.inputs.push_back(make_input(r, g, a, st.rank, order, access_kind, one_dim));
    }
    if (k == kind::combine && f.constants && r.chance(0.35)) {
      // A constant buffer or a scalar.
      buffer_spec c;
      c.input = c.constant = true;
      c.rank = r.chance(0.5) ? 0 : static_cast<int>(r.uniform(1, st.rank));
      c.elem_size = elem_size(r, f);
      g.buffers.push_back(c);
      reads.push_back(0);
      const int cb = static_cast<int>(g.buffers.size()) - 1;
      st.inputs.push_back(make_input(r, g, cb, st.rank, identity(c.rank), kind::stencil, false));
    }
    if (k == kind::combine) {
      const int extra = r.chance(0.7) ? 1 : 2;
      for (int e = 0; e < extra; ++e) {
        int b = pick_buffer(r, g, reads);
        if (b == a && !f.duplicate_inputs) continue;
        if (!f.vary_rank && g.buffers[b].rank != st.rank) continue;
        st.inputs.push_back(make_input(r, g, b, st.rank, identity(g.buffers[b].rank), kind::stencil, false));
      }
    }
    for (const stage_input& i : st.inputs) ++reads[i.buffer];
    const int num_outputs = !st.copy && r.chance(0.15) ? 2 : 1;
    for (int o = 0; o < num_outputs; ++o) {
      buffer_spec b;
      b.rank = st.rank;
      b.elem_size = st.copy ? g.buffers[a].elem_size : elem_size(r, f);
      b.producer = s;
      st.outputs.push_back(static_cast<int>(g.buffers.size()));
      g.buffers.push_back(b);
      reads.push_back(0);
    }
    g.stages.push_back(std::move(st));
  }
  // Buffers nobody reads are pipeline outputs (but a second output may stay unread).
  for (std::size_t b = 0; b < g.buffers.size(); ++b) {
    buffer_spec& bs = g.buffers[b];
    if (bs.input) continue;
    if (reads[b] == 0) {
      const stage_spec& st = g.stages[bs.producer];
      const bool second = st.outputs.size() > 1 && st.outputs[1] == static_cast<int>(b);
      bs.output = !(second && f.unused_outputs && r.chance(0.4));
    } else if (f.consumed_outputs && r.chance(0.1)) {
      bs.output = true;
    }
  }
  for (stage_spec& st : g.stages) {
    bool any = false;
    for (int o : st.outputs) any = any || g.buffers[o].output || reads[o] > 0;
    if (!any) g.buffers[st.outputs[0]].output = true;
  }
  // Shapes: outputs of small (often prime) extents anywhere around 0.
  static const std::vector<index_t> extents = {1, 1, 2, 3, 4, 5, 7, 8, 11, 13, 16};
  for (buffer_spec& b : g.buffers) {
    b.base.resize(b.rank);
    b.margin_lo.assign(b.rank, 0);
    b.margin_hi.assign(b.rank, 0);
    for (int d = 0; d < b.rank; ++d) {
      if (b.output) {
        index_t e = r.pick(extents);
        if (b.rank == max_rank) e = std::min<index_t>(e, 7);
        if (f.empty_outputs && r.chance(0.03)) e = 0;
        b.base[d].min = r.uniform(-8, 8);
        b.base[d].max = b.base[d].min + e - 1;
      } else if (b.input) {
        b.base[d].min = r.uniform(-4, 4);
        b.base[d].max = b.base[d].min + r.uniform(0, 5);
        if (r.chance(0.4)) b.margin_lo[d] = r.uniform(1, 3);
        if (r.chance(0.4)) b.margin_hi[d] = r.uniform(1, 3);
      }
    }
    if (f.layouts && (b.input || b.output) && !b.constant && r.chance(0.3)) {
      b.order = internal_generate::shuffled(r, internal_generate::identity(b.rank));
      for (int d = 0; d < b.rank; ++d) b.padding.push_back(r.chance(0.5) ? 0 : r.uniform(1, 3));
    }
  }
  for (const stage_spec& st : g.stages) {
    // A stack's output covers the slots of its inputs.
    buffer_spec& b = g.buffers[st.outputs[0]];
    if (st.copy && st.op == copy_kind::stack && b.output) {
      b.base[st.dim] = {0, static_cast<index_t>(st.inputs.size()) - 1};
    }
  }
  return g;
}

bool copied(const graph_spec& g, int b) {
  if (g.buffers[b].producer >= 0 && g.stages[g.buffers[b].producer].copy) return true;
  for (const stage_spec& st : g.stages) {
    for (const stage_input& i : st.inputs) {
      if (st.copy && i.buffer == b) return true;
    }
  }
  return false;
}

bool allowed_windows(const graph_spec& g, schedule_spec s, const features& f) {
  const risky_windows w = find_risky_windows(g, s, legalize(g, s));
  return (f.diagonal || !w.two_dims) && (f.hull_windows || !w.fixed_and_moving) &&
         (f.constant_loops || !w.constant_loop) && (f.shadowed_vars || !w.shadowed);
}

namespace internal_generate {

schedule_spec generate_schedule_once(rng& r, const graph_spec& g, const plan& p, const features& f) {
  static const std::vector<index_t> steps = {1, 1, 2, 2, 3, 4, 5, 7, 8, 16, 100};
  schedule_spec s;
  s.stages.resize(g.stages.size());
  s.buffers.resize(g.buffers.size());
  for (std::size_t i = 0; i < g.stages.size(); ++i) {
    if (!r.chance(0.6) || (g.stages[i].copy && !f.copy_loops)) continue;
    std::vector<int> vars = internal_generate::shuffled(r, internal_generate::identity(g.stages[i].rank));
    vars.resize(r.uniform(1, g.stages[i].rank));
    for (int v : vars) s.stages[i].loops.push_back({v, r.pick(steps), f.parallel && r.chance(0.25)});
  }
  s.no_alias_buffers = r.chance(0.5);
  s.thread_pool = f.thread_pool && r.chance(0.3);
  s.pool_workers = static_cast<int>(r.uniform(1, 3));
  s.outer_storage_only = !f.inner_storage;
  s.parallel_shared_storage = f.parallel_shared_storage;
  int calls = 0;
  place(g, s, [&](int n) -> int {
    // The first calls are for the stages (compute_at: n - 1 legal loops, or the root), the rest
    // for the buffers (store_at).
    if (calls++ < static_cast<int>(g.stages.size())) {
      if (!f.compute_at || r.chance(0.4)) return -1;
      if (r.chance(0.25)) return 0;
      return static_cast<int>(r.uniform(0, n - 1));
    }
    if (!f.store_at || !r.chance(0.3)) return -1;
    return static_cast<int>(r.uniform(0, n - 1));
  });
  for (std::size_t b = 0; b < g.buffers.size(); ++b) {
    if (g.buffers[b].input || g.buffers[b].output) continue;
    const index_t bytes = elem_count(p.bounds[b]) * g.buffers[b].elem_size;
    if (f.stack && bytes <= 16384 && r.chance(0.15)) {
      s.buffers[b].storage = memory_type::stack;
    } else if (r.chance(0.15)) {
      s.buffers[b].storage = memory_type::heap;
    }
  }
  return s;
}

}  // namespace internal_generate

schedule_spec generate_schedule(rng& r, const graph_spec& g, const plan& p, const features& f) {
  for (int attempt = 0; attempt < 20; ++attempt) {
    schedule_spec s = internal_generate::generate_schedule_once(r, g, p, f);
    if (allowed_windows(g, s, f)) return s;
  }
  schedule_spec s;
  s.outer_storage_only = !f.inner_storage;
  legalize(g, s);
  return s;
}

bool generated_by(const case_spec& c, const features& f) {
  const graph_spec& g = c.graph;
  if (g.shared_vars != f.shared_vars) return false;
  if (g.fail_stage >= 0 && (!f.failures || g.stages[g.fail_stage].copy)) return false;
  for (std::size_t b = 0; b < g.buffers.size(); ++b) {
    if (g.buffers[b].fold.empty()) continue;
    if (!f.folds || (!f.copy_folds && copied(g, static_cast<int>(b)))) return false;
  }
  for (const stage_spec& st : g.stages) {
    for (const stage_input& i : st.inputs) {
      // Every buffer read is an input or produced (dropping a func's second output leaves the
      // copies that read it reading nothing).
      if (!g.buffers[i.buffer].input && g.buffers[i.buffer].producer < 0) return false;
      if (g.buffers[i.buffer].constant && !f.constants) return false;
      for (const access& a : i.dims) {
        if (a.mul < 0 && !f.flips) return false;
        if (a.mod > 0 && !f.reshapes) return false;
        if (a.var2 >= 0 && !a.flat && !f.reshapes_up && !f.view_copies) return false;
        if (a.var2 >= 0 && !a.flat && a.mul != 1 && !f.view_copies) return false;
        if (a.flat && !f.radix_reshapes) return false;
        if (a.symbolic && !f.symbolic_radices) return false;
        if (a.var3 >= 0 && !f.nested_splits) return false;
      }
    }
    if (!st.copy) continue;
    if (st.op == copy_kind::padded && !f.padded_copies) return false;
    if (st.op == copy_kind::padded && !f.padded_intermediates && !g.buffers[st.inputs[0].buffer].input) return false;
    if (st.pad >= 0 && g.buffers[st.pad].rank > 0 && !f.pad_buffers) return false;
    if (st.op == copy_kind::multi && !f.multi_copies) return false;
    if (st.op == copy_kind::concat && !f.concat) return false;
    if (st.op == copy_kind::stack && !f.stack_copies) return false;
  }
  if (!well_formed(g, make_plan(g))) return false;
  for (const buffer_spec& b : g.buffers) {
    if (!b.output || f.empty_outputs) continue;
    for (const ival& i : b.base) {
      if (i.empty()) return false;
    }
  }
  for (const schedule_spec& s : c.schedules) {
    if (s.outer_storage_only == f.inner_storage) return false;
    if (s.parallel_shared_storage && !f.parallel_shared_storage) return false;
    if (s.thread_pool && !f.thread_pool) return false;
    for (std::size_t i = 0; i < g.stages.size(); ++i) {
      if (g.stages[i].copy && !f.copy_loops && !s.stages[i].loops.empty()) return false;
    }
    if (!allowed_windows(g, s, f)) return false;
    for (std::size_t b = 0; s.automatic == auto_mode::keep && !f.auto_store_at && b < g.buffers.size(); ++b) {
      if (stored_in_a_loop(s, static_cast<int>(b))) return false;
    }
  }
  return true;
}

plan widen_concats(graph_spec& g) {
  plan p = make_plan(g);
  bool changed = false;
  for (std::size_t s = 0; s < g.stages.size(); ++s) {
    stage_spec& st = g.stages[s];
    const ival region = p.regions[s][st.dim];
    if (!st.copy || st.op != copy_kind::concat || region.empty()) continue;
    if (region.min < st.cat_bounds.front()) st.cat_bounds.front() = region.min, changed = true;
    if (region.max >= st.cat_bounds.back()) st.cat_bounds.back() = region.max + 1, changed = true;
    normalize_copy(st);
  }
  return changed ? make_plan(g) : p;
}

bool stored_in_a_loop(const schedule_spec& s, int b) { return s.buffers[b].store_at && !s.buffers[b].store_at->root(); }

bool auto_case(std::uint64_t seed, const features& f) {
  // A hash of its own, so that the choice does not follow the generator's first draws.
  return f.auto_schedule && (f.auto_only || case_seed(seed, 0x6175746f) % 4 == 0);
}

namespace internal_generate {

// Replaces the schedules of an auto-mode case: the scheduler on the unscheduled graph, after the
// first random schedule (left alone) and instead of the second (reschedule), for one machine.
void make_auto(case_spec& c, std::uint64_t seed, const features& f) {
  rng r(case_seed(seed, 0x6d616368));
  std::vector<int> machines;
  for (int i = 0; i < num_auto_machines(); ++i) {
    if (f.parallel || auto_machine_threads(i) == 1) machines.push_back(i);
  }
  const int m = r.pick(machines);
  schedule_spec fresh;
  fresh.stages.resize(c.graph.stages.size());
  fresh.buffers.resize(c.graph.buffers.size());
  fresh.outer_storage_only = !f.inner_storage;
  std::vector<schedule_spec> autos = {fresh, c.schedules[0], c.schedules[1 % c.schedules.size()]};
  const auto_mode modes[] = {auto_mode::fresh, auto_mode::keep, auto_mode::reschedule};
  for (std::size_t i = 0; i < autos.size(); ++i) {
    autos[i].automatic = modes[i];
    autos[i].auto_machine = m;
    // A machine of several threads runs on a pool of as many (when there is one).
    const int threads = auto_machine_threads(m);
    if (threads > 1 && f.thread_pool) {
      autos[i].thread_pool = true;
      autos[i].pool_workers = std::min(3, threads - 1);
    }
  }
  if (!f.auto_store_at) {
    for (std::size_t b = 0; b < c.graph.buffers.size(); ++b) {
      if (stored_in_a_loop(autos[1], static_cast<int>(b))) autos[1].buffers[b].store_at.reset();
    }
  }
  c.schedules = autos;
}

}  // namespace internal_generate

case_spec generate_case(std::uint64_t seed, const features& f, int num_schedules) {
  rng r(seed);
  case_spec c;
  for (int attempt = 0;; ++attempt) {
    c.graph = generate_graph(r, f);
    c.schedules.clear();
    compact(c);
    const plan p = widen_concats(c.graph);
    if (p.elements <= 20000 && p.work <= 200000 && well_formed(c.graph, p)) break;
    if (attempt > 20) {
      // Give up on big graphs: one func.
      features small = f;
      small.max_stages = 1;
      small.multi_copies = small.concat = small.stack_copies = false;
      c.graph = generate_graph(r, small);
      compact(c);
      widen_concats(c.graph);
      break;
    }
  }
  if (f.folds) {
    // Fold factors at least the extent of the region (which no schedule exceeds).
    const plan p = make_plan(c.graph);
    for (std::size_t b = 0; b < c.graph.buffers.size(); ++b) {
      buffer_spec& bs = c.graph.buffers[b];
      if (bs.input || bs.output || bs.rank == 0 || !r.chance(0.3)) continue;
      if (!f.copy_folds && copied(c.graph, static_cast<int>(b))) continue;
      const int d = static_cast<int>(r.uniform(0, bs.rank - 1));
      const index_t extent = p.bounds[b][d].extent();
      if (extent == 0) continue;
      bs.fold.assign(bs.rank, 0);
      bs.fold[d] = extent + (r.chance(0.5) ? 0 : r.uniform(1, 3));
    }
  }
  if (f.failures && r.chance(0.15)) {
    const int s = static_cast<int>(r.uniform(0, static_cast<index_t>(c.graph.stages.size()) - 1));
    if (!c.graph.stages[s].copy) {
      c.graph.fail_stage = s;
      c.graph.fail_call = static_cast<int>(r.uniform(1, 3));
    }
  }
  const plan p = make_plan(c.graph);
  for (int i = 0; i < num_schedules; ++i) c.schedules.push_back(generate_schedule(r, c.graph, p, f));
  c.data_seed = r.next();
  if (num_schedules > 0 && auto_case(seed, f)) internal_generate::make_auto(c, seed, f);
  return c;
}

}  // namespace random_test
}  // namespace slinky
