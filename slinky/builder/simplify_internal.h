// The simplifier's mutator, shared by its source files (expressions in simplify.cc, statements in
// simplify_stmt.cc, bounds and proofs in simplify_bounds.cc, rules in simplify_rules_*.cc).
// Not part of the public API.
#ifndef SLINKY_BUILDER_SIMPLIFY_INTERNAL_H
#define SLINKY_BUILDER_SIMPLIFY_INTERNAL_H

#include <cstddef>
#include <memory>
#include <optional>
#include <unordered_map>
#include <vector>

#include "slinky/builder/rewrite.h"
#include "slinky/builder/simplify.h"
#include "slinky/runtime/node_mutator.h"

namespace slinky {
namespace internal {

// Simplifies expressions and statements. Its mutate() expects unsimplified input; the
// simplifying constructors (make, make_not, ...) expect simplified operands and apply the rules
// to the one new node only, so a rule's replacement is simplified as it is built.
//
// Facts (rule predicates such as is_non_negative) are proven from the bounds of the symbols when
// `use_bounds` is set. Without it, only facts evident from an expression itself (constants, its
// structure) are used: bounds_of builds its results with such a simplifier, so that proofs do
// not recurse.
// A hash of an expression's structure, consistent with match() (simplify.cc).
std::size_t structural_hash(const base_expr_node* e);
inline std::size_t hash_combine(std::size_t h, std::size_t v) {
  return h ^ (v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2));
}

// True if s (or e) declares the symbol v anywhere.
bool declares(const stmt& s, var v);
bool declares(const expr& e, var v);
// True if s (or e, i) uses the symbol v (as depends_on, conservatively with respect to shadowing).
bool uses(const stmt& s, var v);
bool uses(const expr& e, var v);
bool uses(const interval_expr& i, var v);

// The symbols each statement uses anywhere in it (as `uses` finds them, declarations aside),
// found once per node: asking whether the body of each of n nested declarations uses its symbol
// searches each body once, instead of searching the bodies inside it again (quadratic in n).
// Holds the statements it has seen, so a node's address stays its own.
class stmt_uses {
public:
  bool uses(const stmt& s, var v);

private:
  // A set of symbols as layers: the symbols a statement adds (sorted, unique) over the set of the
  // largest statement inside it. A statement that adds nothing shares the set inside it; a layer
  // that would be more than max_layers deep is flattened into one. So in a nest of n
  // declarations each level costs what it adds (not the whole set again: n^2 time and memory),
  // and a lookup at most max_layers binary searches.
  struct symbol_layer {
    std::vector<symbol_id> symbols;
    std::shared_ptr<const symbol_layer> below;
    std::size_t depth;
  };
  using symbol_set = std::shared_ptr<const symbol_layer>;
  static constexpr std::size_t max_layers = 16;
  static bool contains(const symbol_layer* set, symbol_id i);
  static void append_all(const symbol_layer* set, std::vector<symbol_id>& to);
  struct entry {
    stmt node;
    symbol_set symbols;
  };
  std::unordered_map<const base_stmt_node*, entry> memo_;
  const symbol_set& symbols_of(const stmt& s);
};

// True if e is undefined or has an undefined operand anywhere (the semaphore intrinsics' optional
// counts aside). The public queries treat such an expression as unknown (API_COMPAT 5.1): simplify
// gives undefined, proofs fail, bounds are unbounded.
bool has_undefined_operand(const expr& e);

// True if a symbol map has a value for some symbol.
template <typename T>
bool has_entries(const symbol_map<T>& m) {
  for (const std::optional<T>& i : m) {
    if (i) return true;
  }
  return false;
}

class simplifier : public node_mutator {
public:
  // The simplifier reads the caller's maps, which must outlive it, until a declaration needs
  // copies of its own (most simplifications of expressions declare nothing, and a copy costs a
  // slot per symbol of the program). A temporary bounds map is moved in instead.
  simplifier(const bounds_map& bounds, bool use_bounds, const alignment_map& alignment);
  simplifier(const bounds_map& bounds, bool use_bounds);
  simplifier(bounds_map&& bounds, bool use_bounds);
  ~simplifier() override;

  using node_mutator::mutate;
  using node_mutator::visit;

  // Simplifying constructors, also the maker of rule replacements.
  template <typename T>
  expr make(expr a, expr b);
  expr make_not(expr a);
  expr make_select(expr c, expr t, expr f);
  expr make_abs(expr a);

  // The simplified logical_not, select or call with the given (simplified) operands; op (which
  // may be null) is reused if the operands are its own and no rule applies.
  expr simplify_not(const logical_not* op, expr a);
  expr simplify_select(const conditional* op, expr c, expr t, expr f);
  expr simplify_call(const call* op, intrinsic fn, std::vector<expr> args);

  // The alignment of e (see alignment_map): exact for constants, from the alignment of symbols
  // and modulus_remainder arithmetic for the arithmetic operators, min, max and select; unknown
  // (modulus 1) otherwise.
  alignment_type alignment_of(const expr& e) const;

  // True if the fact provably holds for e (simplified) within the current bounds.
  bool prove(rewrite_rules::fact f, const expr& e);
  // prove(f, a - b). The bounds of the last difference are kept: questions about a and b often
  // come in pairs (both operand orders of a min, both outcomes of a comparison).
  bool prove_difference(rewrite_rules::fact f, const expr& a, const expr& b);

  // The bounds of e (simplified) within the current bounds; see slinky::bounds_of.
  interval_expr bounds_of(const expr& e);

  // Expressions.
  void visit(const variable* op) override;
  void visit(const let* op) override;
#define SLINKY_X(name) void visit(const class name* op) override;
  SLINKY_FOR_EACH_BINARY_NODE(SLINKY_X)
#undef SLINKY_X
  void visit(const logical_not* op) override;
  void visit(const conditional* op) override;
  void visit(const call* op) override;

  // Statements.
  void visit(const copy_stmt* op) override;
  void visit(const let_stmt* op) override;
  void visit(const loop* op) override;
  void visit(const allocate* op) override;
  void visit(const make_buffer* op) override;
  void visit(const clone_buffer* op) override;
  void visit(const crop_buffer* op) override;
  void visit(const crop_dim* op) override;
  void visit(const slice_buffer* op) override;
  void visit(const slice_dim* op) override;
  void visit(const transpose* op) override;
  void visit(const check* op) override;
  void visit(const if_then_else* op) override;

  // A declaration of sym within the current scope: sym gets the given bounds (or none) and
  // substitution value (or none), and bounds of other symbols that refer to sym (an outer
  // symbol of the same id) are forgotten. Undone by the destructor of the enclosing `scope`.
  // The alignment of sym becomes `alignment` (unknown if empty).
  void declare(var sym, std::optional<interval_expr> bounds, expr value = expr(),
               std::optional<alignment_type> alignment = std::nullopt);

  // Restores the declarations made since its construction when destroyed.
  class scope {
    simplifier& s_;
    std::size_t undo_size_;
    std::size_t bounded_size_;

  public:
    explicit scope(simplifier& s) : s_(s), undo_size_(s.undo_.size()), bounded_size_(s.bounded_.size()) {}
    ~scope();
    scope(const scope&) = delete;
    scope& operator=(const scope&) = delete;
  };

private:
  // The simplified node of kind T with the given (simplified) operands, op reused as above.
  template <typename T>
  expr simplify_binary(const T* op, expr a, expr b);
  // The rewrites that use alignment (see alignment_map), for a node e of kind T to which no
  // rule applied. They are code rather than rules because they compute a value (a remainder)
  // from a fact, which the rule language's predicates cannot express.
  template <typename T>
  expr apply_alignment(expr e);
  template <typename T>
  void visit_lets(const T* op);
  interval_expr mutate_crop_bounds(const interval_expr& bounds, var src, int d);
  // The body of a declaration of sym, simplified.
  stmt mutate_decl_body(var sym, const stmt& body);
  // If body does not use sym, makes body (possibly undefined) the result of the declaration of
  // sym, and returns true.
  bool finish_decl(var sym, const stmt& body);
  // Whether body (simplified) uses sym.
  bool body_uses(const stmt& body, var sym);
  bool body_uses(const expr& body, var sym) { return uses(body, sym); }
  std::unique_ptr<stmt_uses> stmt_uses_;
  simplifier& endpoint_maker();
  // Whether bounds b of a value prove the fact, widening them if needed.
  bool prove_bounds(rewrite_rules::fact f, interval_expr b);
  // True if e has bounds other than itself: it uses symbols with bounds or operators with a
  // limited range of values.
  bool has_range(const expr& e) const;

  struct undo_entry {
    var sym;
    std::optional<interval_expr> bounds;
    std::optional<expr> value;
    std::optional<alignment_type> alignment;
  };

  // Copy on write: the caller's maps until mutable_bounds() or mutable_alignment().
  const bounds_map* shared_bounds_;
  bounds_map own_bounds_;
  bool owns_bounds_ = false;
  const alignment_map* shared_alignment_;
  alignment_map own_alignment_;
  bool owns_alignment_ = false;
  const bounds_map& bounds() const { return owns_bounds_ ? own_bounds_ : *shared_bounds_; }
  const alignment_map& alignment() const { return owns_alignment_ ? own_alignment_ : *shared_alignment_; }
  bounds_map& mutable_bounds();
  alignment_map& mutable_alignment();
  // The symbols the caller's map gives bounds (found at the first declaration).
  std::vector<var> given_bounds_;
  bool given_bounds_found_ = false;
  // Substitutions for symbols (lets of constants and variables).
  symbol_map<expr> values_;
  // Symbols that were given bounds by declarations (for forgetting those that refer to a
  // redeclared symbol; given_bounds_ has the others).
  std::vector<var> bounded_;
  // Conditions of the enclosing if_then_else true bodies, and what they imply (assume_true).
  std::vector<expr> known_true_;
  // Adds c to known_true_, and the conditions it implies: the operands of an and, the negated
  // operands of a negated or (simplified).
  void assume_true(const expr& c);
  // The enclosing allocations, make_buffers (and clones of them) with the bounds of their dims,
  // and the size of undo_ after their declaration: a crop of one of them to bounds equal to its
  // own, in terms of symbols not declared since, does nothing (see crop_keeps_allocated).
  struct allocated_buffer {
    var sym;
    std::vector<interval_expr> bounds;
    // Per dim: folded (a crop of it to its bounds is not a no-op: it may unfold it).
    std::vector<bool> folded;
    std::size_t undo_size;
  };
  std::vector<allocated_buffer> allocated_;
  // The body of an allocate or make_buffer of sym with the given (simplified) dims, simplified
  // in a scope where sym is declared and known as allocated with those dims.
  stmt mutate_allocated_body(var sym, const std::vector<dim_expr>& dims, const stmt& body);
  // True if cropping dim d of src to b keeps it as allocated.
  bool crop_keeps_allocated(const interval_expr& b, var src, std::size_t d) const;
  // The bounds dim d of src was allocated with, if src is an allocation in scope whose bounds
  // mean the same here (nothing they use, nor src, declared again since); else null. Sets
  // *folded to whether the dim was allocated folded.
  const interval_expr* allocated_bounds(var src, std::size_t d, bool* folded = nullptr) const;
  // b without clamps to the bounds src's dim d was allocated with (a crop clamps to them anyway).
  interval_expr strip_allocated_clamps(interval_expr b, var src, std::size_t d) const;
  std::vector<undo_entry> undo_;
  bool use_bounds_;
  // The nesting of simplifying constructors, to stop cycles of rules.
  int depth_ = 0;
  // Changes whenever bounds_ does, to invalidate last_difference_.
  int generation_ = 0;
  struct difference {
    expr a, b;
    int generation = -1;
    // The bounds of a - b, if it has any other than itself.
    std::optional<interval_expr> bounds;
  };
  difference last_difference_;
  std::unique_ptr<simplifier> endpoint_maker_;
};

// The rule families of simplify_rules_*.h applied by the simplifier. They are instantiated in
// simplify_rules_*.cc, several translation units because rule lists are slow to compile.
using rule_applicator = rewrite_rules::rewriter<simplifier>;
bool apply_add_rules(rule_applicator& r);
bool apply_sub_rules(rule_applicator& r);
bool apply_mul_rules(rule_applicator& r);
bool apply_div_rules(rule_applicator& r);
bool apply_mod_rules(rule_applicator& r);
bool apply_min_rules(rule_applicator& r);
bool apply_max_rules(rule_applicator& r);
bool apply_less_rules(rule_applicator& r);
bool apply_less_equal_rules(rule_applicator& r);
bool apply_equal_rules(rule_applicator& r);
bool apply_not_equal_rules(rule_applicator& r);
bool apply_logical_and_rules(rule_applicator& r);
bool apply_logical_or_rules(rule_applicator& r);
bool apply_logical_not_rules(rule_applicator& r);
bool apply_select_rules(rule_applicator& r);
bool apply_abs_rules(rule_applicator& r);

// The bounds of e (see slinky::bounds_of), with endpoints built by `maker`. `bounds` is modified
// while let values are bound, and restored. With free_unbounded, symbols without bounds are
// unbounded instead of their own bounds (so that the result does not use them).
// Constant bounds of symbols are tightened to the nearest values their alignment allows, if
// `alignment` is given.
interval_expr find_bounds(const expr& e, const bounds_map& bounds, simplifier& maker, bool free_unbounded = false,
                          const alignment_map* alignment = nullptr);

// True if e refers to an infinity.
bool contains_infinity(const expr& e);
// True if e is 0 or 1 by its form: is_boolean (a comparison, a logical operator, 0 or 1), or a
// select of such forms.
bool is_boolean_form(const expr& e);
// True if e may not be removed, duplicated or moved: it has side effects or calls a user function
// (runtime/depends_on.h's has_side_effects, or a user call; reads of buffers are fine).
bool has_side_effects(const expr& e);

}  // namespace internal
}  // namespace slinky

#endif  // SLINKY_BUILDER_SIMPLIFY_INTERNAL_H
