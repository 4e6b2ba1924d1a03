// The graph API: buffer_expr and func construction, producer registration, and copies.
#include "slinky/builder/pipeline.h"

#include <cstdio>
#include <cstdlib>
#include <iostream>

namespace slinky {

namespace internal {

void builder_error(const std::string& message) {
  std::fprintf(stderr, "slinky: build error: %s\n", message.c_str());
  std::fflush(stderr);
  std::abort();
}

}  // namespace internal

buffer_expr::buffer_expr(var sym, std::size_t rank, index_t elem_size) : sym_(sym), elem_size_(elem_size) {
  dims_.reserve(rank);
  for (std::size_t d = 0; d < rank; ++d) {
    dims_.push_back(buffer_dim(sym, static_cast<int>(d)));
  }
}

buffer_expr_ptr buffer_expr::make(var sym, std::size_t rank, index_t elem_size) {
  return buffer_expr_ptr(new buffer_expr(sym, rank, elem_size));
}

buffer_expr_ptr buffer_expr::make(node_context& ctx, const std::string& name, std::size_t rank, index_t elem_size) {
  return make(var(ctx, name), rank, elem_size);
}

buffer_expr_ptr buffer_expr::make_constant(var sym, const_raw_buffer_ptr constant) {
  buffer_expr_ptr b = make(sym, constant->rank, constant->elem_size);
  b->constant_ = std::move(constant);
  return b;
}

buffer_expr_ptr buffer_expr::make_constant(node_context& ctx, const std::string& name, const_raw_buffer_ptr constant) {
  return make_constant(var(ctx, name), std::move(constant));
}

box_expr buffer_expr::bounds() const {
  box_expr result;
  result.reserve(dims_.size());
  for (const dim_expr& d : dims_) result.push_back(d.bounds);
  return result;
}

func::func(callable impl, std::vector<input> inputs, std::vector<output> outputs, call_stmt::attributes attrs)
    : impl_(std::move(impl)), inputs_(std::move(inputs)), outputs_(std::move(outputs)), attrs_(std::move(attrs)) {
  add_this_to_buffers();
}

func::func(std::vector<input> inputs, output out, copy_stmt::callable impl)
    : copy_impl_(impl ? std::move(impl)
                      : copy_stmt::callable([](const raw_buffer& src, const raw_buffer& dst, const raw_buffer& pad) {
                          copy(src, dst, pad);
                        })),
      is_copy_(true), inputs_(std::move(inputs)), outputs_({std::move(out)}) {
  attrs_.name = "copy";
  for (input& i : inputs_) {
    if (i.buffer && outputs_[0].buffer && i.buffer->elem_size() == 0) {
      i.buffer->set_elem_size(outputs_[0].buffer->elem_size());
    }
  }
  if (outputs_[0].buffer && outputs_[0].buffer->elem_size() == 0 && !inputs_.empty() && inputs_[0].buffer) {
    outputs_[0].buffer->set_elem_size(inputs_[0].buffer->elem_size());
  }
  add_this_to_buffers();
}

func::func(input in, output out, copy_stmt::callable impl)
    : func(std::vector<input>{std::move(in)}, std::move(out), std::move(impl)) {}

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
  attrs_ = std::move(other.attrs_);
  loops_ = std::move(other.loops_);
  compute_at_ = std::move(other.compute_at_);
  store_outputs_innermost_ = other.store_outputs_innermost_;
  user_data_ = other.user_data_;
  other.impl_ = nullptr;
  other.is_copy_ = false;
  other.outputs_.clear();
  other.inputs_.clear();
  add_this_to_buffers();
  return *this;
}

func::~func() { remove_this_from_buffers(); }

void func::add_this_to_buffers() {
  for (output& o : outputs_) {
    if (!o.buffer) internal::builder_error("func " + name() + ": an output has no buffer");
    if (o.buffer->producer_ && o.buffer->producer_ != this) {
      internal::builder_error("buffer produced twice: a second func (" + name() + ") writes the buffer that func " +
                              o.buffer->producer_->name() + " produces");
    }
    o.buffer->producer_ = this;
  }
}

void func::remove_this_from_buffers() {
  for (output& o : outputs_) {
    if (o.buffer && o.buffer->producer_ == this) o.buffer->producer_ = nullptr;
  }
}

std::string func::name(const node_context* ctx) const {
  if (!attrs_.name.empty() && attrs_.name != "copy") return attrs_.name;
  std::string prefix = is_copy_ ? "copy to " : "";
  if (!outputs_.empty() && outputs_[0].buffer) {
    var sym = outputs_[0].buffer->sym();
    return prefix + (ctx ? ctx->name(sym.sym()) : "_" + std::to_string(sym.sym()));
  }
  return "<unnamed func>";
}

func func::make_copy(input src, output dst, copy_stmt::callable impl) {
  return func(std::move(src), std::move(dst), std::move(impl));
}

func func::make_copy(input src, output dst, input pad, copy_stmt::callable impl) {
  func result(std::vector<input>{std::move(src), std::move(pad)}, std::move(dst), std::move(impl));
  result.padded_ = true;
  return result;
}

func func::make_copy(std::vector<input> srcs, output dst, copy_stmt::callable impl) {
  return func(std::move(srcs), std::move(dst), std::move(impl));
}

func func::make_concat(std::vector<buffer_expr_ptr> srcs, output dst, std::size_t dim, std::vector<expr> bounds,
                       copy_stmt::callable impl) {
  if (bounds.size() != srcs.size() + 1) {
    internal::builder_error("make_concat: expected " + std::to_string(srcs.size() + 1) + " bounds for " +
                            std::to_string(srcs.size()) + " inputs, got " + std::to_string(bounds.size()));
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
  const std::size_t rank = dst.dims.size();
  if (dim >= rank) dim = rank - 1;
  std::vector<input> inputs;
  for (std::size_t i = 0; i < srcs.size(); ++i) {
    input in;
    in.buffer = srcs[i];
    for (std::size_t d = 0; d < rank; ++d) {
      if (d != dim) in.bounds.push_back(point(dst.dims[d]));
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
