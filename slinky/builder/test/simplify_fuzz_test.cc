// Fuzzing of the whole simplifier on random expressions: values are preserved, bounds_of bounds,
// prove_true is never wrong, simplifying twice changes nothing. Time-boxed (SLINKY_FUZZ_SECONDS,
// default 20) and seeded (SLINKY_FUZZ_SEED); a failure prints its seed and a shrunk expression.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <functional>
#include <iostream>
#include <limits>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "slinky/base/arithmetic.h"
#include "slinky/builder/simplify.h"
#include "slinky/runtime/evaluate.h"
#include "slinky/runtime/node_mutator.h"
#include "slinky/runtime/print.h"

namespace slinky {
namespace {

std::uint64_t env_or(const char* name, std::uint64_t default_value) {
  const char* s = std::getenv(name);
  return s ? std::strtoull(s, nullptr, 10) : default_value;
}

constexpr int var_count = 4;
constexpr index_t max_constant = 16;
constexpr index_t max_value = 100;

// Evaluates an expression with unbounded-integer semantics: empty if an operation overflows
// index_t (such cases are skipped: the rules assume integers do not overflow). Infinities are
// the extreme values, so arithmetic on them overflows.
class checked_evaluator {
  std::vector<std::optional<index_t>> values_;

  std::optional<index_t> eval_let(const let* op) {
    std::vector<std::pair<var, std::optional<index_t>>> saved;
    std::optional<index_t> result;
    bool ok = true;
    for (const auto& l : op->lets) {
      std::optional<index_t> v = eval(l.second);
      ok = ok && v;
      if (l.first.sym() >= values_.size()) values_.resize(l.first.sym() + 1);
      saved.emplace_back(l.first, values_[l.first.sym()]);
      values_[l.first.sym()] = v ? *v : 0;
    }
    if (ok) result = eval(op->body);
    for (auto i = saved.rbegin(); i != saved.rend(); ++i) values_[i->first.sym()] = i->second;
    return result;
  }

  std::optional<index_t> eval_call(const call* op) {
    if (op->intrinsic == intrinsic::positive_infinity) return std::numeric_limits<index_t>::max();
    if (op->intrinsic == intrinsic::negative_infinity) return std::numeric_limits<index_t>::min();
    if (op->intrinsic != intrinsic::abs) return std::nullopt;
    std::optional<index_t> a = eval(op->args[0]);
    if (!a || *a == std::numeric_limits<index_t>::min()) return std::nullopt;
    return *a < 0 ? -*a : *a;
  }

public:
  void set(var v, index_t value) {
    if (v.sym() >= values_.size()) values_.resize(v.sym() + 1);
    values_[v.sym()] = value;
  }

  std::optional<index_t> eval(const expr& e) {
    using opt = std::optional<index_t>;
    index_t r;
    auto binary = [&](const auto* op, auto fn) -> opt {
      opt a = eval(op->a);
      if (!a) return a;
      opt b = eval(op->b);
      if (!b) return b;
      return fn(*a, *b);
    };
    switch (e.type()) {
    case expr_node_type::none: return opt();
    case expr_node_type::variable: {
      const symbol_id id = e.as<variable>()->sym.sym();
      return id < values_.size() && values_[id] ? *values_[id] : opt(0);
    }
    case expr_node_type::constant: return e.as<constant>()->value;
    case expr_node_type::let: return eval_let(e.as<let>());
    case expr_node_type::add:
      return binary(e.as<add>(), [&](index_t a, index_t b) { return add_overflows(a, b, &r) ? opt() : r; });
    case expr_node_type::sub:
      return binary(e.as<sub>(), [&](index_t a, index_t b) { return sub_overflows(a, b, &r) ? opt() : r; });
    case expr_node_type::mul:
      return binary(e.as<mul>(), [&](index_t a, index_t b) { return mul_overflows(a, b, &r) ? opt() : r; });
    case expr_node_type::div:
      return binary(e.as<div>(), [](index_t a, index_t b) {
        return a == std::numeric_limits<index_t>::min() && b == -1 ? opt() : euclidean_div(a, b);
      });
    case expr_node_type::mod: return binary(e.as<mod>(), [](index_t a, index_t b) { return euclidean_mod(a, b); });
    case expr_node_type::min: return binary(e.as<minimum>(), [](index_t a, index_t b) { return std::min(a, b); });
    case expr_node_type::max: return binary(e.as<maximum>(), [](index_t a, index_t b) { return std::max(a, b); });
    case expr_node_type::equal: return binary(e.as<equal>(), [](index_t a, index_t b) { return index_t(a == b); });
    case expr_node_type::not_equal:
      return binary(e.as<not_equal>(), [](index_t a, index_t b) { return index_t(a != b); });
    case expr_node_type::less: return binary(e.as<less>(), [](index_t a, index_t b) { return index_t(a < b); });
    case expr_node_type::less_equal:
      return binary(e.as<less_equal>(), [](index_t a, index_t b) { return index_t(a <= b); });
    case expr_node_type::logical_and: {
      opt a = eval(e.as<logical_and>()->a);
      if (!a || *a == 0) return a ? opt(0) : a;
      opt b = eval(e.as<logical_and>()->b);
      return b ? opt(*b != 0) : b;
    }
    case expr_node_type::logical_or: {
      opt a = eval(e.as<logical_or>()->a);
      if (!a || *a != 0) return a ? opt(1) : a;
      opt b = eval(e.as<logical_or>()->b);
      return b ? opt(*b != 0) : b;
    }
    case expr_node_type::logical_not: {
      opt a = eval(e.as<logical_not>()->a);
      return a ? opt(*a == 0) : a;
    }
    case expr_node_type::select: {
      const conditional* op = e.as<conditional>();
      opt c = eval(op->condition);
      if (!c) return c;
      return eval(*c != 0 ? op->true_value : op->false_value);
    }
    case expr_node_type::call: return eval_call(e.as<call>());
    }
    return opt();
  }
};

// Lists the subexpressions of an expression in preorder.
class subexpr_lister : public node_mutator {
public:
  std::vector<expr> list;
  expr mutate(const expr& e) override {
    if (e.defined()) list.push_back(e);
    return node_mutator::mutate(e);
  }
  using node_mutator::mutate;
};

// The operands of an expression.
class children_lister : public expr_visitor {
public:
  std::vector<expr> list;
  void visit(const variable*) override {}
  void visit(const constant*) override {}
  void visit(const let* op) override {
    for (const auto& l : op->lets) list.push_back(l.second);
    list.push_back(op->body);
  }
#define SLINKY_BINARY(node)                                                                                            \
  void visit(const class node* op) override {                                                                          \
    list.push_back(op->a);                                                                                             \
    list.push_back(op->b);                                                                                             \
  }
  SLINKY_FOR_EACH_BINARY_NODE(SLINKY_BINARY)
#undef SLINKY_BINARY
  void visit(const logical_not* op) override { list.push_back(op->a); }
  void visit(const conditional* op) override {
    list.push_back(op->condition);
    list.push_back(op->true_value);
    list.push_back(op->false_value);
  }
  void visit(const call* op) override { list.insert(list.end(), op->args.begin(), op->args.end()); }
};

std::vector<expr> children(const expr& e) {
  children_lister l;
  e.accept(&l);
  return l.list;
}

// Replaces the n-th subexpression (in preorder) of an expression.
class nth_replacer : public node_mutator {
  int n_;
  expr with_;

public:
  nth_replacer(int n, expr with) : n_(n), with_(std::move(with)) {}
  expr mutate(const expr& e) override {
    if (!e.defined()) return e;
    if (n_-- == 0) return with_;
    return node_mutator::mutate(e);
  }
  using node_mutator::mutate;
};

class fuzzer {
public:
  std::mt19937_64 rng;
  node_context ctx;
  std::vector<var> vars;
  std::vector<var> let_vars;
  bounds_map bounds;
  std::vector<index_t> values;

  explicit fuzzer(std::uint64_t seed) : rng(seed) {
    for (int i = 0; i < var_count; ++i) vars.emplace_back(ctx, std::string(1, static_cast<char>('a' + i)));
    // Appends rather than "t" + ..., which trips GCC 12's -Wrestrict.
    for (int i = 0; i < 2; ++i) let_vars.emplace_back(ctx, std::string("t").append(std::to_string(i)));
  }

  index_t random(index_t lo, index_t hi) { return std::uniform_int_distribution<index_t>(lo, hi)(rng); }

  // Constants, variables, and variables with offsets (which many rules are about).
  expr random_leaf(int lets) {
    if (random(0, 4) == 0) return random(-max_constant, max_constant);
    const expr v = lets > 0 && random(0, 2) == 0 ? let_vars[random(0, lets - 1)] : vars[random(0, var_count - 1)];
    return random(0, 2) == 0 ? add::make(v, random(-max_constant, max_constant)) : v;
  }

  expr random_expr(int depth, int lets = 0) {
    if (depth <= 0 || random(0, 5) == 0) return random_leaf(lets);
    auto sub = [&]() { return random_expr(depth - 1, lets); };
    switch (random(0, 19)) {
    case 0:
    case 1: return add::make(sub(), sub());
    case 2:
    case 3: return sub::make(sub(), sub());
    case 4: return mul::make(sub(), random(0, 3) ? expr(random(-max_constant, max_constant)) : sub());
    case 5: return div::make(sub(), random(0, 3) ? expr(random(-max_constant, max_constant)) : sub());
    case 6: return mod::make(sub(), random(0, 3) ? expr(random(-max_constant, max_constant)) : sub());
    case 7:
    case 8: return minimum::make(sub(), sub());
    case 9:
    case 10: return maximum::make(sub(), sub());
    case 11: return less::make(sub(), sub());
    case 12: return less_equal::make(sub(), sub());
    case 13: return random(0, 1) ? equal::make(sub(), sub()) : not_equal::make(sub(), sub());
    case 14: return random(0, 1) ? logical_and::make(sub(), sub()) : logical_or::make(sub(), sub());
    case 15: return logical_not::make(sub());
    case 16: return conditional::make(sub(), sub(), sub());
    case 17: return call::make(intrinsic::abs, {sub()});
    case 18:
      if (lets < static_cast<int>(let_vars.size())) {
        return let::make(let_vars[lets], sub(), random_expr(depth - 1, lets + 1));
      }
      return sub();
    default: return random_leaf(lets);
    }
  }

  void randomize_bounds() {
    bounds.clear();
    for (var v : vars) {
      if (random(0, 3) == 0) continue;
      index_t lo = random(-max_value, max_value);
      index_t hi = std::min(max_value, lo + random(0, random(0, 1) ? 4 : 2 * max_value));
      bounds[v] = interval_expr(lo, hi);
    }
  }

  // Values within the bounds (free variables anywhere in [-max_value, max_value]).
  void randomize_values() {
    values.resize(var_count);
    for (int i = 0; i < var_count; ++i) {
      const interval_expr* b = bounds.find(vars[i]);
      values[i] = b ? random(*as_constant(b->min), *as_constant(b->max)) : random(-max_value, max_value);
    }
  }

  checked_evaluator evaluator() const {
    checked_evaluator e;
    for (int i = 0; i < var_count; ++i) e.set(vars[i], values[i]);
    return e;
  }

  std::string print(const expr& e) { return to_string(e, &ctx); }
  std::string print(const interval_expr& i) { return to_string(i, &ctx); }
  std::string print_state() {
    std::string s = "values:";
    for (int i = 0; i < var_count; ++i)
      s.append(" ").append(ctx.name(vars[i].sym())).append("=").append(std::to_string(values[i]));
    s += "; bounds:";
    for (var v : vars) {
      if (const interval_expr* b = bounds.find(v))
        s.append(" ").append(ctx.name(v.sym())).append(" in ").append(print(*b));
    }
    return s;
  }

  // Replaces subexpressions by their children or by small constants while `fails` still holds.
  expr shrink(expr e, const std::function<bool(const expr&)>& fails) {
    for (int attempts = 0; attempts < 2000;) {
      subexpr_lister lister;
      lister.mutate(e);
      bool shrunk = false;
      for (std::size_t i = 0; i < lister.list.size() && !shrunk; ++i) {
        std::vector<expr> candidates = children(lister.list[i]);
        candidates.push_back(0);
        candidates.push_back(1);
        for (const expr& c : candidates) {
          if (++attempts > 2000) break;
          if (match(c, lister.list[i])) continue;
          nth_replacer r(i, c);
          expr smaller = r.mutate(e);
          if (fails(smaller)) {
            e = smaller;
            shrunk = true;
            break;
          }
        }
      }
      if (!shrunk) break;
    }
    return e;
  }
};

// The properties checked on one random expression; each returns an error message, or empty.
std::string check_values(fuzzer& f, const expr& e) {
  const expr s = simplify(e, f.bounds);
  for (int i = 0; i < 4; ++i) {
    f.randomize_values();
    checked_evaluator ev = f.evaluator();
    std::optional<index_t> before = ev.eval(e);
    std::optional<index_t> after = ev.eval(s);
    if (!before || !after) continue;
    if (*before == *after) continue;
    return "simplify changed the value: " + f.print(e) + " = " + std::to_string(*before) + ", simplified " +
           f.print(s) + " = " + std::to_string(*after) + " with " + f.print_state();
  }
  return "";
}

std::string check_bounds(fuzzer& f, const expr& e) {
  const interval_expr b = bounds_of(e, f.bounds);
  const bool proven = prove_true(e, f.bounds);
  for (int i = 0; i < 4; ++i) {
    f.randomize_values();
    checked_evaluator ev = f.evaluator();
    std::optional<index_t> v = ev.eval(e);
    std::optional<index_t> lo = ev.eval(b.min);
    std::optional<index_t> hi = ev.eval(b.max);
    if (!v) continue;
    if (proven && *v == 0) {
      return "prove_true(" + f.print(e) + ") but it is 0 with " + f.print_state();
    }
    if (!lo || !hi) continue;
    if (*lo <= *v && *v <= *hi) continue;
    return "bounds_of(" + f.print(e) + ") = " + f.print(b) + " but it is " + std::to_string(*v) + " (bounds " +
           std::to_string(*lo) + ", " + std::to_string(*hi) + ") with " + f.print_state();
  }
  return "";
}

std::string check_idempotent(fuzzer& f, const expr& e) {
  const expr s = simplify(e);
  const expr s2 = simplify(s);
  if (!match(s, s2)) return "not idempotent: " + f.print(e) + " -> " + f.print(s) + " -> " + f.print(s2);
  const expr sb = simplify(e, f.bounds);
  const expr sb2 = simplify(sb, f.bounds);
  if (!match(sb, sb2)) {
    return "not idempotent with bounds: " + f.print(e) + " -> " + f.print(sb) + " -> " + f.print(sb2) + " with " +
           f.print_state();
  }
  return "";
}

TEST(simplify_fuzz, random_expressions) {
  const std::uint64_t seed = env_or("SLINKY_FUZZ_SEED", 2024);
  const double seconds = static_cast<double>(env_or("SLINKY_FUZZ_SECONDS", 20));
  std::cout << "SLINKY_FUZZ_SEED=" << seed << " SLINKY_FUZZ_SECONDS=" << seconds << std::endl;
  fuzzer f(seed);
  using check_fn = std::string (*)(fuzzer&, const expr&);
  const check_fn checks[] = {check_values, check_bounds, check_idempotent};
  const auto start = std::chrono::steady_clock::now();
  std::size_t cases = 0;
  for (;; ++cases) {
    const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (elapsed > seconds) break;
    const expr e = f.random_expr(f.random(1, 5));
    f.randomize_bounds();
    for (check_fn check : checks) {
      const auto rng_state = f.rng;
      const std::string error = check(f, e);
      if (error.empty()) continue;
      // Shrink with the same bounds and the same random values.
      const expr shrunk = f.shrink(e, [&](const expr& candidate) {
        f.rng = rng_state;
        return !check(f, candidate).empty();
      });
      f.rng = rng_state;
      FAIL() << "SLINKY_FUZZ_SEED=" << seed << ", case " << cases << ": " << error << "\nshrunk: " << check(f, shrunk);
    }
  }
  const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::cout << cases << " cases in " << elapsed << " s (" << cases / elapsed << " cases/s)" << std::endl;
}

}  // namespace
}  // namespace slinky
