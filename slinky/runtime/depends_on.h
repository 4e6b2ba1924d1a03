/// \file
/// How expressions and statements use symbols: as values, as buffers passed to callbacks and
/// copies, or through their base pointer or metadata. For example, in `call(f, {in}, {out})` the
/// symbol `in` is a buffer_input, and in `buffer_min(b, 0) + x` b's bounds and x's value are used.
#ifndef SLINKY_RUNTIME_DEPENDS_ON_H
#define SLINKY_RUNTIME_DEPENDS_ON_H

#include <utility>
#include <vector>

#include "slinky/base/span.h"
#include "slinky/runtime/expr.h"
#include "slinky/runtime/stmt.h"

namespace slinky {

/// The ways a node uses a symbol. Only free uses count: a use inside the scope of a declaration of
/// the same symbol (a let, a loop variable, an allocation, the dst_x of a copy in its src_x, the
/// symbol of an async in its body, ...) is a use of that inner symbol, not of the outer one. The
/// exception is a buffer declared from another one (clone_buffer, crop_buffer, crop_dim,
/// slice_buffer, slice_dim, transpose: sym is a view of src): uses of sym in its body count as
/// uses of src (also when sym and src are the same symbol), and the declaration itself reads
/// src's metadata (buffer_dims and buffer_bounds).
struct depends_on_result {
  /// The symbol's value is read: a variable node without a buffer field (other than the buffer
  /// operand of buffer_at, free and validate_buffer, which are buffer uses below).
  bool var = false;
  /// The buffer is an input of a call_stmt.
  bool buffer_input = false;
  /// The buffer is an output of a call_stmt.
  bool buffer_output = false;
  /// The buffer is the src or pad of a copy_stmt.
  bool buffer_src = false;
  /// The buffer is the dst of a copy_stmt.
  bool buffer_dst = false;
  /// The buffer's base pointer is read: by buffer_at, free or validate_buffer, or because the
  /// buffer is passed to a call_stmt or copy_stmt.
  bool buffer_base = false;
  /// The buffer's metadata is read: a variable node with any buffer field, the buffer passed to a
  /// call_stmt or copy_stmt (whose callee may read all of it), buffer_at and validate_buffer
  /// (which use strides and mins), or a buffer declared from it (a crop, slice, ...).
  bool buffer_dims = false;
  /// The buffer's bounds (a min or max field) are read, or any of the uses above that read the
  /// whole descriptor (calls, copies, buffer_at, validate_buffer, declarations from it). A
  /// buffer_bounds use is always a buffer_dims use too.
  bool buffer_bounds = false;

  /// The buffer's memory is used: passed to a call or copy, or its base read.
  bool buffer_data() const { return buffer_input || buffer_output || buffer_src || buffer_dst || buffer_base; }
  /// Any use as a buffer.
  bool buffer() const { return buffer_data() || buffer_dims || buffer_bounds; }
  /// The buffer's contents are read (a call input, a copy src or pad).
  bool buffer_read() const { return buffer_input || buffer_src; }
  /// The buffer's contents are written (a call output, a copy dst).
  bool buffer_write() const { return buffer_output || buffer_dst; }
  /// Any use at all.
  bool any() const { return var || buffer(); }
  /// The same as any(): `if (depends_on(e, x))` means "e uses x".
  explicit operator bool() const { return any(); }

  /// Adds other's uses (ORs each field).
  depends_on_result& operator|=(const depends_on_result& other);
};

namespace internal {

/// An operand of depends_on_result's == and != (below), reached by an implicit conversion.
struct depends_on_operand {
  const depends_on_result& result;
  depends_on_operand(const depends_on_result& r) : result(r) {}  // NOLINT: implicit on purpose
};

}  // namespace internal

/// True if every field of a and b is equal (and its negation). The original declares no ==, so
/// clients (and its tests) define their own, e.g. `bool operator==(const depends_on_result&, const
/// depends_on_result&)` in namespace slinky, or a generic template. Ours takes its operands
/// through a conversion, so that any such operator is a better match and is chosen without
/// ambiguity, and is a different function (no duplicate symbol at link time).
///@{
bool operator==(internal::depends_on_operand a, internal::depends_on_operand b);
inline bool operator!=(internal::depends_on_operand a, internal::depends_on_operand b) { return !(a == b); }
///@}

/// Adds (ORs) the uses of each symbol of `var_deps` in e (or s) to its result.
///@{
void depends_on(expr_ref e, span<const std::pair<var, depends_on_result&>> var_deps);
void depends_on(stmt_ref s, span<const std::pair<var, depends_on_result&>> var_deps);
///@}
/// Adds the uses of v in e (or s) to deps.
///@{
void depends_on(expr_ref e, var v, depends_on_result& deps);
void depends_on(stmt_ref s, var v, depends_on_result& deps);
///@}
/// The uses of v in e, an interval (both ends) or s. Undefined nodes use nothing. The overloads
/// taking `const expr&` / `const stmt&` keep calls with a var or an integer as the expression
/// (which convert to expr but not to expr_ref) unambiguous.
///@{
depends_on_result depends_on(expr_ref e, var v);
depends_on_result depends_on(const expr& e, var v);
depends_on_result depends_on(const interval_expr& x, var v);
depends_on_result depends_on(stmt_ref s, var v);
depends_on_result depends_on(const stmt& s, var v);
///@}
/// True if e (or s) uses any of vars.
///@{
bool depends_on(expr_ref e, span<const var> vars);
bool depends_on(stmt_ref s, span<const var> vars);
///@}

/// True if a buffer used in this way can be replaced by a description of its metadata (see
/// substitute_buffer): it is used only through its metadata (buffer_dims, buffer_bounds), neither
/// as a value nor through its memory.
bool can_substitute_buffer(const depends_on_result& deps);

/// True if e's value depends only on the values of the symbols it uses and evaluating it has no
/// effect: it reads no buffer (no metadata such as buffer_min(b, 0), no buffer_at or
/// validate_buffer: is_pure(buffer_min(b, 0)) is false, as in the original) and calls no
/// semaphore, wait_for, tracing or free intrinsic and no user function (whose purity cannot be
/// checked). A pure expression is a function of symbol values alone, and may be evaluated any
/// number of times, or not at all.
bool is_pure(expr_ref e);
/// True if evaluating e may have an effect beyond its value: it calls semaphore_init,
/// semaphore_signal, semaphore_wait, wait_for, trace_begin, trace_end or free. (User functions
/// must be pure, so their calls are not effects; is_pure is the stricter test.)
bool has_side_effects(expr_ref e);

/// The symbols e (or s) uses in any way, each once, sorted by id.
///@{
std::vector<var> find_dependencies(expr_ref e);
std::vector<var> find_dependencies(stmt_ref s);
///@}

/// The buffer whose base pointer e reads (by buffer_at, free or validate_buffer), if there is
/// exactly one such buffer; an undefined var if there is none or several.
var find_buffer_data_dependency(expr_ref e);

/// The buffers s uses as call inputs (input), copy srcs or pads (src), call outputs (output) or
/// copy dsts (dst), each once, sorted by id. With (input, output), input selects both call inputs
/// and copy srcs, output both call outputs and copy dsts; with no flags, all four.
///@{
std::vector<var> find_buffer_dependencies(stmt_ref s);
std::vector<var> find_buffer_dependencies(stmt_ref s, bool input, bool output);
std::vector<var> find_buffer_dependencies(stmt_ref s, bool input, bool src, bool output, bool dst);
///@}

}  // namespace slinky

#endif  // SLINKY_RUNTIME_DEPENDS_ON_H
