// node_mutator: the base of passes that rewrite programs. Each visit produces the rewritten
// node; by default a node's children are mutated and the node is rebuilt only if one of them
// changed, so an untouched program comes back as the very same nodes.
#ifndef SLINKY_RUNTIME_NODE_MUTATOR_H
#define SLINKY_RUNTIME_NODE_MUTATOR_H

#include <functional>

#include "slinky/runtime/expr.h"
#include "slinky/runtime/stmt.h"

namespace slinky {

class node_mutator : public stmt_visitor {
  expr e_;
  stmt s_;

public:
  using stmt_visitor::visit;

  virtual expr mutate(const expr& e) {
    if (!e.defined()) return e;
    e.accept(this);
    return std::move(e_);
  }
  virtual stmt mutate(const stmt& s) {
    if (!s.defined()) return s;
    s.accept(this);
    return std::move(s_);
  }

  interval_expr mutate(const interval_expr& x);
  box_expr mutate(const box_expr& x);
  dim_expr mutate(const dim_expr& x);

  void set_result(expr e) { e_ = std::move(e); }
  void set_result(stmt s) { s_ = std::move(s); }

#define SLINKY_X(name) void visit(const class name* op) override;
  SLINKY_FOR_EACH_EXPR_NODE(SLINKY_X)
  SLINKY_FOR_EACH_STMT_NODE(SLINKY_X)
#undef SLINKY_X
};

// Rewrites only the nodes of kind T with fn (which returns the replacement); fn may call
// `mutate` on the mutator it is given to recurse into children. Other nodes are rebuilt only
// if their children change.
template <typename T, typename Result>
class node_rewriter : public node_mutator {
  std::function<Result(const T*, node_mutator&)> fn_;

public:
  explicit node_rewriter(std::function<Result(const T*, node_mutator&)> fn) : fn_(std::move(fn)) {}
  using node_mutator::visit;
  void visit(const T* op) override { set_result(fn_(op, *this)); }
};

template <typename T, typename Fn>
expr rewrite(const expr& e, Fn&& fn) {
  node_rewriter<T, expr> m(std::forward<Fn>(fn));
  return m.mutate(e);
}
template <typename T, typename Fn>
stmt rewrite(const stmt& s, Fn&& fn) {
  using result = std::conditional_t<std::is_base_of_v<base_expr_node, T>, expr, stmt>;
  node_rewriter<T, result> m(std::forward<Fn>(fn));
  return m.mutate(s);
}

// Replaces every use of the symbol `target` by `replacement` (respecting shadowing: uses inside
// a scope that redeclares target are left alone). The replacement is not protected from capture:
// its symbols must not be redeclared inside e (the builder makes every symbol unique).
expr substitute(const expr& e, var target, const expr& replacement);
stmt substitute(const stmt& s, var target, const expr& replacement);
interval_expr substitute(const interval_expr& x, var target, const expr& replacement);

// True if e (or s) refers to the symbol v. Conservative: uses under a declaration that
// shadows v count too.
bool depends_on(const expr& e, var v);
bool depends_on(const stmt& s, var v);
bool depends_on(const interval_expr& x, var v);

}  // namespace slinky

#endif  // SLINKY_RUNTIME_NODE_MUTATOR_H
