/// \file
/// Small portability macros (attributes, branch hints, aligned stack arrays) and `unreachable`,
/// for code that must state a fact the compiler cannot see.
#ifndef SLINKY_BASE_UTIL_H
#define SLINKY_BASE_UTIL_H

#include <alloca.h>

#include <cstddef>
#include <cstdint>
#include <ostream>

/// SLINKY_HAS_ATTRIBUTE(x): whether the compiler knows __attribute__((x)); 0 where it cannot say.
#ifdef __has_attribute
#define SLINKY_HAS_ATTRIBUTE(x) __has_attribute(x)
#else
#define SLINKY_HAS_ATTRIBUTE(x) 0
#endif

/// Forces inlining of a function (and declares it inline).
#define SLINKY_INLINE inline __attribute__((always_inline))
/// Forbids inlining of a function.
#define SLINKY_NO_INLINE __attribute__((noinline))

/// Marks a function (usually a template with a single specialization) as unique to its
/// translation unit: internal linkage lets the compiler inline a function it sees used once.
/// `template <class F> SLINKY_UNIQUE void walk(F f) { ... }`.
#define SLINKY_UNIQUE static

/// A function whose result depends only on its arguments and the memory they point to, and
/// which has no side effects.
#define SLINKY_PURE __attribute__((pure))

/// Silences unused-variable or unused-function warnings for a declaration.
#define SLINKY_UNUSED __attribute__((unused))

/// Lets a class with a non-trivial destructor or copy be passed in registers (clang only).
#if defined(__clang__) && SLINKY_HAS_ATTRIBUTE(trivial_abi)
#define SLINKY_TRIVIAL_ABI __attribute__((trivial_abi))
#else
#define SLINKY_TRIVIAL_ABI
#endif

/// Turns off the stack protector for a function (e.g. one with alloca in a hot loop), where the
/// compiler supports it.
#if SLINKY_HAS_ATTRIBUTE(no_stack_protector)
#define SLINKY_NO_STACK_PROTECTOR __attribute__((no_stack_protector))
#else
#define SLINKY_NO_STACK_PROTECTOR
#endif

/// Branch hint: the condition is likely to be true. Evaluates to the condition as a bool.
#define SLINKY_LIKELY(x) __builtin_expect(static_cast<bool>(x), 1)
/// Branch hint: the condition is unlikely to be true. Evaluates to the condition as a bool.
#define SLINKY_UNLIKELY(x) __builtin_expect(static_cast<bool>(x), 0)

namespace slinky {
namespace internal {

// Rounds a stack block from alloca up to the alignment of T.
template <typename T>
T* align_stack_block(void* p) {
  const std::uintptr_t a = alignof(T);
  return reinterpret_cast<T*>((reinterpret_cast<std::uintptr_t>(p) + a - 1) & ~(a - 1));
}

// The stream unreachable writes to (std::cerr, without making every includer initialize
// iostreams).
std::ostream& unreachable_stream();

}  // namespace internal

/// Marks a point that execution never reaches, with a message streamed into it. When the
/// temporary is destroyed (at the end of the statement): in debug builds (no NDEBUG) the message
/// goes to stderr and the program aborts; in release builds reaching it is undefined behaviour
/// (the compiler assumes it does not happen) and the message is not evaluated for output.
/// Usually through SLINKY_UNREACHABLE:
///
///     default: SLINKY_UNREACHABLE << "unknown node type " << static_cast<int>(type);
class unreachable {
public:
  /// An unreachable point, reported when the object is destroyed.
  unreachable() = default;
  /// Not copyable.
  unreachable(const unreachable&) = delete;
  /// Not copyable.
  unreachable& operator=(const unreachable&) = delete;
  /// Reports (debug builds) and aborts; undefined behaviour in release builds.
  [[noreturn]] ~unreachable() {
#ifdef NDEBUG
    __builtin_unreachable();
#else
    internal::unreachable_stream() << std::endl;
    abort_now();
#endif
  }

  /// Appends x to the message (debug builds; release builds ignore it).
  template <typename T>
  unreachable& operator<<(const T& x) {
#ifndef NDEBUG
    internal::unreachable_stream() << x;
#else
    (void)x;
#endif
    return *this;
  }

private:
  [[noreturn]] static void abort_now();
};

}  // namespace slinky

/// An aligned array of n objects of type T on the caller's stack frame (uninitialized; freed
/// when the calling function returns).
#define SLINKY_ALLOCA(T, n) ::slinky::internal::align_stack_block<T>(alloca(sizeof(T) * (n) + alignof(T) - 1))

/// An unreachable object whose message starts with the file and line of the use; stream the
/// rest of the message into it.
#define SLINKY_UNREACHABLE ::slinky::unreachable() << "unreachable executed at " << __FILE__ << ":" << __LINE__ << ": "

#endif  // SLINKY_BASE_UTIL_H
