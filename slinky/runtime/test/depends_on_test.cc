// Tests of depends_on.h: the kind of use of a symbol by every expression and statement kind,
// shadowing by declarations, buffer views, and the queries built on the same traversal; and of
// node_finder.h's any_node.
#include <gtest/gtest.h>

#include <type_traits>
#include <utility>
#include <vector>

#include "slinky/runtime/depends_on.h"
#include "slinky/runtime/expr.h"
#include "slinky/runtime/node_finder.h"
#include "slinky/runtime/node_mutator.h"
#include "slinky/runtime/print.h"
#include "slinky/runtime/stmt.h"

namespace slinky {
namespace {

// The result with the given flags set (var, input, output, src, dst, base, dims, bounds).
depends_on_result uses(bool v, bool input, bool output, bool src, bool dst, bool base, bool dims, bool bounds) {
  depends_on_result r;
  r.var = v;
  r.buffer_input = input;
  r.buffer_output = output;
  r.buffer_src = src;
  r.buffer_dst = dst;
  r.buffer_base = base;
  r.buffer_dims = dims;
  r.buffer_bounds = bounds;
  return r;
}
const depends_on_result none = uses(false, false, false, false, false, false, false, false);
const depends_on_result value = uses(true, false, false, false, false, false, false, false);
const depends_on_result field = uses(false, false, false, false, false, false, true, false);
const depends_on_result bounds_field = uses(false, false, false, false, false, false, true, true);
const depends_on_result base_and_dims = uses(false, false, false, false, false, true, true, true);
const depends_on_result call_input = uses(false, true, false, false, false, true, true, true);
const depends_on_result call_output = uses(false, false, true, false, false, true, true, true);
const depends_on_result copy_src = uses(false, false, false, true, false, true, true, true);
const depends_on_result copy_dst = uses(false, false, false, false, true, true, true, true);

stmt call_of(std::vector<var> in, std::vector<var> out, std::vector<expr> scalars = {}) {
  return call_stmt::make(nullptr, std::move(in), std::move(out), std::move(scalars), {});
}

struct symbols {
  node_context ctx;
  var x{ctx, "x"}, y{ctx, "y"}, z{ctx, "z"}, b{ctx, "b"}, c{ctx, "c"}, d{ctx, "d"};
};

}  // namespace

// A client's own operator== for depends_on_result (the original declares none, so its tests
// define one), exact or generic, is chosen over ours without ambiguity (API_COMPAT 5.2 item 11).
namespace client_exact {
int calls = 0;
bool operator==(const depends_on_result&, const depends_on_result&) {
  ++calls;
  return true;
}
bool compare_unequal() { return depends_on_result{} == value; }
}  // namespace client_exact

namespace client_generic {
int calls = 0;
template <typename T>
bool operator==(const T&, const T&) {
  ++calls;
  return true;
}
bool compare_unequal() { return depends_on_result{} == value; }
// != compiles too: ours in C++17; in C++20 the client's == negated (a rewritten candidate that
// matches better than ours).
bool not_equal() { return depends_on_result{} != value; }
}  // namespace client_generic

namespace {

TEST(depends_on, a_clients_operator_equal_wins) {
  EXPECT_TRUE(client_exact::compare_unequal());
  EXPECT_EQ(client_exact::calls, 1);
  EXPECT_TRUE(client_generic::compare_unequal());
  EXPECT_EQ(client_generic::calls, 1);
  client_generic::not_equal();
  // Ours, where no other is visible.
  EXPECT_FALSE(depends_on_result{} == value);
  EXPECT_TRUE(depends_on_result{} != value);
}

TEST(depends_on, result_flags) {
  static_assert(!std::is_convertible_v<depends_on_result, bool>, "operator bool is explicit");
  static_assert(std::is_constructible_v<bool, depends_on_result>, "operator bool exists");
  EXPECT_FALSE(none.any());
  EXPECT_FALSE(static_cast<bool>(none));
  EXPECT_TRUE(value.any());
  EXPECT_FALSE(value.buffer());
  EXPECT_TRUE(static_cast<bool>(value));
  EXPECT_TRUE(field.buffer());
  EXPECT_FALSE(field.buffer_data());
  EXPECT_TRUE(call_input.buffer_data());
  EXPECT_TRUE(call_input.buffer_read());
  EXPECT_FALSE(call_input.buffer_write());
  EXPECT_TRUE(copy_src.buffer_read());
  EXPECT_TRUE(call_output.buffer_write());
  EXPECT_TRUE(copy_dst.buffer_write());
  EXPECT_FALSE(copy_dst.buffer_read());
  depends_on_result r = value;
  r |= field;
  EXPECT_EQ(r, uses(true, false, false, false, false, false, true, false));
  EXPECT_NE(r, value);
}

TEST(depends_on, expression_kinds) {
  symbols s;
  const var x = s.x, y = s.y;
  const expr ex = x, ey = y;
  const std::vector<expr> exprs = {
      add::make(ex, ey),
      sub::make(ex, ey),
      mul::make(ex, ey),
      div::make(ex, ey),
      mod::make(ex, ey),
      minimum::make(ex, ey),
      maximum::make(ex, ey),
      equal::make(ex, ey),
      not_equal::make(ex, ey),
      less::make(ex, ey),
      less_equal::make(ex, ey),
      logical_and::make(ex, ey),
      logical_or::make(ex, ey),
      logical_not::make(logical_or::make(ex, ey)),
      conditional::make(ex, ey, 1),
      conditional::make(1, ex, ey),
      call::make(intrinsic::abs, {ex + ey}),
      call::make([](const call*, eval_context&) -> index_t { return 0; }, {ex, ey}),
      let::make(s.z, ex, expr(s.z) + ey),
  };
  for (const expr& e : exprs) {
    EXPECT_EQ(depends_on(e, x), value) << e.type();
    EXPECT_EQ(depends_on(e, y), value) << e.type();
    EXPECT_EQ(depends_on(e, s.b), none) << e.type();
  }
  EXPECT_EQ(depends_on(expr(), x), none);
  EXPECT_EQ(depends_on(expr(3), x), none);
  EXPECT_EQ(depends_on(positive_infinity(), x), none);
  EXPECT_TRUE(depends_on(bounds(ex, ey), y).var);
  EXPECT_TRUE(depends_on(point(ex), x).var);
  EXPECT_FALSE(depends_on(point(ex), y));
}

TEST(depends_on, buffer_metadata) {
  symbols s;
  const var b = s.b;
  EXPECT_EQ(depends_on(buffer_min(b, 0), b), bounds_field);
  EXPECT_EQ(depends_on(buffer_max(b, 1), b), bounds_field);
  EXPECT_EQ(depends_on(buffer_extent(b, 1), b), bounds_field);
  EXPECT_EQ(depends_on(buffer_stride(b, 0), b), field);
  EXPECT_EQ(depends_on(buffer_fold_factor(b, 0), b), field);
  EXPECT_EQ(depends_on(buffer_rank(b), b), field);
  // Reading elem_size is a read of the buffer's metadata (buffer_dims: "any field"), but not of
  // its bounds (buffer_bounds: min or max only). It is not a base read either: elem_size is part
  // of the descriptor, not of the memory (API_COMPAT 5.2 item 10; the original's tests assert a
  // result here, and these are our documented meanings of the fields).
  EXPECT_EQ(depends_on(buffer_elem_size(b), b), field);
  EXPECT_EQ(depends_on(buffer_size_bytes(b), b), field);
  EXPECT_EQ(depends_on(buffer_min(b, 0), s.c), none);
  // buffer_at reads the base and the dims; its indices are values.
  EXPECT_EQ(depends_on(buffer_at(b, s.x), b), base_and_dims);
  EXPECT_EQ(depends_on(buffer_at(b, s.x), s.x), value);
  EXPECT_EQ(depends_on(validate_buffer(b), b), base_and_dims);
  EXPECT_EQ(depends_on(call::make(intrinsic::free, {expr(b)}), b),
            uses(false, false, false, false, false, true, false, false));
  // Other intrinsics use the buffer symbol as a value.
  EXPECT_EQ(depends_on(wait_for(b), b), value);
  EXPECT_EQ(depends_on(semaphore_signal(b), b), value);
  // A buffer symbol both as a value and through its metadata.
  EXPECT_EQ(depends_on(expr(b) + buffer_min(b, 0), b), uses(true, false, false, false, false, false, true, true));
}

TEST(depends_on, let_shadowing) {
  symbols s;
  const var x = s.x, y = s.y;
  // The body's x is the let's.
  EXPECT_FALSE(depends_on(let::make(x, y, expr(x) + 1), x));
  EXPECT_TRUE(depends_on(let::make(x, y, expr(x) + 1), y));
  // The value is outside the let's scope.
  EXPECT_TRUE(depends_on(let::make(x, expr(x) + 1, x), x));
  // Later values see earlier lets.
  EXPECT_FALSE(depends_on(let::make({{x, 1}, {y, x}}, y), x));
  EXPECT_FALSE(depends_on(let::make({{x, 1}, {y, x}}, y), y));
  EXPECT_TRUE(depends_on(let::make({{y, x}, {x, 1}}, y), x));
  // Metadata of a shadowed buffer.
  EXPECT_FALSE(depends_on(let::make(s.b, 0, buffer_min(s.b, 0)), s.b));
  // Shadowing in statements too.
  EXPECT_FALSE(depends_on(let_stmt::make(x, 1, check::make(expr(x) < 2)), x));
  EXPECT_TRUE(depends_on(let_stmt::make(x, y, check::make(expr(x) < 2)), y));
}

TEST(depends_on, calls_and_copies) {
  symbols s;
  const var x = s.x, y = s.y, b = s.b, c = s.c, d = s.d;
  const stmt call = call_of({b}, {c}, {expr(x) * 2});
  EXPECT_EQ(depends_on(call, b), call_input);
  EXPECT_EQ(depends_on(call, c), call_output);
  EXPECT_EQ(depends_on(call, x), value);
  EXPECT_EQ(depends_on(call, y), none);
  // A buffer both read and written.
  EXPECT_EQ(depends_on(call_of({b}, {b}), b), uses(false, true, true, false, false, true, true, true));

  // A copy's source (API_COMPAT 5.2 item 10): buffer_src, and, like a call's input, the whole
  // descriptor and the memory, which the copy implementation (slinky::copy or the client's) is
  // handed: its base (buffer_base), its strides and fold factors to address it (buffer_dims), and
  // its bounds to know which elements it has and where dst is padded (buffer_bounds).
  const stmt copy = copy_stmt::make(nullptr, b, {expr(x) + y}, c, {x}, d);
  EXPECT_EQ(depends_on(copy, b), copy_src);
  EXPECT_EQ(depends_on(copy, c), copy_dst);
  EXPECT_EQ(depends_on(copy, d), copy_src);
  // x is the copy's own dst_x in src_x; y is free.
  EXPECT_EQ(depends_on(copy, x), none);
  EXPECT_EQ(depends_on(copy, y), value);
}

TEST(depends_on, declarations) {
  symbols s;
  const var x = s.x, y = s.y, z = s.z, b = s.b, c = s.c;
  const stmt body = call_of({b}, {c}, {expr(x) + y});

  // Loops: the variable is declared in the body; bounds, step and max_workers are outside.
  const stmt l = loop::make(x, z, bounds(y, expr(x) + 10), 1, body);
  EXPECT_EQ(depends_on(l, x), value);
  EXPECT_EQ(depends_on(l, y), value);
  EXPECT_EQ(depends_on(l, z), value);
  EXPECT_FALSE(depends_on(loop::make(x, loop::serial, bounds(0, 10), 1, body), x));

  // Allocations declare their buffer; their dims are outside.
  const stmt a = allocate::make(c, memory_type::heap, 4, {dim_expr(bounds(0, x))}, body);
  EXPECT_EQ(depends_on(a, c), none);
  EXPECT_EQ(depends_on(a, b), call_input);
  EXPECT_EQ(depends_on(a, x), value);
  const stmt mb = make_buffer::make(c, buffer_at(b), buffer_elem_size(b), {buffer_dim(b, 0)}, body);
  EXPECT_EQ(depends_on(mb, c), none);
  // The base of make_buffer reads b's base; b is also the call's input in the body.
  EXPECT_EQ(depends_on(mb, b), call_input);
  EXPECT_EQ(depends_on(make_buffer::make(c, buffer_at(b), 4, {}, stmt()), b), base_and_dims);
  EXPECT_EQ(depends_on(constant_buffer::make(c, nullptr, body), c), none);
  EXPECT_EQ(depends_on(constant_buffer::make(c, nullptr, body), b), call_input);

  // async: the task does not see the symbol, the body does.
  const stmt task = check::make(expr(x) < 3);
  EXPECT_EQ(depends_on(async::make(x, task, check::make(wait_for(x))), x), value);
  EXPECT_EQ(depends_on(async::make(x, check::make(true), check::make(wait_for(x))), x), none);

  // block, check, if_then_else.
  EXPECT_EQ(depends_on(block::make({check::make(x), check::make(buffer_min(b, 0) < 1)}), b), bounds_field);
  EXPECT_EQ(depends_on(block::make({check::make(x), check::make(buffer_min(b, 0) < 1)}), x), value);
  EXPECT_EQ(depends_on(if_then_else::make(expr(x) < y, body), x), value);
  EXPECT_EQ(depends_on(if_then_else::make(expr(x) < y, body), c), call_output);
  EXPECT_EQ(depends_on(if_then_else::make(1, check::make(1), body), b), call_input);
  EXPECT_EQ(depends_on(stmt(), x), none);
}

TEST(depends_on, buffer_views) {
  symbols s;
  const var x = s.x, b = s.b, c = s.c, d = s.d;
  const stmt read_c = call_of({c}, {d});
  const std::vector<stmt> views = {
      clone_buffer::make(c, b, read_c),
      crop_buffer::make(c, b, {bounds(0, x)}, read_c),
      crop_dim::make(c, b, 0, bounds(0, x), read_c),
      slice_buffer::make(c, b, {x}, read_c),
      slice_dim::make(c, b, 0, x, read_c),
      transpose::make(c, b, {1, 0}, read_c),
  };
  for (const stmt& v : views) {
    // Uses of the view are uses of its source.
    EXPECT_EQ(depends_on(v, b), call_input) << v.type();
    EXPECT_EQ(depends_on(v, c), none) << v.type();
    EXPECT_EQ(depends_on(v, d), call_output) << v.type();
    EXPECT_FALSE(can_substitute_buffer(depends_on(v, b)));
  }
  EXPECT_EQ(depends_on(views[1], x), value);
  EXPECT_EQ(depends_on(views[3], x), value);
  // A view whose body does not use it still reads its source's descriptor.
  EXPECT_EQ(depends_on(crop_dim::make(c, b, 0, bounds(0, 1), check::make(x)), b), bounds_field);
  // A view used only through its metadata.
  const stmt meta = crop_dim::make(c, b, 0, bounds(0, 1), check::make(buffer_stride(c, 0) == 4));
  EXPECT_EQ(depends_on(meta, b), bounds_field);
  EXPECT_TRUE(can_substitute_buffer(depends_on(meta, b)));
  // A view of itself (the same symbol): the body's uses are uses of the outer buffer.
  EXPECT_EQ(depends_on(crop_buffer::make(b, b, {bounds(0, x)}, call_of({}, {b})), b), call_output);
  // Views of views.
  const stmt nested = clone_buffer::make(c, b, crop_dim::make(d, c, 0, bounds(0, 1), call_of({d}, {})));
  EXPECT_EQ(depends_on(nested, b), call_input);
  // A view of a buffer declared inside is not a use of an outer one.
  const stmt inner = allocate::make(b, memory_type::heap, 1, {}, clone_buffer::make(c, b, call_of({c}, {})));
  EXPECT_EQ(depends_on(inner, b), none);
}

TEST(depends_on, several_symbols) {
  symbols s;
  const var x = s.x, y = s.y, b = s.b;
  const stmt st = block::make({call_of({b}, {}), check::make(expr(x) < 1)});
  depends_on_result rx, ry, rb;
  depends_on(st, {{x, rx}, {y, ry}, {b, rb}});
  EXPECT_EQ(rx, value);
  EXPECT_EQ(ry, none);
  EXPECT_EQ(rb, call_input);
  // Results accumulate.
  depends_on(buffer_min(b, 0), b, rb);
  EXPECT_EQ(rb, call_input);
  depends_on(expr(b), b, rb);
  EXPECT_TRUE(rb.var && rb.buffer_input);
  depends_on_result ex;
  depends_on(expr(x) + y, {{x, ex}});
  EXPECT_EQ(ex, value);
  depends_on_result one;
  depends_on(st, y, one);
  EXPECT_EQ(one, none);

  const std::vector<var> xy = {x, y};
  EXPECT_TRUE(depends_on(expr(y) * 2, xy));
  EXPECT_FALSE(depends_on(expr(s.z) * 2, xy));
  EXPECT_TRUE(depends_on(st, {y, b}));
  EXPECT_FALSE(depends_on(st, {y, s.z}));
  EXPECT_FALSE(depends_on(st, span<const var>()));
}

TEST(depends_on, can_substitute_buffer) {
  EXPECT_TRUE(can_substitute_buffer(none));
  EXPECT_TRUE(can_substitute_buffer(field));
  EXPECT_TRUE(can_substitute_buffer(bounds_field));
  EXPECT_FALSE(can_substitute_buffer(value));
  EXPECT_FALSE(can_substitute_buffer(base_and_dims));
  EXPECT_FALSE(can_substitute_buffer(call_input));
  EXPECT_FALSE(can_substitute_buffer(call_output));
  EXPECT_FALSE(can_substitute_buffer(copy_src));
  EXPECT_FALSE(can_substitute_buffer(copy_dst));
}

TEST(depends_on, purity) {
  symbols s;
  const expr x = s.x;
  const auto user = [](const call*, eval_context&) -> index_t { return 1; };
  EXPECT_TRUE(is_pure(x + 1));
  EXPECT_TRUE(is_pure(expr()));
  EXPECT_TRUE(is_pure(abs(x) + s.b));
  // Reading a buffer (its metadata or its base) is not pure: a pure expression is a function of
  // symbol values alone (API_COMPAT 5.2 item 10: is_pure(buffer_min(...)) is false). It has no
  // side effect either.
  for (const expr& e : {buffer_min(s.b, 0), buffer_max(s.b, 1), buffer_elem_size(s.b), buffer_rank(s.b),
                        buffer_stride(s.b, 0), buffer_at(s.b), validate_buffer(s.b), abs(x) + buffer_at(s.b, x)}) {
    EXPECT_FALSE(is_pure(e)) << e;
    EXPECT_FALSE(has_side_effects(e)) << e;
  }
  EXPECT_TRUE(is_pure(positive_infinity()));
  EXPECT_FALSE(is_pure(call::make(user, {x})));
  EXPECT_FALSE(is_pure(semaphore_wait(x) + 1));
  EXPECT_FALSE(is_pure(wait_for(x)));
  EXPECT_FALSE(is_pure(call::make(intrinsic::free, {x})));
  EXPECT_FALSE(is_pure(let::make(s.y, semaphore_signal(x), 1)));

  EXPECT_FALSE(has_side_effects(x + 1));
  EXPECT_FALSE(has_side_effects(expr()));
  EXPECT_FALSE(has_side_effects(call::make(user, {x})));
  EXPECT_FALSE(has_side_effects(buffer_at(s.b, x)));
  EXPECT_TRUE(has_side_effects(semaphore_init(x, 1)));
  EXPECT_TRUE(has_side_effects(semaphore_signal(x)));
  EXPECT_TRUE(has_side_effects(min(semaphore_wait(x), 3)));
  EXPECT_TRUE(has_side_effects(wait_for(x)));
  EXPECT_TRUE(has_side_effects(call::make(intrinsic::trace_begin, {0})));
  EXPECT_TRUE(has_side_effects(call::make(intrinsic::trace_end, {0})));
  EXPECT_TRUE(has_side_effects(call::make(intrinsic::free, {x})));
  EXPECT_TRUE(has_side_effects(call::make(user, {wait_for(x)})));
}

TEST(depends_on, find_dependencies) {
  symbols s;
  const var x = s.x, y = s.y, z = s.z, b = s.b, c = s.c, d = s.d;
  EXPECT_EQ(find_dependencies(expr(z) + y * x + y), (std::vector<var>{x, y, z}));
  EXPECT_EQ(find_dependencies(let::make(x, y, expr(x) + buffer_min(b, 0))), (std::vector<var>{y, b}));
  EXPECT_TRUE(find_dependencies(expr()).empty());
  EXPECT_TRUE(find_dependencies(expr(4)).empty());
  const stmt st =
      loop::make(x, loop::serial, bounds(0, z), 1, crop_dim::make(c, b, 0, point(x), call_of({c}, {d}, {expr(y)})));
  EXPECT_EQ(find_dependencies(st), (std::vector<var>{y, z, b, d}));
  EXPECT_TRUE(find_dependencies(stmt()).empty());
}

TEST(depends_on, find_buffer_data_dependency) {
  symbols s;
  const var x = s.x, b = s.b, c = s.c;
  EXPECT_EQ(find_buffer_data_dependency(buffer_at(b, x)), b);
  EXPECT_EQ(find_buffer_data_dependency(buffer_at(b, x) + buffer_at(b) + buffer_min(c, 0)), b);
  EXPECT_FALSE(find_buffer_data_dependency(buffer_at(b, x) + buffer_at(c)).defined());
  EXPECT_FALSE(find_buffer_data_dependency(buffer_min(b, 0) + x).defined());
  EXPECT_FALSE(find_buffer_data_dependency(let::make(b, 0, buffer_at(b))).defined());
  EXPECT_FALSE(find_buffer_data_dependency(expr()).defined());
}

TEST(depends_on, find_buffer_dependencies) {
  symbols s;
  node_context& ctx = s.ctx;
  const var in(ctx, "in"), out(ctx, "out"), src(ctx, "src"), dst(ctx, "dst"), pad(ctx, "pad"), t(ctx, "t");
  const var x = s.x;
  const stmt st = block::make({
      call_of({in, s.b}, {out}),
      copy_stmt::make(nullptr, src, {x}, dst, {x}, pad),
      // Uses of a view are uses of its source; a buffer declared inside is not a dependency.
      crop_dim::make(t, in, 0, bounds(0, 1), call_of({t}, {s.c})),
      allocate::make(s.d, memory_type::heap, 1, {}, call_of({s.d}, {s.d})),
      check::make(buffer_min(s.z, 0) < 1),
  });
  EXPECT_EQ(find_buffer_dependencies(st), (std::vector<var>{s.b, s.c, in, out, src, dst, pad}));
  EXPECT_EQ(find_buffer_dependencies(st, true, false), (std::vector<var>{s.b, in, src, pad}));
  EXPECT_EQ(find_buffer_dependencies(st, false, true), (std::vector<var>{s.c, out, dst}));
  EXPECT_EQ(find_buffer_dependencies(st, true, false, false, false), (std::vector<var>{s.b, in}));
  EXPECT_EQ(find_buffer_dependencies(st, false, true, false, false), (std::vector<var>{src, pad}));
  EXPECT_EQ(find_buffer_dependencies(st, false, false, true, false), (std::vector<var>{s.c, out}));
  EXPECT_EQ(find_buffer_dependencies(st, false, false, false, true), (std::vector<var>{dst}));
  EXPECT_TRUE(find_buffer_dependencies(st, false, false, false, false).empty());
  EXPECT_TRUE(find_buffer_dependencies(stmt()).empty());
}

TEST(depends_on, bool_call_sites_compile) {
  // The ways the builder uses depends_on as a bool keep compiling and mean "any use".
  symbols s;
  const expr e = expr(s.x) + 1;
  bool found = false;
  if (depends_on(e, s.x)) found = true;
  EXPECT_TRUE(found);
  EXPECT_TRUE(!depends_on(e, s.y));
  EXPECT_EQ(depends_on(e, s.x) ? 1 : 0, 1);
  EXPECT_TRUE(found && depends_on(e, s.x));
  EXPECT_TRUE(depends_on(s.x, s.x));
  EXPECT_TRUE(depends_on(interval_expr(e, 2), s.x));
}

TEST(any_node, stops_at_the_first_node_found) {
  symbols s;
  const expr e = min(expr(s.x) + abs(expr(s.y)), expr(s.z) * 2);
  int asked = 0;
  auto is_var = [&](var v) {
    return [&asked, v](const variable* op) {
      ++asked;
      return op->sym == v;
    };
  };
  EXPECT_TRUE(any_node(e, is_var(s.x)));
  EXPECT_EQ(asked, 1);
  asked = 0;
  EXPECT_FALSE(any_node(e, is_var(s.b)));
  EXPECT_EQ(asked, 3);
  // Predicates on a base class take every node of the kinds derived from it.
  EXPECT_TRUE(any_node(e, [](const binary_op* op) { return op->type == expr_node_type::mul; }));
  // skip_children: the variables inside calls are not searched.
  auto skip_calls = [](const call*) { return node_search::skip_children; };
  EXPECT_FALSE(any_node(e, is_var(s.y), skip_calls));
  EXPECT_TRUE(any_node(e, is_var(s.z), skip_calls));
  EXPECT_FALSE(any_node(expr(), is_var(s.x)));

  const stmt body = check::make(expr(s.x) < 3);
  const stmt st = loop::make(s.y, loop::serial, bounds(0, 10), 1, body);
  EXPECT_TRUE(any_node(st, is_var(s.x)));
  EXPECT_TRUE(any_node(st, [&](const loop* op) { return op->sym == s.y; }));
  EXPECT_FALSE(any_node(
      st, [](const check*) { return node_search::skip_children; }, is_var(s.x)));
  EXPECT_FALSE(any_node(stmt(), is_var(s.x)));
}

}  // namespace
}  // namespace slinky
