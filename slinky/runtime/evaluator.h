// The evaluator's state and the logic of each statement, shared by the tree-walking interpreter
// (evaluate.cc) and the executable form of programs (executable.cc). Not part of the public API.
//
// A statement with a body runs it through a body_ref: the body as a tree (walked by exec) or
// compiled (an exec_node). The logic of each statement (binding, allocation, failure, parallel
// loops) is written once, here and in evaluate.cc; the executable form adds nodes specialised
// for the statements on the per-iteration path (loops, crops, calls, blocks) and reuses these
// for the rest.
#ifndef SLINKY_RUNTIME_EVALUATOR_H
#define SLINKY_RUNTIME_EVALUATOR_H

#include <alloca.h>

#include <algorithm>
#include <atomic>
#include <limits>
#include <optional>
#include <vector>

#include "slinky/base/arithmetic.h"
#include "slinky/runtime/buffer.h"
#include "slinky/runtime/evaluate.h"
#include "slinky/runtime/live_allocations.h"
#include "slinky/runtime/worker_block_cache.h"

namespace slinky {

class evaluator;

namespace internal {

const eval_config& default_eval_config();

// State shared by the workers of a parallel loop, so that failures are reported once and stop
// the other workers promptly.
struct failure_state {
  std::atomic<bool> failed{false};
  std::atomic<bool> reported{false};
  // The result of the reported failure: what evaluate returns, rather than the 1 of a worker
  // that stopped because of it.
  std::atomic<index_t> result{0};
};

// A statement compiled into the executable form (executable.cc).
class exec_node {
public:
  virtual ~exec_node() = default;
  virtual index_t run(evaluator& e) const = 0;
};

// A body to run: compiled if `compiled` is set, else the tree (null: nothing to run).
struct body_ref {
  const base_stmt_node* tree = nullptr;
  const exec_node* compiled = nullptr;

  body_ref(const stmt& s) : tree(s.get()) {}
  body_ref(const exec_node* c) : compiled(c) {}
};

}  // namespace internal

// Copies a buffer descriptor's dims into storage the caller allocated (on its stack).
#define SLINKY_STACK_DIMS(n) static_cast<dim*>(alloca(sizeof(dim) * ((n) > 0 ? (n) : 1)))

class evaluator {
public:
  using failure_state = internal::failure_state;
  using body_ref = internal::body_ref;

  eval_context& ctx;
  // Symbol values, indexed by symbol id: the data of ctx's vector. The evaluator makes room for
  // every symbol of the program before it runs (see symbol_count), so accesses need no bounds
  // checks. Only user code can grow the vector (a callback that sets a new symbol in its
  // eval_context): the pointer is read again after every call of a callback
  // (refresh_values), and otherwise never held across one.
  index_t* values;
  const eval_config& config;
  failure_state* failures;

  evaluator(eval_context& ctx, failure_state* failures)
      : ctx(ctx), values(ctx.values_.data()), config(ctx.config ? *ctx.config : internal::default_eval_config()),
        failures(failures) {}

  void refresh_values() { values = ctx.values_.data(); }
  // Calls a user function (a callback or a pure function of an expression) with ctx.
  template <typename Op>
  index_t call_user(const Op* op) {
    const index_t result = op->target(op, ctx);
    refresh_values();
    return result;
  }

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

  // Binds the lets in order (later values may refer to earlier ones), runs body(), then unbinds
  // them in reverse.
  template <typename Body>
  index_t with_lets(const std::vector<std::pair<var, expr>>& lets, const Body& body) {
    index_t* saved = static_cast<index_t*>(alloca(sizeof(index_t) * lets.size()));
    for (std::size_t i = 0; i < lets.size(); ++i) {
      index_t value = eval(lets[i].second);
      symbol_id sym = lets[i].first.sym();
      saved[i] = values[sym];
      values[sym] = value;
    }
    index_t result = body();
    for (std::size_t i = lets.size(); i-- > 0;) values[lets[i].first.sym()] = saved[i];
    return result;
  }
  index_t eval_let(const let* op) {
    return with_lets(op->lets, [&]() { return eval(op->body); });
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
      const index_t size = internal::size_bytes_or_negative(*buf);
      return size >= 0 ? size : std::numeric_limits<index_t>::max();
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
    case intrinsic::none: return op->target ? call_user(op) : 0;
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
  // Runs a body: compiled, or walked.
  index_t run(body_ref b);
  index_t exec_call(const call_stmt* op) {
    if (allocations.any_parked()) give_back_parked();
    const index_t result = op->target ? call_user(op) : 0;
    return result == 0 ? 0 : report_call_failure(op, result);
  }
  // The iterations of a serial loop of sym over [min, max] by step (step > 0, min <= max): binds
  // sym to min for the lifetime of this object, and next() moves it to the next value. Inside a
  // parallel loop, it stops promptly when another worker failed (then result() is 1).
  class serial_loop {
    scoped_value bind_;
    index_t i_, max_, step_;
    failure_state* failures_;
    bool stopped_ = false;

  public:
    serial_loop(evaluator& e, var sym, index_t min, index_t max, index_t step)
        : bind_(e, sym, min), i_(min), max_(max), step_(step), failures_(e.failures) {}

    // Binds the next value and returns true; false after the last one (or on another worker's
    // failure).
    bool next() {
      if (failures_ && failures_->failed.load(std::memory_order_relaxed)) {
        stopped_ = true;
        return false;
      }
      // Stop before i + step could overflow (max - i does not fit in an index_t when the loop
      // spans more than half the range of one).
      if (static_cast<std::size_t>(max_) - static_cast<std::size_t>(i_) < static_cast<std::size_t>(step_)) {
        return false;
      }
      i_ += step_;
      bind_.set(i_);
      return true;
    }
    // The loop's result once next() returned false (and every iteration succeeded).
    index_t result() const { return stopped_ ? 1 : 0; }
  };
  // Runs a serial loop of sym over [min, max] by step (step > 0, min <= max), calling
  // iteration() for each value, and stops at the first failure (or another worker's).
  template <typename Iteration>
  index_t run_serial_loop(var sym, index_t min, index_t max, index_t step, const Iteration& iteration) {
    serial_loop l(*this, sym, min, max, step);
    do {
      if (index_t result = iteration()) return result;
    } while (l.next());
    return l.result();
  }
  // Reports a callback's failure (once, through call_failed) and returns its result.
  index_t report_call_failure(const call_stmt* op, index_t result);
  struct copy_map;
  index_t exec_copy(const copy_stmt* op);
  index_t exec_let(const let_stmt* op, body_ref body);
  index_t exec_loop(const loop* op, body_ref body);
  index_t exec_parallel_loop(const loop* op, index_t min, index_t max, index_t step, index_t workers, body_ref body);
  index_t exec_allocate(const allocate* op, body_ref body);
  index_t exec_allocated(const allocate* op, raw_buffer& buf, const allocation_record& record, std::size_t kept_index,
                         body_ref body);
  index_t exec_make_buffer(const make_buffer* op, body_ref body);
  index_t exec_clone_buffer(const clone_buffer* op, body_ref body);
  index_t exec_constant_buffer(const constant_buffer* op, body_ref body) {
    scoped_value bind(*this, op->sym, reinterpret_cast<index_t>(op->value.get()));
    return run(body);
  }
  index_t exec_async(const async* op, body_ref task, body_ref body);
  index_t exec_crop_buffer(const crop_buffer* op, body_ref body);
  index_t exec_crop_dim(const crop_dim* op, body_ref body);
  index_t exec_slice_buffer(const slice_buffer* op, body_ref body);
  index_t exec_slice_dim(const slice_dim* op, body_ref body);
  index_t exec_transpose(const transpose* op, body_ref body);
  index_t exec_check(const check* op) { return eval(op->condition) != 0 ? 0 : fail_check(op->condition); }
  index_t exec_if_then_else(const if_then_else* op, body_ref true_body, body_ref false_body) {
    return run(eval(op->condition) != 0 ? true_body : false_body);
  }

  // Runs body with sym bound to buf.
  index_t exec_with_buffer(var sym, const raw_buffer& buf, body_ref body) {
    scoped_value bind(*this, sym, reinterpret_cast<index_t>(&buf));
    return run(body);
  }
};

inline index_t evaluator::run(body_ref b) {
  if (b.compiled) return b.compiled->run(*this);
  return b.tree ? exec(b.tree) : 0;
}

namespace internal {

// Makes a descriptor from symbolic dims: bounds, and strides and fold factors where defined.
inline void init_dims(evaluator& e, const std::vector<dim_expr>& src, dim* dims) {
  for (std::size_t d = 0; d < src.size(); ++d) {
    const dim_expr& i = src[d];
    index_t min = e.eval(i.bounds.min);
    index_t max = min;
    if (!i.bounds.is_point()) {
      max = e.eval(i.bounds.max);
      // A min at +oo (or a max at -oo) is the hull of no region (every consumer empty), maybe
      // shifted: saturating arithmetic keeps oo + 3 and oo + 2 at oo, which would make a dim of
      // one element out of an empty one. Such a dim is empty.
      if (min == std::numeric_limits<index_t>::max()) max = min - 1;
      if (max == std::numeric_limits<index_t>::min()) min = max + 1;
    }
    index_t stride = e.eval(i.stride, dim::auto_stride);
    index_t fold = e.eval(i.fold_factor, dim::unfolded);
    // A fold factor that is not positive means the dimension is not folded. On a stride-0 dim it
    // addresses nothing, and clients may pass data in it: it is kept as it is.
    if (fold <= 0 && stride != 0) fold = dim::unfolded;
    new (&dims[d]) dim(min, max, stride, fold);
  }
}

// The rank of a buffer made by allocate, make_buffer or transpose: its dims less the trailing
// dim::broadcast() ({0, 0, 0, 0}), which dim(d >= rank) gives anyway (the original slinky drops
// them too, so callbacks see the lower rank). A trailing stride-0 dim with any other fold factor
// is kept: clients pass data in fold factors (a reduction's dummy dims of extent 1 are [0, 0],
// stride 0, fold dim::unfolded, and their callbacks read that fold factor).
inline std::size_t rank_without_trailing_broadcasts(const dim* dims, std::size_t rank) {
  while (rank > 0 && dims[rank - 1].is_broadcast() && dims[rank - 1].fold_factor() == 0) --rank;
  return rank;
}

// Ranks are small: a plain loop beats a call to memcpy here.
inline void copy_dims(const raw_buffer& src, dim* dims) {
  for (std::size_t d = 0; d < src.rank; ++d) dims[d] = src.dims[d];
}

// Crops dimension d of buf to [min, max] like raw_buffer::crop (inlined: this is the hottest
// path of the interpreter), except that an empty result leaves the base where it is (as the
// original's evaluator does: callbacks given an empty input may slice its other dims at their
// mins before they look at the empty one), and then, if a folded dimension no longer wraps around
// its fold, rewrites it as an unfolded one with the same addresses, so callbacks see plain
// strided memory.
inline void crop_and_unfold(raw_buffer& buf, std::size_t d, index_t min, index_t max) {
  dim& cd = buf.dims[d];
  // A stride-0 dim addresses nothing: a crop changes only its bounds (raw_buffer::crop).
  if (cd.stride() == 0) return crop_stride_zero(cd, min, max);
  min = std::max(min, cd.min());
  max = std::min(max, cd.max());
  const bool folded = cd.fold_factor() > 0;
  if (max < min) {
    cd.set_bounds(min, max);
    return;
  }
  if (buf.base && !folded) buf.base = static_cast<char*>(buf.base) + (min - cd.min()) * cd.stride();
  cd.set_bounds(min, max);
  if (!folded || !buf.base) return;
  const index_t slot = euclidean_mod_positive_modulus(cd.min(), cd.fold_factor());
  if (slot + (cd.max() - cd.min()) >= cd.fold_factor()) return;
  buf.base = offset_bytes(buf.base, slot * cd.stride());
  cd.set_fold_factor(dim::unfolded);
}

}  // namespace internal

}  // namespace slinky

#endif  // SLINKY_RUNTIME_EVALUATOR_H
