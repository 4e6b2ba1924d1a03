// The simplifier's smaller public queries (prove_false, constant bounds, evaluate_constant,
// can_evaluate, simplify_intersection) and the per-node simplify and bounds_of helpers, apart from
// the hot paths of simplify.cc and simplify_bounds.cc so that those compile as before.
#include <algorithm>
#include <utility>
#include <vector>

#include "slinky/base/assert.h"
#include "slinky/builder/simplify.h"
#include "slinky/builder/simplify_internal.h"
#include "slinky/runtime/depends_on.h"

namespace slinky {

bool prove_false(const expr& e, const bounds_map& bounds, const alignment_map& alignment) {
  return attempt_to_prove(e, bounds, alignment) == false;
}

namespace {

// The constant bound of e on one side: the bounds of e with every symbol unbounded, widened
// like a proof's until the end is a constant or infinite.
expr constant_bound(const expr& e, bool upper) {
  if (internal::has_undefined_operand(e)) return upper ? positive_infinity() : negative_infinity();
  internal::simplifier s(bounds_map(), true);
  bounds_map unbounded;
  expr bound = s.mutate(e);
  for (int i = 0; i < 3; ++i) {
    if (as_constant(bound) || is_infinity(bound)) return bound;
    interval_expr b = internal::find_bounds(bound, unbounded, s, /*free_unbounded=*/true);
    bound = upper ? b.max : b.min;
  }
  if (as_constant(bound) || is_infinity(bound)) return bound;
  return upper ? positive_infinity() : negative_infinity();
}

}  // namespace

expr constant_lower_bound(const expr& e) { return constant_bound(e, false); }
expr constant_upper_bound(const expr& e) { return constant_bound(e, true); }
std::optional<index_t> evaluate_constant_lower_bound(const expr& e) { return as_constant(constant_lower_bound(e)); }
std::optional<index_t> evaluate_constant_upper_bound(const expr& e) { return as_constant(constant_upper_bound(e)); }

interval_expr simplify_intersection(const interval_expr& a, const interval_expr& b) { return simplify(a & b); }

namespace {

// The per-node bounds: the bounds of a node whose operands are placeholder symbols bounded by the
// given intervals (undefined ends unbounded), found by the same code as bounds_of.
class node_bounds {
  std::vector<interval_expr> operands_;
  std::vector<var> placeholders_;

public:
  explicit node_bounds(std::vector<interval_expr> operands) : operands_(std::move(operands)) {
    // Placeholder ids above those of every symbol the operands use.
    var::type next = 0;
    for (const interval_expr& i : operands_) {
      for (const expr& e : {i.min, i.max}) {
        for (var v : find_dependencies(e)) next = std::max(next, v.id + 1);
      }
    }
    for (std::size_t i = 0; i < operands_.size(); ++i) placeholders_.push_back(var(next + i));
  }
  expr operand(std::size_t i) const { return placeholders_[i]; }

  interval_expr bounds_of(const expr& node) {
    bounds_map bounds;
    for (std::size_t i = 0; i < operands_.size(); ++i) {
      interval_expr b = std::move(operands_[i]);
      if (!b.min.defined()) b.min = negative_infinity();
      if (!b.max.defined()) b.max = positive_infinity();
      bounds[placeholders_[i]] = std::move(b);
    }
    internal::simplifier maker(bounds_map(), false);
    return internal::find_bounds(node, bounds, maker);
  }
};

template <typename T>
interval_expr binary_bounds(interval_expr a, interval_expr b) {
  node_bounds n({std::move(a), std::move(b)});
  return n.bounds_of(T::make(n.operand(0), n.operand(1)));
}

}  // namespace

#define SLINKY_BINARY_BOUNDS(node)                                                                                     \
  interval_expr bounds_of(const class node*, interval_expr a, interval_expr b) {                                       \
    return binary_bounds<class node>(std::move(a), std::move(b));                                                      \
  }
SLINKY_FOR_EACH_BINARY_NODE(SLINKY_BINARY_BOUNDS)
#undef SLINKY_BINARY_BOUNDS

interval_expr bounds_of(const logical_not*, interval_expr a) {
  node_bounds n({std::move(a)});
  return n.bounds_of(logical_not::make(n.operand(0)));
}

interval_expr bounds_of(const conditional*, interval_expr c, interval_expr t, interval_expr f) {
  node_bounds n({std::move(c), std::move(t), std::move(f)});
  return n.bounds_of(conditional::make(n.operand(0), n.operand(1), n.operand(2)));
}

interval_expr bounds_of(const call* op, intrinsic fn, std::vector<interval_expr> args) {
  const std::size_t n_args = args.size();
  node_bounds n(std::move(args));
  std::vector<expr> operands;
  for (std::size_t i = 0; i < n_args; ++i) operands.push_back(n.operand(i));
  return n.bounds_of(call::make(fn, op ? op->target : call::callable(), std::move(operands)));
}

interval_expr bounds_of(const call* op, std::vector<interval_expr> args) {
  SLINKY_CHECK(op, "bounds_of(const call*, args) needs the call (or use the form with an intrinsic)");
  return bounds_of(op, op->intrinsic, std::move(args));
}

bool can_evaluate(intrinsic fn) {
  switch (fn) {
  case intrinsic::abs:
  case intrinsic::and_then:
  case intrinsic::or_else: return true;
  case intrinsic::none:
  case intrinsic::negative_infinity:
  case intrinsic::positive_infinity:
  case intrinsic::indeterminate:
  case intrinsic::buffer_at:
  case intrinsic::semaphore_init:
  case intrinsic::semaphore_signal:
  case intrinsic::semaphore_wait:
  case intrinsic::wait_for:
  case intrinsic::trace_begin:
  case intrinsic::trace_end:
  case intrinsic::free:
  case intrinsic::validate_buffer: return false;
  }
  return false;
}

std::optional<index_t> evaluate_constant(const expr& e) { return as_constant(simplify(e)); }

namespace {

// The per-node helpers use a simplifier without bounds or alignment of symbols. The simplifying
// constructor builds a new node; op itself is returned where that is op again.
template <typename T>
expr simplify_binary(const T* op, expr a, expr b) {
  if (!a.defined() || !b.defined()) return expr();
  internal::simplifier s(bounds_map(), true);
  const bool own = op && unchanged(a, op->a, b, op->b);
  expr result = s.make<T>(std::move(a), std::move(b));
  return own && match(result, expr(op)) ? expr(op) : result;
}

}  // namespace

#define SLINKY_SIMPLIFY_BINARY(node)                                                                                   \
  expr simplify(const class node* op, expr a, expr b) { return simplify_binary(op, std::move(a), std::move(b)); }
SLINKY_FOR_EACH_BINARY_NODE(SLINKY_SIMPLIFY_BINARY)
#undef SLINKY_SIMPLIFY_BINARY

expr simplify(const logical_not* op, expr a) {
  if (!a.defined()) return expr();
  internal::simplifier s(bounds_map(), true);
  return s.simplify_not(op, std::move(a));
}

expr simplify(const conditional* op, expr c, expr t, expr f) {
  if (!c.defined() || !t.defined() || !f.defined()) return expr();
  internal::simplifier s(bounds_map(), true);
  return s.simplify_select(op, std::move(c), std::move(t), std::move(f));
}

expr simplify(const call* op, intrinsic fn, std::vector<expr> args) {
  internal::simplifier s(bounds_map(), true);
  return s.simplify_call(op, fn, std::move(args));
}

expr simplify(const call* op, std::vector<expr> args) {
  SLINKY_CHECK(op, "simplify(const call*, args) needs the call (or use the form with an intrinsic)");
  return simplify(op, op->intrinsic, std::move(args));
}

expr simplify(const let* op, std::vector<std::pair<var, expr>> lets, expr body) {
  const bool same = op && unchanged(lets, op->lets, body, op->body);
  internal::simplifier s(bounds_map(), true);
  return s.mutate(same ? expr(op) : let::make(std::move(lets), std::move(body)));
}

}  // namespace slinky
