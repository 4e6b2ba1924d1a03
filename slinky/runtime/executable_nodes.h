// Internal to executable.cc (not installed): the nodes of the executable form (executable.h). Each
// statement becomes a node that knows its operands. The statements on the per-iteration path
// (serial loops, crops, lets, blocks) are specialised: their symbols are ids read once, and their
// expressions are classified once as a constant, a symbol, a symbol plus a constant, a buffer's min
// or max in one dimension, or a tree left to the evaluator. A crop of one dimension (a crop_dim, or
// a crop_buffer with one bound) whose body is a call runs the call itself. The other statements run
// the evaluator's own logic (evaluator.h) with compiled bodies, so their semantics are written
// once. A serial loop's body is flattened (executable_flat_body.h). The compiler that builds them
// is in executable.cc, the only file that includes this one (directly or through
// executable_flat_body.h).
#ifndef SLINKY_RUNTIME_EXECUTABLE_NODES_H
#define SLINKY_RUNTIME_EXECUTABLE_NODES_H

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <limits>

#include "slinky/runtime/evaluator.h"
#include "slinky/runtime/executable.h"

namespace slinky {
namespace internal {
// Internal linkage, as if this were part of executable.cc (the only file that includes it): the
// compiler then inlines the nodes' helpers as it would in one file (named, the loop of a flattened
// body takes 16 more instructions per iteration).
namespace {

// An expression in the shape it was found in at compile time.
class compiled_expr {
public:
  compiled_expr() = default;
  explicit compiled_expr(const expr& e) {
    const base_expr_node* n = e.get();
    if (!n) return;
    if (const constant* c = e.as<constant>()) {
      kind_ = kind::constant;
      value_ = c->value;
    } else if (const variable* v = e.as<variable>(); v && v->field == buffer_field::none) {
      kind_ = kind::symbol;
      sym_ = v->sym.sym();
    } else if (v && (v->field == buffer_field::min || v->field == buffer_field::max)) {
      kind_ = v->field == buffer_field::min ? kind::buffer_min : kind::buffer_max;
      sym_ = v->sym.sym();
      value_ = v->dim;
    } else if (const add* a = e.as<add>()) {
      const variable* v = a->a.as<variable>();
      const constant* c = a->b.as<constant>();
      if (v && c && v->field == buffer_field::none) {
        kind_ = kind::symbol_plus_constant;
        sym_ = v->sym.sym();
        value_ = c->value;
      } else {
        kind_ = kind::tree;
        tree_ = n;
      }
    } else {
      kind_ = kind::tree;
      tree_ = n;
    }
  }

  bool defined() const { return kind_ != kind::undefined; }
  // Calls fn(s) for the symbol the expression reads, if any; false if it may read any (a tree).
  template <typename Fn>
  bool for_each_read(const Fn& fn) const {
    if (kind_ == kind::tree) return false;
    if (kind_ > kind::constant) fn(sym_);
    return true;
  }

  // True if the expression is a symbol plus a constant (`x`: x + 0); sets sym and offset.
  bool symbol_plus_offset(symbol_id& sym, index_t& offset) const {
    if (kind_ != kind::symbol && kind_ != kind::symbol_plus_constant) return false;
    sym = sym_;
    offset = value_;
    return true;
  }

  // The value; `otherwise` if the expression is undefined. A symbol plus a constant (the bounds
  // of loops and of the crops in them) is computed inline; the other kinds take a call.
  __attribute__((always_inline)) index_t eval(evaluator& e, index_t otherwise) const {
    // A symbol's value_ is 0: one addition serves both kinds.
    if (SLINKY_LIKELY(kind_ == kind::symbol || kind_ == kind::symbol_plus_constant)) {
      return saturate_add(e.values[sym_], value_);
    }
    return eval_other(e, otherwise);
  }

private:
  enum class kind : std::uint8_t { undefined, constant, symbol, symbol_plus_constant, buffer_min, buffer_max, tree };

  __attribute__((noinline)) index_t eval_other(evaluator& e, index_t otherwise) const {
    switch (kind_) {
    case kind::undefined: return otherwise;
    case kind::constant: return value_;
    case kind::symbol: return e.values[sym_];
    case kind::symbol_plus_constant: return saturate_add(e.values[sym_], value_);
    case kind::buffer_min: return buffer_dim(e).min();
    case kind::buffer_max: return buffer_dim(e).max();
    case kind::tree: return e.eval_node(tree_);
    }
    return otherwise;
  }

  // The dimension value_ of the buffer bound to sym_, as the interpreter reads it: a broadcast
  // (bounds 0) for a null buffer, a negative dimension or one past the rank.
  const dim& buffer_dim(evaluator& e) const {
    const raw_buffer* b = reinterpret_cast<const raw_buffer*>(e.values[sym_]);
    return b && value_ >= 0 ? b->dim(static_cast<std::size_t>(value_)) : dim::broadcast();
  }

  kind kind_ = kind::undefined;
  symbol_id sym_ = 0;
  index_t value_ = 0;
  const base_expr_node* tree_ = nullptr;
};

// Runs a compiled body (null: nothing to run).
inline index_t run_body(evaluator& e, const exec_node* body) { return body ? body->run(e) : 0; }

// A call, with its direct entry point (call_stmt::entry, which func::make's typed callbacks have)
// and the symbols of its buffers, inputs then outputs: such a call gets its buffers straight from
// the symbol values, without the std::function and the eval_context lookups of its target.
class compiled_call {
public:
  const call_stmt* op;

  explicit compiled_call(const call_stmt* op) : op(op) {
    const std::size_t n = op->inputs.size() + op->outputs.size();
    if (!op->entry.fn || n > max_inline_buffers) return;
    fn_ = op->entry.fn;
    callable_ = op->entry.callable.get();
    const_views_ = op->entry.const_views;
    n_ = n;
    std::size_t i = 0;
    for (var b : op->inputs) syms_[i++] = b.sym();
    for (var b : op->outputs) syms_[i++] = b.sym();
  }

  // True if the call goes through its direct entry and the callback takes const views of its
  // buffers: it changes no descriptor (nor, having no context, any binding).
  bool changes_no_descriptor() const { return fn_ && const_views_; }
  // Calls fn(s) for the symbols of the call's buffers; false if the call may read any symbol (it
  // takes its buffers from the context).
  template <typename Fn>
  bool for_each_read(const Fn& fn) const {
    if (!fn_) return false;
    for (std::size_t i = 0; i < n_; ++i) fn(syms_[i]);
    return true;
  }

  // True if the call has a direct entry (run_direct).
  bool direct() const { return fn_ != nullptr; }

  __attribute__((always_inline)) index_t run(evaluator& e) const {
    if (!fn_) return e.exec_call(op);
    return run_direct(e);
  }

  // True if the call has a direct entry and two buffers (run_pair).
  bool pair() const { return fn_ && n_ == 2; }
  // run_direct for a call with pair().
  __attribute__((always_inline)) index_t run_pair(evaluator& e) const {
    if (SLINKY_UNLIKELY(e.allocations.any_parked())) e.give_back_parked();
    const index_t* values = e.values;
    const raw_buffer* buffers[2] = {reinterpret_cast<const raw_buffer*>(values[syms_[0]]),
                                    reinterpret_cast<const raw_buffer*>(values[syms_[1]])};
    return call_with(e, buffers);
  }

  // The same for a call with a direct entry.
  __attribute__((always_inline)) index_t run_direct(evaluator& e) const {
    if (SLINKY_UNLIKELY(e.allocations.any_parked())) e.give_back_parked();
    const raw_buffer* buffers[max_inline_buffers];
    const index_t* values = e.values;
    if (SLINKY_LIKELY(n_ == 2)) {
      // One input and one output: the most common call, without the loop.
      buffers[0] = reinterpret_cast<const raw_buffer*>(values[syms_[0]]);
      buffers[1] = reinterpret_cast<const raw_buffer*>(values[syms_[1]]);
    } else {
      for (std::size_t i = 0; i < n_; ++i) buffers[i] = reinterpret_cast<const raw_buffer*>(values[syms_[i]]);
    }
    return call_with(e, buffers);
  }

  // The same for a call with a direct entry (changes_no_descriptor()) inside a crop of sym to
  // buf, which it gets without sym being bound: the callback sees only its buffers. The caller
  // knows that no block is parked (a refreshed crop: flat_body::run_crop).
  __attribute__((always_inline)) index_t run_in_crop(evaluator& e, symbol_id sym, const raw_buffer* buf) const {
    const raw_buffer* buffers[max_inline_buffers];
    const index_t* values = e.values;
    if (SLINKY_LIKELY(n_ == 2)) {
      // One input and one output, without the loop (as in run()).
      buffers[0] = syms_[0] == sym ? buf : reinterpret_cast<const raw_buffer*>(values[syms_[0]]);
      buffers[1] = syms_[1] == sym ? buf : reinterpret_cast<const raw_buffer*>(values[syms_[1]]);
    } else {
      for (std::size_t i = 0; i < n_; ++i) {
        buffers[i] = syms_[i] == sym ? buf : reinterpret_cast<const raw_buffer*>(values[syms_[i]]);
      }
    }
    return call_with(e, buffers);
  }

  // True if the call has two buffers and sym is the second only (a crop of the output of a call
  // with one input, the most common crop with a call): run_second_of_two runs it.
  bool second_of_two(symbol_id sym) const { return fn_ && n_ == 2 && syms_[0] != sym && syms_[1] == sym; }
  // run_in_crop(e, sym, second) for a call with second_of_two(sym).
  __attribute__((always_inline)) index_t run_second_of_two(evaluator& e, const raw_buffer* second) const {
    const raw_buffer* buffers[2] = {reinterpret_cast<const raw_buffer*>(e.values[syms_[0]]), second};
    return call_with(e, buffers);
  }

private:
  // Calls the entry with buffers (n_ of them), then reads the values again: the callback cannot
  // see the context, but it may hold a reference to it (captured), as after any callback.
  __attribute__((always_inline)) index_t call_with(evaluator& e, const raw_buffer* const* buffers) const {
    const index_t result = fn_(callable_, buffers);
    e.refresh_values();
    return SLINKY_LIKELY(result == 0) ? 0 : e.report_call_failure(op, result);
  }

  // Calls with up to this many buffers pass them in an array of fixed size on the stack (not
  // alloca: calls run in loops); calls with more take the std::function. The symbols are kept in
  // a fixed array beside the entry, so that the call reads no other memory to find them.
  static constexpr std::size_t max_inline_buffers = 8;

  index_t (*fn_)(const void*, const raw_buffer* const*) = nullptr;
  const void* callable_ = nullptr;
  bool const_views_ = false;
  std::size_t n_ = 0;
  symbol_id syms_[max_inline_buffers] = {};
};

class call_node final : public exec_node {
public:
  compiled_call call;

  explicit call_node(const call_stmt* op) : call(op) {}
  index_t run(evaluator& e) const override { return call.run(e); }
};

class block_node final : public exec_node {
public:
  std::vector<const exec_node*> stmts;

  index_t run(evaluator& e) const override {
    for (const exec_node* s : stmts) {
      if (index_t result = s->run(e)) return result;
    }
    return 0;
  }
};

// buf.dims[d] = sd, then crop_and_unfold(buf, d, min, max), with buf.base the base of sd's buffer:
// the same result, computed from sd alone. Reading the copy back right after writing it would
// make the loads wait for the stores.
__attribute__((always_inline)) inline void crop_and_unfold_from(raw_buffer& buf, std::size_t d, const dim& sd,
                                                                index_t min, index_t max) {
  dim& cd = buf.dims[d];
  const index_t smin = sd.min(), smax = sd.max(), stride = sd.stride();
  index_t fold = sd.fold_factor();
  if (SLINKY_UNLIKELY(stride == 0)) {
    cd = sd;
    return crop_stride_zero(cd, min, max);
  }
  min = std::max(min, smin);
  max = std::min(max, smax);
  if (min <= max && buf.base) {
    if (fold <= 0) {
      buf.base = offset_bytes(buf.base, (min - smin) * stride);
    } else {
      const index_t at = euclidean_mod_positive_modulus(min, fold);
      if (at + (max - min) < fold) {
        buf.base = offset_bytes(buf.base, at * stride);
        fold = dim::unfolded;
      }
    }
  }
  cd = dim(min, max, stride, fold);
}

// One dimension's new bounds in a crop: an undefined end keeps the old one. Bounds affine in one
// symbol, [x + c0, x + c1] (a point of x, or the bounds of a loop's chunk; `x` is x + 0), the
// common case in loops, are two additions.
struct compiled_interval {
  compiled_expr min, max;
  bool point;
  bool affine = false;
  symbol_id affine_sym = 0;
  index_t c0 = 0, c1 = 0;

  explicit compiled_interval(const interval_expr& b)
      : min(b.min), max(b.max), point(b.min.defined() && (b.is_point() || match(b.min, b.max))) {
    symbol_id max_sym = 0;
    if (!min.symbol_plus_offset(affine_sym, c0)) return;
    if (point) {
      c1 = c0;
      affine = true;
    } else if (max.symbol_plus_offset(max_sym, c1)) {
      affine = max_sym == affine_sym;
    }
  }

  // True if neither end is defined: the crop keeps the dimension as it is.
  bool is_no_op() const { return !min.defined() && !max.defined(); }
  template <typename Fn>
  bool for_each_read(const Fn& fn) const {
    return min.for_each_read(fn) && max.for_each_read(fn);
  }

  // The new bounds [lo, hi] of a dim whose bounds are [old_min, old_max].
  __attribute__((always_inline)) void eval(evaluator& e, index_t old_min, index_t old_max, index_t& lo,
                                           index_t& hi) const {
    if (SLINKY_LIKELY(affine)) {
      const index_t x = e.values[affine_sym];
      lo = saturate_add(x, c0);
      hi = saturate_add(x, c1);
      return;
    }
    lo = min.eval(e, old_min);
    hi = point ? lo : max.eval(e, old_max);
  }

  __attribute__((always_inline)) void crop(evaluator& e, raw_buffer& buf, std::size_t d) const {
    index_t lo, hi;
    const dim& old = buf.dims[d];
    eval(e, old.min(), old.max(), lo, hi);
    crop_and_unfold(buf, d, lo, hi);
  }

  // The same, for buf a copy of a buffer whose dim d is sd (base included): reads sd, not the copy.
  __attribute__((always_inline)) void crop_from(evaluator& e, raw_buffer& buf, std::size_t d, const dim& sd) const {
    index_t lo, hi;
    eval(e, sd.min(), sd.max(), lo, hi);
    crop_and_unfold_from(buf, d, sd, lo, hi);
  }
};

// Reports a null buffer bound to src (out of line: the crops' hot path stays small).
__attribute__((noinline, cold)) index_t fail_null_buffer(evaluator& e, var src) {
  return e.fail_check(expr(variable::make(src)) != 0);
}

// Crops copy the descriptor they crop, with its dims on the stack: in a fixed array up to this
// rank, else in a block of the rank's size.
constexpr std::size_t inline_rank = 4;

// Copies the dims of src (rank at most inline_rank) to dims: one fixed-size copy per rank, which
// beats the loop of copy_dims for these tiny counts.
__attribute__((always_inline)) inline void copy_small_dims(const raw_buffer& src, dim* dims) {
  static_assert(inline_rank == 4, "one case per rank up to inline_rank");
  // Rank 1 first: the loops of elementwise chains crop rank-1 buffers.
  if (SLINKY_LIKELY(src.rank == 1)) {
    dims[0] = src.dims[0];
    return;
  }
  switch (src.rank) {
  case 4: dims[3] = src.dims[3]; [[fallthrough]];
  case 3: dims[2] = src.dims[2]; [[fallthrough]];
  case 2: dims[1] = src.dims[1]; [[fallthrough]];
  case 1: dims[0] = src.dims[0]; [[fallthrough]];
  default: break;
  }
}

// Calls fn(buf) with buf a copy of the descriptor bound to src (failing if none is).
template <typename Fn>
__attribute__((always_inline)) inline index_t with_copy_of(evaluator& e, var src, const Fn& fn) {
  const raw_buffer* in = reinterpret_cast<const raw_buffer*>(e.values[src.sym()]);
  if (!in) return fail_null_buffer(e, src);
  auto copy_to = [&](dim* dims) {
    raw_buffer buf{in->base, in->elem_size, in->rank, dims};
    copy_dims(*in, dims);
    return fn(buf);
  };
  if (in->rank <= inline_rank) {
    // Uninitialized: copy_dims fills the first `rank`.
    alignas(dim) char storage[sizeof(dim) * inline_rank];
    return copy_to(reinterpret_cast<dim*>(storage));
  }
  return copy_to(SLINKY_STACK_DIMS(in->rank));
}

// A crop of one dimension: a crop_dim, or a crop_buffer with bounds for one dim only (the two
// are the same then).
class crop_dim_node final : public exec_node {
public:
  var sym, src;
  std::size_t d;
  compiled_interval bounds;
  // The body: a call (the common case, run without another node), or compiled.
  const compiled_call* call;
  const exec_node* body;

  crop_dim_node(var sym, var src, int dim, const interval_expr& bounds, const compiled_call* call,
                const exec_node* body)
      : sym(sym), src(src), d(static_cast<std::size_t>(dim)), bounds(bounds), call(call), body(body) {}

  index_t run(evaluator& e) const override {
    return with_copy_of(e, src, [&](raw_buffer& buf) {
      // A negative dim converts to a huge d: no crop, like the interpreter.
      if (d < buf.rank) bounds.crop(e, buf, d);
      evaluator::scoped_value bind(e, sym, reinterpret_cast<index_t>(&buf));
      return call ? call->run(e) : run_body(e, body);
    });
  }
};

class crop_buffer_node final : public exec_node {
public:
  const crop_buffer* op;
  // The dims that crop (an interval with an end defined), and their bounds.
  std::vector<std::pair<std::size_t, compiled_interval>> bounds;
  const exec_node* body;

  crop_buffer_node(const crop_buffer* op, const exec_node* body) : op(op), body(body) {
    for (std::size_t d = 0; d < op->bounds.size(); ++d) {
      compiled_interval b(op->bounds[d]);
      if (!b.is_no_op()) bounds.emplace_back(d, b);
    }
  }

  index_t run(evaluator& e) const override {
    return with_copy_of(e, op->src, [&](raw_buffer& buf) {
      for (const auto& i : bounds) {
        if (i.first < buf.rank) i.second.crop(e, buf, i.first);
      }
      evaluator::scoped_value bind(e, op->sym, reinterpret_cast<index_t>(&buf));
      return run_body(e, body);
    });
  }
};

class let_node final : public exec_node {
public:
  std::vector<std::pair<symbol_id, compiled_expr>> lets;
  const exec_node* body;

  let_node(const let_stmt* op, const exec_node* body) : body(body) {
    for (const auto& i : op->lets) lets.emplace_back(i.first.sym(), compiled_expr(i.second));
  }

  index_t run(evaluator& e) const override {
    // Bind in order (later values may refer to earlier ones), then unbind in reverse.
    index_t* saved = static_cast<index_t*>(alloca(sizeof(index_t) * lets.size()));
    for (std::size_t i = 0; i < lets.size(); ++i) {
      const index_t value = lets[i].second.eval(e, 0);
      saved[i] = e.values[lets[i].first];
      e.values[lets[i].first] = value;
    }
    const index_t result = run_body(e, body);
    for (std::size_t i = lets.size(); i-- > 0;) e.values[lets[i].first] = saved[i];
    return result;
  }
};

// Statements without a body, run by the evaluator.
template <typename T, index_t (evaluator::*exec)(const T*)>
class leaf_node final : public exec_node {
public:
  const T* op;
  explicit leaf_node(const T* op) : op(op) {}
  index_t run(evaluator& e) const override { return (e.*exec)(op); }
};

// Statements with one body, run by the evaluator with the compiled body.
template <typename T, index_t (evaluator::*exec)(const T*, body_ref)>
class body_node final : public exec_node {
public:
  const T* op;
  const exec_node* body;
  body_node(const T* op, const exec_node* body) : op(op), body(body) {}
  index_t run(evaluator& e) const override { return (e.*exec)(op, body_ref(body)); }
};

class async_node final : public exec_node {
public:
  const async* op;
  const exec_node* task;
  const exec_node* body;
  async_node(const async* op, const exec_node* task, const exec_node* body) : op(op), task(task), body(body) {}
  index_t run(evaluator& e) const override { return e.exec_async(op, body_ref(task), body_ref(body)); }
};

class if_then_else_node final : public exec_node {
public:
  const if_then_else* op;
  const exec_node* true_body;
  const exec_node* false_body;
  if_then_else_node(const if_then_else* op, const exec_node* t, const exec_node* f)
      : op(op), true_body(t), false_body(f) {}
  index_t run(evaluator& e) const override {
    return e.exec_if_then_else(op, body_ref(true_body), body_ref(false_body));
  }
};

}  // namespace
}  // namespace internal
}  // namespace slinky

#endif  // SLINKY_RUNTIME_EXECUTABLE_NODES_H
