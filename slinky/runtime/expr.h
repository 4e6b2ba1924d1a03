/// \file
/// Expressions of the slinky IR: symbols (node_context, var), immutable reference counted
/// expression nodes of index_t value, the operators and helpers that build them, intervals,
/// boxes and symbolic buffer dimensions.
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

/// An inclusive interval [min, max] of expressions. It is empty if max < min. An undefined end
/// means unbounded on that side.
class interval_expr {
public:
  ///@{
  /// The ends (inclusive); undefined is unbounded.
  expr min, max;
  ///@}

  /// Both ends undefined (unbounded).
  interval_expr() = default;
  /// The point [point, point] (both ends the same node).
  explicit interval_expr(expr point) : min(point), max(std::move(point)) {}
  /// [min, max].
  interval_expr(expr min, expr max) : min(std::move(min)), max(std::move(max)) {}

  /// [-oo, oo] and [oo, -oo].
  ///@{
  static const interval_expr& all();
  static const interval_expr& none();
  ///@}
  /// none(): x | none() is x.
  static const interval_expr& union_identity() { return none(); }
  /// all(): x & all() is x.
  static const interval_expr& intersection_identity() { return all(); }

  /// A point: both ends are the same node (and defined).
  bool is_point() const { return min.defined() && min.same_as(max); }
  /// Both ends are x.
  bool is_point(expr_ref x) const { return min.same_as(x) && max.same_as(x); }
  /// min if this is a point, else null.
  expr_ref as_point() const { return is_point() ? expr_ref(min) : expr_ref(); }
  /// True if both ends are the same nodes as other's.
  bool same_as(const interval_expr& other) const { return min.same_as(other.min) && max.same_as(other.max); }

  /// max - min + 1 (1 for a point).
  expr extent() const;
  /// min.
  const expr& begin() const { return min; }
  /// max + 1.
  expr end() const;
  /// The interval is empty (as an expression).
  expr empty() const;
  /// min <= x && x <= max, dropping an undefined side (1 if both are undefined).
  expr contains(expr_ref x) const;

  /// Sets max to min + extent - 1.
  interval_expr& set_extent(expr extent);

  /// *this = *this | r, *this & r, *this + r, ... (the operators below).
  ///@{
  interval_expr& operator|=(const interval_expr& r);
  interval_expr& operator&=(const interval_expr& r);
  interval_expr& operator+=(const expr& r);
  interval_expr& operator-=(const expr& r);
  interval_expr& operator*=(const expr& r);
  interval_expr& operator/=(const expr& r);
  ///@}
};

/// Union (the smallest interval containing both; an unbounded side of either stays unbounded)
/// and intersection (an unbounded side takes the other's).
///@{
interval_expr operator|(interval_expr a, const interval_expr& b);
interval_expr operator&(interval_expr a, const interval_expr& b);
///@}
/// Shifts by an expression (undefined ends stay undefined; points stay points).
///@{
interval_expr operator+(interval_expr a, const expr& b);
interval_expr operator-(interval_expr a, const expr& b);
interval_expr operator+(const expr& a, interval_expr b);
interval_expr operator-(const expr& a, const interval_expr& b);
///@}
/// Scales by an expression: an interval containing x * b (or x / b, Euclidean) for every x in a.
/// The ends are swapped when b is provably negative; when the sign of b is unknown, the result
/// is the hull of both orders.
///@{
interval_expr operator*(interval_expr a, const expr& b);
interval_expr operator*(const expr& a, interval_expr b);
interval_expr operator/(interval_expr a, const expr& b);
///@}
/// [-max, -min] (undefined ends stay undefined; a point stays a point).
interval_expr operator-(const interval_expr& a);
/// select(c, t, f) per end (a point if both are points).
interval_expr select(const expr& c, interval_expr t, interval_expr f);
/// The smallest interval of whole multiples of a containing x: [align_down(min, a),
/// align_up(max + 1, a) - 1].
interval_expr align(interval_expr x, const expr& a);

/// The point [x, x].
inline interval_expr point(expr x) { return interval_expr(std::move(x)); }
/// [min, max].
inline interval_expr bounds(expr min, expr max) { return interval_expr(std::move(min), std::move(max)); }
/// [min, min + extent - 1].
interval_expr min_extent(const expr& min, const expr& extent);
/// [begin, end - 1].
interval_expr range(const expr& begin, const expr& end);
/// [buffer_min(buf, dim), buffer_max(buf, dim)].
interval_expr buffer_bounds(var buf, int dim);
/// x clamped to [b.min, b.max] (undefined ends do not clamp).
expr clamp(expr x, const interval_expr& b);

/// One interval per dimension.
using box_expr = std::vector<interval_expr>;
/// Union and intersection per dimension; a box with fewer dims is all() in the dims it lacks.
///@{
box_expr operator|(box_expr a, const box_expr& b);
box_expr operator&(box_expr a, const box_expr& b);
///@}

/// The symbolic description of one dimension of a buffer.
class dim_expr {
public:
  /// The range of coordinates.
  interval_expr bounds;
  /// The stride in bytes (undefined: not constrained).
  expr stride;
  /// The fold factor (undefined: not constrained).
  expr fold_factor;

  /// Everything undefined.
  dim_expr() = default;
  /// The given bounds, stride and fold factor.
  dim_expr(interval_expr bounds, expr stride = expr(), expr fold_factor = expr())
      : bounds(std::move(bounds)), stride(std::move(stride)), fold_factor(std::move(fold_factor)) {}
  /// The constants of a runtime dim (so `b->dim(k) = dim::broadcast();` works).
  dim_expr(const slinky::dim& d);

  /// bounds.min.
  const expr& min() const { return bounds.min; }
  /// bounds.max.
  const expr& max() const { return bounds.max; }
  /// bounds.extent().
  expr extent() const { return bounds.extent(); }
  /// The expression of a per-dimension field (min, max, stride or fold_factor); undefined for
  /// the other fields.
  const expr& get_field(buffer_field field) const;
  /// min == 0 && max == 0 && stride == 0, as an expression.
  expr is_broadcast() const;
  /// True if the bounds, stride and fold factor are the same nodes as other's.
  bool same_as(const dim_expr& other) const {
    return bounds.same_as(other.bounds) && stride.same_as(other.stride) && fold_factor.same_as(other.fold_factor);
  }
};

/// The bounds, stride and fold factor of dimension dim of the buffer bound to buf, as
/// expressions (buffer_bounds, buffer_stride, buffer_fold_factor).
dim_expr buffer_dim(var buf, int dim);
/// buffer_dim(buf, d) for d in [0, rank).
std::vector<dim_expr> buffer_dims(var buf, int rank);
/// The dims of a runtime buffer, as constants.
std::vector<dim_expr> buffer_dims(const raw_buffer& buf);
/// The bounds of each of dims.
box_expr dims_bounds(span<const dim_expr> dims);

template <typename T>
class scoped_value_in_symbol_map;

/// symbol_map<T>: an environment mapping symbols to optional values of T, stored as a vector
/// indexed by symbol id, with RAII scoped bindings. Lookups of symbols never set give an empty
/// optional; the non-const operator[] grows the map as needed.
template <typename T>
class symbol_map {
  std::vector<std::optional<T>> values_;

  // Out of line: inlined, the resize makes GCC warn (-Wstringop-overflow, a false positive) where
  // a client writes a slot of a new map.
  SLINKY_NO_INLINE void grow_to(std::size_t id) { values_.resize(id + 1); }
  void grow(std::size_t id) {
    if (id >= values_.size()) grow_to(id);
  }

public:
  /// An empty map.
  symbol_map() = default;
  /// An empty map with room for `reserve` symbols.
  explicit symbol_map(std::size_t reserve) { values_.reserve(reserve); }
  /// A map with the given values.
  symbol_map(std::initializer_list<std::pair<var, T>> init) {
    for (const auto& i : init) set(i.first, i.second);
  }

  /// The slot of a symbol (made empty if it did not exist).
  ///@{
  std::optional<T>& operator[](var v) {
    grow(v.id);
    return values_[v.id];
  }
  std::optional<T>& operator[](std::size_t id) {
    grow(id);
    return values_[id];
  }
  ///@}
  /// The value of a symbol (an empty optional if it has none).
  ///@{
  std::optional<T> operator[](var v) const { return lookup(v); }
  std::optional<T> operator[](std::size_t id) const { return id < values_.size() ? values_[id] : std::nullopt; }
  ///@}

  /// The value of a symbol (an empty optional if it has none).
  ///@{
  const std::optional<T>& lookup(var v) const { return lookup(v.id); }
  const std::optional<T>& lookup(std::size_t id) const {
    static const std::optional<T> none;
    return id < values_.size() ? values_[id] : none;
  }
  ///@}
  /// The value of a symbol, or def if it has none.
  const T& lookup(var v, const T& def) const {
    const std::optional<T>& r = lookup(v);
    return r ? *r : def;
  }
  /// A pointer to the value of a symbol, or null if it has none.
  const T* find(var v) const {
    const std::optional<T>& r = lookup(v);
    return r ? &*r : nullptr;
  }

  /// True if the symbol has a value.
  bool contains(var v) const { return lookup(v).has_value(); }
  /// Sets (or, with an empty optional, removes) the value of a symbol.
  void set(var v, std::optional<T> value) { (*this)[v] = std::move(value); }
  /// Removes the value of a symbol.
  void erase(var v) {
    if (v.id < values_.size()) values_[v.id] = std::nullopt;
  }

  /// The number of slots (one more than the largest symbol id ever set), for iteration by id.
  std::size_t size() const { return values_.size(); }
  /// Makes room for n slots.
  void reserve(std::size_t n) { values_.reserve(n); }
  /// Removes every value (and slot).
  void clear() { values_.clear(); }

  /// Iterate over the slots (std::optional<T>), in symbol id order.
  ///@{
  auto begin() { return values_.begin(); }
  auto end() { return values_.end(); }
  auto begin() const { return values_.begin(); }
  auto end() const { return values_.end(); }
  ///@}

  /// Binds a symbol for the lifetime of the returned object (see scoped_value_in_symbol_map).
  using scoped_value = scoped_value_in_symbol_map<T>;

  /// Shorthand for constructing a scoped_value.
  scoped_value bind(var v, std::optional<T> value) { return scoped_value(*this, v, std::move(value)); }
};

/// Binds (or unbinds, with an empty optional) a symbol for the lifetime of this object, then
/// restores the previous value. Scoped values binding the same symbol must be destroyed in the
/// reverse order of their construction, as stack objects are.
template <typename T>
class scoped_value_in_symbol_map {
  symbol_map<T>* map_ = nullptr;
  var sym_;
  std::optional<T> old_;

public:
  /// Binds nothing.
  scoped_value_in_symbol_map() = default;
  /// Saves the current value and leaves it in place.
  scoped_value_in_symbol_map(symbol_map<T>& map, var v) : map_(&map), sym_(v), old_(map.lookup(v)) {}
  /// Saves the current value of v and sets it to value.
  ///@{
  scoped_value_in_symbol_map(symbol_map<T>& map, var v, std::optional<T> value) : map_(&map), sym_(v) {
    std::optional<T>& slot = map[v];
    old_ = std::move(slot);
    slot = std::move(value);
  }
  scoped_value_in_symbol_map(symbol_map<T>& map, var v, T value)
      : scoped_value_in_symbol_map(map, v, std::optional<T>(std::move(value))) {}
  ///@}
  /// Takes over other's binding (other then restores nothing).
  scoped_value_in_symbol_map(scoped_value_in_symbol_map&& other) noexcept
      : map_(other.map_), sym_(other.sym_), old_(std::move(other.old_)) {
    other.map_ = nullptr;
  }
  /// Restores this binding's old value, then takes over other's binding.
  scoped_value_in_symbol_map& operator=(scoped_value_in_symbol_map&& other) noexcept {
    if (this != &other) {
      exit_scope();
      map_ = other.map_;
      sym_ = other.sym_;
      old_ = std::move(other.old_);
      other.map_ = nullptr;
    }
    return *this;
  }
  /// Not copyable.
  scoped_value_in_symbol_map(const scoped_value_in_symbol_map&) = delete;
  /// Not copyable.
  scoped_value_in_symbol_map& operator=(const scoped_value_in_symbol_map&) = delete;
  /// Restores the old value (exit_scope).
  ~scoped_value_in_symbol_map() { exit_scope(); }

  /// The symbol bound.
  var sym() const { return sym_; }
  /// The value the symbol had before.
  const std::optional<T>& old_value() const { return old_; }
  /// Restores the old value now (the destructor then does nothing).
  void exit_scope() {
    if (map_) (*map_)[sym_] = std::move(old_);
    map_ = nullptr;
  }
};

/// Binds v to value (or unbinds it, with nullopt) in map for the lifetime of the returned object.
///@{
template <typename T>
typename symbol_map<T>::scoped_value set_value_in_scope(symbol_map<T>& map, var v, T value) {
  return typename symbol_map<T>::scoped_value(map, v, std::optional<T>(std::move(value)));
}
template <typename T>
typename symbol_map<T>::scoped_value set_value_in_scope(symbol_map<T>& map, var v, std::optional<T> value) {
  return typename symbol_map<T>::scoped_value(map, v, std::move(value));
}
template <typename T>
typename symbol_map<T>::scoped_value set_value_in_scope(symbol_map<T>& map, var v, std::nullopt_t) {
  return typename symbol_map<T>::scoped_value(map, v, std::optional<T>());
}
///@}

}  // namespace slinky

#endif  // SLINKY_RUNTIME_EXPR_H
