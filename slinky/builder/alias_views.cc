// The maps that make a copy's destination a view of its source: see alias_views.h and docs/copies.md.
#include "slinky/builder/alias_views.h"

#include "slinky/builder/simplify.h"
#include "slinky/runtime/depends_on.h"
#include "slinky/runtime/node_mutator.h"
#include "slinky/runtime/stmt.h"

namespace slinky {

bool is_point_interval(const interval_expr& i) { return i.min.defined() && (i.is_point() || match(i.min, i.max)); }

bool linear_map::match(const func::input& in, const std::vector<var>& x,
                       const std::function<bool(const expr&)>& invariant) {
  for (const interval_expr& i : internal::used_bounds(in)) {
    if (!is_point_interval(i)) return false;
    const expr& e = i.min;
    std::vector<expr> c(x.size(), expr(0));
    expr e0 = e;
    for (std::size_t j = 0; j < x.size(); ++j) e0 = substitute(e0, x[j], 0);
    e0 = simplify(e0);
    expr sum = e0;
    for (std::size_t j = 0; j < x.size(); ++j) {
      if (!depends_on(e, x[j])) continue;
      expr ej = e;
      for (std::size_t i2 = 0; i2 < x.size(); ++i2) ej = substitute(ej, x[i2], i2 == j ? 1 : 0);
      expr a = simplify(ej - e0);
      if (!as_constant(a) && !invariant(a)) return false;
      c[j] = a;
      sum += x[j] * a;
    }
    if (!is_zero(simplify(e - sum))) return false;
    coeff.push_back(std::move(c));
    at.push_back(e);
  }
  return true;
}

std::optional<reshape_view> match_reshape_view(const buffer_expr& src, const buffer_expr& dst,
                                               const std::vector<expr>& src_x, const std::vector<var>& x,
                                               const box_expr& src_region, const box_expr& dst_region,
                                               const std::function<bool(const expr&)>& known_here) {
  const std::size_t rank = src_x.size();
  if (rank < 2 || rank != src.rank() || rank != src_region.size() || dst_region.size() != x.size()) {
    return std::nullopt;
  }
  // The digits as the copy would run them (copy_stmt::flat).
  const stmt c = copy_stmt::make(nullptr, src.sym(), src_x, dst.sym(), x);
  const copy_stmt* cs = c.as<copy_stmt>();
  if (!cs || cs->flat.size() != rank) return std::nullopt;
  const std::vector<copy_stmt::flat_digit>& digits = cs->flat;
  // Every coordinate a digit (no batch dims: coordinates that are none of the digits).
  for (const copy_stmt::flat_digit& dk : digits) {
    if (dk.coeffs.size() != x.size() || !dk.divisor.defined()) return std::nullopt;
  }
  auto or_zero = [](const expr& e) { return e.defined() ? e : expr(0); };
  auto equal = [](const expr& a, const expr& b) {
    const expr sa = simplify(a), sb = simplify(b);
    return match(sa, sb) || prove_true(sa == sb);
  };
  const copy_stmt::flat_digit& top = digits.back();
  reshape_view v;
  std::vector<bool> unproven(rank, false);
  // The last digit without %: with it, the digits wrap around at Q_last * E_last.
  if (top.modulus.defined()) return std::nullopt;
  if (!equal(digits[0].divisor, 1)) return std::nullopt;
  for (std::size_t k = 0; k < rank; ++k) {
    const copy_stmt::flat_digit& dk = digits[k];
    if (!known_here(dk.divisor)) return std::nullopt;
    if (k + 1 == rank) break;
    if (!dk.modulus.defined() || !known_here(dk.modulus)) return std::nullopt;
    if (!equal(digits[k + 1].divisor, dk.divisor * dk.modulus)) return std::nullopt;
    // L_k = F modulo Q_k * E_k (the simplifier may reduce coefficients modulo the divisor).
    const expr period = dk.divisor * dk.modulus;
    for (std::size_t j = 0; j < x.size(); ++j) {
      if (!equal((or_zero(top.coeffs[j]) - or_zero(dk.coeffs[j])) % period, 0)) return std::nullopt;
    }
    if (!equal((or_zero(top.offset) - or_zero(dk.offset)) % period, 0)) return std::nullopt;
    // A positive radix, and distinct elements of the source at distinct addresses: proven, or
    // checked at run time (the view's condition; a radix given at run time may be 0 or less).
    const interval_expr& region = src_region[k];
    if (!region.min.defined() || !region.max.defined()) return std::nullopt;
    const expr fits = simplify(dk.modulus >= 1 && region.extent() <= dk.modulus);
    if (prove_true(fits)) continue;
    unproven[k] = true;
    if (is_zero(fits) || prove_true(simplify(!fits))) return std::nullopt;
    v.condition = v.condition.defined() ? v.condition && fits : fits;
  }
  for (std::size_t j = 0; j < x.size(); ++j) {
    if (!known_here(or_zero(top.coeffs[j]))) return std::nullopt;
  }

  for (std::size_t k = 0; k < rank; ++k) {
    expr e = rewrite<variable>(src_x[k], [&](const variable* var_node, node_mutator&) -> expr {
      for (std::size_t j = 0; j < x.size(); ++j) {
        if (var_node->sym == x[j] && var_node->field == buffer_field::none) return dst_region[j].min;
      }
      return expr(var_node);
    });
    v.src_at.push_back(simplify(e));
  }
  const expr elem = src.elem_size();
  for (std::size_t j = 0; j < x.size(); ++j) {
    v.dims.push_back({dst_region[j], simplify(or_zero(top.coeffs[j]) * elem), expr()});
  }
  // The strides: Q_k elements. Where a radix E_k is not proven to fit, the stride of dim k + 1 is
  // that of dim k times max(E_k, the extent of the source's region in dim k, 1) instead: Q_(k+1)
  // elements where the condition holds, and where it does not, still a layout in which no two
  // elements of the source share an address (the source is then an ordinary allocation, which
  // the copy reads).
  if (v.condition.defined()) {
    expr stride = elem;
    for (std::size_t k = 0; k < rank; ++k) {
      v.strides.push_back(simplify(stride));
      if (k + 1 == rank) break;
      const expr& radix = digits[k].modulus;
      stride = stride * (unproven[k] ? max(radix, max(src_region[k].extent(), 1)) : radix);
    }
    v.condition = simplify(v.condition);
  } else {
    for (std::size_t k = 0; k < rank; ++k) v.strides.push_back(simplify(digits[k].divisor * elem));
  }
  return v;
}

}  // namespace slinky
