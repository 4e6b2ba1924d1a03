// The graph API: symbolic buffers (buffer_expr) joined by operators (func) whose work is a
// user callback, a schedule (loops, compute_at, store_at), and build_pipeline, which lowers
// the graph and schedule into a runnable pipeline.
#ifndef SLINKY_BUILDER_PIPELINE_H
#define SLINKY_BUILDER_PIPELINE_H

#include <functional>
#include <optional>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "slinky/base/ref_count.h"
#include "slinky/runtime/buffer.h"
#include "slinky/runtime/evaluate.h"
#include "slinky/runtime/expr.h"
#include "slinky/runtime/pipeline.h"
#include "slinky/runtime/stmt.h"

namespace slinky {

class func;
class buffer_expr;
using buffer_expr_ptr = ref_count<buffer_expr>;

// Names a loop: loop `var` of func `func`. The default loop_id is the root (outside every loop).
struct loop_id {
  const slinky::func* func = nullptr;
  slinky::var var;

  bool root() const { return func == nullptr; }
  symbol_id sym() const { return var.sym(); }
  bool operator==(const loop_id& other) const { return func == other.func && var == other.var; }
  bool operator!=(const loop_id& other) const { return !(*this == other); }
};

// A symbolic buffer. Its dims default to the buffer's own runtime metadata (bounds, stride and
// fold factor of the buffer bound to sym() when the pipeline runs). Editing a dim of a pipeline
// input or output adds a requirement checked when the pipeline runs; editing one of an
// intermediate decides its allocation (bounds, stride, fold factor).
class buffer_expr : public ref_counted<buffer_expr> {
  var sym_;
  index_t elem_size_;
  std::vector<dim_expr> dims_;
  func* producer_ = nullptr;
  const_raw_buffer_ptr constant_;
  std::optional<loop_id> store_at_;
  memory_type storage_ = memory_type::automatic;

  buffer_expr(var sym, std::size_t rank, index_t elem_size);
  friend class func;

public:
  buffer_expr(const buffer_expr&) = delete;
  buffer_expr& operator=(const buffer_expr&) = delete;

  // elem_size 0 means: take it from the element type of the callbacks that use the buffer.
  static buffer_expr_ptr make(var sym, std::size_t rank, index_t elem_size = 0);
  static buffer_expr_ptr make(node_context& ctx, const std::string& name, std::size_t rank, index_t elem_size = 0);
  // A buffer with known contents (a copy of the descriptor is kept; the data is shared).
  static buffer_expr_ptr make_constant(var sym, const_raw_buffer_ptr constant);
  static buffer_expr_ptr make_constant(node_context& ctx, const std::string& name, const_raw_buffer_ptr constant);
  template <typename T>
  static buffer_expr_ptr make_scalar(node_context& ctx, const std::string& name, const T& value) {
    return make_constant(ctx, name, raw_buffer::make_scalar<T>(value));
  }

  var sym() const { return sym_; }
  index_t elem_size() const { return elem_size_; }
  void set_elem_size(index_t elem_size) { elem_size_ = elem_size; }
  std::size_t rank() const { return dims_.size(); }
  const std::vector<dim_expr>& dims() const { return dims_; }
  dim_expr& dim(std::size_t i) { return dims_[i]; }
  const dim_expr& dim(std::size_t i) const { return dims_[i]; }
  box_expr bounds() const;

  buffer_expr& store_in(memory_type type) {
    storage_ = type;
    return *this;
  }
  memory_type storage() const { return storage_; }
  buffer_expr& store_at(const loop_id& at) {
    store_at_ = at;
    return *this;
  }
  buffer_expr& store_at(std::optional<loop_id> at) {
    store_at_ = std::move(at);
    return *this;
  }
  buffer_expr& store_root() { return store_at(loop_id()); }
  const std::optional<loop_id>& store_at() const { return store_at_; }

  // The func that produces this buffer, if any.
  const func* producer() const { return producer_; }
  const const_raw_buffer_ptr& constant() const { return constant_; }

  static void destroy(buffer_expr* p) { delete p; }
};

// An operator: a callback that produces its outputs from its inputs, with the region of each
// input it needs for each point of its outputs.
class func {
public:
  using callable = call_stmt::callable;

  // An input: the buffer and, for each of its dimensions, the interval needed for one point of
  // the outputs, in terms of the output variables. The last three fields are used by copies:
  // input_crop restricts the source (outside it, padding is used), output_crop restricts the
  // region of the output the copy writes, output_slice slices the output.
  struct input {
    buffer_expr_ptr buffer;
    box_expr bounds = {};
    box_expr input_crop = {};
    box_expr output_crop = {};
    std::vector<expr> output_slice = {};

    var sym() const { return buffer->sym(); }
  };

  // An output: the buffer and the variable indexing each of its dimensions.
  struct output {
    buffer_expr_ptr buffer;
    std::vector<var> dims = {};

    var sym() const { return buffer->sym(); }
  };

  // A loop over output variable `sym` in chunks of `step`, run by up to max_workers threads.
  struct loop_info {
    var sym;
    expr step = 1;
    expr max_workers = loop::serial;

    loop_info() = default;
    loop_info(var sym) : sym(sym) {}
    loop_info(var sym, expr step, expr max_workers = loop::serial)
        : sym(sym), step(std::move(step)), max_workers(std::move(max_workers)) {}

    bool is_parallel() const { return !is_constant(max_workers, loop::serial); }
  };

private:
  callable impl_;
  copy_stmt::callable copy_impl_;
  bool is_copy_ = false;
  // A padded copy: inputs are {src, pad}.
  bool padded_ = false;
  std::optional<std::vector<char>> padding_;
  std::vector<input> inputs_;
  std::vector<output> outputs_;
  call_stmt::attributes attrs_;
  std::vector<loop_info> loops_;
  std::optional<loop_id> compute_at_;
  bool store_outputs_innermost_ = false;
  void* user_data_ = nullptr;

  void add_this_to_buffers();
  void remove_this_from_buffers();

public:
  func() = default;
  func(callable impl, std::vector<input> inputs, std::vector<output> outputs, call_stmt::attributes attrs = {});
  // A copy: each input's bounds are point functions of the output variables.
  func(std::vector<input> inputs, output out, copy_stmt::callable impl = nullptr);
  func(input in, output out, copy_stmt::callable impl = nullptr);
  func(func&& other) noexcept;
  func& operator=(func&& other) noexcept;
  func(const func&) = delete;
  func& operator=(const func&) = delete;
  ~func();

  bool defined() const { return static_cast<bool>(impl_) || is_copy_; }

  // Makes a func from a callable taking (const buffer<const T>&..., const buffer<U>&...) (or
  // raw_buffer forms), inputs first, then outputs, and returning index_t (0 on success). The
  // element types are deduced from the callable, or given explicitly: make<const float, float>.
  template <typename... T, typename Fn>
  static func make(Fn&& fn, std::vector<input> inputs, std::vector<output> outputs, call_stmt::attributes attrs = {});

  // Copies. impl defaults to slinky::copy; it may never be called when the copy is removed by
  // aliasing.
  static func make_copy(input src, output dst, copy_stmt::callable impl = nullptr);
  // Outside src.input_crop, values come from the buffer pad (usually a scalar).
  static func make_copy(input src, output dst, input pad, copy_stmt::callable impl = nullptr);
  static func make_copy(std::vector<input> srcs, output dst, copy_stmt::callable impl = nullptr);
  // Concatenates srcs along dimension dim of dst: srcs[i] fills [bounds[i], bounds[i + 1]).
  static func make_concat(std::vector<buffer_expr_ptr> srcs, output dst, std::size_t dim, std::vector<expr> bounds,
                          copy_stmt::callable impl = nullptr);
  // Stacks srcs along a new dimension dim of dst: srcs[i] is the slice dst(..., i, ...).
  static func make_stack(std::vector<buffer_expr_ptr> srcs, output dst, std::size_t dim = -1,
                         copy_stmt::callable impl = nullptr);

  // The schedule.
  func& loops(std::vector<loop_info> l) {
    loops_ = std::move(l);
    return *this;
  }
  const std::vector<loop_info>& loops() const { return loops_; }
  func& compute_at(const loop_id& at) {
    compute_at_ = at;
    return *this;
  }
  func& compute_at(std::optional<loop_id> at) {
    compute_at_ = std::move(at);
    return *this;
  }
  func& compute_root() { return compute_at(loop_id()); }
  const std::optional<loop_id>& compute_at() const { return compute_at_; }
  // Store this func's outputs inside its innermost loop (when they are intermediates).
  func& store_outputs_innermost() {
    store_outputs_innermost_ = true;
    return *this;
  }
  bool outputs_stored_innermost() const { return store_outputs_innermost_; }

  const callable& impl() const { return impl_; }
  bool is_copy() const { return is_copy_; }
  bool is_padded_copy() const { return padded_; }
  const copy_stmt::callable& copy_impl() const { return copy_impl_; }
  const std::optional<std::vector<char>>& padding() const { return padding_; }
  const std::vector<input>& inputs() const { return inputs_; }
  const std::vector<output>& outputs() const { return outputs_; }
  const call_stmt::attributes& attrs() const { return attrs_; }
  call_stmt::attributes& attrs() { return attrs_; }
  // A name for messages: attrs().name, or the name of the first output's symbol.
  std::string name(const node_context* ctx = nullptr) const;

  void* user_data() const { return user_data_; }
  void*& user_data() { return user_data_; }
};

struct build_options {
  // Do not emit checks of the pipeline's input and output buffers.
  bool no_checks = false;
  // Do not remove copies by letting buffers share memory.
  bool no_alias_buffers = false;
  // Tracing. The evaluator traces every call whenever eval_config::trace_begin is set, with or
  // without this option; tracing loops is not implemented yet, so it currently changes nothing.
  bool trace = false;
};

// Lowers the graph that produces `outputs` from `inputs` into a pipeline. args are scalar
// parameters given at evaluation; lets are bound before anything else runs. Misuse of the
// builder (a cycle, a buffer produced twice, bounds of the wrong rank, a compute_at or store_at
// naming a loop that does not exist or cannot contain the func, ...) is reported on stderr with
// the names of the funcs and buffers involved, and aborts.
pipeline build_pipeline(node_context& ctx, std::vector<var> args, std::vector<buffer_expr_ptr> inputs,
                        std::vector<buffer_expr_ptr> outputs, std::vector<std::pair<var, expr>> lets = {},
                        const build_options& options = build_options());
pipeline build_pipeline(node_context& ctx, std::vector<buffer_expr_ptr> inputs, std::vector<buffer_expr_ptr> outputs,
                        const build_options& options = build_options());

namespace internal {

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

// How a callback parameter of type Arg is made from a raw_buffer: buffer<T> parameters get a
// typed view, raw_buffer parameters the buffer itself.
template <typename Arg>
struct buffer_arg {
  using type = std::decay_t<Arg>;
  static const type& get(const raw_buffer* b) { return *static_cast<const type*>(b); }
  static constexpr index_t elem_size = 0;
};
template <typename T, std::size_t N>
struct buffer_arg<const buffer<T, N>&> {
  static const buffer<T, 0>& get(const raw_buffer* b) { return b->cast<T>(); }
  static constexpr index_t elem_size = sizeof(T);
};
template <typename T, std::size_t N>
struct buffer_arg<buffer<T, N>&> : buffer_arg<const buffer<T, N>&> {};
template <typename T, std::size_t N>
struct buffer_arg<const buffer<T, N>> : buffer_arg<const buffer<T, N>&> {};
template <typename T, std::size_t N>
struct buffer_arg<buffer<T, N>> : buffer_arg<const buffer<T, N>&> {};

template <typename Fn, typename ArgsTuple, std::size_t... Is>
index_t call_with_buffers(const Fn& fn, const call_stmt* op, const eval_context& ctx, std::size_t num_inputs,
                          std::index_sequence<Is...>) {
  auto buffer_at = [&](std::size_t i) {
    return i < num_inputs ? ctx.lookup_buffer(op->inputs[i]) : ctx.lookup_buffer(op->outputs[i - num_inputs]);
  };
  return fn(buffer_arg<std::tuple_element_t<Is, ArgsTuple>>::get(buffer_at(Is))...);
}

template <typename ArgsTuple, std::size_t... Is>
void elem_sizes_of(index_t* result, std::index_sequence<Is...>) {
  ((result[Is] = buffer_arg<std::tuple_element_t<Is, ArgsTuple>>::elem_size), ...);
}

// Reports misuse of the builder and aborts.
[[noreturn]] void builder_error(const std::string& message);

}  // namespace internal

template <typename... T, typename Fn>
func func::make(Fn&& fn, std::vector<input> inputs, std::vector<output> outputs, call_stmt::attributes attrs) {
  using args = std::conditional_t<sizeof...(T) == 0, typename internal::callable_traits<std::decay_t<Fn>>::args,
                                  std::tuple<const buffer<T>&...>>;
  constexpr std::size_t arity = std::tuple_size_v<args>;
  if (inputs.size() + outputs.size() != arity) {
    internal::builder_error("func::make: the callback takes " + std::to_string(arity) + " buffers, but " +
                            std::to_string(inputs.size()) + " inputs and " + std::to_string(outputs.size()) +
                            " outputs were given" + (attrs.name.empty() ? "" : " (func " + attrs.name + ")"));
  }
  // Buffers without an element size take it from the callback's element types.
  index_t elem_sizes[arity + 1] = {};
  internal::elem_sizes_of<args>(elem_sizes, std::make_index_sequence<arity>());
  for (std::size_t i = 0; i < arity; ++i) {
    const buffer_expr_ptr& b = i < inputs.size() ? inputs[i].buffer : outputs[i - inputs.size()].buffer;
    if (b && b->elem_size() == 0) b->set_elem_size(elem_sizes[i]);
  }
  const std::size_t num_inputs = inputs.size();
  callable impl = [fn = std::decay_t<Fn>(std::forward<Fn>(fn)), num_inputs](const call_stmt* op,
                                                                            eval_context& ctx) -> index_t {
    return internal::call_with_buffers<std::decay_t<Fn>, args>(fn, op, ctx, num_inputs,
                                                               std::make_index_sequence<arity>());
  };
  return func(std::move(impl), std::move(inputs), std::move(outputs), std::move(attrs));
}

}  // namespace slinky

#endif  // SLINKY_BUILDER_PIPELINE_H
