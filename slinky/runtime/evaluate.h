// The interpreter of slinky programs: eval_config (the hooks a host provides), eval_context
// (symbol values), and evaluate for expressions and statements.
#ifndef SLINKY_RUNTIME_EVALUATE_H
#define SLINKY_RUNTIME_EVALUATE_H

#include <functional>
#include <vector>

#include "slinky/base/thread_pool.h"
#include "slinky/runtime/buffer.h"
#include "slinky/runtime/expr.h"
#include "slinky/runtime/stmt.h"

namespace slinky {

class node_context;

// Hooks and settings for evaluation. Every hook has a default: heap allocation with
// malloc/free, messages on stderr for failures, no tracing, serial loops.
struct eval_config {
  // Allocates memory for buf (whose dims and strides are set), sets buf->base, and returns
  // what free must be given to release it.
  std::function<void*(var, raw_buffer*)> allocate;
  std::function<void(var, raw_buffer*, void*)> free;
  // Called when a check fails, with its condition; the program then stops and evaluate returns
  // non-zero. The default prints the condition, with the values of its parts, to stderr.
  std::function<void(const expr&)> check_failed;
  // Called once when a callback returns non-zero; the program then stops and evaluate returns
  // that value. The default prints the callback's name to stderr.
  std::function<void(const call_stmt*)> call_failed;
  // Runs loops with max_workers > 1; without one they run serially.
  slinky::thread_pool* thread_pool = nullptr;
  // Tracing of calls and loops (e.g. to a chrome_trace); trace_end receives trace_begin's result.
  std::function<index_t(const char*)> trace_begin;
  std::function<void(index_t)> trace_end;
  // Alignment of the base of heap allocations, and of the strides the evaluator chooses.
  index_t base_alignment = 64;
  index_t stride_alignment = 1;
  // Automatic allocations up to this many bytes go on the stack.
  index_t auto_stack_threshold = 4096;
  // Names of symbols for messages (set by pipeline::evaluate); may be null.
  const node_context* symbols = nullptr;
};

// The values of symbols during evaluation (buffers are stored as the address of their
// raw_buffer; 0 is a null buffer), and the configuration. A symbol that was never given a value
// reads as 0.
class eval_context {
  std::vector<index_t> values_;

  friend class evaluator;

public:
  const eval_config* config = nullptr;

  // The value of a symbol; the context grows to hold it.
  index_t& operator[](var v) { return operator[](v.sym()); }
  index_t& operator[](symbol_id id) {
    if (id >= values_.size()) values_.resize(id + 1, 0);
    return values_[id];
  }
  index_t lookup(var v) const { return v.sym() < values_.size() ? values_[v.sym()] : 0; }
  const raw_buffer* lookup_buffer(var v) const { return reinterpret_cast<const raw_buffer*>(lookup(v)); }
  void set(var v, index_t value) { (*this)[v] = value; }
  void set_buffer(var v, const raw_buffer* buf) { set(v, reinterpret_cast<index_t>(buf)); }
  std::size_t size() const { return values_.size(); }
  // Makes room for symbols with ids below n.
  void reserve(std::size_t n) {
    if (values_.size() < n) values_.resize(n, 0);
  }
};

// Evaluates an expression or runs a statement with the symbol values in ctx (which is
// restored afterwards). evaluate(stmt) returns 0 on success and non-zero if a check or a
// callback failed.
index_t evaluate(const expr& e, eval_context& ctx);
index_t evaluate(const expr& e);
index_t evaluate(const stmt& s, eval_context& ctx);
index_t evaluate(const stmt& s);

// One more than the largest symbol id a program or expression refers to or declares.
std::size_t symbol_count(const stmt& s);
std::size_t symbol_count(const expr& e);
// evaluate(s, ctx) for a ctx that already has room (eval_context::reserve) for symbol_count(s)
// symbols: saves walking the program first.
index_t evaluate_reserved(const stmt& s, eval_context& ctx);

// The default hooks, for configs that want to wrap them.
void* default_allocate(var sym, raw_buffer* buf, index_t base_alignment);
void default_free(var sym, raw_buffer* buf, void* allocation);
void default_check_failed(const expr& condition, const eval_context& ctx);
void default_call_failed(const call_stmt* op);

}  // namespace slinky

#endif  // SLINKY_RUNTIME_EVALUATE_H
