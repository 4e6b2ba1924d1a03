/// \file
/// `modulus_remainder<T>`: what is known about an integer's alignment, the set {modulus * k + remainder}
/// for every integer k, with conservative arithmetic on such sets (after Halide's ModulusRemainder).
/// For example, if x is in (8, 3) then x * 2 + 1 is in (16, 7) and x % 4 is in (0, 3): always 3.
#ifndef SLINKY_BASE_MODULUS_REMAINDER_H
#define SLINKY_BASE_MODULUS_REMAINDER_H

#include <limits>
#include <type_traits>

#include "slinky/base/arithmetic.h"

namespace slinky {

/// The set {modulus * k + remainder : k an integer}. A modulus of 0 is the single value
/// `remainder`; a modulus of 1 (the default) is every integer. Values are kept normalized: the
/// modulus is not negative, and if it is positive the remainder is in [0, modulus). Every
/// operator below returns a set that contains every result of the operation applied to members of
/// its operands (conservative: possibly more); where computing it would overflow T, the result is
/// (1, 0). Division and modulo are Euclidean, and x / 0 == x % 0 == 0, as in slinky expressions.
template <typename T>
struct modulus_remainder {
  static_assert(std::is_integral_v<T> && std::is_signed_v<T>, "modulus_remainder needs a signed integer type");

  /// The modulus: 0 for a single value, else positive.
  T modulus = 1;
  /// The remainder: the value if modulus is 0, else in [0, modulus).
  T remainder = 0;

  /// Every integer: (1, 0).
  modulus_remainder() = default;
  /// The set {m * k + r}, normalized (so (8, 11) and (-8, 3) are both (8, 3)).
  modulus_remainder(T m, T r) : modulus(m), remainder(r) {
    if (modulus < 0) {
      if (modulus == std::numeric_limits<T>::min()) {
        *this = modulus_remainder();
        return;
      }
      modulus = -modulus;
    }
    if (modulus > 0) remainder = euclidean_mod(remainder, modulus);
  }

  /// The set of one value.
  static modulus_remainder constant(T value) { return modulus_remainder(0, value); }
  /// Every integer.
  static modulus_remainder unknown() { return modulus_remainder(); }

  /// Whether the set is a single value.
  bool is_constant() const { return modulus == 0; }
  /// Whether x is in the set.
  bool contains(T x) const { return modulus == 0 ? x == remainder : euclidean_mod(x, modulus) == remainder; }

  /// The same set (both are normalized).
  bool operator==(const modulus_remainder& other) const {
    return modulus == other.modulus && remainder == other.remainder;
  }
  /// Not operator==.
  bool operator!=(const modulus_remainder& other) const { return !(*this == other); }
};

namespace internal {

// gcd of non-negative values, where gcd(0, x) == x.
template <typename T>
T mr_gcd(T a, T b) {
  while (b != 0) {
    T t = a % b;
    a = b;
    b = t;
  }
  return a;
}

// |x|, or false if it does not fit in T.
template <typename T>
bool mr_abs(T x, T* result) {
  if (x == std::numeric_limits<T>::min()) return false;
  *result = x < 0 ? -x : x;
  return true;
}

// T in a context where it is not deduced (so mr + 3 works for modulus_remainder<int64_t>).
template <typename T>
struct mr_identity {
  using type = T;
};

// Whether 0 is in the set.
template <typename T>
bool mr_contains_zero(const modulus_remainder<T>& a) {
  return a.remainder == 0;
}

}  // namespace internal

/// {x + y}: x + y == (ma * i + mb * j) + (ra + rb), and {ma * i + mb * j} is the multiples of
/// gcd(ma, mb).
template <typename T>
modulus_remainder<T> operator+(const modulus_remainder<T>& a, const modulus_remainder<T>& b) {
  T r;
  if (add_overflows(a.remainder, b.remainder, &r)) return modulus_remainder<T>();
  return modulus_remainder<T>(internal::mr_gcd(a.modulus, b.modulus), r);
}

/// {x - y}: as for +, congruent to ra - rb modulo gcd(ma, mb).
template <typename T>
modulus_remainder<T> operator-(const modulus_remainder<T>& a, const modulus_remainder<T>& b) {
  T r;
  if (sub_overflows(a.remainder, b.remainder, &r)) return modulus_remainder<T>();
  return modulus_remainder<T>(internal::mr_gcd(a.modulus, b.modulus), r);
}

/// {x * y}: (ma * i + ra) * (mb * j + rb) == ma * mb * i * j + ma * rb * i + mb * ra * j + ra * rb,
/// so the modulus is gcd(ma * mb, ma * rb, mb * ra).
template <typename T>
modulus_remainder<T> operator*(const modulus_remainder<T>& a, const modulus_remainder<T>& b) {
  T mm, mr, rm, rr;
  if (mul_overflows(a.modulus, b.modulus, &mm) || mul_overflows(a.modulus, b.remainder, &mr) ||
      mul_overflows(b.modulus, a.remainder, &rm) || mul_overflows(a.remainder, b.remainder, &rr)) {
    return modulus_remainder<T>();
  }
  T amr, arm;
  if (!internal::mr_abs(mr, &amr) || !internal::mr_abs(rm, &arm)) return modulus_remainder<T>();
  return modulus_remainder<T>(internal::mr_gcd(internal::mr_gcd(mm, amr), arm), rr);
}

/// {x / y}: known only for a constant divisor c that divides the modulus (or a constant dividend):
/// (m * k + r) / c == (m / c) * k + r / c exactly (Euclidean), because m * k is a multiple of c.
template <typename T>
modulus_remainder<T> operator/(const modulus_remainder<T>& a, const modulus_remainder<T>& b) {
  if (!b.is_constant()) return modulus_remainder<T>();
  const T c = b.remainder;
  if (c == 0) return modulus_remainder<T>::constant(0);
  if (a.is_constant()) {
    // min / -1 overflows.
    if (c == -1 && a.remainder == std::numeric_limits<T>::min()) return modulus_remainder<T>();
    return modulus_remainder<T>::constant(euclidean_div(a.remainder, c));
  }
  if (euclidean_mod(a.modulus, c) != 0) return modulus_remainder<T>();
  return modulus_remainder<T>(a.modulus / c, euclidean_div(a.remainder, c));
}

/// {x % y}: x % y == x - y * q, and y * q is a multiple of gcd(mb, rb), so x % y is congruent to ra
/// modulo gcd(ma, mb, rb). If y may be 0, x % y may also be 0. For a constant y == c whose
/// multiple is ma, x % c is the single value ra % c.
template <typename T>
modulus_remainder<T> operator%(const modulus_remainder<T>& a, const modulus_remainder<T>& b) {
  if (b.is_constant()) {
    if (b.remainder == 0) return modulus_remainder<T>::constant(0);
    // A modulus that is a multiple of c fixes x % c (which is in [0, |c|)).
    if (euclidean_mod(a.modulus, b.remainder) == 0) {
      return modulus_remainder<T>::constant(euclidean_mod(a.remainder, b.remainder));
    }
  }
  T abs_rb;
  if (!internal::mr_abs(b.remainder, &abs_rb)) return modulus_remainder<T>();
  const T m = internal::mr_gcd(internal::mr_gcd(a.modulus, b.modulus), abs_rb);
  modulus_remainder<T> result(m, a.remainder);
  if (internal::mr_contains_zero(b) && !result.contains(0)) {
    // The union of the result and {0}.
    T abs_r;
    if (!internal::mr_abs(result.remainder, &abs_r)) return modulus_remainder<T>();
    return modulus_remainder<T>(internal::mr_gcd(result.modulus, abs_r), 0);
  }
  return result;
}

/// The union: a set containing both.
template <typename T>
modulus_remainder<T> operator|(const modulus_remainder<T>& a, const modulus_remainder<T>& b) {
  T d, abs_d;
  if (sub_overflows(a.remainder, b.remainder, &d) || !internal::mr_abs(d, &abs_d)) return modulus_remainder<T>();
  return modulus_remainder<T>(internal::mr_gcd(internal::mr_gcd(a.modulus, b.modulus), abs_d), a.remainder);
}

/// The intersection: a set containing every value in both (by the Chinese remainder theorem when
/// it is representable; one of the operands otherwise, or when the intersection is empty).
template <typename T>
modulus_remainder<T> operator&(const modulus_remainder<T>& a, const modulus_remainder<T>& b) {
  if (a.is_constant()) return a;
  if (b.is_constant()) return b;
  // x == ra (mod ma) and x == rb (mod mb) has solutions iff g = gcd(ma, mb) divides rb - ra;
  // they are x == ra + ma * t (mod lcm(ma, mb)) where t solves (ma / g) * t == (rb - ra) / g
  // (mod mb / g).
  const modulus_remainder<T>& larger = a.modulus >= b.modulus ? a : b;
  const T g = internal::mr_gcd(a.modulus, b.modulus);
  T diff;
  if (sub_overflows(b.remainder, a.remainder, &diff)) return larger;
  if (euclidean_mod(diff, g) != 0) return larger;
  const T ma = a.modulus / g;
  const T mb = b.modulus / g;
  // The inverse of ma modulo mb, by the extended Euclidean algorithm (ma and mb are coprime).
  T old_r = euclidean_mod(ma, mb), r = mb, old_s = 1, s = 0;
  if (mb == 1) {
    old_s = 0;
  } else {
    while (r != 0) {
      const T q = old_r / r;
      T t = old_r - q * r;
      old_r = r;
      r = t;
      t = old_s - q * s;
      old_s = s;
      s = t;
    }
  }
  T t, m, x;
  if (mul_overflows(euclidean_mod(diff / g, mb), euclidean_mod(old_s, mb), &t)) return larger;
  t = euclidean_mod(t, mb);
  if (mul_overflows(a.modulus, mb, &m)) return larger;
  if (mul_overflows(a.modulus, t, &x) || add_overflows(x, a.remainder, &x)) return larger;
  return modulus_remainder<T>(m, x);
}

/// The same with a constant operand: defines operator op(modulus_remainder<T>, T) and
/// operator op(T, modulus_remainder<T>) (undefined after use).
#define SLINKY_MODULUS_REMAINDER_CONSTANT_OP(op)                                                                       \
  /** a op the constant b. */                                                                                          \
  template <typename T>                                                                                                \
  modulus_remainder<T> operator op(const modulus_remainder<T>& a, typename internal::mr_identity<T>::type b) {         \
    return a op modulus_remainder<T>::constant(b);                                                                     \
  }                                                                                                                    \
  /** The constant a op b. */                                                                                          \
  template <typename T>                                                                                                \
  modulus_remainder<T> operator op(typename internal::mr_identity<T>::type a, const modulus_remainder<T>& b) {         \
    return modulus_remainder<T>::constant(a) op b;                                                                     \
  }
SLINKY_MODULUS_REMAINDER_CONSTANT_OP(+)
SLINKY_MODULUS_REMAINDER_CONSTANT_OP(-)
SLINKY_MODULUS_REMAINDER_CONSTANT_OP(*)
SLINKY_MODULUS_REMAINDER_CONSTANT_OP(/)
SLINKY_MODULUS_REMAINDER_CONSTANT_OP(%)
SLINKY_MODULUS_REMAINDER_CONSTANT_OP(|)
SLINKY_MODULUS_REMAINDER_CONSTANT_OP(&)
#undef SLINKY_MODULUS_REMAINDER_CONSTANT_OP

/// Compound assignment: a = a + b, a - b, a * b, a / b, a % b, a | b or a & b.
///@{
template <typename T>
modulus_remainder<T>& operator+=(modulus_remainder<T>& a, const modulus_remainder<T>& b) {
  return a = a + b;
}
template <typename T>
modulus_remainder<T>& operator-=(modulus_remainder<T>& a, const modulus_remainder<T>& b) {
  return a = a - b;
}
template <typename T>
modulus_remainder<T>& operator*=(modulus_remainder<T>& a, const modulus_remainder<T>& b) {
  return a = a * b;
}
template <typename T>
modulus_remainder<T>& operator/=(modulus_remainder<T>& a, const modulus_remainder<T>& b) {
  return a = a / b;
}
template <typename T>
modulus_remainder<T>& operator%=(modulus_remainder<T>& a, const modulus_remainder<T>& b) {
  return a = a % b;
}
template <typename T>
modulus_remainder<T>& operator|=(modulus_remainder<T>& a, const modulus_remainder<T>& b) {
  return a = a | b;
}
template <typename T>
modulus_remainder<T>& operator&=(modulus_remainder<T>& a, const modulus_remainder<T>& b) {
  return a = a & b;
}
///@}

}  // namespace slinky

#endif  // SLINKY_BASE_MODULUS_REMAINDER_H
