// any_node: whether some node of an expression or statement is what a search looks for, found by
// one traversal that stops at the first such node. Searches are written as predicates on the
// node kinds they care about, instead of a visitor with a `found` flag per search.
#ifndef SLINKY_RUNTIME_NODE_FINDER_H
#define SLINKY_RUNTIME_NODE_FINDER_H

#include <type_traits>
#include <utility>

#include "slinky/runtime/expr.h"
#include "slinky/runtime/stmt.h"

namespace slinky {

// What a predicate of any_node says of a node: it is what the search looks for; it is not, and
// its children are searched; it is not, and its children are not searched either.
enum class node_search { found, search_children, skip_children };

namespace internal {

// One callable made of several (the lambdas given to any_node).
template <typename... Fn>
struct overloads : Fn... {
  using Fn::operator()...;
};

// Asks fn about each node it takes (const T*, T a node kind or a base of one) and searches
// through the others, until fn finds one.
template <typename Fn>
class node_finder : public stmt_visitor {
  Fn& fn_;

  static node_search verdict(bool is_found) { return is_found ? node_search::found : node_search::search_children; }
  static node_search verdict(node_search s) { return s; }

  template <typename T>
  void search(const T* op) {
    if (found) return;
    if constexpr (std::is_invocable_v<Fn&, const T*>) {
      const node_search s = verdict(fn_(op));
      if (s == node_search::found) found = true;
      if (s != node_search::search_children) return;
    }
    stmt_visitor::visit(op);
  }

public:
  bool found = false;
  explicit node_finder(Fn& fn) : fn_(fn) {}

#define SLINKY_X(name)                                                                                                 \
  void visit(const class name* op) override { search(op); }
  SLINKY_FOR_EACH_EXPR_NODE(SLINKY_X)
  SLINKY_FOR_EACH_STMT_NODE(SLINKY_X)
#undef SLINKY_X
};

template <typename Node, typename... Fn>
bool search_nodes(const Node& n, Fn&&... fn) {
  if (!n.defined()) return false;
  overloads<std::decay_t<Fn>...> predicate{std::forward<Fn>(fn)...};
  node_finder<decltype(predicate)> finder(predicate);
  n.accept(&finder);
  return finder.found;
}

}  // namespace internal

// True if a node of e (or s) is what the predicates look for. Each predicate takes nodes of one
// kind (const T*) and returns true if the node is what the search looks for (false: its children
// are searched), or a node_search. Nodes of kinds that no predicate takes are searched through.
// The search stops at the first node found. An undefined e or s contains nothing. For example,
// any_node(e, [](const call* op) { return op->intrinsic == intrinsic::abs; }) finds an abs.
template <typename... Fn>
bool any_node(expr_ref e, Fn&&... fn) {
  return internal::search_nodes(e, std::forward<Fn>(fn)...);
}
template <typename... Fn>
bool any_node(stmt_ref s, Fn&&... fn) {
  return internal::search_nodes(s, std::forward<Fn>(fn)...);
}

}  // namespace slinky

#endif  // SLINKY_RUNTIME_NODE_FINDER_H
