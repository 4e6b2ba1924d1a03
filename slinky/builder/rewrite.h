// The rewrite-rule language of the simplifier: patterns that match expressions, replacements
// that build new ones, and predicates that decide whether a rule applies. Rule lists
// (simplify_rules_*.h) are written in it once and used by the simplifier and the rule tester.
#ifndef SLINKY_BUILDER_REWRITE_H
#define SLINKY_BUILDER_REWRITE_H

#include <limits>
#include <optional>
#include <type_traits>
#include <utility>

#include "slinky/base/arithmetic.h"
#include "slinky/runtime/expr.h"

namespace slinky {
namespace rewrite_rules {

// A rule is `r.rewrite(pattern, replacement[, predicate])`, where:
// - a pattern is an expression over the wildcards x, y, z, w (any expression; a wildcard that
//   appears twice must match structurally equal expressions), c0, c1, c2 (any constant),
//   integer literals, oo and -oo (the infinities), and the operators + - * / % (Euclidean),
//   == != < <= > >= && || ! and min, max, select, abs. Commutative operators match either
//   operand order.
// - a replacement is an expression over the same wildcards. eval(e) is the constant computed
//   from constant wildcards by e; if that overflows, the rule does not apply.
// - a predicate is a constant expression (the rule applies if it is non-zero and does not
//   overflow) that may also use facts about expressions: is_non_negative(e), is_positive(e),
//   is_non_positive(e), is_negative(e), is_true(e) (provably non-zero), is_false(e) (provably
//   zero), is_boolean(e) (always 0 or 1), is_finite(e) (contains no infinity) and
//   is_constant(e) (is a constant node, e.g. one whose folding overflowed). Facts about
//   a replacement-like expression e (e.g. is_non_positive(x - y)) are decided by building e
//   with the applicator's maker and asking its facts (bounds), so they hold within the bounds
//   known where the rule is applied.

// The bindings of the wildcards of a pattern during a match.
struct match_state {
  const base_expr_node* vars[4] = {};
  index_t constants[3] = {};
  unsigned bound = 0;  // bit i: vars[i] is bound; bit 4 + i: constants[i] is bound.
};

template <int N>
struct wildcard {
  static_assert(0 <= N && N < 4, "there are 4 expression wildcards");
};
template <int N>
struct constant_wildcard {
  static_assert(0 <= N && N < 3, "there are 3 constant wildcards");
};
struct literal {
  index_t value;
};
template <bool Positive>
struct infinity_pattern {};
template <typename T, typename A, typename B>
struct binary_pattern {
  A a;
  B b;
};
template <typename A>
struct not_pattern {
  A a;
};
template <typename C, typename T, typename F>
struct select_pattern {
  C c;
  T t;
  F f;
};
template <typename A>
struct abs_pattern {
  A a;
};
// Replacements only: the constant value of a.
template <typename A>
struct eval_pattern {
  A a;
};
// Predicates only: a fact about the expression a builds.
enum class fact { non_negative, positive, non_positive, negative, nonzero, zero, boolean, finite, constant };
template <fact F, typename A>
struct fact_pattern {
  A a;
};
// The predicate of rules without one.
struct always {};

template <typename T>
struct is_pattern : std::false_type {};
template <int N>
struct is_pattern<wildcard<N>> : std::true_type {};
template <int N>
struct is_pattern<constant_wildcard<N>> : std::true_type {};
template <>
struct is_pattern<literal> : std::true_type {};
template <bool P>
struct is_pattern<infinity_pattern<P>> : std::true_type {};
template <typename T, typename A, typename B>
struct is_pattern<binary_pattern<T, A, B>> : std::true_type {};
template <typename A>
struct is_pattern<not_pattern<A>> : std::true_type {};
template <typename C, typename T, typename F>
struct is_pattern<select_pattern<C, T, F>> : std::true_type {};
template <typename A>
struct is_pattern<abs_pattern<A>> : std::true_type {};
template <typename A>
struct is_pattern<eval_pattern<A>> : std::true_type {};
template <fact F, typename A>
struct is_pattern<fact_pattern<F, A>> : std::true_type {};

template <typename T>
using pattern_of = std::conditional_t<std::is_integral_v<T>, literal, T>;
template <typename T>
constexpr pattern_of<T> as_pattern(const T& x) {
  if constexpr (std::is_integral_v<T>) {
    return literal{static_cast<index_t>(x)};
  } else {
    return x;
  }
}
template <typename T>
constexpr bool is_operand_v = is_pattern<T>::value || std::is_integral_v<T>;
template <typename A, typename B>
constexpr bool are_operands_v = (is_pattern<A>::value || is_pattern<B>::value) && is_operand_v<A>&& is_operand_v<B>;

#define SLINKY_REWRITE_BINARY(fn, node)                                                                                \
  template <typename A, typename B, typename = std::enable_if_t<are_operands_v<A, B>>>                                 \
  constexpr auto fn(const A& a, const B& b) {                                                                          \
    return binary_pattern<node, pattern_of<A>, pattern_of<B>>{as_pattern(a), as_pattern(b)};                           \
  }
SLINKY_REWRITE_BINARY(operator+, add)
SLINKY_REWRITE_BINARY(operator-, sub)
SLINKY_REWRITE_BINARY(operator*, mul)
SLINKY_REWRITE_BINARY(operator/, div)
SLINKY_REWRITE_BINARY(operator%, mod)
SLINKY_REWRITE_BINARY(min, minimum)
SLINKY_REWRITE_BINARY(max, maximum)
SLINKY_REWRITE_BINARY(operator==, equal)
SLINKY_REWRITE_BINARY(operator!=, not_equal)
SLINKY_REWRITE_BINARY(operator<, less)
SLINKY_REWRITE_BINARY(operator<=, less_equal)
SLINKY_REWRITE_BINARY(operator&&, logical_and)
SLINKY_REWRITE_BINARY(operator||, logical_or)
#undef SLINKY_REWRITE_BINARY

// As in the IR, a > b is b < a and a >= b is b <= a.
template <typename A, typename B, typename = std::enable_if_t<are_operands_v<A, B>>>
constexpr auto operator>(const A& a, const B& b) {
  return binary_pattern<less, pattern_of<B>, pattern_of<A>>{as_pattern(b), as_pattern(a)};
}
template <typename A, typename B, typename = std::enable_if_t<are_operands_v<A, B>>>
constexpr auto operator>=(const A& a, const B& b) {
  return binary_pattern<less_equal, pattern_of<B>, pattern_of<A>>{as_pattern(b), as_pattern(a)};
}
template <typename A, typename = std::enable_if_t<is_pattern<A>::value>>
constexpr auto operator!(const A& a) {
  return not_pattern<A>{a};
}
// -e is 0 - e, except that -oo is the negative infinity.
template <typename A, typename = std::enable_if_t<is_pattern<A>::value>>
constexpr auto operator-(const A& a) {
  return binary_pattern<sub, literal, A>{literal{0}, a};
}
constexpr infinity_pattern<false> operator-(infinity_pattern<true>) { return {}; }
template <typename C, typename T, typename F,
          typename = std::enable_if_t<is_operand_v<C> && is_operand_v<T> && is_operand_v<F>>>
constexpr auto select(const C& c, const T& t, const F& f) {
  return select_pattern<pattern_of<C>, pattern_of<T>, pattern_of<F>>{as_pattern(c), as_pattern(t), as_pattern(f)};
}
template <typename A, typename = std::enable_if_t<is_pattern<A>::value>>
constexpr auto abs(const A& a) {
  return abs_pattern<A>{a};
}
template <typename A>
constexpr auto eval(const A& a) {
  return eval_pattern<pattern_of<A>>{as_pattern(a)};
}

#define SLINKY_REWRITE_FACT(fn, f)                                                                                     \
  template <typename A>                                                                                                \
  constexpr auto fn(const A& a) {                                                                                      \
    return fact_pattern<fact::f, A>{a};                                                                                \
  }
SLINKY_REWRITE_FACT(is_non_negative, non_negative)
SLINKY_REWRITE_FACT(is_positive, positive)
SLINKY_REWRITE_FACT(is_non_positive, non_positive)
SLINKY_REWRITE_FACT(is_negative, negative)
SLINKY_REWRITE_FACT(is_true, nonzero)
SLINKY_REWRITE_FACT(is_false, zero)
SLINKY_REWRITE_FACT(is_boolean, boolean)
SLINKY_REWRITE_FACT(is_finite, finite)
SLINKY_REWRITE_FACT(is_constant, constant)
#undef SLINKY_REWRITE_FACT

// The names rules are written with.
namespace wildcards {
constexpr wildcard<0> x;
constexpr wildcard<1> y;
constexpr wildcard<2> z;
constexpr wildcard<3> w;
constexpr constant_wildcard<0> c0;
constexpr constant_wildcard<1> c1;
constexpr constant_wildcard<2> c2;
constexpr infinity_pattern<true> oo;
}  // namespace wildcards

template <typename T>
constexpr bool is_commutative() {
  return T::commutative;
}

// Matching: calls k() for each way p matches e (binding wildcards in m) until k returns true.
// Bindings made by a failed attempt are undone.
inline bool same_expr(const base_expr_node* a, const base_expr_node* b) {
  return a == b || compare(expr(a), expr(b)) == 0;
}

template <int N, typename K>
bool match(wildcard<N>, const base_expr_node* e, match_state& m, const K& k) {
  constexpr unsigned bit = 1u << N;
  if (m.bound & bit) return same_expr(m.vars[N], e) && k();
  m.vars[N] = e;
  m.bound |= bit;
  if (k()) return true;
  m.bound &= ~bit;
  return false;
}
template <int N, typename K>
bool match(constant_wildcard<N>, const base_expr_node* e, match_state& m, const K& k) {
  constexpr unsigned bit = 1u << (4 + N);
  const constant* c = e->as<constant>();
  if (!c) return false;
  if (m.bound & bit) return m.constants[N] == c->value && k();
  m.constants[N] = c->value;
  m.bound |= bit;
  if (k()) return true;
  m.bound &= ~bit;
  return false;
}
template <typename K>
bool match(const literal& p, const base_expr_node* e, match_state&, const K& k) {
  const constant* c = e->as<constant>();
  return c && c->value == p.value && k();
}
template <bool Positive, typename K>
bool match(infinity_pattern<Positive>, const base_expr_node* e, match_state&, const K& k) {
  const call* c = e->as<call>();
  return c && c->intrinsic == (Positive ? intrinsic::positive_infinity : intrinsic::negative_infinity) && k();
}
template <typename T, typename A, typename B, typename K>
bool match(const binary_pattern<T, A, B>& p, const base_expr_node* e, match_state& m, const K& k) {
  if (e->type != T::static_type) return false;
  const T* op = static_cast<const T*>(e);
  const base_expr_node* a = op->a.get();
  const base_expr_node* b = op->b.get();
  if (match(p.a, a, m, [&]() { return match(p.b, b, m, k); })) return true;
  if constexpr (is_commutative<T>()) {
    return match(p.a, b, m, [&]() { return match(p.b, a, m, k); });
  }
  return false;
}
template <typename A, typename K>
bool match(const not_pattern<A>& p, const base_expr_node* e, match_state& m, const K& k) {
  const logical_not* op = e->as<logical_not>();
  return op && match(p.a, op->a.get(), m, k);
}
template <typename C, typename T, typename F, typename K>
bool match(const select_pattern<C, T, F>& p, const base_expr_node* e, match_state& m, const K& k) {
  const conditional* op = e->as<conditional>();
  if (!op) return false;
  return match(p.c, op->condition.get(), m, [&]() {
    return match(p.t, op->true_value.get(), m, [&]() { return match(p.f, op->false_value.get(), m, k); });
  });
}
template <typename A, typename K>
bool match(const abs_pattern<A>& p, const base_expr_node* e, match_state& m, const K& k) {
  const call* op = e->as<call>();
  return op && op->intrinsic == intrinsic::abs && op->args.size() == 1 && match(p.a, op->args[0].get(), m, k);
}

// Constant evaluation (for eval() and predicates): empty if a value is not a known constant or
// if the computation overflows. Facts F provide `bool prove(fact, const expr&)` and
// `bool prove_difference(fact, const expr& a, const expr& b)` (the fact about a - b), and are a
// maker (see build below) for the expressions the facts are about.
using optional_index = std::optional<index_t>;

template <typename T>
optional_index fold(index_t a, index_t b) {
  constexpr index_t min_value = std::numeric_limits<index_t>::min();
  index_t r;
  if constexpr (std::is_same_v<T, add>) {
    return add_overflows(a, b, &r) ? optional_index() : r;
  } else if constexpr (std::is_same_v<T, sub>) {
    return sub_overflows(a, b, &r) ? optional_index() : r;
  } else if constexpr (std::is_same_v<T, mul>) {
    return mul_overflows(a, b, &r) ? optional_index() : r;
  } else if constexpr (std::is_same_v<T, div>) {
    return a == min_value && b == -1 ? optional_index() : euclidean_div(a, b);
  } else if constexpr (std::is_same_v<T, mod>) {
    return euclidean_mod(a, b);
  } else if constexpr (std::is_same_v<T, minimum>) {
    return a < b ? a : b;
  } else if constexpr (std::is_same_v<T, maximum>) {
    return a < b ? b : a;
  } else if constexpr (std::is_same_v<T, equal>) {
    return a == b;
  } else if constexpr (std::is_same_v<T, not_equal>) {
    return a != b;
  } else if constexpr (std::is_same_v<T, less>) {
    return a < b;
  } else if constexpr (std::is_same_v<T, less_equal>) {
    return a <= b;
  } else if constexpr (std::is_same_v<T, logical_and>) {
    return a != 0 && b != 0;
  } else {
    static_assert(std::is_same_v<T, logical_or>, "not a binary operator");
    return a != 0 || b != 0;
  }
}

template <int N, typename F>
optional_index evaluate(wildcard<N>, const match_state& m, F&) {
  const constant* c = m.vars[N]->as<constant>();
  return c ? optional_index(c->value) : optional_index();
}
template <int N, typename F>
optional_index evaluate(constant_wildcard<N>, const match_state& m, F&) {
  return m.constants[N];
}
template <typename F>
optional_index evaluate(const literal& p, const match_state&, F&) {
  return p.value;
}
template <typename T, typename A, typename B, typename F>
optional_index evaluate(const binary_pattern<T, A, B>& p, const match_state& m, F& facts) {
  optional_index a = evaluate(p.a, m, facts);
  if (!a) return a;
  // Logical operators short-circuit, so cheap predicates can guard expensive ones.
  if constexpr (std::is_same_v<T, logical_and>) {
    if (*a == 0) return 0;
  } else if constexpr (std::is_same_v<T, logical_or>) {
    if (*a != 0) return 1;
  }
  optional_index b = evaluate(p.b, m, facts);
  if (!b) return b;
  return fold<T>(*a, *b);
}
template <typename A, typename F>
optional_index evaluate(const not_pattern<A>& p, const match_state& m, F& facts) {
  optional_index a = evaluate(p.a, m, facts);
  return a ? optional_index(*a == 0) : a;
}
template <typename C, typename T, typename E, typename F>
optional_index evaluate(const select_pattern<C, T, E>& p, const match_state& m, F& facts) {
  optional_index c = evaluate(p.c, m, facts);
  if (!c) return c;
  return *c != 0 ? evaluate(p.t, m, facts) : evaluate(p.f, m, facts);
}
template <typename A, typename F>
optional_index evaluate(const abs_pattern<A>& p, const match_state& m, F& facts) {
  optional_index a = evaluate(p.a, m, facts);
  if (!a || *a == std::numeric_limits<index_t>::min()) return optional_index();
  return *a < 0 ? -*a : *a;
}
template <fact Fact, typename A, typename F>
optional_index evaluate(const fact_pattern<Fact, A>& p, const match_state& m, F& facts) {
  expr e = build(p.a, m, facts);
  if (!e.defined()) return optional_index();
  return facts.prove(Fact, e) ? 1 : 0;
}
// Facts about differences (comparisons of a and b) go to prove_difference(fact, a, b), which may
// reuse the work of a previous question about a - b or b - a.
template <fact Fact, typename A, typename B, typename F>
optional_index evaluate(const fact_pattern<Fact, binary_pattern<sub, A, B>>& p, const match_state& m, F& facts) {
  expr a = build(p.a.a, m, facts);
  if (!a.defined()) return optional_index();
  expr b = build(p.a.b, m, facts);
  if (!b.defined()) return optional_index();
  return facts.prove_difference(Fact, a, b) ? 1 : 0;
}

template <typename P, typename F>
bool holds(const P& predicate, const match_state& m, F& facts) {
  if constexpr (std::is_same_v<P, always>) {
    return true;
  } else {
    optional_index r = evaluate(predicate, m, facts);
    return r && *r != 0;
  }
}

// Building replacements: the maker M makes each new node, by
// `template <typename T> expr make(expr a, expr b)` for binary nodes, make_not, make_select and
// make_abs. An undefined result means an eval() overflowed.
template <int N, typename M>
expr build(wildcard<N>, const match_state& m, M&) {
  return expr(m.vars[N]);
}
template <int N, typename M>
expr build(constant_wildcard<N>, const match_state& m, M&) {
  return constant::make(m.constants[N]);
}
template <typename M>
expr build(const literal& p, const match_state&, M&) {
  return constant::make(p.value);
}
template <bool Positive, typename M>
expr build(infinity_pattern<Positive>, const match_state&, M&) {
  return Positive ? positive_infinity() : negative_infinity();
}
template <typename T, typename A, typename B, typename M>
expr build(const binary_pattern<T, A, B>& p, const match_state& m, M& maker) {
  expr a = build(p.a, m, maker);
  if (!a.defined()) return a;
  expr b = build(p.b, m, maker);
  if (!b.defined()) return b;
  return maker.template make<T>(std::move(a), std::move(b));
}
template <typename A, typename M>
expr build(const not_pattern<A>& p, const match_state& m, M& maker) {
  expr a = build(p.a, m, maker);
  return a.defined() ? maker.make_not(std::move(a)) : a;
}
template <typename C, typename T, typename F, typename M>
expr build(const select_pattern<C, T, F>& p, const match_state& m, M& maker) {
  expr c = build(p.c, m, maker);
  if (!c.defined()) return c;
  expr t = build(p.t, m, maker);
  if (!t.defined()) return t;
  expr f = build(p.f, m, maker);
  if (!f.defined()) return f;
  return maker.make_select(std::move(c), std::move(t), std::move(f));
}
template <typename A, typename M>
expr build(const abs_pattern<A>& p, const match_state& m, M& maker) {
  expr a = build(p.a, m, maker);
  return a.defined() ? maker.make_abs(std::move(a)) : a;
}
template <typename A, typename M>
expr build(const eval_pattern<A>& p, const match_state& m, M& maker) {
  optional_index v = evaluate(p.a, m, maker);
  return v ? constant::make(*v) : expr();
}

// A maker that builds nodes as written, without simplifying them.
struct plain_maker {
  template <typename T>
  expr make(expr a, expr b) {
    return T::make(std::move(a), std::move(b));
  }
  expr make_not(expr a) { return logical_not::make(std::move(a)); }
  expr make_select(expr c, expr t, expr f) { return conditional::make(std::move(c), std::move(t), std::move(f)); }
  expr make_abs(expr a) { return call::make(intrinsic::abs, {std::move(a)}); }
};

// Told about each rule the simplifier applies; for tests. `index` counts the rewrite() calls of
// the family in order, from 0.
class rule_observer {
public:
  virtual ~rule_observer() = default;
  virtual void fired(const char* family, int index) = 0;
};
// The observer of the simplifier on the calling thread (null by default).
rule_observer*& thread_rule_observer();

// The applicator the simplifier hands to rule lists: the first rule that matches e, whose
// predicate holds and whose replacement can be built gives `result`. The simplifier S is the
// maker (it simplifies each new node, so a result is already simplified) and the facts.
template <typename S>
class rewriter {
  const base_expr_node* e_;
  S& s_;
  const char* family_;
  int index_ = 0;

public:
  expr result;

  rewriter(const expr& e, S& s, const char* family) : e_(e.get()), s_(s), family_(family) {}

  template <typename P, typename R, typename Pr = always>
  bool rewrite(const P& pattern, const R& replacement, const Pr& predicate = Pr()) {
    const int index = index_++;
    match_state m;
    const bool applied = match(pattern, e_, m, [&]() {
      if (!holds(predicate, m, s_)) return false;
      result = build(as_pattern(replacement), m, s_);
      return result.defined();
    });
    if (applied) {
      if (rule_observer* o = thread_rule_observer()) o->fired(family_, index);
    }
    return applied;
  }
};

}  // namespace rewrite_rules
}  // namespace slinky

#endif  // SLINKY_BUILDER_REWRITE_H
