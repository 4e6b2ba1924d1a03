// Pipelines for the round trip of define_replica_pipeline (replica_pipeline_test.cc and the
// generator replica_generate.cc, which prints their replicas at build time). Their calls are the
// replicas' own stand-ins (internal::replica_pipeline_handler), so an original and its replica
// compute the same outputs.
#ifndef SLINKY_BUILDER_TEST_REPLICA_PIPELINES_H
#define SLINKY_BUILDER_TEST_REPLICA_PIPELINES_H

#include <functional>
#include <string>
#include <vector>

#include "slinky/builder/pipeline.h"
#include "slinky/builder/replica_pipeline.h"

namespace slinky {
namespace replica_test {

// A pipeline's graph, as build_pipeline takes it.
struct graph_def {
  std::vector<var> args;
  std::vector<buffer_expr_ptr> inputs, outputs;
  std::vector<std::pair<var, expr>> lets;
  build_options options;
  // The funcs, kept alive until the pipeline is built.
  std::vector<func> funcs;
};

// A func whose callback is the replicas' stand-in for its declared regions.
inline func stand_in(std::vector<func::input> inputs, std::vector<func::output> outputs, std::string name,
                     std::vector<expr> scalars = {}) {
  std::vector<std::vector<var>> dims;
  for (const func::output& o : outputs) dims.push_back(o.dims);
  call_stmt::attributes attrs;
  attrs.name = std::move(name);
  // Copied before inputs is moved into the func (the order of the arguments' evaluation is
  // unspecified).
  std::vector<func::input> fins = inputs;
  return func(
      [fins = std::move(fins), dims](const call_stmt* op, eval_context& c) -> index_t {
        std::vector<const buffer<const void>*> in;
        std::vector<const buffer<void>*> out;
        for (var i : op->inputs) in.push_back(c.lookup_buffer<const void>(i));
        for (var o : op->outputs) out.push_back(reinterpret_cast<const buffer<void>*>(c.lookup_buffer(o)));
        return internal::replica_pipeline_handler(in, out, fins, dims, &c);
      },
      std::move(inputs), std::move(outputs), std::move(scalars), attrs);
}

// in -> intm (in * 2 at a point) -> out (3x3 stencil of intm), in strips of 2 rows: intm folds.
inline graph_def stencil(node_context& ctx) {
  graph_def g;
  auto in = buffer_expr::make(ctx, "in", 2, sizeof(short));
  auto intm = buffer_expr::make(ctx, "intm", 2, sizeof(short));
  auto out = buffer_expr::make(ctx, "out", 2, sizeof(short));
  var x(ctx, "x"), y(ctx, "y");
  g.funcs.push_back(stand_in({{in, {point(x), point(y)}}}, {{intm, {x, y}}}, "mul"));
  g.funcs.push_back(stand_in({{intm, {bounds(x - 1, x + 1), bounds(max(y - 1, buffer_min(intm->sym(), 1)), y + 1)}}},
                             {{out, {x, y}}}, "stencil"));
  g.funcs.back().loops({{y, 2}});
  g.inputs = {in};
  g.outputs = {out};
  return g;
}

// Two outputs of one func, a parallel loop, a scalar argument, a let, and scalars of a call.
inline graph_def multiple_outputs(node_context& ctx) {
  graph_def g;
  auto in = buffer_expr::make(ctx, "in", 2, sizeof(int));
  auto a = buffer_expr::make(ctx, "a", 2, sizeof(int));
  auto b = buffer_expr::make(ctx, "b", 2, sizeof(int));
  auto out = buffer_expr::make(ctx, "out", 2, sizeof(int));
  var x(ctx, "x"), y(ctx, "y"), n(ctx, "n"), w(ctx, "w");
  g.funcs.push_back(stand_in({{in, {bounds(x, x + n), point(y)}}}, {{a, {x, y}}, {b, {x, y}}}, "split", {expr(n) * 2}));
  g.funcs.push_back(
      stand_in({{a, {point(x), point(y)}}, {b, {point(x), point(select(expr(y) > w, expr(y) - 1, expr(y)))}}},
               {{out, {x, y}}}, "join"));
  g.funcs.back().loops({{y, 4, loop::parallel}});
  g.args = {n};
  g.lets = {{w, expr(n) + 1}};
  g.inputs = {in};
  g.outputs = {out};
  return g;
}

// Copies: a padded copy (the pad a constant), a concatenation, a stack (a slice per input), and a
// transposing copy of a cropped input stored on the heap.
inline graph_def copies(node_context& ctx) {
  graph_def g;
  auto in = buffer_expr::make(ctx, "in", 2, sizeof(int));
  auto in2 = buffer_expr::make(ctx, "in2", 2, sizeof(int));
  auto padded = buffer_expr::make(ctx, "padded", 2, sizeof(int));
  auto cat = buffer_expr::make(ctx, "cat", 2, sizeof(int));
  auto stacked = buffer_expr::make(ctx, "stacked", 3, sizeof(int));
  auto out = buffer_expr::make(ctx, "out", 2, sizeof(int));
  auto pad = buffer_expr::make_scalar<int>(ctx, "pad", 7);
  var x(ctx, "x"), y(ctx, "y"), z(ctx, "z");
  g.funcs.push_back(
      func::make_copy({in, {point(x), point(y)}, {bounds(1, 6), bounds(0, 3)}}, {padded, {x, y}}, {pad, {}}));
  g.funcs.push_back(func::make_concat({padded, in2}, {cat, {x, y}}, 1, {0, 4, 6}));
  g.funcs.push_back(func::make_stack({cat, cat}, {stacked, {x, y, z}}, 2));
  g.funcs.push_back(func::make_copy({stacked, {point(y), point(x), point(1)}}, {out, {x, y}}));
  cat->store_in(memory_type::heap);
  g.inputs = {in, in2};
  g.outputs = {out};
  return g;
}

// A constant input (a 3x2 table) and a chain computed at a loop of its consumer, with no checks.
inline graph_def constant_and_compute_at(node_context& ctx) {
  graph_def g;
  buffer<int, 2> table({3, 2});
  table.allocate();
  for (int j = 0; j < 2; ++j) {
    for (int i = 0; i < 3; ++i) table(i, j) = 10 * i + j;
  }
  auto lut = buffer_expr::make_constant(ctx, "lut", raw_buffer::make_copy(table));
  auto in = buffer_expr::make(ctx, "in", 1, sizeof(char));
  auto t = buffer_expr::make(ctx, "t", 1, sizeof(char));
  auto out = buffer_expr::make(ctx, "out", 1, sizeof(char));
  var x(ctx, "x"), xo(ctx, "xo");
  g.funcs.push_back(stand_in({{in, {point(x)}}, {lut, {bounds(0, 2), point(x % 2)}}}, {{t, {x}}}, "lookup"));
  g.funcs.push_back(stand_in({{t, {bounds(x - 2, x)}}}, {{out, {x}}}, "window"));
  g.funcs.back().loops({{x, 3}});
  g.funcs[0].compute_at({&g.funcs[1], x});
  t->store_at({&g.funcs[1], x});
  g.inputs = {in};
  g.outputs = {out};
  g.options.no_checks = true;
  return g;
}

struct named_def {
  const char* name;
  std::function<graph_def(node_context&)> make;
};
inline const std::vector<named_def>& all() {
  static const std::vector<named_def> defs = {{"stencil", stencil},
                                              {"multiple_outputs", multiple_outputs},
                                              {"copies", copies},
                                              {"constant_and_compute_at", constant_and_compute_at}};
  return defs;
}

}  // namespace replica_test
}  // namespace slinky

#endif  // SLINKY_BUILDER_TEST_REPLICA_PIPELINES_H
