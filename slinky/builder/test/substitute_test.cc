// Tests of substitute.h: match and compare (with every overload and statement kind), node_less,
// the substitutor hooks, substitution of symbols and buffer metadata with shadowing, and
// structural substitution.
#include <gtest/gtest.h>

#include <map>
#include <set>
#include <string>
#include <vector>

#include "slinky/builder/substitute.h"
#include "slinky/runtime/print.h"

namespace slinky {
namespace {

stmt call_of(std::vector<var> in, std::vector<var> out, std::vector<expr> scalars = {}) {
  return call_stmt::make(nullptr, std::move(in), std::move(out), std::move(scalars), {});
}

struct symbols {
  node_context ctx;
  var x{ctx, "x"}, y{ctx, "y"}, z{ctx, "z"}, b{ctx, "b"}, c{ctx, "c"}, d{ctx, "d"};
};

TEST(substitute, match_overloads) {
  symbols s;
  const expr e = expr(s.x) + 1;
  const expr e2 = expr(s.x) + 1;
  const expr_ref r = e2;
  EXPECT_TRUE(match(e, e2));
  EXPECT_TRUE(match(r, e));
  EXPECT_TRUE(match(e, r));
  EXPECT_TRUE(match(r, r));
  EXPECT_TRUE(match(e.get(), e2.get()));
  EXPECT_FALSE(match(e, expr(s.x) + 2));
  EXPECT_TRUE(match(expr(s.x), s.x));
  EXPECT_TRUE(match(s.x, expr(s.x)));
  EXPECT_TRUE(match(expr_ref(expr(s.x)), s.x));
  EXPECT_FALSE(match(buffer_min(s.x, 0), s.x));
  EXPECT_FALSE(match(e, s.x));
  EXPECT_TRUE(match(s.x, s.x));
  EXPECT_FALSE(match(s.x, s.y));
  EXPECT_TRUE(match(expr(3), 3));
  EXPECT_TRUE(match(3, expr(3)));
  EXPECT_TRUE(match(expr(0), 0));
  EXPECT_FALSE(match(expr(3), 4));
  EXPECT_FALSE(match(expr(s.x), 0));
  // A var and an integer: never a match, and not ambiguous (API_COMPAT 5.2 item 11).
  EXPECT_FALSE(match(s.x, 0));
  EXPECT_FALSE(match(3, s.x));
  EXPECT_FALSE(match(s.x, index_t{3}));
  EXPECT_TRUE(match(expr(), expr()));
  EXPECT_FALSE(match(expr(), e));

  EXPECT_TRUE(match(bounds(s.x, 2), bounds(s.x, 2)));
  EXPECT_FALSE(match(bounds(s.x, 2), bounds(s.x, 3)));
  EXPECT_TRUE(match(interval_expr(), interval_expr()));
  EXPECT_TRUE(match(dim_expr(bounds(0, s.x), 4), dim_expr(bounds(0, s.x), 4)));
  EXPECT_FALSE(match(dim_expr(bounds(0, s.x), 4), dim_expr(bounds(0, s.x), 4, 8)));
  EXPECT_FALSE(match(dim_expr(bounds(0, s.x), 4), dim_expr(bounds(0, s.x), 2)));
  EXPECT_TRUE(match(box_expr{bounds(0, 1), point(s.x)}, box_expr{bounds(0, 1), point(s.x)}));
  EXPECT_FALSE(match(box_expr{bounds(0, 1)}, box_expr{bounds(0, 1), point(s.x)}));
}

// Two structurally equal copies of each statement kind, and a variant that differs.
std::vector<std::pair<stmt, stmt>> statement_pairs(symbols& s) {
  auto body = [&]() { return call_of({s.b}, {s.c}, {expr(s.x)}); };
  auto other = [&]() { return call_of({s.c}, {s.b}); };
  std::vector<std::pair<stmt, stmt>> result;
  for (int variant = 0; variant < 2; ++variant) {
    const index_t k = variant;
    std::vector<stmt> v = {
        call_of({s.b}, {s.c}, {expr(s.x) + k}),
        copy_stmt::make(nullptr, s.b, {expr(s.x) + k}, s.c, {s.x}),
        let_stmt::make(s.y, k, body()),
        block::make({body(), check::make(expr(s.x) < k)}),
        loop::make(s.x, loop::serial, bounds(0, k), 1, body()),
        allocate::make(s.d, memory_type::heap, 4 + k, {dim_expr(bounds(0, 9))}, body()),
        make_buffer::make(s.d, 0, 4 + k, {}, body()),
        clone_buffer::make(s.d, variant ? s.c : s.b, body()),
        crop_buffer::make(s.d, s.b, {bounds(k, 5)}, body()),
        crop_dim::make(s.d, s.b, 0, bounds(k, 5), body()),
        slice_buffer::make(s.d, s.b, {expr(k)}, body()),
        slice_dim::make(s.d, s.b, 0, k, body()),
        transpose::make(s.d, s.b, variant ? std::vector<int>{0, 1} : std::vector<int>{1, 0}, body()),
        async::make(s.d, check::make(expr(s.x) < k), body()),
        check::make(expr(s.x) < k),
        if_then_else::make(expr(s.x) < k, body(), other()),
    };
    for (std::size_t i = 0; i < v.size(); ++i) {
      if (variant == 0) {
        result.push_back({v[i], stmt()});
      } else {
        result[i].second = v[i];
      }
    }
  }
  return result;
}

TEST(substitute, match_and_compare_statements) {
  symbols s;
  const auto pairs = statement_pairs(s);
  const auto copies = statement_pairs(s);
  for (std::size_t i = 0; i < pairs.size(); ++i) {
    const stmt& a = pairs[i].first;
    const stmt& a2 = copies[i].first;
    const stmt& b = pairs[i].second;
    ASSERT_FALSE(a.same_as(a2));
    EXPECT_TRUE(match(a, a2)) << a;
    EXPECT_EQ(compare(a, a2), 0) << a;
    EXPECT_FALSE(match(a, b)) << a << " vs " << b;
    EXPECT_NE(compare(a, b), 0) << a;
    EXPECT_EQ(compare(a, b), -compare(b, a)) << a;
    // Different kinds differ.
    const stmt& next = pairs[(i + 1) % pairs.size()].first;
    EXPECT_NE(compare(a, next), 0);
    EXPECT_FALSE(match(a, stmt()));
    EXPECT_LT(compare(stmt(), a), 0);
  }
  EXPECT_TRUE(match(stmt(), stmt()));
  // Callbacks cannot be compared: calls with different non-empty targets differ (by identity).
  const auto f = [](const call_stmt*, eval_context&) -> index_t { return 0; };
  const stmt c1 = call_stmt::make(f, {s.b}, {s.c}, {}, {});
  const stmt c2 = call_stmt::make(f, {s.b}, {s.c}, {}, {});
  EXPECT_TRUE(match(c1, c1));
  EXPECT_FALSE(match(c1, c2));
  EXPECT_FALSE(match(c1, call_of({s.b}, {s.c})));
  // Attributes count.
  call_stmt::attributes named;
  named.name = "f";
  EXPECT_FALSE(match(call_stmt::make(nullptr, {s.b}, {s.c}, {}, named), call_of({s.b}, {s.c})));
}

// Constant buffers are compared by contents (API_COMPAT 5.2 item 10): element size, rank, bounds,
// then the elements; not by address, and not by layout.
TEST(substitute, constant_buffers_compare_by_contents) {
  symbols s;
  const stmt body = call_of({s.b}, {s.c});
  auto make = [](std::vector<int> values, index_t min = 0) {
    buffer<int, 1> b({static_cast<index_t>(values.size())});
    b.translate(min);
    raw_buffer_ptr result = raw_buffer::make(1, sizeof(int), b.dims);
    for (std::size_t i = 0; i < values.size(); ++i) {
      *static_cast<int*>(result->address_at(min + static_cast<index_t>(i))) = values[i];
    }
    return result;
  };
  auto constant = [&](raw_buffer_ptr value) { return constant_buffer::make(s.b, std::move(value), body); };
  const raw_buffer_ptr a = make({1, 2, 3});
  EXPECT_TRUE(match(constant(a), constant(a)));
  EXPECT_TRUE(match(constant(a), constant(make({1, 2, 3}))));
  EXPECT_FALSE(match(constant(a), constant(make({1, 2, 4}))));
  EXPECT_FALSE(match(constant(a), constant(make({1, 2}))));
  EXPECT_FALSE(match(constant(a), constant(make({1, 2, 3}, 1))));
  EXPECT_FALSE(match(constant(a), constant(raw_buffer::make_scalar<int>(1))));
  EXPECT_TRUE(match(constant(raw_buffer::make_scalar<int>(7)), constant(raw_buffer::make_scalar<int>(7))));
  EXPECT_FALSE(match(constant(raw_buffer::make_scalar<int>(7)), constant(raw_buffer::make_scalar<short>(7))));
  // The order is consistent both ways.
  EXPECT_LT(compare(constant(a), constant(make({1, 2, 4}))), 0);
  EXPECT_GT(compare(constant(make({1, 2, 4})), constant(a)), 0);

  // Another layout of the same values: a transposed 2x3 buffer.
  int values[6] = {1, 2, 3, 4, 5, 6};
  dim row_major[] = {dim(0, 2, 4), dim(0, 1, 12)};
  dim column_major[] = {dim(0, 2, 8), dim(0, 1, 4)};
  int transposed[6] = {1, 4, 2, 5, 3, 6};
  const raw_buffer r{values, 4, 2, row_major};
  const raw_buffer t{transposed, 4, 2, column_major};
  ASSERT_EQ(*static_cast<int*>(t.address_at(2, 1)), 6);
  EXPECT_TRUE(match(constant(raw_buffer::make_copy(r)), constant(raw_buffer::make_copy(t))));
  // Null bases (absent optional inputs) of the same shape match each other, not a buffer with data.
  const raw_buffer null_r{nullptr, 4, 2, row_major};
  EXPECT_TRUE(match(constant(std::make_shared<raw_buffer>(null_r)), constant(std::make_shared<raw_buffer>(null_r))));
  EXPECT_FALSE(match(constant(std::make_shared<raw_buffer>(null_r)), constant(raw_buffer::make_copy(r))));
  EXPECT_TRUE(match(constant(nullptr), constant(nullptr)));
  EXPECT_FALSE(match(constant(nullptr), constant(a)));
}

TEST(substitute, compare_is_a_total_order) {
  symbols s;
  const expr x = s.x, y = s.y;
  std::vector<expr> exprs = {x,
                             y,
                             x + y,
                             y + x,
                             x * 2,
                             x - 1,
                             min(x, y),
                             max(x, y),
                             x < y,
                             0,
                             1,
                             -1,
                             buffer_min(s.b, 0),
                             buffer_max(s.b, 0),
                             select(x, y, 1),
                             abs(x),
                             let::make(s.z, 1, x),
                             expr()};
  for (const expr& a : exprs) {
    EXPECT_EQ(compare(a, a), 0);
    for (const expr& b : exprs) {
      EXPECT_EQ(compare(a, b) < 0, compare(b, a) > 0);
      EXPECT_EQ(compare(a, b) == 0, a.same_as(b));
      for (const expr& c : exprs) {
        if (compare(a, b) < 0 && compare(b, c) < 0) {
          EXPECT_LT(compare(a, c), 0);
        }
      }
    }
  }
  EXPECT_EQ(compare(expr_ref(x), expr(s.x)), 0);
  EXPECT_LT(compare(expr(0), expr_ref(expr(1))), 0);
  EXPECT_LT(compare(s.x, s.y), 0);
  EXPECT_GT(compare(s.y, s.x), 0);
  EXPECT_EQ(compare(s.x, s.x), 0);

  // node_less orders sets and maps structurally.
  std::set<expr, node_less> set = {x + 1, expr(s.x) + 1, y};
  EXPECT_EQ(set.size(), 2u);
  std::map<var, int, node_less> vars = {{s.y, 1}, {s.x, 0}};
  EXPECT_EQ(vars.begin()->first, s.x);
  std::set<stmt, node_less> stmts = {check::make(x), check::make(s.x), check::make(y)};
  EXPECT_EQ(stmts.size(), 2u);
  EXPECT_TRUE(node_less()(expr_ref(expr(0)), expr_ref(expr(1))));
}

TEST(substitute, symbols_in_expressions) {
  symbols s;
  const var x = s.x, y = s.y, z = s.z, b = s.b, c = s.c;
  EXPECT_TRUE(match(substitute(expr(x) + y, x, z * 2), expr(z) * 2 + y));
  const expr unchanged = expr(y) + 1;
  EXPECT_TRUE(substitute(unchanged, x, 3).same_as(unchanged));
  // Shadowing by a let: the value is substituted, the body is not.
  EXPECT_TRUE(
      match(substitute(let::make(x, expr(x) + 1, expr(x) * 2), x, 5), let::make(x, add::make(5, 1), expr(x) * 2)));
  EXPECT_TRUE(match(substitute(let::make({{y, x}, {x, 1}, {z, x}}, expr(x) + y + z), x, 7),
                    let::make({{y, 7}, {x, 1}, {z, x}}, expr(x) + y + z)));
  // Buffer metadata follows a buffer replaced by another symbol, and stays otherwise.
  EXPECT_TRUE(match(substitute(buffer_min(b, 1) + b, b, expr(c)), buffer_min(c, 1) + c));
  EXPECT_TRUE(match(substitute(buffer_min(b, 1) + b, b, expr(3)), buffer_min(b, 1) + 3));
  // Intervals and dims.
  EXPECT_TRUE(match(substitute(bounds(x, expr(x) + 1), x, y), bounds(y, expr(y) + 1)));
  const dim_expr d(bounds(x, 10), expr(x) * 4, y);
  EXPECT_TRUE(match(substitute(d, x, 2), dim_expr(bounds(2, 10), mul::make(2, 4), y)));
  EXPECT_TRUE(match(substitute(d, y, z), dim_expr(bounds(x, 10), expr(x) * 4, z)));
}

TEST(substitute, symbols_in_statements) {
  symbols s;
  const var x = s.x, y = s.y, z = s.z, b = s.b, c = s.c, d = s.d;
  const stmt body = call_of({b}, {c}, {expr(x) + buffer_min(b, 0)});
  // Renaming a buffer renames its statement uses and metadata.
  EXPECT_TRUE(match(substitute(body, b, expr(d)), call_of({d}, {c}, {expr(x) + buffer_min(d, 0)})));
  // A non-symbol replacement only replaces values.
  EXPECT_TRUE(match(substitute(body, x, 3), call_of({b}, {c}, {expr(3) + buffer_min(b, 0)})));
  EXPECT_TRUE(match(substitute(body, b, 3), body));
  EXPECT_TRUE(substitute(body, z, 3).same_as(body));

  // Each declaration shadows the symbol in its body but not in what it computes.
  const stmt l = loop::make(x, loop::serial, bounds(0, x), 1, body);
  EXPECT_TRUE(match(substitute(l, x, y), loop::make(x, loop::serial, bounds(0, y), 1, body)));
  EXPECT_TRUE(match(substitute(l, z, y), l));
  const stmt a = allocate::make(b, memory_type::heap, 4, {dim_expr(bounds(0, buffer_max(b, 0)))}, body);
  EXPECT_TRUE(match(substitute(a, b, expr(d)),
                    allocate::make(b, memory_type::heap, 4, {dim_expr(bounds(0, buffer_max(d, 0)))}, body)));
  const stmt crop = crop_dim::make(b, b, 0, bounds(0, buffer_max(b, 0) - 1), body);
  EXPECT_TRUE(match(substitute(crop, b, expr(d)), crop_dim::make(b, d, 0, bounds(0, buffer_max(d, 0) - 1), body)));
  const stmt crop2 = crop_buffer::make(c, b, {bounds(0, x)}, body);
  EXPECT_TRUE(match(substitute(crop2, x, 1),
                    crop_buffer::make(c, b, {bounds(0, 1)}, call_of({b}, {c}, {expr(1) + buffer_min(b, 0)}))));
  EXPECT_TRUE(match(substitute(slice_dim::make(c, b, 0, x, body), c, expr(d)), slice_dim::make(c, b, 0, x, body)));
  EXPECT_TRUE(match(substitute(slice_buffer::make(d, b, {x}, body), b, expr(z)),
                    slice_buffer::make(d, z, {x}, call_of({z}, {c}, {expr(x) + buffer_min(z, 0)}))));
  EXPECT_TRUE(match(substitute(transpose::make(d, b, {0}, body), b, expr(z)),
                    transpose::make(d, z, {0}, call_of({z}, {c}, {expr(x) + buffer_min(z, 0)}))));
  EXPECT_TRUE(match(substitute(clone_buffer::make(b, c, body), b, expr(z)), clone_buffer::make(b, c, body)));
  EXPECT_TRUE(match(substitute(make_buffer::make(b, x, 4, {}, body), x, 0),
                    make_buffer::make(b, 0, 4, {}, call_of({b}, {c}, {expr(0) + buffer_min(b, 0)}))));
  EXPECT_TRUE(
      match(substitute(constant_buffer::make(b, nullptr, body), b, expr(z)), constant_buffer::make(b, nullptr, body)));
  // async: the task is outside the symbol's scope.
  const stmt as = async::make(x, check::make(expr(x) < 1), check::make(wait_for(x)));
  EXPECT_TRUE(match(substitute(as, x, 3), async::make(x, check::make(less::make(3, 1)), check::make(wait_for(x)))));
  // Copies: dst_x are declared in src_x.
  const stmt copy = copy_stmt::make(nullptr, b, {expr(x) + y}, c, {x});
  EXPECT_TRUE(match(substitute(copy, x, 3), copy));
  EXPECT_TRUE(match(substitute(copy, y, 3), copy_stmt::make(nullptr, b, {expr(x) + 3}, c, {x})));
  EXPECT_TRUE(match(substitute(copy, c, expr(d)), copy_stmt::make(nullptr, b, {expr(x) + y}, d, {x})));
  // let_stmt keeps is_closure.
  const stmt closure = let_stmt::make({{y, x}}, check::make(y), true);
  const stmt closure2 = substitute(closure, x, z);
  ASSERT_TRUE(closure2.as<let_stmt>());
  EXPECT_TRUE(closure2.as<let_stmt>()->is_closure);
  EXPECT_TRUE(match(closure2, let_stmt::make({{y, z}}, check::make(y), true)));
}

// A replacement is never captured by a declaration of a symbol it uses: that scope is left as it is
// (no fresh name can be made to rename the declaration). API_COMPAT 5.2 item 10 names slice_dim.
TEST(substitute, replacements_are_not_captured) {
  symbols s;
  const var x = s.x, y = s.y, b = s.b, c = s.c;
  // Under slice_dim(b, b, 0, ...), b is the slice: buffer_min(b, 1) there would read another dim
  // than the replacement means (and y another buffer).
  const stmt body = check::make(expr(x) < 10);
  for (const expr& replacement : {buffer_min(b, 1), expr(b), expr(b) + y}) {
    const stmt sliced = slice_dim::make(b, b, 0, x, body);
    // The slice's coordinate is outside its scope: replaced there.
    EXPECT_TRUE(match(substitute(sliced, x, replacement), slice_dim::make(b, b, 0, replacement, body))) << replacement;
    const stmt other = slice_dim::make(c, b, 0, 0, body);
    EXPECT_TRUE(match(substitute(other, x, replacement), slice_dim::make(c, b, 0, 0, check::make(replacement < 10))));
  }
  EXPECT_TRUE(match(substitute(slice_dim::make(y, b, 0, 0, body), x, expr(y) * 2), slice_dim::make(y, b, 0, 0, body)));
  // The same for the other declarations.
  EXPECT_TRUE(match(substitute(let_stmt::make(y, 1, body), x, y), let_stmt::make(y, 1, body)));
  EXPECT_TRUE(match(substitute(let::make(y, 1, expr(x) + y), x, y), let::make(y, 1, expr(x) + y)));
  EXPECT_TRUE(match(substitute(loop::make(y, loop::serial, bounds(0, x), 1, body), x, y),
                    loop::make(y, loop::serial, bounds(0, y), 1, body)));
  EXPECT_TRUE(match(substitute(crop_dim::make(b, c, 0, bounds(0, 1), body), x, buffer_max(b, 0)),
                    crop_dim::make(b, c, 0, bounds(0, 1), body)));
  // Lets after the capturing one are left alone too.
  EXPECT_TRUE(match(substitute(let::make({{c, x}, {y, 1}, {s.z, x}}, expr(x) + y), x, y),
                    let::make({{c, y}, {y, 1}, {s.z, x}}, expr(x) + y)));
  // Unrelated declarations do not stop the substitution.
  EXPECT_TRUE(match(substitute(let_stmt::make(s.z, 1, body), x, y), let_stmt::make(s.z, 1, check::make(expr(y) < 10))));
}

// A substitutor that records the declarations it sees, and renames one symbol's declarations.
class recording_substitutor : public substitutor {
public:
  var rename_from, rename_to;
  std::vector<var> entered;
  int depth = 0;
  int max_depth = 0;

  var visit_symbol(var sym) override { return depth > 0 && sym == rename_from ? rename_to : sym; }
  var enter_decl(var sym) override {
    entered.push_back(sym);
    ++depth;
    max_depth = std::max(max_depth, depth);
    return sym == rename_from ? rename_to : sym;
  }
  void exit_decls(int n) override { depth -= n; }
};

TEST(substitute, substitutor_hooks) {
  symbols s;
  const var x = s.x, y = s.y, b = s.b, c = s.c;
  recording_substitutor r;
  r.rename_from = y;
  r.rename_to = s.z;
  // The loop declares x, the let y (renamed to z with its uses).
  const stmt st = loop::make(x, loop::serial, bounds(0, 10), 1,
                             let_stmt::make(y, x, crop_dim::make(c, b, 0, point(y), call_of({c}, {}))));
  const stmt result = r.mutate(st);
  EXPECT_EQ(r.entered, (std::vector<var>{x, y, c}));
  EXPECT_EQ(r.depth, 0);
  EXPECT_EQ(r.max_depth, 3);
  EXPECT_TRUE(match(result, loop::make(x, loop::serial, bounds(0, 10), 1,
                                       let_stmt::make(s.z, x, crop_dim::make(c, b, 0, point(s.z), call_of({c}, {}))))));
  // Nothing renamed: the same node comes back.
  recording_substitutor none;
  EXPECT_TRUE(none.mutate(st).same_as(st));

  // The default rank hook.
  class rank_substitutor : public substitutor {
  public:
    var buf;
    int get_target_buffer_rank(var sym) override { return sym == buf ? 3 : -1; }
  } ranks;
  ranks.buf = b;
  EXPECT_TRUE(match(ranks.mutate(buffer_rank(b) + buffer_rank(c)), expr(3) + buffer_rank(c)));
  EXPECT_TRUE(match(ranks.mutate(buffer_min(b, 0)), buffer_min(b, 0)));
}

TEST(substitute, substitute_buffer) {
  symbols s;
  const var x = s.x, b = s.b, c = s.c;
  const std::vector<dim_expr> dims = {dim_expr(bounds(x, expr(x) + 9), 4), dim_expr(bounds(0, 2))};
  const expr e = buffer_min(b, 0) + buffer_max(b, 0) + buffer_stride(b, 0) + buffer_fold_factor(b, 0) +
                 buffer_min(b, 1) + buffer_stride(b, 1) + buffer_min(b, 2) + buffer_rank(b) + buffer_elem_size(b) +
                 buffer_size_bytes(b);
  // Without def, what the dims do not give stays.
  EXPECT_TRUE(match(substitute_buffer(e, b, dims), expr(x) + (expr(x) + 9) + 4 + buffer_fold_factor(b, 0) + 0 +
                                                       buffer_stride(b, 1) + buffer_min(b, 2) + 2 +
                                                       buffer_elem_size(b) + buffer_size_bytes(b)));
  // Without def the dims are the whole buffer: a dim beyond them is an implicit broadcast, whose
  // stride is 0 (API_COMPAT 5.2 item 10). Its bounds and fold factor stay, as above.
  EXPECT_TRUE(match(substitute_buffer(buffer_stride(b, 2) + buffer_stride(b, 5), b, dims), add::make(0, 0)));
  EXPECT_TRUE(match(substitute_buffer(buffer_fold_factor(b, 2) + buffer_max(b, 2), b, dims),
                    buffer_fold_factor(b, 2) + buffer_max(b, 2)));
  EXPECT_TRUE(match(substitute_buffer(buffer_stride(b, 0), b, std::vector<dim_expr>{}), expr(0)));
  // With def, it is def's (the rank too: the dims may describe only some dimensions).
  EXPECT_TRUE(match(substitute_buffer(e, b, 8, dims, c), expr(x) + (expr(x) + 9) + 4 + buffer_fold_factor(c, 0) + 0 +
                                                             buffer_stride(c, 1) + buffer_min(c, 2) + buffer_rank(c) +
                                                             8 + buffer_size_bytes(b)));
  // Other uses of the buffer stay.
  EXPECT_TRUE(match(substitute_buffer(buffer_at(b) + b, b, dims, c), buffer_at(b) + b));
  // Intervals.
  EXPECT_TRUE(match(substitute_buffer(buffer_bounds(b, 1), b, dims), bounds(0, 2)));
  EXPECT_TRUE(match(substitute_buffer(buffer_bounds(b, 1), b, expr(2), dims), bounds(0, 2)));
  // Statements, with shadowing.
  const stmt st = block::make({check::make(buffer_min(b, 0) == 0), crop_dim::make(b, b, 0, bounds(0, buffer_max(b, 0)),
                                                                                  check::make(buffer_min(b, 0) < 1))});
  EXPECT_TRUE(match(substitute_buffer(st, b, dims),
                    block::make({check::make(expr(x) == 0),
                                 crop_dim::make(b, b, 0, bounds(0, expr(x) + 9), check::make(buffer_min(b, 0) < 1))})));
  EXPECT_TRUE(match(substitute_buffer(st, b, 4, dims), substitute_buffer(st, b, dims)));
  // The dims of a crop_dim, from the crop's bounds and the source.
  const std::vector<dim_expr> crop = make_dims_from_bounds(1, bounds(3, 5));
  ASSERT_EQ(crop.size(), 2u);
  EXPECT_FALSE(crop[0].bounds.min.defined());
  EXPECT_TRUE(match(substitute_buffer(buffer_min(b, 1) + buffer_min(b, 0) + buffer_stride(b, 1), b, crop, c),
                    expr(3) + buffer_min(c, 0) + buffer_stride(c, 1)));
  // With def, the dims beyond are def's, strides included.
  EXPECT_TRUE(match(substitute_buffer(buffer_stride(b, 2), b, crop, c), buffer_stride(c, 2)));
  EXPECT_TRUE(make_dims_from_bounds(-1, bounds(3, 5)).empty());
  const std::vector<dim_expr> box = make_dims_from_bounds(box_expr{bounds(0, 1), point(x)});
  ASSERT_EQ(box.size(), 2u);
  EXPECT_TRUE(match(box[1].bounds, point(x)));
  EXPECT_FALSE(box[1].stride.defined());
  EXPECT_FALSE(box[1].fold_factor.defined());
}

TEST(substitute, structural) {
  symbols s;
  const expr x = s.x, y = s.y;
  EXPECT_TRUE(match(substitute((x + 1) * (x + 1) + x, x + 1, y), y * y + x));
  EXPECT_TRUE(match(substitute(buffer_min(s.b, 0) + 1, buffer_min(s.b, 0), 5), add::make(5, 1)));
  // Outermost first, and the replacement is not searched again.
  EXPECT_TRUE(match(substitute(x + 1, x + 1, (x + 1) * 2), (x + 1) * 2));
  // Shadowing is ignored.
  EXPECT_TRUE(match(substitute(let::make(s.x, 1, x + 1), x + 1, y), let::make(s.x, 1, y)));
  const expr e = x * 2;
  EXPECT_TRUE(substitute(e, x + 1, y).same_as(e));
  EXPECT_TRUE(substitute(e, expr(), y).same_as(e));
  // A var target is a symbol substitution (with shadowing).
  EXPECT_TRUE(match(substitute(let::make(s.x, 1, x + 1), s.x, y), let::make(s.x, 1, x + 1)));
}

}  // namespace
}  // namespace slinky
