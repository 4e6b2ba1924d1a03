// Default rewrites of node_mutator (rebuild a node only when a child changed), and clone_with.
#include "slinky/runtime/node_mutator.h"

#include <type_traits>
#include <utility>
#include <vector>

namespace slinky {

interval_expr node_mutator::mutate(const interval_expr& x) {
  if (x.is_point()) {
    expr p = mutate(x.min);
    return interval_expr(p, p);
  }
  return interval_expr(mutate(x.min), mutate(x.max));
}

box_expr node_mutator::mutate(const box_expr& x) {
  box_expr result(x.size());
  for (std::size_t i = 0; i < x.size(); ++i) result[i] = mutate(x[i]);
  return result;
}

dim_expr node_mutator::mutate(const dim_expr& x) { return {mutate(x.bounds), mutate(x.stride), mutate(x.fold_factor)}; }

std::vector<expr> node_mutator::mutate(const std::vector<expr>& x) {
  std::vector<expr> result;
  result.reserve(x.size());
  for (const expr& i : x) result.push_back(mutate(i));
  return result;
}

std::vector<dim_expr> node_mutator::mutate(const std::vector<dim_expr>& x) {
  std::vector<dim_expr> result;
  result.reserve(x.size());
  for (const dim_expr& i : x) result.push_back(mutate(i));
  return result;
}

namespace {

template <typename T>
void mutate_binary(node_mutator* m, const T* op) {
  expr a = m->mutate(op->a);
  expr b = m->mutate(op->b);
  if (unchanged(a, op->a, b, op->b)) return m->set_result(op);
  m->set_result(T::make(std::move(a), std::move(b)));
}

template <typename T>
void mutate_lets(node_mutator* m, const T* op) {
  std::vector<std::pair<var, expr>> lets;
  lets.reserve(op->lets.size());
  for (const auto& l : op->lets) lets.emplace_back(l.first, m->mutate(l.second));
  auto body = m->mutate(op->body);
  if (unchanged(lets, op->lets, body, op->body)) return m->set_result(op);
  if constexpr (std::is_same_v<T, let_stmt>) {
    m->set_result(let_stmt::make(std::move(lets), std::move(body), op->is_closure));
  } else {
    m->set_result(let::make(std::move(lets), std::move(body)));
  }
}

}  // namespace

void node_mutator::visit(const variable* op) { set_result(op); }
void node_mutator::visit(const constant* op) { set_result(op); }
void node_mutator::visit(const let* op) { mutate_lets(this, op); }
#define SLINKY_X(name)                                                                                                 \
  void node_mutator::visit(const class name* op) { mutate_binary(this, op); }
SLINKY_FOR_EACH_BINARY_NODE(SLINKY_X)
#undef SLINKY_X
void node_mutator::visit(const logical_not* op) {
  expr a = mutate(op->a);
  set_result(a.same_as(op->a) ? expr(op) : logical_not::make(std::move(a)));
}
void node_mutator::visit(const conditional* op) {
  expr c = mutate(op->condition);
  expr t = mutate(op->true_value);
  expr f = mutate(op->false_value);
  if (unchanged(c, op->condition, t, op->true_value, f, op->false_value)) return set_result(op);
  set_result(conditional::make(std::move(c), std::move(t), std::move(f)));
}
void node_mutator::visit(const call* op) {
  std::vector<expr> args = mutate(op->args);
  if (unchanged(args, op->args)) return set_result(op);
  set_result(call::make(op->intrinsic, op->target, std::move(args)));
}

void node_mutator::visit(const call_stmt* op) {
  std::vector<expr> scalars = mutate(op->scalars);
  if (unchanged(scalars, op->scalars)) return set_result(op);
  set_result(call_stmt::make(op->target, op->inputs, op->outputs, std::move(scalars), op->attrs, op->entry));
}
void node_mutator::visit(const copy_stmt* op) {
  std::vector<expr> src_x = mutate(op->src_x);
  if (unchanged(src_x, op->src_x)) return set_result(op);
  set_result(copy_stmt::make(op->impl, op->src, std::move(src_x), op->dst, op->dst_x, op->pad));
}
void node_mutator::visit(const let_stmt* op) { mutate_lets(this, op); }
void node_mutator::visit(const block* op) {
  std::vector<stmt> stmts;
  stmts.reserve(op->stmts.size());
  for (const stmt& s : op->stmts) stmts.push_back(mutate(s));
  if (unchanged(stmts, op->stmts)) return set_result(op);
  set_result(block::make(std::move(stmts)));
}
void node_mutator::visit(const loop* op) {
  expr max_workers = mutate(op->max_workers);
  interval_expr bounds = mutate(op->bounds);
  expr step = mutate(op->step);
  stmt body = mutate(op->body);
  if (unchanged(max_workers, op->max_workers, bounds, op->bounds, step, op->step, body, op->body)) {
    return set_result(op);
  }
  set_result(loop::make(op->sym, std::move(max_workers), std::move(bounds), std::move(step), std::move(body)));
}
void node_mutator::visit(const allocate* op) {
  expr elem_size = mutate(op->elem_size);
  std::vector<dim_expr> dims = mutate(op->dims);
  stmt body = mutate(op->body);
  if (unchanged(elem_size, op->elem_size, dims, op->dims, body, op->body)) return set_result(op);
  set_result(allocate::make(op->sym, op->storage, std::move(elem_size), std::move(dims), std::move(body)));
}
void node_mutator::visit(const make_buffer* op) {
  expr base = mutate(op->base);
  expr elem_size = mutate(op->elem_size);
  std::vector<dim_expr> dims = mutate(op->dims);
  stmt body = mutate(op->body);
  if (unchanged(base, op->base, elem_size, op->elem_size, dims, op->dims, body, op->body)) return set_result(op);
  set_result(make_buffer::make(op->sym, std::move(base), std::move(elem_size), std::move(dims), std::move(body)));
}
void node_mutator::visit(const clone_buffer* op) {
  stmt body = mutate(op->body);
  set_result(body.same_as(op->body) ? stmt(op) : clone_buffer::make(op->sym, op->src, std::move(body)));
}
void node_mutator::visit(const constant_buffer* op) {
  stmt body = mutate(op->body);
  set_result(body.same_as(op->body) ? stmt(op) : constant_buffer::make(op->sym, op->value, std::move(body)));
}
void node_mutator::visit(const async* op) {
  stmt task = mutate(op->task);
  stmt body = mutate(op->body);
  if (unchanged(task, op->task, body, op->body)) return set_result(op);
  set_result(async::make(op->sym, std::move(task), std::move(body)));
}
void node_mutator::visit(const crop_buffer* op) {
  box_expr bounds = mutate(op->bounds);
  stmt body = mutate(op->body);
  if (unchanged(bounds, op->bounds, body, op->body)) return set_result(op);
  set_result(crop_buffer::make(op->sym, op->src, std::move(bounds), std::move(body)));
}
void node_mutator::visit(const crop_dim* op) {
  interval_expr bounds = mutate(op->bounds);
  stmt body = mutate(op->body);
  if (unchanged(bounds, op->bounds, body, op->body)) return set_result(op);
  set_result(crop_dim::make(op->sym, op->src, op->dim, std::move(bounds), std::move(body)));
}
void node_mutator::visit(const slice_buffer* op) {
  std::vector<expr> at = mutate(op->at);
  stmt body = mutate(op->body);
  if (unchanged(at, op->at, body, op->body)) return set_result(op);
  set_result(slice_buffer::make(op->sym, op->src, std::move(at), std::move(body)));
}
void node_mutator::visit(const slice_dim* op) {
  expr at = mutate(op->at);
  stmt body = mutate(op->body);
  if (unchanged(at, op->at, body, op->body)) return set_result(op);
  set_result(slice_dim::make(op->sym, op->src, op->dim, std::move(at), std::move(body)));
}
void node_mutator::visit(const transpose* op) {
  stmt body = mutate(op->body);
  set_result(body.same_as(op->body) ? stmt(op) : transpose::make(op->sym, op->src, op->dims, std::move(body)));
}
void node_mutator::visit(const check* op) {
  expr condition = mutate(op->condition);
  set_result(condition.same_as(op->condition) ? stmt(op) : check::make(std::move(condition)));
}
void node_mutator::visit(const if_then_else* op) {
  expr condition = mutate(op->condition);
  stmt true_body = mutate(op->true_body);
  stmt false_body = mutate(op->false_body);
  if (unchanged(condition, op->condition, true_body, op->true_body, false_body, op->false_body)) {
    return set_result(op);
  }
  set_result(if_then_else::make(std::move(condition), std::move(true_body), std::move(false_body)));
}

namespace {

template <typename T>
stmt clone_decl(const T* op, var sym, stmt body) {
  if (sym == op->sym && body.same_as(op->body)) return stmt(op);
  T* result = new T(*op);
  result->sym = sym;
  result->body = std::move(body);
  return stmt(result);
}

}  // namespace

stmt clone_with(const let_stmt* op, stmt new_body) {
  if (new_body.same_as(op->body)) return stmt(op);
  return let_stmt::make(op->lets, std::move(new_body), op->is_closure);
}
#define SLINKY_CLONE_WITH(node)                                                                                        \
  stmt clone_with(const node* op, stmt new_body) { return clone_decl(op, op->sym, std::move(new_body)); }              \
  stmt clone_with(const node* op, var sym, stmt new_body) { return clone_decl(op, sym, std::move(new_body)); }
SLINKY_CLONE_WITH(loop)
SLINKY_CLONE_WITH(allocate)
SLINKY_CLONE_WITH(make_buffer)
SLINKY_CLONE_WITH(constant_buffer)
SLINKY_CLONE_WITH(clone_buffer)
SLINKY_CLONE_WITH(crop_buffer)
SLINKY_CLONE_WITH(crop_dim)
SLINKY_CLONE_WITH(slice_buffer)
SLINKY_CLONE_WITH(slice_dim)
SLINKY_CLONE_WITH(transpose)
SLINKY_CLONE_WITH(async)
#undef SLINKY_CLONE_WITH

}  // namespace slinky
