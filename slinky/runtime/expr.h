/// \file
/// Expressions of the slinky IR: symbols (node_context, var), immutable reference counted
/// expression nodes of index_t value, and the operators and helpers that build them. Intervals,
/// boxes and symbolic buffer dimensions (interval_expr.h) and symbol_map<T> (symbol_map.h) are
/// declared in headers of their own, which this one includes: include this one.
#ifndef SLINKY_RUNTIME_EXPR_H
#define SLINKY_RUNTIME_EXPR_H

#include <cstddef>
#include <cstdint>
#include <functional>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "slinky/base/ref_count.h"
#include "slinky/base/span.h"
#include "slinky/base/util.h"
#include "slinky/runtime/buffer.h"

namespace slinky {

// Every node kind, declared once. The kind enums, the node classes of the binary operators, the
// visitor interfaces and the default traversals are generated from these lists.

/// The binary operators (nodes with operands a and b, see binary_op), in the order of their kinds.
/// Macros applied to it name a node class as `class name` (min and max are also functions).
#define SLINKY_FOR_EACH_BINARY_NODE(X)                                                                                 \
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
  X(logical_or)

/// Every expression node kind, X(name) for each, in the order of their kinds.
#define SLINKY_FOR_EACH_EXPR_NODE(X)                                                                                   \
  X(variable)                                                                                                          \
  X(let)                                                                                                               \
  SLINKY_FOR_EACH_BINARY_NODE(X)                                                                                       \
  X(logical_not)                                                                                                       \
  X(select)                                                                                                            \
  X(call)                                                                                                              \
  X(constant)

/// Every statement node kind (stmt.h), X(name) for each, in the order of their kinds.
#define SLINKY_FOR_EACH_STMT_NODE(X)                                                                                   \
  X(call_stmt)                                                                                                         \
  X(copy_stmt)                                                                                                         \
  X(let_stmt)                                                                                                          \
  X(block)                                                                                                             \
  X(loop)                                                                                                              \
  X(allocate)                                                                                                          \
  X(make_buffer)                                                                                                       \
  X(constant_buffer)                                                                                                   \
  X(clone_buffer)                                                                                                      \
  X(crop_buffer)                                                                                                       \
  X(crop_dim)                                                                                                          \
  X(slice_buffer)                                                                                                      \
  X(slice_dim)                                                                                                         \
  X(transpose)                                                                                                         \
  X(async)                                                                                                             \
  X(check)                                                                                                             \
  X(if_then_else)

/// The kinds of expression nodes. The order of the kinds is the original slinky's (none first,
/// constant last).
enum class expr_node_type {
  /// The kind of an undefined expression.
  none,
#define SLINKY_X(name) name, /**< The kind of class name. */
  SLINKY_FOR_EACH_EXPR_NODE(SLINKY_X)
#undef SLINKY_X
};

/// The kinds of statement nodes (stmt.h).
enum class stmt_node_type {
  /// The kind of an undefined statement.
  none,
#define SLINKY_X(name) name, /**< The kind of class name. */
  SLINKY_FOR_EACH_STMT_NODE(SLINKY_X)
#undef SLINKY_X
};

/// The name of a node kind, for messages.
///@{
const char* to_string(expr_node_type t);
const char* to_string(stmt_node_type t);
///@}

/// Symbols are small integer ids; names live only in the node_context.
using symbol_id = std::size_t;

class expr;
class node_context;

/// A symbol: an id that is cheap to copy and compare. == and != compare ids, and so does <
/// (so vars can be sorted and kept in `std::set` or `std::map`); the other operators convert to expr
/// and build expressions. The default var is undefined.
class var {
public:
  /// The type of symbol ids.
  using type = std::size_t;
  /// The id of an undefined var.
  static constexpr type invalid = static_cast<type>(-1);

  /// The symbol id (invalid if undefined).
  type id = invalid;

  /// An undefined var.
  var() = default;
  /// The symbol with this id.
  explicit var(type id) : id(id) {}
  /// A new symbol named `name` (or name#0, name#1, ... if the name is taken): two vars made with
  /// the same name are two different symbols.
  var(node_context& ctx, const std::string& name);

  /// The symbol id.
  symbol_id sym() const { return id; }
  /// True unless the id is invalid.
  bool defined() const { return id != invalid; }

  /// The expression -x.
  expr operator-() const;
  /// Compare ids.
  ///@{
  bool operator==(const var& other) const { return id == other.id; }
  bool operator!=(const var& other) const { return id != other.id; }
  bool operator<(const var& other) const { return id < other.id; }
  ///@}
};

/// Maps names to symbols and back. Names are unique within a context.
class node_context {
  std::vector<std::string> names_;
  std::map<std::string, symbol_id, std::less<>> ids_;

public:
  /// The name of a symbol: "<>" for an undefined var, "<id>" for a symbol not from this context.
  ///@{
  std::string name(var v) const;
  std::string name(symbol_id id) const { return name(var(id)); }
  ///@}
  /// The symbol with this name, made if it does not exist yet.
  var insert(const std::string& name);
  /// A new symbol named prefix, or prefix#0, prefix#1, ... (the first that is free).
  var insert_unique(const std::string& prefix = "_");
  /// The symbol with this name, if there is one.
  std::optional<var> lookup(const std::string& name) const;
  /// The number of symbols made so far (symbol ids are below this).
  std::size_t size() const { return names_.size(); }
};

inline var::var(node_context& ctx, const std::string& name) : id(ctx.insert_unique(name).id) {}

class expr_visitor;

/// The base of all expression nodes. Nodes are immutable after construction.
class base_expr_node : public ref_counted<base_expr_node> {
public:
  /// The kind of the node.
  const expr_node_type type;

  /// A node of the given kind.
  explicit base_expr_node(expr_node_type type) : type(type) {}
  /// Virtual: nodes are destroyed through this base.
  virtual ~base_expr_node() = default;
  /// Calls v->visit with this node as its own class.
  virtual void accept(expr_visitor* v) const = 0;

  /// This node as a T if it is one (its kind is T::static_type), else null.
  template <typename T>
  const T* as() const {
    return type == T::static_type ? static_cast<const T*>(this) : nullptr;
  }
  /// Deletes p (what ref_counted calls when the last reference goes).
  static void destroy(base_expr_node* p) { delete p; }
};

/// A non-owning reference to an expression node (or null): cheap to pass where the callee does
/// not keep the node. Made implicitly from an expr or a node pointer.
class expr_ref {
  const base_expr_node* n_ = nullptr;

public:
  /// A null reference.
  expr_ref() = default;
  /// A reference to n (which must outlive it).
  expr_ref(const base_expr_node* n) : n_(n) {}
  /// A reference to e's node (e must outlive it).
  expr_ref(const expr& e);

  /// True if not null.
  bool defined() const { return n_ != nullptr; }
  /// The node, or null.
  const base_expr_node* get() const { return n_; }
  /// The node's members (must not be null).
  const base_expr_node* operator->() const { return n_; }
  /// The kind of the node; expr_node_type::none if null.
  expr_node_type type() const { return n_ ? n_->type : expr_node_type::none; }
  /// The node as a T if it is one, else null (also if this reference is null).
  template <typename T>
  const T* as() const {
    return n_ ? n_->as<T>() : nullptr;
  }
  /// Calls v->visit with the node; nothing if null (a visitor walks past undefined operands).
  void accept(expr_visitor* v) const {
    if (n_) n_->accept(v);
  }
  /// True if both refer to the same node (or both are null).
  bool same_as(expr_ref other) const { return n_ == other.n_; }
};

/// A reference counted handle to an immutable expression; undefined by default. The
/// arithmetic and comparison operators on expr build IR: to compare two expressions
/// structurally, use same_as or compare. Integers convert implicitly (bool as 0 or 1).
class expr {
  ref_count<const base_expr_node> n_;

public:
  /// An undefined expression.
  expr() = default;
  /// The constant x.
  ///@{
  expr(std::int32_t x);
  expr(std::int64_t x);
  expr(long long x);
  expr(std::uint32_t x) : expr(static_cast<std::int64_t>(x)) {}
  expr(std::uint64_t x) : expr(static_cast<std::int64_t>(x)) {}
  expr(unsigned long long x) : expr(static_cast<std::int64_t>(x)) {}
  ///@}
  /// The value of the symbol v (a variable node).
  expr(var v);
  /// A new reference to e's node.
  expr(expr_ref e) : n_(e.get()) {}
  /// A reference to the node n (adding one to its count).
  explicit expr(const base_expr_node* n) : n_(n) {}

  /// True if the expression has a node.
  bool defined() const { return n_.defined(); }
  /// The node, or null.
  const base_expr_node* get() const { return n_.get(); }
  /// The node's members (must be defined).
  const base_expr_node* operator->() const { return n_.get(); }
  /// The kind of the node; expr_node_type::none if undefined.
  expr_node_type type() const { return n_ ? n_->type : expr_node_type::none; }
  /// The node as a T if it is one, else null (also if undefined).
  template <typename T>
  const T* as() const {
    return n_ ? n_->as<T>() : nullptr;
  }
  /// Calls v->visit with the node; nothing if undefined (a visitor walks past undefined operands).
  void accept(expr_visitor* v) const {
    if (n_) n_->accept(v);
  }

  /// True if both refer to the same node (or both are undefined).
  ///@{
  bool same_as(const expr& other) const { return n_.get() == other.n_.get(); }
  bool same_as(expr_ref other) const { return n_.get() == other.get(); }
  bool same_as(const base_expr_node* other) const { return n_.get() == other; }
  ///@}

  /// -x: a constant if x is one (except the smallest index_t), else 0 - x.
  expr operator-() const;
  /// x = x + r, x - r, x * r, x / r or x % r (the operators below).
  ///@{
  expr& operator+=(const expr& r);
  expr& operator-=(const expr& r);
  expr& operator*=(const expr& r);
  expr& operator/=(const expr& r);
  expr& operator%=(const expr& r);
  ///@}
};

inline expr_ref::expr_ref(const expr& e) : n_(e.get()) {}

/// Structural comparison: 0 if equal, negative or positive to give a total order.
int compare(const expr& a, const expr& b);
/// True if a and b are structurally identical (also if both are undefined).
bool match(const expr& a, const expr& b);

/// The original's canonical order of commutative operands: true if the operands of a
/// commutative operator of kinds (a, b) should be swapped (a > b, so constants go last).
///@{
inline bool should_commute(expr_node_type a, expr_node_type b) { return a > b; }
bool should_commute(const expr& a, const expr& b);
///@}

/// Which piece of buffer metadata a variable node reads (buffer_field::none: the symbol's own
/// value).
enum class buffer_field : unsigned {
  none = 0,     ///< The symbol's value, not buffer metadata.
  rank,         ///< raw_buffer::rank.
  elem_size,    ///< raw_buffer::elem_size.
  size_bytes,   ///< raw_buffer::size_bytes().
  min,          ///< dim::min() of a dimension.
  max,          ///< dim::max() of a dimension.
  stride,       ///< dim::stride() of a dimension.
  fold_factor,  ///< dim::fold_factor() of a dimension.
};
/// The name of a buffer field, for messages.
const char* to_string(buffer_field f);

/// Intrinsic functions of `call` expressions (intrinsic::none: a user function, see call).
enum class intrinsic {
  none,               ///< Not an intrinsic: a call of a user function.
  negative_infinity,  ///< -oo, the lower end of an unbounded interval (the smallest index_t if evaluated).
  positive_infinity,  ///< +oo, the upper end of an unbounded interval (the largest index_t if evaluated).
  indeterminate,      ///< A value that is not known (evaluates to 0).
  abs,                ///< abs(x): |x|.
  /// and_then(a, b, ...) and or_else(a, b, ...): && and || that evaluate their operands left to
  /// right and stop as soon as the result is known.
  and_then,
  or_else,  ///< See and_then.
  /// buffer_at(b, i0, i1, ...): the address of an element, as an integer; missing (or undefined)
  /// indices are the buffer's mins. 0 for a null buffer.
  buffer_at,
  /// Semaphores for pipelined parallel loops: semaphore_init(s, count), and
  /// semaphore_signal(s0, c0, s1, c1, ...) / semaphore_wait(s0, c0, ...) on pairs of a
  /// semaphore and a count (an undefined count is 1).
  semaphore_init,
  semaphore_signal,  ///< See semaphore_init.
  semaphore_wait,    ///< See semaphore_init.
  /// wait_for(t0, t1, ...): waits for the tasks started by async statements.
  wait_for,
  /// trace_begin(name_address) -> token, trace_end(token).
  trace_begin,
  trace_end,  ///< See trace_begin.
  /// free(b): releases an allocation before the end of its scope.
  free,
  /// validate_buffer(b): 1 if the element offsets of b fit in index_t and its memory does not
  /// wrap around the address space (see validate_buffer(const raw_buffer&)).
  validate_buffer,
};

/// The name of an intrinsic, for messages.
const char* to_string(intrinsic i);

/// The expression node kinds. Each has a static `make` that checks its operands and, for
/// commutative operators, puts a constant operand on the right. make never folds constants
/// (the operators below do).
template <typename T, expr_node_type Type>
class expr_node : public base_expr_node {
public:
  /// The kind of T (what as<T>() checks).
  static constexpr expr_node_type static_type = Type;
  /// A node of kind Type.
  expr_node() : base_expr_node(Type) {}
  /// Calls v->visit(this as a T).
  void accept(expr_visitor* v) const override;
};

/// A reference to a symbol's value, or (field != none) to a piece of metadata of the buffer
/// bound to the symbol: buffer_min(b, d) is variable{b, buffer_field::min, d}.
class variable : public expr_node<variable, expr_node_type::variable> {
public:
  /// The symbol.
  var sym;
  /// What it reads: the symbol's value (none) or a field of its buffer.
  buffer_field field = buffer_field::none;
  /// The dimension, for the per-dimension fields (min, max, stride, fold_factor); -1 otherwise.
  int dim = -1;

  /// The value of sym.
  static expr make(var sym);
  /// A field of the buffer bound to sym (of dimension dim, for the per-dimension fields).
  static expr make(var sym, buffer_field field, int dim = -1);
};

/// An integer constant.
class constant : public expr_node<constant, expr_node_type::constant> {
public:
  /// The value.
  index_t value;
  /// The constant value (small values share their nodes).
  static expr make(index_t value);
  /// The address of an object, as a constant.
  static expr make(const void* address);
  /// A constant node that lives as long as the program (shared, never freed).
  static expr_ref get(index_t value);
};

/// let sym0 = value0, sym1 = value1, ... in body. Later values may use earlier symbols.
class let : public expr_node<let, expr_node_type::let> {
public:
  /// The symbols and their values, in order.
  std::vector<std::pair<var, expr>> lets;
  /// The value of the let expression, evaluated with the symbols bound.
  expr body;
  /// The let node; body itself if lets is empty.
  static expr make(std::vector<std::pair<var, expr>> lets, expr body);
  /// let sym = value in body.
  static expr make(var sym, expr value, expr body) { return make({{sym, std::move(value)}}, std::move(body)); }
};

/// The base of the binary operator nodes.
class binary_op : public base_expr_node {
public:
  ///@{
  /// The operands.
  expr a, b;
  ///@}
  /// A node of the given kind.
  explicit binary_op(expr_node_type type) : base_expr_node(type) {}
};

/// The binary operators whose operands may be swapped: their make puts a constant operand on the
/// right.
constexpr bool is_commutative(expr_node_type t) {
  return t == expr_node_type::add || t == expr_node_type::mul || t == expr_node_type::min || t == expr_node_type::max ||
         t == expr_node_type::equal || t == expr_node_type::not_equal || t == expr_node_type::logical_and ||
         t == expr_node_type::logical_or;
}

/// The base of the node classes of the binary operators (see SLINKY_FOR_EACH_BINARY_NODE).
template <typename T, expr_node_type Type, bool Commutative = is_commutative(Type)>
class binary_node : public binary_op {
public:
  /// The kind of T (what as<T>() checks).
  static constexpr expr_node_type static_type = Type;
  /// Whether the operands may be swapped (is_commutative).
  static constexpr bool commutative = Commutative;
  /// A node of kind Type.
  binary_node() : binary_op(Type) {}
  /// Calls v->visit(this as a T).
  void accept(expr_visitor* v) const override;
};

/// Declares the node class of a binary operator (undefined after use).
#define SLINKY_DECLARE_BINARY(name)                                                                                    \
  /** The binary operator node name(a, b). Division and modulo are Euclidean, and x / 0 == x % 0 == 0. Comparisons     \
   * and logical operators give 0 or 1; logical operators treat non-zero as true. */                                   \
  class name : public binary_node<class name, expr_node_type::name> {                                                  \
  public:                                                                                                              \
    /** The node name(a, b) (a and b must be defined; a constant operand of a commutative operator goes to b). */      \
    static expr make(expr a, expr b);                                                                                  \
  };
SLINKY_FOR_EACH_BINARY_NODE(SLINKY_DECLARE_BINARY)
#undef SLINKY_DECLARE_BINARY

/// !a: 1 if a is 0, else 0.
class logical_not : public expr_node<logical_not, expr_node_type::logical_not> {
public:
  /// The operand.
  expr a;
  /// The node !a (a must be defined).
  static expr make(expr a);
};

/// select(condition, true_value, false_value); only the chosen value is evaluated.
class select : public expr_node<class select, expr_node_type::select> {
public:
  ///@{
  /// The condition (true when non-zero) and the two values.
  expr condition, true_value, false_value;
  ///@}
  /// The node (all three must be defined).
  static expr make(expr condition, expr true_value, expr false_value);
};

/// The node classes min, max and select share their names with the free functions that build
/// them (the function hides the class: name the class as `class min`). These aliases name them
/// without the elaborated specifier.
///@{
using minimum = class min;
using maximum = class max;
using conditional = class select;
///@}

class eval_context;

/// A call of an intrinsic, or (intrinsic::none) of a user function `target`, which must be
/// pure: it is evaluated with the call node (whose args it may evaluate in ctx) and its result
/// is the value of the call. Buffer arguments are variables holding buffers.
class call : public expr_node<call, expr_node_type::call> {
public:
  /// A user function.
  using callable = std::function<index_t(const call*, eval_context&)>;

  /// The intrinsic called, or intrinsic::none for target.
  slinky::intrinsic intrinsic = slinky::intrinsic::none;
  /// The user function (intrinsic::none).
  callable target;
  /// The arguments (some intrinsics allow undefined ones).
  std::vector<expr> args;

  /// The call node.
  ///@{
  static expr make(slinky::intrinsic i, callable target, std::vector<expr> args);
  static expr make(slinky::intrinsic i, std::vector<expr> args);
  static expr make(callable target, std::vector<expr> args);
  ///@}
};

/// Visits expression nodes. The default implementations visit the children.
class expr_visitor {
public:
  /// Virtual: visitors are used through this base.
  virtual ~expr_visitor() = default;
#define SLINKY_X(name) /** Visits op (of class name); by default, its children. */                                     \
  virtual void visit(const class name* op);
  SLINKY_FOR_EACH_EXPR_NODE(SLINKY_X)
#undef SLINKY_X
};

template <typename T, expr_node_type Type>
void expr_node<T, Type>::accept(expr_visitor* v) const {
  v->visit(static_cast<const T*>(this));
}
template <typename T, expr_node_type Type, bool Commutative>
void binary_node<T, Type, Commutative>::accept(expr_visitor* v) const {
  v->visit(static_cast<const T*>(this));
}

// Operators that build expressions. They fold operations on two constants (where that does not
// overflow); the node makes do not.
/// a + b, a - b, a * b, a / b and a % b: add, sub, mul, div and mod nodes, or a constant if both
/// are constants (and + - * do not overflow). Division and modulo are Euclidean, x / 0 == x % 0 == 0.
///@{
expr operator+(expr a, expr b);
expr operator-(expr a, expr b);
expr operator*(expr a, expr b);
expr operator/(expr a, expr b);
expr operator%(expr a, expr b);
///@}
/// Comparisons, 0 or 1: equal, not_equal, less and less_equal nodes, or a constant if both are
/// constants.
///@{
expr operator==(expr a, expr b);
expr operator!=(expr a, expr b);
expr operator<(expr a, expr b);
expr operator<=(expr a, expr b);
///@}
/// a > b and a >= b, written b < a and b <= a (there are no greater nodes).
///@{
expr operator>(expr a, expr b);
expr operator>=(expr a, expr b);
///@}
/// Logical and and or, 0 or 1 (non-zero operands are true): logical_and and logical_or nodes
/// (both operands are evaluated), or a constant if both are constants.
///@{
expr operator&&(expr a, expr b);
expr operator||(expr a, expr b);
///@}
/// Logical not: 1 if a is 0, else 0 (a logical_not node, or a constant if a is one).
expr operator!(expr a);
/// The min or max node of a and b, or a constant if both are constants.
///@{
expr min(expr a, expr b);
expr max(expr a, expr b);
///@}
/// The min or max of all of xs, folded from the left; undefined if xs is empty.
///@{
expr min(span<expr> xs);
expr max(span<expr> xs);
///@}
/// max(x, lo) then min(..., hi); an undefined lo or hi is no bound on that side.
expr clamp(expr x, expr lo, expr hi);
/// A select node; the chosen value itself if condition is a constant.
expr select(expr condition, expr true_value, expr false_value);
/// |x|: a call of intrinsic::abs, or a constant if x is one (but the smallest index_t).
expr abs(expr x);
/// The same as / and %: Euclidean.
///@{
expr euclidean_div(expr a, expr b);
expr euclidean_mod(expr a, expr b);
///@}
/// Short-circuiting && and || (the right side is evaluated only if needed): calls of
/// intrinsic::and_then and intrinsic::or_else, with two or any number of operands.
///@{
expr and_then(expr a, expr b);
expr or_else(expr a, expr b);
expr and_then(std::vector<expr> args);
expr or_else(std::vector<expr> args);
///@}
/// Rounds x down or up to a multiple of the positive a: (x / a) * a and ((x + a - 1) / a) * a.
///@{
expr align_down(expr x, expr a);
expr align_up(expr x, expr a);
///@}

/// +oo and -oo, the ends of unbounded intervals (calls of intrinsic::positive_infinity and
/// intrinsic::negative_infinity, one shared node each).
///@{
const expr& positive_infinity();
const expr& negative_infinity();
///@}
/// +oo for a positive sign, -oo for a negative one.
const expr& infinity(int sign = 1);
/// A value that is not known (a call of intrinsic::indeterminate; evaluates to 0).
const expr& indeterminate();
/// True if x is +oo, or -oo.
///@{
bool is_positive_infinity(expr_ref x);
bool is_negative_infinity(expr_ref x);
///@}
/// +1 for +oo, -1 for -oo, 0 otherwise.
int is_infinity(expr_ref x);
/// True if x is indeterminate().
bool is_indeterminate(expr_ref x);
/// A constant or a buffer_at call.
bool is_finite(expr_ref x);

// Helpers to inspect expressions.
/// The value of x if it is a constant node.
std::optional<index_t> as_constant(expr_ref x);
/// The symbol of a variable reading `field` (none: the symbol's value).
std::optional<var> as_variable(expr_ref x, buffer_field field = buffer_field::none);
/// True if x is a variable node of sym reading field (and dimension dim).
///@{
bool is_variable(expr_ref x, var sym, buffer_field field = buffer_field::none);
bool is_variable(expr_ref x, var buf, buffer_field field, int dim);
///@}
/// True if x is a constant node of the given value (0, 1).
///@{
bool is_constant(expr_ref x, index_t value);
inline bool is_zero(expr_ref x) { return is_constant(x, 0); }
inline bool is_one(expr_ref x) { return is_constant(x, 1); }
///@}
/// A non-zero constant, or the constant 0.
///@{
bool is_true(expr_ref x);
bool is_false(expr_ref x);
///@}
/// The call if x is a call of the intrinsic fn, else null.
const call* as_intrinsic(expr_ref x, intrinsic fn);
/// True if x is a call of the intrinsic fn.
inline bool is_intrinsic(expr_ref x, intrinsic fn) { return as_intrinsic(x, fn) != nullptr; }
/// Syntactic sign facts: constants, the matching infinity, and abs(...) (non-negative; positive
/// if its argument is positive).
///@{
bool is_positive(expr_ref x);
bool is_non_negative(expr_ref x);
bool is_negative(expr_ref x);
bool is_non_positive(expr_ref x);
///@}

/// Booleans: x != 0 as 0 or 1.
inline index_t boolean(index_t x) { return x != 0 ? 1 : 0; }
/// x itself if it already gives 0 or 1, else x != 0.
expr boolean(const expr& x);
/// True for the kinds whose nodes give 0 or 1: comparisons and logical operators.
constexpr bool is_boolean_node(expr_node_type t) {
  return t == expr_node_type::equal || t == expr_node_type::not_equal || t == expr_node_type::less ||
         t == expr_node_type::less_equal || t == expr_node_type::logical_and || t == expr_node_type::logical_or ||
         t == expr_node_type::logical_not;
}
/// A comparison or logical operator, or the constant 0 or 1.
bool is_boolean(expr_ref x);

// Buffer metadata as expressions of a buffer symbol.
/// The rank, element size or size in bytes of the buffer bound to buf (variable nodes).
///@{
expr buffer_rank(var buf);
expr buffer_elem_size(var buf);
expr buffer_size_bytes(var buf);
///@}
/// The min or max of dimension dim of the buffer bound to buf (variable nodes).
///@{
expr buffer_min(var buf, int dim);
expr buffer_max(var buf, int dim);
///@}
/// buffer_max(buf, dim) - buffer_min(buf, dim) + 1.
expr buffer_extent(var buf, int dim);
/// The stride or fold factor of dimension dim of the buffer bound to buf (variable nodes).
///@{
expr buffer_stride(var buf, int dim);
expr buffer_fold_factor(var buf, int dim);
///@}
/// A call of intrinsic::validate_buffer on buf.
expr validate_buffer(var buf);
/// A call of intrinsic::buffer_at: the address of the element of buf at the given indices
/// (missing ones are the mins), as an integer.
///@{
expr buffer_at(expr buf, span<const expr> at);
expr buffer_at(expr buf, span<const var> at);
expr buffer_at(expr buf);
template <typename... Args>
expr buffer_at(expr buf, expr i0, Args... is) {
  const expr at[] = {std::move(i0), expr(is)...};
  return buffer_at(std::move(buf), span<const expr>(at));
}
///@}

// Semaphore and task intrinsics (see intrinsic).
/// A call of intrinsic::semaphore_init.
expr semaphore_init(expr sem, expr count = expr());
/// A call of intrinsic::semaphore_signal, on one semaphore or on pairs (sems[i], counts[i]) (a
/// missing count is undefined: 1).
///@{
expr semaphore_signal(expr sem, expr count = expr());
expr semaphore_signal(span<const expr> sems, span<const expr> counts);
///@}
/// A call of intrinsic::semaphore_wait, on one semaphore or on pairs (sems[i], counts[i]) (a
/// missing count is undefined: 1).
///@{
expr semaphore_wait(expr sem, expr count = expr());
expr semaphore_wait(span<const expr> sems, span<const expr> counts);
///@}
/// A call of intrinsic::wait_for on one or several tasks.
///@{
expr wait_for(expr task);
expr wait_for(std::vector<expr> tasks);
///@}

}  // namespace slinky

// Intervals, boxes and symbolic dims of expressions, and the symbol-indexed map.
#include "slinky/runtime/interval_expr.h"  // IWYU pragma: export
#include "slinky/runtime/symbol_map.h"     // IWYU pragma: export

#endif  // SLINKY_RUNTIME_EXPR_H
