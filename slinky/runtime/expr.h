// Expressions of the slinky IR: symbols (node_context, var), immutable reference counted
// expression nodes of index_t value, the operators and helpers that build them, intervals,
// boxes and symbolic buffer dimensions.
#ifndef SLINKY_RUNTIME_EXPR_H
#define SLINKY_RUNTIME_EXPR_H

#include <cstddef>
#include <cstdint>
#include <limits>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "slinky/base/ref_count.h"
#include "slinky/base/span.h"
#include "slinky/runtime/buffer.h"

namespace slinky {

// Every node kind, declared once. The kind enums, the visitor interfaces and the default
// traversals are generated from these lists.
#define SLINKY_FOR_EACH_EXPR_NODE(X)                                                                                   \
  X(variable)                                                                                                          \
  X(let)                                                                                                               \
  X(add)                                                                                                               \
  X(sub)                                                                                                               \
  X(mul)                                                                                                               \
  X(div)                                                                                                               \
  X(mod)                                                                                                               \
  X(min)                                                                                                               \
  X(max)                                                                                                               \
  X(equal)                                                                                                             \
  X(not_equal)                                                                                                         \
  X(less)                                                                                                              \
  X(less_equal)                                                                                                        \
  X(logical_and)                                                                                                       \
  X(logical_or)                                                                                                        \
  X(logical_not)                                                                                                       \
  X(select)                                                                                                            \
  X(call)                                                                                                              \
  X(constant)

#define SLINKY_FOR_EACH_STMT_NODE(X)                                                                                   \
  X(call_stmt)                                                                                                         \
  X(copy_stmt)                                                                                                         \
  X(let_stmt)                                                                                                          \
  X(block)                                                                                                             \
  X(loop)                                                                                                              \
  X(allocate)                                                                                                          \
  X(make_buffer)                                                                                                       \
  X(clone_buffer)                                                                                                      \
  X(crop_buffer)                                                                                                       \
  X(crop_dim)                                                                                                          \
  X(slice_buffer)                                                                                                      \
  X(slice_dim)                                                                                                         \
  X(transpose)                                                                                                         \
  X(check)                                                                                                             \
  X(if_then_else)

// The order of the kinds is the original slinky's (none first, constant last).
enum class expr_node_type {
  none,
#define SLINKY_X(name) name,
  SLINKY_FOR_EACH_EXPR_NODE(SLINKY_X)
#undef SLINKY_X
};

enum class stmt_node_type {
  none,
#define SLINKY_X(name) name,
  SLINKY_FOR_EACH_STMT_NODE(SLINKY_X)
#undef SLINKY_X
};

// The name of a node kind, for messages.
const char* to_string(expr_node_type t);
const char* to_string(stmt_node_type t);

// Symbols are small integer ids; names live only in the node_context.
using symbol_id = std::size_t;

// Maps names to symbol ids and back. Names are unique within a context.
class node_context {
  std::vector<std::string> names_;
  std::map<std::string, symbol_id, std::less<>> ids_;

public:
  // The name of a symbol, or "_<id>" if the symbol is not from this context.
  std::string name(symbol_id id) const;
  // The symbol with this name, made if it does not exist yet.
  symbol_id insert(const std::string& name);
  // A new symbol named prefix, or prefix.N if that name is taken.
  symbol_id insert_unique(const std::string& prefix = "t");
  // The symbol with this name, or -1 (as symbol_id) if there is none.
  symbol_id lookup(const std::string& name) const;
  // The number of symbols made so far (symbol ids are below this).
  std::size_t size() const { return names_.size(); }
};

class expr;

// A symbol: an id that is cheap to copy and compare for identity (== and != compare ids and
// give bool; the other operators build expressions). The default var is undefined.
class var {
  symbol_id sym_ = std::numeric_limits<symbol_id>::max();

public:
  var() = default;
  explicit var(symbol_id sym) : sym_(sym) {}
  var(node_context& ctx, const std::string& name) : sym_(ctx.insert(name)) {}

  symbol_id sym() const { return sym_; }
  bool defined() const { return sym_ != std::numeric_limits<symbol_id>::max(); }

  bool operator==(const var& other) const { return sym_ == other.sym_; }
  bool operator!=(const var& other) const { return sym_ != other.sym_; }
};

class expr_visitor;

// The base of all expression nodes. Nodes are immutable after construction.
class base_expr_node : public ref_counted<base_expr_node> {
public:
  const expr_node_type type;

  explicit base_expr_node(expr_node_type type) : type(type) {}
  virtual ~base_expr_node() = default;
  virtual void accept(expr_visitor* v) const = 0;

  template <typename T>
  const T* as() const {
    return type == T::static_type ? static_cast<const T*>(this) : nullptr;
  }
  static void destroy(base_expr_node* p) { delete p; }
};

// A reference counted handle to an immutable expression; undefined by default. The
// arithmetic and comparison operators on expr build IR: to compare two expressions
// structurally, use same_as or compare.
class expr {
  ref_count<const base_expr_node> n_;

public:
  expr() = default;
  expr(std::int32_t x);
  expr(std::int64_t x);
  expr(long long x);
  expr(std::uint32_t x) : expr(static_cast<std::int64_t>(x)) {}
  expr(std::uint64_t x) : expr(static_cast<std::int64_t>(x)) {}
  expr(unsigned long long x) : expr(static_cast<std::int64_t>(x)) {}
  // Explicit, so that var == var (which compares ids and gives bool) is not silently an expr.
  explicit expr(bool x) : expr(static_cast<std::int32_t>(x)) {}
  expr(var v);
  explicit expr(const base_expr_node* n) : n_(n) {}

  bool defined() const { return n_.defined(); }
  const base_expr_node* get() const { return n_.get(); }
  const base_expr_node* operator->() const { return n_.get(); }
  expr_node_type type() const { return n_ ? n_->type : expr_node_type::none; }
  template <typename T>
  const T* as() const {
    return n_ ? n_->as<T>() : nullptr;
  }
  void accept(expr_visitor* v) const { n_->accept(v); }

  // True if both refer to the same node (or both are undefined).
  bool same_as(const expr& other) const { return n_.get() == other.n_.get(); }
  bool same_as(const base_expr_node* other) const { return n_.get() == other; }

  expr& operator+=(const expr& r);
  expr& operator-=(const expr& r);
  expr& operator*=(const expr& r);
  expr& operator/=(const expr& r);
  expr& operator%=(const expr& r);
};

// Structural comparison: 0 if equal, negative or positive to give a total order.
int compare(const expr& a, const expr& b);
// True if a and b are structurally identical (also if both are undefined).
bool match(const expr& a, const expr& b);

// Intrinsic functions of `call` expressions.
enum class intrinsic {
  positive_infinity,
  negative_infinity,
  indeterminate,
  abs,
  // Buffer metadata: buffer_rank(b), buffer_elem_size(b), buffer_size_bytes(b),
  // buffer_min(b, d), buffer_max(b, d), buffer_stride(b, d), buffer_fold_factor(b, d).
  buffer_rank,
  buffer_elem_size,
  buffer_size_bytes,
  buffer_min,
  buffer_max,
  buffer_stride,
  buffer_fold_factor,
  // buffer_at(b, i0, i1, ...): the address of an element, as an integer; missing indices
  // are the buffer's mins.
  buffer_at,
  // Semaphores for pipelined parallel loops: semaphore_init(s, count), semaphore_signal(s[,
  // count]), semaphore_wait(s[, count]).
  semaphore_init,
  semaphore_signal,
  semaphore_wait,
  // trace_begin(name_address) -> token, trace_end(token).
  trace_begin,
  trace_end,
  // free(b): releases an allocation before the end of its scope.
  free,
};

const char* to_string(intrinsic i);

// The expression node kinds. Each has a static `make` that canonicalizes where it is free to.
template <typename T, expr_node_type Type>
class expr_node : public base_expr_node {
public:
  static constexpr expr_node_type static_type = Type;
  expr_node() : base_expr_node(Type) {}
  void accept(expr_visitor* v) const override;
};

// A reference to a symbol's value.
class variable : public expr_node<variable, expr_node_type::variable> {
public:
  var sym;
  static expr make(var sym);
};

// An integer constant.
class constant : public expr_node<constant, expr_node_type::constant> {
public:
  index_t value;
  static expr make(index_t value);
};

// let sym0 = value0, sym1 = value1, ... in body. Later values may use earlier symbols.
class let : public expr_node<let, expr_node_type::let> {
public:
  std::vector<std::pair<var, expr>> lets;
  expr body;
  static expr make(std::vector<std::pair<var, expr>> lets, expr body);
  static expr make(var sym, expr value, expr body) { return make({{sym, std::move(value)}}, std::move(body)); }
};

// Binary operators. Division and modulo are Euclidean, and x / 0 == x % 0 == 0. Comparisons
// and logical operators give 0 or 1; logical operators treat non-zero as true.
#define SLINKY_DECLARE_BINARY(name)                                                                                    \
  class name : public expr_node<class name, expr_node_type::name> {                                                          \
  public:                                                                                                              \
    expr a, b;                                                                                                         \
    static expr make(expr a, expr b);                                                                                  \
  };
SLINKY_DECLARE_BINARY(add)
SLINKY_DECLARE_BINARY(sub)
SLINKY_DECLARE_BINARY(mul)
SLINKY_DECLARE_BINARY(div)
SLINKY_DECLARE_BINARY(mod)
SLINKY_DECLARE_BINARY(min)
SLINKY_DECLARE_BINARY(max)
SLINKY_DECLARE_BINARY(equal)
SLINKY_DECLARE_BINARY(not_equal)
SLINKY_DECLARE_BINARY(less)
SLINKY_DECLARE_BINARY(less_equal)
SLINKY_DECLARE_BINARY(logical_and)
SLINKY_DECLARE_BINARY(logical_or)
#undef SLINKY_DECLARE_BINARY

class logical_not : public expr_node<logical_not, expr_node_type::logical_not> {
public:
  expr a;
  static expr make(expr a);
};

// select(condition, true_value, false_value); only the chosen value is evaluated.
class select : public expr_node<class select, expr_node_type::select> {
public:
  expr condition, true_value, false_value;
  static expr make(expr condition, expr true_value, expr false_value);
};

// The node classes min, max and select share their names with the free functions that build
// them (the function hides the class: name the class as `class min`). These aliases name them
// without the elaborated specifier.
using minimum = class min;
using maximum = class max;
using conditional = class select;

// A call of an intrinsic. Buffer arguments are variables holding buffers.
class call : public expr_node<call, expr_node_type::call> {
public:
  slinky::intrinsic intrinsic;
  std::vector<expr> args;
  static expr make(slinky::intrinsic i, std::vector<expr> args);
};

// Visits expression nodes. The default implementations visit the children.
class expr_visitor {
public:
  virtual ~expr_visitor() = default;
#define SLINKY_X(name) virtual void visit(const class name* op);
  SLINKY_FOR_EACH_EXPR_NODE(SLINKY_X)
#undef SLINKY_X
};

template <typename T, expr_node_type Type>
void expr_node<T, Type>::accept(expr_visitor* v) const {
  v->visit(static_cast<const T*>(this));
}

// Operators that build expressions.
expr operator+(expr a, expr b);
expr operator-(expr a, expr b);
expr operator*(expr a, expr b);
expr operator/(expr a, expr b);
expr operator%(expr a, expr b);
expr operator-(expr a);
expr operator==(expr a, expr b);
expr operator!=(expr a, expr b);
expr operator<(expr a, expr b);
expr operator<=(expr a, expr b);
expr operator>(expr a, expr b);
expr operator>=(expr a, expr b);
expr operator&&(expr a, expr b);
expr operator||(expr a, expr b);
expr operator!(expr a);
expr min(expr a, expr b);
expr max(expr a, expr b);
expr clamp(expr x, expr lo, expr hi);
expr select(expr condition, expr true_value, expr false_value);
expr abs(expr x);
// Rounds x down or up to a multiple of the positive a.
expr align_down(expr x, expr a);
expr align_up(expr x, expr a);

const expr& positive_infinity();
const expr& negative_infinity();
const expr& indeterminate();
bool is_positive_infinity(const expr& x);
bool is_negative_infinity(const expr& x);
bool is_infinity(const expr& x);
bool is_indeterminate(const expr& x);

// Helpers to inspect expressions.
const index_t* as_constant(const expr& x);
const var* as_variable(const expr& x);
bool is_constant(const expr& x, index_t value);
inline bool is_zero(const expr& x) { return is_constant(x, 0); }
inline bool is_one(const expr& x) { return is_constant(x, 1); }
bool is_intrinsic(const expr& x, intrinsic i);

// Buffer metadata as expressions of a buffer symbol.
expr buffer_rank(expr buf);
expr buffer_elem_size(expr buf);
expr buffer_size_bytes(expr buf);
expr buffer_min(expr buf, expr dim);
expr buffer_max(expr buf, expr dim);
expr buffer_extent(expr buf, expr dim);
expr buffer_stride(expr buf, expr dim);
expr buffer_fold_factor(expr buf, expr dim);
expr buffer_at(expr buf, span<const expr> at);
expr buffer_at(expr buf);
template <typename... Args>
expr buffer_at(expr buf, expr i0, Args... is) {
  const expr at[] = {std::move(i0), expr(is)...};
  return buffer_at(std::move(buf), span<const expr>(at));
}

// An inclusive interval [min, max] of expressions. It is empty if max < min.
class interval_expr {
public:
  expr min, max;

  interval_expr() = default;
  explicit interval_expr(expr point) : min(point), max(std::move(point)) {}
  interval_expr(expr min, expr max) : min(std::move(min)), max(std::move(max)) {}

  // [-inf, inf] and [inf, -inf].
  static const interval_expr& all();
  static const interval_expr& none();
  static interval_expr union_identity() { return none(); }
  static interval_expr intersection_identity() { return all(); }

  bool is_point() const { return min.same_as(max); }
  bool same_as(const interval_expr& other) const { return min.same_as(other.min) && max.same_as(other.max); }

  expr extent() const;
  expr begin() const { return min; }
  expr end() const;
  // The interval is empty (as an expression).
  expr empty() const;

  interval_expr& set_extent(expr extent);

  interval_expr& operator|=(const interval_expr& r);
  interval_expr& operator&=(const interval_expr& r);
  interval_expr& operator+=(const expr& r);
  interval_expr& operator-=(const expr& r);
  interval_expr& operator*=(const expr& r);
  interval_expr& operator/=(const expr& r);
};

// Union (the smallest interval containing both) and intersection.
interval_expr operator|(interval_expr a, const interval_expr& b);
interval_expr operator&(interval_expr a, const interval_expr& b);
// Shifts by an expression.
interval_expr operator+(interval_expr a, const expr& b);
interval_expr operator-(interval_expr a, const expr& b);
// Scales by an expression; the bounds are swapped when b is a negative constant.
interval_expr operator*(interval_expr a, const expr& b);
interval_expr operator/(interval_expr a, const expr& b);
interval_expr operator-(const interval_expr& a);

inline interval_expr point(expr x) { return interval_expr(std::move(x)); }
inline interval_expr bounds(expr min, expr max) { return interval_expr(std::move(min), std::move(max)); }
interval_expr min_extent(const expr& min, const expr& extent);
interval_expr range(const expr& begin, const expr& end);
interval_expr buffer_bounds(const expr& buf, const expr& dim);

// One interval per dimension.
using box_expr = std::vector<interval_expr>;
box_expr operator|(box_expr a, const box_expr& b);
box_expr operator&(box_expr a, const box_expr& b);

// The symbolic description of one dimension of a buffer.
class dim_expr {
public:
  interval_expr bounds;
  expr stride;
  expr fold_factor;

  const expr& min() const { return bounds.min; }
  const expr& max() const { return bounds.max; }
  expr extent() const { return bounds.extent(); }
  bool same_as(const dim_expr& other) const {
    return bounds.same_as(other.bounds) && stride.same_as(other.stride) && fold_factor.same_as(other.fold_factor);
  }
};

}  // namespace slinky

#endif  // SLINKY_RUNTIME_EXPR_H
