/// \file
/// Printing of the IR, intervals and buffers. Programs print as readable pseudo-code: one statement
/// per line, nested bodies indented, symbols by name when a node_context is given (or as _<id>
/// without one).
#ifndef SLINKY_RUNTIME_PRINT_H
#define SLINKY_RUNTIME_PRINT_H

#include <iosfwd>
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

/// Alignment facts print as (modulus, remainder).
///@{
std::ostream& operator<<(std::ostream& os, const modulus_remainder<int>& a);
std::ostream& operator<<(std::ostream& os, const modulus_remainder<index_t>& a);
///@}

}  // namespace slinky

#endif  // SLINKY_RUNTIME_PRINT_H
