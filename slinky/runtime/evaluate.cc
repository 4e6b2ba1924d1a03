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
#include "slinky/runtime/live_allocations.h"
#include "slinky/runtime/worker_block_cache.h"

namespace slinky {

namespace {

const eval_config& default_config() {
  static const eval_config config;
  return config;
}

// State shared by the workers of a parallel loop, so that failures are reported once and stop
// the other workers promptly.
struct failure_state {
  std::atomic<bool> failed{false};
  std::atomic<bool> reported{false};
  // The result of the reported failure: what evaluate returns, rather than the 1 of a worker
  // that stopped because of it.
  std::atomic<index_t> result{0};
};

}  // namespace

// Copies a buffer descriptor's dims into storage the caller allocated (on its stack).
#define SLINKY_STACK_DIMS(n) static_cast<dim*>(alloca(sizeof(dim) * ((n) > 0 ? (n) : 1)))

class evaluator {
public:
  eval_context& ctx;
  // Symbol values, indexed by symbol id. The evaluator makes room for every symbol of the
  // program before it runs (see symbol_count), so accesses need no bounds checks; the vector
  // may still be reallocated by a callback that sets a new symbol, so it is never cached.
  std::vector<index_t>& values;
  const eval_config& config;
  failure_state* failures;

  evaluator(eval_context& ctx, failure_state* failures)
      : ctx(ctx), values(ctx.values_), config(ctx.config ? *ctx.config : default_config()), failures(failures) {}

  // Binds a symbol for the lifetime of this object, restoring the old value afterwards. Values
  // are accessed by index because binding may grow the vector.
  class scoped_value {
    evaluator& e_;
    symbol_id sym_;
    index_t old_;

  public:
    scoped_value(evaluator& e, var sym, index_t value) : e_(e), sym_(sym.sym()) {
      old_ = e_.values[sym_];
      e_.values[sym_] = value;
    }
    ~scoped_value() { e_.values[sym_] = old_; }
    void set(index_t value) { e_.values[sym_] = value; }
  };

  index_t lookup(var v) const { return values[v.sym()]; }
  const raw_buffer* lookup_buffer(var v) const { return reinterpret_cast<const raw_buffer*>(lookup(v)); }
  const raw_buffer* lookup_buffer(const expr& e) const {
    const variable* v = e.as<variable>();
    return v ? lookup_buffer(v->sym) : nullptr;
  }

  // Expressions.
  index_t eval(const expr& e) { return eval(e.get()); }
  index_t eval(const expr& e, index_t default_value) { return e.defined() ? eval(e.get()) : default_value; }
  // Most expressions on the hot path are variables and constants: those are evaluated inline,
  // the rest by the out-of-line switch.
  index_t eval(const base_expr_node* e) {
    if (e->type == expr_node_type::variable) {
      const variable* v = static_cast<const variable*>(e);
      if (v->field == buffer_field::none) return lookup(v->sym);
    }
    if (e->type == expr_node_type::constant) return static_cast<const constant*>(e)->value;
    return eval_node(e);
  }
  __attribute__((noinline)) index_t eval_node(const base_expr_node* e) {
    switch (e->type) {
    case expr_node_type::none: return 0;
    case expr_node_type::variable: return eval_variable(static_cast<const variable*>(e));
    case expr_node_type::constant: return static_cast<const constant*>(e)->value;
    case expr_node_type::let: return eval_let(static_cast<const let*>(e));
    case expr_node_type::add: {
      const add* op = static_cast<const add*>(e);
      return saturate_add(eval(op->a), eval(op->b));
    }
    case expr_node_type::sub: {
      const sub* op = static_cast<const sub*>(e);
      return saturate_sub(eval(op->a), eval(op->b));
    }
    case expr_node_type::mul: {
      const mul* op = static_cast<const mul*>(e);
      return saturate_mul(eval(op->a), eval(op->b));
    }
    case expr_node_type::div: {
      const div* op = static_cast<const div*>(e);
      return euclidean_div(eval(op->a), eval(op->b));
    }
    case expr_node_type::mod: {
      const mod* op = static_cast<const mod*>(e);
      return euclidean_mod(eval(op->a), eval(op->b));
    }
    case expr_node_type::min: {
      const minimum* op = static_cast<const minimum*>(e);
      return std::min(eval(op->a), eval(op->b));
    }
    case expr_node_type::max: {
      const maximum* op = static_cast<const maximum*>(e);
      return std::max(eval(op->a), eval(op->b));
    }
    case expr_node_type::equal: {
      const equal* op = static_cast<const equal*>(e);
      return eval(op->a) == eval(op->b);
    }
    case expr_node_type::not_equal: {
      const not_equal* op = static_cast<const not_equal*>(e);
      return eval(op->a) != eval(op->b);
    }
    case expr_node_type::less: {
      const less* op = static_cast<const less*>(e);
      return eval(op->a) < eval(op->b);
    }
    case expr_node_type::less_equal: {
      const less_equal* op = static_cast<const less_equal*>(e);
      return eval(op->a) <= eval(op->b);
    }
    case expr_node_type::logical_and: {
      const logical_and* op = static_cast<const logical_and*>(e);
      return eval(op->a) != 0 && eval(op->b) != 0;
    }
    case expr_node_type::logical_or: {
      const logical_or* op = static_cast<const logical_or*>(e);
      return eval(op->a) != 0 || eval(op->b) != 0;
    }
    case expr_node_type::logical_not: return eval(static_cast<const logical_not*>(e)->a) == 0;
    case expr_node_type::select: {
      const conditional* op = static_cast<const conditional*>(e);
      return eval(op->condition) != 0 ? eval(op->true_value) : eval(op->false_value);
    }
    case expr_node_type::call: return eval_call(static_cast<const call*>(e));
    }
    return 0;
  }

  index_t eval_let(const let* op) {
    // Bind in order (later values may refer to earlier ones), then unbind in reverse.
    index_t* saved = static_cast<index_t*>(alloca(sizeof(index_t) * op->lets.size()));
    for (std::size_t i = 0; i < op->lets.size(); ++i) {
      index_t value = eval(op->lets[i].second);
      symbol_id sym = op->lets[i].first.sym();
      saved[i] = values[sym];
      values[sym] = value;
    }
    index_t result = eval(op->body);
    for (std::size_t i = op->lets.size(); i-- > 0;) values[op->lets[i].first.sym()] = saved[i];
    return result;
  }

  index_t eval_buffer_at(const call* op) {
    const raw_buffer* buf = lookup_buffer(op->args[0]);
    if (!buf) return 0;
    index_t offset = 0;
    for (std::size_t i = 1; i < op->args.size(); ++i) {
      if (i - 1 >= buf->rank) break;
      if (op->args[i].defined()) offset += buf->dims[i - 1].flat_offset_bytes(eval(op->args[i]));
    }
    return reinterpret_cast<index_t>(offset_bytes(buf->base, offset));
  }

  // A variable node: the symbol's value, or a piece of metadata of the buffer bound to it (0 for
  // a null buffer; dimensions past the rank are broadcasts).
  index_t eval_variable(const variable* op) {
    if (op->field == buffer_field::none) return lookup(op->sym);
    const raw_buffer* buf = lookup_buffer(op->sym);
    if (!buf) return 0;
    const dim& d = op->dim >= 0 ? buf->dim(op->dim) : dim::broadcast();
    switch (op->field) {
    case buffer_field::none: return lookup(op->sym);
    case buffer_field::rank: return static_cast<index_t>(buf->rank);
    case buffer_field::elem_size: return static_cast<index_t>(buf->elem_size);
    case buffer_field::size_bytes: {
      // An overflowing size (raw_buffer::size_bytes() is 0 then) reads as the largest index_t, so
      // that checks of sizes fail.
      const std::optional<std::size_t> size = internal::checked_size_bytes(*buf);
      return size ? static_cast<index_t>(*size) : std::numeric_limits<index_t>::max();
    }
    case buffer_field::min: return d.min();
    case buffer_field::max: return d.max();
    case buffer_field::stride: return d.stride();
    case buffer_field::fold_factor: return d.fold_factor();
    }
    return 0;
  }

  index_t eval_call(const call* op) {
    switch (op->intrinsic) {
    case intrinsic::none: return op->target ? op->target(op, ctx) : 0;
    case intrinsic::and_then:
      for (const expr& i : op->args) {
        if (eval(i) == 0) return 0;
      }
      return 1;
    case intrinsic::or_else:
      for (const expr& i : op->args) {
        if (eval(i) != 0) return 1;
      }
      return 0;
    case intrinsic::wait_for: return eval_wait_for(op);
    case intrinsic::validate_buffer: {
      const raw_buffer* buf = lookup_buffer(op->args[0]);
      return buf && validate_buffer(*buf) ? 1 : 0;
    }
    case intrinsic::positive_infinity: return std::numeric_limits<index_t>::max();
    case intrinsic::negative_infinity: return std::numeric_limits<index_t>::min();
    case intrinsic::indeterminate: return 0;
    case intrinsic::abs: {
      index_t x = eval(op->args[0]);
      return x < 0 ? saturate_negate(x) : x;
    }
    case intrinsic::buffer_at: return eval_buffer_at(op);
    case intrinsic::semaphore_init: return eval_semaphore_init(op);
    case intrinsic::semaphore_signal: return eval_semaphore_signal(op);
    case intrinsic::semaphore_wait: return eval_semaphore_wait(op);
    case intrinsic::trace_begin: {
      const char* name = reinterpret_cast<const char*>(eval(op->args[0]));
      return config.trace_begin ? config.trace_begin(name) : 0;
    }
    case intrinsic::trace_end:
      if (config.trace_end) config.trace_end(eval(op->args[0]));
      return 1;
    case intrinsic::free: return eval_free(op);
    }
    return 0;
  }

  // Semaphores are index_t counters at the given address. With a thread pool, waits block
  // (helping with other work) until the count is positive.
  index_t eval_semaphore_init(const call* op) {
    index_t* sem = reinterpret_cast<index_t*>(eval(op->args[0]));
    index_t count = op->args.size() > 1 ? eval(op->args[1], 0) : 0;
    if (sem) *sem = count;
    return 1;
  }
  // semaphore_signal(s0, c0, s1, c1, ...): adds each count (1 if undefined) to its semaphore.
  index_t eval_semaphore_signal(const call* op) {
    const std::size_t n = (op->args.size() + 1) / 2;
    index_t** sems = static_cast<index_t**>(alloca(sizeof(index_t*) * n));
    index_t* counts = static_cast<index_t*>(alloca(sizeof(index_t) * n));
    for (std::size_t i = 0; i < n; ++i) {
      sems[i] = reinterpret_cast<index_t*>(eval(op->args[2 * i]));
      counts[i] = 2 * i + 1 < op->args.size() ? eval(op->args[2 * i + 1], 1) : 1;
    }
    auto signal = [&]() {
      for (std::size_t i = 0; i < n; ++i) {
        if (sems[i]) *sems[i] += counts[i];
      }
    };
    if (config.thread_pool) {
      config.thread_pool->atomic_call(signal);
    } else {
      signal();
    }
    return 1;
  }
  // semaphore_wait(s0, c0, s1, c1, ...): waits until every semaphore has at least its count (1
  // if undefined), and takes all the counts at once.
  index_t eval_semaphore_wait(const call* op) {
    const std::size_t n = (op->args.size() + 1) / 2;
    index_t** sems = static_cast<index_t**>(alloca(sizeof(index_t*) * n));
    index_t* counts = static_cast<index_t*>(alloca(sizeof(index_t) * n));
    for (std::size_t i = 0; i < n; ++i) {
      sems[i] = reinterpret_cast<index_t*>(eval(op->args[2 * i]));
      counts[i] = 2 * i + 1 < op->args.size() ? eval(op->args[2 * i + 1], 1) : 1;
    }
    auto try_take = [&]() {
      for (std::size_t i = 0; i < n; ++i) {
        if (sems[i] && *sems[i] < counts[i]) return false;
      }
      for (std::size_t i = 0; i < n; ++i) {
        if (sems[i]) *sems[i] -= counts[i];
      }
      return true;
    };
    if (config.thread_pool) {
      failure_state* failures = this->failures;
      bool acquired = false;
      config.thread_pool->wait_for([&]() {
        if (failures && failures->failed.load(std::memory_order_acquire)) return true;
        // wait_for evaluates the predicate under the pool's lock, so taking the counts here is
        // atomic with respect to signals.
        acquired = try_take();
        return acquired;
      });
      return acquired ? 1 : 0;
    }
    // Without a pool nothing else runs: the counts are taken (and may go negative, as a check
    // of the program's order would show).
    for (std::size_t i = 0; i < n; ++i) {
      if (sems[i]) *sems[i] -= counts[i];
    }
    return 1;
  }

  // Waits for the tasks (thread_pool::task*, as made by async statements) given as arguments.
  index_t eval_wait_for(const call* op) {
    for (const expr& i : op->args) {
      auto* task = reinterpret_cast<thread_pool::task*>(eval(i));
      if (task && config.thread_pool) config.thread_pool->wait_for(task);
    }
    return 1;
  }

  // The heap blocks this worker of a parallel loop keeps from one iteration to the next (null
  // outside parallel loops).
  internal::worker_block_cache* worker_blocks = nullptr;
  static constexpr std::size_t none = internal::worker_block_cache::none;

  // Live heap allocations, and the blocks freed early and parked among them.
  internal::live_allocations allocations;
  using allocation_record = internal::live_allocations::record;

  // Gives blocks back through the free hook.
  auto free_hook() {
    return [this](var sym, raw_buffer* buf, void* allocation) { free_allocation(sym, buf, allocation); };
  }
  void give_back_parked() { allocations.give_back_parked(free_hook()); }

  index_t eval_free(const call* op) {
    const variable* v = op->args[0].as<variable>();
    return v && allocations.free_early(v->sym, free_hook()) ? 1 : 0;
  }

  void* allocate_heap(var sym, raw_buffer* buf) {
    if (config.allocate) return config.allocate(sym, buf);
    return default_allocate(sym, buf, eval_config::default_heap_alignment);
  }
  void free_allocation(var sym, raw_buffer* buf, void* allocation) {
    if (config.free) {
      config.free(sym, buf, allocation);
    } else {
      default_free(sym, buf, allocation);
    }
  }

  // Failures. fail() claims the report (true for the first failure only), then sets the flag
  // that stops the other workers, in this order: a worker that gives up a semaphore wait because
  // of the flag fails its check, and must find the report claimed.
  bool fail(index_t result) {
    if (!failures) return true;
    const bool report = !failures->reported.exchange(true);
    if (report) failures->result.store(result);
    failures->failed.store(true, std::memory_order_release);
    // Threads in wait_for(condition) re-check their conditions after an atomic_call.
    if (config.thread_pool) config.thread_pool->atomic_call([] {});
    return report;
  }
  index_t fail_check(const expr& condition) {
    if (!fail(1)) return 1;
    if (config.check_failed) {
      config.check_failed(condition);
    } else {
      default_check_failed(condition, ctx);
    }
    return 1;
  }

  // Statements. Each returns 0 on success.
  index_t exec(const stmt& s) { return s.defined() ? exec(s.get()) : 0; }
  index_t exec(const base_stmt_node* s);
  index_t exec_call(const call_stmt* op);
  struct copy_map;
  index_t exec_copy(const copy_stmt* op);
  index_t exec_let(const let_stmt* op);
  index_t exec_loop(const loop* op);
  index_t exec_parallel_loop(const loop* op, index_t min, index_t max, index_t step, index_t workers);
  index_t exec_allocate(const allocate* op);
  index_t exec_allocated(const allocate* op, raw_buffer& buf, const allocation_record& record, std::size_t kept_index);
  index_t exec_make_buffer(const make_buffer* op);
  index_t exec_clone_buffer(const clone_buffer* op);
  index_t exec_constant_buffer(const constant_buffer* op) {
    scoped_value bind(*this, op->sym, reinterpret_cast<index_t>(op->value.get()));
    return exec(op->body);
  }
  index_t exec_async(const async* op);
  index_t exec_crop_buffer(const crop_buffer* op);
  index_t exec_crop_dim(const crop_dim* op);
  index_t exec_slice_buffer(const slice_buffer* op);
  index_t exec_slice_dim(const slice_dim* op);
  index_t exec_transpose(const transpose* op);
  index_t exec_check(const check* op) { return eval(op->condition) != 0 ? 0 : fail_check(op->condition); }
  index_t exec_if_then_else(const if_then_else* op) {
    return exec(eval(op->condition) != 0 ? op->true_body : op->false_body);
  }

  // Runs body with sym bound to buf.
  index_t exec_with_buffer(var sym, const raw_buffer& buf, const stmt& body) {
    scoped_value bind(*this, sym, reinterpret_cast<index_t>(&buf));
    return exec(body);
  }
};

index_t evaluator::exec(const base_stmt_node* s) {
  switch (s->type) {
  case stmt_node_type::none: return 0;
  case stmt_node_type::call_stmt: return exec_call(static_cast<const call_stmt*>(s));
  case stmt_node_type::copy_stmt: return exec_copy(static_cast<const copy_stmt*>(s));
  case stmt_node_type::let_stmt: return exec_let(static_cast<const let_stmt*>(s));
  case stmt_node_type::block:
    for (const stmt& i : static_cast<const block*>(s)->stmts) {
      if (index_t result = exec(i)) return result;
    }
    return 0;
  case stmt_node_type::loop: return exec_loop(static_cast<const loop*>(s));
  case stmt_node_type::allocate: return exec_allocate(static_cast<const allocate*>(s));
  case stmt_node_type::make_buffer: return exec_make_buffer(static_cast<const make_buffer*>(s));
  case stmt_node_type::clone_buffer: return exec_clone_buffer(static_cast<const clone_buffer*>(s));
  case stmt_node_type::crop_buffer: return exec_crop_buffer(static_cast<const crop_buffer*>(s));
  case stmt_node_type::crop_dim: return exec_crop_dim(static_cast<const crop_dim*>(s));
  case stmt_node_type::slice_buffer: return exec_slice_buffer(static_cast<const slice_buffer*>(s));
  case stmt_node_type::slice_dim: return exec_slice_dim(static_cast<const slice_dim*>(s));
  case stmt_node_type::transpose: return exec_transpose(static_cast<const transpose*>(s));
  case stmt_node_type::constant_buffer: return exec_constant_buffer(static_cast<const constant_buffer*>(s));
  case stmt_node_type::async: return exec_async(static_cast<const async*>(s));
  case stmt_node_type::check: return exec_check(static_cast<const check*>(s));
  case stmt_node_type::if_then_else: return exec_if_then_else(static_cast<const if_then_else*>(s));
  }
  return 0;
}

index_t evaluator::exec_call(const call_stmt* op) {
  if (allocations.any_parked()) give_back_parked();
  index_t result = op->target ? op->target(op, ctx) : 0;
  if (result == 0) return 0;
  if (fail(result)) {
    if (config.call_failed) {
      config.call_failed(op);
    } else {
      default_call_failed(op);
    }
  }
  return result;
}

index_t evaluator::exec_let(const let_stmt* op) {
  index_t* saved = static_cast<index_t*>(alloca(sizeof(index_t) * op->lets.size()));
  for (std::size_t i = 0; i < op->lets.size(); ++i) {
    index_t value = eval(op->lets[i].second);
    symbol_id sym = op->lets[i].first.sym();
    saved[i] = values[sym];
    values[sym] = value;
  }
  index_t result = exec(op->body);
  for (std::size_t i = op->lets.size(); i-- > 0;) values[op->lets[i].first.sym()] = saved[i];
  return result;
}

index_t evaluator::exec_loop(const loop* op) {
  index_t min = eval(op->bounds.min);
  index_t max = eval(op->bounds.max);
  index_t step = eval(op->step);
  if (step <= 0) return fail_check(op->step > 0);
  if (min > max) return 0;
  index_t workers = eval(op->max_workers);
  if (workers > 1 && config.thread_pool &&
      static_cast<std::size_t>(max) - static_cast<std::size_t>(min) >= static_cast<std::size_t>(step)) {
    return exec_parallel_loop(op, min, max, step, workers);
  }
  scoped_value bind(*this, op->sym, min);
  for (index_t i = min;;) {
    if (index_t result = exec(op->body)) return result;
    // Inside a parallel loop, stop promptly when another worker failed.
    if (failures && failures->failed.load(std::memory_order_relaxed)) return 1;
    // Stop before i + step could overflow (max - i does not fit in an index_t when the loop
    // spans more than half the range of one).
    if (static_cast<std::size_t>(max) - static_cast<std::size_t>(i) < static_cast<std::size_t>(step)) break;
    i += step;
    bind.set(i);
  }
  return 0;
}

index_t evaluator::exec_parallel_loop(const loop* op, index_t min, index_t max, index_t step, index_t workers) {
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
      if (index_t result = e.exec(op->body)) {
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

namespace {

// Makes a descriptor from symbolic dims: bounds, and strides and fold factors where defined.
void init_dims(evaluator& e, const std::vector<dim_expr>& src, dim* dims) {
  for (std::size_t d = 0; d < src.size(); ++d) {
    const dim_expr& i = src[d];
    index_t min = e.eval(i.bounds.min);
    index_t max = i.bounds.is_point() ? min : e.eval(i.bounds.max);
    index_t stride = e.eval(i.stride, dim::auto_stride);
    index_t fold = e.eval(i.fold_factor, dim::unfolded);
    // A fold factor that is not positive means the dimension is not folded. On a stride-0 dim it
    // addresses nothing, and clients may pass data in it: it is kept as it is.
    if (fold <= 0 && stride != 0) fold = dim::unfolded;
    new (&dims[d]) dim(min, max, stride, fold);
  }
}

// Ranks are small: a plain loop beats a call to memcpy here.
void copy_dims(const raw_buffer& src, dim* dims) {
  for (std::size_t d = 0; d < src.rank; ++d) dims[d] = src.dims[d];
}

// Crops dimension d of buf to [min, max] like raw_buffer::crop (inlined: this is the hottest
// path of the interpreter), and then, if a folded dimension no longer wraps around its fold,
// rewrites it as an unfolded one with the same addresses, so callbacks see plain strided memory.
void crop_and_unfold(raw_buffer& buf, std::size_t d, index_t min, index_t max) {
  dim& cd = buf.dims[d];
  // A stride-0 dim contains every coordinate: cropping it is a no-op (its fold factor is data).
  if (cd.stride() == 0) return;
  min = std::max(min, cd.min());
  max = std::min(max, cd.max());
  const bool folded = cd.fold_factor() > 0;
  if (max < min) {
    buf.base = nullptr;
  } else if (buf.base && !folded) {
    buf.base = static_cast<char*>(buf.base) + (min - cd.min()) * cd.stride();
  }
  cd.set_bounds(min, max);
  if (!folded || !buf.base) return;
  const index_t slot = euclidean_mod_positive_modulus(cd.min(), cd.fold_factor());
  if (slot + (cd.max() - cd.min()) >= cd.fold_factor()) return;
  buf.base = offset_bytes(buf.base, slot * cd.stride());
  cd.set_fold_factor(dim::unfolded);
}

}  // namespace

index_t evaluator::exec_allocate(const allocate* op) {
  const std::size_t rank = op->dims.size();
  raw_buffer buf;
  buf.elem_size = eval(op->elem_size);
  buf.rank = rank;
  buf.dims = SLINKY_STACK_DIMS(rank);
  init_dims(*this, op->dims, buf.dims);
  const std::optional<std::size_t> layout_size =
      buf.init_strides(std::max<index_t>(1, static_cast<index_t>(config.stride_alignment)));
  const std::optional<std::size_t> checked_size = internal::checked_size_bytes(buf);
  const std::size_t size_bytes = checked_size.value_or(0);
  if (!layout_size || !checked_size) {
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
    // base points at the element of min coordinates; undo negative strides' offsets.
    buf.base = size > 0 ? p + internal::base_offset(buf) : nullptr;
  } else if (worker_blocks && (kept_index = worker_blocks->take(op->sym, buf)) != none) {
    // take() pointed buf at a block this worker kept.
  } else if (allocation_record* donor = allocations.any_parked() ? allocations.find_parked(buf, size_bytes) : nullptr) {
    // A block freed just before: this buffer takes it over.
    return exec_allocated(op, buf, allocations.hand_on(*donor, op->sym, buf), none);
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
  return exec_allocated(op, buf, {op->sym, &buf, allocation, op->sym, &buf, buf.base, size_bytes, false}, kept_index);
}

// Runs the body of an allocate statement with its buffer allocated as `record` says, then gives
// the memory back (unless the body already did, with the free intrinsic).
index_t evaluator::exec_allocated(const allocate* op, raw_buffer& buf, const allocation_record& record,
                                  std::size_t kept_index) {
  allocations.push(record);
  index_t result = exec_with_buffer(op->sym, buf, op->body);
  allocations.pop(free_hook());
  if (kept_index != none) worker_blocks->release(kept_index);
  return result;
}

index_t evaluator::exec_make_buffer(const make_buffer* op) {
  const std::size_t rank = op->dims.size();
  raw_buffer buf;
  buf.base = reinterpret_cast<void*>(eval(op->base));
  buf.elem_size = eval(op->elem_size);
  buf.rank = rank;
  buf.dims = SLINKY_STACK_DIMS(rank);
  init_dims(*this, op->dims, buf.dims);
  return exec_with_buffer(op->sym, buf, op->body);
}

index_t evaluator::exec_async(const async* op) {
  if (allocations.any_parked()) give_back_parked();
  if (!config.thread_pool) {
    // Without a pool, the task runs to completion first.
    if (index_t result = exec(op->task)) return result;
    scoped_value bind(*this, op->sym, 0);
    return exec(op->body);
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
    task_result = e.exec(op->task);
  };
  // The task is waited for below, so a reference to run_task (no std::function) is enough.
  ref_count<thread_pool::task> task = config.thread_pool->enqueue_ref(1, run_task, 1);
  index_t result;
  {
    scoped_value bind(*this, op->sym, reinterpret_cast<index_t>(task.get()));
    result = exec(op->body);
  }
  if (result) fail(result);
  config.thread_pool->wait_for(task.get());
  failures = outer_failures;
  if (result) return result;
  if (task_result && outer_failures == nullptr) {
    // Report the task's failure as evaluate's result.
    const index_t reported = local_failures.result.load();
    return reported != 0 ? reported : task_result;
  }
  return task_result;
}

index_t evaluator::exec_clone_buffer(const clone_buffer* op) {
  const raw_buffer* src = lookup_buffer(op->src);
  if (!src) return fail_check(expr(variable::make(op->src)) != 0);
  raw_buffer buf{src->base, src->elem_size, src->rank, SLINKY_STACK_DIMS(src->rank)};
  copy_dims(*src, buf.dims);
  return exec_with_buffer(op->sym, buf, op->body);
}

index_t evaluator::exec_crop_buffer(const crop_buffer* op) {
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
  return exec_with_buffer(op->sym, buf, op->body);
}

index_t evaluator::exec_crop_dim(const crop_dim* op) {
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
  return exec_with_buffer(op->sym, buf, op->body);
}

index_t evaluator::exec_slice_buffer(const slice_buffer* op) {
  const raw_buffer* src = lookup_buffer(op->src);
  if (!src) return fail_check(expr(variable::make(op->src)) != 0);
  raw_buffer buf{src->base, src->elem_size, src->rank, SLINKY_STACK_DIMS(src->rank)};
  copy_dims(*src, buf.dims);
  // Slice from the last dimension down so earlier indices stay valid.
  for (std::size_t d = std::min(op->at.size(), src->rank); d-- > 0;) {
    if (op->at[d].defined()) buf.slice(d, eval(op->at[d]));
  }
  return exec_with_buffer(op->sym, buf, op->body);
}

index_t evaluator::exec_slice_dim(const slice_dim* op) {
  const raw_buffer* src = lookup_buffer(op->src);
  if (!src) return fail_check(expr(variable::make(op->src)) != 0);
  raw_buffer buf{src->base, src->elem_size, src->rank, SLINKY_STACK_DIMS(src->rank)};
  copy_dims(*src, buf.dims);
  if (static_cast<std::size_t>(op->dim) < buf.rank) buf.slice(op->dim, eval(op->at));
  return exec_with_buffer(op->sym, buf, op->body);
}

index_t evaluator::exec_transpose(const transpose* op) {
  const raw_buffer* src = lookup_buffer(op->src);
  if (!src) return fail_check(expr(variable::make(op->src)) != 0);
  const std::size_t rank = op->dims.size();
  raw_buffer buf{src->base, src->elem_size, rank, SLINKY_STACK_DIMS(rank)};
  for (std::size_t d = 0; d < rank; ++d) buf.dims[d] = src->dim(op->dims[d]);
  return exec_with_buffer(op->sym, buf, op->body);
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
  if (dst->rank != rank) return fail_check(buffer_rank(op->dst) == static_cast<index_t>(rank));
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

eval_context::eval_context() : config(&default_config()) {}

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
