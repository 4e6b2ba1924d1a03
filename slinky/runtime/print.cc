// Printing of the IR as readable text: expressions with only the parentheses C-like precedence
// needs, statements one per line with their bodies indented in braces.
#include "slinky/runtime/print.h"

#include <limits>
#include <ostream>
#include <sstream>

namespace slinky {

namespace {

// Binding strength of an expression, loosest first. An operand is parenthesized when it binds
// more loosely than its position requires.
enum precedence : int {
  prec_let = 0,
  // Any expression in a comma separated list (arguments, interval bounds, lets). It sits above
  // let so that `min((let x = 1 in x), y)` cannot be misread.
  prec_list_item = 1,
  prec_or = 1,
  prec_and = 2,
  prec_compare = 3,
  prec_add = 4,
  prec_mul = 5,
  prec_not = 6,
  prec_primary = 7,
};

}  // namespace

static int precedence_of(const expr& e) {
  switch (e.type()) {
  case expr_node_type::let: return prec_let;
  case expr_node_type::logical_or: return prec_or;
  case expr_node_type::logical_and: return prec_and;
  case expr_node_type::equal:
  case expr_node_type::not_equal:
  case expr_node_type::less:
  case expr_node_type::less_equal: return prec_compare;
  case expr_node_type::add:
  case expr_node_type::sub: return prec_add;
  case expr_node_type::mul:
  case expr_node_type::div:
  case expr_node_type::mod: return prec_mul;
  case expr_node_type::logical_not: return prec_not;
  case expr_node_type::none:
  case expr_node_type::variable:
  case expr_node_type::constant:
  case expr_node_type::min:
  case expr_node_type::max:
  case expr_node_type::select:
  case expr_node_type::call: return prec_primary;
  }
  return prec_primary;
}

namespace {

class printer : public stmt_visitor {
  std::ostream& os_;
  const node_context* ctx_;
  int depth_ = 0;

public:
  printer(std::ostream& os, const node_context* ctx) : os_(os), ctx_(ctx) {}

  // Plain values go straight to the stream.
  printer& operator<<(const char* s) {
    os_ << s;
    return *this;
  }
  printer& operator<<(const std::string& s) {
    os_ << s;
    return *this;
  }
  printer& operator<<(int x) {
    os_ << x;
    return *this;
  }
  printer& operator<<(index_t x) {
    os_ << x;
    return *this;
  }
  printer& operator<<(memory_type m) {
    os_ << to_string(m);
    return *this;
  }

  printer& operator<<(var v) {
    if (!v.defined()) return *this << "<>";
    return *this << (ctx_ ? ctx_->name(v.sym()) : "_" + std::to_string(v.sym()));
  }
  printer& operator<<(const expr& e) {
    print(e, prec_list_item);
    return *this;
  }
  printer& operator<<(const interval_expr& i) { return *this << "[" << i.min << ", " << i.max << "]"; }
  printer& operator<<(const dim_expr& d) {
    return *this << "{" << d.bounds << ", " << d.stride << ", " << d.fold_factor << "}";
  }
  template <typename T>
  printer& operator<<(const std::vector<T>& list) {
    return *this << "{" << comma_separated(list) << "}";
  }

  // A list without braces, for call arguments and subscripts.
  template <typename T>
  struct comma_separated_list {
    const std::vector<T>& list;
  };
  template <typename T>
  static comma_separated_list<T> comma_separated(const std::vector<T>& list) {
    return {list};
  }
  template <typename T>
  printer& operator<<(const comma_separated_list<T>& l) {
    for (std::size_t i = 0; i < l.list.size(); ++i) {
      if (i > 0) *this << ", ";
      *this << l.list[i];
    }
    return *this;
  }

  // An expression, parenthesized if it binds more loosely than min_prec.
  void print(const expr& e, int min_prec) {
    if (!e.defined()) {
      os_ << "<>";
      return;
    }
    const bool parens = precedence_of(e) < min_prec;
    if (parens) os_ << "(";
    e.accept(this);
    if (parens) os_ << ")";
  }

  void print(const stmt& s) {
    if (s.defined()) s.accept(this);
  }

  void indent() {
    for (int i = 0; i < depth_; ++i) os_ << "  ";
  }

  // Ends the line of a statement that has a body, and prints the body one level deeper.
  void print_body(const stmt& body) {
    os_ << " {\n";
    ++depth_;
    print(body);
    --depth_;
    indent();
    os_ << "}\n";
  }

  template <typename T>
  void print_binary(const T* op, const char* name, int left_prec, int right_prec) {
    print(op->a, left_prec);
    os_ << " " << name << " ";
    print(op->b, right_prec);
  }
  // && and || are printed with parentheses wherever they mix, even where the usual precedence
  // would make them unnecessary (as -Wparentheses asks of C code).
  template <typename T>
  void print_logical(const T* op, const char* name) {
    print(op->a, op->a.template as<T>() ? prec_or : prec_compare);
    os_ << " " << name << " ";
    print(op->b, prec_compare);
  }

  // One visit per node kind, declared from the node lists so a new kind fails to link here.
#define SLINKY_X(name) void visit(const class name* op) override;
  SLINKY_FOR_EACH_EXPR_NODE(SLINKY_X)
  SLINKY_FOR_EACH_STMT_NODE(SLINKY_X)
#undef SLINKY_X

private:
  // `let x = 1, y = 2 in`, shared by let and let_stmt.
  void print_lets(const std::vector<std::pair<var, expr>>& lets) {
    *this << "let ";
    for (std::size_t i = 0; i < lets.size(); ++i) {
      if (i > 0) *this << ", ";
      *this << lets[i].first << " = " << lets[i].second;
    }
    *this << " in";
  }
};

void printer::visit(const variable* op) {
  switch (op->field) {
  case buffer_field::none: *this << op->sym; return;
  case buffer_field::rank:
  case buffer_field::elem_size:
  case buffer_field::size_bytes: *this << to_string(op->field) << "(" << op->sym << ")"; return;
  case buffer_field::min:
  case buffer_field::max:
  case buffer_field::stride:
  case buffer_field::fold_factor: *this << to_string(op->field) << "(" << op->sym << ", " << op->dim << ")"; return;
  }
}
void printer::visit(const constant* op) { *this << op->value; }
void printer::visit(const let* op) {
  print_lets(op->lets);
  *this << " ";
  print(op->body, prec_let);
}

// Arithmetic associates to the left as in C: `x - y - z` is (x - y) - z, while x - (y - z)
// keeps its parentheses.
void printer::visit(const add* op) {
  // x + -3 reads better as x - 3.
  std::optional<index_t> c = as_constant(op->b);
  if (c && *c < 0 && *c != std::numeric_limits<index_t>::min()) {
    print(op->a, prec_add);
    os_ << " - " << -*c;
    return;
  }
  print_binary(op, "+", prec_add, prec_add + 1);
}
void printer::visit(const sub* op) { print_binary(op, "-", prec_add, prec_add + 1); }
void printer::visit(const mul* op) { print_binary(op, "*", prec_mul, prec_mul + 1); }
void printer::visit(const div* op) { print_binary(op, "/", prec_mul, prec_mul + 1); }
void printer::visit(const mod* op) { print_binary(op, "%", prec_mul, prec_mul + 1); }
// Comparisons do not chain: (x < y) == z keeps its parentheses.
void printer::visit(const equal* op) { print_binary(op, "==", prec_compare + 1, prec_compare + 1); }
void printer::visit(const not_equal* op) { print_binary(op, "!=", prec_compare + 1, prec_compare + 1); }
void printer::visit(const less* op) { print_binary(op, "<", prec_compare + 1, prec_compare + 1); }
void printer::visit(const less_equal* op) { print_binary(op, "<=", prec_compare + 1, prec_compare + 1); }
void printer::visit(const logical_and* op) { print_logical(op, "&&"); }
void printer::visit(const logical_or* op) { print_logical(op, "||"); }
void printer::visit(const logical_not* op) {
  *this << "!";
  print(op->a, prec_not);
}
void printer::visit(const minimum* op) { *this << "min(" << op->a << ", " << op->b << ")"; }
void printer::visit(const maximum* op) { *this << "max(" << op->a << ", " << op->b << ")"; }
void printer::visit(const conditional* op) {
  *this << "select(" << op->condition << ", " << op->true_value << ", " << op->false_value << ")";
}
void printer::visit(const call* op) {
  // The infinities and indeterminate read as values, not calls.
  if (op->args.empty() &&
      (op->intrinsic == intrinsic::positive_infinity || op->intrinsic == intrinsic::negative_infinity ||
       op->intrinsic == intrinsic::indeterminate)) {
    *this << to_string(op->intrinsic);
    return;
  }
  if (op->intrinsic == intrinsic::none) {
    *this << "<user function>(" << comma_separated(op->args) << ")";
    return;
  }
  *this << to_string(op->intrinsic) << "(" << comma_separated(op->args) << ")";
}

void printer::visit(const call_stmt* op) {
  indent();
  *this << "call ";
  if (op->attrs.name.empty()) {
    *this << "<callback>";
  } else {
    *this << op->attrs.name;
  }
  *this << "(" << op->inputs << ", " << op->outputs;
  if (!op->scalars.empty()) *this << ", {" << comma_separated(op->scalars) << "}";
  *this << ")\n";
}
void printer::visit(const copy_stmt* op) {
  indent();
  *this << "copy(" << op->src << "[" << comma_separated(op->src_x) << "] -> " << op->dst << "["
        << comma_separated(op->dst_x) << "]";
  if (op->pad.defined()) *this << ", pad = " << op->pad;
  *this << ")\n";
}
void printer::visit(const let_stmt* op) {
  indent();
  if (op->is_closure) *this << "closure ";
  print_lets(op->lets);
  print_body(op->body);
}
void printer::visit(const block* op) {
  for (const stmt& s : op->stmts) print(s);
}
void printer::visit(const loop* op) {
  indent();
  *this << "loop(" << op->sym << " in " << op->bounds << ", step " << op->step << ", ";
  if (is_constant(op->max_workers, loop::parallel)) {
    *this << "parallel";
  } else if (op->is_serial()) {
    *this << "serial";
  } else {
    *this << "workers " << op->max_workers;
  }
  *this << ")";
  print_body(op->body);
}
void printer::visit(const allocate* op) {
  indent();
  *this << op->sym << " = allocate(" << op->storage << ", " << op->elem_size << ", " << op->dims << ")";
  print_body(op->body);
}
void printer::visit(const make_buffer* op) {
  indent();
  *this << op->sym << " = make_buffer(" << op->base << ", " << op->elem_size << ", " << op->dims << ")";
  print_body(op->body);
}
void printer::visit(const clone_buffer* op) {
  indent();
  *this << op->sym << " = clone_buffer(" << op->src << ")";
  print_body(op->body);
}
void printer::visit(const constant_buffer* op) {
  indent();
  *this << op->sym << " = constant_buffer(";
  if (op->value) {
    os_ << *op->value;
  } else {
    os_ << "null";
  }
  *this << ")";
  print_body(op->body);
}
void printer::visit(const async* op) {
  indent();
  *this << op->sym << " = async";
  print_body(op->task);
  indent();
  *this << "then";
  print_body(op->body);
}
void printer::visit(const crop_buffer* op) {
  indent();
  *this << op->sym << " = crop_buffer(" << op->src << ", " << op->bounds << ")";
  print_body(op->body);
}
void printer::visit(const crop_dim* op) {
  indent();
  *this << op->sym << " = crop_dim(" << op->src << ", " << op->dim << ", " << op->bounds << ")";
  print_body(op->body);
}
void printer::visit(const slice_buffer* op) {
  indent();
  *this << op->sym << " = slice_buffer(" << op->src << ", {";
  // An undefined coordinate keeps that dimension: `_` reads as "not sliced" better than `<>`.
  for (std::size_t i = 0; i < op->at.size(); ++i) {
    if (i > 0) *this << ", ";
    if (op->at[i].defined()) {
      *this << op->at[i];
    } else {
      *this << "_";
    }
  }
  *this << "})";
  print_body(op->body);
}
void printer::visit(const slice_dim* op) {
  indent();
  *this << op->sym << " = slice_dim(" << op->src << ", " << op->dim << ", " << op->at << ")";
  print_body(op->body);
}
void printer::visit(const transpose* op) {
  indent();
  *this << op->sym << " = transpose(" << op->src << ", " << op->dims << ")";
  print_body(op->body);
}
void printer::visit(const check* op) {
  indent();
  *this << "check(";
  print(op->condition, prec_let);
  *this << ")\n";
}
void printer::visit(const if_then_else* op) {
  indent();
  *this << "if (";
  print(op->condition, prec_let);
  *this << ")";
  print_body(op->true_body);
  if (op->false_body.defined()) {
    indent();
    *this << "else";
    print_body(op->false_body);
  }
}

}  // namespace

// dim's special values print as words rather than as extreme integers.
static void print_stride_or_fold(std::ostream& os, index_t x, index_t special, const char* special_name) {
  if (x == special) {
    os << special_name;
  } else {
    os << x;
  }
}

template <typename T>
static std::string to_string_with(const T& x, const node_context* ctx) {
  std::ostringstream ss;
  print(ss, x, ctx);
  return ss.str();
}

void print(std::ostream& os, var v, const node_context* ctx) { printer(os, ctx) << v; }
void print(std::ostream& os, const expr& e, const node_context* ctx) {
  printer p(os, ctx);
  p.print(e, prec_let);
}
void print(std::ostream& os, const stmt& s, const node_context* ctx) {
  printer p(os, ctx);
  p.print(s);
}
void print(std::ostream& os, const interval_expr& i, const node_context* ctx) { printer(os, ctx) << i; }
void print(std::ostream& os, const box_expr& b, const node_context* ctx) { printer(os, ctx) << b; }
void print(std::ostream& os, const dim_expr& d, const node_context* ctx) { printer(os, ctx) << d; }

std::string to_string(var v, const node_context* ctx) { return to_string_with(v, ctx); }
std::string to_string(const expr& e, const node_context* ctx) { return to_string_with(e, ctx); }
std::string to_string(const stmt& s, const node_context* ctx) { return to_string_with(s, ctx); }
std::string to_string(const interval_expr& i, const node_context* ctx) { return to_string_with(i, ctx); }

std::ostream& operator<<(std::ostream& os, const expr& e) {
  print(os, e);
  return os;
}
std::ostream& operator<<(std::ostream& os, const stmt& s) {
  print(os, s);
  return os;
}
std::ostream& operator<<(std::ostream& os, const interval_expr& i) {
  print(os, i);
  return os;
}
std::ostream& operator<<(std::ostream& os, const box_expr& b) {
  print(os, b);
  return os;
}
std::ostream& operator<<(std::ostream& os, const dim_expr& d) {
  print(os, d);
  return os;
}
std::ostream& operator<<(std::ostream& os, var v) {
  printer(os, nullptr) << v;
  return os;
}
std::ostream& operator<<(std::ostream& os, memory_type m) { return os << to_string(m); }
std::ostream& operator<<(std::ostream& os, intrinsic i) { return os << to_string(i); }
std::ostream& operator<<(std::ostream& os, buffer_field f) { return os << to_string(f); }
std::ostream& operator<<(std::ostream& os, expr_node_type t) { return os << to_string(t); }
std::ostream& operator<<(std::ostream& os, stmt_node_type t) { return os << to_string(t); }

std::ostream& operator<<(std::ostream& os, const dim& d) {
  os << "{" << d.min() << ", " << d.max() << ", ";
  print_stride_or_fold(os, d.stride(), dim::auto_stride, "auto");
  os << ", ";
  print_stride_or_fold(os, d.fold_factor(), dim::unfolded, "unfolded");
  return os << "}";
}

std::ostream& operator<<(std::ostream& os, const raw_buffer& b) {
  os << "{";
  if (b.base) {
    os << b.base;
  } else {
    os << "null";
  }
  os << ", " << b.elem_size << ", {";
  for (std::size_t d = 0; d < b.rank; ++d) {
    if (d > 0) os << ", ";
    os << b.dims[d];
  }
  return os << "}}";
}

std::ostream& operator<<(std::ostream& os, const std::tuple<const expr&, const node_context&>& e) {
  print(os, std::get<0>(e), &std::get<1>(e));
  return os;
}
std::ostream& operator<<(std::ostream& os, const std::tuple<const stmt&, const node_context&>& s) {
  print(os, std::get<0>(s), &std::get<1>(s));
  return os;
}
std::ostream& operator<<(std::ostream& os, const std::tuple<const interval_expr&, const node_context&>& i) {
  print(os, std::get<0>(i), &std::get<1>(i));
  return os;
}
std::ostream& operator<<(std::ostream& os, const std::tuple<const box_expr&, const node_context&>& b) {
  print(os, std::get<0>(b), &std::get<1>(b));
  return os;
}

}  // namespace slinky
