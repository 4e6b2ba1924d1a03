// Compatibility tests for symbol_map and its scoped bindings, which live in slinky/runtime/expr.h
// (docs/api.md section 1; checklist item 15 of README.md).
#include <gtest/gtest.h>

#include <optional>
#include <type_traits>
#include <utility>

#include "slinky/runtime/expr.h"

namespace {

using namespace slinky;

}  // namespace

TEST(compat_symbol_map, lookup_and_growth) {
  var x(0), y(3), z(5);
  symbol_map<int> m;
  EXPECT_FALSE(m.contains(x));
  m[x] = 5;  // grows
  EXPECT_TRUE(m.contains(x));
  EXPECT_GE(m.size(), 1u);
  std::optional<int> found = m.lookup(x);
  ASSERT_TRUE(found);
  EXPECT_EQ(*found, 5);
  EXPECT_FALSE(m.lookup(y));
  EXPECT_EQ(m.lookup(y, 7), 7);
  EXPECT_EQ(m.lookup(x, 7), 5);
  const symbol_map<int>& cm = m;
  EXPECT_EQ(cm[x], 5);
  EXPECT_FALSE(cm[z]);  // const access does not grow
  m[y] = 2;
  EXPECT_GE(m.size(), 4u);
  EXPECT_EQ(m[std::size_t{3}], 2);
  EXPECT_EQ(cm[std::size_t{0}], 5);
  int present = 0;
  for (const std::optional<int>& v : m) present += v.has_value();
  EXPECT_EQ(present, 2);
  m.erase(x);
  EXPECT_FALSE(m.contains(x));
  m.clear();
  EXPECT_FALSE(m.contains(y));

  symbol_map<int> init = {{x, 1}, {z, 3}};
  EXPECT_EQ(init.lookup(z), 3);
  EXPECT_FALSE(init.lookup(y));
  symbol_map<int> reserved(10);
  EXPECT_FALSE(reserved.contains(var(9)));
  reserved.reserve(20);
  EXPECT_FALSE(reserved.contains(var(19)));
}

TEST(compat_symbol_map, scoped_values) {
  var x(1);
  symbol_map<int> m;
  m[x] = 1;
  {
    scoped_value_in_symbol_map<int> s(m, x, 10);
    EXPECT_EQ(m.lookup(x), 10);
    EXPECT_EQ(s.sym(), x);
    EXPECT_EQ(s.old_value(), 1);
    {
      auto inner = set_value_in_scope(m, x, 20);
      EXPECT_EQ(m.lookup(x), 20);
    }
    EXPECT_EQ(m.lookup(x), 10);
    {
      auto cleared = set_value_in_scope(m, x, std::nullopt);
      EXPECT_FALSE(m.contains(x));
    }
    EXPECT_EQ(m.lookup(x), 10);
    {
      auto opt = set_value_in_scope(m, x, std::optional<int>(30));
      EXPECT_EQ(m.lookup(x), 30);
      scoped_value_in_symbol_map<int> moved = std::move(opt);  // move-only
      EXPECT_EQ(m.lookup(x), 30);
    }
    EXPECT_EQ(m.lookup(x), 10);
  }
  EXPECT_EQ(m.lookup(x), 1);
  static_assert(!std::is_copy_constructible_v<scoped_value_in_symbol_map<int>>, "move-only");

  {
    // (map, var) saves the value and leaves it; restoring puts the saved value back.
    scoped_value_in_symbol_map<int> saved(m, x);
    EXPECT_EQ(m.lookup(x), 1);
    m[x] = 99;
    saved.exit_scope();  // restores early
    EXPECT_EQ(m.lookup(x), 1);
    m[x] = 5;
  }
  EXPECT_EQ(m.lookup(x), 5);  // exit_scope already restored; the destructor does nothing more
  {
    scoped_value_in_symbol_map<int> from_optional(m, x, std::optional<int>());
    EXPECT_FALSE(m.contains(x));
  }
  EXPECT_EQ(m.lookup(x), 5);
}
