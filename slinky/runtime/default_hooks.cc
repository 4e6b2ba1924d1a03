// The default hooks of eval_config (evaluate.h): heap allocation and free, and the messages of
// failed checks and callbacks.
#include <algorithm>
#include <cstdlib>
#include <iostream>
#include <limits>
#include <optional>
#include <sstream>

#include "slinky/base/arithmetic.h"
#include "slinky/runtime/evaluate.h"
#include "slinky/runtime/print.h"

namespace slinky {

void* default_allocate(var, raw_buffer* buf, index_t base_alignment) {
  // With an alignment of 1, the layout's size is the size in bytes (-1 on overflow).
  const index_t checked_size = internal::init_strides_or_negative(*buf, 1);
  const std::size_t alignment = std::max<index_t>(alignof(std::max_align_t), base_alignment);
  // Rounding an overflowing size up to the alignment would wrap around to a small one.
  const std::size_t size = checked_size < 0 ? 0 : static_cast<std::size_t>(checked_size);
  if (checked_size < 0 || size > static_cast<std::size_t>(std::numeric_limits<index_t>::max()) - alignment) {
    buf->base = nullptr;
    return nullptr;
  }
  void* allocation = std::aligned_alloc(alignment, align_up<std::size_t>(std::max<std::size_t>(size, 1), alignment));
  if (!allocation) {
    buf->base = nullptr;
    return nullptr;
  }
  // An empty buffer still gets a base (callbacks may slice its non-empty dims before they find
  // the empty one).
  buf->base = static_cast<char*>(allocation) + (size > 0 ? internal::base_offset(*buf) : 0);
  return allocation;
}

void default_free(var, raw_buffer*, void* allocation) { std::free(allocation); }

namespace {

// Prints the values of the operands of a failed condition, so the message shows what was
// required and what was found.
void print_operands(std::ostream& os, const expr& e, eval_context& ctx, const node_context* names) {
  auto show = [&](const expr& a, const expr& b) {
    os << "\n  ";
    print(os, a, names);
    os << " = " << evaluate(a, ctx) << "\n  ";
    print(os, b, names);
    os << " = " << evaluate(b, ctx);
  };
  if (const variable* op = e.as<variable>()) {
    // A condition named by a symbol (a let, such as the builder's "nothing of b is read").
    if (op->field == buffer_field::none) {
      os << "\n  ";
      print(os, e, names);
      os << " = " << evaluate(e, ctx);
    }
    return;
  }
  if (const less_equal* op = e.as<less_equal>()) return show(op->a, op->b);
  if (const less* op = e.as<less>()) return show(op->a, op->b);
  if (const equal* op = e.as<equal>()) return show(op->a, op->b);
  if (const not_equal* op = e.as<not_equal>()) return show(op->a, op->b);
  if (const logical_and* op = e.as<logical_and>()) {
    if (evaluate(op->a, ctx) == 0) return print_operands(os, op->a, ctx, names);
    return print_operands(os, op->b, ctx, names);
  }
  if (const logical_or* op = e.as<logical_or>()) {
    // Both sides are false (e.g. a bounds check and "nothing of the buffer is read").
    print_operands(os, op->a, ctx, names);
    print_operands(os, op->b, ctx, names);
  }
}

}  // namespace

void default_check_failed(const expr& condition, const eval_context& ctx) {
  const node_context* names = ctx.symbols;
  std::ostringstream os;
  os << "slinky: check failed: ";
  print(os, condition, names);
  // A copy: evaluate() may grow it, to make room for the symbols of an operand.
  eval_context copy = ctx;
  print_operands(os, condition, copy, names);
  std::cerr << os.str() << std::endl;
}

void default_call_failed(const call_stmt* op) {
  std::cerr << "slinky: call to " << (op->attrs.name.empty() ? "<callback>" : op->attrs.name) << " failed" << std::endl;
}

}  // namespace slinky
