// Finding the uses of symbols: one traversal that resolves each use through the declarations
// around it (shadowing, buffer views) and reports it to a callback.
#include "slinky/runtime/depends_on.h"

#include <algorithm>

#include "slinky/runtime/node_finder.h"

namespace slinky {

namespace {

depends_on_result make_use(bool var, bool input, bool output, bool src, bool dst, bool base, bool dims, bool bounds) {
  depends_on_result r;
  r.var = var;
  r.buffer_input = input;
  r.buffer_output = output;
  r.buffer_src = src;
  r.buffer_dst = dst;
  r.buffer_base = base;
  r.buffer_dims = dims;
  r.buffer_bounds = bounds;
  return r;
}

// The kinds of use (see depends_on_result).
const depends_on_result use_value = make_use(true, false, false, false, false, false, false, false);
const depends_on_result use_field = make_use(false, false, false, false, false, false, true, false);
const depends_on_result use_bounds_field = make_use(false, false, false, false, false, false, true, true);
const depends_on_result use_call_input = make_use(false, true, false, false, false, true, true, true);
const depends_on_result use_call_output = make_use(false, false, true, false, false, true, true, true);
const depends_on_result use_copy_src = make_use(false, false, false, true, false, true, true, true);
const depends_on_result use_copy_dst = make_use(false, false, false, false, true, true, true, true);
const depends_on_result use_base_and_dims = make_use(false, false, false, false, false, true, true, true);
const depends_on_result use_base = make_use(false, false, false, false, false, true, false, false);
const depends_on_result use_view = make_use(false, false, false, false, false, false, true, true);

// Visits every node, calling use(sym, how) for each free use of a symbol. Declarations are kept
// on a stack mapping each declared symbol to the free symbol it is a view of (or to an undefined
// var: a new symbol, whose uses are not reported).
template <typename Use>
class use_finder : public recursive_node_visitor {
  Use& use_;
  std::vector<std::pair<var, var>> scopes_;

  var resolve(var v) const {
    for (auto i = scopes_.rbegin(); i != scopes_.rend(); ++i) {
      if (i->first == v) return i->second;
    }
    return v;
  }
  void report(var v, const depends_on_result& how) {
    if (!v.defined()) return;
    v = resolve(v);
    if (v.defined()) use_(v, how);
  }
  void declare(var sym) { scopes_.emplace_back(sym, var()); }
  void declare_view(var sym, var src) { scopes_.emplace_back(sym, resolve(src)); }
  void end_scopes(std::size_t n) { scopes_.resize(scopes_.size() - n); }

  template <typename T>
  void visit_lets(const T* op) {
    for (const auto& l : op->lets) {
      if (l.second.defined()) l.second.accept(this);
      declare(l.first);
    }
    if (op->body.defined()) op->body.accept(this);
    end_scopes(op->lets.size());
  }
  void visit_body(var sym, const stmt& body) {
    declare(sym);
    if (body.defined()) body.accept(this);
    end_scopes(1);
  }
  void visit_view_body(var sym, var src, const stmt& body) {
    report(src, use_view);
    declare_view(sym, src);
    if (body.defined()) body.accept(this);
    end_scopes(1);
  }
  void visit(const expr& e) {
    if (e.defined()) e.accept(this);
  }
  void visit(const interval_expr& x) {
    visit(x.min);
    visit(x.max);
  }
  void visit(const std::vector<dim_expr>& dims) {
    for (const dim_expr& d : dims) {
      visit(d.bounds);
      visit(d.stride);
      visit(d.fold_factor);
    }
  }

public:
  explicit use_finder(Use& use) : use_(use) {}
  using recursive_node_visitor::visit;

  void visit(const variable* op) override {
    switch (op->field) {
    case buffer_field::none: report(op->sym, use_value); return;
    case buffer_field::min:
    case buffer_field::max: report(op->sym, use_bounds_field); return;
    case buffer_field::rank:
    case buffer_field::elem_size:
    case buffer_field::size_bytes:
    case buffer_field::stride:
    case buffer_field::fold_factor: report(op->sym, use_field); return;
    }
  }
  void visit(const let* op) override { visit_lets(op); }
  void visit(const call* op) override {
    std::size_t first_arg = 0;
    if (!op->args.empty()) {
      const std::optional<var> buf = as_variable(op->args[0]);
      switch (op->intrinsic) {
      case intrinsic::buffer_at:
      case intrinsic::validate_buffer:
        if (buf) {
          report(*buf, use_base_and_dims);
          first_arg = 1;
        }
        break;
      case intrinsic::free:
        if (buf) {
          report(*buf, use_base);
          first_arg = 1;
        }
        break;
      case intrinsic::none:
      case intrinsic::negative_infinity:
      case intrinsic::positive_infinity:
      case intrinsic::indeterminate:
      case intrinsic::abs:
      case intrinsic::and_then:
      case intrinsic::or_else:
      case intrinsic::semaphore_init:
      case intrinsic::semaphore_signal:
      case intrinsic::semaphore_wait:
      case intrinsic::wait_for:
      case intrinsic::trace_begin:
      case intrinsic::trace_end: break;
      }
    }
    for (std::size_t i = first_arg; i < op->args.size(); ++i) visit(op->args[i]);
  }

  void visit(const call_stmt* op) override {
    for (var i : op->inputs) report(i, use_call_input);
    for (var i : op->outputs) report(i, use_call_output);
    for (const expr& i : op->scalars) visit(i);
  }
  void visit(const copy_stmt* op) override {
    report(op->src, use_copy_src);
    report(op->dst, use_copy_dst);
    report(op->pad, use_copy_src);
    for (var i : op->dst_x) declare(i);
    for (const expr& i : op->src_x) visit(i);
    end_scopes(op->dst_x.size());
  }
  void visit(const let_stmt* op) override { visit_lets(op); }
  void visit(const loop* op) override {
    visit(op->max_workers);
    visit(op->bounds);
    visit(op->step);
    visit_body(op->sym, op->body);
  }
  void visit(const allocate* op) override {
    visit(op->elem_size);
    visit(op->dims);
    visit_body(op->sym, op->body);
  }
  void visit(const make_buffer* op) override {
    visit(op->base);
    visit(op->elem_size);
    visit(op->dims);
    visit_body(op->sym, op->body);
  }
  void visit(const constant_buffer* op) override { visit_body(op->sym, op->body); }
  void visit(const clone_buffer* op) override { visit_view_body(op->sym, op->src, op->body); }
  void visit(const crop_buffer* op) override {
    for (const interval_expr& i : op->bounds) visit(i);
    visit_view_body(op->sym, op->src, op->body);
  }
  void visit(const crop_dim* op) override {
    visit(op->bounds);
    visit_view_body(op->sym, op->src, op->body);
  }
  void visit(const slice_buffer* op) override {
    for (const expr& i : op->at) visit(i);
    visit_view_body(op->sym, op->src, op->body);
  }
  void visit(const slice_dim* op) override {
    visit(op->at);
    visit_view_body(op->sym, op->src, op->body);
  }
  void visit(const transpose* op) override { visit_view_body(op->sym, op->src, op->body); }
  void visit(const async* op) override {
    if (op->task.defined()) op->task.accept(this);
    visit_body(op->sym, op->body);
  }
};

template <typename Node, typename Use>
void find_uses(const Node& n, Use& use) {
  if (!n.defined()) return;
  use_finder<Use> f(use);
  n.accept(&f);
}

// Reports uses of a few symbols into their results.
struct targets_use {
  span<const std::pair<var, depends_on_result&>> targets;
  void operator()(var v, const depends_on_result& how) {
    for (const auto& i : targets) {
      if (i.first == v) i.second |= how;
    }
  }
};

struct one_target_use {
  var target;
  depends_on_result& result;
  void operator()(var v, const depends_on_result& how) {
    if (v == target) result |= how;
  }
};

struct any_of_use {
  span<const var> targets;
  bool found = false;
  void operator()(var v, const depends_on_result&) {
    for (var i : targets) found = found || i == v;
  }
};

// Collects the symbols whose uses pass a filter.
template <typename Filter>
struct collect_use {
  Filter filter;
  std::vector<var> result;
  void operator()(var v, const depends_on_result& how) {
    if (filter(how)) result.push_back(v);
  }
  std::vector<var> sorted() {
    std::sort(result.begin(), result.end());
    result.erase(std::unique(result.begin(), result.end()), result.end());
    return std::move(result);
  }
};

template <typename Filter>
collect_use<Filter> make_collector(Filter f) {
  return collect_use<Filter>{std::move(f), {}};
}

// Finds calls with side effects (or, with impure, anything is_pure rejects: calls of user
// functions, reads of buffers' metadata and base pointers).
struct effect_search {
  bool impure;

  bool operator()(const variable* op) const { return impure && op->field != buffer_field::none; }
  bool operator()(const call* op) const {
    switch (op->intrinsic) {
    case intrinsic::semaphore_init:
    case intrinsic::semaphore_signal:
    case intrinsic::semaphore_wait:
    case intrinsic::wait_for:
    case intrinsic::trace_begin:
    case intrinsic::trace_end:
    case intrinsic::free: return true;
    case intrinsic::none:
    case intrinsic::buffer_at:
    case intrinsic::validate_buffer: return impure;
    case intrinsic::negative_infinity:
    case intrinsic::positive_infinity:
    case intrinsic::indeterminate:
    case intrinsic::abs:
    case intrinsic::and_then:
    case intrinsic::or_else: return false;
    }
    return false;
  }
};

}  // namespace

depends_on_result& depends_on_result::operator|=(const depends_on_result& other) {
  var = var || other.var;
  buffer_input = buffer_input || other.buffer_input;
  buffer_output = buffer_output || other.buffer_output;
  buffer_src = buffer_src || other.buffer_src;
  buffer_dst = buffer_dst || other.buffer_dst;
  buffer_base = buffer_base || other.buffer_base;
  buffer_dims = buffer_dims || other.buffer_dims;
  buffer_bounds = buffer_bounds || other.buffer_bounds;
  return *this;
}

bool operator==(internal::depends_on_operand a, internal::depends_on_operand b) {
  const depends_on_result& x = a.result;
  const depends_on_result& y = b.result;
  return x.var == y.var && x.buffer_input == y.buffer_input && x.buffer_output == y.buffer_output &&
         x.buffer_src == y.buffer_src && x.buffer_dst == y.buffer_dst && x.buffer_base == y.buffer_base &&
         x.buffer_dims == y.buffer_dims && x.buffer_bounds == y.buffer_bounds;
}

void depends_on(expr_ref e, span<const std::pair<var, depends_on_result&>> var_deps) {
  targets_use use{var_deps};
  find_uses(e, use);
}
void depends_on(stmt_ref s, span<const std::pair<var, depends_on_result&>> var_deps) {
  targets_use use{var_deps};
  find_uses(s, use);
}

void depends_on(expr_ref e, var v, depends_on_result& deps) {
  one_target_use use{v, deps};
  find_uses(e, use);
}
void depends_on(stmt_ref s, var v, depends_on_result& deps) {
  one_target_use use{v, deps};
  find_uses(s, use);
}

depends_on_result depends_on(expr_ref e, var v) {
  depends_on_result result;
  depends_on(e, v, result);
  return result;
}
depends_on_result depends_on(const expr& e, var v) { return depends_on(expr_ref(e), v); }
depends_on_result depends_on(const interval_expr& x, var v) {
  depends_on_result result;
  depends_on(x.min, v, result);
  if (!x.is_point()) depends_on(x.max, v, result);
  return result;
}
depends_on_result depends_on(stmt_ref s, var v) {
  depends_on_result result;
  depends_on(s, v, result);
  return result;
}
depends_on_result depends_on(const stmt& s, var v) { return depends_on(stmt_ref(s), v); }

bool depends_on(expr_ref e, span<const var> vars) {
  any_of_use use{vars};
  find_uses(e, use);
  return use.found;
}
bool depends_on(stmt_ref s, span<const var> vars) {
  any_of_use use{vars};
  find_uses(s, use);
  return use.found;
}

bool can_substitute_buffer(const depends_on_result& deps) { return !deps.var && !deps.buffer_data(); }

bool is_pure(expr_ref e) { return !any_node(e, effect_search{/*impure=*/true}); }

bool has_side_effects(expr_ref e) { return any_node(e, effect_search{/*impure=*/false}); }

std::vector<var> find_dependencies(expr_ref e) {
  auto c = make_collector([](const depends_on_result&) { return true; });
  find_uses(e, c);
  return c.sorted();
}
std::vector<var> find_dependencies(stmt_ref s) {
  auto c = make_collector([](const depends_on_result&) { return true; });
  find_uses(s, c);
  return c.sorted();
}

var find_buffer_data_dependency(expr_ref e) {
  auto c = make_collector([](const depends_on_result& how) { return how.buffer_base; });
  find_uses(e, c);
  std::vector<var> buffers = c.sorted();
  return buffers.size() == 1 ? buffers.front() : var();
}

std::vector<var> find_buffer_dependencies(stmt_ref s) { return find_buffer_dependencies(s, true, true, true, true); }
std::vector<var> find_buffer_dependencies(stmt_ref s, bool input, bool output) {
  return find_buffer_dependencies(s, input, input, output, output);
}
std::vector<var> find_buffer_dependencies(stmt_ref s, bool input, bool src, bool output, bool dst) {
  auto c = make_collector([=](const depends_on_result& how) {
    return (input && how.buffer_input) || (src && how.buffer_src) || (output && how.buffer_output) ||
           (dst && how.buffer_dst);
  });
  find_uses(s, c);
  return c.sorted();
}

}  // namespace slinky
