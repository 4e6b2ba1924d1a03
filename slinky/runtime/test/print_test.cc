// Tests of the printer: the exact text of every expression and statement kind, precedence and
// parentheses, indentation, names versus ids, and a whole small program.
#include <gtest/gtest.h>

#include <limits>
#include <sstream>
#include <string>
#include <tuple>

#include "slinky/runtime/buffer.h"
#include "slinky/runtime/expr.h"
#include "slinky/runtime/print.h"
#include "slinky/runtime/stmt.h"

namespace slinky {

namespace {

class print_test : public ::testing::Test {
protected:
  node_context ctx;
  // Symbol ids follow the order of insertion: x = 0, y = 1, ... Equality tests wrap a var in
  // expr: var's own == and != compare ids and give a bool.
  var x{ctx, "x"};
  var y{ctx, "y"};
  var z{ctx, "z"};
  var w{ctx, "w"};
  var in{ctx, "in"};
  var out{ctx, "out"};
  var intm{ctx, "intm"};
  var b{ctx, "b"};
  var zero{ctx, "zero"};

  std::string str(const expr& e) { return to_string(e, &ctx); }
  std::string str(const stmt& s) { return to_string(s, &ctx); }
  std::string str(const interval_expr& i) { return to_string(i, &ctx); }
  template <typename T>
  std::string str_of(const T& x) {
    std::ostringstream ss;
    print(ss, x, &ctx);
    return ss.str();
  }
  template <typename T>
  static std::string streamed(const T& x) {
    std::ostringstream ss;
    ss << x;
    return ss.str();
  }

  // A statement to put in bodies.
  stmt body() const { return check::make(expr(x) < y); }
};

TEST_F(print_test, variables_and_constants) {
  EXPECT_EQ(str(x), "x");
  EXPECT_EQ(str(zero), "zero");
  EXPECT_EQ(to_string(expr(x)), "_0");
  EXPECT_EQ(to_string(expr(zero)), "_8");
  // A symbol the context does not know prints as its id in angle brackets (node_context::name).
  EXPECT_EQ(str(var(100)), "<100>");
  EXPECT_EQ(str(expr(0)), "0");
  EXPECT_EQ(str(42), "42");
  EXPECT_EQ(str(-3), "-3");
  EXPECT_EQ(str(1000000), "1000000");
  EXPECT_EQ(str(std::numeric_limits<index_t>::min()), "-9223372036854775808");
  EXPECT_EQ(str(std::numeric_limits<index_t>::max()), "9223372036854775807");
  EXPECT_EQ(str(expr()), "<>");
  EXPECT_EQ(streamed(var()), "<>");
  EXPECT_EQ(streamed(y), "_1");
}

TEST_F(print_test, binary_operators) {
  EXPECT_EQ(str(x + y), "x + y");
  EXPECT_EQ(str(x - y), "x - y");
  EXPECT_EQ(str(x * y), "x * y");
  EXPECT_EQ(str(x / y), "x / y");
  EXPECT_EQ(str(x % y), "x % y");
  EXPECT_EQ(str(min(x, y)), "min(x, y)");
  EXPECT_EQ(str(max(x, y)), "max(x, y)");
  EXPECT_EQ(str(expr(x) == y), "x == y");
  EXPECT_EQ(str(expr(x) != y), "x != y");
  EXPECT_EQ(str(expr(x) < y), "x < y");
  EXPECT_EQ(str(x <= y), "x <= y");
  EXPECT_EQ(str(x && y), "x && y");
  EXPECT_EQ(str(x || y), "x || y");
  EXPECT_EQ(str(!expr(x)), "!x");
  EXPECT_EQ(str(select(expr(x) < y, x, y)), "select(x < y, x, y)");
  // What the builders make of some operators shows in the printed form.
  EXPECT_EQ(str(x > y), "y < x");
  EXPECT_EQ(str(x >= y), "y <= x");
  EXPECT_EQ(str(1 + expr(x)), "x + 1");
  EXPECT_EQ(str(-expr(x)), "0 - x");
  // Adding a negative constant reads as a subtraction.
  EXPECT_EQ(str(x + -3), "x - 3");
  EXPECT_EQ(str(x - -3), "x - -3");
  EXPECT_EQ(str(x * -1), "x * -1");
}

TEST_F(print_test, arithmetic_precedence) {
  EXPECT_EQ(str((x + y) * z), "(x + y) * z");
  EXPECT_EQ(str(x + y * z), "x + y * z");
  EXPECT_EQ(str(x * y + z), "x * y + z");
  EXPECT_EQ(str(x * (y + z)), "x * (y + z)");
  // Left associative: parentheses only on the right.
  EXPECT_EQ(str((x - y) - z), "x - y - z");
  EXPECT_EQ(str(x - (y - z)), "x - (y - z)");
  EXPECT_EQ(str(x - (y + z)), "x - (y + z)");
  EXPECT_EQ(str((x + y) + (z + w)), "x + y + (z + w)");
  EXPECT_EQ(str(x / y * y), "x / y * y");
  EXPECT_EQ(str(x / (y * z)), "x / (y * z)");
  EXPECT_EQ(str(x % (y + 1)), "x % (y + 1)");
  EXPECT_EQ(str((x + 1) % y), "(x + 1) % y");
  EXPECT_EQ(str(x / (y / z)), "x / (y / z)");
  EXPECT_EQ(str(min(x + 1, y * 2) - max(z, w)), "min(x + 1, y * 2) - max(z, w)");
}

TEST_F(print_test, logical_precedence) {
  EXPECT_EQ(str(x + 1 < y), "x + 1 < y");
  EXPECT_EQ(str(expr(x) < y && expr(y) < z), "x < y && y < z");
  EXPECT_EQ(str(expr(x) == y || expr(z) != w), "x == y || z != w");
  // Comparisons do not chain.
  EXPECT_EQ(str((expr(x) < y) == (expr(z) < w)), "(x < y) == (z < w)");
  EXPECT_EQ(str((expr(x) == y) == z), "(x == y) == z");
  EXPECT_EQ(str((x + y) < z), "x + y < z");
  // && and || are parenthesized where they mix.
  EXPECT_EQ(str(x || (y && z)), "x || (y && z)");
  EXPECT_EQ(str((x || y) && z), "(x || y) && z");
  EXPECT_EQ(str((x && y) || z), "(x && y) || z");
  EXPECT_EQ(str((x && y) && z), "x && y && z");
  EXPECT_EQ(str(x && (y && z)), "x && (y && z)");
  EXPECT_EQ(str((x || y) || z), "x || y || z");
  EXPECT_EQ(str(!(expr(x) < y)), "!(x < y)");
  EXPECT_EQ(str(!(x && y)), "!(x && y)");
  EXPECT_EQ(str(!expr(x) && y), "!x && y");
  EXPECT_EQ(str(!!expr(x)), "!!x");
  EXPECT_EQ(str(!(x + 1)), "!(x + 1)");
  EXPECT_EQ(str(!min(x, y)), "!min(x, y)");
  EXPECT_EQ(str(select(expr(x) < y && z, x + 1, y * 2)), "select(x < y && z, x + 1, y * 2)");
}

TEST_F(print_test, lets) {
  EXPECT_EQ(str(let::make(x, 1, x + y)), "let x = 1 in x + y");
  EXPECT_EQ(str(let::make({{x, 1}, {y, x + 1}}, x * y)), "let x = 1, y = x + 1 in x * y");
  EXPECT_EQ(str(let::make(x, 1, let::make(y, 2, x + y))), "let x = 1 in let y = 2 in x + y");
  // Inside an operand or a list, a let is parenthesized so its body cannot swallow anything.
  EXPECT_EQ(str(let::make(x, 1, x) + y), "(let x = 1 in x) + y");
  EXPECT_EQ(str(y * let::make(x, 1, x)), "y * (let x = 1 in x)");
  EXPECT_EQ(str(min(let::make(x, 1, x), y)), "min((let x = 1 in x), y)");
  EXPECT_EQ(str(let::make(x, let::make(y, 1, y), x)), "let x = (let y = 1 in y) in x");
  EXPECT_EQ(str(!let::make(x, 1, x)), "!(let x = 1 in x)");
}

TEST_F(print_test, intrinsics) {
  EXPECT_EQ(str(positive_infinity()), "oo");
  EXPECT_EQ(str(negative_infinity()), "-oo");
  EXPECT_EQ(str(indeterminate()), "indeterminate");
  EXPECT_EQ(str(x - negative_infinity()), "x - -oo");
  EXPECT_EQ(str(abs(x)), "abs(x)");
  EXPECT_EQ(str(abs(x - y) * 2), "abs(x - y) * 2");
  EXPECT_EQ(str(buffer_rank(b)), "buffer_rank(b)");
  EXPECT_EQ(str(buffer_elem_size(b)), "buffer_elem_size(b)");
  EXPECT_EQ(str(buffer_size_bytes(b)), "buffer_size_bytes(b)");
  EXPECT_EQ(str(buffer_min(b, 0)), "buffer_min(b, 0)");
  EXPECT_EQ(str(buffer_max(b, 1)), "buffer_max(b, 1)");
  EXPECT_EQ(str(buffer_extent(b, 0)), "buffer_max(b, 0) - buffer_min(b, 0) + 1");
  EXPECT_EQ(str(buffer_stride(b, 2)), "buffer_stride(b, 2)");
  EXPECT_EQ(str(buffer_fold_factor(b, 1)), "buffer_fold_factor(b, 1)");
  EXPECT_EQ(str(buffer_at(b)), "buffer_at(b)");
  EXPECT_EQ(str(buffer_at(b, x, y + 1)), "buffer_at(b, x, y + 1)");
  EXPECT_EQ(str(call::make(intrinsic::buffer_at, {b, expr(), y})), "buffer_at(b, <>, y)");
  EXPECT_EQ(str(call::make(intrinsic::semaphore_init, {z, 0})), "semaphore_init(z, 0)");
  EXPECT_EQ(str(call::make(intrinsic::semaphore_signal, {z})), "semaphore_signal(z)");
  EXPECT_EQ(str(call::make(intrinsic::semaphore_wait, {z, 2})), "semaphore_wait(z, 2)");
  EXPECT_EQ(str(call::make(intrinsic::trace_begin, {1234})), "trace_begin(1234)");
  EXPECT_EQ(str(call::make(intrinsic::trace_end, {w})), "trace_end(w)");
  EXPECT_EQ(str(call::make(intrinsic::free, {b})), "free(b)");
}

TEST_F(print_test, intervals_boxes_dims) {
  EXPECT_EQ(str(bounds(x, y + 1)), "[x, y + 1]");
  EXPECT_EQ(str(point(x)), "[x, x]");
  EXPECT_EQ(str(interval_expr()), "[<>, <>]");
  EXPECT_EQ(str(interval_expr::all()), "[-oo, oo]");
  EXPECT_EQ(str(interval_expr::none()), "[oo, -oo]");
  EXPECT_EQ(str(bounds(let::make(x, 1, x), 2)), "[(let x = 1 in x), 2]");

  EXPECT_EQ(str_of(box_expr{bounds(0, x), interval_expr(expr(), 5)}), "{[0, x], [<>, 5]}");
  EXPECT_EQ(str_of(box_expr{}), "{}");

  EXPECT_EQ(str_of(dim_expr{bounds(0, 9), 4, expr()}), "{[0, 9], 4, <>}");
  EXPECT_EQ(str_of(dim_expr{bounds(x, y), buffer_stride(b, 0) * 2, 3}), "{[x, y], buffer_stride(b, 0) * 2, 3}");
  EXPECT_EQ(str_of(dim_expr{}), "{[<>, <>], <>, <>}");
}

TEST_F(print_test, buffers) {
  EXPECT_EQ(streamed(dim(0, 9, 4)), "{0, 9, 4, unfolded}");
  EXPECT_EQ(streamed(dim(-2, 7, 40, 3)), "{-2, 7, 40, 3}");
  EXPECT_EQ(streamed(dim()), "{0, -1, auto, unfolded}");

  dim dims[] = {dim(0, 9, 4), dim(0, 2, 40, 3)};
  raw_buffer buf(reinterpret_cast<void*>(0x1000), 4, 2, dims);
  EXPECT_EQ(streamed(buf), "{0x1000, 4, {{0, 9, 4, unfolded}, {0, 2, 40, 3}}}");
  EXPECT_EQ(streamed(raw_buffer(nullptr, 2, 0, nullptr)), "{null, 2, {}}");
  buffer<int, 2> typed({10, 3});
  EXPECT_EQ(streamed(typed), "{null, 4, {{0, 9, 4, unfolded}, {0, 2, 40, unfolded}}}");
}

TEST_F(print_test, enums) {
  EXPECT_EQ(streamed(memory_type::automatic), "automatic");
  EXPECT_EQ(streamed(memory_type::stack), "stack");
  EXPECT_EQ(streamed(memory_type::heap), "heap");
  EXPECT_EQ(streamed(intrinsic::buffer_at), "buffer_at");
  EXPECT_EQ(streamed(intrinsic::positive_infinity), "oo");
  EXPECT_EQ(streamed(expr_node_type::logical_and), "logical_and");
  EXPECT_EQ(streamed(stmt_node_type::crop_dim), "crop_dim");
}

TEST_F(print_test, calls_and_copies) {
  EXPECT_EQ(str(call_stmt::make(nullptr, {in}, {out}, {}, {.name = "mul"})), "call mul({in}, {out})\n");
  EXPECT_EQ(str(call_stmt::make(nullptr, {in, x}, {out, y}, {}, {})), "call <callback>({in, x}, {out, y})\n");
  EXPECT_EQ(str(call_stmt::make(nullptr, {}, {out}, {}, {.name = "zeros"})), "call zeros({}, {out})\n");

  EXPECT_EQ(str(copy_stmt::make(nullptr, in, {x + 1, y}, out, {x, y})), "copy(in[x + 1, y] -> out[x, y])\n");
  EXPECT_EQ(str(copy_stmt::make(nullptr, in, {x}, out, {x}, zero)), "copy(in[x] -> out[x], pad = zero)\n");
  EXPECT_EQ(str(copy_stmt::make(nullptr, in, {}, out, {})), "copy(in[] -> out[])\n");
}

TEST_F(print_test, checks_and_blocks) {
  EXPECT_EQ(str(check::make(expr(x) < y)), "check(x < y)\n");
  // The condition is not in a list, so a let needs no parentheses.
  EXPECT_EQ(str(check::make(let::make(x, 1, expr(x) < y))), "check(let x = 1 in x < y)\n");
  EXPECT_EQ(str(block::make({check::make(x), check::make(y), check::make(z)})), "check(x)\ncheck(y)\ncheck(z)\n");
  EXPECT_EQ(str(stmt()), "");
  EXPECT_EQ(streamed(stmt()), "");
}

TEST_F(print_test, lets_and_loops) {
  EXPECT_EQ(str(let_stmt::make(x, 1, body())), "let x = 1 in {\n  check(x < y)\n}\n");
  EXPECT_EQ(str(let_stmt::make({{x, 1}, {y, x * 2}}, body())), "let x = 1, y = x * 2 in {\n  check(x < y)\n}\n");

  EXPECT_EQ(str(loop::make(y, loop::serial, bounds(0, 99), 1, body())),
            "loop(y in [0, 99], step 1, serial) {\n  check(x < y)\n}\n");
  EXPECT_EQ(str(loop::make(y, loop::parallel, bounds(0, z - 1), 8, body())),
            "loop(y in [0, z - 1], step 8, parallel) {\n  check(x < y)\n}\n");
  EXPECT_EQ(str(loop::make(y, 4, bounds(0, 99), 1, body())),
            "loop(y in [0, 99], step 1, workers 4) {\n  check(x < y)\n}\n");
  EXPECT_EQ(str(loop::make(y, w, bounds(0, 99), z, body())),
            "loop(y in [0, 99], step z, workers w) {\n  check(x < y)\n}\n");
  // make fills in serial and step 1.
  EXPECT_EQ(str(loop::make(y, expr(), bounds(0, 9), expr(), body())),
            "loop(y in [0, 9], step 1, serial) {\n  check(x < y)\n}\n");
}

TEST_F(print_test, buffer_declarations) {
  EXPECT_EQ(
      str(allocate::make(intm, memory_type::automatic, 4, {{bounds(0, 9), 4, expr()}, {bounds(0, 2), 40, 3}}, body())),
      "intm = allocate(automatic, 4, {{[0, 9], 4, <>}, {[0, 2], 40, 3}}) {\n  check(x < y)\n}\n");
  EXPECT_EQ(str(allocate::make(intm, memory_type::heap, 1, {}, body())),
            "intm = allocate(heap, 1, {}) {\n  check(x < y)\n}\n");
  EXPECT_EQ(str(make_buffer::make(b, buffer_at(in), 4, {{bounds(0, 9), 4, expr()}}, body())),
            "b = make_buffer(buffer_at(in), 4, {{[0, 9], 4, <>}}) {\n  check(x < y)\n}\n");
  EXPECT_EQ(str(clone_buffer::make(b, in, body())), "b = clone_buffer(in) {\n  check(x < y)\n}\n");
  EXPECT_EQ(str(crop_buffer::make(b, in, {bounds(x, x + 1), interval_expr(expr(), 5)}, body())),
            "b = crop_buffer(in, {[x, x + 1], [<>, 5]}) {\n  check(x < y)\n}\n");
  EXPECT_EQ(str(crop_dim::make(out, out, 1, bounds(y, y + 1), body())),
            "out = crop_dim(out, 1, [y, y + 1]) {\n  check(x < y)\n}\n");
  EXPECT_EQ(str(slice_buffer::make(b, in, {expr(), y}, body())), "b = slice_buffer(in, {_, y}) {\n  check(x < y)\n}\n");
  EXPECT_EQ(str(slice_dim::make(b, in, 1, y, body())), "b = slice_dim(in, 1, y) {\n  check(x < y)\n}\n");
  EXPECT_EQ(str(transpose::make(b, in, {1, 0}, body())), "b = transpose(in, {1, 0}) {\n  check(x < y)\n}\n");
  // An empty body leaves empty braces.
  EXPECT_EQ(str(clone_buffer::make(b, in, stmt())), "b = clone_buffer(in) {\n}\n");
}

TEST_F(print_test, nesting) {
  stmt s = loop::make(y, loop::serial, bounds(0, 9), 1,
                      block::make({
                          check::make(y < 10),
                          loop::make(x, loop::parallel, bounds(0, 19), 4,
                                     block::make({
                                         crop_dim::make(out, out, 0, bounds(x, x + 3),
                                                        call_stmt::make(nullptr, {in}, {out}, {}, {.name = "f"})),
                                         check::make(x < 20),
                                     })),
                          let_stmt::make(z, y * 2, check::make(z < 20)),
                      }));
  EXPECT_EQ(str(s), R"(loop(y in [0, 9], step 1, serial) {
  check(y < 10)
  loop(x in [0, 19], step 4, parallel) {
    out = crop_dim(out, 0, [x, x + 3]) {
      call f({in}, {out})
    }
    check(x < 20)
  }
  let z = y * 2 in {
    check(z < 20)
  }
}
)");
}

TEST_F(print_test, ids_without_context) {
  stmt s = crop_dim::make(out, in, 0, bounds(x, x + 1), call_stmt::make(nullptr, {in}, {out}, {}, {.name = "f"}));
  const char* expected = "_5 = crop_dim(_4, 0, [_0, _0 + 1]) {\n  call f({_4}, {_5})\n}\n";
  EXPECT_EQ(to_string(s), expected);
  EXPECT_EQ(streamed(s), expected);
  EXPECT_EQ(streamed(x + y), "_0 + _1");
  EXPECT_EQ(streamed(bounds(x, y)), "[_0, _1]");
  EXPECT_EQ(streamed(box_expr{bounds(x, y), point(z)}), "{[_0, _1], [_2, _2]}");
  EXPECT_EQ(streamed(dim_expr{bounds(x, y), z, w}), "{[_0, _1], _2, _3}");
}

TEST_F(print_test, tuples_print_names) {
  expr e = x + y;
  stmt s = check::make(expr(x) < y);
  interval_expr i = bounds(x, y);
  box_expr bx = {bounds(x, y), point(z)};
  std::ostringstream ss;
  ss << std::tie(e, ctx) << "; " << std::tie(s, ctx) << std::tie(i, ctx) << "; " << std::tie(bx, ctx);
  EXPECT_EQ(ss.str(), "x + y; check(x < y)\n[x, y]; {[x, y], [z, z]}");

  // Through const references too.
  const expr& ce = e;
  const node_context& cctx = ctx;
  std::ostringstream ss2;
  ss2 << std::tie(ce, cctx);
  EXPECT_EQ(ss2.str(), "x + y");
}

// A program of the shape the builder makes for a 3x3 stencil (out(x, y) = the sum of intm
// around (x, y), intm = f(in)), with intm kept as a ring of 3 rows.
TEST_F(print_test, stencil_program) {
  auto out_min = [&](int d) { return buffer_min(out, d); };
  auto out_max = [&](int d) { return buffer_max(out, d); };
  stmt produce_row =
      crop_dim::make(intm, intm, 1, point(y + 1), call_stmt::make(nullptr, {in}, {intm}, {}, {.name = "add_one"}));
  stmt consume_row =
      crop_dim::make(out, out, 1, point(y), call_stmt::make(nullptr, {intm}, {out}, {}, {.name = "stencil"}));
  stmt rows = loop::make(y, loop::serial, bounds(out_min(1) - 2, out_max(1)), 1,
                         block::make({produce_row, check::make(out_min(1) <= y + 1 || y < out_min(1)), consume_row}));
  std::vector<dim_expr> intm_dims = {
      {bounds(out_min(0) - 1, out_max(0) + 1), 2, expr()},
      {bounds(out_min(1) - 1, out_max(1) + 1), (out_max(0) - out_min(0) + 3) * 2, 3},
  };
  stmt program = block::make({
      check::make(buffer_rank(in) == 2),
      check::make(buffer_min(in, 0) <= out_min(0) - 1 && out_max(0) + 1 <= buffer_max(in, 0)),
      allocate::make(intm, memory_type::automatic, 2, intm_dims, rows),
  });
  EXPECT_EQ(str(program), R"(check(buffer_rank(in) == 2)
check(buffer_min(in, 0) <= buffer_min(out, 0) - 1 && buffer_max(out, 0) + 1 <= buffer_max(in, 0))
intm = allocate(automatic, 2, {{[buffer_min(out, 0) - 1, buffer_max(out, 0) + 1], 2, <>}, {[buffer_min(out, 1) - 1, buffer_max(out, 1) + 1], (buffer_max(out, 0) - buffer_min(out, 0) + 3) * 2, 3}}) {
  loop(y in [buffer_min(out, 1) - 2, buffer_max(out, 1)], step 1, serial) {
    intm = crop_dim(intm, 1, [y + 1, y + 1]) {
      call add_one({in}, {intm})
    }
    check(buffer_min(out, 1) <= y + 1 || y < buffer_min(out, 1))
    out = crop_dim(out, 1, [y, y]) {
      call stencil({intm}, {out})
    }
  }
}
)");
}

}  // namespace

}  // namespace slinky
