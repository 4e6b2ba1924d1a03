// Compatibility tests for slinky/base/modulus_remainder.h and slinky/base/set.h (docs/api.md
// section 10; checklist item 18 of README.md), and the printing of modulus_remainder
// (runtime/print.h).
#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <set>
#include <sstream>
#include <vector>

#include "slinky/base/modulus_remainder.h"
#include "slinky/base/set.h"
#include "slinky/runtime/print.h"

namespace {

using slinky::index_t;
using mr = slinky::modulus_remainder<index_t>;

}  // namespace

TEST(compat_modulus_remainder, arithmetic) {
  EXPECT_EQ(mr(), mr(1, 0));
  const mr a(4, 1), b(4, 3);
  EXPECT_EQ(a.modulus, 4);
  EXPECT_EQ(a.remainder, 1);
  EXPECT_EQ(a + b, mr(4, 0));
  EXPECT_EQ(a - b, mr(4, 2));
  EXPECT_EQ(a * 2, mr(8, 2));
  EXPECT_EQ(a + 3, mr(4, 0));
  EXPECT_EQ(a | b, mr(2, 1));
  EXPECT_EQ(mr(4, 1) & mr(6, 1), mr(12, 1));
  // Modulus 0: a single constant.
  EXPECT_EQ(mr(0, 5) + mr(0, 3), mr(0, 8));
  EXPECT_EQ(mr(0, 5) * mr(0, 3), mr(0, 15));
  // Overflow is conservative.
  EXPECT_EQ(mr(0, std::numeric_limits<index_t>::max()) + mr(0, 1), mr(1, 0));
  // Every value of the set satisfies the result.
  for (index_t k = -3; k <= 3; ++k) {
    const index_t av = 4 * k + 1, bv = 6 * k + 5;
    const mr sum = mr(4, 1) + mr(6, 5);
    EXPECT_EQ(slinky::euclidean_mod(av + bv - sum.remainder, sum.modulus), 0);
  }
  std::stringstream s;
  s << a;
  EXPECT_EQ(s.str(), "(4, 1)");
}

TEST(compat_set, empty_intersection) {
  const std::vector<int> a = {1, 3, 5}, b = {2, 4, 6}, c = {0, 5, 9};
  EXPECT_TRUE(slinky::empty_intersection(a.begin(), a.end(), b.begin(), b.end()));
  EXPECT_FALSE(slinky::empty_intersection(a.begin(), a.end(), c.begin(), c.end()));
  EXPECT_TRUE(slinky::empty_intersection(a.begin(), a.end(), a.end(), a.end()));
  const std::set<int> sa = {1, 3}, sb = {2, 3};
  EXPECT_FALSE(slinky::empty_intersection(sa, sb));
  EXPECT_TRUE(slinky::empty_intersection(sa, std::set<int>{4}));
}
