/// \file
/// `node_mutator`: the base of passes that rewrite programs. Each visit produces the rewritten
/// node; by default a node's children are mutated and the node is rebuilt only if one of them
/// changed, so an untouched program comes back as the very same nodes.
#ifndef SLINKY_RUNTIME_NODE_MUTATOR_H
#define SLINKY_RUNTIME_NODE_MUTATOR_H

#include <cstddef>
#include <functional>
#include <utility>
#include <vector>

#include "slinky/base/assert.h"
#include "slinky/runtime/depends_on.h"
#include "slinky/runtime/expr.h"
#include "slinky/runtime/stmt.h"

namespace slinky {

namespace internal {

// Whether a mutated child is the very same as the child it was mutated from: same_as for nodes,
// intervals and dims, == for symbols, element by element for pairs and vectors.
template <typename T>
bool same_child(const T& new_child, const T& old_child) {
  return new_child.same_as(old_child);
}
inline bool same_child(var new_child, var old_child) { return new_child == old_child; }
template <typename A, typename B>
bool same_child(const std::pair<A, B>& new_child, const std::pair<A, B>& old_child) {
  return same_child(new_child.first, old_child.first) && same_child(new_child.second, old_child.second);
}
template <typename T>
bool same_child(const std::vector<T>& new_child, const std::vector<T>& old_child) {
  if (new_child.size() != old_child.size()) return false;
  for (std::size_t i = 0; i < new_child.size(); ++i) {
    if (!same_child(new_child[i], old_child[i])) return false;
  }
  return true;
}

}  // namespace internal

/// True if every mutated child is the very same as the child of the original node it was mutated
/// from, given in pairs: unchanged(new_a, op->a, new_b, op->b, ...). Nodes, intervals and dims
/// compare by identity (same_as), symbols with ==, vectors and pairs element by element. A mutator
/// returns the original node when this holds (tests assert this identity), and rebuilds it
/// otherwise:
///
///     if (unchanged(a, op->a, b, op->b)) return set_result(op);
///     set_result(T::make(std::move(a), std::move(b)));
///@{
inline bool unchanged() { return true; }
template <typename T, typename... Rest>
bool unchanged(const T& new_child, const T& old_child, const Rest&... rest) {
  return internal::same_child(new_child, old_child) && unchanged(rest...);
}
///@}

/// The base of passes that rewrite programs: each visit sets the rewritten node with set_result.
/// By default a node's children are mutated and the node is rebuilt only if one of them changed
/// (see unchanged), so an untouched program comes back as the very same nodes.
class node_mutator : public stmt_visitor {
  expr e_;
  stmt s_;

  // The results set since the visit in progress began. Each visit must set one of the kind
  // mutated: a visit that forgot to would otherwise give an undefined node (checked by
  // SLINKY_ASSERT). A visit may set more than one (the last counts): clients' visits call the
  // default visit and then replace its result. A visitor that calls accept on children itself
  // (see mutated_expr) counts their results too. Counted in all builds, so that code built with
  // and without NDEBUG can be mixed.
  struct results {
    int exprs = 0;
    int stmts = 0;
  };
  results results_;

  // The results of the visit in progress are saved by begin_visit and restored by end_visit.
  results begin_visit() { return std::exchange(results_, results()); }
  void end_visit(const results& outer, bool expr_result) {
    SLINKY_ASSERT((expr_result ? results_.exprs : results_.stmts) >= 1,
                  "a visit of node_mutator set no result of the kind mutated");
    results_ = outer;
  }

public:
  /// The visits this class does not override.
  using stmt_visitor::visit;

  /// The rewritten e (visits it); an undefined e is returned as it is.
  virtual expr mutate(const expr& e) {
    if (!e.defined()) return e;
    const results outer = begin_visit();
    e.accept(this);
    end_visit(outer, /*expr_result=*/true);
    return std::move(e_);
  }
  /// The rewritten s (visits it); an undefined s is returned as it is.
  virtual stmt mutate(const stmt& s) {
    if (!s.defined()) return s;
    const results outer = begin_visit();
    s.accept(this);
    end_visit(outer, /*expr_result=*/false);
    return std::move(s_);
  }

  /// Each end mutated (a point is mutated once and stays a point).
  virtual interval_expr mutate(const interval_expr& x);
  /// Each part mutated.
  ///@{
  box_expr mutate(const box_expr& x);
  dim_expr mutate(const dim_expr& x);
  std::vector<expr> mutate(const std::vector<expr>& x);
  std::vector<dim_expr> mutate(const std::vector<dim_expr>& x);
  ///@}

  /// The result of the visit in progress: every visit calls one of these (the last call counts).
  ///@{
  void set_result(expr e) {
    ++results_.exprs;
    e_ = std::move(e);
  }
  void set_result(stmt s) {
    ++results_.stmts;
    s_ = std::move(s);
  }
  void set_result(const base_expr_node* e) { set_result(expr(e)); }
  void set_result(const base_stmt_node* s) { set_result(stmt(s)); }
  ///@}
  /// The result set by the last visit (until mutate returns it): for visitors that call accept
  /// on children themselves.
  ///@{
  const expr& mutated_expr() const { return e_; }
  const stmt& mutated_stmt() const { return s_; }
  ///@}

#define SLINKY_X(name)                                                                                                 \
  /** Mutates op (of class name): by default its children, rebuilding op only if one of them changed. */               \
  void visit(const class name* op) override;
  SLINKY_FOR_EACH_EXPR_NODE(SLINKY_X)
  SLINKY_FOR_EACH_STMT_NODE(SLINKY_X)
#undef SLINKY_X
};

/// Rewrites only the nodes of kind T with fn (which returns the replacement); fn may call
/// `mutate` on the mutator it is given to recurse into children. Other nodes are rebuilt only
/// if their children change.
template <typename T, typename Result>
class node_rewriter : public node_mutator {
  std::function<Result(const T*, node_mutator&)> fn_;

public:
  /// A rewriter calling fn on each node of kind T.
  explicit node_rewriter(std::function<Result(const T*, node_mutator&)> fn) : fn_(std::move(fn)) {}
  /// The default visits of the other kinds.
  using node_mutator::visit;
  /// Sets the result to fn(op, *this).
  void visit(const T* op) override { set_result(fn_(op, *this)); }
};

/// e (or s) with every node of kind T replaced by fn(node, mutator) (see node_rewriter), e.g.
/// `rewrite<add>(e, [](const add* op, node_mutator&) -> expr { return sub::make(op->a, op->b); })`
/// turns every + into a -.
///@{
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
///@}

/// Replaces every use of the symbol `target` by `replacement` (respecting shadowing: uses inside
/// a scope that redeclares target are left alone). The replacement is never captured: the scope of
/// a declaration of a symbol it uses (a let, a loop, a slice_dim or other buffer declaration, ...)
/// is left alone too, uses of target in it included, since no fresh name can be made to rename the
/// declaration (the builder makes every symbol unique, so it never meets this). If the
/// replacement is a variable, target's buffer metadata reads (buffer_min(target, d), ...) and its
/// uses as a buffer in statements (call inputs and outputs, copy operands, crop sources, ...) move
/// to that symbol; otherwise they are left alone. Implemented with the substitutor of
/// runtime/substitutor.h.
///@{
expr substitute(const expr& e, var target, const expr& replacement);
stmt substitute(const stmt& s, var target, const expr& replacement);
interval_expr substitute(const interval_expr& x, var target, const expr& replacement);
///@}

// depends_on is declared in runtime/depends_on.h (included above), where the original slinky
// declares it; code that includes this header for it keeps compiling.

/// A node_mutator that rewrites only statements (the original slinky's stmt_mutator): expressions
/// are returned unchanged, without being visited. Ours derives from node_mutator (the original's
/// node_mutator derives from it instead), so a stmt_mutator can be used wherever a node_mutator
/// is expected, but not the other way around.
class stmt_mutator : public node_mutator {
public:
  /// The other mutate overloads of node_mutator.
  using node_mutator::mutate;
  /// e itself, not visited.
  expr mutate(const expr& e) override { return e; }
};

/// A copy of op with its body replaced by new_body (and, for the second form, its declared symbol
/// by sym); op itself if nothing changes. A let_stmt declares several symbols: it has only the
/// first form.
///@{
stmt clone_with(const let_stmt* op, stmt new_body);
stmt clone_with(const loop* op, stmt new_body);
stmt clone_with(const loop* op, var sym, stmt new_body);
stmt clone_with(const allocate* op, stmt new_body);
stmt clone_with(const allocate* op, var sym, stmt new_body);
stmt clone_with(const make_buffer* op, stmt new_body);
stmt clone_with(const make_buffer* op, var sym, stmt new_body);
stmt clone_with(const constant_buffer* op, stmt new_body);
stmt clone_with(const constant_buffer* op, var sym, stmt new_body);
stmt clone_with(const clone_buffer* op, stmt new_body);
stmt clone_with(const clone_buffer* op, var sym, stmt new_body);
stmt clone_with(const crop_buffer* op, stmt new_body);
stmt clone_with(const crop_buffer* op, var sym, stmt new_body);
stmt clone_with(const crop_dim* op, stmt new_body);
stmt clone_with(const crop_dim* op, var sym, stmt new_body);
stmt clone_with(const slice_buffer* op, stmt new_body);
stmt clone_with(const slice_buffer* op, var sym, stmt new_body);
stmt clone_with(const slice_dim* op, stmt new_body);
stmt clone_with(const slice_dim* op, var sym, stmt new_body);
stmt clone_with(const transpose* op, stmt new_body);
stmt clone_with(const transpose* op, var sym, stmt new_body);
stmt clone_with(const async* op, stmt new_body);
stmt clone_with(const async* op, var sym, stmt new_body);
///@}

}  // namespace slinky

#endif  // SLINKY_RUNTIME_NODE_MUTATOR_H
