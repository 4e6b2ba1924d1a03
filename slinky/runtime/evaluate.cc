// The tree-walking interpreter. Symbol values live in a flat vector indexed by symbol id;
// buffer descriptors made by crops, slices and allocations live on the C++ stack of the
// visiting function, so a loop iteration allocates nothing on the heap.
#include "slinky/runtime/evaluate.h"

#include <alloca.h>

#include <algorithm>
#include <atomic>
#include <limits>
#include <optional>

#include "slinky/base/arithmetic.h"
#include "slinky/runtime/copy.h"
#include "slinky/runtime/evaluator.h"

namespace slinky {

namespace internal {

const eval_config& default_eval_config() {
  static const eval_config config;
  return config;
}

}  // namespace internal

using internal::copy_dims;
using internal::crop_and_unfold;
using internal::init_dims;

index_t evaluator::exec(const base_stmt_node* s) {
  switch (s->type) {
  case stmt_node_type::none: return 0;
  case stmt_node_type::call_stmt: return exec_call(static_cast<const call_stmt*>(s));
  case stmt_node_type::copy_stmt: return exec_copy(static_cast<const copy_stmt*>(s));
  case stmt_node_type::let_stmt:
    return exec_let(static_cast<const let_stmt*>(s), static_cast<const let_stmt*>(s)->body);
  case stmt_node_type::block:
    for (const stmt& i : static_cast<const block*>(s)->stmts) {
      if (index_t result = exec(i)) return result;
    }
    return 0;
  case stmt_node_type::loop: {
    const loop* op = static_cast<const loop*>(s);
    return exec_loop(op, op->body);
  }
  case stmt_node_type::allocate: {
    const allocate* op = static_cast<const allocate*>(s);
    return exec_allocate(op, op->body);
  }
  case stmt_node_type::make_buffer: {
    const make_buffer* op = static_cast<const make_buffer*>(s);
    return exec_make_buffer(op, op->body);
  }
  case stmt_node_type::clone_buffer: {
    const clone_buffer* op = static_cast<const clone_buffer*>(s);
    return exec_clone_buffer(op, op->body);
  }
  case stmt_node_type::crop_buffer: {
    const crop_buffer* op = static_cast<const crop_buffer*>(s);
    return exec_crop_buffer(op, op->body);
  }
  case stmt_node_type::crop_dim: {
    const crop_dim* op = static_cast<const crop_dim*>(s);
    return exec_crop_dim(op, op->body);
  }
  case stmt_node_type::slice_buffer: {
    const slice_buffer* op = static_cast<const slice_buffer*>(s);
    return exec_slice_buffer(op, op->body);
  }
  case stmt_node_type::slice_dim: {
    const slice_dim* op = static_cast<const slice_dim*>(s);
    return exec_slice_dim(op, op->body);
  }
  case stmt_node_type::transpose: {
    const transpose* op = static_cast<const transpose*>(s);
    return exec_transpose(op, op->body);
  }
  case stmt_node_type::constant_buffer: {
    const constant_buffer* op = static_cast<const constant_buffer*>(s);
    return exec_constant_buffer(op, op->body);
  }
  case stmt_node_type::async: {
    const async* op = static_cast<const async*>(s);
    return exec_async(op, op->task, op->body);
  }
  case stmt_node_type::check: return exec_check(static_cast<const check*>(s));
  case stmt_node_type::if_then_else: {
    const if_then_else* op = static_cast<const if_then_else*>(s);
    return exec_if_then_else(op, op->true_body, op->false_body);
  }
  }
  return 0;
}

index_t evaluator::report_call_failure(const call_stmt* op, index_t result) {
  if (fail(result)) {
    if (config.call_failed) {
      config.call_failed(op);
    } else {
      default_call_failed(op);
    }
  }
  return result;
}

index_t evaluator::exec_let(const let_stmt* op, body_ref body) {
  return with_lets(op->lets, [&]() { return run(body); });
}

index_t evaluator::exec_loop(const loop* op, body_ref body) {
  index_t min = eval(op->bounds.min);
  index_t max = eval(op->bounds.max);
  index_t step = eval(op->step);
  if (step <= 0) return fail_check(op->step > 0);
  if (min > max) return 0;
  index_t workers = eval(op->max_workers);
  if (workers > 1 && config.thread_pool &&
      static_cast<std::size_t>(max) - static_cast<std::size_t>(min) >= static_cast<std::size_t>(step)) {
    return exec_parallel_loop(op, min, max, step, workers, body);
  }
  return run_serial_loop(op->sym, min, max, step, [&]() { return run(body); });
}

index_t evaluator::exec_parallel_loop(const loop* op, index_t min, index_t max, index_t step, index_t workers,
                                      body_ref body) {
  if (allocations.any_parked()) give_back_parked();
  // Computed without overflow for loops spanning more than half the range of an index_t.
  const std::size_t span = static_cast<std::size_t>(max) - static_cast<std::size_t>(min);
  const index_t iterations = static_cast<index_t>(
      std::min<std::size_t>(span / static_cast<std::size_t>(step), std::numeric_limits<index_t>::max() - 1) + 1);
  failure_state local_failures;
  failure_state* shared = failures ? failures : &local_failures;
  std::atomic<index_t> next{0};
  std::atomic<index_t> first_error{0};
  const int max_workers = static_cast<int>(std::min<index_t>(workers, std::numeric_limits<int>::max()));
  // The pool's workers plus this thread, which runs items while it waits.
  const std::size_t worker_count = static_cast<std::size_t>(
      std::min<index_t>({iterations, workers, static_cast<index_t>(config.thread_pool->thread_count()) + 1}));
  // Each worker gets its own copy of the symbol values and takes iterations in order, so an
  // iteration never waits on one that is not started yet (pipelined loops rely on this).
  auto worker = [&](std::size_t) {
    eval_context local = ctx;
    evaluator e(local, shared);
    internal::worker_block_cache blocks;
    e.worker_blocks = &blocks;
    for (;;) {
      // acq_rel: a claim happens after every earlier claim, and so after the iterations their
      // workers finished before them. A pipelined loop reuses an iteration's ring buffer rows
      // once a later claim shows it finished (see docs/threads.md).
      index_t k = next.fetch_add(1, std::memory_order_acq_rel);
      if (k >= iterations || shared->failed.load(std::memory_order_relaxed)) break;
      // In unsigned arithmetic: k * step may not fit in an index_t, min + k * step (<= max) does.
      e.values[op->sym.sym()] = static_cast<index_t>(static_cast<std::size_t>(min) +
                                                     static_cast<std::size_t>(k) * static_cast<std::size_t>(step));
      if (index_t result = e.run(body)) {
        index_t expected = 0;
        first_error.compare_exchange_strong(expected, result);
        shared->failed.store(true);
        break;
      }
    }
    blocks.free_all(e.free_hook());
  };
  if (worker_count <= 1) {
    worker(0);
  } else {
    // Not parallel_for: its std::function body would be copied (and maybe allocated) per loop
    // and per thread; each worker makes its own copies of what it needs above.
    ref_count<thread_pool::task> t = config.thread_pool->enqueue_ref(worker_count, worker, max_workers);
    config.thread_pool->wait_for(t.get());
  }
  if (first_error.load() == 0) return 0;
  const index_t reported = shared->result.load();
  return reported != 0 ? reported : first_error.load();
}

index_t evaluator::exec_allocate(const allocate* op, body_ref body) {
  const std::size_t rank = op->dims.size();
  raw_buffer buf;
  buf.elem_size = eval(op->elem_size);
  buf.rank = rank;
  buf.dims = SLINKY_STACK_DIMS(rank);
  init_dims(*this, op->dims, buf.dims);
  buf.rank = internal::rank_without_trailing_broadcasts(buf.dims, rank);
  const index_t stride_alignment = std::max<index_t>(1, static_cast<index_t>(config.stride_alignment));
  const index_t layout_size = internal::init_strides_or_negative(buf, stride_alignment);
  // The layout's size is the size in bytes rounded up to the alignment: the same where it is 1.
  const index_t checked_size = stride_alignment == 1 ? layout_size : internal::size_bytes_or_negative(buf);
  const std::size_t size_bytes = checked_size < 0 ? 0 : static_cast<std::size_t>(checked_size);
  if (layout_size < 0 || checked_size < 0) {
    // The size in bytes overflows (e.g. an extent computed from a huge scalar argument): fail
    // instead of allocating a wrapped-around size. The buffer is bound so that the message can
    // show its size.
    scoped_value bind(*this, op->sym, reinterpret_cast<index_t>(&buf));
    return fail_check(buffer_size_bytes(op->sym) < std::numeric_limits<index_t>::max());
  }
  const index_t size = static_cast<index_t>(size_bytes);
  const bool on_stack =
      op->storage == memory_type::stack ||
      (op->storage == memory_type::automatic && static_cast<std::size_t>(size) <= config.auto_stack_threshold);
  void* allocation = nullptr;
  std::size_t kept_index = none;
  if (on_stack) {
    const index_t alignment = std::max<index_t>(alignof(std::max_align_t), static_cast<index_t>(config.base_alignment));
    char* p = static_cast<char*>(alloca(std::max<index_t>(size, 1) + alignment));
    p = reinterpret_cast<char*>(align_up(reinterpret_cast<index_t>(p), alignment));
    // base points at the element of min coordinates; undo negative strides' offsets. An empty
    // buffer still gets a base (as from the heap, and as the original's evaluator does): callbacks
    // may slice its non-empty dims before they find the empty one.
    buf.base = p + (size > 0 ? internal::base_offset(buf) : 0);
  } else if (worker_blocks && (kept_index = worker_blocks->take(op->sym, buf)) != none) {
    // take() pointed buf at a block this worker kept.
  } else if (allocation_record* donor = allocations.any_parked() ? allocations.find_parked(buf, size_bytes) : nullptr) {
    // A block freed just before: this buffer takes it over.
    return exec_allocated(op, buf, allocations.hand_on(*donor, op->sym, buf), none, body);
  } else {
    give_back_parked();
    allocation = allocate_heap(op->sym, &buf);
    if (!buf.base && size > 0) {
      // Out of memory (or a hook that could not allocate).
      if (allocation) free_allocation(op->sym, &buf, allocation);
      scoped_value bind(*this, op->sym, reinterpret_cast<index_t>(&buf));
      return fail_check(buffer_at(op->sym) != 0);
    }
    if (worker_blocks) {
      kept_index = worker_blocks->keep(op->sym, buf, allocation);
      // Freed when the worker is done, not by this statement (nor early by free()).
      allocation = nullptr;
    }
  }
  return exec_allocated(op, buf, {op->sym, &buf, allocation, op->sym, &buf, buf.base, size_bytes, false}, kept_index,
                        body);
}

// Runs the body of an allocate statement with its buffer allocated as `record` says, then gives
// the memory back (unless the body already did, with the free intrinsic).
index_t evaluator::exec_allocated(const allocate* op, raw_buffer& buf, const allocation_record& record,
                                  std::size_t kept_index, body_ref body) {
  allocations.push(record);
  index_t result = exec_with_buffer(op->sym, buf, body);
  allocations.pop(free_hook());
  if (kept_index != none) worker_blocks->release(kept_index);
  return result;
}

index_t evaluator::exec_make_buffer(const make_buffer* op, body_ref body) {
  const std::size_t rank = op->dims.size();
  raw_buffer buf;
  buf.base = reinterpret_cast<void*>(eval(op->base));
  buf.elem_size = eval(op->elem_size);
  buf.rank = rank;
  buf.dims = SLINKY_STACK_DIMS(rank);
  init_dims(*this, op->dims, buf.dims);
  buf.rank = internal::rank_without_trailing_broadcasts(buf.dims, rank);
  return exec_with_buffer(op->sym, buf, body);
}

index_t evaluator::exec_async(const async* op, body_ref task, body_ref body) {
  if (allocations.any_parked()) give_back_parked();
  if (!config.thread_pool) {
    // Without a pool, the task runs to completion first.
    if (index_t result = run(task)) return result;
    scoped_value bind(*this, op->sym, 0);
    return run(body);
  }
  // The task and the body run at the same time: a failure of either must stop the other (e.g.
  // one waiting on a semaphore the other would signal).
  failure_state local_failures;
  failure_state* const outer_failures = failures;
  if (!failures) failures = &local_failures;
  eval_context task_ctx = ctx;
  index_t task_result = 0;
  failure_state* shared = failures;
  auto run_task = [&](std::size_t) {
    evaluator e(task_ctx, shared);
    task_result = e.run(task);
  };
  // The task is waited for below, so a reference to run_task (no std::function) is enough.
  ref_count<thread_pool::task> pending = config.thread_pool->enqueue_ref(1, run_task, 1);
  index_t result;
  {
    scoped_value bind(*this, op->sym, reinterpret_cast<index_t>(pending.get()));
    result = run(body);
  }
  if (result) fail(result);
  config.thread_pool->wait_for(pending.get());
  failures = outer_failures;
  if (result) return result;
  if (task_result && outer_failures == nullptr) {
    // Report the task's failure as evaluate's result.
    const index_t reported = local_failures.result.load();
    return reported != 0 ? reported : task_result;
  }
  return task_result;
}

index_t evaluator::exec_clone_buffer(const clone_buffer* op, body_ref body) {
  const raw_buffer* src = lookup_buffer(op->src);
  if (!src) return fail_check(expr(variable::make(op->src)) != 0);
  raw_buffer buf{src->base, src->elem_size, src->rank, SLINKY_STACK_DIMS(src->rank)};
  copy_dims(*src, buf.dims);
  return exec_with_buffer(op->sym, buf, body);
}

index_t evaluator::exec_crop_buffer(const crop_buffer* op, body_ref body) {
  const raw_buffer* src = lookup_buffer(op->src);
  if (!src) return fail_check(expr(variable::make(op->src)) != 0);
  raw_buffer buf{src->base, src->elem_size, src->rank, SLINKY_STACK_DIMS(src->rank)};
  copy_dims(*src, buf.dims);
  for (std::size_t d = 0; d < op->bounds.size() && d < buf.rank; ++d) {
    const interval_expr& b = op->bounds[d];
    const dim& old = buf.dims[d];
    index_t min = eval(b.min, old.min());
    index_t max = b.is_point() && b.min.defined() ? min : eval(b.max, old.max());
    crop_and_unfold(buf, d, min, max);
  }
  return exec_with_buffer(op->sym, buf, body);
}

index_t evaluator::exec_crop_dim(const crop_dim* op, body_ref body) {
  const raw_buffer* src = lookup_buffer(op->src);
  if (!src) return fail_check(expr(variable::make(op->src)) != 0);
  raw_buffer buf{src->base, src->elem_size, src->rank, SLINKY_STACK_DIMS(src->rank)};
  copy_dims(*src, buf.dims);
  if (static_cast<std::size_t>(op->dim) < buf.rank) {
    const dim& old = buf.dims[op->dim];
    index_t min = eval(op->bounds.min, old.min());
    index_t max = op->bounds.is_point() && op->bounds.min.defined() ? min : eval(op->bounds.max, old.max());
    crop_and_unfold(buf, op->dim, min, max);
  }
  return exec_with_buffer(op->sym, buf, body);
}

index_t evaluator::exec_slice_buffer(const slice_buffer* op, body_ref body) {
  const raw_buffer* src = lookup_buffer(op->src);
  if (!src) return fail_check(expr(variable::make(op->src)) != 0);
  raw_buffer buf{src->base, src->elem_size, src->rank, SLINKY_STACK_DIMS(src->rank)};
  copy_dims(*src, buf.dims);
  // Slice from the last dimension down so earlier indices stay valid.
  for (std::size_t d = std::min(op->at.size(), src->rank); d-- > 0;) {
    if (op->at[d].defined()) buf.slice(d, eval(op->at[d]));
  }
  return exec_with_buffer(op->sym, buf, body);
}

index_t evaluator::exec_slice_dim(const slice_dim* op, body_ref body) {
  const raw_buffer* src = lookup_buffer(op->src);
  if (!src) return fail_check(expr(variable::make(op->src)) != 0);
  raw_buffer buf{src->base, src->elem_size, src->rank, SLINKY_STACK_DIMS(src->rank)};
  copy_dims(*src, buf.dims);
  if (static_cast<std::size_t>(op->dim) < buf.rank) buf.slice(op->dim, eval(op->at));
  return exec_with_buffer(op->sym, buf, body);
}

index_t evaluator::exec_transpose(const transpose* op, body_ref body) {
  const raw_buffer* src = lookup_buffer(op->src);
  if (!src) return fail_check(expr(variable::make(op->src)) != 0);
  const std::size_t rank = op->dims.size();
  raw_buffer buf{src->base, src->elem_size, rank, SLINKY_STACK_DIMS(rank)};
  // Indices at or beyond the source's rank give broadcasts: trailing ones are dropped.
  for (std::size_t d = 0; d < rank; ++d) buf.dims[d] = src->dim(op->dims[d]);
  buf.rank = internal::rank_without_trailing_broadcasts(buf.dims, rank);
  return exec_with_buffer(op->sym, buf, body);
}

// Where the dst points of a copy statement read src (copy_runner's map): src_x with dst_x bound
// to the point, and the statement's plan, evaluated.
struct evaluator::copy_map {
  evaluator& e;
  const copy_stmt* op;
  std::size_t rank;
  std::size_t src_rank;

  void src_at(const index_t* x, index_t* s) {
    for (std::size_t j = 0; j < rank; ++j) e.values[op->dst_x[j].sym()] = x[j];
    for (std::size_t k = 0; k < src_rank; ++k) s[k] = e.eval(op->src_x[k]);
  }
  internal::copy_dim_plan plan(std::size_t j) {
    const copy_stmt::dim_plan& p = op->plan[j];
    if (!p.period.defined()) return {0, 0};
    const index_t period = e.eval(p.period);
    return {period, period > 1 ? e.eval(p.offset) : 0};
  }
  bool flat(index_t* coeffs, index_t* offsets, index_t* q, index_t* m) {
    if (op->flat.empty()) return false;
    for (std::size_t k = 0; k < src_rank; ++k) {
      const copy_stmt::flat_digit& d = op->flat[k];
      q[k] = 0;
      m[k] = 0;
      if (d.coeffs.empty()) continue;
      q[k] = e.eval(d.divisor);
      if (q[k] <= 0) return false;
      if (d.modulus.defined()) {
        m[k] = e.eval(d.modulus);
        if (m[k] <= 0) return false;
      }
      offsets[k] = d.offset.defined() ? e.eval(d.offset) : 0;
      for (std::size_t j = 0; j < rank; ++j) coeffs[k * rank + j] = d.coeffs[j].defined() ? e.eval(d.coeffs[j]) : 0;
    }
    return true;
  }
};

index_t evaluator::exec_copy(const copy_stmt* op) {
  if (allocations.any_parked()) give_back_parked();
  const raw_buffer* src = lookup_buffer(op->src);
  const raw_buffer* dst = lookup_buffer(op->dst);
  const raw_buffer* pad = op->pad.defined() ? lookup_buffer(op->pad) : nullptr;
  if (!src || !dst) return fail_check(expr(variable::make(src ? op->dst : op->src)) != 0);
  if (src->elem_size != dst->elem_size) return fail_check(buffer_elem_size(op->src) == buffer_elem_size(op->dst));
  if (pad && pad->elem_size != dst->elem_size)
    return fail_check(buffer_elem_size(op->pad) == buffer_elem_size(op->dst));
  const std::size_t rank = op->dst_x.size();
  if (dst->rank > rank) return fail_check(buffer_rank(op->dst) == static_cast<index_t>(rank));
  raw_buffer dst_of_rank;
  if (dst->rank < rank) {
    // Trailing broadcast dims dropped by an allocation (exec_allocate): dst is dim::broadcast()
    // there, as dim(d >= rank) says.
    dst_of_rank = {dst->base, dst->elem_size, rank, SLINKY_STACK_DIMS(rank)};
    for (std::size_t d = 0; d < rank; ++d) dst_of_rank.dims[d] = dst->dim(d);
    dst = &dst_of_rank;
  }
  if (!dst->base) return 0;
  for (std::size_t d = 0; d < rank; ++d) {
    if (dst->dims[d].empty()) return 0;
  }
  if (pad && !pad->base) pad = nullptr;
  for (std::size_t d = 0; pad && d < pad->rank; ++d) {
    if (pad->dims[d].empty()) pad = nullptr;
  }
  // The copy binds its dst_x symbols while it measures src_x: restore them afterwards (they
  // may be the variables of loops around the copy).
  index_t* saved = static_cast<index_t*>(alloca(sizeof(index_t) * (rank + 1)));
  for (std::size_t d = 0; d < rank; ++d) saved[d] = values[op->dst_x[d].sym()];
  const std::size_t src_rank = std::min(op->src_x.size(), src->rank);
  void* scratch = alloca(internal::copy_pieces::scratch_bytes(rank, src_rank));
  internal::copy_runner<copy_map>(*src, src_rank, *dst, pad, op->impl, {*this, op, rank, src_rank}, scratch).run();
  for (std::size_t d = 0; d < rank; ++d) values[op->dst_x[d].sym()] = saved[d];
  return 0;
}

eval_context::eval_context() : config(&internal::default_eval_config()) {}

index_t evaluate(const expr& e, eval_context& ctx) {
  ctx.reserve(symbol_count(e));
  evaluator eval(ctx, nullptr);
  return eval.eval(e);
}

index_t evaluate(const expr& e) {
  eval_context ctx;
  return evaluate(e, ctx);
}

index_t evaluate(const stmt& s, eval_context& ctx) {
  ctx.reserve(symbol_count(s));
  return evaluate_reserved(s, ctx);
}

index_t evaluate_reserved(const stmt& s, eval_context& ctx) {
  evaluator eval(ctx, nullptr);
  return eval.exec(s);
}

index_t evaluate(const stmt& s) {
  eval_context ctx;
  return evaluate(s, ctx);
}

}  // namespace slinky
