// Checking and ordering the graph, and resolving compute and store locations.
#include "slinky/builder/graph.h"

#include <algorithm>
#include <unordered_set>
#include <utility>

#include "slinky/builder/simplify.h"
#include "slinky/runtime/depends_on.h"

namespace slinky {

using internal::builder_error;

namespace internal {

class func_access {
public:
  // A copy like f with other inputs and output, which does not make itself the producer of the
  // buffers (they keep f): the builder's own form of f.
  static std::shared_ptr<const func> copy_like(const func& f, std::vector<func::input> inputs, func::output out) {
    std::shared_ptr<func> result = std::make_shared<func>();
    result->copy_impl_ = f.copy_impl_;
    result->is_copy_ = true;
    result->padded_ = f.padded_;
    result->inputs_ = std::move(inputs);
    result->outputs_ = {std::move(out)};
    result->attrs_ = f.attrs_;
    result->loops_ = f.loops_;
    result->compute_at_ = f.compute_at_;
    result->user_data_ = f.user_data_;
    result->hints_ = f.hints_;
    return result;
  }
};

}  // namespace internal

int graph::func_index(const func* f) const {
  auto i = func_indices.find(f);
  return i == func_indices.end() ? -1 : i->second;
}

int graph::buffer_index(const buffer_expr* b) const {
  auto i = buffer_indices.find(b);
  return i == buffer_indices.end() ? -1 : i->second;
}

std::vector<loop_level> graph::chain(loop_level l) const {
  if (l.root()) return {};
  std::vector<loop_level> result = funcs[l.func].compute_chain;
  const int n = static_cast<int>(funcs[l.func].f->loops().size());
  for (int k = n - 1; k >= l.loop; --k) result.push_back({l.func, k});
  return result;
}

namespace {

// Reports misuse (builder_error aborts unless a builder_errors collects it) and fails.
bool fail(const std::string& message) {
  builder_error(message);
  return false;
}

class graph_builder {
  graph& g_;
  const std::vector<buffer_expr_ptr>& inputs_;
  std::unordered_set<const buffer_expr*> inputs_set_;
  // DFS state of each func: 1 while its producers are being visited, 2 when done.
  std::unordered_map<const func*, int> state_;

  std::string name(const buffer_expr_ptr& b) const { return g_.ctx->name(b->sym().sym()); }
  std::string name(const func* f) const { return f->name(g_.ctx); }

  bool is_input(const buffer_expr* b) const { return inputs_set_.count(b) > 0; }

  int& state(const func* f) { return state_[f]; }

  // The index of b's node (added if new), or -1 after reporting misuse.
  int add_buffer(const buffer_expr_ptr& b) {
    int i = g_.buffer_index(b.get());
    if (i >= 0) return i;
    if (b->second_producer()) {
      fail("buffer " + name(b) + " is produced twice: by func " + b->producer()->name(g_.ctx) + " and by func " +
           b->second_producer()->name(g_.ctx));
      return -1;
    }
    const std::optional<index_t> elem_size = as_constant(b->elem_size());
    if (elem_size && *elem_size < 0) {
      fail("buffer " + name(b) + " has a negative element size (" + std::to_string(*elem_size) + ")");
      return -1;
    }
    buffer_node n;
    n.buffer = b;
    n.is_input = is_input(b.get());
    g_.buffers.push_back(std::move(n));
    const int index = static_cast<int>(g_.buffers.size()) - 1;
    g_.buffer_indices[b.get()] = index;
    return index;
  }

  bool check_ranks(const func* f) {
    for (const func::input& i : f->inputs()) {
      if (!i.buffer) return fail("func " + name(f) + " has an input without a buffer");
      // A longer box is accepted: the first rank entries are used (internal::used_bounds). A
      // shorter one is accepted for a pipeline input or a constant, which a consumer then reads
      // whole in the missing dims (no requirement is checked there); a buffer some func produces
      // must be told what to compute.
      const bool whole = is_input(i.buffer.get()) || i.buffer->constant();
      if (!f->is_copy() && i.bounds.size() < i.buffer->rank() && !whole) {
        return fail("func " + name(f) + ": the bounds of input " + name(i.buffer) + " have " +
                    std::to_string(i.bounds.size()) + " dimensions, but " + name(i.buffer) + " has rank " +
                    std::to_string(i.buffer->rank()));
      }
    }
    for (const func::output& o : f->outputs()) {
      // A call may index an output by fewer variables than its rank: the trailing dims without a
      // variable are computed whole (not cropped), as a min-max reduction writes its pair.
      const bool fewer_allowed = !f->is_copy();
      if (o.dims.size() > o.buffer->rank() || (o.dims.size() < o.buffer->rank() && !fewer_allowed)) {
        return fail("func " + name(f) + ": output " + name(o.buffer) + " is indexed by " +
                    std::to_string(o.dims.size()) + " variables, but has rank " + std::to_string(o.buffer->rank()));
      }
    }
    // A loop cuts the func's outputs along one of their variables.
    for (const func::loop_info& l : f->loops()) {
      bool found = false;
      for (const func::output& o : f->outputs()) {
        found = found || std::find(o.dims.begin(), o.dims.end(), l.var) != o.dims.end();
      }
      if (!found) {
        return fail("func " + name(f) + " loops over " + g_.ctx->name(l.var.sym()) +
                    ", which indexes none of its outputs");
      }
    }
    return true;
  }

  // A copy may index its output with fewer variables than its rank when its sources slice the
  // output (output_slice): the sliced dims take no variable. The builder works on a form of the
  // copy where each sliced dim takes a new variable, which no input bound uses, and each source's
  // output_crop pins it to that source's slice (the form make_stack gives with a variable per
  // dim). Returns f itself when it needs no such form; reports misuse.
  const func* normal_form(const func* f) {
    if (!f->is_copy() || f->outputs().size() != 1) return f;
    const func::output& out = f->outputs()[0];
    const std::size_t rank = out.buffer->rank();
    if (out.dims.size() >= rank) return f;
    const std::size_t sources = f->is_padded_copy() ? 1 : f->inputs().size();
    std::vector<bool> sliced(rank, false);
    std::size_t num_sliced = 0;
    for (std::size_t k = 0; k < sources; ++k) {
      const std::vector<expr>& slice = f->inputs()[k].output_slice;
      for (std::size_t d = 0; d < slice.size() && d < rank; ++d) {
        if (!slice[d].defined() || sliced[d]) continue;
        sliced[d] = true;
        ++num_sliced;
      }
    }
    auto misuse = [&](const std::string& why) -> const func* {
      fail("func " + name(f) + ": output " + name(out.buffer) + " is indexed by " + std::to_string(out.dims.size()) +
           " variables, but has rank " + std::to_string(rank) + " (" + why + ")");
      return nullptr;
    };
    if (num_sliced + out.dims.size() != rank) {
      return misuse("its inputs' output_slice slices " + std::to_string(num_sliced) + " dims");
    }
    std::vector<func::input> inputs = f->inputs();
    for (std::size_t k = 0; k < sources; ++k) {
      func::input& in = inputs[k];
      in.output_crop.resize(std::max(in.output_crop.size(), rank));
      for (std::size_t d = 0; d < rank; ++d) {
        const bool slices = d < in.output_slice.size() && in.output_slice[d].defined();
        if (slices != sliced[d]) return misuse("every source must slice the same dims");
        if (slices) in.output_crop[d] &= point(in.output_slice[d]);
      }
    }
    std::vector<var> dims;
    auto next = out.dims.begin();
    for (std::size_t d = 0; d < rank; ++d) {
      dims.push_back(sliced[d] ? var(*g_.ctx, name(out.buffer) + ".slice" + std::to_string(d)) : *next++);
    }
    g_.own_funcs.push_back(internal::func_access::copy_like(*f, std::move(inputs), {out.buffer, std::move(dims)}));
    return g_.own_funcs.back().get();
  }

  // Visits the producers of f's inputs, then appends f (post-order: producers first).
  bool visit(const func* f, const func* consumer) {
    int& s = state(f);
    if (s == 2) return true;
    if (s == 1) {
      return fail("the graph has a cycle: func " + name(f) + " (directly or indirectly) consumes its own output" +
                  (consumer ? ", through func " + name(consumer) : ""));
    }
    s = 1;
    const func* client = f;
    f = normal_form(f);
    if (!f || !check_ranks(f)) return false;
    for (const func::input& i : f->inputs()) {
      const buffer_expr_ptr& b = i.buffer;
      if (add_buffer(b) < 0) return false;
      if (is_input(b.get()) || b->constant()) continue;
      if (!b->producer()) {
        return fail("buffer " + name(b) + " is read by func " + name(f) +
                    " but is not a pipeline input, a constant, or the output of any func");
      }
      if (!visit(b->producer(), f)) return false;
    }
    state(client) = 2;
    func_node n;
    n.f = f;
    g_.funcs.push_back(std::move(n));
    // The client's loop_ids name its own func.
    g_.func_indices[f] = g_.func_indices[client] = static_cast<int>(g_.funcs.size()) - 1;
    return true;
  }

public:
  graph_builder(graph& g, const std::vector<buffer_expr_ptr>& inputs) : g_(g), inputs_(inputs) {
    for (const buffer_expr_ptr& i : inputs) inputs_set_.insert(i.get());
  }

  // False after reporting misuse.
  bool build(const std::vector<buffer_expr_ptr>& outputs) {
    for (const buffer_expr_ptr& b : inputs_) {
      if (!b) return fail("a pipeline input is null");
      if (add_buffer(b) < 0) return false;
    }
    for (const buffer_expr_ptr& b : outputs) {
      if (!b) return fail("a pipeline output is null");
      int i = add_buffer(b);
      if (i < 0) return false;
      g_.buffers[i].is_output = true;
      if (g_.buffers[i].is_input) return fail("buffer " + name(b) + " is both an input and an output");
      if (!b->producer()) return fail("pipeline output " + name(b) + " is not produced by any func");
      if (!visit(b->producer(), nullptr)) return false;
    }
    // Outputs of funcs that nothing consumes still need nodes (e.g. a second output).
    for (func_node& fn : g_.funcs) {
      for (const func::output& o : fn.f->outputs()) {
        if (add_buffer(o.buffer) < 0) return false;
      }
    }
    link();
    return true;
  }

  void link() {
    for (std::size_t fi = 0; fi < g_.funcs.size(); ++fi) {
      const func* f = g_.funcs[fi].f;
      for (const func::output& o : f->outputs()) {
        buffer_node& b = g_.buffers[g_.buffer_index(o.buffer.get())];
        b.producer = static_cast<int>(fi);
        g_.funcs[fi].produces_output = g_.funcs[fi].produces_output || b.is_output;
      }
    }
    for (std::size_t fi = 0; fi < g_.funcs.size(); ++fi) {
      for (const func::input& i : g_.funcs[fi].f->inputs()) {
        buffer_node& b = g_.buffers[g_.buffer_index(i.buffer.get())];
        if (std::find(b.consumers.begin(), b.consumers.end(), static_cast<int>(fi)) == b.consumers.end()) {
          b.consumers.push_back(static_cast<int>(fi));
        }
        if (b.producer < 0 || b.is_input) continue;
        std::vector<int>& consumers = g_.funcs[b.producer].consumers;
        if (std::find(consumers.begin(), consumers.end(), static_cast<int>(fi)) == consumers.end()) {
          consumers.push_back(static_cast<int>(fi));
        }
      }
    }
  }
};

// The longest common prefix of two chains.
std::vector<loop_level> common_prefix(const std::vector<loop_level>& a, const std::vector<loop_level>& b) {
  std::size_t n = 0;
  while (n < a.size() && n < b.size() && a[n] == b[n]) ++n;
  return std::vector<loop_level>(a.begin(), a.begin() + n);
}

bool contains(const std::vector<loop_level>& chain, loop_level l) {
  return l.root() || std::find(chain.begin(), chain.end(), l) != chain.end();
}

// Resolves a loop_id of the client into a level, or reports what is wrong with it (nullopt).
std::optional<loop_level> resolve(const graph& g, const loop_id& at, const std::string& what) {
  if (at.root()) return loop_level();
  int fi = g.func_index(at.func);
  if (fi < 0) {
    fail(what + " names a loop of a func that is not part of the pipeline");
    return std::nullopt;
  }
  if (!at.var.defined()) {
    fail(what + " names no loop of func " + g.name(g.funcs[fi]) +
         " (a loop_id without a var is only a storage location, for store_at)");
    return std::nullopt;
  }
  const std::vector<func::loop_info>& loops = g.funcs[fi].f->loops();
  for (std::size_t k = 0; k < loops.size(); ++k) {
    if (loops[k].var == at.var) return loop_level{fi, static_cast<int>(k)};
  }
  fail(what + " names loop " + g.name(at.var) + " of func " + g.name(g.funcs[fi]) + ", which has no such loop");
  return std::nullopt;
}

bool schedule_compute(graph& g, int fi) {
  func_node& fn = g.funcs[fi];
  if (fn.f->compute_at()) {
    const std::string what = "compute_at of func " + g.name(fn);
    const std::optional<loop_level> at = resolve(g, *fn.f->compute_at(), what);
    if (!at) return false;
    fn.compute = *at;
    if (!fn.compute.root()) {
      if (fn.produces_output) {
        return fail(what + ": func " + g.name(fn) + " produces a pipeline output, which must be computed at the root");
      }
      if (fn.compute.func == fi) return fail(what + " names one of its own loops");
      for (int c : fn.consumers) {
        if (!contains(g.funcs[c].call_chain, fn.compute)) {
          return fail(what + ": loop " + g.name(g.user_var(fn.compute)) + " of func " +
                      g.name(g.funcs[fn.compute.func]) + " cannot contain func " + g.name(fn) +
                      ", because its consumer " + g.name(g.funcs[c]) + " runs outside that loop");
        }
      }
    }
  } else if (fn.produces_output || fn.consumers.empty()) {
    fn.compute = loop_level();
  } else {
    std::vector<loop_level> common = g.funcs[fn.consumers[0]].call_chain;
    for (int c : fn.consumers) common = common_prefix(common, g.funcs[c].call_chain);
    if (fn.invariant_at && fn.invariant_at->root()) {
      common.clear();
    } else if (fn.invariant_at) {
      auto at = std::find(common.begin(), common.end(), *fn.invariant_at);
      if (at != common.end()) common.erase(at + 1, common.end());
    }
    fn.compute = common.empty() ? loop_level() : common.back();
    if (!fn.hoisted_to.root() && contains(common, fn.hoisted_to)) fn.compute = fn.hoisted_to;
  }
  fn.compute_chain = g.chain(fn.compute);
  fn.call_chain = fn.compute_chain;
  const int n = static_cast<int>(fn.f->loops().size());
  for (int k = n - 1; k >= 0; --k) fn.call_chain.push_back({fi, k});
  return true;
}

bool schedule_store(graph& g, buffer_node& b) {
  if (b.producer < 0 || b.is_output) return true;
  const func_node& fn = g.funcs[b.producer];
  if (b.buffer->store_at()) {
    const std::string what = "store_at of buffer " + g.name(b.buffer->sym());
    const loop_id& at = *b.buffer->store_at();
    if (at.func && !at.var.defined()) {
      // {f, var()}: where f runs (inside all the loops that contain f's call).
      const int fi = g.func_index(at.func);
      if (fi < 0) return fail(what + " names the location of a func that is not part of the pipeline");
      b.store = g.funcs[fi].compute;
    } else {
      const std::optional<loop_level> store = resolve(g, at, what);
      if (!store) return false;
      b.store = *store;
    }
    if (!contains(fn.compute_chain, b.store)) {
      return fail(what + ": loop " + g.name(g.user_var(b.store)) + " of func " + g.name(g.funcs[b.store.func]) +
                  " does not contain func " + g.name(fn) + ", which produces it");
    }
    return true;
  }
  b.store = loop_level();
  for (auto i = fn.compute_chain.rbegin(); i != fn.compute_chain.rend(); ++i) {
    if (g.loop(*i).is_parallel() && !contains(b.shared_across, *i)) {
      b.store = *i;
      return true;
    }
  }
  return true;
}

}  // namespace

graph check_graph(node_context& ctx, const std::vector<buffer_expr_ptr>& inputs,
                  const std::vector<buffer_expr_ptr>& outputs) {
  graph g;
  g.ctx = &ctx;
  if (!graph_builder(g, inputs).build(outputs)) {
    g.failed = true;
    return g;
  }
  std::size_t outputs_with_dims = 0;
  for (const buffer_node& b : g.buffers) outputs_with_dims += b.is_output && b.buffer->rank() > 0;
  if (outputs_with_dims > 1) {
    for (buffer_node& b : g.buffers) {
      // An output whose test is a constant (declared bounds) keeps the constant.
      if (!b.is_output || b.buffer->rank() == 0 || as_constant(simplify(g.is_empty(b)))) continue;
      b.empty_sym = var(ctx.insert_unique(g.name(b.buffer->sym()) + ".empty"));
    }
  }
  return g;
}

expr graph::is_empty(const buffer_node& b) const {
  const buffer_expr& buf = *b.buffer;
  expr empty;
  for (std::size_t d = 0; d < buf.rank(); ++d) {
    const int dd = static_cast<int>(d);
    const expr e = buffer_max(buf.sym(), dd) < buffer_min(buf.sym(), dd);
    empty = empty.defined() ? empty || e : e;
  }
  return empty.defined() ? empty : expr(0);
}

std::vector<std::pair<var, expr>> graph::empty_lets(const stmt& program) const {
  std::vector<std::pair<var, expr>> lets;
  for (const buffer_node& b : buffers) {
    if (b.empty_sym.defined() && depends_on(program, b.empty_sym)) lets.emplace_back(b.empty_sym, is_empty(b));
  }
  return lets;
}

namespace {

void name_loops(graph& g) {
  // A loop binds the client's variable only if no other func has that variable (loops over it or
  // indexes an output by it): the regions of another func's variable x computed inside the loop
  // would otherwise mean the loop's x.
  auto used_elsewhere = [&](const func_node& fn, var v) {
    for (const func_node& other : g.funcs) {
      if (&other == &fn) continue;
      for (const func::loop_info& l : other.f->loops()) {
        if (l.var == v) return true;
      }
      for (const func::output& o : other.f->outputs()) {
        if (std::find(o.dims.begin(), o.dims.end(), v) != o.dims.end()) return true;
      }
    }
    return false;
  };
  for (func_node& fn : g.funcs) {
    for (const func::loop_info& l : fn.f->loops()) {
      const bool shared = used_elsewhere(fn, l.var);
      fn.loop_syms.push_back(shared ? var(g.ctx->insert_unique(g.name(l.var) + "." + g.name(fn))) : l.var);
    }
  }
}

}  // namespace

bool schedule_graph(graph& g) {
  name_loops(g);
  return schedule_locations(g);
}

bool schedule_locations(graph& g) {
  // Consumers first: a func's default location depends on where its consumers run.
  for (int fi = static_cast<int>(g.funcs.size()) - 1; fi >= 0; --fi) {
    if (!schedule_compute(g, fi)) return false;
  }
  for (buffer_node& b : g.buffers) {
    if (!schedule_store(g, b)) return false;
  }
  return true;
}

}  // namespace slinky
