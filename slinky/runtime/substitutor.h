/// \file
/// `substitutor`: the base of the mutators that replace uses of symbols (substitute in
/// runtime/node_mutator.h, substitute_buffer in builder/substitute.h). It tracks the scopes of
/// declarations through hooks, so that a subclass can leave alone uses that a declaration shadows.
#ifndef SLINKY_RUNTIME_SUBSTITUTOR_H
#define SLINKY_RUNTIME_SUBSTITUTOR_H

#include "slinky/runtime/expr.h"
#include "slinky/runtime/node_mutator.h"
#include "slinky/runtime/stmt.h"

namespace slinky {

/// A node_mutator that sends every use of a symbol through its hooks:
/// - variable nodes through mutate_variable;
/// - the symbols of statements (call_stmt inputs and outputs, copy_stmt src, dst and pad, the src
///   of clone_buffer, crop_buffer, crop_dim, slice_buffer, slice_dim and transpose) through
///   visit_symbol;
/// - every declaration (let and let_stmt symbols, loop variables, the dst_x of a copy within its
///   src_x, and the symbols of allocate, make_buffer, constant_buffer, async and the buffer
///   declarations above) through enter_decl where its scope begins and exit_decls where it ends.
///
/// The values a declaration computes (let values, loop bounds, crop bounds, a copy's src, an async
/// task, ...) are outside its scope. Nodes are rebuilt only if something in them changed.
class substitutor : public node_mutator {
public:
  /// The mutate overloads of node_mutator.
  using node_mutator::mutate;
  /// The visits this class does not override.
  using node_mutator::visit;

  /// The symbol to use in place of sym where a statement uses sym as a buffer (see above). The
  /// default keeps sym.
  virtual var visit_symbol(var sym) { return sym; }
  /// The replacement of the variable node op, which reads `field` (of dimension dim) of sym. The
  /// default: for buffer_field::rank, get_target_buffer_rank(sym) as a constant if that is not
  /// negative; otherwise op itself if visit_symbol(sym) is sym, else the same read of
  /// visit_symbol(sym).
  virtual expr mutate_variable(const variable* op, var sym, buffer_field field, int dim);
  /// The rank of the buffer that sym is replaced by, or -1 if it is not known (or sym is not
  /// replaced): reads of buffer_rank(sym) become this constant in the default mutate_variable.
  virtual int get_target_buffer_rank(var sym);
  /// Called where the scope of a declaration of sym begins, before anything in that scope is
  /// mutated. Returns the symbol the rebuilt declaration declares: sym itself (the default), another
  /// symbol (a renaming: the subclass then maps the uses in the scope), or an undefined var to leave
  /// everything in the scope unchanged (it is not visited, and exit_decls is not called for it).
  virtual var enter_decl(var sym);
  /// Called where the scopes of the last n declarations for which enter_decl returned a symbol end.
  virtual void exit_decls(int n = 1);

  /// Sends the uses and declarations of symbols in these nodes through the hooks (see the class
  /// description).
  ///@{
  void visit(const variable* op) override;
  void visit(const let* op) override;
  void visit(const call_stmt* op) override;
  void visit(const copy_stmt* op) override;
  void visit(const let_stmt* op) override;
  void visit(const loop* op) override;
  void visit(const allocate* op) override;
  void visit(const make_buffer* op) override;
  void visit(const constant_buffer* op) override;
  void visit(const clone_buffer* op) override;
  void visit(const crop_buffer* op) override;
  void visit(const crop_dim* op) override;
  void visit(const slice_buffer* op) override;
  void visit(const slice_dim* op) override;
  void visit(const transpose* op) override;
  void visit(const async* op) override;
  ///@}

protected:
  /// Mutates body in the scope of a declaration of sym (enter_decl, mutate, exit_decls); sym
  /// becomes the symbol enter_decl returned (unchanged if that was undefined).
  stmt mutate_decl_body(var& sym, const stmt& body);

private:
  template <typename T>
  void visit_lets(const T* op);
};

}  // namespace slinky

#endif  // SLINKY_RUNTIME_SUBSTITUTOR_H
