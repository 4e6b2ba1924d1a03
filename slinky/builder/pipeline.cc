// The graph API: buffer_expr and func construction, producer registration, and copies.
#include "slinky/builder/pipeline.h"

#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <string>

namespace slinky {

namespace internal {

void builder_error(const std::string& message) {
  if (builder_errors* errors = builder_errors::current()) {
    errors->report(message);
    return;
  }
  std::fprintf(stderr, "slinky: build error: %s\n", message.c_str());
  std::fflush(stderr);
  std::abort();
}

void func_make_arity_error(std::size_t arity, std::size_t inputs, std::size_t outputs, const std::string& name) {
  builder_error("func::make: the callback takes " + std::to_string(arity) + " buffers, but " + std::to_string(inputs) +
                " inputs and " + std::to_string(outputs) + " outputs were given" +
                (name.empty() ? "" : " (func " + name + ")"));
}

}  // namespace internal

namespace {

builder_errors*& thread_builder_errors() {
  static thread_local builder_errors* current = nullptr;
  return current;
}

}  // namespace

builder_errors::builder_errors() : previous_(thread_builder_errors()) { thread_builder_errors() = this; }
builder_errors::~builder_errors() { thread_builder_errors() = previous_; }
builder_errors* builder_errors::current() { return thread_builder_errors(); }

void builder_errors::report(const std::string& message) {
  if (failed_) return;
  failed_ = true;
  message_ = message;
}

buffer_expr::buffer_expr(var sym, std::size_t rank, expr elem_size) : sym_(sym), elem_size_(std::move(elem_size)) {
  dims_.reserve(rank);
  for (std::size_t d = 0; d < rank; ++d) {
    dims_.push_back(buffer_dim(sym, static_cast<int>(d)));
  }
}

buffer_expr_ptr buffer_expr::make(var sym, std::size_t rank, expr elem_size) {
  return buffer_expr_ptr(new buffer_expr(sym, rank, std::move(elem_size)));
}

buffer_expr_ptr buffer_expr::make(node_context& ctx, const std::string& name, std::size_t rank, expr elem_size) {
  return make(var(ctx, name), rank, std::move(elem_size));
}

buffer_expr_ptr buffer_expr::make_constant(var sym, const_raw_buffer_ptr constant) {
  if (!constant) {
    internal::builder_error("make_constant: the constant buffer of symbol " + std::to_string(sym.id) + " is null");
    return make(sym, 0, 0);
  }
  buffer_expr_ptr b = make(sym, constant->rank, static_cast<index_t>(constant->elem_size));
  // The dims are the constant's own metadata, as constants.
  for (std::size_t d = 0; d < constant->rank; ++d) b->dims_[d] = dim_expr(constant->dim(d));
  b->constant_ = std::move(constant);
  return b;
}

buffer_expr_ptr buffer_expr::make_constant(node_context& ctx, const std::string& name, const_raw_buffer_ptr constant) {
  return make_constant(var(ctx, name), std::move(constant));
}

index_t buffer_expr::constant_elem_size() const {
  std::optional<index_t> c = as_constant(elem_size_);
  return c ? *c : 0;
}

box_expr buffer_expr::bounds() const {
  box_expr result;
  result.reserve(dims_.size());
  for (const dim_expr& d : dims_) result.push_back(d.bounds);
  return result;
}

func::func(call_stmt::callable impl, std::vector<input> inputs, std::vector<output> outputs, std::vector<expr> scalars,
           call_stmt::attributes attrs)
    : impl_(std::move(impl)), inputs_(std::move(inputs)), outputs_(std::move(outputs)), scalars_(std::move(scalars)),
      attrs_(std::move(attrs)) {
  add_this_to_buffers();
}

func::func(copy_stmt::callable impl, std::vector<input> inputs, output out)
    : copy_impl_(impl ? std::move(impl)
                      : copy_stmt::callable([](const raw_buffer& src, const raw_buffer& dst, const raw_buffer& pad) {
                          copy(src, dst, pad);
                        })),
      is_copy_(true), inputs_(std::move(inputs)), outputs_({std::move(out)}) {
  attrs_.name = "copy";
  // Copies move elements of one size: buffers without an element size take the other side's.
  const buffer_expr_ptr& dst = outputs_[0].buffer;
  for (input& i : inputs_) {
    if (i.buffer && dst && !i.buffer->has_elem_size()) i.buffer->set_elem_size(dst->elem_size());
  }
  if (dst && !dst->has_elem_size() && !inputs_.empty() && inputs_[0].buffer) {
    dst->set_elem_size(inputs_[0].buffer->elem_size());
  }
  add_this_to_buffers();
}

func::func(copy_stmt::callable impl, input src, output dst, input pad)
    : func(std::move(impl), std::vector<input>{std::move(src), std::move(pad)}, std::move(dst)) {
  padded_ = true;
}

func::func(std::vector<input> inputs, output out, copy_stmt::callable impl)
    : func(std::move(impl), std::move(inputs), std::move(out)) {}

func::func(input in, output out, copy_stmt::callable impl)
    : func(std::move(impl), std::vector<input>{std::move(in)}, std::move(out)) {}

stmt func::make_call() const {
  if (!is_copy_) {
    call_stmt::symbol_list ins;
    for (const input& i : inputs_) ins.push_back(i.sym());
    call_stmt::symbol_list outs;
    for (const output& o : outputs_) outs.push_back(o.sym());
    return call_stmt::make(impl_, std::move(ins), std::move(outs), scalars_, attrs_, entry_);
  }
  // A copy of each source (the padding of a padded copy aside) over the whole output, each
  // output point reading the point its input bounds give.
  std::vector<stmt> copies;
  const std::size_t sources = padded_ ? 1 : inputs_.size();
  for (std::size_t k = 0; k < sources; ++k) {
    std::vector<expr> src_x;
    for (const interval_expr& b : internal::used_bounds(inputs_[k])) src_x.push_back(b.min);
    copies.push_back(copy_stmt::make(copy_impl_, inputs_[k].sym(), std::move(src_x), outputs_[0].sym(),
                                     outputs_[0].dims, padded_ ? inputs_[1].sym() : var()));
  }
  return block::make(std::move(copies));
}

func& func::store_outputs_innermost() {
  for (output& o : outputs_) {
    if (o.buffer) o.buffer->store_at(loop_id{this, var()});
  }
  return *this;
}

func::func(func&& other) noexcept { *this = std::move(other); }

func& func::operator=(func&& other) noexcept {
  if (this == &other) return *this;
  remove_this_from_buffers();
  other.remove_this_from_buffers();
  impl_ = std::move(other.impl_);
  copy_impl_ = std::move(other.copy_impl_);
  is_copy_ = other.is_copy_;
  padded_ = other.padded_;
  padding_ = std::move(other.padding_);
  inputs_ = std::move(other.inputs_);
  outputs_ = std::move(other.outputs_);
  scalars_ = std::move(other.scalars_);
  attrs_ = std::move(other.attrs_);
  loops_ = std::move(other.loops_);
  compute_at_ = std::move(other.compute_at_);
  user_data_ = other.user_data_;
  entry_ = std::move(other.entry_);
  hints_ = other.hints_;
  other.impl_ = nullptr;
  other.entry_ = {};
  other.is_copy_ = false;
  other.outputs_.clear();
  other.inputs_.clear();
  // Outputs stored at the moved func's own location (store_outputs_innermost) follow it.
  for (output& o : outputs_) {
    if (o.buffer && o.buffer->store_at_ && o.buffer->store_at_->func == &other) o.buffer->store_at_->func = this;
  }
  add_this_to_buffers();
  return *this;
}

func::~func() { remove_this_from_buffers(); }

void func::add_this_to_buffers() {
  for (std::size_t k = 0; k < outputs_.size(); ++k) {
    if (outputs_[k].buffer) continue;
    internal::builder_error("func " + name() + ": an output has no buffer");
    // (Collected: the output is dropped.)
    outputs_.erase(outputs_.begin() + k--);
  }
  for (output& o : outputs_) {
    if (o.buffer->producer_ && o.buffer->producer_ != this) {
      // Reported by build_pipeline, which knows the names.
      o.buffer->second_producer_ = this;
      continue;
    }
    o.buffer->producer_ = this;
  }
}

void func::remove_this_from_buffers() {
  for (output& o : outputs_) {
    if (!o.buffer) continue;
    if (o.buffer->second_producer_ == this) o.buffer->second_producer_ = nullptr;
    if (o.buffer->producer_ == this) {
      o.buffer->producer_ = const_cast<func*>(o.buffer->second_producer_);
      o.buffer->second_producer_ = nullptr;
    }
  }
}

std::string func::name(const node_context* ctx) const {
  if (!attrs_.name.empty() && attrs_.name != "copy") return attrs_.name;
  std::string prefix = is_copy_ ? "copy to " : "";
  if (!outputs_.empty() && outputs_[0].buffer) {
    var sym = outputs_[0].buffer->sym();
    return prefix + (ctx ? ctx->name(sym) : "_" + std::to_string(sym.id));
  }
  return "<unnamed func>";
}

func func::make_copy(input src, output dst, copy_stmt::callable impl) {
  return func(std::move(src), std::move(dst), std::move(impl));
}

func func::make_copy(input src, output dst, input pad, copy_stmt::callable impl) {
  return func(std::move(impl), std::move(src), std::move(dst), std::move(pad));
}

func func::make_copy(std::vector<input> srcs, output dst, copy_stmt::callable impl) {
  return func(std::move(srcs), std::move(dst), std::move(impl));
}

func func::make_concat(std::vector<buffer_expr_ptr> srcs, output dst, std::size_t dim, std::vector<expr> bounds,
                       copy_stmt::callable impl) {
  if (bounds.size() != srcs.size() + 1) {
    internal::builder_error("make_concat: expected " + std::to_string(srcs.size() + 1) + " bounds for " +
                            std::to_string(srcs.size()) + " inputs, got " + std::to_string(bounds.size()));
    return func();
  }
  std::vector<input> inputs;
  for (std::size_t i = 0; i < srcs.size(); ++i) {
    input in;
    in.buffer = srcs[i];
    // Source i covers [bounds[i], bounds[i + 1]) of dst, translated to start at 0 in src.
    for (std::size_t d = 0; d < dst.dims.size(); ++d) {
      expr x = dst.dims[d];
      in.bounds.push_back(point(d == dim ? x - bounds[i] : x));
    }
    in.output_crop.resize(dst.dims.size());
    in.output_crop[dim] = range(bounds[i], bounds[i + 1]);
    inputs.push_back(std::move(in));
  }
  return func(std::move(inputs), std::move(dst), std::move(impl));
}

func func::make_stack(std::vector<buffer_expr_ptr> srcs, output dst, std::size_t dim, copy_stmt::callable impl) {
  const std::size_t rank = dst.buffer ? dst.buffer->rank() : dst.dims.size();
  if (dim >= rank) dim = rank - 1;
  // With one variable fewer than the rank, the stacked dim takes none: the sources' dims are
  // indexed by all of dst's variables.
  const bool sliced = dst.dims.size() + 1 == rank;
  std::vector<input> inputs;
  for (std::size_t i = 0; i < srcs.size(); ++i) {
    input in;
    in.buffer = srcs[i];
    for (std::size_t d = 0; d < dst.dims.size(); ++d) {
      if (sliced || d != dim) in.bounds.push_back(point(dst.dims[d]));
    }
    in.output_crop.resize(rank);
    in.output_crop[dim] = point(static_cast<index_t>(i));
    in.output_slice.resize(rank);
    in.output_slice[dim] = static_cast<index_t>(i);
    inputs.push_back(std::move(in));
  }
  return func(std::move(inputs), std::move(dst), std::move(impl));
}

}  // namespace slinky
