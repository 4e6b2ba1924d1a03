// Compatibility tests for the macros and helpers of slinky/base/util.h (docs/api.md section 10;
// checklist item 14 of README.md), which every client sees through buffer.h.
#include <gtest/gtest.h>

#include <cstdint>

#include "slinky/runtime/buffer.h"  // includes base/util.h, as in the original

namespace {

SLINKY_INLINE int inlined(int x) { return x + 1; }
SLINKY_NO_INLINE int not_inlined(int x) { return x * 2; }
SLINKY_PURE int pure(int x) { return x - 1; }
SLINKY_NO_STACK_PROTECTOR int unprotected(int x) { return x * x; }

struct SLINKY_TRIVIAL_ABI trivial {
  int v;
};

int classify(int x) {
  switch (x) {
  case 0: return 10;
  case 1: return 20;
  default: SLINKY_UNREACHABLE << "classify(" << x << ")";
  }
  return 0;
}

}  // namespace

TEST(compat_util, function_attributes_and_branch_hints) {
  EXPECT_EQ(inlined(1), 2);
  EXPECT_EQ(not_inlined(2), 4);
  EXPECT_EQ(pure(3), 2);
  EXPECT_EQ(unprotected(4), 16);
  trivial t{5};
  EXPECT_EQ(t.v, 5);
  int taken = 0;
  if (SLINKY_LIKELY(t.v == 5)) ++taken;
  if (SLINKY_UNLIKELY(t.v != 5)) --taken;
  EXPECT_EQ(taken, 1);
  SLINKY_UNUSED int unused = 0;
  EXPECT_EQ(classify(1), 20);
#if SLINKY_HAS_ATTRIBUTE(always_inline)
  const bool has_always_inline = true;
#else
  const bool has_always_inline = false;
#endif
  EXPECT_TRUE(has_always_inline);  // GCC and Clang have it
}

// SLINKY_UNIQUE gives a function internal linkage (the original marks single-use templates with
// it so they inline).
template <typename T>
SLINKY_UNIQUE T unique_twice(T x) {
  return x * 2;
}

TEST(compat_util, alloca_and_unique) {
  for (int n : {1, 7, 64}) {
    double* d = SLINKY_ALLOCA(double, n);
    EXPECT_EQ(reinterpret_cast<std::uintptr_t>(d) % alignof(double), 0u);
    for (int i = 0; i < n; ++i) d[i] = i;
    EXPECT_EQ(d[n - 1], n - 1);
  }
  EXPECT_EQ(unique_twice(21), 42);
}
