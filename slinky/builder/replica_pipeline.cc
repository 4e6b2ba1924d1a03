// define_replica_pipeline (replica_pipeline.h): walks the graph from the outputs and prints C++
// that makes the same buffers, funcs and schedule. Expressions are printed node by node (the
// node classes' make functions), so the replica's expressions are the same trees, not
// re-simplified ones.
#include "slinky/builder/replica_pipeline.h"

#include <algorithm>
#include <cctype>
#include <cstring>
#include <limits>
#include <map>
#include <set>
#include <sstream>

#include "slinky/runtime/evaluate.h"

namespace slinky {

namespace {

const char* binary_class(expr_node_type t) {
  switch (t) {
  case expr_node_type::add: return "add";
  case expr_node_type::sub: return "sub";
  case expr_node_type::mul: return "mul";
  case expr_node_type::div: return "div";
  case expr_node_type::mod: return "mod";
  case expr_node_type::min: return "minimum";
  case expr_node_type::max: return "maximum";
  case expr_node_type::equal: return "equal";
  case expr_node_type::not_equal: return "not_equal";
  case expr_node_type::less: return "less";
  case expr_node_type::less_equal: return "less_equal";
  case expr_node_type::logical_and: return "logical_and";
  case expr_node_type::logical_or: return "logical_or";
  default: return nullptr;
  }
}

// The intrinsic's enumerator (to_string prints the infinities as oo and -oo).
const char* intrinsic_name(intrinsic i) {
  switch (i) {
  case intrinsic::positive_infinity: return "positive_infinity";
  case intrinsic::negative_infinity: return "negative_infinity";
  default: return to_string(i);
  }
}

bool is_keyword(const std::string& s) {
  static const std::set<std::string> keywords = {
      "alignas", "alignof", "and", "asm", "auto", "bool", "break", "case", "catch", "char", "class", "const",
      "continue", "default", "delete", "do", "double", "else", "enum", "explicit", "extern", "false", "float", "for",
      "friend", "goto", "if", "inline", "int", "long", "mutable", "namespace", "new", "not", "operator", "or",
      "private", "protected", "public", "register", "return", "short", "signed", "sizeof", "static", "struct", "switch",
      "template", "this", "throw", "true", "try", "typedef", "typename", "union", "unsigned", "using", "virtual",
      "void", "volatile", "while", "xor",
      // Names the generated code uses itself.
      "ctx", "options", "slinky", "std", "expr", "var", "func", "dim", "min", "max", "select", "abs", "buffer",
      "index_t", "stand_in", "call", "loop", "pipeline"};
  return keywords.count(s) > 0;
}

class replica_writer {
public:
  replica_writer(node_context& ctx) : ctx_(ctx) {}

  std::string define(const std::vector<var>& args, const std::vector<buffer_expr_ptr>& inputs,
                     const std::vector<buffer_expr_ptr>& outputs, const std::vector<std::pair<var, expr>>& lets,
                     const build_options& options, const std::string& fname) {
    for (const buffer_expr_ptr& b : outputs) visit_buffer(b.get());
    for (const buffer_expr_ptr& b : inputs) visit_buffer(b.get());
    for (const buffer_expr* b : buffers_) buffer_names_[b->sym().id] = identifier(ctx_.name(b->sym()));

    // The bodies first: they find the symbols to declare.
    std::ostringstream body;
    for (const buffer_expr* b : buffers_) {
      std::ostringstream def;
      define_buffer(def, b);
      declarations_[b->sym().id] = def.str();
    }
    for (const buffer_expr* b : buffers_) define_dims(body, b);
    for (const func* f : funcs_) define_func(body, f);
    for (const func* f : funcs_) define_schedule(body, f);
    for (const buffer_expr* b : buffers_) define_storage(body, b);
    body << "  ::slinky::build_options options;\n";
    body << "  options.no_checks = " << (options.no_checks ? "true" : "false") << ";\n";
    body << "  options.no_alias_buffers = " << (options.no_alias_buffers ? "true" : "false") << ";\n";
    body << "  options.trace = " << (options.trace ? "true" : "false") << ";\n";
    if (options.keep_loops) body << "  options.keep_loops = true;\n";
    std::ostringstream lets_text;
    for (const auto& l : lets) lets_text << "{" << sym(l.first) << ", " << print(l.second) << "}, ";
    body << "  return ::slinky::build_pipeline(ctx, {" << list_syms(args) << "}, {" << list_buffers(inputs) << "}, {"
         << list_buffers(outputs) << "}, {" << lets_text.str() << "}, options);\n";

    std::ostringstream os;
    os << "// A replica of a slinky pipeline, printed by slinky::define_replica_pipeline.\n";
    os << "auto " << fname << " = []() -> ::slinky::pipeline {\n";
    os << "  using namespace ::slinky;\n";
    os << "  node_context ctx;\n";
    // Symbols and buffers are made in the order of their ids, the order the original made them in:
    // the simplifier orders operands by symbol, so this keeps the replica's program the same.
    for (const auto& v : var_names_) {
      declarations_[v.first] = "  var " + v.second + "(ctx, \"" + ctx_.name(var(v.first)) + "\");\n";
    }
    for (const auto& d : declarations_) os << d.second;
    os << body.str();
    os << "};\n";
    return os.str();
  }

private:
  node_context& ctx_;
  std::vector<const buffer_expr*> buffers_;
  std::set<const buffer_expr*> seen_buffers_;
  std::vector<const func*> funcs_;
  std::set<const func*> seen_funcs_;
  std::map<const func*, std::string> func_names_;
  std::map<symbol_id, std::string> buffer_names_;
  std::map<symbol_id, std::string> var_names_;
  std::map<symbol_id, std::string> declarations_;
  std::set<std::string> used_;

  std::string identifier(const std::string& name) {
    std::string id;
    for (char c : name) id += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
    if (id.empty() || std::isdigit(static_cast<unsigned char>(id[0]))) id = "_" + id;
    if (is_keyword(id)) id += "_";
    std::string unique = id;
    for (int i = 2; used_.count(unique); ++i) unique = id + "_" + std::to_string(i);
    used_.insert(unique);
    return unique;
  }

  // Post-order: the producers of a func's inputs before it.
  void visit_buffer(const buffer_expr* b) {
    if (!b || seen_buffers_.count(b)) return;
    seen_buffers_.insert(b);
    for (const func* p : {b->producer(), b->second_producer()}) {
      if (p) visit_func(p);
    }
    buffers_.push_back(b);
  }
  void visit_func(const func* f) {
    if (seen_funcs_.count(f)) return;
    seen_funcs_.insert(f);
    for (const func::input& i : f->inputs()) visit_buffer(i.buffer.get());
    funcs_.push_back(f);
    for (const func::output& o : f->outputs()) visit_buffer(o.buffer.get());
  }

  // A symbol: a buffer's own (b->sym()) or a var declared at the top.
  std::string sym(var v) {
    auto b = buffer_names_.find(v.id);
    if (b != buffer_names_.end()) return b->second + "->sym()";
    auto i = var_names_.find(v.id);
    if (i != var_names_.end()) return i->second;
    const std::string name = identifier(ctx_.name(v));
    var_names_[v.id] = name;
    return name;
  }

  std::string print(const expr& e) {
    std::ostringstream os;
    print(os, e);
    return os.str();
  }
  void print(std::ostream& os, const expr& e) {
    if (!e.defined()) {
      os << "expr()";
      return;
    }
    if (const constant* c = e.as<constant>()) {
      if (c->value == std::numeric_limits<index_t>::min()) {
        os << "expr(std::numeric_limits<index_t>::min())";
      } else {
        os << "expr(" << c->value << ")";
      }
    } else if (const variable* v = e.as<variable>()) {
      if (v->field == buffer_field::none) {
        os << "expr(" << sym(v->sym) << ")";
      } else {
        // buffer_min(b, d), buffer_rank(b), ...: the functions that make these nodes.
        const bool has_dim = v->field != buffer_field::rank && v->field != buffer_field::elem_size &&
                             v->field != buffer_field::size_bytes;
        os << to_string(v->field) << "(" << sym(v->sym);
        if (has_dim) os << ", " << v->dim;
        os << ")";
      }
    } else if (const let* l = e.as<let>()) {
      os << "let::make({";
      for (const auto& i : l->lets) {
        os << "{" << sym(i.first) << ", ";
        print(os, i.second);
        os << "}, ";
      }
      os << "}, ";
      print(os, l->body);
      os << ")";
    } else if (const char* name = binary_class(e.type())) {
      const expr* ab = binary_operands(e);
      os << name << "::make(";
      print(os, ab[0]);
      os << ", ";
      print(os, ab[1]);
      os << ")";
    } else if (const logical_not* n = e.as<logical_not>()) {
      os << "logical_not::make(";
      print(os, n->a);
      os << ")";
    } else if (const conditional* s = e.as<conditional>()) {
      os << "conditional::make(";
      print(os, s->condition);
      os << ", ";
      print(os, s->true_value);
      os << ", ";
      print(os, s->false_value);
      os << ")";
    } else if (const call* c = e.as<call>()) {
      // A user function (intrinsic none) cannot be replicated: it becomes indeterminate.
      os << "call::make(intrinsic::"
         << intrinsic_name(c->intrinsic == intrinsic::none ? intrinsic::indeterminate : c->intrinsic) << ", {";
      for (const expr& a : c->args) {
        print(os, a);
        os << ", ";
      }
      os << "})";
    } else {
      os << "expr()";
    }
  }
  // The operands of a binary node.
  static const expr* binary_operands(const expr& e) {
    switch (e.type()) {
#define SLINKY_X(name)                                                                                                 \
  case expr_node_type::name: return &static_cast<const class name*>(e.get())->a;
      SLINKY_FOR_EACH_BINARY_NODE(SLINKY_X)
#undef SLINKY_X
    default: return nullptr;
    }
  }

  std::string print(const interval_expr& i) { return "interval_expr(" + print(i.min) + ", " + print(i.max) + ")"; }
  std::string print(const box_expr& b) {
    std::string s = "{";
    for (const interval_expr& i : b) s += print(i) + ", ";
    return s + "}";
  }
  std::string print_exprs(const std::vector<expr>& v) {
    std::string s = "{";
    for (const expr& e : v) s += print(e) + ", ";
    return s + "}";
  }
  std::string list_syms(const std::vector<var>& v) {
    std::string s;
    for (var i : v) s += sym(i) + ", ";
    return s;
  }
  std::string list_buffers(const std::vector<buffer_expr_ptr>& v) {
    std::string s;
    for (const buffer_expr_ptr& b : v) s += buffer_names_.at(b->sym().id) + ", ";
    return s;
  }

  void define_buffer(std::ostream& os, const buffer_expr* b) {
    const std::string& name = buffer_names_.at(b->sym().id);
    if (const const_raw_buffer_ptr& c = b->constant()) {
      // The constant's descriptor and bytes (positive strides; a constant with a negative stride is
      // replicated without its contents).
      os << "  auto " << name << " = [&]() {\n";
      bool positive = true;
      if (c->rank > 0) {
        os << "    dim dims[] = {";
        for (std::size_t d = 0; d < c->rank; ++d) {
          const dim& i = c->dim(d);
          os << "dim(" << i.min() << ", " << i.max() << ", " << i.stride() << ", " << i.fold_factor() << "), ";
          positive = positive && i.stride() >= 0;
        }
        os << "};\n";
      }
      os << "    raw_buffer_ptr c = raw_buffer::make(" << c->rank << ", " << c->elem_size << ", "
         << (c->rank == 0 ? "nullptr" : "dims") << ");\n";
      const std::size_t size = c->size_bytes();
      if (positive && c->base && size > 0) {
        os << "    static const unsigned char data[] = {";
        const unsigned char* bytes = static_cast<const unsigned char*>(c->base);
        for (std::size_t i = 0; i < size; ++i)
          os << (i % 24 == 0 ? "\n        " : "") << static_cast<int>(bytes[i]) << ",";
        os << "};\n";
        os << "    if (c->base) std::memcpy(c->base, data, sizeof(data));\n";
      }
      os << "    return buffer_expr::make_constant(ctx, \"" << ctx_.name(b->sym()) << "\", c);\n";
      os << "  }();\n";
      return;
    }
    os << "  auto " << name << " = buffer_expr::make(ctx, \"" << ctx_.name(b->sym()) << "\", " << b->rank() << ", "
       << print(b->elem_size()) << ");\n";
  }

  // Dims, after every buffer exists (they may read other buffers' metadata).
  void define_dims(std::ostream& os, const buffer_expr* b) {
    if (b->constant()) return;
    const std::string& name = buffer_names_.at(b->sym().id);
    const var sym = b->sym();
    for (std::size_t d = 0; d < b->rank(); ++d) {
      const dim_expr& i = b->dim(d);
      const int dd = static_cast<int>(d);
      // The dims a buffer is made with need no line.
      if (match(i.bounds.min, buffer_min(sym, dd)) && match(i.bounds.max, buffer_max(sym, dd)) &&
          match(i.stride, buffer_stride(sym, dd)) && match(i.fold_factor, buffer_fold_factor(sym, dd))) {
        continue;
      }
      os << "  " << name << "->dim(" << d << ") = dim_expr(" << print(i.bounds) << ", " << print(i.stride) << ", "
         << print(i.fold_factor) << ");\n";
    }
  }

  std::string print(const func::input& i) {
    std::string s = "{" + buffer_names_.at(i.buffer->sym().id) + ", " + print(i.bounds) + ", " + print(i.input_crop) +
                    ", " + print(i.output_crop) + ", " + print_exprs(i.output_slice) + "}";
    return s;
  }
  std::string print(const func::output& o) {
    std::string s = "{" + buffer_names_.at(o.buffer->sym().id) + ", {";
    for (var d : o.dims) s += sym(d) + ", ";
    return s + "}}";
  }

  void define_func(std::ostream& os, const func* f) {
    std::string name = identifier(f->name(&ctx_) + "_func");
    func_names_[f] = name;
    if (f->is_copy()) {
      os << "  func " << name << " = func::make_copy(";
      if (f->is_padded_copy()) {
        os << print(f->inputs()[0]) << ", " << print(f->outputs()[0]) << ", " << print(f->inputs()[1]);
      } else {
        os << "{";
        for (const func::input& i : f->inputs()) os << print(i) << ", ";
        os << "}, " << print(f->outputs()[0]);
      }
      os << ");\n";
    } else {
      // The stand-in: the func's declared regions, applied by replica_pipeline_handler.
      os << "  std::vector<func::input> " << name << "_inputs = {";
      for (const func::input& i : f->inputs()) os << print(i) << ", ";
      os << "};\n";
      os << "  std::vector<std::vector<var>> " << name << "_dims = {";
      for (const func::output& o : f->outputs()) {
        os << "{";
        for (var d : o.dims) os << sym(d) << ", ";
        os << "}, ";
      }
      os << "};\n";
      const call_stmt::attributes& a = f->attrs();
      os << "  call_stmt::attributes " << name << "_attrs;\n";
      os << "  " << name << "_attrs.name = \"" << a.name << "\";\n";
      os << "  " << name << "_attrs.allow_in_place = " << a.allow_in_place << "u;\n";
      if (a.min_rank != std::numeric_limits<int>::max())
        os << "  " << name << "_attrs.min_rank = " << a.min_rank << ";\n";
      os << "  func " << name << "(\n      [fins = " << name << "_inputs, dims = " << name
         << "_dims](const call_stmt* op, eval_context& c) mutable -> index_t {\n"
         << "        std::vector<const buffer<const void>*> in;\n"
         << "        std::vector<const buffer<void>*> out;\n"
         << "        for (var i : op->inputs) in.push_back(c.lookup_buffer<const void>(i));\n"
         << "        for (var o : op->outputs) out.push_back(reinterpret_cast<const "
            "buffer<void>*>(c.lookup_buffer(o)));\n"
         << "        return internal::replica_pipeline_handler(in, out, fins, dims, &c);\n"
         << "      },\n      " << name << "_inputs, {";
      for (const func::output& o : f->outputs()) os << print(o) << ", ";
      os << "}, " << print_exprs(f->scalars()) << ", " << name << "_attrs);\n";
    }
  }

  void define_schedule(std::ostream& os, const func* f) {
    const std::string& name = func_names_.at(f);
    if (!f->loops().empty()) {
      os << "  " << name << ".loops({";
      for (const func::loop_info& l : f->loops()) {
        os << "{" << sym(l.var) << ", " << print(l.step) << ", " << print(l.max_workers) << "}, ";
      }
      os << "});\n";
    }
    if (f->compute_at()) os << "  " << name << ".compute_at(" << print(*f->compute_at()) << ");\n";
  }

  std::string print(const loop_id& at) {
    if (at.root()) return "loop_id()";
    auto f = func_names_.find(at.func);
    if (f == func_names_.end()) return "loop_id()";
    return "loop_id{&" + f->second + ", " + (at.var.defined() ? sym(at.var) : "var()") + "}";
  }

  void define_storage(std::ostream& os, const buffer_expr* b) {
    const std::string& name = buffer_names_.at(b->sym().id);
    if (b->store_at()) os << "  " << name << "->store_at(" << print(*b->store_at()) << ");\n";
    if (b->storage() != memory_type::automatic) {
      os << "  " << name << "->store_in(memory_type::"
         << (b->storage() == memory_type::stack  ? "stack"
             : b->storage() == memory_type::heap ? "heap"
                                                 : "automatic")
         << ");\n";
    }
  }
};

// The bits of an element, as an unsigned integer of its first (up to) 8 bytes.
std::uint64_t load_bits(const void* p, std::size_t elem_size) {
  std::uint64_t v = 0;
  std::memcpy(&v, p, std::min<std::size_t>(elem_size, sizeof(v)));
  return v;
}

// Calls fn(coordinates) for every point of the box [min[d], max[d]].
template <typename Fn>
void for_each_point(const std::vector<index_t>& min, const std::vector<index_t>& max, const Fn& fn) {
  for (std::size_t d = 0; d < min.size(); ++d) {
    if (max[d] < min[d]) return;
  }
  std::vector<index_t> at = min;
  for (;;) {
    fn(at);
    std::size_t d = 0;
    for (; d < at.size(); ++d) {
      if (at[d] < max[d]) {
        ++at[d];
        break;
      }
      at[d] = min[d];
    }
    if (d == at.size()) return;
  }
}

}  // namespace

std::string define_replica_pipeline(node_context& ctx, const std::vector<var>& args,
                                    const std::vector<buffer_expr_ptr>& inputs,
                                    const std::vector<buffer_expr_ptr>& outputs, std::vector<std::pair<var, expr>> lets,
                                    const build_options& options, const std::string& fname) {
  return replica_writer(ctx).define(args, inputs, outputs, lets, options, fname);
}

std::string define_replica_pipeline(node_context& ctx, const std::vector<buffer_expr_ptr>& inputs,
                                    const std::vector<buffer_expr_ptr>& outputs, const build_options& options,
                                    const std::string& fname) {
  return define_replica_pipeline(ctx, {}, inputs, outputs, {}, options, fname);
}

namespace internal {

index_t replica_pipeline_handler(span<const buffer<const void>*> inputs, span<const buffer<void>*> outputs,
                                 span<func::input> fins, span<std::vector<var>> fout_dims, const eval_context* ctx) {
  eval_context values = ctx ? *ctx : eval_context();
  for (std::size_t o = 0; o < outputs.size() && o < fout_dims.size(); ++o) {
    const buffer<void>* out = outputs[o];
    if (!out || !out->base()) continue;
    const std::vector<var>& dims = fout_dims[o];
    std::vector<index_t> min(out->rank), max(out->rank);
    for (std::size_t d = 0; d < out->rank; ++d) {
      min[d] = out->dim(d).min();
      max[d] = out->dim(d).max();
    }
    for_each_point(min, max, [&](const std::vector<index_t>& at) {
      for (std::size_t d = 0; d < dims.size() && d < at.size(); ++d) values[dims[d]] = at[d];
      std::uint64_t x = 0;
      for (std::size_t i = 0; i < inputs.size() && i < fins.size(); ++i) {
        const buffer<const void>* in = inputs[i];
        if (!in || !in->base()) continue;
        // The declared region, within the buffer given.
        std::vector<index_t> lo(in->rank), hi(in->rank);
        for (std::size_t d = 0; d < in->rank; ++d) {
          const dim& id = in->dim(d);
          lo[d] = id.min();
          hi[d] = id.max();
          if (d < fins[i].bounds.size()) {
            const interval_expr& b = fins[i].bounds[d];
            if (b.min.defined()) lo[d] = std::max(lo[d], evaluate(b.min, values));
            if (b.max.defined()) hi[d] = std::min(hi[d], evaluate(b.max, values));
          }
        }
        for_each_point(lo, hi, [&](const std::vector<index_t>& p) {
          x ^= load_bits(in->address_at(span<const index_t>(p.data(), p.size())), in->elem_size);
        });
      }
      std::memcpy(out->address_at(span<const index_t>(at.data(), at.size())), &x,
                  std::min<std::size_t>(out->elem_size, sizeof(x)));
    });
  }
  return 0;
}

}  // namespace internal

}  // namespace slinky
