// Structural comparison of statements, substitution of buffer metadata, and structural
// substitution of expressions.
#include "slinky/builder/substitute.h"

#include <cstring>
#include <utility>

namespace slinky {

namespace {

template <typename T>
int compare_values(const T& a, const T& b) {
  return a < b ? -1 : (b < a ? 1 : 0);
}

int compare_vars(const std::vector<var>& a, const std::vector<var>& b) {
  if (int c = compare_values(a.size(), b.size())) return c;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (int c = compare_values(a[i].id, b[i].id)) return c;
  }
  return 0;
}

int compare_exprs(const std::vector<expr>& a, const std::vector<expr>& b) {
  if (int c = compare_values(a.size(), b.size())) return c;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (int c = compare(a[i], b[i])) return c;
  }
  return 0;
}

int compare_intervals(const interval_expr& a, const interval_expr& b) {
  if (int c = compare(a.min, b.min)) return c;
  return compare(a.max, b.max);
}

int compare_boxes(const box_expr& a, const box_expr& b) {
  if (int c = compare_values(a.size(), b.size())) return c;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (int c = compare_intervals(a[i], b[i])) return c;
  }
  return 0;
}

int compare_dims(const std::vector<dim_expr>& a, const std::vector<dim_expr>& b) {
  if (int c = compare_values(a.size(), b.size())) return c;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (int c = compare_intervals(a[i].bounds, b[i].bounds)) return c;
    if (int c = compare(a[i].stride, b[i].stride)) return c;
    if (int c = compare(a[i].fold_factor, b[i].fold_factor)) return c;
  }
  return 0;
}

// Constant buffers are compared by what they hold: element size, rank and bounds, then the
// elements' bytes in order (dim 0 fastest). Strides and fold factors are layout, not contents, so
// a buffer and a copy of it with another layout match; so do two buffers of the same shape with
// null bases (absent optional inputs), which come before any with data.
int compare_buffers(const raw_buffer* a, const raw_buffer* b) {
  if (a == b) return 0;
  if (!a || !b) return a ? 1 : -1;
  if (int c = compare_values(a->elem_size, b->elem_size)) return c;
  if (int c = compare_values(a->rank, b->rank)) return c;
  bool empty = false;
  for (std::size_t d = 0; d < a->rank; ++d) {
    if (int c = compare_values(a->dim(d).min(), b->dim(d).min())) return c;
    if (int c = compare_values(a->dim(d).max(), b->dim(d).max())) return c;
    empty = empty || a->dim(d).empty();
  }
  if (empty) return 0;
  if (!a->base || !b->base) return compare_values(a->base != nullptr, b->base != nullptr);
  std::vector<index_t> at(a->rank);
  for (std::size_t d = 0; d < a->rank; ++d) at[d] = a->dim(d).min();
  for (;;) {
    const void* pa = a->address_at(span<const index_t>(at));
    const void* pb = b->address_at(span<const index_t>(at));
    if (int c = std::memcmp(pa, pb, a->elem_size)) return c < 0 ? -1 : 1;
    std::size_t d = 0;
    for (; d < a->rank && at[d] == a->dim(d).max(); ++d) at[d] = a->dim(d).min();
    if (d == a->rank) return 0;
    ++at[d];
  }
}

// Callables cannot be compared: equal if both are empty, else ordered by their nodes.
template <typename F>
int compare_callables(const F& a, const F& b, const base_stmt_node* na, const base_stmt_node* nb) {
  if (!a && !b) return 0;
  return compare_values(na, nb);
}

int compare_stmt_nodes(const base_stmt_node* a, const base_stmt_node* b);

int compare_stmts(const stmt& a, const stmt& b) { return compare_stmt_nodes(a.get(), b.get()); }

// Compares the symbol, source and body of the buffer declarations from a source.
template <typename T>
int compare_view(const T* x, const T* y) {
  if (int c = compare_values(x->sym.id, y->sym.id)) return c;
  return compare_values(x->src.id, y->src.id);
}

int compare_stmt_nodes(const base_stmt_node* a, const base_stmt_node* b) {
  if (a == b) return 0;
  if (!a) return -1;
  if (!b) return 1;
  if (int c = compare_values(static_cast<int>(a->type), static_cast<int>(b->type))) return c;
  switch (a->type) {
  case stmt_node_type::none: return 0;
  case stmt_node_type::call_stmt: {
    const call_stmt* x = a->as<call_stmt>();
    const call_stmt* y = b->as<call_stmt>();
    if (int c = compare_vars(x->inputs, y->inputs)) return c;
    if (int c = compare_vars(x->outputs, y->outputs)) return c;
    if (int c = compare_exprs(x->scalars, y->scalars)) return c;
    if (int c = compare_values(x->attrs.allow_in_place, y->attrs.allow_in_place)) return c;
    if (int c = compare_values(x->attrs.min_rank, y->attrs.min_rank)) return c;
    if (int c = compare_values(x->attrs.name, y->attrs.name)) return c;
    return compare_callables(x->target, y->target, a, b);
  }
  case stmt_node_type::copy_stmt: {
    const copy_stmt* x = a->as<copy_stmt>();
    const copy_stmt* y = b->as<copy_stmt>();
    if (int c = compare_values(x->src.id, y->src.id)) return c;
    if (int c = compare_exprs(x->src_x, y->src_x)) return c;
    if (int c = compare_values(x->dst.id, y->dst.id)) return c;
    if (int c = compare_vars(x->dst_x, y->dst_x)) return c;
    if (int c = compare_values(x->pad.id, y->pad.id)) return c;
    return compare_callables(x->impl, y->impl, a, b);
  }
  case stmt_node_type::let_stmt: {
    const let_stmt* x = a->as<let_stmt>();
    const let_stmt* y = b->as<let_stmt>();
    if (int c = compare_values(x->lets.size(), y->lets.size())) return c;
    for (std::size_t i = 0; i < x->lets.size(); ++i) {
      if (int c = compare_values(x->lets[i].first.id, y->lets[i].first.id)) return c;
      if (int c = compare(x->lets[i].second, y->lets[i].second)) return c;
    }
    if (int c = compare_values(x->is_closure, y->is_closure)) return c;
    return compare_stmts(x->body, y->body);
  }
  case stmt_node_type::block: {
    const block* x = a->as<block>();
    const block* y = b->as<block>();
    if (int c = compare_values(x->stmts.size(), y->stmts.size())) return c;
    for (std::size_t i = 0; i < x->stmts.size(); ++i) {
      if (int c = compare_stmts(x->stmts[i], y->stmts[i])) return c;
    }
    return 0;
  }
  case stmt_node_type::loop: {
    const loop* x = a->as<loop>();
    const loop* y = b->as<loop>();
    if (int c = compare_values(x->sym.id, y->sym.id)) return c;
    if (int c = compare(x->max_workers, y->max_workers)) return c;
    if (int c = compare_intervals(x->bounds, y->bounds)) return c;
    if (int c = compare(x->step, y->step)) return c;
    return compare_stmts(x->body, y->body);
  }
  case stmt_node_type::allocate: {
    const allocate* x = a->as<allocate>();
    const allocate* y = b->as<allocate>();
    if (int c = compare_values(x->sym.id, y->sym.id)) return c;
    if (int c = compare_values(static_cast<int>(x->storage), static_cast<int>(y->storage))) return c;
    if (int c = compare(x->elem_size, y->elem_size)) return c;
    if (int c = compare_dims(x->dims, y->dims)) return c;
    return compare_stmts(x->body, y->body);
  }
  case stmt_node_type::make_buffer: {
    const make_buffer* x = a->as<make_buffer>();
    const make_buffer* y = b->as<make_buffer>();
    if (int c = compare_values(x->sym.id, y->sym.id)) return c;
    if (int c = compare(x->base, y->base)) return c;
    if (int c = compare(x->elem_size, y->elem_size)) return c;
    if (int c = compare_dims(x->dims, y->dims)) return c;
    return compare_stmts(x->body, y->body);
  }
  case stmt_node_type::constant_buffer: {
    const constant_buffer* x = a->as<constant_buffer>();
    const constant_buffer* y = b->as<constant_buffer>();
    if (int c = compare_values(x->sym.id, y->sym.id)) return c;
    if (int c = compare_buffers(x->value.get(), y->value.get())) return c;
    return compare_stmts(x->body, y->body);
  }
  case stmt_node_type::clone_buffer: {
    const clone_buffer* x = a->as<clone_buffer>();
    const clone_buffer* y = b->as<clone_buffer>();
    if (int c = compare_view(x, y)) return c;
    return compare_stmts(x->body, y->body);
  }
  case stmt_node_type::crop_buffer: {
    const crop_buffer* x = a->as<crop_buffer>();
    const crop_buffer* y = b->as<crop_buffer>();
    if (int c = compare_view(x, y)) return c;
    if (int c = compare_boxes(x->bounds, y->bounds)) return c;
    return compare_stmts(x->body, y->body);
  }
  case stmt_node_type::crop_dim: {
    const crop_dim* x = a->as<crop_dim>();
    const crop_dim* y = b->as<crop_dim>();
    if (int c = compare_view(x, y)) return c;
    if (int c = compare_values(x->dim, y->dim)) return c;
    if (int c = compare_intervals(x->bounds, y->bounds)) return c;
    return compare_stmts(x->body, y->body);
  }
  case stmt_node_type::slice_buffer: {
    const slice_buffer* x = a->as<slice_buffer>();
    const slice_buffer* y = b->as<slice_buffer>();
    if (int c = compare_view(x, y)) return c;
    if (int c = compare_exprs(x->at, y->at)) return c;
    return compare_stmts(x->body, y->body);
  }
  case stmt_node_type::slice_dim: {
    const slice_dim* x = a->as<slice_dim>();
    const slice_dim* y = b->as<slice_dim>();
    if (int c = compare_view(x, y)) return c;
    if (int c = compare_values(x->dim, y->dim)) return c;
    if (int c = compare(x->at, y->at)) return c;
    return compare_stmts(x->body, y->body);
  }
  case stmt_node_type::transpose: {
    const transpose* x = a->as<transpose>();
    const transpose* y = b->as<transpose>();
    if (int c = compare_view(x, y)) return c;
    if (int c = compare_values(x->dims, y->dims)) return c;
    return compare_stmts(x->body, y->body);
  }
  case stmt_node_type::async: {
    const async* x = a->as<async>();
    const async* y = b->as<async>();
    if (int c = compare_values(x->sym.id, y->sym.id)) return c;
    if (int c = compare_stmts(x->task, y->task)) return c;
    return compare_stmts(x->body, y->body);
  }
  case stmt_node_type::check: return compare(a->as<check>()->condition, b->as<check>()->condition);
  case stmt_node_type::if_then_else: {
    const if_then_else* x = a->as<if_then_else>();
    const if_then_else* y = b->as<if_then_else>();
    if (int c = compare(x->condition, y->condition)) return c;
    if (int c = compare_stmts(x->true_body, y->true_body)) return c;
    return compare_stmts(x->false_body, y->false_body);
  }
  }
  return 0;
}

// Replaces the metadata reads of one buffer (see substitute_buffer).
class buffer_substitutor : public substitutor {
  var buffer_;
  const expr& elem_size_;
  const std::vector<dim_expr>& dims_;
  var def_;

  expr read_def(const variable* op) const {
    return def_.defined() ? variable::make(def_, op->field, op->dim) : expr(op);
  }

public:
  buffer_substitutor(var buffer, const expr& elem_size, const std::vector<dim_expr>& dims, var def)
      : buffer_(buffer), elem_size_(elem_size), dims_(dims), def_(def) {}

  int get_target_buffer_rank(var sym) override {
    return sym == buffer_ && !def_.defined() ? static_cast<int>(dims_.size()) : -1;
  }
  expr mutate_variable(const variable* op, var sym, buffer_field field, int dim) override {
    if (sym != buffer_) return expr(op);
    switch (field) {
    case buffer_field::none:
    case buffer_field::size_bytes: return expr(op);
    case buffer_field::rank: {
      const int rank = get_target_buffer_rank(sym);
      return rank >= 0 ? expr(rank) : read_def(op);
    }
    case buffer_field::elem_size: return elem_size_.defined() ? elem_size_ : read_def(op);
    case buffer_field::min:
    case buffer_field::max:
    case buffer_field::stride:
    case buffer_field::fold_factor:
      if (dim >= 0 && dim < static_cast<int>(dims_.size())) {
        const expr& value = dims_[dim].get_field(field);
        if (value.defined()) return value;
      } else if (dim >= 0 && !def_.defined() && field == buffer_field::stride) {
        // Without def, dims is the whole buffer: a dim beyond its rank is an implicit broadcast,
        // which addresses nothing whatever its bounds (the original's reading). Its bounds and
        // fold factor are left alone: bounds beyond an input's rank constrain nothing.
        return expr(0);
      }
      return read_def(op);
    }
    return expr(op);
  }
  var enter_decl(var sym) override { return sym == buffer_ ? var() : sym; }
};

template <typename T>
T substitute_buffer_impl(const T& x, var buffer, const expr& elem_size, const std::vector<dim_expr>& dims, var def) {
  buffer_substitutor s(buffer, elem_size, dims, def);
  return s.mutate(x);
}

// Replaces subexpressions matching a target (outermost first).
class expr_substitutor : public node_mutator {
  const expr& target_;
  const expr& replacement_;

public:
  expr_substitutor(const expr& target, const expr& replacement) : target_(target), replacement_(replacement) {}

  expr mutate(const expr& e) override {
    if (e.defined() && target_.type() == e.type() && match(e, target_)) return replacement_;
    return node_mutator::mutate(e);
  }
  using node_mutator::mutate;
};

}  // namespace

bool match(expr_ref a, expr_ref b) { return a.same_as(b) || compare(expr(a), expr(b)) == 0; }
bool match(expr_ref a, const expr& b) { return match(a, expr_ref(b)); }
bool match(const expr& a, expr_ref b) { return match(expr_ref(a), b); }
bool match(expr_ref a, var b) { return is_variable(a, b); }
bool match(const expr& a, var b) { return is_variable(a, b); }
bool match(var a, expr_ref b) { return is_variable(b, a); }
bool match(var a, const expr& b) { return is_variable(b, a); }
bool match(var a, var b) { return a == b; }
bool match(expr_ref a, index_t b) { return is_constant(a, b); }
bool match(const expr& a, index_t b) { return is_constant(a, b); }
bool match(index_t a, expr_ref b) { return is_constant(b, a); }
bool match(index_t a, const expr& b) { return is_constant(b, a); }
bool match(var, index_t) { return false; }
bool match(index_t, var) { return false; }
bool match(stmt_ref a, stmt_ref b) { return compare_stmt_nodes(a.get(), b.get()) == 0; }
bool match(const interval_expr& a, const interval_expr& b) { return compare_intervals(a, b) == 0; }
bool match(const dim_expr& a, const dim_expr& b) {
  return compare_dims(std::vector<dim_expr>{a}, std::vector<dim_expr>{b}) == 0;
}
bool match(const box_expr& a, const box_expr& b) { return compare_boxes(a, b) == 0; }

int compare(const var& a, const var& b) { return compare_values(a.id, b.id); }
int compare(expr_ref a, expr_ref b) { return a.same_as(b) ? 0 : compare(expr(a), expr(b)); }
int compare(expr_ref a, const expr& b) { return compare(a, expr_ref(b)); }
int compare(const expr& a, expr_ref b) { return compare(expr_ref(a), b); }
int compare(stmt_ref a, stmt_ref b) { return compare_stmt_nodes(a.get(), b.get()); }

dim_expr substitute(const dim_expr& d, var target, const expr& replacement) {
  return dim_expr(substitute(d.bounds, target, replacement), substitute(d.stride, target, replacement),
                  substitute(d.fold_factor, target, replacement));
}

expr substitute_buffer(const expr& e, var buffer, const expr& elem_size, const std::vector<dim_expr>& dims, var def) {
  return substitute_buffer_impl(e, buffer, elem_size, dims, def);
}
expr substitute_buffer(const expr& e, var buffer, const std::vector<dim_expr>& dims, var def) {
  return substitute_buffer_impl(e, buffer, expr(), dims, def);
}
interval_expr substitute_buffer(const interval_expr& e, var buffer, const expr& elem_size,
                                const std::vector<dim_expr>& dims, var def) {
  return substitute_buffer_impl(e, buffer, elem_size, dims, def);
}
interval_expr substitute_buffer(const interval_expr& e, var buffer, const std::vector<dim_expr>& dims, var def) {
  return substitute_buffer_impl(e, buffer, expr(), dims, def);
}
stmt substitute_buffer(const stmt& s, var buffer, const expr& elem_size, const std::vector<dim_expr>& dims, var def) {
  return substitute_buffer_impl(s, buffer, elem_size, dims, def);
}
stmt substitute_buffer(const stmt& s, var buffer, const std::vector<dim_expr>& dims, var def) {
  return substitute_buffer_impl(s, buffer, expr(), dims, def);
}

std::vector<dim_expr> make_dims_from_bounds(const box_expr& bounds) {
  std::vector<dim_expr> dims;
  dims.reserve(bounds.size());
  for (const interval_expr& i : bounds) dims.emplace_back(i);
  return dims;
}

std::vector<dim_expr> make_dims_from_bounds(int dim, const interval_expr& bounds) {
  if (dim < 0) return {};
  std::vector<dim_expr> dims(dim + 1);
  dims[dim] = dim_expr(bounds);
  return dims;
}

expr substitute(const expr& e, const expr& target, const expr& replacement) {
  if (!target.defined()) return e;
  expr_substitutor s(target, replacement);
  return s.mutate(e);
}

}  // namespace slinky
