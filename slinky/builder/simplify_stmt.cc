// The simplifier's statements and lets: substitution of cheap lets, removal of dead code
// (proven checks, empty loops, unused declarations, crops that do not crop), single-iteration
// loops, and hoisting of loop invariant lets.
#include <optional>
#include <utility>
#include <vector>

#include "slinky/builder/simplify_internal.h"

namespace slinky {
namespace internal {

using rewrite_rules::fact;

namespace {

// Crops clamp to the bounds of the buffer they crop: a side of a crop at or beyond those bounds
// (or undefined) does not crop.
bool crop_min_is_no_op(const expr& min, var src, int d) {
  return !min.defined() || is_negative_infinity(min) || is_variable(min, src, buffer_field::min, d);
}
bool crop_max_is_no_op(const expr& max, var src, int d) {
  return !max.defined() || is_positive_infinity(max) || is_variable(max, src, buffer_field::max, d);
}
bool crop_is_no_op(const interval_expr& b, var src, int d) {
  return crop_min_is_no_op(b.min, src, d) && crop_max_is_no_op(b.max, src, d);
}

// If e is a clamp (T: minimum or maximum) with an operand that is_bound accepts, the other operand.
template <typename T, typename IsBound>
void strip_clamp(expr& e, const IsBound& is_bound) {
  if (const T* m = e.as<T>()) {
    if (is_bound(m->a)) {
      e = m->b;
    } else if (is_bound(m->b)) {
      e = m->a;
    }
  }
}

// For the same reason, clamping crop bounds to the bounds of the cropped buffer is redundant.
interval_expr strip_clamps(interval_expr b, var src, int d) {
  if (b.is_point()) return b;
  strip_clamp<maximum>(b.min, [&](const expr& x) { return is_variable(x, src, buffer_field::min, d); });
  strip_clamp<minimum>(b.max, [&](const expr& x) { return is_variable(x, src, buffer_field::max, d); });
  return b;
}

// A let value is substituted into the body if it is a constant, or a variable that neither the
// body nor a later let of the same node redeclares (which would capture it).
template <typename Body>
bool can_substitute(const expr& value, const Body& body, const std::vector<std::pair<var, expr>>& lets, std::size_t i) {
  if (value.as<constant>() || is_infinity(value)) return true;
  std::optional<var> v = as_variable(value);
  if (!v) return false;
  for (std::size_t j = i + 1; j < lets.size(); ++j) {
    if (lets[j].first == *v) return false;
  }
  return !declares(body, *v);
}

}  // namespace

template <typename T>
void simplifier::visit_lets(const T* op) {
  using handle = decltype(op->body);
  scope s(*this);
  std::vector<std::pair<var, expr>> lets;
  lets.reserve(op->lets.size());
  bool changed = false;
  for (std::size_t i = 0; i < op->lets.size(); ++i) {
    const std::pair<var, expr>& l = op->lets[i];
    expr value = mutate(l.second);
    if (can_substitute(value, op->body, op->lets, i)) {
      declare(l.first, point(value), value);
      changed = true;
      continue;
    }
    changed = changed || !value.same_as(l.second);
    // A condition that did not simplify to a constant is 0 or 1: its bounds would say no more,
    // and finding them can cost as much as simplifying it did (a pipeline's `unread` conditions).
    std::optional<interval_expr> value_bounds;
    if (use_bounds_) value_bounds = is_boolean(value) ? interval_expr(0, 1) : bounds_of(value);
    declare(l.first, std::move(value_bounds), expr(), alignment_of(value));
    lets.emplace_back(l.first, std::move(value));
  }
  handle body = mutate(op->body);
  if (!body.defined()) {
    set_result(handle());
    return;
  }
  changed = changed || !body.same_as(op->body);
  // Remove unused lets, from the back because values may use the symbols of earlier lets.
  for (std::size_t i = lets.size(); i-- > 0;) {
    const var sym = lets[i].first;
    if (has_side_effects(lets[i].second) || body_uses(body, sym)) continue;
    bool used = false;
    for (std::size_t j = i + 1; j < lets.size() && !used; ++j) used = uses(lets[j].second, sym);
    if (used) continue;
    lets.erase(lets.begin() + i);
    changed = true;
  }
  set_result(changed ? T::make(std::move(lets), std::move(body)) : handle(op));
}

void simplifier::visit(const let* op) { visit_lets(op); }
void simplifier::visit(const let_stmt* op) { visit_lets(op); }

void simplifier::visit(const loop* op) {
  interval_expr bounds = mutate(op->bounds);
  expr step = mutate(op->step);
  expr max_workers = mutate(op->max_workers);
  // The evaluator fails loops whose step is not positive, even empty ones.
  if (prove(fact::positive, step)) {
    const expr max_minus_min = bounds.is_point() ? expr(0) : make<sub>(bounds.max, bounds.min);
    if (prove(fact::negative, max_minus_min)) {
      set_result(stmt());
      return;
    }
    if (prove(fact::non_negative, max_minus_min) && prove(fact::negative, make<sub>(max_minus_min, step))) {
      set_result(mutate(let_stmt::make(op->sym, bounds.min, op->body)));
      return;
    }
  }

  stmt body;
  {
    scope s(*this);
    // The loop variable takes the values min + k * step, k >= 0.
    alignment_type alignment = alignment_of(bounds.min);
    if (alignment != alignment_type()) alignment += alignment_of(step) * alignment_type();
    declare(op->sym, bounds, expr(), alignment);
    body = mutate(op->body);
  }
  if (!body.defined()) {
    set_result(stmt());
    return;
  }

  // Hoist the lets at the top of the body that do not depend on the loop.
  std::vector<std::pair<var, expr>> hoisted;
  auto can_hoist = [&](const std::pair<var, expr>& l) {
    return l.first != op->sym && !uses(l.second, op->sym) && !has_side_effects(l.second) && !uses(bounds, l.first) &&
           !uses(step, l.first) && !uses(max_workers, l.first);
  };
  while (const let_stmt* l = body.as<let_stmt>()) {
    std::size_t n = 0;
    while (n < l->lets.size() && can_hoist(l->lets[n])) ++n;
    if (n == 0) break;
    hoisted.insert(hoisted.end(), l->lets.begin(), l->lets.begin() + n);
    body = let_stmt::make(std::vector<std::pair<var, expr>>(l->lets.begin() + n, l->lets.end()), l->body);
  }

  stmt result;
  if (hoisted.empty() && unchanged(body, op->body, bounds, op->bounds, step, op->step, max_workers, op->max_workers)) {
    result = stmt(op);
  } else {
    result = loop::make(op->sym, std::move(max_workers), std::move(bounds), std::move(step), std::move(body));
  }
  set_result(let_stmt::make(std::move(hoisted), std::move(result)));
}

// Clamps are stripped before simplifying too, as proving them redundant can be expensive.
interval_expr simplifier::mutate_crop_bounds(const interval_expr& bounds, var src, int d) {
  // And so is clamping them to the bounds the buffer was allocated with (before simplifying too:
  // the simplifier may rewrite a clamp into a form that no longer shows it).
  auto strip = [&](interval_expr b) {
    b = strip_clamps(std::move(b), src, d);
    return d >= 0 ? strip_allocated_clamps(std::move(b), src, static_cast<std::size_t>(d)) : b;
  };
  return strip(mutate(strip(bounds)));
}

stmt simplifier::mutate_decl_body(var sym, const stmt& body) {
  scope s(*this);
  declare(sym, std::nullopt);
  return mutate(body);
}

bool simplifier::body_uses(const stmt& body, var sym) {
  if (!stmt_uses_) stmt_uses_ = std::make_unique<stmt_uses>();
  return stmt_uses_->uses(body, sym);
}

bool simplifier::finish_decl(var sym, const stmt& body) {
  if (body.defined() && body_uses(body, sym)) return false;
  set_result(body);
  return true;
}

const interval_expr* simplifier::allocated_bounds(var src, std::size_t d, bool* folded) const {
  for (std::size_t i = allocated_.size(); i-- > 0;) {
    const allocated_buffer& a = allocated_[i];
    if (a.sym != src) continue;
    if (d >= a.bounds.size()) return nullptr;
    const interval_expr& b = a.bounds[d];
    for (std::size_t k = a.undo_size; k < undo_.size(); ++k) {
      const var redeclared = undo_[k].sym;
      if (redeclared == src || uses(b, redeclared)) return nullptr;
    }
    if (folded) *folded = a.folded[d];
    return &b;
  }
  return nullptr;
}

bool simplifier::crop_keeps_allocated(const interval_expr& b, var src, std::size_t d) const {
  if (!b.min.defined() || !b.max.defined()) return false;
  bool folded = false;
  const interval_expr* a = allocated_bounds(src, d, &folded);
  // Only unfolded dims: a crop of a folded dim to its bounds may unfold it, which changes what
  // callbacks see (not where the data is).
  if (!a || folded) return false;
  return match(a->min, b.min) && match(a->max, b.max);
}

interval_expr simplifier::strip_allocated_clamps(interval_expr b, var src, std::size_t d) const {
  if (b.is_point() || (!b.min.as<maximum>() && !b.max.as<minimum>())) return b;
  const interval_expr* a = allocated_bounds(src, d);
  if (!a) return b;
  if (a->min.defined()) strip_clamp<maximum>(b.min, [&](const expr& x) { return match(x, a->min); });
  if (a->max.defined()) strip_clamp<minimum>(b.max, [&](const expr& x) { return match(x, a->max); });
  return b;
}

stmt simplifier::mutate_allocated_body(var sym, const std::vector<dim_expr>& dims, const stmt& body) {
  scope s(*this);
  declare(sym, std::nullopt);
  allocated_buffer a{sym, {}, {}, undo_.size()};
  for (const dim_expr& d : dims) {
    a.bounds.push_back(d.bounds);
    a.folded.push_back(d.fold_factor.defined());
  }
  allocated_.push_back(std::move(a));
  stmt result = mutate(body);
  allocated_.pop_back();
  return result;
}

void simplifier::visit(const allocate* op) {
  expr elem_size = mutate(op->elem_size);
  std::vector<dim_expr> dims = mutate(op->dims);
  stmt body = mutate_allocated_body(op->sym, dims, op->body);
  if (finish_decl(op->sym, body)) return;
  if (unchanged(elem_size, op->elem_size, dims, op->dims, body, op->body)) return set_result(op);
  set_result(allocate::make(op->sym, op->storage, std::move(elem_size), std::move(dims), std::move(body)));
}

// A make_buffer gives its buffer the bounds of its dims, as an allocation does: crops of it are
// simplified against them the same way (a view taking another buffer's memory, emit_program, is
// cropped per iteration without a clamp to its own bounds).
void simplifier::visit(const make_buffer* op) {
  expr base = mutate(op->base);
  expr elem_size = mutate(op->elem_size);
  std::vector<dim_expr> dims = mutate(op->dims);
  stmt body = mutate_allocated_body(op->sym, dims, op->body);
  if (finish_decl(op->sym, body)) return;
  if (unchanged(base, op->base, elem_size, op->elem_size, dims, op->dims, body, op->body)) return set_result(op);
  set_result(make_buffer::make(op->sym, std::move(base), std::move(elem_size), std::move(dims), std::move(body)));
}

void simplifier::visit(const clone_buffer* op) {
  if (op->sym == op->src) {
    set_result(mutate(op->body));
    return;
  }
  stmt body = mutate_decl_body(op->sym, op->body);
  if (finish_decl(op->sym, body)) return;
  set_result(body.same_as(op->body) ? stmt(op) : clone_buffer::make(op->sym, op->src, std::move(body)));
}

void simplifier::visit(const crop_buffer* op) {
  box_expr bounds(op->bounds.size());
  for (std::size_t d = 0; d < bounds.size(); ++d) {
    bounds[d] = mutate_crop_bounds(op->bounds[d], op->src, d);
    if (crop_keeps_allocated(bounds[d], op->src, d)) bounds[d] = interval_expr();
  }
  // Trailing dimensions that do not crop are dropped.
  while (!bounds.empty() && crop_is_no_op(bounds.back(), op->src, bounds.size() - 1)) bounds.pop_back();
  if (bounds.empty()) {
    set_result(mutate(op->sym == op->src ? op->body : clone_buffer::make(op->sym, op->src, op->body)));
    return;
  }
  // A crop of one dim is a crop_dim.
  std::size_t cropped = 0;
  while (crop_is_no_op(bounds[cropped], op->src, cropped)) ++cropped;
  if (cropped + 1 == bounds.size() && cropped > 0) {
    set_result(mutate(crop_dim::make(op->sym, op->src, static_cast<int>(cropped), bounds[cropped], op->body)));
    return;
  }
  stmt body = mutate_decl_body(op->sym, op->body);
  if (finish_decl(op->sym, body)) return;
  if (unchanged(bounds, op->bounds, body, op->body)) return set_result(op);
  set_result(crop_buffer::make(op->sym, op->src, std::move(bounds), std::move(body)));
}

void simplifier::visit(const crop_dim* op) {
  interval_expr bounds = mutate_crop_bounds(op->bounds, op->src, op->dim);
  if (crop_is_no_op(bounds, op->src, op->dim) || crop_keeps_allocated(bounds, op->src, op->dim)) {
    set_result(mutate(op->sym == op->src ? op->body : clone_buffer::make(op->sym, op->src, op->body)));
    return;
  }
  stmt body = mutate_decl_body(op->sym, op->body);
  if (finish_decl(op->sym, body)) return;
  if (unchanged(bounds, op->bounds, body, op->body)) return set_result(op);
  set_result(crop_dim::make(op->sym, op->src, op->dim, std::move(bounds), std::move(body)));
}

void simplifier::visit(const slice_buffer* op) {
  std::vector<expr> at = mutate(op->at);
  stmt body = mutate_decl_body(op->sym, op->body);
  if (finish_decl(op->sym, body)) return;
  if (unchanged(at, op->at, body, op->body)) return set_result(op);
  set_result(slice_buffer::make(op->sym, op->src, std::move(at), std::move(body)));
}

void simplifier::visit(const slice_dim* op) {
  expr at = mutate(op->at);
  stmt body = mutate_decl_body(op->sym, op->body);
  if (finish_decl(op->sym, body)) return;
  if (unchanged(at, op->at, body, op->body)) return set_result(op);
  set_result(slice_dim::make(op->sym, op->src, op->dim, std::move(at), std::move(body)));
}

void simplifier::visit(const transpose* op) {
  stmt body = mutate_decl_body(op->sym, op->body);
  if (finish_decl(op->sym, body)) return;
  set_result(body.same_as(op->body) ? stmt(op) : transpose::make(op->sym, op->src, op->dims, std::move(body)));
}

void simplifier::visit(const copy_stmt* op) {
  std::vector<expr> src_x;
  {
    scope s(*this);
    for (var i : op->dst_x) declare(i, std::nullopt);
    src_x = mutate(op->src_x);
  }
  if (unchanged(src_x, op->src_x)) return set_result(op);
  set_result(copy_stmt::make(op->impl, op->src, std::move(src_x), op->dst, op->dst_x, op->pad));
}

void simplifier::visit(const check* op) {
  expr condition = mutate(op->condition);
  std::optional<index_t> c = as_constant(condition);
  if ((c && *c != 0) || (!c && prove(fact::nonzero, condition))) {
    set_result(stmt());
    return;
  }
  set_result(condition.same_as(op->condition) ? stmt(op) : check::make(std::move(condition)));
}

void simplifier::assume_true(const expr& c) {
  known_true_.push_back(c);
  if (const logical_and* a = c.as<logical_and>()) {
    assume_true(a->a);
    assume_true(a->b);
  } else if (const logical_not* n = c.as<logical_not>()) {
    // A negated or, as the builder writes "no output is empty": each negated operand holds.
    if (const logical_or* o = n->a.as<logical_or>()) {
      assume_true(mutate(!o->a));
      assume_true(mutate(!o->b));
    }
  }
}

void simplifier::visit(const if_then_else* op) {
  expr condition = mutate(op->condition);
  std::optional<bool> known;
  if (std::optional<index_t> c = as_constant(condition)) {
    known = *c != 0;
  } else if (prove(fact::nonzero, condition)) {
    known = true;
  } else if (prove(fact::zero, condition)) {
    known = false;
  } else {
    for (const expr& k : known_true_) {
      if (match(k, condition)) known = true;
    }
  }
  if (known) {
    set_result(mutate(*known ? op->true_body : op->false_body));
    return;
  }
  const std::size_t known_size = known_true_.size();
  assume_true(condition);
  stmt true_body = mutate(op->true_body);
  known_true_.resize(known_size);
  stmt false_body = mutate(op->false_body);
  if (!true_body.defined() && !false_body.defined()) {
    set_result(stmt());
  } else if (unchanged(condition, op->condition, true_body, op->true_body, false_body, op->false_body)) {
    set_result(op);
  } else {
    set_result(if_then_else::make(std::move(condition), std::move(true_body), std::move(false_body)));
  }
}

}  // namespace internal
}  // namespace slinky
