/// \file
/// The graph API: symbolic buffers (buffer_expr) joined by operators (func) whose work is a
/// user callback, a schedule (loops, compute_at, store_at), and build_pipeline, which lowers
/// the graph and schedule into a runnable pipeline.
#ifndef SLINKY_BUILDER_PIPELINE_H
#define SLINKY_BUILDER_PIPELINE_H

#include <algorithm>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "slinky/base/assert.h"
#include "slinky/base/ref_count.h"
#include "slinky/runtime/buffer.h"
#include "slinky/runtime/evaluate.h"
#include "slinky/runtime/expr.h"
#include "slinky/runtime/pipeline.h"
#include "slinky/runtime/stmt.h"

namespace slinky {

class func;
class buffer_expr;
/// A reference counted handle to a buffer_expr.
using buffer_expr_ptr = ref_count<buffer_expr>;

/// Names a loop: loop `var` of func `func`. The default loop_id is the root (outside every loop).
/// A loop_id with a func and an undefined var names that func's own location: storing a buffer
/// there (store_at({&f, var()})) allocates it right around f's call, inside all of f's loops.
struct loop_id {
  /// The func whose loop this is; null for the root.
  const slinky::func* func = nullptr;
  /// The loop's variable (one of func's loops); undefined for func's own location.
  slinky::var var;

  /// True if this is the root (no func).
  bool root() const { return func == nullptr; }
  /// True if this names f's innermost location ({f, undefined var}).
  bool innermost(const slinky::func* f) const { return func == f && !var.defined(); }
  /// The loop's variable.
  slinky::var sym() const { return var; }
};

/// Roots are equal to each other; other loop_ids are equal if they name the same func and var.
inline bool operator==(const loop_id& a, const loop_id& b) {
  if (a.root() || b.root()) return a.root() == b.root();
  return a.func == b.func && a.var == b.var;
}
/// Not operator==.
inline bool operator!=(const loop_id& a, const loop_id& b) { return !(a == b); }

/// A symbolic buffer. Its dims default to the buffer's own runtime metadata (bounds, stride and
/// fold factor of the buffer bound to sym() when the pipeline runs). Editing a dim of a pipeline
/// input or output adds a requirement checked when the pipeline runs; editing one of an
/// intermediate decides its allocation (bounds, stride, fold factor).
class buffer_expr : public ref_counted<buffer_expr> {
  var sym_;
  expr elem_size_;
  std::vector<dim_expr> dims_;
  func* producer_ = nullptr;
  // A second func that writes this buffer: an error, reported by build_pipeline (where the
  // buffer and funcs have names).
  const func* second_producer_ = nullptr;
  const_raw_buffer_ptr constant_;
  std::optional<loop_id> store_at_;
  memory_type storage_ = memory_type::automatic;

  buffer_expr(var sym, std::size_t rank, expr elem_size);
  friend class func;

public:
  /// Not copyable (handles share a buffer_expr).
  buffer_expr(const buffer_expr&) = delete;
  /// Not copyable.
  buffer_expr& operator=(const buffer_expr&) = delete;

  /// A buffer of the given rank bound to the symbol sym, with dims buffer_dim(sym, d).
  /// The element size may be any expression of the pipeline's scalar arguments (checked against
  /// the buffers given at run time, and used to allocate intermediates); undefined or 0 means:
  /// take it from the element type of the callbacks that use the buffer.
  static buffer_expr_ptr make(var sym, std::size_t rank, expr elem_size = expr());
  /// The same; `name` names a new symbol (name#0, name#1, ... if the name is taken).
  static buffer_expr_ptr make(node_context& ctx, const std::string& name, std::size_t rank, expr elem_size = expr());
  /// A buffer with known contents (a copy of the descriptor is kept; the data is shared). Its dims
  /// are the constant bounds, strides and fold factors of the buffer. A null constant is misuse
  /// (reported, and aborts).
  ///@{
  static buffer_expr_ptr make_constant(var sym, const_raw_buffer_ptr constant);
  static buffer_expr_ptr make_constant(node_context& ctx, const std::string& name, const_raw_buffer_ptr constant);
  ///@}
  /// A rank-0 constant holding value.
  ///@{
  template <typename T>
  static buffer_expr_ptr make_scalar(var sym, const T& value) {
    static_assert(std::is_trivially_copyable_v<T>, "make_scalar needs a trivially copyable value");
    return make_constant(sym, raw_buffer::make_scalar<T>(value));
  }
  template <typename T>
  static buffer_expr_ptr make_scalar(node_context& ctx, const std::string& name, const T& value) {
    return make_scalar(var(ctx, name), value);
  }
  ///@}

  /// The symbol of the buffer.
  var sym() const { return sym_; }
  /// The element size (undefined or 0: not given yet).
  ///@{
  const expr& elem_size() const { return elem_size_; }
  expr& elem_size() { return elem_size_; }
  ///@}
  /// The element size if it is a known constant, else 0.
  index_t constant_elem_size() const;
  /// True if the element size is given (defined and not 0).
  bool has_elem_size() const { return elem_size_.defined() && !is_zero(elem_size_); }
  /// Sets the element size.
  void set_elem_size(expr elem_size) { elem_size_ = std::move(elem_size); }
  /// The number of dims.
  std::size_t rank() const { return dims_.size(); }
  /// The dims.
  const std::vector<dim_expr>& dims() const { return dims_; }
  /// Dim i (i < rank()); assign to it or to its fields to constrain or decide the layout.
  ///@{
  dim_expr& dim(std::size_t i) { return dims_[i]; }
  const dim_expr& dim(std::size_t i) const { return dims_[i]; }
  ///@}
  /// The bounds of each dim.
  box_expr bounds() const;

  /// Where an intermediate's memory comes from (memory_type::automatic by default).
  buffer_expr& store_in(memory_type type) {
    storage_ = type;
    return *this;
  }
  /// The memory type given by store_in.
  memory_type storage() const { return storage_; }
  /// Allocates an intermediate in the loop `at` (which must contain its producer); nullopt (the
  /// default) lets the builder decide (docs/builder.md).
  ///@{
  buffer_expr& store_at(const loop_id& at) {
    store_at_ = at;
    return *this;
  }
  buffer_expr& store_at(std::optional<loop_id> at) {
    store_at_ = std::move(at);
    return *this;
  }
  ///@}
  /// store_at the root: outside every loop.
  buffer_expr& store_root() { return store_at(loop_id()); }
  /// The location given by store_at (nullopt: not given).
  const std::optional<loop_id>& store_at() const { return store_at_; }

  /// The func that produces this buffer, if any.
  const func* producer() const { return producer_; }
  /// Another func that also writes this buffer (misuse, which build_pipeline reports), or null.
  const func* second_producer() const { return second_producer_; }
  /// The contents of a constant buffer (make_constant, make_scalar); null otherwise.
  const const_raw_buffer_ptr& constant() const { return constant_; }

  /// Deletes p (what ref_counted calls when the last handle goes).
  static void destroy(buffer_expr* p) { delete p; }
};

/// \cond
namespace internal {
// Makes the builder's own forms of funcs (check_graph, graph.cc).
class func_access;
// The direct entry point of f's callback (call_stmt::entry): set by func::make, none otherwise.
inline const call_entry& entry_of(const func& f);
}  // namespace internal
/// \endcond

/// An operator: a callback that produces its outputs from its inputs, with the region of each
/// input it needs for each point of its outputs.
class func {
public:
  /// The type of a callback on buffers of the given element types (inputs first, then outputs).
  template <typename... T>
  using callable = std::function<index_t(const buffer<T>&...)>;

  /// An input: the buffer and, for each of its dimensions, the interval needed for one point of
  /// the outputs, in terms of the output variables. The last three fields are used by copies:
  /// input_crop restricts the source (outside it, padding is used), output_crop restricts the
  /// region of the output the copy writes, output_slice slices the output.
  struct input {
    /// The buffer read.
    buffer_expr_ptr buffer;
    /// For each dimension of buffer, the interval one output point needs.
    box_expr bounds = {};
    /// Copies: the region of the source to read (outside it, padding is used).
    box_expr input_crop = {};
    /// Copies: the region of the output this input writes.
    box_expr output_crop = {};
    /// Copies: the output coordinates at which dimensions are sliced (undefined: not sliced).
    /// The sliced dims of the output take no variable: the output is indexed by one variable
    /// per dim that no input slices (a stack of rank-2 buffers into a rank-3 output is indexed
    /// by two), and the bounds are in terms of those. Every source of the copy slices the same
    /// dims, each at its own coordinates. (An output indexed by a variable per dim keeps them
    /// all; output_crop then says where each input goes.)
    std::vector<expr> output_slice = {};

    /// The buffer's symbol.
    var sym() const { return buffer->sym(); }
  };

  /// An output: the buffer and the variable indexing each of its dimensions.
  struct output {
    /// The buffer written.
    buffer_expr_ptr buffer;
    /// The variable of each dimension of buffer.
    std::vector<var> dims = {};

    /// The buffer's symbol.
    var sym() const { return buffer->sym(); }
  };

  /// A loop over output variable `var` in chunks of `step`, run by up to max_workers threads.
  struct loop_info {
    /// The output variable looped over.
    slinky::var var;
    /// The size of a chunk.
    expr step;
    /// The largest number of chunks that may run at once (loop::serial or loop::parallel, or any
    /// expression).
    expr max_workers;

    /// An undefined loop.
    loop_info() = default;
    /// A loop over var in chunks of step.
    loop_info(slinky::var var, expr step = 1, expr max_workers = loop::serial)
        : var(var), step(std::move(step)), max_workers(std::move(max_workers)) {}

    /// The loop's variable.
    slinky::var sym() const { return var; }
    /// True if var and step are defined.
    bool defined() const { return var.defined() && step.defined(); }
    /// True unless max_workers is the constant loop::serial.
    bool is_parallel() const { return !is_constant(max_workers, loop::serial); }
  };

  /// What the callback's author knows of its cost, for the automatic scheduler
  /// (slinky/scheduler, docs/scheduler.md "Hints"); the builder ignores it. Every field is
  /// optional: a func without hints is priced by the scheduler's model alone.
  struct cost_hints {
    /// Calls computing a multiple of `multiple` elements of output dim `dim` are the callback's
    /// fast path (register blocking: a product computing 4 rows of its output at once): the
    /// scheduler steps its loops over that dim in multiples of it. dim < 0 or multiple <= 1: no
    /// preference.
    int dim = -1;
    /// The multiple of elements of output dim `dim` per call.
    index_t multiple = 1;
    /// The callback's own cost per call beyond the runtime's, in ns (setup inside the callback:
    /// packing an operand, say). Negative: unknown (none is charged).
    double ns_per_call = -1;
    /// Its cost per point of its first output, in ns. Negative: unknown (the scheduler estimates
    /// it from the bytes the point reads and writes).
    double ns_per_point = -1;
  };

private:
  call_stmt::callable impl_;
  copy_stmt::callable copy_impl_;
  bool is_copy_ = false;
  // A padded copy: inputs are {src, pad}.
  bool padded_ = false;
  std::optional<std::vector<char>> padding_;
  std::vector<input> inputs_;
  std::vector<output> outputs_;
  std::vector<expr> scalars_;
  call_stmt::attributes attrs_;
  std::vector<loop_info> loops_;
  std::optional<loop_id> compute_at_;
  void* user_data_ = nullptr;
  // func::make's direct entry point of impl_ (call_stmt::entry).
  internal::call_entry entry_;
  cost_hints hints_;

  void add_this_to_buffers();
  void remove_this_from_buffers();
  friend class internal::func_access;
  friend const internal::call_entry& internal::entry_of(const func& f);

public:
  /// An undefined func (no callback, no buffers).
  func() = default;
  /// A call of impl. scalars are expressions (e.g. of the pipeline's scalar arguments, or of this
  /// func's loop variables) the callback may evaluate: evaluate(op->scalars[i], ctx).
  func(call_stmt::callable impl, std::vector<input> inputs, std::vector<output> outputs, std::vector<expr> scalars,
       call_stmt::attributes attrs = {});
  /// A copy: each input's bounds are point functions of the output variables. A null impl means
  /// slinky::copy.
  func(copy_stmt::callable impl, std::vector<input> inputs, output out);
  /// A padded copy: outside src.input_crop, values come from the buffer of pad (inputs = {src, pad}).
  func(copy_stmt::callable impl, input src, output dst, input pad);
  /// A copy (the same as the forms with impl first).
  ///@{
  func(std::vector<input> inputs, output out, copy_stmt::callable impl = nullptr);
  func(input in, output out, copy_stmt::callable impl = nullptr);
  ///@}
  /// Takes other's callback, buffers and schedule; this func becomes the producer of the outputs
  /// (other becomes undefined).
  ///@{
  func(func&& other) noexcept;
  func& operator=(func&& other) noexcept;
  ///@}
  /// Not copyable: a func is the producer of its outputs.
  ///@{
  func(const func&) = delete;
  func& operator=(const func&) = delete;
  ///@}
  /// Stops being the producer of its outputs.
  ~func();

  /// True if this func calls a callback (false for copies and default-constructed funcs).
  bool defined() const { return static_cast<bool>(impl_); }

  /// Makes a func from a callable taking `(const buffer<const T>&..., const buffer<U>&...)` (or
  /// `buffer<void>`/`buffer<const void>`, `raw_buffer`, `const raw_buffer&` or `const raw_buffer*`
  /// forms), inputs first, then outputs, and returning index_t (0 on success): a function pointer,
  /// a lambda (named or temporary), a std::function or a `func::callable<T...>`. The element types
  /// are deduced from the callable, or given explicitly: `make<const float, float>`.
  template <typename... T, typename Fn>
  static func make(Fn&& fn, std::vector<input> inputs, std::vector<output> outputs, call_stmt::attributes attrs = {});

  /// Copies. impl defaults to slinky::copy; it may never be called when the copy is removed by
  /// aliasing.
  static func make_copy(input src, output dst, copy_stmt::callable impl = nullptr);
  /// Outside src.input_crop, values come from the buffer pad (usually a scalar).
  static func make_copy(input src, output dst, input pad, copy_stmt::callable impl = nullptr);
  /// A copy from several sources (each input's output_crop limits the part of dst it writes).
  static func make_copy(std::vector<input> srcs, output dst, copy_stmt::callable impl = nullptr);
  /// Concatenates srcs along dimension dim of dst: srcs[i] fills [bounds[i], bounds[i + 1]).
  static func make_concat(std::vector<buffer_expr_ptr> srcs, output dst, std::size_t dim, std::vector<expr> bounds,
                          copy_stmt::callable impl = nullptr);
  /// Stacks srcs along a new dimension dim of dst (by default, and if dim is too large, the last):
  /// srcs[i] is the slice dst(..., i, ...). dst is indexed by a variable per dim, or by one fewer:
  /// the stacked dim then takes none (output_slice).
  static func make_stack(std::vector<buffer_expr_ptr> srcs, output dst, std::size_t dim = -1,
                         copy_stmt::callable impl = nullptr);

  // The schedule.
  /// Runs this func in loops over its output variables, innermost first.
  func& loops(std::vector<loop_info> l) {
    loops_ = std::move(l);
    return *this;
  }
  /// The loops given.
  const std::vector<loop_info>& loops() const { return loops_; }
  /// Computes this func in the loop `at` (nullopt, the default: the innermost loop containing all
  /// of its consumers).
  ///@{
  func& compute_at(const loop_id& at) {
    compute_at_ = at;
    return *this;
  }
  func& compute_at(std::optional<loop_id> at) {
    compute_at_ = std::move(at);
    return *this;
  }
  ///@}
  /// compute_at the root: outside every loop.
  func& compute_root() { return compute_at(loop_id()); }
  /// The location given by compute_at (nullopt: not given).
  const std::optional<loop_id>& compute_at() const { return compute_at_; }
  /// Store this func's outputs at its own location (store_at({this, var()}) on each output), so
  /// they are allocated around each call, inside all of its loops.
  func& store_outputs_innermost();

  /// The callback (empty for copies).
  const call_stmt::callable& impl() const { return impl_; }
  /// True if this func is a copy.
  bool is_copy() const { return is_copy_; }
  /// True if this func is a padded copy (inputs are {src, pad}).
  bool is_padded_copy() const { return padded_; }
  /// The copy implementation of a copy (slinky::copy if none was given).
  const copy_stmt::callable& copy_impl() const { return copy_impl_; }
  /// Always empty: no constructor sets it (the values of a padded copy come from its pad input).
  const std::optional<std::vector<char>>& padding() const { return padding_; }
  /// The inputs.
  const std::vector<input>& inputs() const { return inputs_; }
  /// The outputs.
  const std::vector<output>& outputs() const { return outputs_; }
  /// The scalars the callback may evaluate.
  const std::vector<expr>& scalars() const { return scalars_; }
  /// The attributes of the call.
  ///@{
  const call_stmt::attributes& attrs() const { return attrs_; }
  call_stmt::attributes& attrs() { return attrs_; }
  ///@}
  /// A name for messages: attrs().name (unless it is "copy"), else the name of the first output's
  /// symbol ("copy to <name>" for copies).
  std::string name(const node_context* ctx = nullptr) const;

  /// The hints for the automatic scheduler (cost_hints).
  func& hints(const cost_hints& h) {
    hints_ = h;
    return *this;
  }
  /// The hints given (defaults: none).
  const cost_hints& hints() const { return hints_; }

  /// An opaque pointer for the client (not used by slinky).
  ///@{
  const void* user_data() const { return user_data_; }
  void*& user_data() { return user_data_; }
  ///@}

  /// The statement that calls this func's callback (or runs its copy) on its input and output
  /// buffers, uncropped.
  stmt make_call() const;
};

/// Options of build_pipeline, fields in this order so designated initializers work.
struct build_options {
  /// Do not emit checks of the pipeline's input and output buffers.
  bool no_checks = false;
  /// Do not remove copies by letting buffers share memory.
  bool no_alias_buffers = false;
  /// Bracket the pipeline's work with eval_config::trace_begin(name) / trace_end(token): "pipeline"
  /// around the whole evaluation, "loop <var>" around each loop, "loop <var> iteration" around each
  /// iteration, and the func's attrs.name (else its name) around each call. A traced pipeline keeps
  /// every loop of its schedule (as keep_loops).
  bool trace = false;
  /// Keep every loop of the schedule. Without it, a serial loop whose body is one call of a func,
  /// with nothing else in it (no other func, no intermediate stored there, no scalar or input_crop
  /// reading its variable), runs as one call over the loop's whole range: the callback is called
  /// once, on the union of the crops the iterations would have given it (docs/builder.md, "Loops
  /// that need not exist"). Parallel loops are always kept.
  bool keep_loops = false;
};

/// Collects misuse of the builder on the calling thread instead of aborting the process, for a
/// host that builds pipelines from graphs it may have got wrong (a model it was given).
///
/// Misuse is a graph or schedule build_pipeline cannot lower (a cycle, a buffer produced twice,
/// bounds shorter than an input's rank, a compute_at or store_at naming a loop that does not exist
/// or cannot contain the func, ...) or a mistake made while describing it (a callback whose arity
/// does not match its buffers, a null constant, make_concat's bounds miscounted, an output without
/// a buffer). Without a builder_errors alive on the thread, it is reported on stderr with the names
/// of the funcs and buffers involved, and the process aborts. While one is alive, the first message
/// is kept in it and nothing aborts: the offending call returns something inert (func::make and
/// make_concat an undefined func, make_constant a rank-0 buffer without contents, a func drops an
/// output without a buffer), and build_pipeline, once an error is recorded (by it or before it),
/// returns a pipeline with an undefined body and builds nothing. Objects nest: the innermost
/// collects. Not shared between threads.
///
///     builder_errors errors;
///     ... describe the graph, build_pipeline ...
///     if (errors.failed()) return report(errors.message());
class builder_errors {
  builder_errors* previous_;
  std::string message_;
  bool failed_ = false;

public:
  /// Collects the calling thread's builder misuse until destroyed.
  builder_errors();
  /// Stops collecting (the enclosing builder_errors, if any, collects again).
  ~builder_errors();
  builder_errors(const builder_errors&) = delete;
  builder_errors& operator=(const builder_errors&) = delete;

  /// True once misuse was reported.
  bool failed() const { return failed_; }
  /// The first misuse reported (empty if none).
  const std::string& message() const { return message_; }

  /// The builder_errors collecting on the calling thread, or null.
  static builder_errors* current();
  /// Records a misuse (the first is kept).
  void report(const std::string& message);
};

/// Lowers the graph that produces `outputs` from `inputs` into a pipeline. args are scalar
/// parameters given at evaluation; lets are bound before anything else runs. Misuse of the
/// builder (a cycle, a buffer produced twice, bounds shorter than an input's rank, a compute_at or
/// store_at naming a loop that does not exist or cannot contain the func, ...) is reported on
/// stderr with the names of the funcs and buffers involved, and aborts; a builder_errors alive on
/// the thread collects it instead, and the result then has an undefined body.
///@{
pipeline build_pipeline(node_context& ctx, std::vector<var> args, std::vector<buffer_expr_ptr> inputs,
                        std::vector<buffer_expr_ptr> outputs, std::vector<std::pair<var, expr>> lets = {},
                        const build_options& options = build_options());
pipeline build_pipeline(node_context& ctx, std::vector<buffer_expr_ptr> inputs, std::vector<buffer_expr_ptr> outputs,
                        const build_options& options = build_options());
///@}

// Hidden from doxygen (not part of the API; doxygen also misreads callable_traits' recursion).
/// \cond
namespace internal {

// sizeof(T), or 0 for void.
template <typename T>
constexpr index_t sizeof_elem() {
  if constexpr (std::is_void_v<T>) {
    return 0;
  } else {
    return static_cast<index_t>(sizeof(T));
  }
}

// Deducing element types from a callable's parameters.
template <typename Fn>
struct callable_traits : callable_traits<decltype(&std::decay_t<Fn>::operator())> {};
template <typename R, typename... Args>
struct callable_traits<R (*)(Args...)> {
  using args = std::tuple<Args...>;
};
template <typename R, typename... Args>
struct callable_traits<R(Args...)> {
  using args = std::tuple<Args...>;
};
template <typename C, typename R, typename... Args>
struct callable_traits<R (C::*)(Args...) const> {
  using args = std::tuple<Args...>;
};
template <typename C, typename R, typename... Args>
struct callable_traits<R (C::*)(Args...)> {
  using args = std::tuple<Args...>;
};

// How a callback parameter of type Arg is made from a raw_buffer: buffer<T, N> parameters (by
// reference or by value; T may be void) get a typed view of the buffer, raw_buffer parameters the
// buffer itself, raw_buffer pointers its address. elem_size is what the parameter says about the
// buffer's element size (0: nothing).
template <typename Arg>
struct buffer_arg;
template <typename T, std::size_t N>
struct buffer_arg<const buffer<T, N>&> {
  static const buffer<T, N>& get(const raw_buffer* b) {
    SLINKY_ASSERT(std::is_void_v<T> || b->elem_size == sizeof_elem<T>(),
                  "a callback's buffer parameter has an element type of another size than the buffer");
    return *reinterpret_cast<const buffer<T, N>*>(b);
  }
  static constexpr index_t elem_size = sizeof_elem<T>();
};
template <typename T, std::size_t N>
struct buffer_arg<buffer<T, N>&> {
  static buffer<T, N>& get(const raw_buffer* b) {
    return const_cast<buffer<T, N>&>(buffer_arg<const buffer<T, N>&>::get(b));
  }
  static constexpr index_t elem_size = sizeof_elem<T>();
};
template <typename T, std::size_t N>
struct buffer_arg<const buffer<T, N>> : buffer_arg<const buffer<T, N>&> {};
template <typename T, std::size_t N>
struct buffer_arg<buffer<T, N>> : buffer_arg<const buffer<T, N>&> {};
template <>
struct buffer_arg<const raw_buffer&> {
  static const raw_buffer& get(const raw_buffer* b) { return *b; }
  static constexpr index_t elem_size = 0;
};
template <>
struct buffer_arg<raw_buffer&> {
  static raw_buffer& get(const raw_buffer* b) { return *const_cast<raw_buffer*>(b); }
  static constexpr index_t elem_size = 0;
};
template <>
struct buffer_arg<raw_buffer> : buffer_arg<const raw_buffer&> {};
template <>
struct buffer_arg<const raw_buffer> : buffer_arg<const raw_buffer&> {};
template <>
struct buffer_arg<const raw_buffer*> {
  static const raw_buffer* get(const raw_buffer* b) { return b; }
  static constexpr index_t elem_size = 0;
};
template <>
struct buffer_arg<raw_buffer*> {
  static raw_buffer* get(const raw_buffer* b) { return const_cast<raw_buffer*>(b); }
  static constexpr index_t elem_size = 0;
};
template <>
struct buffer_arg<const raw_buffer* const> : buffer_arg<const raw_buffer*> {};

template <typename Fn, typename ArgsTuple, std::size_t... Is>
index_t call_with_buffers(const Fn& fn, const call_stmt* op, const eval_context& ctx, std::size_t num_inputs,
                          std::index_sequence<Is...>) {
  auto buffer_at = [&](std::size_t i) {
    return i < num_inputs ? ctx.lookup_buffer(op->inputs[i]) : ctx.lookup_buffer(op->outputs[i - num_inputs]);
  };
  return fn(buffer_arg<std::tuple_element_t<Is, ArgsTuple>>::get(buffer_at(Is))...);
}

// The direct entry point (call_entry::fn) of a typed callback of type Fn: buffers holds the
// call's buffers, inputs then outputs.
template <typename Fn, typename ArgsTuple, std::size_t... Is>
index_t call_direct(const void* fn, const raw_buffer* const* buffers, std::index_sequence<Is...>) {
  return (*static_cast<const Fn*>(fn))(buffer_arg<std::tuple_element_t<Is, ArgsTuple>>::get(buffers[Is])...);
}
template <typename Fn, typename ArgsTuple>
index_t call_direct(const void* fn, const raw_buffer* const* buffers) {
  return call_direct<Fn, ArgsTuple>(fn, buffers, std::make_index_sequence<std::tuple_size_v<ArgsTuple>>());
}

inline const call_entry& entry_of(const func& f) { return f.entry_; }

// True if a callback parameter of type T gives the callback a const view of its buffer.
template <typename T>
constexpr bool is_const_view = std::is_same_v<T, const raw_buffer&> || std::is_same_v<T, const raw_buffer*> ||
                               std::is_same_v<T, const raw_buffer* const>;
template <typename T, std::size_t N>
constexpr bool is_const_view<const buffer<T, N>&> = true;
template <typename ArgsTuple, std::size_t... Is>
constexpr bool all_const_views(std::index_sequence<Is...>) {
  return (is_const_view<std::tuple_element_t<Is, ArgsTuple>> && ...);
}

template <typename ArgsTuple, std::size_t... Is>
void elem_sizes_of(index_t* result, std::index_sequence<Is...>) {
  ((result[Is] = buffer_arg<std::tuple_element_t<Is, ArgsTuple>>::elem_size), ...);
}

// Reports misuse of the builder: to the builder_errors collecting on this thread, and then
// returns (the caller must bail out with something inert), else on stderr, and aborts.
void builder_error(const std::string& message);

// builder_error for func::make given `inputs` and `outputs` buffers for a callback taking `arity`
// (out of line: the message's concatenations inlined into every func::make instantiation set off
// GCC 12's -Warray-bounds and -Wstringop-overflow in clients built with -O2 -Wall).
void func_make_arity_error(std::size_t arity, std::size_t inputs, std::size_t outputs, const std::string& name);

// The entries of in.bounds the builder uses: the first rank of them. A client may give a longer
// box (a table of rank 1 given the box of a rank-2 output); the rest is ignored (API_COMPAT 5.1).
inline span<const interval_expr> used_bounds(const func::input& in) {
  const std::size_t rank = in.buffer ? in.buffer->rank() : in.bounds.size();
  return span<const interval_expr>(in.bounds.data(), std::min(rank, in.bounds.size()));
}
// The same for input_crop.
inline span<const interval_expr> used_input_crop(const func::input& in) {
  const std::size_t rank = in.buffer ? in.buffer->rank() : in.input_crop.size();
  return span<const interval_expr>(in.input_crop.data(), std::min(rank, in.input_crop.size()));
}

}  // namespace internal
/// \endcond

template <typename... T, typename Fn>
func func::make(Fn&& fn, std::vector<input> inputs, std::vector<output> outputs, call_stmt::attributes attrs) {
  using args = std::conditional_t<sizeof...(T) == 0, typename internal::callable_traits<std::decay_t<Fn>>::args,
                                  std::tuple<const buffer<T>&...>>;
  constexpr std::size_t arity = std::tuple_size_v<args>;
  if (inputs.size() + outputs.size() != arity) {
    internal::func_make_arity_error(arity, inputs.size(), outputs.size(), attrs.name);
    return func();
  }
  // Buffers without an element size take it from the callback's element types.
  index_t elem_sizes[arity + 1] = {};
  internal::elem_sizes_of<args>(elem_sizes, std::make_index_sequence<arity>());
  for (std::size_t i = 0; i < arity; ++i) {
    const buffer_expr_ptr& b = i < inputs.size() ? inputs[i].buffer : outputs[i - inputs.size()].buffer;
    if (b && elem_sizes[i] > 0 && !b->has_elem_size()) b->set_elem_size(elem_sizes[i]);
  }
  const std::size_t num_inputs = inputs.size();
  // The callable is shared by the std::function (for the tree interpreter and clients) and the
  // direct entry point the executable form calls (call_stmt::entry), so both call the same object.
  using callable_type = std::decay_t<Fn>;
  auto shared = std::make_shared<const callable_type>(std::forward<Fn>(fn));
  call_stmt::callable impl = [shared, num_inputs](const call_stmt* op, eval_context& ctx) -> index_t {
    return internal::call_with_buffers<callable_type, args>(*shared, op, ctx, num_inputs,
                                                            std::make_index_sequence<arity>());
  };
  func result(std::move(impl), std::move(inputs), std::move(outputs), {}, std::move(attrs));
  result.entry_ = {&internal::call_direct<callable_type, args>, std::move(shared),
                   internal::all_const_views<args>(std::make_index_sequence<arity>())};
  return result;
}

}  // namespace slinky

#endif  // SLINKY_BUILDER_PIPELINE_H
