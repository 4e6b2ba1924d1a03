/// \file
/// The interpreter of slinky programs: eval_config (the hooks a host provides), eval_context
/// (symbol values), and evaluate for expressions and statements.
#ifndef SLINKY_RUNTIME_EVALUATE_H
#define SLINKY_RUNTIME_EVALUATE_H

#include <cstddef>
#include <functional>
#include <vector>

#include "slinky/base/thread_pool.h"
#include "slinky/runtime/buffer.h"
#include "slinky/runtime/expr.h"
#include "slinky/runtime/stmt.h"

namespace slinky {

class node_context;

/// The default hooks, for configs that want to wrap them. default_allocate allocates the buffer's
/// memory (after filling in its automatic strides) with the base aligned to base_alignment (at
/// least alignof(std::max_align_t)), sets buf->base, and returns what default_free releases; for
/// a size that overflows, it allocates nothing and leaves a null base.
void* default_allocate(var sym, raw_buffer* buf, index_t base_alignment);
/// The default free hook: std::free(allocation).
void default_free(var sym, raw_buffer* buf, void* allocation);
/// What an empty check_failed hook does: writes the failed condition and the values of its
/// operands (names from ctx.symbols) to stderr.
void default_check_failed(const expr& condition, const eval_context& ctx);
/// What an empty call_failed hook does: writes "slinky: call to <name> failed" to stderr.
void default_call_failed(const call_stmt* op);

/// Hooks and settings for evaluation. Every hook has a working default: heap allocation (aligned
/// to a cache line) and free, messages on stderr for failures, no tracing, serial loops.
struct eval_config {
  /// The heap alignment of the default allocate hook.
  static constexpr index_t default_heap_alignment = 64;

  /// Allocates memory for buf (whose dims are set; strides may be automatic), sets buf->base, and
  /// returns what free must be given to release it. A null base for a non-empty buffer is an
  /// allocation failure (evaluate fails a check). The default is a real function that a hook
  /// may call: `auto prev = cfg.allocate; cfg.allocate = [=](var v, raw_buffer* b) { ...;
  /// return prev(v, b); };`.
  std::function<void*(var, raw_buffer*)> allocate = [](var sym, raw_buffer* buf) {
    return default_allocate(sym, buf, default_heap_alignment);
  };
  /// Releases what allocate returned (default: default_free).
  std::function<void(var, raw_buffer*, void*)> free = default_free;
  /// Called when a check fails, with its condition; the program then stops and evaluate returns
  /// non-zero. Empty (the default): a message on stderr with the condition and the values of its
  /// parts (the original slinky aborts instead; we return an error, see README).
  std::function<void(const expr&)> check_failed;
  /// Called once when a callback returns non-zero; the program then stops and evaluate returns
  /// that value. Empty (the default): a message on stderr naming the callback.
  std::function<void(const call_stmt*)> call_failed;
  /// Runs loops with max_workers > 1 and async statements; without one they run serially.
  slinky::thread_pool* thread_pool = nullptr;
  /// Tracing of calls and loops (e.g. to a chrome_trace); trace_end receives trace_begin's result.
  std::function<index_t(const char*)> trace_begin;
  /// See trace_begin.
  std::function<void(index_t)> trace_end;
  /// Alignment of the base of stack (automatic) allocations.
  std::size_t base_alignment = sizeof(std::max_align_t);
  /// Alignment of the automatic strides of allocations, in bytes.
  std::size_t stride_alignment = 1;
  /// Automatic allocations up to this many bytes go on the stack.
  std::size_t auto_stack_threshold = 4 * 1024;
};

/// The values of symbols during evaluation (buffers are stored as the address of their
/// raw_buffer; 0 is a null buffer), and the configuration. A symbol that was never given a value
/// reads as 0.
class eval_context {
  std::vector<index_t> values_;

  friend class evaluator;

public:
  /// Points at a process-wide default eval_config (never null unless the client sets it so).
  const eval_config* config;
  /// Names of symbols for messages (set by pipeline::evaluate); may be null.
  const node_context* symbols = nullptr;

  /// No values; config points at the default eval_config.
  eval_context();

  /// The value of a symbol; the context grows to hold it.
  ///@{
  index_t& operator[](var v) { return operator[](v.id); }
  index_t& operator[](symbol_id id) {
    if (id >= values_.size()) values_.resize(id + 1, 0);
    return values_[id];
  }
  ///@}
  /// The value of a symbol (0 if it has none).
  ///@{
  index_t operator[](var v) const { return lookup(v); }
  index_t lookup(var v) const { return v.id < values_.size() ? values_[v.id] : 0; }
  ///@}
  /// The buffer bound to v (null if none is).
  const raw_buffer* lookup_buffer(var v) const { return reinterpret_cast<const raw_buffer*>(lookup(v)); }
  /// The buffer bound to v as a buffer<T> (null if none is).
  template <typename T>
  const buffer<T>* lookup_buffer(var v) const {
    return reinterpret_cast<const buffer<T>*>(lookup_buffer(v));
  }
  /// Sets the value of v and returns the previous one.
  index_t set(var v, index_t value) {
    index_t& slot = (*this)[v];
    const index_t old = slot;
    slot = value;
    return old;
  }
  /// Binds v to buf (by address; buf must outlive its use).
  void set_buffer(var v, const raw_buffer* buf) { set(v, reinterpret_cast<index_t>(buf)); }
  /// The number of symbol slots (symbols with ids below this may have values).
  std::size_t size() const { return values_.size(); }
  /// Makes room for symbols with ids below n.
  void reserve(std::size_t n) {
    if (values_.size() < n) values_.resize(n, 0);
  }
};

/// Evaluates an expression or runs a statement with the symbol values in ctx (which is
/// restored afterwards). evaluate(stmt) returns 0 on success and non-zero if a check or a
/// callback failed. Without ctx, in an empty context with the default eval_config.
///@{
index_t evaluate(const expr& e, eval_context& ctx);
index_t evaluate(const expr& e);
index_t evaluate(const stmt& s, eval_context& ctx);
index_t evaluate(const stmt& s);
///@}

/// One more than the largest symbol id a program or expression refers to or declares.
///@{
std::size_t symbol_count(const stmt& s);
std::size_t symbol_count(const expr& e);
///@}
/// evaluate(s, ctx) for a ctx that already has room (eval_context::reserve) for symbol_count(s)
/// symbols: saves walking the program first.
index_t evaluate_reserved(const stmt& s, eval_context& ctx);

}  // namespace slinky

#endif  // SLINKY_RUNTIME_EVALUATE_H
