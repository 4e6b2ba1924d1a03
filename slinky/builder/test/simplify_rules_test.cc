// The rule tester: every rule of simplify_rules_*.h, instantiated with random values satisfying its
// predicate, must agree with its replacement and the simplifier by evaluation, and must fire in the
// simplifier. Seeded by SLINKY_RULES_SEED; SLINKY_RULES_TRIALS instantiations per rule.
#include <gtest/gtest.h>

#include <cstdlib>
#include <functional>
#include <limits>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "slinky/builder/rewrite.h"
#include "slinky/builder/simplify.h"
#include "slinky/builder/simplify_internal.h"
#include "slinky/builder/simplify_rules_add.h"
#include "slinky/builder/simplify_rules_compare.h"
#include "slinky/builder/simplify_rules_divmod.h"
#include "slinky/builder/simplify_rules_logical.h"
#include "slinky/builder/simplify_rules_minmax.h"
#include "slinky/builder/simplify_rules_mul.h"
#include "slinky/builder/simplify_rules_select.h"
#include "slinky/runtime/evaluate.h"
#include "slinky/runtime/node_mutator.h"
#include "slinky/runtime/print.h"

namespace slinky {
namespace {

using namespace rewrite_rules;

std::uint64_t env_or(const char* name, std::uint64_t default_value) {
  const char* s = std::getenv(name);
  return s ? std::strtoull(s, nullptr, 10) : default_value;
}

// Infinities are evaluated as this huge value, so that x + oo stays "infinite" when x is a small
// negative number; results beyond +/-infinity_threshold count as infinite.
constexpr index_t huge = index_t(1) << 40;
constexpr index_t infinity_threshold = index_t(1) << 30;

class infinity_replacer : public node_mutator {
public:
  using node_mutator::visit;
  void visit(const call* op) override {
    if (op->intrinsic == intrinsic::positive_infinity) return set_result(expr(huge));
    if (op->intrinsic == intrinsic::negative_infinity) return set_result(expr(-huge));
    node_mutator::visit(op);
  }
};

// A value, with the infinite ones collapsed. `saturated` is set if evaluate saturated the result:
// the expression overflowed, unless it involves infinities.
struct value {
  int infinite;  // -1, 0 (finite) or 1
  index_t finite;
  bool saturated;
  bool operator==(const value& o) const { return infinite == o.infinite && (infinite != 0 || finite == o.finite); }
};
std::ostream& operator<<(std::ostream& os, const value& v) {
  if (v.infinite) return os << (v.infinite > 0 ? "oo" : "-oo");
  return os << v.finite;
}

value eval(const expr& e, eval_context& ctx) {
  infinity_replacer r;
  const index_t v = evaluate(r.mutate(e), ctx);
  const bool saturated = v == std::numeric_limits<index_t>::max() || v == std::numeric_limits<index_t>::min();
  if (v >= infinity_threshold) return {1, 0, saturated};
  if (v <= -infinity_threshold) return {-1, 0, saturated};
  return {0, v, saturated};
}

// The facts of rule predicates, decided through the public API (independently of the
// simplifier's own prover, which the firing check exercises).
struct tester_facts {
  const bounds_map& bounds;
  template <typename T>
  expr make(expr a, expr b) {
    return simplify(T::make(std::move(a), std::move(b)), bounds);
  }
  expr make_not(expr a) { return simplify(logical_not::make(std::move(a)), bounds); }
  expr make_select(expr c, expr t, expr f) { return simplify(conditional::make(c, t, f), bounds); }
  expr make_abs(expr a) { return simplify(call::make(intrinsic::abs, {std::move(a)}), bounds); }
  bool prove_difference(fact f, const expr& a, const expr& b) { return prove(f, make<sub>(a, b)); }
  bool prove(fact f, const expr& e) {
    switch (f) {
    case fact::non_negative: return prove_true(e >= 0, bounds);
    case fact::positive: return prove_true(e > 0, bounds);
    case fact::non_positive: return prove_true(e <= 0, bounds);
    case fact::negative: return prove_true(e < 0, bounds);
    case fact::nonzero: return prove_true(e != 0, bounds);
    case fact::zero: return prove_true(e == 0, bounds);
    case fact::boolean: return internal::is_boolean_form(e) || prove_true(0 <= e && e <= 1, bounds);
    case fact::finite: return !internal::contains_infinity(e);
    case fact::constant: return as_constant(e).has_value();
    }
    return false;
  }
};

// Printing patterns, for messages.
template <typename T, typename A, typename B>
void describe(std::ostream& os, const binary_pattern<T, A, B>& p);
template <typename A>
void describe(std::ostream& os, const not_pattern<A>& p);
template <typename C, typename T, typename F>
void describe(std::ostream& os, const select_pattern<C, T, F>& p);
template <typename A>
void describe(std::ostream& os, const abs_pattern<A>& p);
template <typename A>
void describe(std::ostream& os, const eval_pattern<A>& p);
template <fact F, typename A>
void describe(std::ostream& os, const fact_pattern<F, A>& p);

const char* wildcard_names[] = {"x", "y", "z", "w"};
template <int N>
void describe(std::ostream& os, wildcard<N>) {
  os << wildcard_names[N];
}
template <int N>
void describe(std::ostream& os, constant_wildcard<N>) {
  os << "c" << N;
}
inline void describe(std::ostream& os, const literal& p) { os << p.value; }
template <bool P>
void describe(std::ostream& os, infinity_pattern<P>) {
  os << (P ? "oo" : "-oo");
}
template <typename T, typename A, typename B>
void describe(std::ostream& os, const binary_pattern<T, A, B>& p) {
  os << to_string(T::static_type) << "(";
  describe(os, p.a);
  os << ", ";
  describe(os, p.b);
  os << ")";
}
template <typename A>
void describe(std::ostream& os, const not_pattern<A>& p) {
  os << "!";
  describe(os, p.a);
}
template <typename C, typename T, typename F>
void describe(std::ostream& os, const select_pattern<C, T, F>& p) {
  os << "select(";
  describe(os, p.c);
  os << ", ";
  describe(os, p.t);
  os << ", ";
  describe(os, p.f);
  os << ")";
}
template <typename A>
void describe(std::ostream& os, const abs_pattern<A>& p) {
  os << "abs(";
  describe(os, p.a);
  os << ")";
}
template <typename A>
void describe(std::ostream& os, const eval_pattern<A>& p) {
  os << "eval(";
  describe(os, p.a);
  os << ")";
}
template <fact F, typename A>
void describe(std::ostream& os, const fact_pattern<F, A>& p) {
  static const char* names[] = {"is_non_negative", "is_positive", "is_non_positive", "is_negative", "is_true",
                                "is_false",        "is_boolean",  "is_finite",       "is_constant"};
  os << names[static_cast<int>(F)] << "(";
  describe(os, p.a);
  os << ")";
}
inline void describe(std::ostream&, const always&) {}

// The state of testing one family.
struct tester {
  std::mt19937_64 rng;
  node_context ctx;
  std::vector<var> vars;
  bounds_map bounds;
  eval_context values;

  explicit tester(std::uint64_t seed) : rng(seed) {
    for (const char* name : {"a", "b", "c", "d"}) vars.emplace_back(ctx, name);
  }

  index_t random(index_t lo, index_t hi) { return std::uniform_int_distribution<index_t>(lo, hi)(rng); }

  index_t random_constant() {
    switch (random(0, 5)) {
    case 0: return random(-1, 1);
    case 1: return random(-64, 64);
    default: return random(-8, 8);
    }
  }

  // Small expressions over the variables.
  expr random_expr(int depth) {
    const int kind = random(0, depth > 0 ? 13 : 4);
    if (kind <= 3) return vars[random(0, vars.size() - 1)];
    if (kind == 4) return random(-4, 4);
    expr a = random_expr(depth - 1);
    expr b = random_expr(depth - 1);
    switch (kind) {
    case 5: return add::make(a, b);
    case 6: return sub::make(a, b);
    case 7: return mul::make(a, random(-3, 3));
    case 8: return minimum::make(a, b);
    case 9: return maximum::make(a, b);
    case 10: return less::make(a, b);
    case 11: return equal::make(a, b);
    case 12: return div::make(a, random(-4, 4));
    default: return conditional::make(less::make(a, b), a, b);
    }
  }

  void randomize_bounds() {
    bounds.clear();
    for (var v : vars) {
      switch (random(0, 6)) {
      case 0:
      case 1: break;
      case 2: bounds[v] = interval_expr(0, 1); break;
      case 3: bounds[v] = point(random(-2, 2)); break;
      case 4: {
        index_t lo = random(1, 10);
        bounds[v] = random(0, 1) ? interval_expr(lo, lo + random(0, 10)) : interval_expr(-lo - random(0, 10), -lo);
        break;
      }
      default: {
        index_t lo = random(-20, 20);
        bounds[v] = interval_expr(lo, lo + random(0, 20));
      }
      }
    }
  }

  void randomize_values() {
    for (var v : vars) {
      const interval_expr* b = bounds.find(v);
      values[v] = b ? random(*as_constant(b->min), *as_constant(b->max)) : random(-30, 30);
    }
  }

  void randomize_match(match_state& m) {
    m.bound = ~0u;
    const bool distinct_vars = random(0, 2) != 0;
    for (int i = 0; i < 4; ++i) {
      expr e = distinct_vars ? expr(vars[i]) : random_expr(2);
      m.vars[i] = e.get();
      keep_alive.push_back(std::move(e));
    }
    for (int i = 0; i < 3; ++i) m.constants[i] = random_constant();
  }
  std::vector<expr> keep_alive;

  std::string print(const expr& e) { return to_string(e, &ctx); }
  std::string print_values() {
    std::stringstream ss;
    for (var v : vars) ss << ctx.name(v.sym()) << "=" << values[v] << " ";
    return ss.str();
  }
  std::string print_bounds() {
    std::stringstream ss;
    for (var v : vars) {
      if (const interval_expr* b = bounds.find(v)) ss << ctx.name(v.sym()) << " in " << to_string(*b, &ctx) << " ";
    }
    return ss.str();
  }
};

// Records which rules the simplifier applies.
class fired_observer : public rule_observer {
public:
  std::string family;
  std::vector<bool> hits;
  void fired_rule(int index) {
    if (index >= static_cast<int>(hits.size())) hits.resize(index + 1);
    hits[index] = true;
  }
  void fired(const char* f, int index) override {
    if (family == f) fired_rule(index);
  }
};

struct rule_test {
  std::string text;
  // Runs one instantiation: returns false if the predicate does not hold; adds failures to
  // `errors`.
  std::function<bool(tester&, std::string& errors)> trial;
};

template <typename P, typename R, typename Pr>
bool run_trial(tester& t, const P& pattern, const R& replacement, const Pr& predicate, std::string& errors) {
  t.randomize_bounds();
  match_state m;
  t.keep_alive.clear();
  t.randomize_match(m);
  tester_facts facts{t.bounds};
  if (!holds(predicate, m, facts)) return false;
  plain_maker plain;
  const expr p = build(pattern, m, plain);
  const expr r = build(replacement, m, plain);
  // An overflow in eval(): the rule would not apply.
  if (!r.defined()) return true;
  const expr s = simplify(p, t.bounds);
  const bool has_infinities = internal::contains_infinity(p) || internal::contains_infinity(r);
  for (int i = 0; i < 8; ++i) {
    t.randomize_values();
    const value pv = eval(p, t.values);
    const value rv = eval(r, t.values);
    const value sv = eval(s, t.values);
    if (pv == rv && pv == sv) continue;
    // Cases that overflow index_t are skipped: the rules assume integers do not overflow.
    if (!has_infinities && (pv.saturated || rv.saturated || sv.saturated)) continue;
    std::stringstream ss;
    ss << "  " << t.print(p) << " = " << pv << ", replacement " << t.print(r) << " = " << rv << ", simplified "
       << t.print(s) << " = " << sv << " with " << t.print_values() << " bounds " << t.print_bounds() << "\n";
    errors += ss.str();
    return true;
  }
  return true;
}

class rule_collector {
public:
  std::vector<rule_test> rules;

  template <typename P, typename R, typename Pr = always>
  bool rewrite(const P& pattern, const R& replacement, const Pr& predicate = Pr()) {
    const auto r = as_pattern(replacement);
    std::stringstream ss;
    describe(ss, pattern);
    ss << " -> ";
    describe(ss, r);
    if constexpr (!std::is_same_v<Pr, always>) {
      ss << " if ";
      describe(ss, predicate);
    }
    rules.push_back(
        {ss.str(), [=](tester& t, std::string& errors) { return run_trial(t, pattern, r, predicate, errors); }});
    return false;
  }
};

template <typename Rules>
void test_family(const char* family, Rules apply_rules) {
  const std::uint64_t seed = env_or("SLINKY_RULES_SEED", 12345);
  SCOPED_TRACE("SLINKY_RULES_SEED=" + std::to_string(seed));
  rule_collector collector;
  apply_rules(collector);
  ASSERT_FALSE(collector.rules.empty());

  fired_observer observer;
  observer.family = family;
  thread_rule_observer() = &observer;
  tester t(seed);
  // Instantiations per rule that satisfy its predicate (and at most 100 times more attempts).
  const int target_trials = static_cast<int>(env_or("SLINKY_RULES_TRIALS", 300));
  const int max_attempts = 100 * target_trials;
  for (std::size_t i = 0; i < collector.rules.size(); ++i) {
    const rule_test& rule = collector.rules[i];
    std::string errors;
    int trials = 0;
    for (int attempt = 0; attempt < max_attempts && trials < target_trials && errors.empty(); ++attempt) {
      if (rule.trial(t, errors)) ++trials;
    }
    EXPECT_TRUE(errors.empty()) << family << " rule " << i << ": " << rule.text << " is wrong:\n" << errors;
    EXPECT_GT(trials, 0) << family << " rule " << i << ": " << rule.text << ": predicate never held";
  }
  thread_rule_observer() = nullptr;
  observer.hits.resize(collector.rules.size());
  for (std::size_t i = 0; i < collector.rules.size(); ++i) {
    EXPECT_TRUE(observer.hits[i]) << family << " rule " << i << " never fired: " << collector.rules[i].text;
  }
}

#define SLINKY_RULE_FAMILY_TEST(name, family, fn)                                                                      \
  TEST(simplify_rules, name) {                                                                                         \
    test_family(family, [](rule_collector& r) { return fn(r); });                                                      \
  }

SLINKY_RULE_FAMILY_TEST(add, "add", apply_add_rules)
SLINKY_RULE_FAMILY_TEST(sub, "sub", apply_sub_rules)
SLINKY_RULE_FAMILY_TEST(mul, "mul", apply_mul_rules)
SLINKY_RULE_FAMILY_TEST(div, "div", apply_div_rules)
SLINKY_RULE_FAMILY_TEST(mod, "mod", apply_mod_rules)
SLINKY_RULE_FAMILY_TEST(min, "min", apply_min_rules)
SLINKY_RULE_FAMILY_TEST(max, "max", apply_max_rules)
SLINKY_RULE_FAMILY_TEST(less, "less", apply_less_rules)
SLINKY_RULE_FAMILY_TEST(less_equal, "less_equal", apply_less_equal_rules)
SLINKY_RULE_FAMILY_TEST(equal, "equal", apply_equal_rules)
SLINKY_RULE_FAMILY_TEST(not_equal, "not_equal", apply_not_equal_rules)
SLINKY_RULE_FAMILY_TEST(logical_and, "logical_and", apply_logical_and_rules)
SLINKY_RULE_FAMILY_TEST(logical_or, "logical_or", apply_logical_or_rules)
SLINKY_RULE_FAMILY_TEST(logical_not, "logical_not", apply_logical_not_rules)
SLINKY_RULE_FAMILY_TEST(select, "select", apply_select_rules)
SLINKY_RULE_FAMILY_TEST(abs, "abs", apply_abs_rules)

}  // namespace
}  // namespace slinky
