// Statement nodes: construction and default traversals.
#include "slinky/runtime/stmt.h"

#include <algorithm>

#include "slinky/base/assert.h"
#include "slinky/runtime/node_mutator.h"

namespace slinky {

const char* to_string(memory_type m) {
  switch (m) {
  case memory_type::automatic: return "automatic";
  case memory_type::stack: return "stack";
  case memory_type::heap: return "heap";
  }
  return "<invalid memory_type>";
}

stmt call_stmt::make(callable target, symbol_list inputs, symbol_list outputs, std::vector<expr> scalars,
                     attributes attrs) {
  return make(std::move(target), std::move(inputs), std::move(outputs), std::move(scalars), std::move(attrs), {});
}

stmt call_stmt::make(callable target, symbol_list inputs, symbol_list outputs, std::vector<expr> scalars,
                     attributes attrs, internal::call_entry entry) {
  auto* n = new call_stmt();
  n->target = std::move(target);
  n->inputs = std::move(inputs);
  n->outputs = std::move(outputs);
  n->scalars = std::move(scalars);
  n->attrs = std::move(attrs);
  n->entry = std::move(entry);
  return stmt(n);
}

namespace {

// Decides whether expressions are affine in one dst variable x (see copy_stmt::dim_plan).
class affine_checker {
  var x_;
  const std::vector<var>& dst_x_;

  bool depends_on_dst(const expr& e) const {
    for (var v : dst_x_) {
      if (depends_on(e, v)) return true;
    }
    return false;
  }

  // Matches x, x + c, c + x, x - c with c free of dst variables; sets offset to c.
  bool match_shifted_x(const expr& e, expr& offset) const {
    if (is_variable(e, x_)) {
      offset = 0;
      return true;
    }
    if (const add* op = e.as<add>()) {
      if (is_variable(op->a, x_) && !depends_on_dst(op->b)) {
        offset = op->b;
        return true;
      }
      if (is_variable(op->b, x_) && !depends_on_dst(op->a)) {
        offset = op->a;
        return true;
      }
    } else if (const sub* op = e.as<sub>()) {
      if (is_variable(op->a, x_) && !depends_on_dst(op->b)) {
        offset = -op->b;
        return true;
      }
    }
    return false;
  }

  // x occurs as (x + offset) / period or (x + offset) % period.
  template <typename T>
  bool check_block_index(const T* op) {
    expr offset;
    if (!match_shifted_x(op->a, offset) || depends_on_dst(op->b)) return false;
    if (!period.defined()) {
      period = op->b;
      this->offset = offset;
      return true;
    }
    return match(period, op->b) && match(this->offset, offset);
  }

public:
  expr period;
  expr offset;

  affine_checker(var x, const std::vector<var>& dst_x) : x_(x), dst_x_(dst_x) {}

  bool check(const expr& e) {
    if (!depends_on(e, x_)) return true;
    if (is_variable(e, x_)) return true;
    if (const add* op = e.as<add>()) return check(op->a) && check(op->b);
    if (const sub* op = e.as<sub>()) return check(op->a) && check(op->b);
    if (const mul* op = e.as<mul>()) {
      if (!depends_on(op->a, x_)) return !depends_on_dst(op->a) && check(op->b);
      if (!depends_on(op->b, x_)) return !depends_on_dst(op->b) && check(op->a);
      return false;
    }
    if (const div* op = e.as<div>()) return check_block_index(op);
    if (const mod* op = e.as<mod>()) return check_block_index(op);
    // A condition free of dst variables takes one branch for the whole copy: affine if both are
    // (with the same blocks).
    if (const class select* op = e.as<class select>()) {
      return !depends_on_dst(op->condition) && check(op->true_value) && check(op->false_value);
    }
    return false;
  }
};

// Recognizes src coordinates that are digits (L / Q) % E of linear forms L of the dst
// variables (see copy_stmt::flat_digit).
class digit_parser {
  const std::vector<var>& dst_x_;

  bool depends_on_dst(const expr& e) const {
    for (var v : dst_x_) {
      if (depends_on(e, v)) return true;
    }
    return false;
  }

  static void add_to(expr& sum, const expr& term) { sum = sum.defined() ? sum + term : term; }

public:
  explicit digit_parser(const std::vector<var>& dst_x) : dst_x_(dst_x) {}

  // Adds scale * e to d's linear form; false if e is not linear in the dst variables.
  bool linear(const expr& e, const expr& scale, copy_stmt::flat_digit& d) const {
    if (!depends_on_dst(e)) {
      add_to(d.offset, scale * e);
      return true;
    }
    for (std::size_t j = 0; j < dst_x_.size(); ++j) {
      if (is_variable(e, dst_x_[j])) {
        add_to(d.coeffs[j], scale);
        return true;
      }
    }
    if (const add* op = e.as<add>()) return linear(op->a, scale, d) && linear(op->b, scale, d);
    if (const sub* op = e.as<sub>()) return linear(op->a, scale, d) && linear(op->b, -scale, d);
    if (const mul* op = e.as<mul>()) {
      if (!depends_on_dst(op->a)) return linear(op->b, scale * op->a, d);
      if (!depends_on_dst(op->b)) return linear(op->a, scale * op->b, d);
    }
    return false;
  }

  // L / Q, or L / Q + M and M + L / Q (the simplifier moves multiples of Q out of a division),
  // as (L + M * Q) / Q; sets has_div if there is a division.
  bool quotient(const expr& e, copy_stmt::flat_digit& d, bool& has_div) const {
    if (const div* op = e.as<div>()) {
      if (depends_on_dst(op->b)) return false;
      d.divisor = op->b;
      has_div = true;
      return linear(op->a, 1, d);
    }
    if (const add* op = e.as<add>()) {
      if (op->a.as<div>()) return quotient(op->a, d, has_div) && linear(op->b, d.divisor, d);
      if (op->b.as<div>()) return quotient(op->b, d, has_div) && linear(op->a, d.divisor, d);
    }
    d.divisor = 1;
    return linear(e, 1, d);
  }

  // e as a digit; has_div_mod says whether it has a division or a modulus.
  bool digit(const expr& e, copy_stmt::flat_digit& d, bool& has_div_mod) const {
    d.coeffs.assign(dst_x_.size(), expr());
    has_div_mod = false;
    if (const mod* op = e.as<mod>()) {
      if (depends_on_dst(op->b)) return false;
      d.modulus = op->b;
      has_div_mod = true;
      bool has_div = false;
      return quotient(op->a, d, has_div);
    }
    return quotient(e, d, has_div_mod);
  }
};

// The digits of src_x, if src_x unpacks a flat index of dst (copy_stmt::flat); empty otherwise.
std::vector<copy_stmt::flat_digit> flat_digits(const std::vector<expr>& src_x, const std::vector<var>& dst_x) {
  digit_parser parser(dst_x);
  std::vector<copy_stmt::flat_digit> digits(src_x.size());
  std::vector<bool> is_digit(src_x.size(), false);
  std::vector<bool> used(dst_x.size(), false);
  bool any = false;
  for (std::size_t k = 0; k < src_x.size(); ++k) {
    bool has_div_mod = false;
    copy_stmt::flat_digit d;
    if (!parser.digit(src_x[k], d, has_div_mod) || !has_div_mod) continue;
    any = true;
    is_digit[k] = true;
    for (std::size_t j = 0; j < dst_x.size(); ++j) used[j] = used[j] || d.coeffs[j].defined();
    digits[k] = std::move(d);
  }
  if (!any) return {};
  // The other coordinates must not use the digits' variables.
  for (std::size_t k = 0; k < src_x.size(); ++k) {
    if (is_digit[k]) continue;
    for (std::size_t j = 0; j < dst_x.size(); ++j) {
      if (used[j] && depends_on(src_x[k], dst_x[j])) return {};
    }
  }
  return digits;
}

}  // namespace

stmt copy_stmt::make(callable impl, var src, std::vector<expr> src_x, var dst, std::vector<var> dst_x, var pad) {
  auto* n = new copy_stmt();
  n->impl = std::move(impl);
  n->src = src;
  n->src_x = std::move(src_x);
  n->dst = dst;
  n->dst_x = std::move(dst_x);
  n->pad = pad;
  n->plan.resize(n->dst_x.size());
  for (std::size_t j = 0; j < n->dst_x.size(); ++j) {
    affine_checker checker(n->dst_x[j], n->dst_x);
    bool affine = true;
    for (const expr& e : n->src_x) affine = affine && checker.check(e);
    if (!affine) continue;
    n->plan[j].period = checker.period.defined() ? checker.period : expr(1);
    n->plan[j].offset = checker.offset.defined() ? checker.offset : expr(0);
  }
  n->flat = flat_digits(n->src_x, n->dst_x);
  return stmt(n);
}

stmt let_stmt::make(std::vector<std::pair<var, expr>> lets, stmt body, bool is_closure) {
  if (lets.empty() && !is_closure) return body;
  auto* n = new let_stmt();
  n->lets = std::move(lets);
  n->body = std::move(body);
  n->is_closure = is_closure;
  return stmt(n);
}

const let_stmt* is_closure(const stmt& s) {
  const let_stmt* l = s.as<let_stmt>();
  return l && l->is_closure ? l : nullptr;
}

stmt block::make(std::vector<stmt> stmts) {
  std::vector<stmt> flat;
  flat.reserve(stmts.size());
  for (stmt& s : stmts) {
    if (!s.defined()) continue;
    if (const block* b = s.as<block>()) {
      flat.insert(flat.end(), b->stmts.begin(), b->stmts.end());
    } else {
      flat.push_back(std::move(s));
    }
  }
  if (flat.empty()) return stmt();
  if (flat.size() == 1) return flat.front();
  auto* n = new block();
  n->stmts = std::move(flat);
  return stmt(n);
}

stmt block::make(std::vector<stmt> stmts, stmt tail) {
  stmts.push_back(std::move(tail));
  return make(std::move(stmts));
}

stmt loop::make(var sym, expr max_workers, interval_expr bounds, expr step, stmt body) {
  SLINKY_ASSERT(sym.defined(), "a loop needs a variable");
  auto* n = new loop();
  n->sym = sym;
  n->max_workers = max_workers.defined() ? std::move(max_workers) : expr(serial);
  n->bounds = std::move(bounds);
  n->step = step.defined() ? std::move(step) : expr(1);
  n->body = std::move(body);
  return stmt(n);
}

bool loop::is_serial() const { return is_constant(max_workers, serial); }

stmt allocate::make(var sym, memory_type storage, expr elem_size, std::vector<dim_expr> dims, stmt body) {
  auto* n = new allocate();
  n->sym = sym;
  n->storage = storage;
  n->elem_size = std::move(elem_size);
  n->dims = std::move(dims);
  n->body = std::move(body);
  return stmt(n);
}

stmt make_buffer::make(var sym, expr base, expr elem_size, std::vector<dim_expr> dims, stmt body) {
  auto* n = new make_buffer();
  n->sym = sym;
  n->base = std::move(base);
  n->elem_size = std::move(elem_size);
  n->dims = std::move(dims);
  n->body = std::move(body);
  return stmt(n);
}

stmt clone_buffer::make(var sym, var src, stmt body) {
  auto* n = new clone_buffer();
  n->sym = sym;
  n->src = src;
  n->body = std::move(body);
  return stmt(n);
}

stmt crop_buffer::make(var sym, var src, box_expr bounds, stmt body) {
  auto* n = new crop_buffer();
  n->sym = sym;
  n->src = src;
  n->bounds = std::move(bounds);
  n->body = std::move(body);
  return stmt(n);
}

stmt crop_dim::make(var sym, var src, int dim, interval_expr bounds, stmt body) {
  SLINKY_ASSERT(dim >= 0, "dimension index must not be negative");
  auto* n = new crop_dim();
  n->sym = sym;
  n->src = src;
  n->dim = dim;
  n->bounds = std::move(bounds);
  n->body = std::move(body);
  return stmt(n);
}

stmt slice_buffer::make(var sym, var src, std::vector<expr> at, stmt body) {
  auto* n = new slice_buffer();
  n->sym = sym;
  n->src = src;
  n->at = std::move(at);
  n->body = std::move(body);
  return stmt(n);
}

stmt slice_dim::make(var sym, var src, int dim, expr at, stmt body) {
  SLINKY_ASSERT(dim >= 0, "dimension index must not be negative");
  auto* n = new slice_dim();
  n->sym = sym;
  n->src = src;
  n->dim = dim;
  n->at = std::move(at);
  n->body = std::move(body);
  return stmt(n);
}

stmt transpose::make(var sym, var src, std::vector<int> dims, stmt body) {
  auto* n = new transpose();
  n->sym = sym;
  n->src = src;
  n->dims = std::move(dims);
  n->body = std::move(body);
  return stmt(n);
}

stmt transpose::make_truncate(var sym, var src, int rank, stmt body) {
  std::vector<int> dims(std::max(rank, 0));
  for (int i = 0; i < rank; ++i) dims[i] = i;
  return make(sym, src, std::move(dims), std::move(body));
}

bool transpose::is_truncate(span<const int> dims) {
  for (std::size_t i = 0; i < dims.size(); ++i) {
    if (dims[i] != static_cast<int>(i)) return false;
  }
  return true;
}

stmt constant_buffer::make(var sym, const_raw_buffer_ptr value, stmt body) {
  auto* n = new constant_buffer();
  n->sym = sym;
  n->value = std::move(value);
  n->body = std::move(body);
  return stmt(n);
}

stmt async::make(var sym, stmt task, stmt body) {
  auto* n = new async();
  n->sym = sym;
  n->task = std::move(task);
  n->body = std::move(body);
  return stmt(n);
}

stmt check::make(expr condition) {
  auto* n = new check();
  n->condition = std::move(condition);
  return stmt(n);
}

stmt if_then_else::make(expr condition, stmt true_body, stmt false_body) {
  auto* n = new if_then_else();
  n->condition = std::move(condition);
  n->true_body = std::move(true_body);
  n->false_body = std::move(false_body);
  return stmt(n);
}

namespace {

void visit_if_defined(expr_visitor* v, const expr& e) {
  if (e.defined()) e.accept(v);
}
void visit_if_defined(expr_visitor* v, const interval_expr& i) {
  visit_if_defined(v, i.min);
  visit_if_defined(v, i.max);
}
void visit_if_defined(expr_visitor* v, const std::vector<dim_expr>& dims) {
  for (const dim_expr& d : dims) {
    visit_if_defined(v, d.bounds);
    visit_if_defined(v, d.stride);
    visit_if_defined(v, d.fold_factor);
  }
}
void visit_if_defined(stmt_visitor* v, const stmt& s) {
  if (s.defined()) s.accept(v);
}

}  // namespace

void stmt_visitor::visit(const call_stmt* op) {
  for (const expr& i : op->scalars) visit_if_defined(this, i);
}
void stmt_visitor::visit(const copy_stmt* op) {
  for (const expr& i : op->src_x) visit_if_defined(this, i);
}
void stmt_visitor::visit(const let_stmt* op) {
  for (const auto& l : op->lets) visit_if_defined(this, l.second);
  visit_if_defined(this, op->body);
}
void stmt_visitor::visit(const block* op) {
  for (const stmt& s : op->stmts) visit_if_defined(this, s);
}
void stmt_visitor::visit(const loop* op) {
  visit_if_defined(this, op->max_workers);
  visit_if_defined(this, op->bounds);
  visit_if_defined(this, op->step);
  visit_if_defined(this, op->body);
}
void stmt_visitor::visit(const allocate* op) {
  visit_if_defined(this, op->elem_size);
  visit_if_defined(this, op->dims);
  visit_if_defined(this, op->body);
}
void stmt_visitor::visit(const make_buffer* op) {
  visit_if_defined(this, op->base);
  visit_if_defined(this, op->elem_size);
  visit_if_defined(this, op->dims);
  visit_if_defined(this, op->body);
}
void stmt_visitor::visit(const clone_buffer* op) { visit_if_defined(this, op->body); }
void stmt_visitor::visit(const constant_buffer* op) { visit_if_defined(this, op->body); }
void stmt_visitor::visit(const async* op) {
  visit_if_defined(this, op->task);
  visit_if_defined(this, op->body);
}
void stmt_visitor::visit(const crop_buffer* op) {
  for (const interval_expr& i : op->bounds) visit_if_defined(this, i);
  visit_if_defined(this, op->body);
}
void stmt_visitor::visit(const crop_dim* op) {
  visit_if_defined(this, op->bounds);
  visit_if_defined(this, op->body);
}
void stmt_visitor::visit(const slice_buffer* op) {
  for (const expr& i : op->at) visit_if_defined(this, i);
  visit_if_defined(this, op->body);
}
void stmt_visitor::visit(const slice_dim* op) {
  visit_if_defined(this, op->at);
  visit_if_defined(this, op->body);
}
void stmt_visitor::visit(const transpose* op) { visit_if_defined(this, op->body); }
void stmt_visitor::visit(const check* op) { visit_if_defined(this, op->condition); }
void stmt_visitor::visit(const if_then_else* op) {
  visit_if_defined(this, op->condition);
  visit_if_defined(this, op->true_body);
  visit_if_defined(this, op->false_body);
}

}  // namespace slinky
