// Default rewrites of node_mutator (rebuild a node only when a child changed), substitution and
// dependency queries.
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
  void node_mutator::visit(const name* op) { mutate_binary(this, op); }
SLINKY_X(add)
SLINKY_X(sub)
SLINKY_X(mul)
SLINKY_X(div)
SLINKY_X(mod)
SLINKY_X(minimum)
SLINKY_X(maximum)
SLINKY_X(equal)
SLINKY_X(not_equal)
SLINKY_X(less)
SLINKY_X(less_equal)
SLINKY_X(logical_and)
SLINKY_X(logical_or)
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

// Replaces free uses of one symbol. Declarations of the same symbol shadow it: their bodies are
// left alone (their own values, bounds etc. are still substituted, as they are evaluated outside
// the new scope).
class substitutor : public node_mutator {
  var target_;
  const expr& replacement_;

public:
  substitutor(var target, const expr& replacement) : target_(target), replacement_(replacement) {}
  using node_mutator::visit;

  void visit(const variable* op) override {
    if (op->sym != target_) {
      set_result(expr(op));
    } else if (op->field == buffer_field::none) {
      set_result(replacement_);
    } else if (std::optional<var> v = as_variable(replacement_)) {
      // Buffer metadata follows the buffer to its new symbol.
      set_result(variable::make(*v, op->field, op->dim));
    } else {
      // The metadata of a buffer replaced by a value that is not a buffer symbol: left alone.
      set_result(expr(op));
    }
  }
  void visit(const let* op) override {
    for (const auto& l : op->lets) {
      if (l.first == target_) {
        // Values after the shadowing declaration and the body see the new binding.
        std::vector<std::pair<var, expr>> lets = op->lets;
        bool shadowed = false;
        bool changed = false;
        for (auto& j : lets) {
          if (!shadowed) {
            expr v = mutate(j.second);
            changed = changed || !v.same_as(j.second);
            j.second = std::move(v);
          }
          shadowed = shadowed || j.first == target_;
        }
        set_result(changed ? let::make(std::move(lets), op->body) : expr(op));
        return;
      }
    }
    node_mutator::visit(op);
  }
  void visit(const let_stmt* op) override {
    for (const auto& l : op->lets) {
      if (l.first == target_) {
        std::vector<std::pair<var, expr>> lets = op->lets;
        bool shadowed = false;
        bool changed = false;
        for (auto& j : lets) {
          if (!shadowed) {
            expr v = mutate(j.second);
            changed = changed || !v.same_as(j.second);
            j.second = std::move(v);
          }
          shadowed = shadowed || j.first == target_;
        }
        set_result(changed ? let_stmt::make(std::move(lets), op->body) : stmt(op));
        return;
      }
    }
    node_mutator::visit(op);
  }
  // A declaration of the target shadows it in the body: only the declaration's own values are
  // substituted, and the node is rebuilt only if they changed.
  void visit(const loop* op) override {
    if (op->sym != target_) return node_mutator::visit(op);
    expr max_workers = mutate(op->max_workers);
    interval_expr bounds = mutate(op->bounds);
    expr step = mutate(op->step);
    if (max_workers.same_as(op->max_workers) && bounds.same_as(op->bounds) && step.same_as(op->step)) {
      return set_result(stmt(op));
    }
    set_result(loop::make(op->sym, std::move(max_workers), std::move(bounds), std::move(step), op->body));
  }
  void visit(const allocate* op) override {
    if (op->sym != target_) return node_mutator::visit(op);
    std::vector<dim_expr> dims = mutate_dims(op->dims);
    expr elem_size = mutate(op->elem_size);
    if (elem_size.same_as(op->elem_size) && same_dims(dims, op->dims)) return set_result(stmt(op));
    set_result(allocate::make(op->sym, op->storage, std::move(elem_size), std::move(dims), op->body));
  }
  void visit(const make_buffer* op) override {
    if (op->sym != target_) return node_mutator::visit(op);
    std::vector<dim_expr> dims = mutate_dims(op->dims);
    expr base = mutate(op->base);
    expr elem_size = mutate(op->elem_size);
    if (base.same_as(op->base) && elem_size.same_as(op->elem_size) && same_dims(dims, op->dims)) {
      return set_result(stmt(op));
    }
    set_result(make_buffer::make(op->sym, std::move(base), std::move(elem_size), std::move(dims), op->body));
  }
  void visit(const clone_buffer* op) override {
    if (op->sym != target_) return node_mutator::visit(op);
    set_result(stmt(op));
  }
  void visit(const constant_buffer* op) override {
    if (op->sym != target_) return node_mutator::visit(op);
    set_result(stmt(op));
  }
  void visit(const async* op) override {
    // The task does not see sym; the body does.
    if (op->sym != target_) return node_mutator::visit(op);
    stmt task = mutate(op->task);
    set_result(task.same_as(op->task) ? stmt(op) : async::make(op->sym, std::move(task), op->body));
  }
  void visit(const crop_buffer* op) override {
    if (op->sym != target_) return node_mutator::visit(op);
    box_expr bounds = mutate(op->bounds);
    for (std::size_t i = 0; i < bounds.size(); ++i) {
      if (!bounds[i].same_as(op->bounds[i])) {
        return set_result(crop_buffer::make(op->sym, op->src, std::move(bounds), op->body));
      }
    }
    set_result(stmt(op));
  }
  void visit(const crop_dim* op) override {
    if (op->sym != target_) return node_mutator::visit(op);
    interval_expr bounds = mutate(op->bounds);
    if (bounds.same_as(op->bounds)) return set_result(stmt(op));
    set_result(crop_dim::make(op->sym, op->src, op->dim, std::move(bounds), op->body));
  }
  void visit(const slice_buffer* op) override {
    if (op->sym != target_) return node_mutator::visit(op);
    std::vector<expr> at;
    bool changed = false;
    for (const expr& i : op->at) {
      at.push_back(mutate(i));
      changed = changed || !at.back().same_as(i);
    }
    set_result(changed ? slice_buffer::make(op->sym, op->src, std::move(at), op->body) : stmt(op));
  }
  void visit(const slice_dim* op) override {
    if (op->sym != target_) return node_mutator::visit(op);
    expr at = mutate(op->at);
    set_result(at.same_as(op->at) ? stmt(op) : slice_dim::make(op->sym, op->src, op->dim, std::move(at), op->body));
  }
  void visit(const transpose* op) override {
    if (op->sym != target_) return node_mutator::visit(op);
    set_result(stmt(op));
  }

private:
  std::vector<dim_expr> mutate_dims(const std::vector<dim_expr>& dims) {
    std::vector<dim_expr> result;
    result.reserve(dims.size());
    for (const dim_expr& d : dims) result.push_back(mutate(d));
    return result;
  }
  static bool same_dims(const std::vector<dim_expr>& a, const std::vector<dim_expr>& b) {
    for (std::size_t i = 0; i < a.size(); ++i) {
      if (!a[i].same_as(b[i])) return false;
    }
    return true;
  }
};

// Finds a free use of a symbol.
class dependency_finder : public stmt_visitor {
  var target_;

public:
  bool found = false;
  explicit dependency_finder(var target) : target_(target) {}
  using stmt_visitor::visit;

  void visit(const variable* op) override { found = found || op->sym == target_; }
  void visit(const call_stmt* op) override {
    for (var i : op->inputs) found = found || i == target_;
    for (var i : op->outputs) found = found || i == target_;
    stmt_visitor::visit(op);
  }
  void visit(const copy_stmt* op) override {
    found = found || op->src == target_ || op->dst == target_ || op->pad == target_;
    stmt_visitor::visit(op);
  }
  void visit(const clone_buffer* op) override {
    found = found || op->src == target_;
    stmt_visitor::visit(op);
  }
  void visit(const crop_buffer* op) override {
    found = found || op->src == target_;
    stmt_visitor::visit(op);
  }
  void visit(const crop_dim* op) override {
    found = found || op->src == target_;
    stmt_visitor::visit(op);
  }
  void visit(const slice_buffer* op) override {
    found = found || op->src == target_;
    stmt_visitor::visit(op);
  }
  void visit(const slice_dim* op) override {
    found = found || op->src == target_;
    stmt_visitor::visit(op);
  }
  void visit(const transpose* op) override {
    found = found || op->src == target_;
    stmt_visitor::visit(op);
  }
};

}  // namespace

expr substitute(const expr& e, var target, const expr& replacement) {
  substitutor s(target, replacement);
  return s.mutate(e);
}
stmt substitute(const stmt& s, var target, const expr& replacement) {
  substitutor m(target, replacement);
  return m.mutate(s);
}
interval_expr substitute(const interval_expr& x, var target, const expr& replacement) {
  substitutor s(target, replacement);
  return s.mutate(x);
}

bool depends_on(const expr& e, var v) {
  if (!e.defined()) return false;
  dependency_finder f(v);
  e.accept(&f);
  return f.found;
}
bool depends_on(const stmt& s, var v) {
  if (!s.defined()) return false;
  dependency_finder f(v);
  s.accept(&f);
  return f.found;
}
bool depends_on(const interval_expr& x, var v) { return depends_on(x.min, v) || depends_on(x.max, v); }

}  // namespace slinky
