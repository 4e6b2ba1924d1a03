// Expressions of the slinky IR: symbols (node_context, var), immutable reference counted
// expression nodes of index_t value, the operators and helpers that build them, intervals,
// boxes and symbolic buffer dimensions.
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

// The binary operators (nodes with operands a and b, see binary_op), in the order of their kinds.
// Macros applied to it name a node class as `class name` (min and max are also functions).
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

#define SLINKY_FOR_EACH_EXPR_NODE(X)                                                                                   \
  X(variable)                                                                                                          \
  X(let)                                                                                                               \
  SLINKY_FOR_EACH_BINARY_NODE(X)                                                                                       \
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

class expr;
class node_context;

// A symbol: an id that is cheap to copy and compare. == and != compare ids, and so does <
// (so vars can be sorted and kept in std::set/std::map); the other operators convert to expr
// and build expressions. The default var is undefined.
class var {
public:
  using type = std::size_t;
  static constexpr type invalid = static_cast<type>(-1);

  type id = invalid;

  var() = default;
  explicit var(type id) : id(id) {}
  // A new symbol named `name` (or name#0, name#1, ... if the name is taken): two vars made with
  // the same name are two different symbols.
  var(node_context& ctx, const std::string& name);

  symbol_id sym() const { return id; }
  bool defined() const { return id != invalid; }

  expr operator-() const;
  bool operator==(const var& other) const { return id == other.id; }
  bool operator!=(const var& other) const { return id != other.id; }
  bool operator<(const var& other) const { return id < other.id; }
};

// Maps names to symbols and back. Names are unique within a context.
class node_context {
  std::vector<std::string> names_;
  std::map<std::string, symbol_id, std::less<>> ids_;

public:
  // The name of a symbol: "<>" for an undefined var, "<id>" for a symbol not from this context.
  std::string name(var v) const;
  std::string name(symbol_id id) const { return name(var(id)); }
  // The symbol with this name, made if it does not exist yet.
  var insert(const std::string& name);
  // A new symbol named prefix, or prefix#0, prefix#1, ... (the first that is free).
  var insert_unique(const std::string& prefix = "_");
  // The symbol with this name, if there is one.
  std::optional<var> lookup(const std::string& name) const;
  // The number of symbols made so far (symbol ids are below this).
  std::size_t size() const { return names_.size(); }
};

inline var::var(node_context& ctx, const std::string& name) : id(ctx.insert_unique(name).id) {}

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

// A non-owning reference to an expression node (or null): cheap to pass where the callee does
// not keep the node. Made implicitly from an expr or a node pointer.
class expr_ref {
  const base_expr_node* n_ = nullptr;

public:
  expr_ref() = default;
  expr_ref(const base_expr_node* n) : n_(n) {}
  expr_ref(const expr& e);

  bool defined() const { return n_ != nullptr; }
  const base_expr_node* get() const { return n_; }
  const base_expr_node* operator->() const { return n_; }
  expr_node_type type() const { return n_ ? n_->type : expr_node_type::none; }
  template <typename T>
  const T* as() const {
    return n_ ? n_->as<T>() : nullptr;
  }
  void accept(expr_visitor* v) const { n_->accept(v); }
  bool same_as(expr_ref other) const { return n_ == other.n_; }
};

// A reference counted handle to an immutable expression; undefined by default. The
// arithmetic and comparison operators on expr build IR: to compare two expressions
// structurally, use same_as or compare. Integers convert implicitly (bool as 0 or 1).
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
  expr(var v);
  expr(expr_ref e) : n_(e.get()) {}
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
  bool same_as(expr_ref other) const { return n_.get() == other.get(); }
  bool same_as(const base_expr_node* other) const { return n_.get() == other; }

  expr operator-() const;
  expr& operator+=(const expr& r);
  expr& operator-=(const expr& r);
  expr& operator*=(const expr& r);
  expr& operator/=(const expr& r);
  expr& operator%=(const expr& r);
};

inline expr_ref::expr_ref(const expr& e) : n_(e.get()) {}

// Structural comparison: 0 if equal, negative or positive to give a total order.
int compare(const expr& a, const expr& b);
// True if a and b are structurally identical (also if both are undefined).
bool match(const expr& a, const expr& b);

// The original's canonical order of commutative operands: true if the operands of a
// commutative operator of kinds (a, b) should be swapped (a > b, so constants go last).
inline bool should_commute(expr_node_type a, expr_node_type b) { return a > b; }
bool should_commute(const expr& a, const expr& b);

// Which piece of buffer metadata a variable node reads (buffer_field::none: the symbol's own
// value).
enum class buffer_field : unsigned {
  none = 0,
  rank,
  elem_size,
  size_bytes,
  min,
  max,
  stride,
  fold_factor,
};
const char* to_string(buffer_field f);

// Intrinsic functions of `call` expressions (intrinsic::none: a user function, see call).
enum class intrinsic {
  none,
  negative_infinity,
  positive_infinity,
  indeterminate,
  abs,
  // and_then(a, b, ...) and or_else(a, b, ...): && and || that evaluate their operands left to
  // right and stop as soon as the result is known.
  and_then,
  or_else,
  // buffer_at(b, i0, i1, ...): the address of an element, as an integer; missing (or undefined)
  // indices are the buffer's mins. 0 for a null buffer.
  buffer_at,
  // Semaphores for pipelined parallel loops: semaphore_init(s, count), and
  // semaphore_signal(s0, c0, s1, c1, ...) / semaphore_wait(s0, c0, ...) on pairs of a
  // semaphore and a count (an undefined count is 1).
  semaphore_init,
  semaphore_signal,
  semaphore_wait,
  // wait_for(t0, t1, ...): waits for the tasks started by async statements.
  wait_for,
  // trace_begin(name_address) -> token, trace_end(token).
  trace_begin,
  trace_end,
  // free(b): releases an allocation before the end of its scope.
  free,
  // validate_buffer(b): 1 if the element offsets of b fit in index_t and its memory does not
  // wrap around the address space (see validate_buffer(const raw_buffer&)).
  validate_buffer,
};

const char* to_string(intrinsic i);

// The expression node kinds. Each has a static `make` that checks its operands and, for
// commutative operators, puts a constant operand on the right. make never folds constants
// (the operators below do).
template <typename T, expr_node_type Type>
class expr_node : public base_expr_node {
public:
  static constexpr expr_node_type static_type = Type;
  expr_node() : base_expr_node(Type) {}
  void accept(expr_visitor* v) const override;
};

// A reference to a symbol's value, or (field != none) to a piece of metadata of the buffer
// bound to the symbol: buffer_min(b, d) is variable{b, buffer_field::min, d}.
class variable : public expr_node<variable, expr_node_type::variable> {
public:
  var sym;
  buffer_field field = buffer_field::none;
  // The dimension, for the per-dimension fields (min, max, stride, fold_factor); -1 otherwise.
  int dim = -1;

  static expr make(var sym);
  static expr make(var sym, buffer_field field, int dim = -1);
};

// An integer constant.
class constant : public expr_node<constant, expr_node_type::constant> {
public:
  index_t value;
  static expr make(index_t value);
  // The address of an object, as a constant.
  static expr make(const void* address);
  // A constant node that lives as long as the program (shared, never freed).
  static expr_ref get(index_t value);
};

// let sym0 = value0, sym1 = value1, ... in body. Later values may use earlier symbols.
class let : public expr_node<let, expr_node_type::let> {
public:
  std::vector<std::pair<var, expr>> lets;
  expr body;
  static expr make(std::vector<std::pair<var, expr>> lets, expr body);
  static expr make(var sym, expr value, expr body) { return make({{sym, std::move(value)}}, std::move(body)); }
};

// The base of the binary operator nodes.
class binary_op : public base_expr_node {
public:
  expr a, b;
  explicit binary_op(expr_node_type type) : base_expr_node(type) {}
};

// The binary operators whose operands may be swapped: their make puts a constant operand on the
// right.
constexpr bool is_commutative(expr_node_type t) {
  return t == expr_node_type::add || t == expr_node_type::mul || t == expr_node_type::min || t == expr_node_type::max ||
         t == expr_node_type::equal || t == expr_node_type::not_equal || t == expr_node_type::logical_and ||
         t == expr_node_type::logical_or;
}

template <typename T, expr_node_type Type, bool Commutative = is_commutative(Type)>
class binary_node : public binary_op {
public:
  static constexpr expr_node_type static_type = Type;
  static constexpr bool commutative = Commutative;
  binary_node() : binary_op(Type) {}
  void accept(expr_visitor* v) const override;
};

// Binary operators. Division and modulo are Euclidean, and x / 0 == x % 0 == 0. Comparisons
// and logical operators give 0 or 1; logical operators treat non-zero as true.
#define SLINKY_DECLARE_BINARY(name)                                                                                    \
  class name : public binary_node<class name, expr_node_type::name> {                                                  \
  public:                                                                                                              \
    static expr make(expr a, expr b);                                                                                  \
  };
SLINKY_FOR_EACH_BINARY_NODE(SLINKY_DECLARE_BINARY)
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

class eval_context;

// A call of an intrinsic, or (intrinsic::none) of a user function `target`, which must be
// pure: it is evaluated with the call node (whose args it may evaluate in ctx) and its result
// is the value of the call. Buffer arguments are variables holding buffers.
class call : public expr_node<call, expr_node_type::call> {
public:
  using callable = std::function<index_t(const call*, eval_context&)>;

  slinky::intrinsic intrinsic = slinky::intrinsic::none;
  callable target;
  std::vector<expr> args;

  static expr make(slinky::intrinsic i, callable target, std::vector<expr> args);
  static expr make(slinky::intrinsic i, std::vector<expr> args);
  static expr make(callable target, std::vector<expr> args);
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
template <typename T, expr_node_type Type, bool Commutative>
void binary_node<T, Type, Commutative>::accept(expr_visitor* v) const {
  v->visit(static_cast<const T*>(this));
}

// Operators that build expressions. They fold operations on two constants (where that does not
// overflow); the node makes do not.
expr operator+(expr a, expr b);
expr operator-(expr a, expr b);
expr operator*(expr a, expr b);
expr operator/(expr a, expr b);
expr operator%(expr a, expr b);
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
// The min or max of all of xs, folded from the left; undefined if xs is empty.
expr min(span<expr> xs);
expr max(span<expr> xs);
// max(x, lo) then min(..., hi); an undefined lo or hi is no bound on that side.
expr clamp(expr x, expr lo, expr hi);
expr select(expr condition, expr true_value, expr false_value);
expr abs(expr x);
// The same as / and %: Euclidean.
expr euclidean_div(expr a, expr b);
expr euclidean_mod(expr a, expr b);
// Short-circuiting && and || (the right side is evaluated only if needed).
expr and_then(expr a, expr b);
expr or_else(expr a, expr b);
expr and_then(std::vector<expr> args);
expr or_else(std::vector<expr> args);
// Rounds x down or up to a multiple of the positive a: (x / a) * a and ((x + a - 1) / a) * a.
expr align_down(expr x, expr a);
expr align_up(expr x, expr a);

const expr& positive_infinity();
const expr& negative_infinity();
// +oo for a positive sign, -oo for a negative one.
const expr& infinity(int sign = 1);
const expr& indeterminate();
bool is_positive_infinity(expr_ref x);
bool is_negative_infinity(expr_ref x);
// +1 for +oo, -1 for -oo, 0 otherwise.
int is_infinity(expr_ref x);
bool is_indeterminate(expr_ref x);
// A constant or a buffer_at call.
bool is_finite(expr_ref x);

// Helpers to inspect expressions.
std::optional<index_t> as_constant(expr_ref x);
// The symbol of a variable reading `field` (none: the symbol's value).
std::optional<var> as_variable(expr_ref x, buffer_field field = buffer_field::none);
bool is_variable(expr_ref x, var sym, buffer_field field = buffer_field::none);
bool is_variable(expr_ref x, var buf, buffer_field field, int dim);
bool is_constant(expr_ref x, index_t value);
inline bool is_zero(expr_ref x) { return is_constant(x, 0); }
inline bool is_one(expr_ref x) { return is_constant(x, 1); }
// A non-zero constant, or the constant 0.
bool is_true(expr_ref x);
bool is_false(expr_ref x);
// The call if x is a call of the intrinsic fn, else null.
const call* as_intrinsic(expr_ref x, intrinsic fn);
inline bool is_intrinsic(expr_ref x, intrinsic fn) { return as_intrinsic(x, fn) != nullptr; }
// Syntactic sign facts: constants, the matching infinity, and abs(...) (non-negative; positive
// if its argument is positive).
bool is_positive(expr_ref x);
bool is_non_negative(expr_ref x);
bool is_negative(expr_ref x);
bool is_non_positive(expr_ref x);

// Booleans: x != 0 as 0 or 1.
inline index_t boolean(index_t x) { return x != 0 ? 1 : 0; }
// x itself if it already gives 0 or 1, else x != 0.
expr boolean(const expr& x);
constexpr bool is_boolean_node(expr_node_type t) {
  return t == expr_node_type::equal || t == expr_node_type::not_equal || t == expr_node_type::less ||
         t == expr_node_type::less_equal || t == expr_node_type::logical_and || t == expr_node_type::logical_or ||
         t == expr_node_type::logical_not;
}
// A comparison or logical operator, or the constant 0 or 1.
bool is_boolean(expr_ref x);

// Buffer metadata as expressions of a buffer symbol.
expr buffer_rank(var buf);
expr buffer_elem_size(var buf);
expr buffer_size_bytes(var buf);
expr buffer_min(var buf, int dim);
expr buffer_max(var buf, int dim);
expr buffer_extent(var buf, int dim);
expr buffer_stride(var buf, int dim);
expr buffer_fold_factor(var buf, int dim);
expr validate_buffer(var buf);
expr buffer_at(expr buf, span<const expr> at);
expr buffer_at(expr buf, span<const var> at);
expr buffer_at(expr buf);
template <typename... Args>
expr buffer_at(expr buf, expr i0, Args... is) {
  const expr at[] = {std::move(i0), expr(is)...};
  return buffer_at(std::move(buf), span<const expr>(at));
}

// Semaphore and task intrinsics (see intrinsic).
expr semaphore_init(expr sem, expr count = expr());
expr semaphore_signal(expr sem, expr count = expr());
expr semaphore_signal(span<const expr> sems, span<const expr> counts);
expr semaphore_wait(expr sem, expr count = expr());
expr semaphore_wait(span<const expr> sems, span<const expr> counts);
expr wait_for(expr task);
expr wait_for(std::vector<expr> tasks);

// An inclusive interval [min, max] of expressions. It is empty if max < min. An undefined end
// means unbounded on that side.
class interval_expr {
public:
  expr min, max;

  interval_expr() = default;
  explicit interval_expr(expr point) : min(point), max(std::move(point)) {}
  interval_expr(expr min, expr max) : min(std::move(min)), max(std::move(max)) {}

  // [-oo, oo] and [oo, -oo].
  static const interval_expr& all();
  static const interval_expr& none();
  static const interval_expr& union_identity() { return none(); }
  static const interval_expr& intersection_identity() { return all(); }

  // A point: both ends are the same node (and defined).
  bool is_point() const { return min.defined() && min.same_as(max); }
  // Both ends are x.
  bool is_point(expr_ref x) const { return min.same_as(x) && max.same_as(x); }
  // min if this is a point, else null.
  expr_ref as_point() const { return is_point() ? expr_ref(min) : expr_ref(); }
  bool same_as(const interval_expr& other) const { return min.same_as(other.min) && max.same_as(other.max); }

  expr extent() const;
  const expr& begin() const { return min; }
  expr end() const;
  // The interval is empty (as an expression).
  expr empty() const;
  // min <= x && x <= max, dropping an undefined side (1 if both are undefined).
  expr contains(expr_ref x) const;

  interval_expr& set_extent(expr extent);

  interval_expr& operator|=(const interval_expr& r);
  interval_expr& operator&=(const interval_expr& r);
  interval_expr& operator+=(const expr& r);
  interval_expr& operator-=(const expr& r);
  interval_expr& operator*=(const expr& r);
  interval_expr& operator/=(const expr& r);
};

// Union (the smallest interval containing both; an unbounded side of either stays unbounded)
// and intersection (an unbounded side takes the other's).
interval_expr operator|(interval_expr a, const interval_expr& b);
interval_expr operator&(interval_expr a, const interval_expr& b);
// Shifts by an expression (undefined ends stay undefined; points stay points).
interval_expr operator+(interval_expr a, const expr& b);
interval_expr operator-(interval_expr a, const expr& b);
interval_expr operator+(const expr& a, interval_expr b);
interval_expr operator-(const expr& a, const interval_expr& b);
// Scales by an expression: an interval containing x * b (or x / b, Euclidean) for every x in a.
// The ends are swapped when b is provably negative; when the sign of b is unknown, the result
// is the hull of both orders.
interval_expr operator*(interval_expr a, const expr& b);
interval_expr operator*(const expr& a, interval_expr b);
interval_expr operator/(interval_expr a, const expr& b);
interval_expr operator-(const interval_expr& a);
// select(c, t, f) per end (a point if both are points).
interval_expr select(const expr& c, interval_expr t, interval_expr f);
// The smallest interval of whole multiples of a containing x: [align_down(min, a),
// align_up(max + 1, a) - 1].
interval_expr align(interval_expr x, const expr& a);

inline interval_expr point(expr x) { return interval_expr(std::move(x)); }
inline interval_expr bounds(expr min, expr max) { return interval_expr(std::move(min), std::move(max)); }
interval_expr min_extent(const expr& min, const expr& extent);
interval_expr range(const expr& begin, const expr& end);
interval_expr buffer_bounds(var buf, int dim);
// x clamped to [b.min, b.max] (undefined ends do not clamp).
expr clamp(expr x, const interval_expr& b);

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

  dim_expr() = default;
  dim_expr(interval_expr bounds, expr stride = expr(), expr fold_factor = expr())
      : bounds(std::move(bounds)), stride(std::move(stride)), fold_factor(std::move(fold_factor)) {}
  // The constants of a runtime dim (so `b->dim(k) = dim::broadcast();` works).
  dim_expr(const slinky::dim& d);

  const expr& min() const { return bounds.min; }
  const expr& max() const { return bounds.max; }
  expr extent() const { return bounds.extent(); }
  // The expression of a per-dimension field (min, max, stride or fold_factor).
  const expr& get_field(buffer_field field) const;
  // min == 0 && max == 0 && stride == 0, as an expression.
  expr is_broadcast() const;
  bool same_as(const dim_expr& other) const {
    return bounds.same_as(other.bounds) && stride.same_as(other.stride) && fold_factor.same_as(other.fold_factor);
  }
};

dim_expr buffer_dim(var buf, int dim);
std::vector<dim_expr> buffer_dims(var buf, int rank);
// The dims of a runtime buffer, as constants.
std::vector<dim_expr> buffer_dims(const raw_buffer& buf);
box_expr dims_bounds(span<const dim_expr> dims);

// symbol_map<T>: an environment mapping symbols to optional values of T, stored as a vector
// indexed by symbol id, with RAII scoped bindings. Lookups of symbols never set give an empty
// optional; the non-const operator[] grows the map as needed.
template <typename T>
class scoped_value_in_symbol_map;

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
  symbol_map() = default;
  explicit symbol_map(std::size_t reserve) { values_.reserve(reserve); }
  symbol_map(std::initializer_list<std::pair<var, T>> init) {
    for (const auto& i : init) set(i.first, i.second);
  }

  // The slot of a symbol (made empty if it did not exist).
  std::optional<T>& operator[](var v) {
    grow(v.id);
    return values_[v.id];
  }
  std::optional<T>& operator[](std::size_t id) {
    grow(id);
    return values_[id];
  }
  std::optional<T> operator[](var v) const { return lookup(v); }
  std::optional<T> operator[](std::size_t id) const { return id < values_.size() ? values_[id] : std::nullopt; }

  // The value of a symbol (an empty optional if it has none).
  const std::optional<T>& lookup(var v) const { return lookup(v.id); }
  const std::optional<T>& lookup(std::size_t id) const {
    static const std::optional<T> none;
    return id < values_.size() ? values_[id] : none;
  }
  const T& lookup(var v, const T& def) const {
    const std::optional<T>& r = lookup(v);
    return r ? *r : def;
  }
  // A pointer to the value of a symbol, or null if it has none.
  const T* find(var v) const {
    const std::optional<T>& r = lookup(v);
    return r ? &*r : nullptr;
  }

  bool contains(var v) const { return lookup(v).has_value(); }
  void set(var v, std::optional<T> value) { (*this)[v] = std::move(value); }
  void erase(var v) {
    if (v.id < values_.size()) values_[v.id] = std::nullopt;
  }

  // The number of slots (one more than the largest symbol id ever set), for iteration by id.
  std::size_t size() const { return values_.size(); }
  void reserve(std::size_t n) { values_.reserve(n); }
  void clear() { values_.clear(); }

  // Iterate over the slots (std::optional<T>), in symbol id order.
  auto begin() { return values_.begin(); }
  auto end() { return values_.end(); }
  auto begin() const { return values_.begin(); }
  auto end() const { return values_.end(); }

  // Binds a symbol for the lifetime of the returned object (see scoped_value_in_symbol_map).
  using scoped_value = scoped_value_in_symbol_map<T>;

  // Shorthand for constructing a scoped_value.
  scoped_value bind(var v, std::optional<T> value) { return scoped_value(*this, v, std::move(value)); }
};

// Binds (or unbinds, with an empty optional) a symbol for the lifetime of this object, then
// restores the previous value. Scoped values binding the same symbol must be destroyed in the
// reverse order of their construction, as stack objects are.
template <typename T>
class scoped_value_in_symbol_map {
  symbol_map<T>* map_ = nullptr;
  var sym_;
  std::optional<T> old_;

public:
  scoped_value_in_symbol_map() = default;
  // Saves the current value and leaves it in place.
  scoped_value_in_symbol_map(symbol_map<T>& map, var v) : map_(&map), sym_(v), old_(map.lookup(v)) {}
  scoped_value_in_symbol_map(symbol_map<T>& map, var v, std::optional<T> value) : map_(&map), sym_(v) {
    std::optional<T>& slot = map[v];
    old_ = std::move(slot);
    slot = std::move(value);
  }
  scoped_value_in_symbol_map(symbol_map<T>& map, var v, T value)
      : scoped_value_in_symbol_map(map, v, std::optional<T>(std::move(value))) {}
  scoped_value_in_symbol_map(scoped_value_in_symbol_map&& other) noexcept
      : map_(other.map_), sym_(other.sym_), old_(std::move(other.old_)) {
    other.map_ = nullptr;
  }
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
  scoped_value_in_symbol_map(const scoped_value_in_symbol_map&) = delete;
  scoped_value_in_symbol_map& operator=(const scoped_value_in_symbol_map&) = delete;
  ~scoped_value_in_symbol_map() { exit_scope(); }

  var sym() const { return sym_; }
  const std::optional<T>& old_value() const { return old_; }
  // Restores the old value now (the destructor then does nothing).
  void exit_scope() {
    if (map_) (*map_)[sym_] = std::move(old_);
    map_ = nullptr;
  }
};

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

}  // namespace slinky

#endif  // SLINKY_RUNTIME_EXPR_H
