/// \file
/// Statements of the slinky IR: calls of user callbacks, copies, and the structure around them
/// (blocks, loops, allocations, buffer crops and slices, checks). Nodes are immutable and
/// reference counted; a statement that declares a symbol (let_stmt, loop, allocate, crop_*, ...)
/// binds it only within its body, shadowing any outer value of the same symbol.
#ifndef SLINKY_RUNTIME_STMT_H
#define SLINKY_RUNTIME_STMT_H

#include <climits>
#include <functional>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "slinky/runtime/buffer.h"
#include "slinky/runtime/expr.h"

namespace slinky {

class eval_context;
class stmt_visitor;

/// The base of all statement nodes.
class base_stmt_node : public ref_counted<base_stmt_node> {
public:
  /// The kind of the node.
  const stmt_node_type type;

  /// A node of the given kind.
  explicit base_stmt_node(stmt_node_type type) : type(type) {}
  /// Virtual: nodes are destroyed through this base.
  virtual ~base_stmt_node() = default;
  /// Calls v->visit with this node as its own class.
  virtual void accept(stmt_visitor* v) const = 0;

  /// This node as a T if it is one (its kind is T::static_type), else null.
  template <typename T>
  const T* as() const {
    return type == T::static_type ? static_cast<const T*>(this) : nullptr;
  }
  /// Deletes p (what ref_counted calls when the last reference goes).
  static void destroy(base_stmt_node* p) { delete p; }
};

/// A non-owning reference to a statement node (or null), made implicitly from a stmt or a node
/// pointer.
class stmt_ref {
  const base_stmt_node* n_ = nullptr;

public:
  /// A null reference.
  stmt_ref() = default;
  /// A reference to n (which must outlive it).
  stmt_ref(const base_stmt_node* n) : n_(n) {}
  /// A reference to s's node (s must outlive it).
  stmt_ref(const class stmt& s);

  /// True if not null.
  bool defined() const { return n_ != nullptr; }
  /// The node, or null.
  const base_stmt_node* get() const { return n_; }
  /// The node's members (must not be null).
  const base_stmt_node* operator->() const { return n_; }
  /// The kind of the node; stmt_node_type::none if null.
  stmt_node_type type() const { return n_ ? n_->type : stmt_node_type::none; }
  /// The node as a T if it is one, else null (also if this reference is null).
  template <typename T>
  const T* as() const {
    return n_ ? n_->as<T>() : nullptr;
  }
  /// Calls v->visit with the node; nothing if null (a visitor walks past undefined operands).
  void accept(stmt_visitor* v) const {
    if (n_) n_->accept(v);
  }
  /// True if both refer to the same node (or both are null).
  bool same_as(stmt_ref other) const { return n_ == other.n_; }
};

/// A reference counted handle to an immutable statement; undefined by default.
class stmt {
  ref_count<const base_stmt_node> n_;

public:
  /// An undefined statement.
  stmt() = default;
  /// A new reference to s's node.
  stmt(stmt_ref s) : n_(s.get()) {}
  /// A reference to the node n (adding one to its count).
  explicit stmt(const base_stmt_node* n) : n_(n) {}

  /// True if the statement has a node.
  bool defined() const { return n_.defined(); }
  /// The node, or null.
  const base_stmt_node* get() const { return n_.get(); }
  /// The node's members (must be defined).
  const base_stmt_node* operator->() const { return n_.get(); }
  /// The kind of the node; stmt_node_type::none if undefined.
  stmt_node_type type() const { return n_ ? n_->type : stmt_node_type::none; }
  /// The node as a T if it is one, else null (also if undefined).
  template <typename T>
  const T* as() const {
    return n_ ? n_->as<T>() : nullptr;
  }
  /// Calls v->visit with the node; nothing if undefined (a visitor walks past undefined operands).
  void accept(stmt_visitor* v) const {
    if (n_) n_->accept(v);
  }
  /// True if both refer to the same node (or both are undefined).
  ///@{
  bool same_as(const stmt& other) const { return n_.get() == other.n_.get(); }
  bool same_as(stmt_ref other) const { return n_.get() == other.get(); }
  bool same_as(const base_stmt_node* other) const { return n_.get() == other; }
  ///@}
};

// Hidden from doxygen, which does not match this definition to its declaration.
/// \cond
inline stmt_ref::stmt_ref(const stmt& s) : n_(s.get()) {}
/// \endcond

/// The base of the statement node classes: T is the node class, Type its kind.
template <typename T, stmt_node_type Type>
class stmt_node : public base_stmt_node {
public:
  /// The kind of T (what as<T>() checks).
  static constexpr stmt_node_type static_type = Type;
  /// A node of kind Type.
  stmt_node() : base_stmt_node(Type) {}
  /// Calls v->visit(this as a T).
  void accept(stmt_visitor* v) const override;
};

/// Where an allocation's memory comes from. `automatic` uses the stack for allocations up to
/// eval_config::auto_stack_threshold bytes and the heap (through the allocate hook) otherwise.
enum class memory_type {
  automatic,  ///< The stack if small enough, else the heap.
  stack,      ///< The stack of the evaluating thread.
  heap,       ///< The heap, through eval_config::allocate and eval_config::free.
};
/// The name of a memory type, for messages.
const char* to_string(memory_type m);

/// A list of symbols (the buffers of a call_stmt).
using symbol_list = std::vector<var>;

/// Attributes of a call_stmt (call_stmt::attributes), fields in this order so designated
/// initializers work.
struct call_attributes {
  /// Bit (o * num_inputs + i) allows input i and output o to share memory.
  std::uint64_t allow_in_place = 0;
  /// Dimensions of rank below this must not be removed (fused, sliced) from the buffers passed
  /// to the callback.
  int min_rank = std::numeric_limits<int>::max();
  /// A name for printing and tracing. "memcpy" promises a flat byte copy of equal-sized input
  /// and output.
  std::string name;
};

/// \cond
namespace internal {

// An entry point of a callback that takes the call's buffers directly, inputs then outputs:
// fn(callable.get(), buffers) does what the call_stmt's `target` does with the buffers bound to
// its inputs and outputs. func::make's typed wrappers have one beside their std::function (which
// stays, for the tree interpreter and for clients), so that the executable form calls them
// without the std::function's hop and without looking the buffers up in the eval_context (such a
// callback never sees the context). A call_stmt a client makes by hand has none.
struct call_entry {
  index_t (*fn)(const void* callable, const raw_buffer* const* buffers) = nullptr;
  // What fn calls, kept alive with every call_stmt that has this entry.
  std::shared_ptr<const void> callable;
  // True if the callback takes every buffer as a const view (`const buffer<T, N>&`, `const
  // raw_buffer&`, `const raw_buffer*`): it cannot change a descriptor it is given, which lets the
  // executable form refresh a loop's crops instead of rebuilding them (docs/runtime.md).
  bool const_views = false;

  bool defined() const { return fn != nullptr; }
};

}  // namespace internal
/// \endcond

/// Calls a user callback with the buffers bound to `inputs` and `outputs`. A non-zero result
/// stops the program (eval_config::call_failed is called) and is returned by evaluate. `scalars`
/// are expressions the callback may evaluate (evaluate(op->scalars[i], ctx)); they count as uses
/// of the symbols they read.
class call_stmt : public stmt_node<call_stmt, stmt_node_type::call_stmt> {
public:
  /// The callback: called with this node and the evaluation context (where the buffers are
  /// bound); returns 0 on success.
  using callable = std::function<index_t(const call_stmt*, eval_context&)>;
  /// A list of buffer symbols.
  using symbol_list = slinky::symbol_list;
  /// The attributes of a call.
  using attributes = call_attributes;

  /// The callback.
  callable target;
  /// The symbols of the input buffers.
  symbol_list inputs;
  /// The symbols of the output buffers.
  symbol_list outputs;
  /// Expressions the callback may evaluate.
  std::vector<expr> scalars;
  /// The attributes.
  attributes attrs;
  /// Not part of the API: the callback's direct entry point, if it has one (internal::call_entry).
  internal::call_entry entry;

  /// The call node.
  static stmt make(callable target, symbol_list inputs, symbol_list outputs, std::vector<expr> scalars,
                   attributes attrs);
  /// The call node with a direct entry point that does what target does (internal::call_entry).
  static stmt make(callable target, symbol_list inputs, symbol_list outputs, std::vector<expr> scalars,
                   attributes attrs, internal::call_entry entry);
};

/// Copies src to dst: for each coordinate dst_x of dst, the value is src at src_x (expressions
/// of the dst_x variables), or the pad buffer's value where src_x is outside src (or left
/// unchanged with no pad). The evaluator runs a copy as a few calls of `impl` (slinky::copy if
/// null) on strided views of src, dst and pad: `plan`, worked out by make from src_x, says over
/// which ranges of each dst dimension src_x is affine (docs/copies.md).
class copy_stmt : public stmt_node<copy_stmt, stmt_node_type::copy_stmt> {
public:
  /// A copy implementation, called like slinky::copy(src, dst, pad).
  using callable = std::function<void(const raw_buffer& src, const raw_buffer& dst, const raw_buffer& pad)>;

  /// How one call can cover a range of a dst dimension x.
  struct dim_plan {
    /// Undefined: src_x is not affine in x, each index of x is copied separately. Otherwise
    /// src_x is affine in x within each block of `period` consecutive indices that starts where
    /// (x + offset) % period == 0: x occurs only in sums, in products with expressions of no
    /// dst variable, and as (x + offset) / period or (x + offset) % period. Period 1 (offset 0)
    /// is a plain affine dimension: a translation, flip, stride, broadcast or slice.
    expr period;
    /// The offset of the blocks (see period).
    expr offset;  ///< The part of L free of dst variables (undefined: 0).
  };

  /// The copy implementation (null: slinky::copy).
  callable impl;
  /// The source buffer.
  var src;
  /// The coordinates of src to read, one per dimension of src, as expressions of dst_x.
  std::vector<expr> src_x;
  /// The destination buffer.
  var dst;
  /// The variables of the coordinates of dst, one per dimension of dst.
  std::vector<var> dst_x;
  /// The buffer of values for coordinates outside src (undefined: no padding).
  var pad;
  std::vector<dim_plan> plan;  ///< One per dst_x.

  /// A src coordinate of a reshape: (L / divisor) % modulus, with L = offset + sum_j coeffs[j] *
  /// dst_x[j] (coefficients and offset free of dst variables).
  struct flat_digit {
    /// One per dst_x (undefined: 0). Empty: the coordinate is not a digit; it uses none of the
    /// dst variables the digits use.
    std::vector<expr> coeffs;
    expr offset;   ///< The part of L free of dst variables (undefined: 0).
    expr divisor;  ///< Never undefined (1 where src_x has no division).
    expr modulus;  ///< Undefined: no modulus.
  };
  /// Not empty (one per src_x) when src_x unpacks a flat index of dst into digits, as a reshape
  /// between buffers of different shapes does: each src coordinate is a digit (some with a
  /// division or a modulus), or uses none of the dst variables the digits use. The evaluator
  /// checks at run time that the digits are those of one mixed radix number and copies the
  /// runs contiguous in both buffers with one call each (docs/copies.md).
  std::vector<flat_digit> flat;

  /// The copy node; works out plan and flat from src_x and dst_x.
  static stmt make(callable impl, var src, std::vector<expr> src_x, var dst, std::vector<var> dst_x, var pad = var());
};

/// let sym0 = value0, ... in body. is_closure promises that the body uses only the symbols these
/// lets bind, and that every value is a variable (a closure over those variables, e.g. the body of
/// an async task).
class let_stmt : public stmt_node<let_stmt, stmt_node_type::let_stmt> {
public:
  /// The symbols and their values, in order (later values may use earlier symbols).
  std::vector<std::pair<var, expr>> lets;
  /// The statement run with the symbols bound.
  stmt body;
  /// See the class description.
  bool is_closure = false;
  /// The let node; body itself if lets is empty and it is not a closure.
  static stmt make(std::vector<std::pair<var, expr>> lets, stmt body, bool is_closure = false);
  /// let sym = value in body.
  static stmt make(var sym, expr value, stmt body) { return make({{sym, std::move(value)}}, std::move(body)); }
};

/// s as a let_stmt if it is one marked as a closure, else null.
const let_stmt* is_closure(const stmt& s);

/// Runs stmts in order, stopping at the first failure. make flattens nested blocks and drops
/// undefined statements; it returns the single statement if only one is left.
class block : public stmt_node<block, stmt_node_type::block> {
public:
  /// The statements, in order.
  std::vector<stmt> stmts;
  /// The block of stmts (undefined if none is defined).
  static stmt make(std::vector<stmt> stmts);
  /// The block of stmts followed by tail.
  static stmt make(std::vector<stmt> stmts, stmt tail);
  /// The block of a then b.
  static stmt make(stmt a, stmt b) { return make(std::vector<stmt>{std::move(a), std::move(b)}); }
};

/// for sym in [bounds.min, bounds.max] step `step`: body. Up to max_workers iterations may run
/// at once (1 = serial); each runs the body with sym bound to its first value.
class loop : public stmt_node<loop, stmt_node_type::loop> {
public:
  /// max_workers of a serial loop.
  static constexpr int serial = 1;
  /// max_workers of a loop that may use every thread.
  static constexpr int parallel = std::numeric_limits<int>::max();

  /// The loop variable, bound within body.
  var sym;
  /// The largest number of iterations that may run at once.
  expr max_workers;
  /// The range of sym.
  interval_expr bounds;
  /// The distance between the first values of consecutive iterations.
  expr step;
  /// The statement run for each iteration.
  stmt body;

  /// The loop node; an undefined max_workers is serial, an undefined step is 1.
  static stmt make(var sym, expr max_workers, interval_expr bounds, expr step, stmt body);
  /// True if max_workers is the constant 1.
  bool is_serial() const;
};

/// Allocates a buffer sym with the given element size and dims (bounds, stride, fold factor;
/// undefined strides are filled in densely) for the duration of body.
class allocate : public stmt_node<allocate, stmt_node_type::allocate> {
public:
  /// The buffer allocated, bound within body.
  var sym;
  /// Where the memory comes from.
  memory_type storage;
  /// The size of an element in bytes.
  expr elem_size;
  /// The dims.
  std::vector<dim_expr> dims;
  /// The statement run with the buffer allocated.
  stmt body;

  /// The allocate node.
  static stmt make(var sym, memory_type storage, expr elem_size, std::vector<dim_expr> dims, stmt body);
};

/// Makes a buffer descriptor sym over existing memory at address `base`.
class make_buffer : public stmt_node<make_buffer, stmt_node_type::make_buffer> {
public:
  /// The buffer made, bound within body.
  var sym;
  /// The address of the element of min coordinates.
  expr base;
  /// The size of an element in bytes.
  expr elem_size;
  /// The dims.
  std::vector<dim_expr> dims;
  /// The statement run with the buffer bound.
  stmt body;

  /// The make_buffer node.
  static stmt make(var sym, expr base, expr elem_size, std::vector<dim_expr> dims, stmt body);
};

/// sym is a buffer with known contents (shared with `value`) for the duration of body.
class constant_buffer : public stmt_node<constant_buffer, stmt_node_type::constant_buffer> {
public:
  /// The buffer, bound within body.
  var sym;
  /// The contents.
  const_raw_buffer_ptr value;
  /// The statement run with the buffer bound.
  stmt body;

  /// The constant_buffer node.
  static stmt make(var sym, const_raw_buffer_ptr value, stmt body);
};

/// sym is a copy of the descriptor of src (the same memory).
class clone_buffer : public stmt_node<clone_buffer, stmt_node_type::clone_buffer> {
public:
  /// The clone, bound within body.
  var sym;
  /// The buffer cloned.
  var src;
  /// The statement run with the clone bound.
  stmt body;

  /// The clone_buffer node.
  static stmt make(var sym, var src, stmt body);
};

/// sym is src cropped to `bounds` (one interval per dimension; undefined intervals or bounds
/// leave that side alone). Crops clamp to src's bounds (see raw_buffer::crop).
class crop_buffer : public stmt_node<crop_buffer, stmt_node_type::crop_buffer> {
public:
  /// The cropped buffer, bound within body (may be src itself, shadowing it).
  var sym;
  /// The buffer cropped.
  var src;
  /// The crop, one interval per dimension.
  box_expr bounds;
  /// The statement run with the crop bound.
  stmt body;

  /// The crop_buffer node.
  static stmt make(var sym, var src, box_expr bounds, stmt body);
};

/// sym is src with dimension dim cropped to bounds.
class crop_dim : public stmt_node<crop_dim, stmt_node_type::crop_dim> {
public:
  /// The cropped buffer, bound within body (may be src itself, shadowing it).
  var sym;
  /// The buffer cropped.
  var src;
  /// The dimension cropped (not negative).
  int dim;
  /// The crop of that dimension.
  interval_expr bounds;
  /// The statement run with the crop bound.
  stmt body;

  /// The crop_dim node.
  static stmt make(var sym, var src, int dim, interval_expr bounds, stmt body);
};

/// sym is src with the dimensions d where at[d] is defined removed, at those coordinates.
class slice_buffer : public stmt_node<slice_buffer, stmt_node_type::slice_buffer> {
public:
  /// The sliced buffer, bound within body.
  var sym;
  /// The buffer sliced.
  var src;
  /// The coordinate of each dimension to remove (undefined: keep the dimension).
  std::vector<expr> at;
  /// The statement run with the slice bound.
  stmt body;

  /// The slice_buffer node.
  static stmt make(var sym, var src, std::vector<expr> at, stmt body);
};

/// sym is src with dimension dim removed, at coordinate at.
class slice_dim : public stmt_node<slice_dim, stmt_node_type::slice_dim> {
public:
  /// The sliced buffer, bound within body.
  var sym;
  /// The buffer sliced.
  var src;
  /// The dimension removed (not negative).
  int dim;
  /// The coordinate of that dimension.
  expr at;
  /// The statement run with the slice bound.
  stmt body;

  /// The slice_dim node.
  static stmt make(var sym, var src, int dim, expr at, stmt body);
};

/// sym is src with dimensions reordered: dimension i of sym is dimension dims[i] of src. The
/// rank of sym is dims.size() (dims[i] >= src's rank, e.g. new_dim, gives a broadcast dimension).
class transpose : public stmt_node<transpose, stmt_node_type::transpose> {
public:
  /// A new (broadcast) dimension.
  static constexpr int new_dim = INT_MAX;

  /// The reordered buffer, bound within body.
  var sym;
  /// The buffer reordered.
  var src;
  /// For each dimension of sym, the dimension of src it is.
  std::vector<int> dims;
  /// The statement run with the reordered buffer bound.
  stmt body;

  /// The transpose node.
  static stmt make(var sym, var src, std::vector<int> dims, stmt body);
  /// sym is the first `rank` dimensions of src.
  static stmt make_truncate(var sym, var src, int rank, stmt body);
  /// True if dims is [0, 1, ..., n - 1]: a truncation of the rank, not a reordering.
  static bool is_truncate(span<const int> dims);
  /// is_truncate(dims).
  bool is_truncate() const { return is_truncate(dims); }
};

/// Starts `task` on the thread pool (without one, runs it first), binds sym to a handle of it
/// (awaitable with wait_for(sym)), runs body, then waits for the task. Both must succeed.
class async : public stmt_node<async, stmt_node_type::async> {
public:
  /// The handle of the task, bound within body.
  var sym;
  /// The statement run as a task.
  stmt task;
  /// The statement run meanwhile.
  stmt body;

  /// The async node.
  static stmt make(var sym, stmt task, stmt body);
};

/// Fails the program (eval_config::check_failed) if condition is zero.
class check : public stmt_node<check, stmt_node_type::check> {
public:
  /// The condition that must hold.
  expr condition;
  /// The check node.
  static stmt make(expr condition);
};

/// Runs true_body if condition is non-zero, else false_body (either may be undefined).
class if_then_else : public stmt_node<if_then_else, stmt_node_type::if_then_else> {
public:
  /// The condition (true when non-zero).
  expr condition;
  /// The statement run if the condition is true.
  stmt true_body;
  /// The statement run if the condition is false.
  stmt false_body;
  /// The if_then_else node.
  static stmt make(expr condition, stmt true_body, stmt false_body = stmt());
};

/// Visits statement nodes. The default implementations visit the children, expressions
/// included (through the expr_visitor part).
class stmt_visitor : public expr_visitor {
public:
  /// The visits of expression nodes.
  using expr_visitor::visit;
#define SLINKY_X(name) /** Visits op (of class name); by default, its children. */                                     \
  virtual void visit(const class name* op);
  SLINKY_FOR_EACH_STMT_NODE(SLINKY_X)
#undef SLINKY_X
};

/// The original's name for a visitor of statements and expressions whose defaults visit every
/// child (our stmt_visitor already does).
using recursive_node_visitor = stmt_visitor;

template <typename T, stmt_node_type Type>
void stmt_node<T, Type>::accept(stmt_visitor* v) const {
  v->visit(static_cast<const T*>(this));
}

}  // namespace slinky

#endif  // SLINKY_RUNTIME_STMT_H
