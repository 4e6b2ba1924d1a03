// Concrete interval evaluation of bounds expressions, for the scheduler's region analysis.
#include "slinky/scheduler/regions.h"

#include <algorithm>

#include "slinky/base/arithmetic.h"

namespace slinky {
namespace scheduler_internal {

index_range hull(const index_range& a, const index_range& b) {
  if (a.empty()) return b;
  if (b.empty()) return a;
  return {std::min(a.min, b.min), std::max(a.max, b.max)};
}

index_range intersect(const index_range& a, const index_range& b) {
  return {std::max(a.min, b.min), std::min(a.max, b.max)};
}

namespace {

// Values this far out are treated as unbounded: the regions of real buffers are far inside.
constexpr index_t too_large = index_t{1} << 60;

bool in_limits(const index_range& r) { return r.min > -too_large && r.max < too_large; }

bool add(const index_range& a, const index_range& b, index_range& r) {
  return !__builtin_add_overflow(a.min, b.min, &r.min) && !__builtin_add_overflow(a.max, b.max, &r.max);
}

bool sub(const index_range& a, const index_range& b, index_range& r) {
  return !__builtin_sub_overflow(a.min, b.max, &r.min) && !__builtin_sub_overflow(a.max, b.min, &r.max);
}

bool mul(const index_range& a, const index_range& b, index_range& r) {
  index_t p[4];
  if (__builtin_mul_overflow(a.min, b.min, &p[0]) || __builtin_mul_overflow(a.min, b.max, &p[1]) ||
      __builtin_mul_overflow(a.max, b.min, &p[2]) || __builtin_mul_overflow(a.max, b.max, &p[3])) {
    return false;
  }
  r.min = *std::min_element(p, p + 4);
  r.max = *std::max_element(p, p + 4);
  return true;
}

// Euclidean division by a constant c != 0 is monotonic: increasing for c > 0, decreasing for c < 0.
index_range div_by_constant(const index_range& a, index_t c) {
  const index_t lo = euclidean_div(a.min, c), hi = euclidean_div(a.max, c);
  return c > 0 ? index_range{lo, hi} : index_range{hi, lo};
}

index_range mod_by_constant(const index_range& a, index_t c) {
  const index_t m = c < 0 ? -c : c;
  // Within one period the remainder is monotonic; otherwise it takes every value.
  if (euclidean_div(a.min, m) == euclidean_div(a.max, m)) {
    return {euclidean_mod(a.min, m), euclidean_mod(a.max, m)};
  }
  return {0, m - 1};
}

bool eval_variable(const variable* v, const region_env& env, index_range& r) {
  if (v->field == buffer_field::none) {
    for (std::size_t i = 0; i < env.num_vars; ++i) {
      if (env.vars[i] == v->sym) {
        r = env.ranges[i];
        return !r.empty();
      }
    }
    if (env.scalars) {
      auto s = env.scalars->find(v->sym.sym());
      if (s != env.scalars->end()) {
        r = {s->second, s->second};
        return true;
      }
    }
    return false;
  }
  if (v->field != buffer_field::min && v->field != buffer_field::max) return false;
  if (!env.buffers) return false;
  auto b = env.buffers->find(v->sym.sym());
  if (b == env.buffers->end() || v->dim < 0 || static_cast<std::size_t>(v->dim) >= b->second->size()) return false;
  const index_range& d = (*b->second)[v->dim];
  const index_t value = v->field == buffer_field::min ? d.min : d.max;
  r = {value, value};
  return true;
}

}  // namespace

bool eval_range(expr_ref e, const region_env& env, index_range& r) {
  switch (e.type()) {
  case expr_node_type::constant: {
    const index_t c = e.as<constant>()->value;
    r = {c, c};
    return true;
  }
  case expr_node_type::variable: return eval_variable(e.as<variable>(), env, r);
  case expr_node_type::add:
  case expr_node_type::sub:
  case expr_node_type::mul:
  case expr_node_type::div:
  case expr_node_type::mod:
  case expr_node_type::min:
  case expr_node_type::max: {
    const binary_op* op = static_cast<const binary_op*>(e.get());
    index_range a, b;
    if (!eval_range(op->a, env, a) || !eval_range(op->b, env, b)) return false;
    bool ok = true;
    switch (e.type()) {
    case expr_node_type::add: ok = add(a, b, r); break;
    case expr_node_type::sub: ok = sub(a, b, r); break;
    case expr_node_type::mul: ok = mul(a, b, r); break;
    case expr_node_type::div:
      if (b.min != b.max || b.min == 0) return false;
      r = div_by_constant(a, b.min);
      break;
    case expr_node_type::mod:
      if (b.min != b.max || b.min == 0) return false;
      r = mod_by_constant(a, b.min);
      break;
    case expr_node_type::min: r = {std::min(a.min, b.min), std::min(a.max, b.max)}; break;
    case expr_node_type::max: r = {std::max(a.min, b.min), std::max(a.max, b.max)}; break;
    default: return false;
    }
    return ok && in_limits(r);
  }
  case expr_node_type::select: {
    const class select* s = e.as<class select>();
    index_range t, f;
    if (!eval_range(s->true_value, env, t) || !eval_range(s->false_value, env, f)) return false;
    r = hull(t, f);
    return true;
  }
  case expr_node_type::call: {
    const call* c = e.as<call>();
    if (c->intrinsic != intrinsic::abs || c->args.size() != 1) return false;
    index_range a;
    if (!eval_range(c->args[0], env, a)) return false;
    if (a.min >= 0) {
      r = a;
    } else if (a.max <= 0) {
      r = {-a.max, -a.min};
    } else {
      r = {0, std::max(-a.min, a.max)};
    }
    return true;
  }
  case expr_node_type::none:
  case expr_node_type::let:
  case expr_node_type::equal:
  case expr_node_type::not_equal:
  case expr_node_type::less:
  case expr_node_type::less_equal:
  case expr_node_type::logical_and:
  case expr_node_type::logical_or:
  case expr_node_type::logical_not: return false;
  }
  return false;
}

bool needed_region(const func::input& in, const region_env& env, std::vector<index_range>& result) {
  const span<const interval_expr> bounds = internal::used_bounds(in);
  const std::size_t rank = bounds.size();
  result.resize(rank);
  for (std::size_t d = 0; d < rank; ++d) {
    const interval_expr& b = bounds[d];
    index_range lo, hi;
    if (!b.min.defined() || !b.max.defined()) return false;
    if (!eval_range(b.min, env, lo)) return false;
    if (b.is_point()) {
      hi = lo;
    } else if (!eval_range(b.max, env, hi)) {
      return false;
    }
    result[d] = {lo.min, hi.max};
    if (d < in.input_crop.size()) {
      const interval_expr& c = in.input_crop[d];
      // An undefined end of the crop does not restrict.
      index_range crop = {-too_large, too_large};
      index_range v;
      if (c.min.defined() && is_infinity(c.min) == 0) {
        if (!eval_range(c.min, env, v)) return false;
        crop.min = v.min;
      }
      if (c.max.defined() && is_infinity(c.max) == 0) {
        if (!eval_range(c.max, env, v)) return false;
        crop.max = v.max;
      }
      result[d] = intersect(result[d], crop);
    }
  }
  return true;
}

}  // namespace scheduler_internal
}  // namespace slinky
