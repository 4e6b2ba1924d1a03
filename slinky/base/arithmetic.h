// Integer arithmetic with the semantics slinky programs use: Euclidean division and modulo
// (x / 0 == 0, x % 0 == 0), overflow-checked and saturating operations, gcd/lcm, alignment.
#ifndef SLINKY_BASE_ARITHMETIC_H
#define SLINKY_BASE_ARITHMETIC_H

#include <cstddef>
#include <cstdint>
#include <limits>
#include <type_traits>

namespace slinky {

// Euclidean division: the remainder is always in [0, |b|), and a == (a / b) * b + a % b.
// Division by zero gives 0. The one overflowing case, min / -1, wraps like two's complement
// negation does not: it saturates to max.
template <typename T>
constexpr T euclidean_div(T a, T b) {
  if (b == 0) return 0;
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

// Euclidean modulo: always in [0, |b|); x % 0 == 0.
template <typename T>
constexpr T euclidean_mod(T a, T b) {
  if (b == 0) return 0;
  if constexpr (std::is_signed_v<T>) {
    if (b == -1) return 0;
    T r = a % b;
    if (r < 0) r += b < 0 ? -b : b;
    return r;
  } else {
    return a % b;
  }
}

// Euclidean modulo for a known positive modulus, the common case on hot paths (fold factors).
template <typename T>
constexpr T euclidean_mod_positive_modulus(T a, T b) {
  if constexpr (std::is_signed_v<T>) {
    T r = a % b;
    return r < 0 ? r + b : r;
  } else {
    return a % b;
  }
}

// Division rounding toward negative infinity for a positive divisor.
template <typename T>
constexpr T floor_div(T a, T b) {
  return euclidean_div(a, b);
}

// Division rounding toward positive infinity for a positive divisor.
template <typename T>
constexpr T ceil_div(T a, T b) {
  return euclidean_div(a + b - 1, b);
}

// Overflow-checked arithmetic: returns true (and stores the wrapped value) on overflow.
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

// Saturating arithmetic: results that overflow are clamped to the range of T.
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

template <typename T>
constexpr T abs_value(T a) {
  if constexpr (std::is_signed_v<T>) return a < 0 ? -a : a;
  return a;
}

// Greatest common divisor (always >= 0; gcd(0, 0) == 0) and least common multiple.
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

// Rounds x down or up to a multiple of the positive alignment a.
template <typename T>
constexpr T align_down(T x, T a) {
  return euclidean_div(x, a) * a;
}
template <typename T>
constexpr T align_up(T x, T a) {
  return euclidean_div(x + a - 1, a) * a;
}

template <typename T>
constexpr bool is_power_of_two(T x) {
  return x > 0 && (x & (x - 1)) == 0;
}

}  // namespace slinky

#endif  // SLINKY_BASE_ARITHMETIC_H
