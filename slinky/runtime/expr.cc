// Expression nodes: construction, the operators that build them, structural comparison, and
// intervals.
#include "slinky/runtime/expr.h"

#include <map>
#include <mutex>
#include <string>

#include "slinky/base/arithmetic.h"

namespace slinky {

const char* to_string(expr_node_type t) {
  switch (t) {
  case expr_node_type::none: return "none";
#define SLINKY_X(name)                                                                                                 \
  case expr_node_type::name: return #name;
    SLINKY_FOR_EACH_EXPR_NODE(SLINKY_X)
#undef SLINKY_X
  }
  return "<invalid expr_node_type>";
}

const char* to_string(stmt_node_type t) {
  switch (t) {
  case stmt_node_type::none: return "none";
#define SLINKY_X(name)                                                                                                 \
  case stmt_node_type::name: return #name;
    SLINKY_FOR_EACH_STMT_NODE(SLINKY_X)
#undef SLINKY_X
  }
  return "<invalid stmt_node_type>";
}

const char* to_string(intrinsic i) {
  switch (i) {
  case intrinsic::none: return "none";
  case intrinsic::positive_infinity: return "oo";
  case intrinsic::negative_infinity: return "-oo";
  case intrinsic::indeterminate: return "indeterminate";
  case intrinsic::abs: return "abs";
  case intrinsic::and_then: return "and_then";
  case intrinsic::or_else: return "or_else";
  case intrinsic::buffer_at: return "buffer_at";
  case intrinsic::semaphore_init: return "semaphore_init";
  case intrinsic::semaphore_signal: return "semaphore_signal";
  case intrinsic::semaphore_wait: return "semaphore_wait";
  case intrinsic::wait_for: return "wait_for";
  case intrinsic::trace_begin: return "trace_begin";
  case intrinsic::trace_end: return "trace_end";
  case intrinsic::free: return "free";
  case intrinsic::validate_buffer: return "validate_buffer";
  }
  return "<invalid intrinsic>";
}

const char* to_string(buffer_field f) {
  switch (f) {
  case buffer_field::none: return "none";
  case buffer_field::rank: return "buffer_rank";
  case buffer_field::elem_size: return "buffer_elem_size";
  case buffer_field::size_bytes: return "buffer_size_bytes";
  case buffer_field::min: return "buffer_min";
  case buffer_field::max: return "buffer_max";
  case buffer_field::stride: return "buffer_stride";
  case buffer_field::fold_factor: return "buffer_fold_factor";
  }
  return "<invalid buffer_field>";
}

std::string node_context::name(var v) const {
  if (!v.defined()) return "<>";
  if (v.id < names_.size()) return names_[v.id];
  return "<" + std::to_string(v.id) + ">";
}

var node_context::insert(const std::string& name) {
  auto i = ids_.find(name);
  if (i != ids_.end()) return var(i->second);
  symbol_id id = names_.size();
  names_.push_back(name);
  ids_.emplace(name, id);
  return var(id);
}

var node_context::insert_unique(const std::string& prefix) {
  if (ids_.find(prefix) == ids_.end()) return insert(prefix);
  for (std::size_t i = 0;; ++i) {
    std::string candidate = prefix + "#" + std::to_string(i);
    if (ids_.find(candidate) == ids_.end()) return insert(candidate);
  }
}

std::optional<var> node_context::lookup(const std::string& name) const {
  auto i = ids_.find(name);
  if (i == ids_.end()) return std::nullopt;
  return var(i->second);
}

expr::expr(std::int32_t x) : expr(constant::make(x)) {}
expr::expr(std::int64_t x) : expr(constant::make(x)) {}
expr::expr(long long x) : expr(constant::make(static_cast<index_t>(x))) {}
expr::expr(var v) : expr(variable::make(v)) {}

expr var::operator-() const { return -expr(*this); }

expr& expr::operator+=(const expr& r) { return *this = *this + r; }
expr& expr::operator-=(const expr& r) { return *this = *this - r; }
expr& expr::operator*=(const expr& r) { return *this = *this * r; }
expr& expr::operator/=(const expr& r) { return *this = *this / r; }
expr& expr::operator%=(const expr& r) { return *this = *this % r; }

namespace {

// Small constants are shared: they are made constantly while building programs.
const expr& small_constant(index_t value) {
  static const std::vector<expr> table = [] {
    std::vector<expr> t;
    for (index_t i = -16; i <= 64; ++i) {
      auto* n = new constant();
      n->value = i;
      t.emplace_back(n);
    }
    return t;
  }();
  return table[value + 16];
}

// Operands may be undefined: a client's unknown extent is an undefined expr inside the expressions
// it builds and queries, which the simplifier treats as unknown (simplify_test.cc,
// undefined_operands_are_unknown).
template <typename T>
expr make_binary(expr a, expr b) {
  // Canonical order for commutative operators: constants on the right.
  if (T::commutative && a.as<constant>() && !b.as<constant>()) std::swap(a, b);
  auto* n = new T();
  n->a = std::move(a);
  n->b = std::move(b);
  return expr(n);
}

}  // namespace

expr variable::make(var sym) {
  auto* n = new variable();
  n->sym = sym;
  return expr(n);
}

expr variable::make(var sym, buffer_field field, int dim) {
  auto* n = new variable();
  n->sym = sym;
  n->field = field;
  n->dim = dim;
  return expr(n);
}

expr constant::make(index_t value) {
  if (-16 <= value && value <= 64) return small_constant(value);
  auto* n = new constant();
  n->value = value;
  return expr(n);
}

expr constant::make(const void* address) { return make(reinterpret_cast<index_t>(address)); }

expr_ref constant::get(index_t value) {
  if (-16 <= value && value <= 64) return small_constant(value);
  // Other values are interned for the life of the process: each distinct value costs one node.
  static std::mutex mutex;
  static std::map<index_t, expr> interned;
  std::lock_guard<std::mutex> lock(mutex);
  expr& e = interned[value];
  if (!e.defined()) {
    auto* n = new constant();
    n->value = value;
    e = expr(n);
  }
  return e;
}

expr let::make(std::vector<std::pair<var, expr>> lets, expr body) {
  if (lets.empty()) return body;
  auto* n = new let();
  n->lets = std::move(lets);
  n->body = std::move(body);
  return expr(n);
}

#define SLINKY_DEFINE_BINARY_MAKE(name)                                                                                \
  expr name::make(expr a, expr b) { return make_binary<class name>(std::move(a), std::move(b)); }
SLINKY_FOR_EACH_BINARY_NODE(SLINKY_DEFINE_BINARY_MAKE)
#undef SLINKY_DEFINE_BINARY_MAKE

expr logical_not::make(expr a) {
  auto* n = new logical_not();
  n->a = std::move(a);
  return expr(n);
}

expr conditional::make(expr condition, expr true_value, expr false_value) {
  auto* n = new conditional();
  n->condition = std::move(condition);
  n->true_value = std::move(true_value);
  n->false_value = std::move(false_value);
  return expr(n);
}

expr call::make(slinky::intrinsic i, callable target, std::vector<expr> args) {
  auto* n = new call();
  n->intrinsic = i;
  n->target = std::move(target);
  n->args = std::move(args);
  return expr(n);
}
expr call::make(slinky::intrinsic i, std::vector<expr> args) { return make(i, nullptr, std::move(args)); }
expr call::make(callable target, std::vector<expr> args) {
  return make(slinky::intrinsic::none, std::move(target), std::move(args));
}

std::optional<index_t> as_constant(expr_ref x) {
  const constant* c = x.as<constant>();
  if (!c) return std::nullopt;
  return c->value;
}

std::optional<var> as_variable(expr_ref x, buffer_field field) {
  const variable* v = x.as<variable>();
  if (!v || v->field != field) return std::nullopt;
  return v->sym;
}

bool is_variable(expr_ref x, var sym, buffer_field field) {
  const variable* v = x.as<variable>();
  return v && v->sym == sym && v->field == field;
}

bool is_variable(expr_ref x, var buf, buffer_field field, int dim) {
  const variable* v = x.as<variable>();
  return v && v->sym == buf && v->field == field && v->dim == dim;
}

bool is_constant(expr_ref x, index_t value) {
  const constant* c = x.as<constant>();
  return c && c->value == value;
}
bool is_true(expr_ref x) {
  const constant* c = x.as<constant>();
  return c && c->value != 0;
}
bool is_false(expr_ref x) { return is_zero(x); }

const call* as_intrinsic(expr_ref x, intrinsic fn) {
  const call* c = x.as<call>();
  return c && c->intrinsic == fn ? c : nullptr;
}

bool is_positive(expr_ref x) {
  if (std::optional<index_t> c = as_constant(x)) return *c > 0;
  if (is_positive_infinity(x)) return true;
  if (const call* c = as_intrinsic(x, intrinsic::abs)) return is_positive(c->args[0]);
  return false;
}
bool is_non_negative(expr_ref x) {
  if (std::optional<index_t> c = as_constant(x)) return *c >= 0;
  return is_positive_infinity(x) || is_intrinsic(x, intrinsic::abs);
}
bool is_negative(expr_ref x) {
  if (std::optional<index_t> c = as_constant(x)) return *c < 0;
  return is_negative_infinity(x);
}
bool is_non_positive(expr_ref x) {
  if (std::optional<index_t> c = as_constant(x)) return *c <= 0;
  return is_negative_infinity(x);
}

bool is_boolean(expr_ref x) {
  if (std::optional<index_t> c = as_constant(x)) return *c == 0 || *c == 1;
  return is_boolean_node(x.type());
}
expr boolean(const expr& x) { return is_boolean(x) ? x : x != 0; }

bool should_commute(const expr& a, const expr& b) { return should_commute(a.type(), b.type()); }

namespace {

// Folds an operator of two constants, where doing so cannot overflow.
template <typename Fold>
expr fold_or_make(const expr& a, const expr& b, Fold fold, expr (*make)(expr, expr)) {
  std::optional<index_t> ca = as_constant(a);
  std::optional<index_t> cb = as_constant(b);
  if (ca && cb) {
    index_t result;
    if (fold(*ca, *cb, &result)) return constant::make(result);
  }
  return make(a, b);
}

}  // namespace

expr operator+(expr a, expr b) {
  return fold_or_make(
      a, b, [](index_t x, index_t y, index_t* r) { return !add_overflows(x, y, r); }, add::make);
}
expr operator-(expr a, expr b) {
  return fold_or_make(
      a, b, [](index_t x, index_t y, index_t* r) { return !sub_overflows(x, y, r); }, sub::make);
}
expr operator*(expr a, expr b) {
  return fold_or_make(
      a, b, [](index_t x, index_t y, index_t* r) { return !mul_overflows(x, y, r); }, mul::make);
}
expr operator/(expr a, expr b) {
  return fold_or_make(
      a, b,
      [](index_t x, index_t y, index_t* r) {
        *r = euclidean_div(x, y);
        return true;
      },
      div::make);
}
expr operator%(expr a, expr b) {
  return fold_or_make(
      a, b,
      [](index_t x, index_t y, index_t* r) {
        *r = euclidean_mod(x, y);
        return true;
      },
      mod::make);
}
expr expr::operator-() const {
  if (std::optional<index_t> c = as_constant(*this)) {
    if (*c != std::numeric_limits<index_t>::min()) return constant::make(-*c);
  }
  return sub::make(0, *this);
}

#define SLINKY_DEFINE_FOLDED_OPERATOR(op, node, expression)                                                            \
  expr op(expr a, expr b) {                                                                                            \
    return fold_or_make(                                                                                               \
        a, b,                                                                                                          \
        [](index_t x, index_t y, index_t* r) {                                                                         \
          *r = (expression);                                                                                           \
          return true;                                                                                                 \
        },                                                                                                             \
        node::make);                                                                                                   \
  }
SLINKY_DEFINE_FOLDED_OPERATOR(operator==, equal, x == y)
SLINKY_DEFINE_FOLDED_OPERATOR(operator!=, not_equal, x != y)
SLINKY_DEFINE_FOLDED_OPERATOR(operator<, less, x < y)
SLINKY_DEFINE_FOLDED_OPERATOR(operator<=, less_equal, x <= y)
SLINKY_DEFINE_FOLDED_OPERATOR(operator&&, logical_and, x != 0 && y != 0)
SLINKY_DEFINE_FOLDED_OPERATOR(operator||, logical_or, x != 0 || y != 0)
SLINKY_DEFINE_FOLDED_OPERATOR(min, minimum, x < y ? x : y)
SLINKY_DEFINE_FOLDED_OPERATOR(max, maximum, x < y ? y : x)
#undef SLINKY_DEFINE_FOLDED_OPERATOR

expr operator>(expr a, expr b) { return std::move(b) < std::move(a); }
expr operator>=(expr a, expr b) { return std::move(b) <= std::move(a); }
expr operator!(expr a) {
  if (std::optional<index_t> c = as_constant(a)) return *c == 0 ? 1 : 0;
  return logical_not::make(std::move(a));
}

expr clamp(expr x, expr lo, expr hi) {
  if (lo.defined()) x = max(std::move(x), std::move(lo));
  if (hi.defined()) x = min(std::move(x), std::move(hi));
  return x;
}
expr clamp(expr x, const interval_expr& b) { return clamp(std::move(x), b.min, b.max); }

namespace {

expr fold_left(span<expr> xs, expr (*op)(expr, expr)) {
  expr result;
  for (const expr& x : xs) result = result.defined() ? op(std::move(result), x) : x;
  return result;
}

}  // namespace

expr min(span<expr> xs) { return fold_left(xs, static_cast<expr (*)(expr, expr)>(min)); }
expr max(span<expr> xs) { return fold_left(xs, static_cast<expr (*)(expr, expr)>(max)); }

expr euclidean_div(expr a, expr b) { return std::move(a) / std::move(b); }
expr euclidean_mod(expr a, expr b) { return std::move(a) % std::move(b); }

expr and_then(std::vector<expr> args) { return call::make(intrinsic::and_then, std::move(args)); }
expr or_else(std::vector<expr> args) { return call::make(intrinsic::or_else, std::move(args)); }
expr and_then(expr a, expr b) { return and_then(std::vector<expr>{std::move(a), std::move(b)}); }
expr or_else(expr a, expr b) { return or_else(std::vector<expr>{std::move(a), std::move(b)}); }

expr select(expr condition, expr true_value, expr false_value) {
  if (std::optional<index_t> c = as_constant(condition)) return *c != 0 ? true_value : false_value;
  return conditional::make(std::move(condition), std::move(true_value), std::move(false_value));
}

expr abs(expr x) {
  if (std::optional<index_t> c = as_constant(x)) {
    if (*c != std::numeric_limits<index_t>::min()) return constant::make(*c < 0 ? -*c : *c);
  }
  return call::make(intrinsic::abs, {std::move(x)});
}

expr align_down(expr x, expr a) { return (std::move(x) / a) * a; }
expr align_up(expr x, expr a) { return ((std::move(x) + a - 1) / a) * a; }

const expr& positive_infinity() {
  static const expr e = call::make(intrinsic::positive_infinity, {});
  return e;
}
const expr& negative_infinity() {
  static const expr e = call::make(intrinsic::negative_infinity, {});
  return e;
}
const expr& indeterminate() {
  static const expr e = call::make(intrinsic::indeterminate, {});
  return e;
}
const expr& infinity(int sign) { return sign < 0 ? negative_infinity() : positive_infinity(); }
bool is_positive_infinity(expr_ref x) { return is_intrinsic(x, intrinsic::positive_infinity); }
bool is_negative_infinity(expr_ref x) { return is_intrinsic(x, intrinsic::negative_infinity); }
int is_infinity(expr_ref x) {
  if (is_positive_infinity(x)) return 1;
  if (is_negative_infinity(x)) return -1;
  return 0;
}
bool is_indeterminate(expr_ref x) { return is_intrinsic(x, intrinsic::indeterminate); }
bool is_finite(expr_ref x) { return x.as<constant>() || is_intrinsic(x, intrinsic::buffer_at); }

expr buffer_rank(var buf) { return variable::make(buf, buffer_field::rank); }
expr buffer_elem_size(var buf) { return variable::make(buf, buffer_field::elem_size); }
expr buffer_size_bytes(var buf) { return variable::make(buf, buffer_field::size_bytes); }
expr buffer_min(var buf, int dim) { return variable::make(buf, buffer_field::min, dim); }
expr buffer_max(var buf, int dim) { return variable::make(buf, buffer_field::max, dim); }
expr buffer_extent(var buf, int dim) { return buffer_max(buf, dim) - buffer_min(buf, dim) + 1; }
expr buffer_stride(var buf, int dim) { return variable::make(buf, buffer_field::stride, dim); }
expr buffer_fold_factor(var buf, int dim) { return variable::make(buf, buffer_field::fold_factor, dim); }
expr validate_buffer(var buf) { return call::make(intrinsic::validate_buffer, {variable::make(buf)}); }
expr buffer_at(expr buf, span<const expr> at) {
  std::vector<expr> args;
  args.reserve(at.size() + 1);
  args.push_back(std::move(buf));
  args.insert(args.end(), at.begin(), at.end());
  return call::make(intrinsic::buffer_at, std::move(args));
}
expr buffer_at(expr buf, span<const var> at) {
  std::vector<expr> args;
  args.reserve(at.size() + 1);
  args.push_back(std::move(buf));
  for (var i : at) args.push_back(variable::make(i));
  return call::make(intrinsic::buffer_at, std::move(args));
}
expr buffer_at(expr buf) { return call::make(intrinsic::buffer_at, {std::move(buf)}); }

expr semaphore_init(expr sem, expr count) {
  return call::make(intrinsic::semaphore_init, {std::move(sem), std::move(count)});
}
namespace {
expr semaphore_op(intrinsic fn, span<const expr> sems, span<const expr> counts) {
  std::vector<expr> args;
  args.reserve(sems.size() * 2);
  for (std::size_t i = 0; i < sems.size(); ++i) {
    args.push_back(sems[i]);
    args.push_back(i < counts.size() ? counts[i] : expr());
  }
  return call::make(fn, std::move(args));
}
}  // namespace
expr semaphore_signal(expr sem, expr count) {
  return call::make(intrinsic::semaphore_signal, {std::move(sem), std::move(count)});
}
expr semaphore_signal(span<const expr> sems, span<const expr> counts) {
  return semaphore_op(intrinsic::semaphore_signal, sems, counts);
}
expr semaphore_wait(expr sem, expr count) {
  return call::make(intrinsic::semaphore_wait, {std::move(sem), std::move(count)});
}
expr semaphore_wait(span<const expr> sems, span<const expr> counts) {
  return semaphore_op(intrinsic::semaphore_wait, sems, counts);
}
expr wait_for(expr task) { return call::make(intrinsic::wait_for, {std::move(task)}); }
expr wait_for(std::vector<expr> tasks) { return call::make(intrinsic::wait_for, std::move(tasks)); }

const interval_expr& interval_expr::all() {
  static const interval_expr a(negative_infinity(), positive_infinity());
  return a;
}
const interval_expr& interval_expr::none() {
  static const interval_expr n(positive_infinity(), negative_infinity());
  return n;
}

expr interval_expr::extent() const {
  if (is_point()) return 1;
  return max - min + 1;
}
expr interval_expr::end() const { return max + 1; }
expr interval_expr::empty() const { return max < min; }

interval_expr& interval_expr::set_extent(expr extent) {
  max = min + extent - 1;
  return *this;
}

namespace {

// min/max that treat undefined as "no bound" and fold infinities, so unions and
// intersections with all() and none() stay small.
expr union_min(const expr& a, const expr& b) {
  if (!a.defined() || !b.defined()) return expr();
  if (is_negative_infinity(a) || is_positive_infinity(b)) return a;
  if (is_negative_infinity(b) || is_positive_infinity(a)) return b;
  if (a.same_as(b)) return a;
  return min(a, b);
}
expr union_max(const expr& a, const expr& b) {
  if (!a.defined() || !b.defined()) return expr();
  if (is_positive_infinity(a) || is_negative_infinity(b)) return a;
  if (is_positive_infinity(b) || is_negative_infinity(a)) return b;
  if (a.same_as(b)) return a;
  return max(a, b);
}
expr intersect_min(const expr& a, const expr& b) {
  if (!a.defined()) return b;
  if (!b.defined()) return a;
  return union_max(a, b);
}
expr intersect_max(const expr& a, const expr& b) {
  if (!a.defined()) return b;
  if (!b.defined()) return a;
  return union_min(a, b);
}

}  // namespace

interval_expr& interval_expr::operator|=(const interval_expr& r) {
  min = union_min(min, r.min);
  max = union_max(max, r.max);
  return *this;
}
interval_expr& interval_expr::operator&=(const interval_expr& r) {
  min = intersect_min(min, r.min);
  max = intersect_max(max, r.max);
  return *this;
}
namespace {

// Applies fn to each defined end of x, keeping a point a point.
template <typename Fn>
interval_expr& map_ends(interval_expr& x, Fn fn) {
  if (x.is_point()) {
    x.min = fn(x.min);
    x.max = x.min;
    return x;
  }
  if (x.min.defined()) x.min = fn(x.min);
  if (x.max.defined()) x.max = fn(x.max);
  return x;
}

// Scales x by s with op (* or /), an operation monotonic in its first operand for any fixed s
// (increasing for s >= 0, decreasing for s < 0).
interval_expr& scale(interval_expr& x, const expr& s, expr (*op)(expr, expr)) {
  const bool point = x.is_point();
  const bool non_negative = is_non_negative(s);
  const bool negative = !non_negative && is_negative(s);
  if (point) {
    x.min = op(x.min, s);
    x.max = x.min;
    return x;
  }
  expr a = x.min.defined() ? op(x.min, s) : expr();
  expr b = x.max.defined() ? op(x.max, s) : expr();
  if (non_negative) {
    x.min = std::move(a);
    x.max = std::move(b);
  } else if (negative) {
    x.min = std::move(b);
    x.max = std::move(a);
  } else {
    // The sign of s is unknown: the hull of both orders.
    x.min = union_min(a, b);
    x.max = union_max(a, b);
  }
  return x;
}

expr mul_op(expr a, expr b) { return std::move(a) * std::move(b); }
expr div_op(expr a, expr b) { return std::move(a) / std::move(b); }

}  // namespace

interval_expr& interval_expr::operator+=(const expr& r) {
  return map_ends(*this, [&](const expr& e) { return e + r; });
}
interval_expr& interval_expr::operator-=(const expr& r) {
  return map_ends(*this, [&](const expr& e) { return e - r; });
}
interval_expr& interval_expr::operator*=(const expr& r) { return scale(*this, r, mul_op); }
interval_expr& interval_expr::operator/=(const expr& r) { return scale(*this, r, div_op); }

expr interval_expr::contains(expr_ref x) const {
  expr e(x);
  if (min.defined() && max.defined()) return min <= e && e <= max;
  if (min.defined()) return min <= e;
  if (max.defined()) return e <= max;
  return 1;
}

interval_expr operator|(interval_expr a, const interval_expr& b) { return a |= b; }
interval_expr operator&(interval_expr a, const interval_expr& b) { return a &= b; }
interval_expr operator+(interval_expr a, const expr& b) { return a += b; }
interval_expr operator-(interval_expr a, const expr& b) { return a -= b; }
interval_expr operator+(const expr& a, interval_expr b) { return b += a; }
interval_expr operator-(const expr& a, const interval_expr& b) { return -b + a; }
interval_expr operator*(interval_expr a, const expr& b) { return a *= b; }
interval_expr operator*(const expr& a, interval_expr b) { return b *= a; }
interval_expr operator/(interval_expr a, const expr& b) { return a /= b; }
interval_expr operator-(const interval_expr& a) {
  if (a.is_point()) return point(-a.min);
  return interval_expr(a.max.defined() ? -a.max : expr(), a.min.defined() ? -a.min : expr());
}

interval_expr select(const expr& c, interval_expr t, interval_expr f) {
  if (t.is_point() && f.is_point()) return point(select(c, t.min, f.min));
  auto end = [&](const expr& a, const expr& b) { return a.defined() && b.defined() ? select(c, a, b) : expr(); };
  return interval_expr(end(t.min, f.min), end(t.max, f.max));
}

interval_expr align(interval_expr x, const expr& a) {
  if (x.min.defined()) x.min = align_down(x.min, a);
  if (x.max.defined()) x.max = align_up(x.max + 1, a) - 1;
  return x;
}

interval_expr min_extent(const expr& min, const expr& extent) { return interval_expr(min, min + extent - 1); }
interval_expr range(const expr& begin, const expr& end) { return interval_expr(begin, end - 1); }
interval_expr buffer_bounds(var buf, int dim) { return interval_expr(buffer_min(buf, dim), buffer_max(buf, dim)); }

dim_expr::dim_expr(const slinky::dim& d) : bounds(d.min(), d.max()), stride(d.stride()), fold_factor(d.fold_factor()) {}

const expr& dim_expr::get_field(buffer_field field) const {
  switch (field) {
  case buffer_field::min: return bounds.min;
  case buffer_field::max: return bounds.max;
  case buffer_field::stride: return stride;
  case buffer_field::fold_factor: return fold_factor;
  case buffer_field::none:
  case buffer_field::rank:
  case buffer_field::elem_size:
  case buffer_field::size_bytes: break;
  }
  static const expr undefined;
  return undefined;
}

expr dim_expr::is_broadcast() const { return bounds.min == 0 && bounds.max == 0 && stride == 0; }

dim_expr buffer_dim(var buf, int dim) {
  return dim_expr(buffer_bounds(buf, dim), buffer_stride(buf, dim), buffer_fold_factor(buf, dim));
}
std::vector<dim_expr> buffer_dims(var buf, int rank) {
  std::vector<dim_expr> result;
  result.reserve(rank);
  for (int d = 0; d < rank; ++d) result.push_back(buffer_dim(buf, d));
  return result;
}
std::vector<dim_expr> buffer_dims(const raw_buffer& buf) {
  std::vector<dim_expr> result;
  result.reserve(buf.rank);
  for (std::size_t d = 0; d < buf.rank; ++d) result.emplace_back(buf.dim(d));
  return result;
}
box_expr dims_bounds(span<const dim_expr> dims) {
  box_expr result;
  result.reserve(dims.size());
  for (const dim_expr& d : dims) result.push_back(d.bounds);
  return result;
}

box_expr operator|(box_expr a, const box_expr& b) {
  if (a.size() < b.size()) a.resize(b.size(), interval_expr::all());
  for (std::size_t i = 0; i < b.size(); ++i) a[i] |= b[i];
  return a;
}
box_expr operator&(box_expr a, const box_expr& b) {
  if (a.size() < b.size()) a.resize(b.size(), interval_expr::all());
  for (std::size_t i = 0; i < b.size(); ++i) a[i] &= b[i];
  return a;
}

namespace {

template <typename T>
int compare_values(const T& a, const T& b) {
  return a < b ? -1 : (b < a ? 1 : 0);
}

int compare_exprs(const std::vector<expr>& a, const std::vector<expr>& b) {
  if (int c = compare_values(a.size(), b.size())) return c;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (int c = compare(a[i], b[i])) return c;
  }
  return 0;
}

template <typename T>
int compare_binary(const base_expr_node* a, const base_expr_node* b) {
  const T* x = static_cast<const T*>(a);
  const T* y = static_cast<const T*>(b);
  if (int c = compare(x->a, y->a)) return c;
  return compare(x->b, y->b);
}

}  // namespace

int compare(const expr& ea, const expr& eb) {
  const base_expr_node* a = ea.get();
  const base_expr_node* b = eb.get();
  if (a == b) return 0;
  if (!a) return -1;
  if (!b) return 1;
  if (int c = compare_values(static_cast<int>(a->type), static_cast<int>(b->type))) return c;
  switch (a->type) {
  case expr_node_type::none: return 0;
  case expr_node_type::variable: {
    const variable* x = a->as<variable>();
    const variable* y = b->as<variable>();
    if (int c = compare_values(x->sym.id, y->sym.id)) return c;
    if (int c = compare_values(static_cast<unsigned>(x->field), static_cast<unsigned>(y->field))) return c;
    return compare_values(x->dim, y->dim);
  }
  case expr_node_type::constant: return compare_values(a->as<constant>()->value, b->as<constant>()->value);
  case expr_node_type::let: {
    const let* x = a->as<let>();
    const let* y = b->as<let>();
    if (int c = compare_values(x->lets.size(), y->lets.size())) return c;
    for (std::size_t i = 0; i < x->lets.size(); ++i) {
      if (int c = compare_values(x->lets[i].first.sym(), y->lets[i].first.sym())) return c;
      if (int c = compare(x->lets[i].second, y->lets[i].second)) return c;
    }
    return compare(x->body, y->body);
  }
#define SLINKY_X(name)                                                                                                 \
  case expr_node_type::name: return compare_binary<class name>(a, b);
    SLINKY_FOR_EACH_BINARY_NODE(SLINKY_X)
#undef SLINKY_X
  case expr_node_type::logical_not: return compare(a->as<logical_not>()->a, b->as<logical_not>()->a);
  case expr_node_type::select: {
    const conditional* x = a->as<conditional>();
    const conditional* y = b->as<conditional>();
    if (int c = compare(x->condition, y->condition)) return c;
    if (int c = compare(x->true_value, y->true_value)) return c;
    return compare(x->false_value, y->false_value);
  }
  case expr_node_type::call: {
    const call* x = a->as<call>();
    const call* y = b->as<call>();
    if (int c = compare_values(static_cast<int>(x->intrinsic), static_cast<int>(y->intrinsic))) return c;
    // User functions are equal only if they are the same node (std::function has no ==).
    if (x->target || y->target) return compare_values(a, b);
    return compare_exprs(x->args, y->args);
  }
  }
  return 0;
}

bool match(const expr& a, const expr& b) { return compare(a, b) == 0; }

// Default traversals: visit every child.
void expr_visitor::visit(const variable*) {}
void expr_visitor::visit(const constant*) {}
void expr_visitor::visit(const let* op) {
  for (const auto& l : op->lets) l.second.accept(this);
  op->body.accept(this);
}
#define SLINKY_X(name)                                                                                                 \
  void expr_visitor::visit(const class name* op) {                                                                     \
    op->a.accept(this);                                                                                                \
    op->b.accept(this);                                                                                                \
  }
SLINKY_FOR_EACH_BINARY_NODE(SLINKY_X)
#undef SLINKY_X
void expr_visitor::visit(const logical_not* op) { op->a.accept(this); }
void expr_visitor::visit(const conditional* op) {
  op->condition.accept(this);
  op->true_value.accept(this);
  op->false_value.accept(this);
}
void expr_visitor::visit(const call* op) {
  for (const expr& i : op->args) {
    if (i.defined()) i.accept(this);
  }
}

}  // namespace slinky
