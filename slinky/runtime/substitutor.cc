// The substitutor's traversal of declarations, and substitution of a symbol by an expression
// (runtime/node_mutator.h's substitute) built on it.
#include "slinky/runtime/substitutor.h"

#include <algorithm>
#include <optional>
#include <utility>
#include <vector>

#include "slinky/runtime/depends_on.h"

namespace slinky {

expr substitutor::mutate_variable(const variable* op, var sym, buffer_field field, int dim) {
  if (field == buffer_field::rank) {
    const int rank = get_target_buffer_rank(sym);
    if (rank >= 0) return expr(rank);
  }
  const var new_sym = visit_symbol(sym);
  if (new_sym == op->sym && field == op->field && dim == op->dim) return expr(op);
  return variable::make(new_sym, field, dim);
}

int substitutor::get_target_buffer_rank(var) { return -1; }
var substitutor::enter_decl(var sym) { return sym; }
void substitutor::exit_decls(int) {}

stmt substitutor::mutate_decl_body(var& sym, const stmt& body) {
  const var new_sym = enter_decl(sym);
  if (!new_sym.defined()) return body;
  stmt result = mutate(body);
  exit_decls(1);
  sym = new_sym;
  return result;
}

void substitutor::visit(const variable* op) { set_result(mutate_variable(op, op->sym, op->field, op->dim)); }

template <typename T>
void substitutor::visit_lets(const T* op) {
  std::vector<std::pair<var, expr>> lets;
  lets.reserve(op->lets.size());
  int entered = 0;
  bool shadowed = false;
  for (const auto& l : op->lets) {
    if (shadowed) {
      // Later values are in the scope that enter_decl asked to leave alone.
      lets.push_back(l);
      continue;
    }
    expr value = mutate(l.second);
    var sym = enter_decl(l.first);
    if (sym.defined()) {
      ++entered;
    } else {
      shadowed = true;
      sym = l.first;
    }
    lets.emplace_back(sym, std::move(value));
  }
  auto body = shadowed ? op->body : mutate(op->body);
  if (entered > 0) exit_decls(entered);
  if (unchanged(lets, op->lets, body, op->body)) {
    set_result(op);
  } else if constexpr (std::is_same_v<T, let_stmt>) {
    set_result(let_stmt::make(std::move(lets), std::move(body), op->is_closure));
  } else {
    set_result(let::make(std::move(lets), std::move(body)));
  }
}

void substitutor::visit(const let* op) { visit_lets(op); }
void substitutor::visit(const let_stmt* op) { visit_lets(op); }

void substitutor::visit(const call_stmt* op) {
  symbol_list inputs = op->inputs;
  symbol_list outputs = op->outputs;
  for (var& i : inputs) i = visit_symbol(i);
  for (var& i : outputs) i = visit_symbol(i);
  std::vector<expr> scalars = mutate(op->scalars);
  if (unchanged(inputs, op->inputs, outputs, op->outputs, scalars, op->scalars)) return set_result(op);
  set_result(
      call_stmt::make(op->target, std::move(inputs), std::move(outputs), std::move(scalars), op->attrs, op->entry));
}

void substitutor::visit(const copy_stmt* op) {
  const var src = visit_symbol(op->src);
  const var dst = visit_symbol(op->dst);
  const var pad = op->pad.defined() ? visit_symbol(op->pad) : op->pad;
  std::vector<var> dst_x = op->dst_x;
  int entered = 0;
  bool shadowed = false;
  for (var& i : dst_x) {
    const var v = enter_decl(i);
    if (!v.defined()) {
      shadowed = true;
      break;
    }
    ++entered;
    i = v;
  }
  std::vector<expr> src_x;
  if (shadowed) {
    // Renamings of the other dst_x would need their uses mapped: keep the copy as it was.
    src_x = op->src_x;
    dst_x = op->dst_x;
  } else {
    src_x = mutate(op->src_x);
  }
  if (entered > 0) exit_decls(entered);
  if (unchanged(src, op->src, dst, op->dst, pad, op->pad, dst_x, op->dst_x, src_x, op->src_x)) return set_result(op);
  set_result(copy_stmt::make(op->impl, src, std::move(src_x), dst, std::move(dst_x), pad));
}

void substitutor::visit(const loop* op) {
  expr max_workers = mutate(op->max_workers);
  interval_expr bounds = mutate(op->bounds);
  expr step = mutate(op->step);
  var sym = op->sym;
  stmt body = mutate_decl_body(sym, op->body);
  if (unchanged(sym, op->sym, max_workers, op->max_workers, bounds, op->bounds, step, op->step, body, op->body)) {
    return set_result(op);
  }
  set_result(loop::make(sym, std::move(max_workers), std::move(bounds), std::move(step), std::move(body)));
}

void substitutor::visit(const allocate* op) {
  expr elem_size = mutate(op->elem_size);
  std::vector<dim_expr> dims = mutate(op->dims);
  var sym = op->sym;
  stmt body = mutate_decl_body(sym, op->body);
  if (unchanged(sym, op->sym, elem_size, op->elem_size, dims, op->dims, body, op->body)) return set_result(op);
  set_result(allocate::make(sym, op->storage, std::move(elem_size), std::move(dims), std::move(body)));
}

void substitutor::visit(const make_buffer* op) {
  expr base = mutate(op->base);
  expr elem_size = mutate(op->elem_size);
  std::vector<dim_expr> dims = mutate(op->dims);
  var sym = op->sym;
  stmt body = mutate_decl_body(sym, op->body);
  if (unchanged(sym, op->sym, base, op->base, elem_size, op->elem_size, dims, op->dims, body, op->body)) {
    return set_result(op);
  }
  set_result(make_buffer::make(sym, std::move(base), std::move(elem_size), std::move(dims), std::move(body)));
}

void substitutor::visit(const constant_buffer* op) {
  var sym = op->sym;
  stmt body = mutate_decl_body(sym, op->body);
  if (unchanged(sym, op->sym, body, op->body)) return set_result(op);
  set_result(constant_buffer::make(sym, op->value, std::move(body)));
}

void substitutor::visit(const clone_buffer* op) {
  const var src = visit_symbol(op->src);
  var sym = op->sym;
  stmt body = mutate_decl_body(sym, op->body);
  if (unchanged(sym, op->sym, src, op->src, body, op->body)) return set_result(op);
  set_result(clone_buffer::make(sym, src, std::move(body)));
}

void substitutor::visit(const crop_buffer* op) {
  const var src = visit_symbol(op->src);
  box_expr bounds = mutate(op->bounds);
  var sym = op->sym;
  stmt body = mutate_decl_body(sym, op->body);
  if (unchanged(sym, op->sym, src, op->src, bounds, op->bounds, body, op->body)) return set_result(op);
  set_result(crop_buffer::make(sym, src, std::move(bounds), std::move(body)));
}

void substitutor::visit(const crop_dim* op) {
  const var src = visit_symbol(op->src);
  interval_expr bounds = mutate(op->bounds);
  var sym = op->sym;
  stmt body = mutate_decl_body(sym, op->body);
  if (unchanged(sym, op->sym, src, op->src, bounds, op->bounds, body, op->body)) return set_result(op);
  set_result(crop_dim::make(sym, src, op->dim, std::move(bounds), std::move(body)));
}

void substitutor::visit(const slice_buffer* op) {
  const var src = visit_symbol(op->src);
  std::vector<expr> at = mutate(op->at);
  var sym = op->sym;
  stmt body = mutate_decl_body(sym, op->body);
  if (unchanged(sym, op->sym, src, op->src, at, op->at, body, op->body)) return set_result(op);
  set_result(slice_buffer::make(sym, src, std::move(at), std::move(body)));
}

void substitutor::visit(const slice_dim* op) {
  const var src = visit_symbol(op->src);
  expr at = mutate(op->at);
  var sym = op->sym;
  stmt body = mutate_decl_body(sym, op->body);
  if (unchanged(sym, op->sym, src, op->src, at, op->at, body, op->body)) return set_result(op);
  set_result(slice_dim::make(sym, src, op->dim, std::move(at), std::move(body)));
}

void substitutor::visit(const transpose* op) {
  const var src = visit_symbol(op->src);
  var sym = op->sym;
  stmt body = mutate_decl_body(sym, op->body);
  if (unchanged(sym, op->sym, src, op->src, body, op->body)) return set_result(op);
  set_result(transpose::make(sym, src, op->dims, std::move(body)));
}

void substitutor::visit(const async* op) {
  stmt task = mutate(op->task);
  var sym = op->sym;
  stmt body = mutate_decl_body(sym, op->body);
  if (unchanged(sym, op->sym, task, op->task, body, op->body)) return set_result(op);
  set_result(async::make(sym, std::move(task), std::move(body)));
}

namespace {

// Replaces free uses of one symbol by an expression. A buffer symbol replaced by another
// symbol takes its metadata reads and its statement uses along; replaced by any other
// expression, only its value reads are replaced. The scope of a declaration of the target, or of
// a symbol the replacement uses (which would capture it there: e.g. a slice_dim declaring b,
// around a use of x replaced by buffer_min(b, 1)), is left as it is: without a node_context no
// fresh name can be made to rename the declaration.
class var_substitutor : public substitutor {
  var target_;
  const expr& replacement_;
  std::optional<var> replacement_var_;
  // The symbols the replacement uses, found at the first declaration (most substitutions meet
  // none).
  std::optional<std::vector<var>> replacement_uses_;

  bool captures(var sym) {
    if (!replacement_uses_) replacement_uses_ = find_dependencies(replacement_);
    return std::binary_search(replacement_uses_->begin(), replacement_uses_->end(), sym);
  }

public:
  var_substitutor(var target, const expr& replacement)
      : target_(target), replacement_(replacement), replacement_var_(as_variable(replacement)) {}

  var visit_symbol(var sym) override { return sym == target_ && replacement_var_ ? *replacement_var_ : sym; }
  expr mutate_variable(const variable* op, var sym, buffer_field field, int dim) override {
    if (sym != target_) return expr(op);
    if (field == buffer_field::none) return replacement_;
    if (replacement_var_) return variable::make(*replacement_var_, field, dim);
    return expr(op);
  }
  var enter_decl(var sym) override { return sym == target_ || captures(sym) ? var() : sym; }
};

}  // namespace

expr substitute(const expr& e, var target, const expr& replacement) {
  var_substitutor s(target, replacement);
  return s.mutate(e);
}
stmt substitute(const stmt& s, var target, const expr& replacement) {
  var_substitutor m(target, replacement);
  return m.mutate(s);
}
interval_expr substitute(const interval_expr& x, var target, const expr& replacement) {
  var_substitutor s(target, replacement);
  return s.mutate(x);
}

}  // namespace slinky
