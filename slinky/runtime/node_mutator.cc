// Default rewrites of node_mutator (rebuild a node only when a child changed), and clone_with.
#include "slinky/runtime/node_mutator.h"

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

namespace {

bool same(const std::vector<expr>& a, const std::vector<expr>& b) {
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (!a[i].same_as(b[i])) return false;
  }
  return true;
}
bool same(const box_expr& a, const box_expr& b) {
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (!a[i].same_as(b[i])) return false;
  }
  return true;
}
bool same(const std::vector<dim_expr>& a, const std::vector<dim_expr>& b) {
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (!a[i].same_as(b[i])) return false;
  }
  return true;
}

template <typename T>
void mutate_binary(node_mutator* m, const T* op) {
  expr a = m->mutate(op->a);
  expr b = m->mutate(op->b);
  if (a.same_as(op->a) && b.same_as(op->b)) {
    m->set_result(expr(op));
  } else {
    m->set_result(T::make(std::move(a), std::move(b)));
  }
}

}  // namespace

void node_mutator::visit(const variable* op) { set_result(expr(op)); }
void node_mutator::visit(const constant* op) { set_result(expr(op)); }
void node_mutator::visit(const let* op) {
  std::vector<std::pair<var, expr>> lets;
  lets.reserve(op->lets.size());
  bool changed = false;
  for (const auto& l : op->lets) {
    lets.emplace_back(l.first, mutate(l.second));
    changed = changed || !lets.back().second.same_as(l.second);
  }
  expr body = mutate(op->body);
  if (!changed && body.same_as(op->body)) {
    set_result(expr(op));
  } else {
    set_result(let::make(std::move(lets), std::move(body)));
  }
}
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
  if (c.same_as(op->condition) && t.same_as(op->true_value) && f.same_as(op->false_value)) {
    set_result(expr(op));
  } else {
    set_result(conditional::make(std::move(c), std::move(t), std::move(f)));
  }
}
void node_mutator::visit(const call* op) {
  std::vector<expr> args;
  args.reserve(op->args.size());
  for (const expr& i : op->args) args.push_back(mutate(i));
  set_result(same(args, op->args) ? expr(op) : call::make(op->intrinsic, op->target, std::move(args)));
}

void node_mutator::visit(const call_stmt* op) {
  std::vector<expr> scalars;
  scalars.reserve(op->scalars.size());
  for (const expr& i : op->scalars) scalars.push_back(mutate(i));
  if (same(scalars, op->scalars)) {
    set_result(stmt(op));
  } else {
    set_result(call_stmt::make(op->target, op->inputs, op->outputs, std::move(scalars), op->attrs));
  }
}
void node_mutator::visit(const copy_stmt* op) {
  std::vector<expr> src_x;
  src_x.reserve(op->src_x.size());
  for (const expr& i : op->src_x) src_x.push_back(mutate(i));
  if (same(src_x, op->src_x)) {
    set_result(stmt(op));
  } else {
    set_result(copy_stmt::make(op->impl, op->src, std::move(src_x), op->dst, op->dst_x, op->pad));
  }
}
void node_mutator::visit(const let_stmt* op) {
  std::vector<std::pair<var, expr>> lets;
  lets.reserve(op->lets.size());
  bool changed = false;
  for (const auto& l : op->lets) {
    lets.emplace_back(l.first, mutate(l.second));
    changed = changed || !lets.back().second.same_as(l.second);
  }
  stmt body = mutate(op->body);
  if (!changed && body.same_as(op->body)) {
    set_result(stmt(op));
  } else {
    set_result(let_stmt::make(std::move(lets), std::move(body), op->is_closure));
  }
}
void node_mutator::visit(const block* op) {
  std::vector<stmt> stmts;
  stmts.reserve(op->stmts.size());
  bool changed = false;
  for (const stmt& s : op->stmts) {
    stmts.push_back(mutate(s));
    changed = changed || !stmts.back().same_as(s);
  }
  set_result(changed ? block::make(std::move(stmts)) : stmt(op));
}
void node_mutator::visit(const loop* op) {
  expr max_workers = mutate(op->max_workers);
  interval_expr bounds = mutate(op->bounds);
  expr step = mutate(op->step);
  stmt body = mutate(op->body);
  if (max_workers.same_as(op->max_workers) && bounds.same_as(op->bounds) && step.same_as(op->step) &&
      body.same_as(op->body)) {
    set_result(stmt(op));
  } else {
    set_result(loop::make(op->sym, std::move(max_workers), std::move(bounds), std::move(step), std::move(body)));
  }
}
void node_mutator::visit(const allocate* op) {
  expr elem_size = mutate(op->elem_size);
  std::vector<dim_expr> dims;
  dims.reserve(op->dims.size());
  for (const dim_expr& d : op->dims) dims.push_back(mutate(d));
  stmt body = mutate(op->body);
  if (elem_size.same_as(op->elem_size) && same(dims, op->dims) && body.same_as(op->body)) {
    set_result(stmt(op));
  } else {
    set_result(allocate::make(op->sym, op->storage, std::move(elem_size), std::move(dims), std::move(body)));
  }
}
void node_mutator::visit(const make_buffer* op) {
  expr base = mutate(op->base);
  expr elem_size = mutate(op->elem_size);
  std::vector<dim_expr> dims;
  dims.reserve(op->dims.size());
  for (const dim_expr& d : op->dims) dims.push_back(mutate(d));
  stmt body = mutate(op->body);
  if (base.same_as(op->base) && elem_size.same_as(op->elem_size) && same(dims, op->dims) && body.same_as(op->body)) {
    set_result(stmt(op));
  } else {
    set_result(make_buffer::make(op->sym, std::move(base), std::move(elem_size), std::move(dims), std::move(body)));
  }
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
  if (task.same_as(op->task) && body.same_as(op->body)) {
    set_result(stmt(op));
  } else {
    set_result(async::make(op->sym, std::move(task), std::move(body)));
  }
}
void node_mutator::visit(const crop_buffer* op) {
  box_expr bounds = mutate(op->bounds);
  stmt body = mutate(op->body);
  if (same(bounds, op->bounds) && body.same_as(op->body)) {
    set_result(stmt(op));
  } else {
    set_result(crop_buffer::make(op->sym, op->src, std::move(bounds), std::move(body)));
  }
}
void node_mutator::visit(const crop_dim* op) {
  interval_expr bounds = mutate(op->bounds);
  stmt body = mutate(op->body);
  if (bounds.same_as(op->bounds) && body.same_as(op->body)) {
    set_result(stmt(op));
  } else {
    set_result(crop_dim::make(op->sym, op->src, op->dim, std::move(bounds), std::move(body)));
  }
}
void node_mutator::visit(const slice_buffer* op) {
  std::vector<expr> at;
  at.reserve(op->at.size());
  for (const expr& i : op->at) at.push_back(mutate(i));
  stmt body = mutate(op->body);
  if (same(at, op->at) && body.same_as(op->body)) {
    set_result(stmt(op));
  } else {
    set_result(slice_buffer::make(op->sym, op->src, std::move(at), std::move(body)));
  }
}
void node_mutator::visit(const slice_dim* op) {
  expr at = mutate(op->at);
  stmt body = mutate(op->body);
  if (at.same_as(op->at) && body.same_as(op->body)) {
    set_result(stmt(op));
  } else {
    set_result(slice_dim::make(op->sym, op->src, op->dim, std::move(at), std::move(body)));
  }
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
  if (condition.same_as(op->condition) && true_body.same_as(op->true_body) && false_body.same_as(op->false_body)) {
    return set_result(stmt(op));
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
