// The simplifier's expression rewriting: canonical operand order, dispatch of the rule families
// by node kind, the simplifying constructors, and the public simplify entry points.
#include "slinky/builder/simplify.h"

#include <algorithm>
#include <cstddef>
#include <memory>
#include <optional>
#include <unordered_map>
#include <utility>

#include "slinky/builder/simplify_internal.h"
#include "slinky/runtime/depends_on.h"
#include "slinky/runtime/node_finder.h"

namespace slinky {

namespace rewrite_rules {

rule_observer*& thread_rule_observer() {
  static thread_local rule_observer* observer = nullptr;
  return observer;
}

}  // namespace rewrite_rules

namespace internal {

namespace {

// Rules building rules building rules...: beyond this nesting the simplifying constructors stop
// applying rules. Only a cycle in the rules gets this deep.
constexpr int max_rule_depth = 32;

// Canonical order of the operands of commutative operators: constants last, infinities just
// before them, and otherwise node kinds in decreasing order of their enum (so variables come
// after compound expressions), ties broken by the structural order.
int commute_rank(const expr& e) {
  if (e.as<constant>()) return -2;
  if (is_infinity(e)) return -1;
  return static_cast<int>(e.type());
}

bool should_swap_operands(const expr& a, const expr& b) {
  // Two constants: their folding overflowed, leave them alone.
  if (a.as<constant>() && b.as<constant>()) return false;
  const int ra = commute_rank(a);
  const int rb = commute_rank(b);
  if (ra != rb) return ra < rb;
  return compare(a, b) > 0;
}

template <typename T>
bool apply_rules(rule_applicator& r) {
  if constexpr (std::is_same_v<T, add>) {
    return apply_add_rules(r);
  } else if constexpr (std::is_same_v<T, sub>) {
    return apply_sub_rules(r);
  } else if constexpr (std::is_same_v<T, mul>) {
    return apply_mul_rules(r);
  } else if constexpr (std::is_same_v<T, div>) {
    return apply_div_rules(r);
  } else if constexpr (std::is_same_v<T, mod>) {
    return apply_mod_rules(r);
  } else if constexpr (std::is_same_v<T, minimum>) {
    return apply_min_rules(r);
  } else if constexpr (std::is_same_v<T, maximum>) {
    return apply_max_rules(r);
  } else if constexpr (std::is_same_v<T, equal>) {
    return apply_equal_rules(r);
  } else if constexpr (std::is_same_v<T, not_equal>) {
    return apply_not_equal_rules(r);
  } else if constexpr (std::is_same_v<T, less>) {
    return apply_less_rules(r);
  } else if constexpr (std::is_same_v<T, less_equal>) {
    return apply_less_equal_rules(r);
  } else if constexpr (std::is_same_v<T, logical_and>) {
    return apply_logical_and_rules(r);
  } else if constexpr (std::is_same_v<T, logical_or>) {
    return apply_logical_or_rules(r);
  } else if constexpr (std::is_same_v<T, logical_not>) {
    return apply_logical_not_rules(r);
  } else if constexpr (std::is_same_v<T, conditional>) {
    return apply_select_rules(r);
  } else {
    static_assert(std::is_same_v<T, call>, "no rules for this node");
    return apply_abs_rules(r);
  }
}

// The family name of the rules of a node kind (what rule_observer sees).
template <typename T>
const char* family_name() {
  // Found once: rules are applied to millions of nodes.
  static const char* const name = std::is_same_v<T, call> ? "abs" : to_string(T::static_type);
  return name;
}

// Applies the rules of T to e (of kind T, with simplified operands). *applied (if given) tells
// whether a rule applied.
template <typename T>
expr apply_rules_to(simplifier& s, int& depth, expr e, bool* applied = nullptr) {
  if (applied) *applied = false;
  if (depth >= max_rule_depth) return e;
  ++depth;
  rule_applicator r(e, s, family_name<T>());
  const bool rule_applied = apply_rules<T>(r);
  --depth;
  if (!rule_applied) return e;
  if (applied) *applied = true;
  return std::move(r.result);
}

// Calls fn with each buffer symbol a statement node itself uses (not in its expressions or its
// body): what symbol_search and stmt_uses count as uses besides variables.
template <typename Fn>
void for_each_buffer_use(const base_stmt_node* op, const Fn& fn) {
  switch (op->type) {
  case stmt_node_type::call_stmt: {
    const call_stmt* c = static_cast<const call_stmt*>(op);
    for (var i : c->inputs) fn(i);
    for (var i : c->outputs) fn(i);
    break;
  }
  case stmt_node_type::copy_stmt: {
    const copy_stmt* c = static_cast<const copy_stmt*>(op);
    fn(c->src);
    fn(c->dst);
    fn(c->pad);
    break;
  }
  case stmt_node_type::clone_buffer: fn(static_cast<const clone_buffer*>(op)->src); break;
  case stmt_node_type::crop_buffer: fn(static_cast<const crop_buffer*>(op)->src); break;
  case stmt_node_type::crop_dim: fn(static_cast<const crop_dim*>(op)->src); break;
  case stmt_node_type::slice_buffer: fn(static_cast<const slice_buffer*>(op)->src); break;
  case stmt_node_type::slice_dim: fn(static_cast<const slice_dim*>(op)->src); break;
  case stmt_node_type::transpose: fn(static_cast<const transpose*>(op)->src); break;
  default: break;
  }
}

// Finds a use (as node_mutator.h's depends_on) or a declaration of a symbol, in statements and
// in let expressions, and stops at the first one: most declared symbols are used early in their
// scope, so this is usually much cheaper than a full traversal.
class symbol_search {
  var v_;
  bool declarations_;

  bool use(var sym) const { return !declarations_ && sym == v_; }
  bool declare(var sym) const { return declarations_ && sym == v_; }
  bool uses_buffer(const base_stmt_node* op) const {
    bool found = false;
    if (!declarations_) for_each_buffer_use(op, [&](var b) { found = found || b == v_; });
    return found;
  }
  template <typename T>
  bool declare_lets(const T* op) const {
    for (const auto& l : op->lets) {
      if (declare(l.first)) return true;
    }
    return false;
  }

public:
  symbol_search(var v, bool declarations) : v_(v), declarations_(declarations) {}

  bool operator()(const variable* op) const { return use(op->sym); }
  bool operator()(const let* op) const { return declare_lets(op); }
  bool operator()(const let_stmt* op) const { return declare_lets(op); }
  bool operator()(const call_stmt* op) const { return uses_buffer(op); }
  bool operator()(const copy_stmt* op) const {
    if (uses_buffer(op)) return true;
    for (var i : op->dst_x) {
      if (declare(i)) return true;
    }
    return false;
  }
#define SLINKY_DECLARATION(node)                                                                                       \
  bool operator()(const node* op) const { return declare(op->sym); }
  SLINKY_DECLARATION(loop)
  SLINKY_DECLARATION(allocate)
  SLINKY_DECLARATION(make_buffer)
  SLINKY_DECLARATION(constant_buffer)
  SLINKY_DECLARATION(async)
#undef SLINKY_DECLARATION
#define SLINKY_BUFFER_DECLARATION(node)                                                                                \
  bool operator()(const node* op) const { return uses_buffer(op) || declare(op->sym); }
  SLINKY_BUFFER_DECLARATION(clone_buffer)
  SLINKY_BUFFER_DECLARATION(crop_buffer)
  SLINKY_BUFFER_DECLARATION(crop_dim)
  SLINKY_BUFFER_DECLARATION(slice_buffer)
  SLINKY_BUFFER_DECLARATION(slice_dim)
  SLINKY_BUFFER_DECLARATION(transpose)
#undef SLINKY_BUFFER_DECLARATION
};

}  // namespace

bool contains_infinity(const expr& e) {
  return any_node(e, [](const call* op) {
    return op->intrinsic == intrinsic::positive_infinity || op->intrinsic == intrinsic::negative_infinity;
  });
}

bool is_boolean_form(const expr& e) {
  if (is_boolean(e)) return true;
  const conditional* op = e.as<conditional>();
  return op && is_boolean_form(op->true_value) && is_boolean_form(op->false_value);
}

bool has_side_effects(const expr& e) {
  // Not !is_pure: reading buffer metadata or base pointers has no effect, and may be removed.
  return slinky::has_side_effects(e) || any_node(e, [](const call* op) { return op->intrinsic == intrinsic::none; });
}

bool declares(const stmt& s, var v) { return any_node(s, symbol_search(v, /*declarations=*/true)); }
bool declares(const expr& e, var v) { return any_node(e, symbol_search(v, /*declarations=*/true)); }
bool uses(const stmt& s, var v) { return any_node(s, symbol_search(v, /*declarations=*/false)); }
bool uses(const expr& e, var v) { return any_node(e, symbol_search(v, /*declarations=*/false)); }
bool uses(const interval_expr& i, var v) { return uses(i.min, v) || uses(i.max, v); }

const stmt_uses::symbol_set& stmt_uses::symbols_of(const stmt& s) {
  auto found = memo_.find(s.get());
  if (found != memo_.end()) return found->second.symbols;
  // The node's own uses (in its expressions, and the buffers it names), and the sets of the
  // statements inside it.
  std::vector<symbol_id> own;
  std::vector<symbol_set> inner;
  const base_stmt_node* root = s.get();
  auto add = [&](var v) {
    if (v.defined()) own.push_back(v.sym());
  };
  any_node(
      s,
      [&](const variable* op) {
        add(op->sym);
        return false;
      },
      [&](const base_stmt_node* op) {
        if (op != root) {
          inner.push_back(symbols_of(stmt(op)));
          return node_search::skip_children;
        }
        for_each_buffer_use(op, add);
        return node_search::search_children;
      });
  // The largest inner set is the layer below this node's; the symbols of the rest that it does
  // not have are this node's layer.
  std::size_t largest = 0;
  for (std::size_t i = 1; i < inner.size(); ++i) {
    if (inner[i]->depth + inner[i]->symbols.size() > inner[largest]->depth + inner[largest]->symbols.size()) {
      largest = i;
    }
  }
  for (std::size_t i = 0; i < inner.size(); ++i) {
    if (i != largest) append_all(inner[i].get(), own);
  }
  const symbol_layer* below = inner.empty() ? nullptr : inner[largest].get();
  own.erase(std::remove_if(own.begin(), own.end(), [&](symbol_id i) { return contains(below, i); }), own.end());
  std::sort(own.begin(), own.end());
  own.erase(std::unique(own.begin(), own.end()), own.end());
  symbol_set result;
  if (below && own.empty()) {
    result = inner[largest];
  } else if (below && below->depth + 1 < max_layers) {
    result = std::make_shared<const symbol_layer>(symbol_layer{std::move(own), inner[largest], below->depth + 1});
  } else {
    append_all(below, own);
    std::sort(own.begin(), own.end());
    own.erase(std::unique(own.begin(), own.end()), own.end());
    result = std::make_shared<const symbol_layer>(symbol_layer{std::move(own), nullptr, 0});
  }
  entry& e = memo_[root];
  e.node = s;
  e.symbols = std::move(result);
  return e.symbols;
}

bool stmt_uses::contains(const symbol_layer* set, symbol_id i) {
  for (; set; set = set->below.get()) {
    if (std::binary_search(set->symbols.begin(), set->symbols.end(), i)) return true;
  }
  return false;
}

void stmt_uses::append_all(const symbol_layer* set, std::vector<symbol_id>& to) {
  for (; set; set = set->below.get()) to.insert(to.end(), set->symbols.begin(), set->symbols.end());
}

bool stmt_uses::uses(const stmt& s, var v) {
  if (!s.defined()) return false;
  return contains(symbols_of(s).get(), v.sym());
}

namespace {

const alignment_map& no_alignment() {
  static const alignment_map none;
  return none;
}

}  // namespace

simplifier::simplifier(const bounds_map& bounds, bool use_bounds, const alignment_map& alignment)
    : shared_bounds_(&bounds), shared_alignment_(&alignment), use_bounds_(use_bounds) {}
simplifier::simplifier(const bounds_map& bounds, bool use_bounds)
    : shared_bounds_(&bounds), shared_alignment_(&no_alignment()), use_bounds_(use_bounds) {}
simplifier::simplifier(bounds_map&& bounds, bool use_bounds)
    : shared_bounds_(nullptr), own_bounds_(std::move(bounds)), owns_bounds_(true), shared_alignment_(&no_alignment()),
      use_bounds_(use_bounds) {}

bounds_map& simplifier::mutable_bounds() {
  if (!owns_bounds_) {
    own_bounds_ = *shared_bounds_;
    owns_bounds_ = true;
  }
  return own_bounds_;
}

alignment_map& simplifier::mutable_alignment() {
  if (!owns_alignment_) {
    own_alignment_ = *shared_alignment_;
    owns_alignment_ = true;
  }
  return own_alignment_;
}

simplifier::~simplifier() = default;

simplifier::scope::~scope() {
  while (s_.undo_.size() > undo_size_) {
    undo_entry& u = s_.undo_.back();
    s_.mutable_bounds().set(u.sym, std::move(u.bounds));
    s_.values_.set(u.sym, std::move(u.value));
    if (u.alignment || s_.alignment().lookup(u.sym)) s_.mutable_alignment().set(u.sym, std::move(u.alignment));
    s_.undo_.pop_back();
  }
  s_.bounded_.resize(bounded_size_);
  ++s_.generation_;
}

void simplifier::declare(var sym, std::optional<interval_expr> bounds, expr value,
                         std::optional<alignment_type> alignment) {
  ++generation_;
  // Bounds in terms of sym itself refer to the outer sym, which the declaration hides.
  if (bounds && uses(*bounds, sym)) bounds = std::nullopt;
  if (!given_bounds_found_) {
    const bounds_map& given = this->bounds();
    for (std::size_t i = 0; i < given.size(); ++i) {
      if (given.lookup(i)) given_bounds_.push_back(var(i));
    }
    given_bounds_found_ = true;
  }
  bounds_map& map = mutable_bounds();
  undo_.push_back({sym, map.lookup(sym), values_.lookup(sym), this->alignment().lookup(sym)});
  // Bounds that refer to sym meant an outer symbol of the same id; they do not apply here.
  auto forget_uses = [&](const std::vector<var>& symbols) {
    for (var i : symbols) {
      const std::optional<interval_expr>& b = map.lookup(i);
      if (i == sym || !b || !uses(*b, sym)) continue;
      undo_.push_back({i, b, values_.lookup(i), this->alignment().lookup(i)});
      map.set(i, std::nullopt);
    }
  };
  forget_uses(given_bounds_);
  forget_uses(bounded_);
  if (bounds) bounded_.push_back(sym);
  map.set(sym, std::move(bounds));
  values_.set(sym, value.defined() ? std::optional<expr>(std::move(value)) : std::nullopt);
  if (alignment && *alignment == alignment_type()) alignment = std::nullopt;
  if (alignment || this->alignment().lookup(sym)) mutable_alignment().set(sym, std::move(alignment));
}

simplifier& simplifier::endpoint_maker() {
  if (!endpoint_maker_) endpoint_maker_ = std::make_unique<simplifier>(bounds_map(), false);
  return *endpoint_maker_;
}

template <typename T>
expr simplifier::simplify_binary(const T* op, expr a, expr b) {
  if constexpr (rewrite_rules::is_commutative<T>()) {
    if (should_swap_operands(a, b)) std::swap(a, b);
  }
  expr e = op && unchanged(a, op->a, b, op->b) ? expr(op) : T::make(std::move(a), std::move(b));
  if constexpr (std::is_same_v<T, mod> || std::is_same_v<T, mul> || std::is_same_v<T, equal> ||
                std::is_same_v<T, not_equal>) {
    bool applied;
    expr result = apply_rules_to<T>(*this, depth_, std::move(e), &applied);
    return applied ? result : apply_alignment<T>(std::move(result));
  } else {
    return apply_rules_to<T>(*this, depth_, std::move(e));
  }
}

template <typename T>
expr simplifier::apply_alignment(expr e) {
  const T* op = e.as<T>();
  if (!op) return e;
  if constexpr (std::is_same_v<T, mod>) {
    // x % c is a constant if the alignment of x fixes its remainder modulo c.
    std::optional<index_t> c = as_constant(op->b);
    if (!c || *c == 0) return e;
    const alignment_type r = alignment_of(op->a) % *c;
    if (r.is_constant()) return r.remainder;
  } else if constexpr (std::is_same_v<T, mul>) {
    // (x / c) * c == x - x % c.
    const div* d = op->a.template as<div>();
    std::optional<index_t> c = as_constant(op->b);
    if (!d || !c || *c == 0 || !is_constant(d->b, *c)) return e;
    const alignment_type r = alignment_of(d->a) % *c;
    if (r.is_constant()) return make<sub>(d->a, r.remainder);
  } else {
    // x == y is false where x - y is never 0.
    const alignment_type a = alignment_of(op->a);
    if (a == alignment_type()) return e;
    if (!(a - alignment_of(op->b)).contains(0)) return std::is_same_v<T, equal> ? 0 : 1;
  }
  return e;
}

alignment_type simplifier::alignment_of(const expr& e) const {
  // An unknown operand makes the result unknown for every operator but *, so it returns early.
  const alignment_type unknown;
  switch (e.type()) {
  case expr_node_type::constant: return alignment_type::constant(e.as<constant>()->value);
  case expr_node_type::variable: {
    const variable* v = e.as<variable>();
    if (v->field != buffer_field::none) return unknown;
    const std::optional<alignment_type>& a = alignment().lookup(v->sym);
    return a ? *a : unknown;
  }
  case expr_node_type::add: {
    const add* op = e.as<add>();
    const alignment_type a = alignment_of(op->a);
    return a == unknown ? a : a + alignment_of(op->b);
  }
  case expr_node_type::sub: {
    const sub* op = e.as<sub>();
    const alignment_type a = alignment_of(op->a);
    return a == unknown ? a : a - alignment_of(op->b);
  }
  case expr_node_type::mul: {
    const mul* op = e.as<mul>();
    return alignment_of(op->a) * alignment_of(op->b);
  }
  case expr_node_type::div: {
    const div* op = e.as<div>();
    if (!as_constant(op->b)) return unknown;
    return alignment_of(op->a) / alignment_of(op->b);
  }
  case expr_node_type::mod: {
    const mod* op = e.as<mod>();
    if (!as_constant(op->b)) return unknown;
    return alignment_of(op->a) % alignment_of(op->b);
  }
  case expr_node_type::min:
  case expr_node_type::max: {
    const binary_op* op = static_cast<const binary_op*>(e.get());
    const alignment_type a = alignment_of(op->a);
    return a == unknown ? a : a | alignment_of(op->b);
  }
  case expr_node_type::select: {
    const conditional* op = e.as<conditional>();
    const alignment_type t = alignment_of(op->true_value);
    return t == unknown ? t : t | alignment_of(op->false_value);
  }
  case expr_node_type::none:
  case expr_node_type::let:
  case expr_node_type::equal:
  case expr_node_type::not_equal:
  case expr_node_type::less:
  case expr_node_type::less_equal:
  case expr_node_type::logical_and:
  case expr_node_type::logical_or:
  case expr_node_type::logical_not:
  case expr_node_type::call: return unknown;
  }
  return unknown;
}

template <typename T>
expr simplifier::make(expr a, expr b) {
  return simplify_binary<T>(nullptr, std::move(a), std::move(b));
}

// The instantiations the rules and the other source files use.
#define SLINKY_X(name) template expr simplifier::make<class name>(expr, expr);
SLINKY_FOR_EACH_BINARY_NODE(SLINKY_X)
#undef SLINKY_X

expr simplifier::make_not(expr a) { return simplify_not(nullptr, std::move(a)); }

expr simplifier::make_select(expr c, expr t, expr f) {
  return simplify_select(nullptr, std::move(c), std::move(t), std::move(f));
}

expr simplifier::simplify_not(const logical_not* op, expr a) {
  expr e = op && a.same_as(op->a) ? expr(op) : logical_not::make(std::move(a));
  return apply_rules_to<logical_not>(*this, depth_, std::move(e));
}

expr simplifier::simplify_select(const conditional* op, expr c, expr t, expr f) {
  expr e = op && unchanged(c, op->condition, t, op->true_value, f, op->false_value)
               ? expr(op)
               : conditional::make(std::move(c), std::move(t), std::move(f));
  return apply_rules_to<conditional>(*this, depth_, std::move(e));
}

expr simplifier::simplify_call(const call* op, intrinsic fn, std::vector<expr> args) {
  const bool same = op && op->intrinsic == fn && unchanged(args, op->args);
  if ((fn == intrinsic::and_then || fn == intrinsic::or_else) && !args.empty()) {
    // Constant operands fold (with the short circuit: a constant that decides the result is
    // enough, whatever follows).
    const bool stop_value = fn == intrinsic::or_else;
    bool all_constant = true;
    for (const expr& i : args) {
      std::optional<index_t> c = as_constant(i);
      if (!c) {
        all_constant = false;
        break;
      }
      if ((*c != 0) == stop_value) return stop_value ? 1 : 0;
    }
    if (all_constant) return stop_value ? 0 : 1;
  }
  expr e = same ? expr(op) : call::make(fn, op ? op->target : call::callable(), std::move(args));
  if (fn == intrinsic::abs && e.as<call>()->args.size() == 1) e = apply_rules_to<call>(*this, depth_, std::move(e));
  return e;
}

expr simplifier::make_abs(expr a) {
  return apply_rules_to<call>(*this, depth_, call::make(intrinsic::abs, {std::move(a)}));
}

void simplifier::visit(const variable* op) {
  const expr* value = values_.find(op->sym);
  if (!value) {
    set_result(expr(op));
  } else if (op->field == buffer_field::none) {
    set_result(*value);
  } else if (std::optional<var> v = as_variable(*value)) {
    // The metadata of a buffer symbol replaced by another symbol.
    set_result(variable::make(*v, op->field, op->dim));
  } else {
    set_result(expr(op));
  }
}

#define SLINKY_VISIT_BINARY(node)                                                                                      \
  void simplifier::visit(const class node* op) { set_result(simplify_binary(op, mutate(op->a), mutate(op->b))); }
SLINKY_FOR_EACH_BINARY_NODE(SLINKY_VISIT_BINARY)
#undef SLINKY_VISIT_BINARY

void simplifier::visit(const logical_not* op) { set_result(simplify_not(op, mutate(op->a))); }

void simplifier::visit(const conditional* op) {
  expr c = mutate(op->condition);
  expr t = mutate(op->true_value);
  expr f = mutate(op->false_value);
  set_result(simplify_select(op, std::move(c), std::move(t), std::move(f)));
}

void simplifier::visit(const call* op) { set_result(simplify_call(op, op->intrinsic, mutate(op->args))); }

}  // namespace internal

using internal::has_entries;
using internal::hash_combine;

// User calls (equal only to themselves) hash their node.
std::size_t internal::structural_hash(const base_expr_node* e) {
  if (!e) return 0;
  std::size_t h = static_cast<std::size_t>(e->type) + 1;
  switch (e->type) {
  case expr_node_type::none: return h;
  case expr_node_type::variable: {
    const variable* v = static_cast<const variable*>(e);
    h = hash_combine(h, v->sym.id);
    h = hash_combine(h, static_cast<std::size_t>(v->field));
    return hash_combine(h, static_cast<std::size_t>(v->dim));
  }
  case expr_node_type::constant:
    return hash_combine(h, static_cast<std::size_t>(static_cast<const constant*>(e)->value));
  case expr_node_type::let: {
    const let* l = static_cast<const let*>(e);
    for (const auto& i : l->lets) h = hash_combine(hash_combine(h, i.first.id), structural_hash(i.second.get()));
    return hash_combine(h, structural_hash(l->body.get()));
  }
#define SLINKY_X(name)                                                                                                 \
  case expr_node_type::name: {                                                                                         \
    const class name* b = static_cast<const class name*>(e);                                                           \
    return hash_combine(hash_combine(h, structural_hash(b->a.get())), structural_hash(b->b.get()));                    \
  }
    SLINKY_FOR_EACH_BINARY_NODE(SLINKY_X)
#undef SLINKY_X
  case expr_node_type::logical_not:
    return hash_combine(h, structural_hash(static_cast<const logical_not*>(e)->a.get()));
  case expr_node_type::select: {
    const conditional* c = static_cast<const conditional*>(e);
    h = hash_combine(h, structural_hash(c->condition.get()));
    h = hash_combine(h, structural_hash(c->true_value.get()));
    return hash_combine(h, structural_hash(c->false_value.get()));
  }
  case expr_node_type::call: {
    const call* c = static_cast<const call*>(e);
    h = hash_combine(h, static_cast<std::size_t>(c->intrinsic));
    if (c->target) return hash_combine(h, reinterpret_cast<std::size_t>(e));
    for (const expr& i : c->args) h = hash_combine(h, structural_hash(i.get()));
    return h;
  }
  }
  return h;
}

namespace {

// A simplification without bounds, alignment or memo.
expr simplify_plain(const expr& e) { return internal::simplifier(bounds_map(), true).mutate(e); }

// Simplifying without bounds or alignment depends only on the structure of the expression, and
// bounds inference simplifies the same few expressions over and over (each func of a chain of
// similar ones needs the same region of its input). This thread's recent results, by structure;
// bypassed while a rule observer (tests of the rules) is watching.
class simplify_memo {
  struct entry {
    expr in, out;
  };
  static constexpr std::size_t max_entries = 4096;
  std::unordered_map<std::size_t, entry> entries_;

public:
  expr simplify(const expr& e) {
    if (!e.defined() || e.as<constant>() || e.as<variable>()) return simplify_plain(e);
    const std::size_t h = internal::structural_hash(e.get());
    auto i = entries_.find(h);
    if (i != entries_.end() && match(i->second.in, e)) {
      // An input that was already simplified comes back as itself (same_as), like without the memo.
      return i->second.out.same_as(i->second.in) ? e : i->second.out;
    }
    expr result = simplify_plain(e);
    if (entries_.size() >= max_entries) entries_.clear();
    entries_[h] = {e, result};
    return result;
  }
};

expr simplify_without_bounds(const expr& e) {
  if (rewrite_rules::thread_rule_observer()) return simplify_plain(e);
  static thread_local simplify_memo memo;
  return memo.simplify(e);
}

}  // namespace

bool internal::has_undefined_operand(const expr& e) {
  const base_expr_node* n = e.get();
  if (!n) return true;
  switch (n->type) {
  case expr_node_type::none:
  case expr_node_type::variable:
  case expr_node_type::constant: return false;
  case expr_node_type::let: {
    const let* l = static_cast<const let*>(n);
    for (const auto& i : l->lets) {
      if (has_undefined_operand(i.second)) return true;
    }
    return has_undefined_operand(l->body);
  }
#define SLINKY_BINARY_CASE(node) case expr_node_type::node:
    SLINKY_FOR_EACH_BINARY_NODE(SLINKY_BINARY_CASE) {
      const binary_op* b = static_cast<const binary_op*>(n);
      return has_undefined_operand(b->a) || has_undefined_operand(b->b);
    }
#undef SLINKY_BINARY_CASE
  case expr_node_type::logical_not: return has_undefined_operand(static_cast<const logical_not*>(n)->a);
  case expr_node_type::select: {
    const conditional* s = static_cast<const conditional*>(n);
    return has_undefined_operand(s->condition) || has_undefined_operand(s->true_value) ||
           has_undefined_operand(s->false_value);
  }
  case expr_node_type::call: {
    const call* c = static_cast<const call*>(n);
    // The semaphore intrinsics take optional (undefined) counts.
    const bool optional_args = c->intrinsic == intrinsic::semaphore_init ||
                               c->intrinsic == intrinsic::semaphore_signal || c->intrinsic == intrinsic::semaphore_wait;
    for (const expr& a : c->args) {
      if (a.defined() ? has_undefined_operand(a) : !optional_args) return true;
    }
    return false;
  }
  }
  return false;
}

expr simplify(const expr& e, const bounds_map& bounds, const alignment_map& alignment) {
  // An expression with an undefined part (a client's unknown extent) simplifies to undefined.
  if (internal::has_undefined_operand(e)) return expr();
  if (!has_entries(bounds) && !has_entries(alignment)) return simplify_without_bounds(e);
  internal::simplifier s(bounds, true, alignment);
  return s.mutate(e);
}

stmt simplify(const stmt& st, const bounds_map& bounds, const alignment_map& alignment) {
  internal::simplifier s(bounds, true, alignment);
  return s.mutate(st);
}

interval_expr simplify(const interval_expr& i, const bounds_map& bounds, const alignment_map& alignment) {
  // An undefined end (or one with an undefined part) is unbounded.
  if (internal::has_undefined_operand(i.min) || internal::has_undefined_operand(i.max)) {
    const bool point = i.is_point();
    expr min = simplify(i.min, bounds, alignment);
    return interval_expr(min, point ? min : simplify(i.max, bounds, alignment));
  }
  if (!has_entries(bounds) && !has_entries(alignment)) {
    if (i.is_point()) {
      expr p = simplify_without_bounds(i.min);
      return interval_expr(p, p);
    }
    return interval_expr(simplify_without_bounds(i.min), simplify_without_bounds(i.max));
  }
  internal::simplifier s(bounds, true, alignment);
  return s.mutate(i);
}

}  // namespace slinky
