/// \file
/// Printing of the IR, intervals and buffers. Programs print as readable pseudo-code: one statement
/// per line, nested bodies indented, symbols by name when a node_context is given (or as _<id>
/// without one).
#ifndef SLINKY_RUNTIME_PRINT_H
#define SLINKY_RUNTIME_PRINT_H

#include <ostream>
#include <string>
#include <tuple>

#include "slinky/base/modulus_remainder.h"
#include "slinky/runtime/buffer.h"
#include "slinky/runtime/expr.h"
#include "slinky/runtime/stmt.h"

namespace slinky {

/// Print with names from ctx (which may be null).
///@{
void print(std::ostream& os, var v, const node_context* ctx = nullptr);
void print(std::ostream& os, const expr& e, const node_context* ctx = nullptr);
void print(std::ostream& os, const stmt& s, const node_context* ctx = nullptr);
void print(std::ostream& os, const interval_expr& i, const node_context* ctx = nullptr);
void print(std::ostream& os, const box_expr& b, const node_context* ctx = nullptr);
void print(std::ostream& os, const dim_expr& d, const node_context* ctx = nullptr);
///@}

/// The same as strings.
///@{
std::string to_string(var v, const node_context* ctx = nullptr);
std::string to_string(const expr& e, const node_context* ctx = nullptr);
std::string to_string(const stmt& s, const node_context* ctx = nullptr);
std::string to_string(const interval_expr& i, const node_context* ctx = nullptr);
///@}

/// Print without names (symbols as _<id>); enums print as to_string gives them.
///@{
std::ostream& operator<<(std::ostream& os, const expr& e);
std::ostream& operator<<(std::ostream& os, const stmt& s);
std::ostream& operator<<(std::ostream& os, const interval_expr& i);
std::ostream& operator<<(std::ostream& os, const box_expr& b);
std::ostream& operator<<(std::ostream& os, const dim_expr& d);
std::ostream& operator<<(std::ostream& os, var v);
std::ostream& operator<<(std::ostream& os, memory_type m);
std::ostream& operator<<(std::ostream& os, intrinsic i);
std::ostream& operator<<(std::ostream& os, buffer_field f);
std::ostream& operator<<(std::ostream& os, expr_node_type t);
std::ostream& operator<<(std::ostream& os, stmt_node_type t);
///@}
/// dim prints as {min, max, stride, fold_factor}; a raw_buffer as
/// {base, elem_size, {dims...}}.
///@{
std::ostream& operator<<(std::ostream& os, const dim& d);
std::ostream& operator<<(std::ostream& os, const raw_buffer& b);
///@}

/// `os << std::tie(e, ctx)` prints with names.
///@{
std::ostream& operator<<(std::ostream& os, const std::tuple<const expr&, const node_context&>& e);
std::ostream& operator<<(std::ostream& os, const std::tuple<const stmt&, const node_context&>& s);
std::ostream& operator<<(std::ostream& os, const std::tuple<const interval_expr&, const node_context&>& i);
std::ostream& operator<<(std::ostream& os, const std::tuple<const box_expr&, const node_context&>& b);
///@}

/// Alignment facts print as (modulus, remainder). A template, defined here: a client may define
/// its own `operator<<(std::ostream&, const modulus_remainder<index_t>&)` (the original's tests
/// do), which is then a better match in its code and a different symbol at link time.
template <typename T>
std::ostream& operator<<(std::ostream& os, const modulus_remainder<T>& a) {
  return os << "(" << a.modulus << ", " << a.remainder << ")";
}

}  // namespace slinky

#endif  // SLINKY_RUNTIME_PRINT_H
