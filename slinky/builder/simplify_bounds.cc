// Interval arithmetic (bounds_of) and the proofs built on it (the facts of rule predicates,
// prove_true, attempt_to_prove).
#include <algorithm>
#include <cstddef>
#include <limits>
#include <optional>
#include <unordered_map>
#include <utility>
#include <vector>

#include "slinky/builder/simplify_internal.h"
#include "slinky/runtime/node_finder.h"

namespace slinky {
namespace internal {

using rewrite_rules::fact;

namespace {

// The value of an interval that is a single constant.
std::optional<index_t> as_constant_point(const interval_expr& i) {
  std::optional<index_t> min = as_constant(i.min);
  std::optional<index_t> max = as_constant(i.max);
  return min && max && *min == *max ? min : std::nullopt;
}

// Tightens the constant bounds b of a symbol aligned to a to its nearest members. Returns false
// (leaving result alone) if the bounds are not constants, no member is in them, or that overflows.
bool align_constant_bounds(const interval_expr& b, const alignment_type& a, interval_expr& result) {
  std::optional<index_t> lo = as_constant(b.min);
  std::optional<index_t> hi = as_constant(b.max);
  if (!lo || !hi) return false;
  if (a.is_constant()) {
    if (a.remainder < *lo || *hi < a.remainder) return false;
    result = point(a.remainder);
    return true;
  }
  index_t new_lo, new_hi, d;
  if (sub_overflows(a.remainder, *lo, &d) || add_overflows(*lo, euclidean_mod(d, a.modulus), &new_lo)) return false;
  if (sub_overflows(*hi, a.remainder, &d) || sub_overflows(*hi, euclidean_mod(d, a.modulus), &new_hi)) return false;
  if (new_hi < new_lo) return false;
  result = new_lo == new_hi ? point(new_lo) : interval_expr(new_lo, new_hi);
  return true;
}

// Computes bounds bottom up. Endpoints are built with a simplifier that proves facts only from
// the form of expressions, so finding bounds does not start other proofs: the cost is linear in
// the size of the expression. Where an operand's bounds are the operand itself (it uses only
// free symbols), the node is its own bound and is not rebuilt.
class bounds_finder : public expr_visitor {
  // The caller's bounds, or own_ once a let needs to bind its symbols.
  const bounds_map* bounds_;
  std::optional<bounds_map> own_;
  simplifier& m_;
  const bool free_unbounded_;
  const alignment_map* alignment_;
  interval_expr result_;
  // Divisors whose sign the select being bounded decides on this branch: q > 0 (1) where the
  // branch is select(0 < q, here, ...)'s true value, q <= 0 (-1) where it is its false value.
  std::vector<std::pair<expr, int>> signs_;

  // The sign assumed of divisor q on this branch (0: none).
  int assumed_sign(const expr& q) const {
    for (auto i = signs_.rbegin(); i != signs_.rend(); ++i) {
      if (match(i->first, q)) return i->second;
    }
    return 0;
  }

  // The bounds of e with divisor q of sign `sign` assumed (0: nothing assumed).
  interval_expr find_assuming(const expr& e, const expr& q, int sign) {
    if (sign == 0) return find(e);
    signs_.emplace_back(q, sign);
    interval_expr r = find(e);
    signs_.pop_back();
    return r;
  }

public:
  bounds_finder(const bounds_map& bounds, simplifier& maker, bool free_unbounded, const alignment_map* alignment)
      : bounds_(&bounds), m_(maker), free_unbounded_(free_unbounded), alignment_(alignment) {}

  interval_expr find(const expr& e) {
    e.accept(this);
    return std::move(result_);
  }

  void set_point(expr e) { result_ = point(std::move(e)); }

  // The bounds of a binary node whose operands are points: the node of those points.
  template <typename T>
  bool visit_points(const T* op, const interval_expr& a, const interval_expr& b) {
    if (!a.is_point() || !b.is_point()) return false;
    set_point(unchanged(a.min, op->a, b.min, op->b) ? expr(op) : m_.make<T>(a.min, b.min));
    return true;
  }

  // Bounds of boolean values are constants: lower is 1 if it is provably true, upper is 0 if it
  // is provably false. This keeps what proofs need ([0, 1]) instead of the value itself.
  static interval_expr boolean_bounds(const expr& lower, const expr& upper) {
    std::optional<index_t> l = as_constant(lower);
    std::optional<index_t> u = as_constant(upper);
    return {l && *l != 0 ? 1 : 0, u && *u == 0 ? 0 : 1};
  }

  // boolean_bounds(c, c): when the operands are points, the lower and upper bound are the same
  // expression, made once (nested conditions would otherwise make twice as many at each level).
  static interval_expr point_truth(const expr& c) { return boolean_bounds(c, c); }

  // The bounds of the truth value (0 or 1) of a value in b.
  interval_expr truth(const interval_expr& b, const expr& e) {
    if (is_boolean_form(e)) return b;
    if (b.is_point()) return point_truth(m_.make<logical_or>(m_.make<less>(0, b.min), m_.make<less>(b.min, 0)));
    return boolean_bounds(m_.make<logical_or>(m_.make<less>(0, b.min), m_.make<less>(b.max, 0)),
                          m_.make<logical_or>(m_.make<less>(b.min, 0), m_.make<less>(0, b.max)));
  }

  void visit(const variable* op) override {
    const std::optional<interval_expr>& b = bounds_->lookup(op->sym);
    if (op->field != buffer_field::none) {
      // Buffer metadata is its own bound (unless its symbol has bounds, which would make it
      // something other than a buffer).
      result_ = free_unbounded_ || b ? interval_expr::all() : point(expr(op));
      return;
    }
    if (!b) return void(result_ = free_unbounded_ ? interval_expr::all() : point(expr(op)));
    if (b->is_point() && b->min.defined()) return set_point(b->min);
    if (alignment_) {
      if (const alignment_type* a = alignment_->find(op->sym)) {
        if (align_constant_bounds(*b, *a, result_)) return;
      }
    }
    const expr unknown_min = free_unbounded_ ? negative_infinity() : expr(op);
    const expr unknown_max = free_unbounded_ ? positive_infinity() : expr(op);
    result_ = {b->min.defined() ? b->min : unknown_min, b->max.defined() ? b->max : unknown_max};
  }
  void visit(const constant* op) override { set_point(expr(op)); }

  void visit(const let* op) override {
    if (!own_) {
      own_ = *bounds_;
      bounds_ = &*own_;
    }
    std::vector<bounds_map::scoped_value> scoped;
    scoped.reserve(op->lets.size());
    for (const auto& l : op->lets) scoped.emplace_back(*own_, l.first, find(l.second));
    result_ = find(op->body);
    while (!scoped.empty()) scoped.pop_back();
  }

  void visit(const add* op) override {
    interval_expr a = find(op->a), b = find(op->b);
    if (visit_points(op, a, b)) return;
    result_ = {m_.make<add>(a.min, b.min), m_.make<add>(a.max, b.max)};
  }
  void visit(const sub* op) override {
    interval_expr a = find(op->a), b = find(op->b);
    if (visit_points(op, a, b)) return;
    result_ = {m_.make<sub>(a.min, b.max), m_.make<sub>(a.max, b.min)};
  }

  interval_expr scale(const interval_expr& a, index_t c) {
    if (c == 0) return point(0);
    if (a.is_point()) return point(m_.make<mul>(a.min, c));
    if (c > 0) return {m_.make<mul>(a.min, c), m_.make<mul>(a.max, c)};
    return {m_.make<mul>(a.max, c), m_.make<mul>(a.min, c)};
  }

  void visit(const mul* op) override {
    interval_expr a = find(op->a), b = find(op->b);
    if (visit_points(op, a, b)) return;
    if (std::optional<index_t> c = as_constant_point(b)) return void(result_ = scale(a, *c));
    if (std::optional<index_t> c = as_constant_point(a)) return void(result_ = scale(b, *c));
    // The extremes are at the corners. A product of an infinity and a non-constant cannot be
    // simplified, and its sign is unknown: give up on such bounds.
    expr corners[] = {m_.make<mul>(a.min, b.min), m_.make<mul>(a.min, b.max), m_.make<mul>(a.max, b.min),
                      m_.make<mul>(a.max, b.max)};
    for (const expr& i : corners) {
      if (!is_infinity(i) && contains_infinity(i)) return void(result_ = interval_expr::all());
    }
    result_ = {m_.make<minimum>(m_.make<minimum>(corners[0], corners[1]), m_.make<minimum>(corners[2], corners[3])),
               m_.make<maximum>(m_.make<maximum>(corners[0], corners[1]), m_.make<maximum>(corners[2], corners[3]))};
  }

  // a / b for b in [b.min, b.max] with b.min > 0: a / b is monotonic in b (decreasing for a >= 0,
  // increasing for a < 0), so the extremes are at the corners. If b.max is infinite, a / b.max is
  // 0 for a >= 0 and -1 for a < 0.
  interval_expr divide_by_positive(const interval_expr& a, const interval_expr& b) {
    if (is_positive_infinity(b.max)) {
      return {m_.make<minimum>(m_.make<div>(a.min, b.min), 0), m_.make<maximum>(m_.make<div>(a.max, b.min), -1)};
    }
    return {m_.make<minimum>(m_.make<div>(a.min, b.min), m_.make<div>(a.min, b.max)),
            m_.make<maximum>(m_.make<div>(a.max, b.min), m_.make<div>(a.max, b.max))};
  }

  // e / q for one value q of sign `sign` (1: q > 0, -1: q < 0), where e may have infinite parts:
  // e is a min, max or select of finite expressions and infinities (as the bounds of a region
  // that may be empty are). Undefined if e has another form with an infinity in it.
  // Proof: for q > 0, t / q (floor(t / q)) extended by +-oo / q = +-oo is non-decreasing on the
  // integers and +-oo, so it commutes with min and max; for q < 0, t / q = -floor(t / |q|)
  // extended by +-oo / q = -+oo is non-increasing, so it maps min to max and max to min. Any
  // function commutes with select. A finite part is divided as it is (x / q in the IR is that
  // function at the finite value, q being non-zero on this branch).
  expr divide_bound(const expr& e, const expr& q, int sign) {
    if (is_positive_infinity(e)) return infinity(sign);
    if (is_negative_infinity(e)) return infinity(-sign);
    if (!contains_infinity(e)) return m_.make<div>(e, q);
    if (const minimum* op = e.as<minimum>()) return divide_min_max<minimum, maximum>(op, q, sign);
    if (const maximum* op = e.as<maximum>()) return divide_min_max<maximum, minimum>(op, q, sign);
    if (const class select* op = e.as<class select>()) {
      if (contains_infinity(op->condition)) return expr();
      expr t = divide_bound(op->true_value, q, sign);
      expr f = t.defined() ? divide_bound(op->false_value, q, sign) : expr();
      return f.defined() ? m_.make_select(op->condition, std::move(t), std::move(f)) : expr();
    }
    return expr();
  }
  template <typename T, typename Flipped, typename Op>
  expr divide_min_max(const Op* op, const expr& q, int sign) {
    expr a = divide_bound(op->a, q, sign);
    expr b = a.defined() ? divide_bound(op->b, q, sign) : expr();
    if (!b.defined()) return expr();
    return sign > 0 ? m_.make<T>(std::move(a), std::move(b)) : m_.make<Flipped>(std::move(a), std::move(b));
  }

  void visit(const div* op) override {
    interval_expr a = find(op->a), b = find(op->b);
    if (visit_points(op, a, b)) return;
    std::optional<index_t> b_min = as_constant(b.min);
    std::optional<index_t> b_max = as_constant(b.max);
    if (std::optional<index_t> b_value = as_constant_point(b)) {
      const index_t c = *b_value;
      if (c == 0) return set_point(0);
      if (a.is_point()) return set_point(m_.make<div>(a.min, c));
      if (c > 0) return void(result_ = {m_.make<div>(a.min, c), m_.make<div>(a.max, c)});
      return void(result_ = {m_.make<div>(a.max, c), m_.make<div>(a.min, c)});
    }
    if (b.is_point() && !contains_infinity(a.min) && !contains_infinity(a.max)) {
      // For one value q of b, a / q is monotonic in a: non-decreasing for q > 0, non-increasing
      // for q <= 0 (constant 0 at q = 0), so the extremes are at a's. Where the sign is not known
      // here, the bounds select on it, select(0 < q, a.min / q, a.max / q) for the min (the
      // value of min(a.min / q, a.max / q)): bounding that select again over a loop, each branch
      // knows its sign, and each endpoint keeps one of a's endpoints per division. (Written as
      // min and max of both, each endpoint holds both of a's, and regions read through run-time
      // radices under nested loops doubled at each loop: docs/simplifier.md.)
      const expr& q = b.min;
      expr lo = m_.make<div>(a.min, q), hi = m_.make<div>(a.max, q);
      const int sign = assumed_sign(q);
      if (sign > 0) return void(result_ = {std::move(lo), std::move(hi)});
      if (sign < 0) return void(result_ = {std::move(hi), std::move(lo)});
      const expr positive = m_.make<less>(0, q);
      return void(result_ = {m_.make_select(positive, lo, hi), m_.make_select(positive, hi, lo)});
    }
    if (b_min && *b_min > 0) return void(result_ = divide_by_positive(a, b));
    if (b_max && *b_max < 0) {
      // a / b == -(a / -b).
      interval_expr r = divide_by_positive(a, {m_.make<sub>(0, b.max), m_.make<sub>(0, b.min)});
      return void(result_ = {m_.make<sub>(0, r.max), m_.make<sub>(0, r.min)});
    }
    // |a / b| <= |a|.
    expr m = m_.make<maximum>(a.max, m_.make<sub>(0, a.min));
    result_ = {m_.make<sub>(0, m), m};
    if (b.is_point()) {
      // One value q of b, of a sign unknown here, and a with infinite parts (with finite
      // bounds, the case above): for q > 0, a / q is in [a.min / q, a.max / q]; for q < 0, in
      // [a.max / q, a.min / q] (both by the monotonicity in divide_bound); for q = 0, a / q = 0,
      // which |a| bounds whenever a is not empty (a.min <= a.max implies max(a.max, -a.min) >= 0),
      // so that branch is the bound above. Where a is empty (a.min = oo or a.max = -oo), the
      // result is too on every branch but q = 0's.
      const expr& q = b.min;
      expr pos_min = divide_bound(a.min, q, 1), pos_max = divide_bound(a.max, q, 1);
      expr neg_min = divide_bound(a.max, q, -1), neg_max = divide_bound(a.min, q, -1);
      if (pos_min.defined() && pos_max.defined() && neg_min.defined() && neg_max.defined()) {
        const expr positive = m_.make<less>(0, q), negative = m_.make<less>(q, 0);
        result_ = {m_.make_select(positive, pos_min, m_.make_select(negative, neg_min, result_.min)),
                   m_.make_select(positive, pos_max, m_.make_select(negative, neg_max, result_.max))};
      }
    }
  }

  void visit(const mod* op) override {
    interval_expr a = find(op->a), b = find(op->b);
    // 0 <= a % b < |b|, and a % b <= a if a >= 0. This range is usually more useful than the
    // value of a % b, even where the operands are points.
    expr max;
    std::optional<index_t> b_value = as_constant_point(b);
    if (b_value) {
      if (*b_value == 0) return set_point(0);
      if (*b_value == std::numeric_limits<index_t>::min()) return void(result_ = {0, positive_infinity()});
      max = (*b_value < 0 ? -*b_value : *b_value) - 1;
    } else {
      max = m_.make<maximum>(m_.make<sub>(m_.make<maximum>(b.max, m_.make<sub>(0, b.min)), 1), 0);
    }
    std::optional<index_t> a_min = as_constant(a.min);
    if (a_min && *a_min >= 0) {
      // If a is in [0, |b|) for a constant b, a % b is a.
      std::optional<index_t> a_max = as_constant(a.max);
      if (b_value && a_max && *a_max <= *as_constant(max)) return void(result_ = a);
      max = m_.make<minimum>(a.max, max);
    }
    result_ = {0, max};
  }

  template <typename T>
  void visit_min_max(const T* op) {
    interval_expr a = find(op->a), b = find(op->b);
    if (visit_points(op, a, b)) return;
    result_ = {m_.make<T>(a.min, b.min), m_.make<T>(a.max, b.max)};
  }
  void visit(const minimum* op) override { visit_min_max(op); }
  void visit(const maximum* op) override { visit_min_max(op); }

  // Comparisons: the lower bound is 1 where the comparison holds for all values in the operand
  // bounds, the upper bound 0 where it holds for none.
  void visit(const less* op) override {
    interval_expr a = find(op->a), b = find(op->b);
    if (a.is_point() && b.is_point()) return void(result_ = point_truth(m_.make<less>(a.min, b.min)));
    result_ = boolean_bounds(m_.make<less>(a.max, b.min), m_.make<less>(a.min, b.max));
  }
  void visit(const less_equal* op) override {
    interval_expr a = find(op->a), b = find(op->b);
    if (a.is_point() && b.is_point()) return void(result_ = point_truth(m_.make<less_equal>(a.min, b.min)));
    result_ = boolean_bounds(m_.make<less_equal>(a.max, b.min), m_.make<less_equal>(a.min, b.max));
  }
  void visit(const equal* op) override {
    interval_expr a = find(op->a), b = find(op->b);
    if (a.is_point() && b.is_point()) {
      return void(result_ = point_truth(
                      m_.make<logical_and>(m_.make<less_equal>(a.min, b.min), m_.make<less_equal>(b.min, a.min))));
    }
    result_ =
        boolean_bounds(m_.make<logical_and>(m_.make<less_equal>(a.max, b.min), m_.make<less_equal>(b.max, a.min)),
                       m_.make<logical_and>(m_.make<less_equal>(a.min, b.max), m_.make<less_equal>(b.min, a.max)));
  }
  void visit(const not_equal* op) override {
    interval_expr a = find(op->a), b = find(op->b);
    if (a.is_point() && b.is_point()) {
      return void(result_ = point_truth(m_.make<logical_or>(m_.make<less>(a.min, b.min), m_.make<less>(b.min, a.min))));
    }
    result_ = boolean_bounds(m_.make<logical_or>(m_.make<less>(a.max, b.min), m_.make<less>(b.max, a.min)),
                             m_.make<logical_or>(m_.make<less>(a.min, b.max), m_.make<less>(b.min, a.max)));
  }
  template <typename T>
  void visit_logical(const T* op) {
    interval_expr a = truth(find(op->a), op->a);
    interval_expr b = truth(find(op->b), op->b);
    if (a.is_point() && b.is_point()) return void(result_ = point_truth(m_.make<T>(a.min, b.min)));
    result_ = boolean_bounds(m_.make<T>(a.min, b.min), m_.make<T>(a.max, b.max));
  }
  void visit(const logical_and* op) override { visit_logical(op); }
  void visit(const logical_or* op) override { visit_logical(op); }
  void visit(const logical_not* op) override {
    interval_expr a = truth(find(op->a), op->a);
    if (a.is_point()) return void(result_ = point_truth(m_.make_not(a.min)));
    result_ = boolean_bounds(m_.make_not(a.max), m_.make_not(a.min));
  }

  void visit(const conditional* op) override {
    if (!free_unbounded_) {
      // A condition of free symbols only has one value wherever the bounded symbols are: the
      // bounds are those of the value it selects (so that, say, the bounds of the need of an
      // idle consumer, select(idle, oo, ...), stay infinite when it is idle).
      // (A let in the condition counts as a bounded symbol: its values may use one.)
      const bool bounded = any_node(
          op->condition, [this](const variable* v) { return bounds_->contains(v->sym); },
          [](const let*) { return true; });
      if (!bounded) {
        // select(0 < q, t, f): t is bounded knowing q > 0, f knowing q <= 0 (divisions by q).
        const less* lt = op->condition.as<less>();
        const expr divisor = lt && is_zero(lt->a) ? lt->b : expr();
        interval_expr t = find_assuming(op->true_value, divisor, divisor.defined() ? 1 : 0);
        interval_expr f = find_assuming(op->false_value, divisor, divisor.defined() ? -1 : 0);
        if (t.is_point() && f.is_point()) {
          const bool same = unchanged(t.min, op->true_value, f.min, op->false_value);
          return set_point(same ? expr(op) : m_.make_select(op->condition, t.min, f.min));
        }
        result_ = {m_.make_select(op->condition, t.min, f.min), m_.make_select(op->condition, t.max, f.max)};
        return;
      }
    }
    interval_expr c = truth(find(op->condition), op->condition);
    if (is_constant(c.max, 0)) return void(result_ = find(op->false_value));
    std::optional<index_t> c_min = as_constant(c.min);
    if (c_min && *c_min != 0) return void(result_ = find(op->true_value));
    interval_expr t = find(op->true_value);
    interval_expr f = find(op->false_value);
    result_ = {m_.make<minimum>(t.min, f.min), m_.make<maximum>(t.max, f.max)};
  }

  void visit(const call* op) override {
    switch (op->intrinsic) {
    case intrinsic::positive_infinity:
    case intrinsic::negative_infinity: return set_point(expr(op));
    case intrinsic::abs: {
      interval_expr a = find(op->args[0]);
      if (a.is_point()) {
        // Keep the value as the upper bound, and that it is not negative as the lower bound.
        return void(result_ = {0, a.min.same_as(op->args[0]) ? expr(op) : m_.make_abs(a.min)});
      }
      // abs(a) >= max(a, -a, 0), and abs(a) <= max(a.max, -a.min).
      result_ = {m_.make<maximum>(m_.make<maximum>(a.min, m_.make<sub>(0, a.max)), 0),
                 m_.make<maximum>(a.max, m_.make<sub>(0, a.min))};
      return;
    }
    case intrinsic::and_then:
    case intrinsic::or_else:
    case intrinsic::validate_buffer: return void(result_ = {0, 1});
    case intrinsic::none:
    case intrinsic::wait_for:
    case intrinsic::indeterminate:
    case intrinsic::buffer_at:
    case intrinsic::semaphore_init:
    case intrinsic::semaphore_signal:
    case intrinsic::semaphore_wait:
    case intrinsic::trace_begin:
    case intrinsic::trace_end:
    case intrinsic::free: break;
    }
    result_ = interval_expr::all();
  }
};

// What can give an expression bounds other than itself: symbols with bounds, and operators with
// a limited range of values (the operands of +, -, * and / are searched instead).
class range_search {
  const bounds_map& bounds_;

public:
  explicit range_search(const bounds_map& bounds) : bounds_(bounds) {}

  bool operator()(const variable* op) const { return bounds_.contains(op->sym); }
  bool operator()(const let*) const { return true; }
#define SLINKY_RANGE(node)                                                                                             \
  bool operator()(const node*) const { return true; }
  SLINKY_RANGE(mod)
  SLINKY_RANGE(minimum)
  SLINKY_RANGE(maximum)
  SLINKY_RANGE(equal)
  SLINKY_RANGE(not_equal)
  SLINKY_RANGE(less)
  SLINKY_RANGE(less_equal)
  SLINKY_RANGE(logical_and)
  SLINKY_RANGE(logical_or)
  SLINKY_RANGE(logical_not)
  SLINKY_RANGE(conditional)
#undef SLINKY_RANGE
  // Other calls are unbounded whatever their arguments.
  node_search operator()(const call* op) const {
    const bool range = op->intrinsic == intrinsic::abs || op->intrinsic == intrinsic::positive_infinity ||
                       op->intrinsic == intrinsic::negative_infinity;
    return range ? node_search::found : node_search::skip_children;
  }
};

// Whether the bounds b of a value decide the fact.
bool lower_at_least(const interval_expr& b, index_t value) {
  std::optional<index_t> c = as_constant(b.min);
  return (c && *c >= value) || is_positive_infinity(b.min);
}
bool upper_at_most(const interval_expr& b, index_t value) {
  std::optional<index_t> c = as_constant(b.max);
  return (c && *c <= value) || is_negative_infinity(b.max);
}
bool decides(fact f, const interval_expr& b) {
  switch (f) {
  case fact::non_negative: return lower_at_least(b, 0);
  case fact::positive: return lower_at_least(b, 1);
  case fact::non_positive: return upper_at_most(b, 0);
  case fact::negative: return upper_at_most(b, -1);
  case fact::nonzero: return lower_at_least(b, 1) || upper_at_most(b, -1);
  case fact::zero: return lower_at_least(b, 0) && upper_at_most(b, 0);
  case fact::boolean: return lower_at_least(b, 0) && upper_at_most(b, 1);
  case fact::finite:
  case fact::constant: return false;
  }
  return false;
}

}  // namespace

interval_expr find_bounds(const expr& e, const bounds_map& bounds, simplifier& maker, bool free_unbounded,
                          const alignment_map* alignment) {
  bounds_finder f(bounds, maker, free_unbounded, alignment);
  return f.find(e);
}

interval_expr simplifier::bounds_of(const expr& e) {
  return find_bounds(e, bounds(), endpoint_maker(), false, &alignment());
}

bool simplifier::has_range(const expr& e) const { return any_node(e, range_search(bounds())); }

bool simplifier::prove(fact f, const expr& e) {
  if (f == fact::finite) return !contains_infinity(e);
  if (f == fact::constant) return as_constant(e).has_value();
  if (f == fact::boolean && is_boolean_form(e)) return true;
  if (as_constant(e)) return decides(f, point(e));
  // Alignment proves a value is never 0 (x in (8, 3)).
  if (f == fact::nonzero && !alignment_of(e).contains(0)) return true;
  // Without symbols with bounds or operators of limited range, e is only bounded by itself.
  if (!use_bounds_ || !has_range(e)) return false;
  return prove_bounds(f, bounds_of(e));
}

namespace {

// The fact about b - a that is equivalent to f about a - b.
fact negated(fact f) {
  switch (f) {
  case fact::non_negative: return fact::non_positive;
  case fact::positive: return fact::negative;
  case fact::non_positive: return fact::non_negative;
  case fact::negative: return fact::positive;
  case fact::nonzero:
  case fact::zero:
  case fact::boolean:
  case fact::finite:
  case fact::constant: return f;
  }
  return f;
}

}  // namespace

bool simplifier::prove_difference(fact f, const expr& a, const expr& b) {
  difference& last = last_difference_;
  const bool sign_fact = negated(f) != f || f == fact::nonzero || f == fact::zero;
  if (use_bounds_ && sign_fact && last.generation == generation_) {
    if (last.a.same_as(a) && last.b.same_as(b)) return last.bounds && prove_bounds(f, *last.bounds);
    if (last.a.same_as(b) && last.b.same_as(a)) return last.bounds && prove_bounds(negated(f), *last.bounds);
  }
  if (f == fact::nonzero) {
    const alignment_type alignment_a = alignment_of(a);
    if (alignment_a != alignment_type() && !(alignment_a - alignment_of(b)).contains(0)) return true;
  }
  const expr d = make<sub>(a, b);
  if (!use_bounds_ || !sign_fact || as_constant(d)) return prove(f, d);
  last.a = a;
  last.b = b;
  last.generation = generation_;
  last.bounds = has_range(d) ? std::optional<interval_expr>(bounds_of(d)) : std::nullopt;
  return last.bounds && prove_bounds(f, *last.bounds);
}

bool simplifier::prove_bounds(fact f, interval_expr b) {
  // The endpoints bound e for every value of the free symbols, and may use symbols with bounds of
  // their own (the variable of an outer loop in the bounds of an inner one): widen them to their
  // bounds over all values of all symbols, a few times.
  const bool need_min = f != fact::non_positive && f != fact::negative;
  const bool need_max = f != fact::non_negative && f != fact::positive;
  for (int i = 0;; ++i) {
    if (decides(f, b)) return true;
    if (i == 2) return false;
    // An endpoint without a range only widens to infinity (or stays a constant).
    interval_expr wider = b;
    if (need_min && has_range(b.min)) {
      wider.min = find_bounds(b.min, bounds(), endpoint_maker(), true, &alignment()).min;
    }
    if (need_max && has_range(b.max)) {
      wider.max = find_bounds(b.max, bounds(), endpoint_maker(), true, &alignment()).max;
    }
    if (wider.min.same_as(b.min) && wider.max.same_as(b.max)) return false;
    b = std::move(wider);
  }
}

}  // namespace internal

namespace {

// The symbols an expression uses (any field), in order of first use.
class symbol_collector : public expr_visitor {
public:
  std::vector<var> syms;
  using expr_visitor::visit;
  void visit(const variable* op) override {
    if (std::find(syms.begin(), syms.end(), op->sym) == syms.end()) syms.push_back(op->sym);
  }
};

// Bounds of an expression depend only on its structure and the bounds of the symbols it uses,
// and of the symbols those bounds use, and so on. Bounds inference asks for the same few over and
// over (each func of a chain of similar ones widens the same region over the same loops): this
// thread's recent results, keyed by the expression and those bounds. Bypassed with an alignment
// map, and while a rule observer (tests of the rules) is watching.
class bounds_memo {
  struct entry {
    expr in;
    std::vector<std::pair<var, std::optional<interval_expr>>> given;
    interval_expr out;
  };
  static constexpr std::size_t max_entries = 4096;
  std::unordered_map<std::size_t, entry> entries_;

public:
  interval_expr bounds_of(const expr& e, const bounds_map& bounds) {
    symbol_collector used;
    e.accept(&used);
    std::vector<std::pair<var, std::optional<interval_expr>>> given;
    for (std::size_t k = 0; k < used.syms.size(); ++k) {
      const std::optional<interval_expr>& b = bounds.lookup(used.syms[k]);
      given.emplace_back(used.syms[k], b);
      if (!b) continue;
      if (b->min.defined()) b->min.accept(&used);
      if (b->max.defined()) b->max.accept(&used);
    }
    std::size_t h = internal::structural_hash(e.get());
    for (const auto& g : given) {
      h = internal::hash_combine(h, g.first.id);
      if (g.second) {
        h = internal::hash_combine(h, internal::structural_hash(g.second->min.get()));
        h = internal::hash_combine(h, internal::structural_hash(g.second->max.get()));
      }
    }
    auto i = entries_.find(h);
    if (i != entries_.end() && same(i->second, e, given)) return i->second.out;
    internal::simplifier s(bounds, true);
    interval_expr result = s.bounds_of(s.mutate(e));
    if (entries_.size() >= max_entries) entries_.clear();
    entries_[h] = {e, std::move(given), result};
    return result;
  }

private:
  static bool same(const entry& a, const expr& e,
                   const std::vector<std::pair<var, std::optional<interval_expr>>>& given) {
    if (a.given.size() != given.size() || !match(a.in, e)) return false;
    for (std::size_t k = 0; k < given.size(); ++k) {
      if (a.given[k].first != given[k].first || a.given[k].second.has_value() != given[k].second.has_value()) {
        return false;
      }
      if (!given[k].second) continue;
      const interval_expr& x = *a.given[k].second;
      const interval_expr& y = *given[k].second;
      if (!match(x.min, y.min) || !match(x.max, y.max)) return false;
    }
    return true;
  }
};

}  // namespace

interval_expr bounds_of(const expr& e, const bounds_map& bounds, const alignment_map& alignment) {
  // An expression with an undefined part is unbounded.
  if (internal::has_undefined_operand(e)) return interval_expr(expr(), expr());
  if (e.defined() && !internal::has_entries(alignment) && !rewrite_rules::thread_rule_observer()) {
    static thread_local bounds_memo memo;
    return memo.bounds_of(e, bounds);
  }
  internal::simplifier s(bounds, true, alignment);
  return s.bounds_of(s.mutate(e));
}

interval_expr bounds_of(const interval_expr& i, const bounds_map& bounds, const alignment_map& alignment) {
  if (internal::has_undefined_operand(i.min) || internal::has_undefined_operand(i.max)) {
    // An unbounded end stays unbounded.
    interval_expr a = bounds_of(i.min, bounds, alignment);
    interval_expr b = i.is_point() ? a : bounds_of(i.max, bounds, alignment);
    return interval_expr(a.min.defined() && b.min.defined() ? simplify(min(a.min, b.min)) : expr(),
                         a.max.defined() && b.max.defined() ? simplify(max(a.max, b.max)) : expr());
  }
  internal::simplifier s(bounds, true, alignment);
  interval_expr a = s.bounds_of(s.mutate(i.min));
  if (i.is_point()) return a;
  interval_expr b = s.bounds_of(s.mutate(i.max));
  return {s.make<minimum>(a.min, b.min), s.make<maximum>(a.max, b.max)};
}

std::optional<bool> attempt_to_prove(const expr& e, const bounds_map& bounds, const alignment_map& alignment) {
  // Nothing is known of an expression with an undefined part.
  if (internal::has_undefined_operand(e)) return std::nullopt;
  internal::simplifier s(bounds, true, alignment);
  expr simplified = s.mutate(e);
  if (std::optional<index_t> c = as_constant(simplified)) return *c != 0;
  if (s.prove(rewrite_rules::fact::nonzero, simplified)) return true;
  if (s.prove(rewrite_rules::fact::zero, simplified)) return false;
  return std::nullopt;
}

bool prove_true(const expr& e, const bounds_map& bounds, const alignment_map& alignment) {
  return attempt_to_prove(e, bounds, alignment) == true;
}

}  // namespace slinky
