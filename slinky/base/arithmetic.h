/// \file
/// Integer arithmetic with the semantics slinky programs use: Euclidean division and modulo
/// (x / 0 == 0, x % 0 == 0), overflow-checked and saturating operations, gcd/lcm, alignment,
/// and the bounds of sums of staircase functions.
#ifndef SLINKY_BASE_ARITHMETIC_H
#define SLINKY_BASE_ARITHMETIC_H

#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <type_traits>
#include <utility>

namespace slinky {

/// Euclidean division: the remainder is always in [0, |b|), and a == (a / b) * b + a % b.
/// Division by zero gives define_b_zero. The one overflowing case, min / -1, saturates to max.
template <typename T>
constexpr T euclidean_div(T a, T b, T define_b_zero = 0) {
  if (b == 0) return define_b_zero;
  if constexpr (std::is_signed_v<T>) {
    if (b == -1) return a == std::numeric_limits<T>::min() ? std::numeric_limits<T>::max() : -a;
    T q = a / b;
    T r = a - q * b;
    if (r < 0) q = b > 0 ? q - 1 : q + 1;
    return q;
  } else {
    return a / b;
  }
}

/// Euclidean modulo: always in [0, |b|); x % 0 == define_b_zero.
template <typename T>
constexpr T euclidean_mod(T a, T b, T define_b_zero = 0) {
  if (b == 0) return define_b_zero;
  if constexpr (std::is_signed_v<T>) {
    if (b == -1) return 0;
    T r = a % b;
    if (r < 0) r += b < 0 ? -b : b;
    return r;
  } else {
    return a % b;
  }
}

/// Euclidean division (rounding toward negative infinity) by a divisor known to be positive;
/// cheaper than euclidean_div.
template <typename T>
constexpr T euclidean_div_positive_divisor(T a, T b) {
  if constexpr (std::is_signed_v<T>) {
    T q = a / b;
    return a % b < 0 ? q - 1 : q;
  } else {
    return a / b;
  }
}

/// a / b rounded to the nearest integer, halves rounded up (toward positive infinity), for b > 0.
template <typename T>
constexpr T round_div(T a, T b) {
  return euclidean_div(a + b / 2, b);
}

/// Euclidean modulo for a known positive modulus, the common case on hot paths (fold factors).
/// A 64-bit division costs tens of cycles: a power-of-two modulus is a mask instead, and operands
/// that fit in 32 bits divide in 32 bits.
template <typename T>
constexpr T euclidean_mod_positive_modulus(T a, T b) {
  if ((b & (b - 1)) == 0) return a & (b - 1);  // two's complement: Euclidean for a < 0 too
  if constexpr (std::is_signed_v<T>) {
    if constexpr (sizeof(T) > sizeof(std::int32_t)) {
      if (a == static_cast<std::int32_t>(a) && b <= std::numeric_limits<std::int32_t>::max()) {
        const std::int32_t r = static_cast<std::int32_t>(a) % static_cast<std::int32_t>(b);
        return r < 0 ? r + b : r;
      }
    }
    T r = a % b;
    return r < 0 ? r + b : r;
  } else {
    return a % b;
  }
}

/// Division rounding toward negative infinity for a positive divisor.
template <typename T>
constexpr T floor_div(T a, T b) {
  return euclidean_div(a, b);
}

/// Division rounding toward positive infinity for a positive divisor.
template <typename T>
constexpr T ceil_div(T a, T b) {
  return euclidean_div(a + b - 1, b);
}

/// Overflow-checked arithmetic: *result = a + b, a - b or a * b, wrapped around on overflow;
/// returns true if it overflowed T.
///@{
template <typename T>
inline bool add_overflows(T a, T b, T* result) {
  return __builtin_add_overflow(a, b, result);
}
template <typename T>
inline bool sub_overflows(T a, T b, T* result) {
  return __builtin_sub_overflow(a, b, result);
}
template <typename T>
inline bool mul_overflows(T a, T b, T* result) {
  return __builtin_mul_overflow(a, b, result);
}
///@}

/// Whether a + b, a - b or a * b overflows T.
///@{
template <typename T>
inline bool add_overflows(T a, T b) {
  T r;
  return __builtin_add_overflow(a, b, &r);
}
template <typename T>
inline bool sub_overflows(T a, T b) {
  T r;
  return __builtin_sub_overflow(a, b, &r);
}
template <typename T>
inline bool mul_overflows(T a, T b) {
  T r;
  return __builtin_mul_overflow(a, b, &r);
}
///@}

/// Sets result to a + b, a - b or a * b and returns false; on overflow, sets result to 0 and
/// returns true.
///@{
template <typename T>
inline bool add_with_overflow(T a, T b, T& result) {
  if (!__builtin_add_overflow(a, b, &result)) return false;
  result = 0;
  return true;
}
template <typename T>
inline bool sub_with_overflow(T a, T b, T& result) {
  if (!__builtin_sub_overflow(a, b, &result)) return false;
  result = 0;
  return true;
}
template <typename T>
inline bool mul_with_overflow(T a, T b, T& result) {
  if (!__builtin_mul_overflow(a, b, &result)) return false;
  result = 0;
  return true;
}
///@}

/// Saturating arithmetic: a + b, a - b, a * b or -a, clamped to the range of T where it
/// overflows.
///@{
template <typename T>
inline T saturate_add(T a, T b) {
  T r;
  if (!__builtin_add_overflow(a, b, &r)) return r;
  return b > 0 ? std::numeric_limits<T>::max() : std::numeric_limits<T>::min();
}
template <typename T>
inline T saturate_sub(T a, T b) {
  T r;
  if (!__builtin_sub_overflow(a, b, &r)) return r;
  return b < 0 ? std::numeric_limits<T>::max() : std::numeric_limits<T>::min();
}
template <typename T>
inline T saturate_mul(T a, T b) {
  T r;
  if (!__builtin_mul_overflow(a, b, &r)) return r;
  return (a < 0) != (b < 0) ? std::numeric_limits<T>::min() : std::numeric_limits<T>::max();
}
template <typename T>
inline T saturate_negate(T a) {
  return a == std::numeric_limits<T>::min() ? std::numeric_limits<T>::max() : -a;
}
///@}

/// The same saturating operations under the original's names; div_sat is euclidean_div, whose
/// only overflow (min / -1) saturates to max, and which gives 0 for b == 0.
///@{
template <typename T>
inline T add_sat(T a, T b) {
  return saturate_add(a, b);
}
template <typename T>
inline T sub_sat(T a, T b) {
  return saturate_sub(a, b);
}
template <typename T>
inline T mul_sat(T a, T b) {
  return saturate_mul(a, b);
}
template <typename T>
inline T div_sat(T a, T b) {
  return euclidean_div(a, b);
}
///@}

/// The sign of x: -1, 0 or 1.
template <typename T>
constexpr T sign(T x) {
  return x > 0 ? 1 : (x < 0 ? -1 : 0);
}

/// |a| (for the minimum of a signed T, which has no positive counterpart, it overflows).
template <typename T>
constexpr T abs_value(T a) {
  if constexpr (std::is_signed_v<T>) return a < 0 ? -a : a;
  return a;
}

/// Greatest common divisor (always >= 0; gcd(0, 0) == 0) and least common multiple (always
/// >= 0; 0 if a or b is 0).
///@{
template <typename T>
constexpr T gcd(T a, T b) {
  a = abs_value(a);
  b = abs_value(b);
  while (b != 0) {
    T t = a % b;
    a = b;
    b = t;
  }
  return a;
}
template <typename T>
constexpr T lcm(T a, T b) {
  if (a == 0 || b == 0) return 0;
  return abs_value(a / gcd(a, b) * b);
}
///@}

/// True if x is a positive power of two (1, 2, 4, ...).
template <typename T>
constexpr bool is_power_of_two(T x) {
  return x > 0 && (x & (x - 1)) == 0;
}

/// Rounds x down or up to a multiple of the positive alignment a. A power of two (as alignments
/// are) takes a mask, the same result without a division (the evaluator aligns every stack block).
///@{
template <typename T>
constexpr T align_down(T x, T a) {
  return is_power_of_two(a) ? x & ~(a - 1) : euclidean_div(x, a) * a;
}
template <typename T>
constexpr T align_up(T x, T a) {
  return align_down(x + a - 1, a);
}
///@}

/// floor((x + a) / b) * c, with Euclidean division (so 0 where b == 0).
template <typename T>
constexpr T staircase(T x, T a, T b, T c) {
  return euclidean_div(x + a, b) * c;
}

/// A range of values [min, max]; a missing end is unbounded.
template <typename T>
struct interval {
  ///@{
  /// The ends; std::nullopt is unbounded.
  std::optional<T> min, max;
  ///@}

  /// Unbounded at both ends.
  interval() = default;
  /// The single value x, [x, x] (unbounded if x is missing), like interval_expr's point
  /// constructor. Implicit: `return {x};` in a function returning an interval is a point.
  interval(std::optional<T> x) : min(x), max(x) {}  // NOLINT(google-explicit-constructor)
  /// [min, max].
  interval(std::optional<T> lo, std::optional<T> hi) : min(std::move(lo)), max(std::move(hi)) {}

  /// Equal if both ends are (two missing ends are equal).
  bool operator==(const interval& other) const { return min == other.min && max == other.max; }
  /// Not operator==.
  bool operator!=(const interval& other) const { return !(*this == other); }
};

/// The bounds, over all integers x, of staircase(x, a1, b1, c1) + staircase(x, a2, b2, c2),
/// computed exactly (without overflow) as integers: an end is missing where the sum is
/// unbounded (the two slopes c1 / b1 and c2 / b2 do not cancel) or where the bound does not fit
/// in T. For example, x / 4 * 4 - x / 2 * 2 (a1 = a2 = 0) is bounded by [-2, 0].
template <typename T>
interval<T> staircase_sum_bounds(T a1, T b1, T c1, T a2, T b2, T c2) {
  static_assert(std::is_signed_v<T> && sizeof(T) <= 8, "staircase_sum_bounds computes in 128 bits");
  using wide = __int128;
  // A staircase with b == 0 (Euclidean division gives 0) or c == 0 is the constant 0.
  const bool zero1 = b1 == 0 || c1 == 0;
  const bool zero2 = b2 == 0 || c2 == 0;
  if (zero1 && zero2) return {T(0), T(0)};
  if (zero1 || zero2) return {};
  // Each staircase is c * (x + a - r) / b, where r = (x + a) mod |b|: a line of slope c / b
  // minus a bounded periodic term. The sum is bounded only when the slopes cancel.
  const wide slope = wide(c1) * wide(b2) + wide(c2) * wide(b1);  // Fits: |each product| <= 2^126.
  if (slope != 0) return {};
  // Then the sum is c1 / b1 * (a1 - a2 - (r1 - r2)), and d = r1 - r2 takes (by the Chinese
  // remainder theorem) exactly the values in [-(|b2| - 1), |b1| - 1] congruent to a1 - a2
  // modulo g = gcd(|b1|, |b2|). The sum is linear in d: its bounds are at the extreme d.
  const wide m1 = b1 < 0 ? -wide(b1) : wide(b1);
  const wide m2 = b2 < 0 ? -wide(b2) : wide(b2);
  wide g = m1, h = m2;
  while (h != 0) {
    wide t = g % h;
    g = h;
    h = t;
  }
  const wide delta = wide(a1) - wide(a2);
  auto mod = [](wide a, wide b) {
    wide r = a % b;
    return r < 0 ? r + b : r;
  };
  const wide d_max = (m1 - 1) - mod((m1 - 1) - delta, g);
  const wide d_min = -(m2 - 1) + mod(delta + (m2 - 1), g);
  // c1 * e / b1 is an integer for the e = delta - d that occur; reduce c1 / b1 first so the
  // product overflows only when the value itself is out of range.
  wide num = c1, den = b1;
  {
    wide p = num < 0 ? -num : num, q = den < 0 ? -den : den;
    while (q != 0) {
      wide t = p % q;
      p = q;
      q = t;
    }
    num /= p;
    den /= p;
  }
  auto value = [&](wide d) -> std::optional<T> {
    const wide e = delta - d;  // |e| < 2^65: |delta| <= 2^64, |d| < 2^64.
    wide product;
    if (__builtin_mul_overflow(num, e, &product)) return std::nullopt;
    const wide v = product / den;
    if (v < wide(std::numeric_limits<T>::min()) || v > wide(std::numeric_limits<T>::max())) return std::nullopt;
    return T(v);
  };
  const wide lo = d_min, hi = d_max;
  // The slope of the value in d is -c1 / b1: the smaller value is at hi when that is negative.
  const bool decreasing = (num > 0) == (den > 0);
  return {value(decreasing ? hi : lo), value(decreasing ? lo : hi)};
}

}  // namespace slinky

#endif  // SLINKY_BASE_ARITHMETIC_H
