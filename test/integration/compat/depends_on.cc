// Compatibility tests for slinky/runtime/depends_on.h (docs/api.md section 1; checklist item 18 of
// README.md): how a node uses a symbol.
#include <gtest/gtest.h>

#include <utility>
#include <vector>

#include "slinky/runtime/depends_on.h"
#include "slinky/runtime/expr.h"
#include "slinky/runtime/stmt.h"

namespace {

using namespace slinky;

}  // namespace

TEST(compat_depends_on, expressions) {
  var x(0), y(1), b(2);
  depends_on_result r = depends_on(expr(x) + 1, x);
  EXPECT_TRUE(r.var);
  EXPECT_TRUE(r.any());
  EXPECT_FALSE(r.buffer());
  EXPECT_FALSE(depends_on(expr(x) + 1, y).any());
  depends_on_result meta = depends_on(buffer_min(b, 0), b);
  EXPECT_TRUE(meta.any());
  EXPECT_FALSE(meta.var);
  EXPECT_FALSE(meta.buffer_base);
  depends_on_result base = depends_on(buffer_at(b), b);
  EXPECT_TRUE(base.buffer_base);
  EXPECT_FALSE(depends_on(bounds(x, 3), y).any());
  EXPECT_TRUE(depends_on(bounds(x, 3), x).var);

  const var xy[] = {x, y};
  EXPECT_TRUE(depends_on(expr(y) * 2, xy));
  const var only_b[] = {b};
  EXPECT_FALSE(depends_on(expr(y) * 2, only_b));

  depends_on_result rx, ry;
  const std::pair<var, depends_on_result&> both[] = {{x, rx}, {y, ry}};
  depends_on(expr(x) - 4, both);
  EXPECT_TRUE(rx.var);
  EXPECT_FALSE(ry.any());
  depends_on_result single;
  depends_on(expr(y), y, single);
  EXPECT_TRUE(single.var);

  EXPECT_TRUE(is_pure(expr(x) + y));
  EXPECT_FALSE(has_side_effects(expr(x) + y));
  EXPECT_EQ(find_dependencies(expr(y) + x * 2), (std::vector<var>{x, y}));
  EXPECT_EQ(find_buffer_data_dependency(buffer_at(b, expr(x))), b);
}

TEST(compat_depends_on, statements) {
  var in(0), out(1), src(2), dst(3), x(4);
  stmt call = call_stmt::make(nullptr, {in}, {out}, {}, {});
  depends_on_result ri = depends_on(call, in);
  EXPECT_TRUE(ri.buffer_input);
  EXPECT_FALSE(ri.buffer_output);
  EXPECT_TRUE(ri.buffer_read());
  EXPECT_FALSE(ri.buffer_write());
  depends_on_result ro = depends_on(call, out);
  EXPECT_TRUE(ro.buffer_output);
  EXPECT_TRUE(ro.buffer_write());
  EXPECT_TRUE(ro.buffer());

  stmt copy = copy_stmt::make(nullptr, src, {expr(x)}, dst, {x}, var());
  EXPECT_TRUE(depends_on(copy, src).buffer_src);
  EXPECT_TRUE(depends_on(copy, dst).buffer_dst);
  EXPECT_FALSE(depends_on(copy, in).any());

  stmt both = block::make({call, copy});
  EXPECT_EQ(find_buffer_dependencies(both), (std::vector<var>{in, out, src, dst}));
  EXPECT_EQ(find_buffer_dependencies(both, true, false), (std::vector<var>{in, src}));
  EXPECT_EQ(find_buffer_dependencies(both, false, true), (std::vector<var>{out, dst}));
  EXPECT_EQ(find_buffer_dependencies(both, true, false, false, false), (std::vector<var>{in}));
  EXPECT_EQ(find_dependencies(call), (std::vector<var>{in, out}));
  EXPECT_TRUE(can_substitute_buffer(depends_on(buffer_min(in, 0), in)));
}
