// The executable form (executable.h) against the tree interpreter, the reference semantics: for
// programs using every statement kind, both must make the same calls with the same buffer
// descriptors, allocate the same sizes, leave the same data, and fail the same way.
#include <gtest/gtest.h>

#include <limits>
#include <memory>
#include <sstream>
#include <string>
#include <type_traits>
#include <vector>

#include "slinky/base/thread_pool_impl.h"
#include "slinky/runtime/buffer.h"
#include "slinky/runtime/evaluate.h"
#include "slinky/runtime/executable.h"
#include "slinky/runtime/expr.h"
#include "slinky/runtime/node_mutator.h"
#include "slinky/runtime/pipeline.h"
#include "slinky/runtime/print.h"
#include "slinky/runtime/stmt.h"

namespace slinky {
namespace {

node_context ctx;
var x(ctx, "x"), y(ctx, "y"), n(ctx, "n");
var in(ctx, "in"), out(ctx, "out"), t(ctx, "t"), t2(ctx, "t2"), v(ctx, "v"), task(ctx, "task");

// What a run did, as text: each call's buffers (rank, elem size, dims, whether based), each
// allocation's size, each failure, the result, and the output's contents.
struct recorder {
  std::ostringstream log;
  eval_config config;
  thread_pool_impl* pool = nullptr;

  recorder() {
    config.allocate = [this](var sym, raw_buffer* b) {
      void* p = default_allocate(sym, b, 64);
      log << "allocate " << sym.id << " " << b->size_bytes() << "\n";
      return p;
    };
    config.free = [this](var sym, raw_buffer* b, void* p) {
      log << "free " << sym.id << "\n";
      default_free(sym, b, p);
    };
    config.check_failed = [this](const expr& c) { log << "check failed: " << print_expr(c) << "\n"; };
    config.call_failed = [this](const call_stmt* op) { log << "call failed: " << op->attrs.name << "\n"; };
  }
  std::string print_expr(const expr& e) {
    std::ostringstream s;
    print(s, e, &ctx);
    return s.str();
  }
};

// Calls fn(coordinates) for every point of b, dim 0 fastest.
template <typename Fn>
void for_each_index(const raw_buffer& b, const Fn& fn) {
  std::vector<index_t> at(b.rank);
  for (std::size_t d = 0; d < b.rank; ++d) {
    if (b.dims[d].empty()) return;
    at[d] = b.dims[d].min();
  }
  for (;;) {
    fn(span<const index_t>(at.data(), at.size()));
    std::size_t d = 0;
    for (; d < b.rank; ++d) {
      if (at[d] < b.dims[d].max()) {
        ++at[d];
        break;
      }
      at[d] = b.dims[d].min();
    }
    if (d == b.rank) return;
  }
}

void describe(std::ostream& os, const raw_buffer* b) {
  if (!b) {
    os << "null";
    return;
  }
  os << "rank " << b->rank << " elem " << b->elem_size << (b->base ? " based" : " null base");
  for (std::size_t d = 0; d < b->rank; ++d) {
    const dim& i = b->dims[d];
    os << " [" << i.min() << "," << i.max() << " s" << i.stride() << " f" << i.fold_factor() << "]";
  }
}

// A callback that logs its buffers (serial programs only) and writes, to every element of its
// output, the sum of the input elements at the same coordinates (missing ones count 0) plus 1.
call_stmt::callable logging_call(recorder& r, bool log = true) {
  return [&r, log](const call_stmt* op, eval_context& c) -> index_t {
    if (log) {
      r.log << "call " << op->attrs.name << ":";
      for (var i : op->inputs) describe(r.log << " in ", c.lookup_buffer(i));
      for (var o : op->outputs) describe(r.log << " out ", c.lookup_buffer(o));
      for (const expr& s : op->scalars) r.log << " scalar " << evaluate(s, c);
      r.log << "\n";
    }
    for (var o : op->outputs) {
      const raw_buffer* ob = c.lookup_buffer(o);
      if (!ob || !ob->base) continue;
      for_each_index(*ob, [&](span<const index_t> at) {
        int sum = 1;
        for (var i : op->inputs) {
          const raw_buffer* ib = c.lookup_buffer(i);
          if (ib && ib->base && ib->contains(at)) sum += *static_cast<const int*>(ib->address_at(at));
        }
        *static_cast<int*>(ob->address_at(at)) = sum;
      });
    }
    return 0;
  };
}

// Runs s both ways with the given output (2-D ints, n x n) and input, and compares the logs.
void expect_same(const stmt& s, index_t size = 8, bool with_pool = false, index_t expected_result = 0,
                 const std::function<stmt(recorder&)>& make = nullptr) {
  std::string logs[2];
  for (int mode = 0; mode < 2; ++mode) {
    recorder r;
    thread_pool_impl pool(2);
    if (with_pool) r.config.thread_pool = &pool;
    const stmt program = make ? make(r) : s;
    buffer<int, 2> input({size, size}), output({size, size});
    input.allocate();
    output.allocate();
    for_each_index(input, [&](span<const index_t> at) { input(at) = static_cast<int>(at[0] * 100 + at[1]); });
    for_each_index(output, [&](span<const index_t> at) { output(at) = -1; });
    eval_context c;
    c.config = &r.config;
    c[in] = reinterpret_cast<index_t>(static_cast<const raw_buffer*>(&input));
    c[out] = reinterpret_cast<index_t>(static_cast<const raw_buffer*>(&output));
    c[n] = size;
    c.reserve(symbol_count(program));
    std::vector<index_t> before(c.size());
    for (std::size_t i = 0; i < before.size(); ++i) before[i] = c.lookup(var(i));
    const index_t result = mode == 0 ? evaluate(program, c) : internal::executable(program).run(c);
    r.log << "result " << result << "\n";
    // Every symbol bound while running is unbound after, even when the program failed.
    for (std::size_t i = 0; i < before.size(); ++i) {
      if (c.lookup(var(i)) != before[i]) r.log << "symbol " << i << " left bound\n";
    }
    EXPECT_EQ(result, expected_result) << (mode == 0 ? "interpreter" : "executable");
    for_each_index(output, [&](span<const index_t> at) { r.log << output(at) << " "; });
    logs[mode] = r.log.str();
  }
  EXPECT_EQ(logs[0], logs[1]) << "interpreter:\n" << logs[0] << "\nexecutable:\n" << logs[1];
}

TEST(executable, sliding_loop_with_crops_and_a_ring_buffer) {
  expect_same(stmt(), 8, false, 0, [](recorder& r) {
    stmt body = block::make({
        crop_dim::make(t2, t, 1, bounds(y, expr(y) + 1),
                       call_stmt::make(logging_call(r), {in}, {t2}, {expr(y) * 3}, {.name = "producer"})),
        crop_buffer::make(v, out, {interval_expr(), point(y)},
                          call_stmt::make(logging_call(r), {t}, {v}, {}, {.name = "consumer"})),
    });
    return allocate::make(t, memory_type::heap, 4, {{bounds(0, n - 1), expr(), expr()}, {bounds(0, n), expr(), 2}},
                          loop::make(y, loop::serial, bounds(0, n - 1), 1, body));
  });
}

TEST(executable, crops_out_of_range_and_undefined_bounds) {
  expect_same(stmt(), 6, false, 0, [](recorder& r) {
    auto call = [&](const char* name) { return call_stmt::make(logging_call(r), {in}, {v}, {}, {.name = name}); };
    return block::make({
        crop_dim::make(v, out, 0, bounds(-3, 2), call("low")),
        crop_dim::make(v, out, 1, bounds(4, 100), call("high")),
        crop_dim::make(v, out, 1, bounds(expr(), 3), call("undefined_min")),
        crop_dim::make(v, out, 0, bounds(5, 2), call("empty")),
        crop_dim::make(v, out, 7, bounds(1, 2), call("past_rank")),
        crop_buffer::make(v, out, {bounds(1, 1), bounds(expr(n) - 2, expr()), bounds(0, 0)}, call("more_dims")),
        crop_buffer::make(v, out, {point(expr(n) - 1)}, call("point")),
        let_stmt::make({{x, expr(n) / 2}, {y, expr(x) + 1}}, crop_dim::make(v, out, 0, point(y), call("let"))),
        // Buffer bounds: of a dimension, past the rank, of an unbound buffer (t).
        crop_dim::make(v, out, 0, bounds(buffer_min(in, 0) + 1, buffer_max(in, 1) - 2), call("buffer_bounds")),
        crop_dim::make(v, out, 1, bounds(buffer_min(in, 5), buffer_max(t, 0) + 1), call("broadcast_bounds")),
        crop_buffer::make(v, out, {bounds(buffer_max(in, 0) * 2 - 9, buffer_max(in, 0))}, call("tree")),
    });
  });
}

TEST(executable, views_allocations_and_branches) {
  expect_same(stmt(), 5, false, 0, [](recorder& r) {
    auto call = [&](const char* name, var o) {
      return call_stmt::make(logging_call(r), {in}, {o}, {}, {.name = name});
    };
    return block::make({
        slice_dim::make(v, out, 1, 2, call("slice_dim", v)),
        slice_buffer::make(v, out, {expr(), 3}, call("slice_buffer", v)),
        transpose::make(v, out, {1, 0}, call("transpose", v)),
        clone_buffer::make(v, out, call("clone", v)),
        allocate::make(t, memory_type::stack, 4, {{bounds(0, 3), expr(), expr()}}, call("stack", t)),
        allocate::make(t, memory_type::automatic, 4, {{bounds(0, 3), expr(), expr()}}, call("automatic", t)),
        allocate::make(t, memory_type::heap, 4, {{bounds(0, 3), expr(), expr()}},
                       block::make({call("heap", t), check::make(call::make(intrinsic::free, {t})),
                                    allocate::make(t2, memory_type::heap, 4, {{bounds(0, 2), expr(), expr()}},
                                                   call("reuses", t2))})),
        if_then_else::make(expr(n) > 3, call("then", out), call("else", out)),
        if_then_else::make(expr(n) < 3, call("then2", out)),
        constant_buffer::make(t, raw_buffer::make_scalar<int>(9), call("constant", t)),
        // Crops of a buffer of rank 5 (beyond the dims crops keep in a fixed array).
        allocate::make(
            t, memory_type::heap, 4, std::vector<dim_expr>(5, {bounds(0, 2), expr(), expr()}),
            block::make({
                crop_dim::make(t2, t, 4, point(1), call("rank_5_crop_dim", t2)),
                crop_buffer::make(t2, t, {point(0), interval_expr(), bounds(1, 5), interval_expr(), point(2)},
                                  call("rank_5_crop_buffer", t2)),
                crop_buffer::make(t2, t, {interval_expr(), interval_expr(), interval_expr(), bounds(-1, 0)},
                                  call("rank_5_one_dim", t2)),
            })),
        copy_stmt::make(nullptr, in, {expr(y) + 1, x}, out, {x, y}),
    });
  });
}

TEST(executable, failures) {
  expect_same(stmt(), 4, false, 1,
              [](recorder&) { return loop::make(y, loop::serial, bounds(0, n), 1, check::make(expr(y) < 2)); });
  expect_same(stmt(), 4, false, 1, [](recorder&) { return crop_dim::make(v, t, 0, bounds(0, 1), stmt()); });
  expect_same(stmt(), 4, false, 1, [](recorder&) { return crop_buffer::make(v, t, {bounds(0, 1)}, stmt()); });
  expect_same(stmt(), 4, false, 1, [](recorder&) {
    return crop_buffer::make(v, t, {bounds(0, 1), bounds(2, 3)}, stmt());
  });
  expect_same(stmt(), 4, false, 1, [](recorder&) { return loop::make(y, loop::serial, bounds(0, n), 0, stmt()); });
  expect_same(stmt(), 4, false, 7, [](recorder& r) {
    stmt failing =
        call_stmt::make([](const call_stmt*, eval_context&) -> index_t { return 7; }, {}, {}, {}, {.name = "failing"});
    return loop::make(y, loop::serial, bounds(0, n), 1,
                      block::make({call_stmt::make(logging_call(r), {in}, {out}, {}, {.name = "before"}),
                                   if_then_else::make(expr(y) == 2, failing)}));
  });
}

// Loop bodies run flattened (crops, their ends and calls in one sequence, each crop's descriptor
// in a frame slot per level of nesting): crops nested in blocks, crops of several dims, crops
// whose body is one call, crops beyond the frame's rank (run as nodes), other statements between
// them, and failures at every depth, which must unbind everything bound.
TEST(executable, loop_bodies_run_flattened) {
  auto failing_at = [](index_t at) {
    return call_stmt::make([at](const call_stmt*, eval_context& c) -> index_t { return c[y] == at ? 5 : 0; }, {}, {},
                           {}, {.name = "failing"});
  };
  for (index_t fail_at : {-1, 0, 2}) {
    expect_same(stmt(), 6, false, fail_at < 0 ? 0 : 5, [&](recorder& r) {
      auto call = [&](const char* name, var i, var o) {
        return call_stmt::make(logging_call(r), {i}, {o}, {}, {.name = name});
      };
      stmt body = block::make({
          crop_dim::make(
              v, out, 1, point(y),
              block::make({
                  crop_buffer::make(t2, t, {bounds(1, 4), point(y)}, call("inner_2d", in, t2)),
                  crop_dim::make(x, t, 0, bounds(y, expr(y) + 1),
                                 block::make({call("in_crop", in, x), failing_at(fail_at), check::make(expr(n) > 0)})),
                  call("outer", in, v),
                  let_stmt::make({{task, expr(y) * 2}},
                                 crop_dim::make(v, v, 0, bounds(task, expr(task) + 1), call("in_let", in, v))),
              })),
          crop_dim::make(v, out, 0, point(y), call("sibling", in, v)),
          crop_dim::make(t2, out, 0, bounds(expr(), 2), stmt()),
          loop::make(x, loop::serial, bounds(0, 1), 1, crop_dim::make(v, out, 0, point(x), call("nested", in, v))),
      });
      return allocate::make(t, memory_type::heap, 4,
                            {{bounds(0, n - 1), expr(), expr()}, {bounds(0, n - 1), expr(), 2}},
                            loop::make(y, loop::serial, bounds(0, n - 1), 1, body));
    });
  }
  // Buffers of rank 5, above the rank a frame slot holds, and a crop of a null buffer.
  expect_same(stmt(), 4, false, 0, [](recorder& r) {
    auto call = [&](const char* name, var o) {
      return call_stmt::make(logging_call(r), {in}, {o}, {}, {.name = name});
    };
    return allocate::make(
        t, memory_type::heap, 4, std::vector<dim_expr>(5, {bounds(0, 2), expr(), expr()}),
        loop::make(y, loop::serial, bounds(0, 2), 1,
                   block::make({
                       crop_dim::make(t2, t, 4, point(y), call("rank_5_crop_dim", t2)),
                       crop_buffer::make(t2, t, {point(0), interval_expr(), bounds(y, 5)},
                                         block::make({call("rank_5_crop_buffer", t2),
                                                      crop_dim::make(v, t2, 1, point(1), call("inside", v))})),
                   })));
  });
  expect_same(stmt(), 4, false, 1, [](recorder& r) {
    return loop::make(y, loop::serial, bounds(0, 2), 1,
                      crop_dim::make(v, out, 1, point(y),
                                     block::make({call_stmt::make(logging_call(r), {in}, {v}, {}, {.name = "before"}),
                                                  crop_dim::make(t2, t, 0, point(y), stmt())})));
  });
}

TEST(executable, parallel_loops_and_async) {
  // With a pool, calls run on several threads: compare the outputs only (the callbacks do not log).
  expect_same(stmt(), 16, true, 0, [](recorder& r) {
    stmt rows =
        crop_dim::make(v, out, 1, point(y), call_stmt::make(logging_call(r, false), {in}, {v}, {}, {.name = "row"}));
    return block::make({
        loop::make(y, loop::parallel, bounds(0, n - 1), 1, rows),
        async::make(task, loop::make(y, 2, bounds(0, n - 1), 3, rows),
                    check::make(call::make(intrinsic::wait_for, {task}))),
    });
  });
}

// Callbacks (and functions called from expressions) may set symbols the program does not know,
// growing (and so moving) the context's values: everything bound around the call must survive.
TEST(executable, callbacks_that_grow_the_context) {
  expect_same(stmt(), 6, false, 0, [](recorder& r) {
    static std::size_t next = 1000;
    auto grow = [](eval_context& c) {
      next += 4096;
      c[var(next)] = 1;
    };
    call_stmt::callable log = logging_call(r);
    stmt growing = call_stmt::make(
        [=](const call_stmt* op, eval_context& c) -> index_t {
          grow(c);
          return log(op, c);
        },
        {in}, {v}, {expr(y)}, {.name = "grows"});
    expr grown = call::make(
        [=](const call* op, eval_context& c) -> index_t {
          grow(c);
          return op->args.empty() ? 0 : 1;
        },
        {expr(y)});
    return loop::make(
        y, loop::serial, bounds(0, n - 1), 1,
        crop_dim::make(t, out, 1, point(y),
                       let_stmt::make(x, grown + y, crop_dim::make(v, t, 0, bounds(x, expr(x) + 1), growing))));
  });
}

// A call with a direct entry point (call_stmt::entry, which func::make's typed callbacks get): the
// executable form calls the entry with the call's buffers, inputs then outputs, and not the
// std::function, which the interpreter calls; both write the same outputs. A call with more
// buffers than the executable passes directly, and a call made without an entry, take the
// std::function in both forms. Mutators keep the entry.
struct entry_counts {
  int target = 0, direct = 0;
};
// out = in + 1 over out's crop, from the buffers alone.
index_t add_one(const raw_buffer* a, const raw_buffer* b) {
  for (index_t i = b->dim(0).min(); i <= b->dim(0).max(); ++i) {
    *static_cast<int*>(b->address_at(i)) = *static_cast<const int*>(a->address_at(i)) + 1;
  }
  return 0;
}
index_t add_one_direct(const void* counts, const raw_buffer* const* buffers) {
  ++static_cast<entry_counts*>(const_cast<void*>(counts))->direct;
  return add_one(buffers[0], buffers[1]);
}
stmt add_one_call(entry_counts& counts, bool with_entry, var a, var b, std::size_t extra_inputs = 0) {
  call_stmt::callable target = [&counts](const call_stmt* op, eval_context& c) -> index_t {
    ++counts.target;
    return add_one(c.lookup_buffer(op->inputs[0]), c.lookup_buffer(op->outputs[0]));
  };
  internal::call_entry entry;
  if (with_entry) entry = {&add_one_direct, std::shared_ptr<const void>(&counts, [](const void*) {})};
  // Extra inputs (the same buffer again) after the first: the entry would see them before out.
  call_stmt::symbol_list inputs(1 + extra_inputs, a);
  return call_stmt::make(std::move(target), std::move(inputs), {b}, {}, {.name = "add_one"}, std::move(entry));
}

TEST(executable, calls_with_a_direct_entry) {
  for (std::size_t extra_inputs : {0, 8}) {
    for (bool with_entry : {false, true}) {
      for (int mode = 0; mode < 2; ++mode) {
        entry_counts counts;
        // The loop's body is flattened (a crop whose body is the call, and a call); outside it, a
        // call node.
        stmt body = crop_dim::make(t, out, 0, point(x), add_one_call(counts, with_entry, in, t, extra_inputs));
        stmt program = block::make({
            loop::make(x, loop::serial, bounds(0, 4), 1, body),
            add_one_call(counts, with_entry, in, t2, extra_inputs),
        });
        // substitute goes through the substitutor; a renamed call keeps its entry.
        program = substitute(program, t2, v);
        buffer<int, 1> input({5}), output({5}), whole({5});
        input.allocate();
        output.allocate();
        whole.allocate();
        for (index_t i = 0; i < 5; ++i) input(i) = static_cast<int>(i * 10);
        eval_context c;
        c[in] = reinterpret_cast<index_t>(static_cast<const raw_buffer*>(&input));
        c[out] = reinterpret_cast<index_t>(static_cast<const raw_buffer*>(&output));
        c[v] = reinterpret_cast<index_t>(static_cast<const raw_buffer*>(&whole));
        c.reserve(symbol_count(program));
        ASSERT_EQ(mode == 0 ? evaluate(program, c) : internal::executable(program).run(c), 0);
        for (index_t i = 0; i < 5; ++i) {
          EXPECT_EQ(output(i), i * 10 + 1);
          EXPECT_EQ(whole(i), i * 10 + 1);
        }
        const bool direct = mode == 1 && with_entry && extra_inputs == 0;
        EXPECT_EQ(counts.direct, direct ? 6 : 0) << mode << with_entry << extra_inputs;
        EXPECT_EQ(counts.target, direct ? 0 : 6) << mode << with_entry << extra_inputs;
      }
    }
  }
}

// Loops whose calls take const views of their buffers (call_entry::const_views, as func::make's
// typed callbacks with const buffer parameters) refresh their crops from one iteration to the
// next instead of copying the source's descriptor again; a call without const views makes them
// rebuild. Either way every call sees the descriptors the interpreter gives it: crops clamped at
// the ends of the source, crops of a ring buffer (unfolded when within one fold), empty crops,
// crops of a crop bound in the body, and a callback that changes the descriptor it is given. A
// refreshed crop with a body stays bound across iterations when nothing outside it reads its
// symbol (its end is left out of the loop's operations): symbols are all unbound after the run,
// failing or not, and one of a source of rank above a frame slot's runs as a node.
struct logging_entry {
  recorder* r;
  const char* name;
  std::size_t inputs;
  // Changes the output's descriptor after writing it (a callback without const views may).
  bool scribble;
  // Fails (returns 7) on this call, counting from 0 (-1: never).
  int fail_at = -1;
  mutable int calls = 0;
};
index_t logging_direct(const void* p, const raw_buffer* const* buffers) {
  const logging_entry& le = *static_cast<const logging_entry*>(p);
  le.r->log << "call " << le.name << ":";
  for (std::size_t i = 0; i < le.inputs; ++i) describe(le.r->log << " in ", buffers[i]);
  describe(le.r->log << " out ", buffers[le.inputs]);
  le.r->log << "\n";
  raw_buffer* ob = const_cast<raw_buffer*>(buffers[le.inputs]);
  if (ob && ob->base) {
    for_each_index(*ob, [&](span<const index_t> at) {
      int sum = 1;
      for (std::size_t i = 0; i < le.inputs; ++i) {
        const raw_buffer* ib = buffers[i];
        if (ib && ib->base && ib->contains(at)) sum += *static_cast<const int*>(ib->address_at(at));
      }
      *static_cast<int*>(ob->address_at(at)) = sum;
    });
  }
  if (le.scribble && ob && ob->rank > 0) {
    ob->dims[0].set_bounds(ob->dims[0].min() + 1, ob->dims[0].max() - 1);
    ob->base = nullptr;
  }
  return le.calls++ == le.fail_at ? 7 : 0;
}
stmt logging_entry_call(recorder& r, const char* name, var i, var o, bool const_views, bool scribble = false,
                        int fail_at = -1) {
  auto le = std::make_shared<logging_entry>(logging_entry{&r, name, 1, scribble, fail_at});
  call_stmt::callable target = logging_call(r);
  if (scribble || fail_at >= 0) {
    target = [&r, le](const call_stmt* op, eval_context& c) -> index_t {
      const raw_buffer* buffers[2] = {c.lookup_buffer(op->inputs[0]), c.lookup_buffer(op->outputs[0])};
      return logging_direct(le.get(), buffers);
    };
  }
  internal::call_entry entry{&logging_direct, le, const_views};
  return call_stmt::make(std::move(target), {i}, {o}, {}, {.name = name}, std::move(entry));
}

TEST(executable, crops_refreshed_in_loops_of_const_view_calls) {
  var w(ctx, "w");
  for (bool const_views : {true, false}) {
    for (index_t step : {1, 2, 3}) {
      expect_same(stmt(), 7, false, 0, [&](recorder& r) {
        stmt body = block::make({
            // A ring buffer of 2 rows, cropped to 1 or 2 of them (clamped at the end of t).
            crop_dim::make(t2, t, 1, bounds(y, expr(y) + 1), logging_entry_call(r, "producer", in, t2, const_views)),
            // Clamped at both ends of out (the loop runs from -1 to n), empty past them.
            crop_buffer::make(
                v, out, {interval_expr(), bounds(y, expr(y) + (step - 1))},
                block::make({
                    logging_entry_call(r, "consumer", t, v, const_views),
                    // A crop of a crop bound in the body: rebuilt every time.
                    crop_dim::make(x, v, 0, bounds(y, expr(y) + 2), logging_entry_call(r, "inner", in, x, const_views)),
                })),
            // A crop of no dim, and one whose bounds are not affine.
            crop_buffer::make(t2, t, {}, logging_entry_call(r, "whole", in, t2, const_views)),
            // (With step 3 only: bounds the compiler cannot read, so no crop of the body stays
            // bound across iterations.)
            step == 3 ? crop_dim::make(t2, out, 0, bounds(expr(y) * expr(y), expr(y) * expr(y) + 1),
                                       logging_entry_call(r, "square", in, t2, const_views))
                      : stmt(),
            // A crop with a body whose symbol a call after it reads (unbound there), and one whose
            // symbol nothing else reads (bound from the first iteration to the end of the loop).
            crop_dim::make(v, out, 0, point(y),
                           block::make({logging_entry_call(r, "in_v", in, v, const_views),
                                        logging_entry_call(r, "in_v_again", v, v, const_views)})),
            crop_dim::make(task, out, 1, bounds(y, expr(y) + 1),
                           block::make({logging_entry_call(r, "in_task", in, task, const_views),
                                        logging_entry_call(r, "in_task_again", task, task, const_views)})),
            logging_entry_call(r, "reads_v", v, task, const_views),
            // Bound from the first iteration to the end of the loop, clamped at both ends of out.
            crop_dim::make(w, out, 1, bounds(expr(y) + (-1), y),
                           block::make({logging_entry_call(r, "in_w", in, w, const_views),
                                        logging_entry_call(r, "in_w_again", w, w, const_views)})),
        });
        return allocate::make(t, memory_type::heap, 4, {{bounds(0, n - 1), expr(), expr()}, {bounds(-1, n), expr(), 2}},
                              loop::make(y, loop::serial, bounds(-1, n), step, body));
      });
    }
  }
  // Failures inside crops that stay bound across iterations, and in the first iteration.
  for (int fail_at : {0, 1, 4}) {
    expect_same(stmt(), 5, false, 7, [&](recorder& r) {
      return loop::make(
          y, loop::serial, bounds(0, 4), 1,
          crop_dim::make(v, out, 1, point(y),
                         block::make({
                             logging_entry_call(r, "first", in, v, true),
                             crop_dim::make(t2, v, 0, bounds(y, expr(y) + 1),
                                            logging_entry_call(r, "failing", in, t2, true, false, fail_at)),
                         })));
    });
  }
  // A crop that would stay bound, of a buffer of rank 5 (above the rank a frame slot holds): it
  // runs as a node every iteration, and the loop goes on with the operations after it.
  for (int fail_at : {-1, 1}) {
    expect_same(stmt(), 4, false, fail_at < 0 ? 0 : 7, [&](recorder& r) {
      return allocate::make(
          t, memory_type::heap, 4, std::vector<dim_expr>(5, {bounds(0, 2), expr(), expr()}),
          loop::make(
              y, loop::serial, bounds(0, 2), 1,
              block::make({
                  crop_dim::make(v, t, 4, point(y),
                                 block::make({logging_entry_call(r, "rank_5", in, v, true),
                                              logging_entry_call(r, "rank_5_again", v, v, true)})),
                  crop_dim::make(t2, out, 1, point(y), logging_entry_call(r, "after", in, t2, true, false, fail_at)),
              })));
    });
  }
  // A crop that would be refreshed, of a null buffer: it fails as the interpreter does.
  expect_same(stmt(), 4, false, 1, [](recorder& r) {
    return loop::make(y, loop::serial, bounds(0, 2), 1,
                      crop_dim::make(v, t, 1, point(y), logging_entry_call(r, "null_source", in, v, true)));
  });
  // A callback that changes its output's descriptor, beside calls with const views: the loop's
  // crops are rebuilt, so the next iteration's crop is whole again.
  expect_same(stmt(), 5, false, 0, [](recorder& r) {
    return loop::make(y, loop::serial, bounds(0, 4), 1,
                      block::make({
                          crop_dim::make(v, out, 1, point(y), logging_entry_call(r, "scribbler", in, v, false, true)),
                          crop_dim::make(t2, out, 1, point(y), logging_entry_call(r, "reader", in, t2, true)),
                      }));
  });
}

// Refreshed crops whose bounds are affine in one symbol ([y + c0, y + c1], a point of y + c) make
// the cropped dim again from what their slot kept of the source, without evaluating expressions
// or reading the source: every call must still see the descriptors the interpreter gives it.
// Sources unfolded, folded by a power of two (crops within one fold unfolded, wider ones not),
// folded by 3, with a stride-0 dim and with a null base; of rank 1 to 3, cropped in dims 0 to 2;
// clamped at both ends and empty; the crop as a call's output, its input, or both; bounds that
// saturate at the ends of index_t; a block parked before the loop (given back at the first call);
// and a source rebound between runs of the loop at the same address with other contents.
TEST(executable, refreshed_crops_of_affine_bounds) {
  var u(ctx, "u"), w(ctx, "w"), nb(ctx, "nb"), r1(ctx, "r1"), z(ctx, "z");
  for (index_t step : {1, 2}) {
    expect_same(stmt(), 6, false, 0, [&](recorder& r) {
      auto call = [&](const char* name, var i, var o) { return logging_entry_call(r, name, i, o, true); };
      stmt body = block::make({
          crop_dim::make(t2, t, 1, bounds(y, expr(y) + 1), call("folded_pow2", in, t2)),
          crop_dim::make(t2, t, 1, bounds(expr(y) + (-2), expr(y) + 2), call("folded_pow2_wide", in, t2)),
          crop_dim::make(t2, u, 2, bounds(y, expr(y) + 1), call("folded_3", in, t2)),
          crop_dim::make(t2, u, 0, point(expr(y) + (-3)), call("rank_3_dim_0", in, t2)),
          crop_dim::make(v, out, 0, bounds(expr(y) + (-2), expr(y) + 3), call("clamped", in, v)),
          crop_dim::make(v, out, 1, bounds(expr(y) + 3, expr(y) + 1), call("empty", in, v)),
          crop_dim::make(v, out, 1, point(expr(y) + 1), call("point_plus", in, v)),
          crop_dim::make(v, in, 1, point(y), call("as_input", v, out)),
          crop_dim::make(v, out, 1, bounds(y, expr(y) + 1), call("as_both", v, v)),
          crop_dim::make(t2, w, 1, bounds(y, expr(y) + 1), call("stride_0", in, t2)),
          crop_dim::make(t2, nb, 0, bounds(y, expr(y) + 1), call("null_base", in, t2)),
          crop_dim::make(t2, r1, 0, bounds(expr(y) + 1, expr(y) + 2), call("rank_1", in, t2)),
      });
      const expr last = n - 1;
      stmt program = loop::make(y, loop::serial, bounds(-1, n), step, body);
      program = make_buffer::make(nb, 0, 4, {{bounds(0, last), 4, expr()}}, program);
      program = allocate::make(r1, memory_type::heap, 4, {{bounds(0, last), expr(), 2}}, program);
      program = allocate::make(w, memory_type::heap, 4,
                               {{bounds(0, last), expr(), expr()}, {bounds(0, last), 0, expr()}}, program);
      program = allocate::make(
          u, memory_type::heap, 4,
          {{bounds(0, 1), expr(), expr()}, {bounds(0, 1), expr(), expr()}, {bounds(-1, n), expr(), 3}}, program);
      program = allocate::make(t, memory_type::heap, 4, {{bounds(0, last), expr(), expr()}, {bounds(-1, n), expr(), 4}},
                               program);
      // A block freed before the loop is parked until the loop's first call.
      return allocate::make(task, memory_type::heap, 4, {{bounds(0, 7), expr(), expr()}},
                            block::make({logging_entry_call(r, "before", in, task, true),
                                         check::make(call::make(intrinsic::free, {task})), program}));
    });
  }
  // Bounds of y + c that saturate at both ends of index_t.
  const index_t big = std::numeric_limits<index_t>::max();
  for (index_t lo : {big - 3, std::numeric_limits<index_t>::min() + 1}) {
    expect_same(stmt(), 4, false, 0, [&](recorder& r) {
      return loop::make(
          y, loop::serial, bounds(lo, lo + 2), 1,
          block::make({
              crop_dim::make(v, out, 0, bounds(y, expr(y) + 5), logging_entry_call(r, "high", in, v, true)),
              crop_dim::make(v, out, 1, bounds(expr(y) + (-5), y), logging_entry_call(r, "low", in, v, true)),
          }));
    });
  }
  // The source of the inner loop's refreshed crop is a crop the outer loop makes again in the same
  // slot every iteration (other bounds and base), and an allocation with other bounds each time:
  // a run of the inner loop never refreshes from what an earlier run kept.
  expect_same(stmt(), 5, false, 0, [&](recorder& r) {
    stmt inner = loop::make(
        y, loop::serial, bounds(0, 4), 1,
        block::make({
            crop_dim::make(v, u, 0, point(y), logging_entry_call(r, "of_crop", in, v, true)),
            crop_dim::make(t2, t, 1, bounds(y, expr(y) + 1), logging_entry_call(r, "of_allocation", in, t2, true)),
        }));
    return loop::make(
        z, loop::serial, bounds(0, 3), 1,
        crop_dim::make(u, out, 1, bounds(z, expr(z) + 1),
                       allocate::make(t, memory_type::heap, 4,
                                      {{bounds(0, 4), expr(), expr()}, {bounds(z, expr(z) + 5), expr(), 4}}, inner)));
  });
}

// A pipeline carries its executable form but stays an aggregate: clients make pipelines by hand
// with designated initializers. Replacing the body of one that already ran runs the new body.
static_assert(std::is_aggregate_v<pipeline>);
TEST(executable, a_pipeline_made_by_hand_runs_its_current_body) {
  pipeline p{.args = {x}, .inputs = {}, .outputs = {}, .constants = {}, .body = check::make(expr(x) < 3)};
  eval_config quiet;
  quiet.check_failed = [](const expr&) {};
  eval_context c;
  c.config = &quiet;
  const index_t two = 2, five = 5;
  EXPECT_EQ(p.evaluate(pipeline::scalars(&two, 1), {}, {}, c), 0);
  EXPECT_NE(p.evaluate(pipeline::scalars(&five, 1), {}, {}, c), 0);
  p.body = check::make(expr(x) < 10);
  EXPECT_EQ(p.evaluate(pipeline::scalars(&five, 1), {}, {}, c), 0);
  // A copy evaluates what it was copied with.
  pipeline q = p;
  p.body = check::make(expr(x) < 4);
  EXPECT_NE(p.evaluate(pipeline::scalars(&five, 1), {}, {}, c), 0);
  EXPECT_EQ(q.evaluate(pipeline::scalars(&five, 1), {}, {}, c), 0);
}

TEST(executable, pipelines_use_it_unless_told_to_interpret) {
  const char* mode = std::getenv("SLINKY_EVALUATOR");
  EXPECT_EQ(internal::executable::enabled(), !(mode && std::string(mode) == "interpret"));
  // The executable keeps its source alive and says what it was compiled from.
  stmt s = check::make(expr(x) < 3);
  internal::executable e(s);
  EXPECT_TRUE(e.source().same_as(s));
  eval_context c;
  c.reserve(symbol_count(s));
  recorder r;
  c.config = &r.config;
  c[x] = 2;
  EXPECT_EQ(e.run(c), 0);
  c[x] = 3;
  EXPECT_EQ(e.run(c), 1);
  EXPECT_EQ(r.log.str(), "check failed: x < 3\n");
  // An undefined program does nothing.
  EXPECT_EQ(internal::executable(stmt()).run(c), 0);
}

}  // namespace
}  // namespace slinky
