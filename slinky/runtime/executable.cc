// The executable form of a program (executable.h): the compiler that turns each statement into a
// node of executable_nodes.h (a serial loop's body into a flat_body, executable_flat_body.h), where
// the nodes and what they specialise are described.
#include "slinky/runtime/executable.h"

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <limits>
#include <unordered_map>

#include "slinky/runtime/evaluator.h"
#include "slinky/runtime/executable_flat_body.h"
#include "slinky/runtime/executable_nodes.h"

namespace slinky {
namespace internal {

class compiler {
public:
  explicit compiler(executable& exe) : exe_(exe) {}

  // The compiled form of s; null if s is undefined (nothing to run). A statement is compiled once
  // (a flattened loop body refers to the nodes of its statements).
  const exec_node* compile(const stmt& s) {
    if (!s.defined()) return nullptr;
    auto found = compiled_.find(s.get());
    if (found != compiled_.end()) return found->second;
    // Compiling inserts the statements inside: no iterator is held across it.
    const exec_node* node = compile_new(s);
    compiled_.emplace(s.get(), node);
    return node;
  }

private:
  executable& exe_;
  std::unordered_map<const base_stmt_node*, const exec_node*> compiled_;

  const exec_node* compile_new(const stmt& s) {
    switch (s.type()) {
    case stmt_node_type::none: return nullptr;
    case stmt_node_type::call_stmt: return add(std::make_unique<call_node>(s.as<call_stmt>()));
    case stmt_node_type::copy_stmt: return leaf<copy_stmt, &evaluator::exec_copy>(s);
    case stmt_node_type::check: return leaf<check, &evaluator::exec_check>(s);
    case stmt_node_type::let_stmt: {
      const let_stmt* op = s.as<let_stmt>();
      return add(std::make_unique<let_node>(op, compile(op->body)));
    }
    case stmt_node_type::block: {
      auto node = std::make_unique<block_node>();
      for (const stmt& i : s.as<block>()->stmts) {
        if (const exec_node* c = compile(i)) node->stmts.push_back(c);
      }
      return add(std::move(node));
    }
    case stmt_node_type::loop: {
      const loop* op = s.as<loop>();
      return add(std::make_unique<loop_node>(op, flatten(op->body)));
    }
    case stmt_node_type::crop_dim: {
      const crop_dim* op = s.as<crop_dim>();
      return crop_one_dim(op->sym, op->src, op->dim, op->bounds, op->body);
    }
    case stmt_node_type::crop_buffer: {
      const crop_buffer* op = s.as<crop_buffer>();
      // A crop of one dim (the others' bounds undefined) is a crop_dim.
      int cropped = -1;
      for (std::size_t d = 0; d < op->bounds.size(); ++d) {
        if (!op->bounds[d].min.defined() && !op->bounds[d].max.defined()) continue;
        cropped = cropped == -1 ? static_cast<int>(d) : -2;
      }
      if (cropped >= 0) return crop_one_dim(op->sym, op->src, cropped, op->bounds[cropped], op->body);
      return add(std::make_unique<crop_buffer_node>(op, compile(op->body)));
    }
    case stmt_node_type::allocate: return with_body<allocate, &evaluator::exec_allocate>(s);
    case stmt_node_type::make_buffer: return with_body<make_buffer, &evaluator::exec_make_buffer>(s);
    case stmt_node_type::clone_buffer: return with_body<clone_buffer, &evaluator::exec_clone_buffer>(s);
    case stmt_node_type::slice_buffer: return with_body<slice_buffer, &evaluator::exec_slice_buffer>(s);
    case stmt_node_type::slice_dim: return with_body<slice_dim, &evaluator::exec_slice_dim>(s);
    case stmt_node_type::transpose: return with_body<transpose, &evaluator::exec_transpose>(s);
    case stmt_node_type::constant_buffer: return with_body<constant_buffer, &evaluator::exec_constant_buffer>(s);
    case stmt_node_type::async: {
      const async* op = s.as<async>();
      const exec_node* task = compile(op->task);
      return add(std::make_unique<async_node>(op, task, compile(op->body)));
    }
    case stmt_node_type::if_then_else: {
      const if_then_else* op = s.as<if_then_else>();
      const exec_node* t = compile(op->true_body);
      return add(std::make_unique<if_then_else_node>(op, t, compile(op->false_body)));
    }
    }
    return nullptr;
  }

  // s as a flat body (a loop's body).
  const flat_body* flatten(const stmt& s) {
    auto body = std::make_unique<flat_body>();
    flatten(*body, s, 0);
    mark_refreshed_crops(*body);
    specialize_kinds(*body);
    body->ops.push_back({flat_body::op_kind::stop, nullptr});
    body->pack();
    const flat_body* result = body.get();
    add(std::move(body));
    return result;
  }

  // Gives the most common ops of fb their own kinds (flat_body::op_kind).
  static void specialize_kinds(flat_body& fb) {
    for (flat_body::op& o : fb.ops) {
      if (o.kind == flat_body::op_kind::crop_call) {
        const flat_body::crop_op& c = *static_cast<const flat_body::crop_op*>(o.target);
        if (c.refresh && c.call->second_of_two(c.sym)) o.kind = flat_body::op_kind::crop_call_out;
      } else if (o.kind == flat_body::op_kind::crop) {
        if (static_cast<const flat_body::crop_op*>(o.target)->persistent) o.kind = flat_body::op_kind::crop_persistent;
      } else if (o.kind == flat_body::op_kind::call) {
        if (static_cast<const compiled_call*>(o.target)->pair()) o.kind = flat_body::op_kind::call_pair;
      }
    }
  }

  // Marks the crops of fb that can be refreshed (flat_body::refresh_crop): a crop of one dim of a
  // source that no crop in the body binds, in a body of crops and calls that change no descriptor.
  // Then a source bound when the crop runs is the descriptor it was in the previous iteration,
  // unchanged, and so is the crop's own slot, which only this crop writes.
  static void mark_refreshed_crops(flat_body& fb) {
    fb.slots = fb.depth;
    for (const flat_body::op& o : fb.ops) {
      switch (o.kind) {
      case flat_body::op_kind::crop:
      case flat_body::op_kind::end: break;
      case flat_body::op_kind::crop_call:
        if (!static_cast<const flat_body::crop_op*>(o.target)->call->changes_no_descriptor()) return;
        break;
      case flat_body::op_kind::call:
        if (!static_cast<const compiled_call*>(o.target)->changes_no_descriptor()) return;
        break;
      case flat_body::op_kind::node: return;
      case flat_body::op_kind::crop_call_out:
      case flat_body::op_kind::call_pair:
      case flat_body::op_kind::crop_persistent:
      case flat_body::op_kind::stop: SLINKY_ASSERT(false, "kinds are specialized after this"); break;
      }
    }
    // How many crops of the body bind each symbol.
    std::unordered_map<symbol_id, int> bound;
    for (const flat_body::crop_op& c : fb.crops) ++bound[c.sym];
    for (flat_body::crop_op& c : fb.crops) {
      c.refresh = !c.has_more && bound.count(c.src.sym()) == 0;
      if (c.refresh) c.slot_offset = fb.slots++ * sizeof(flat_body::slot);
    }
    // A refreshed crop with a body stays bound across iterations when no operation outside its
    // body may read its symbol and no other crop binds it: then nothing can tell, and an
    // iteration neither binds nor unbinds it. The loop unbinds it at the end (finish). The first
    // and last operation that may read each symbol:
    std::unordered_map<symbol_id, std::pair<std::size_t, std::size_t>> readers;
    bool reads_any = false;
    for (std::size_t i = 0; i < fb.ops.size(); ++i) {
      auto note = [&](symbol_id s) {
        auto r = readers.emplace(s, std::make_pair(i, i));
        r.first->second.second = i;
      };
      const flat_body::op& o = fb.ops[i];
      switch (o.kind) {
      case flat_body::op_kind::crop:
      case flat_body::op_kind::crop_call: {
        const flat_body::crop_op& c = *static_cast<const flat_body::crop_op*>(o.target);
        note(c.src.sym());
        reads_any = reads_any || !c.bounds.for_each_read(note);
        for (const auto& j : c.more) reads_any = reads_any || !j.second.for_each_read(note);
        if (c.call) reads_any = reads_any || !c.call->for_each_read(note);
        break;
      }
      case flat_body::op_kind::call:
        reads_any = reads_any || !static_cast<const compiled_call*>(o.target)->for_each_read(note);
        break;
      case flat_body::op_kind::end:
      case flat_body::op_kind::node: break;
      case flat_body::op_kind::crop_call_out:
      case flat_body::op_kind::call_pair:
      case flat_body::op_kind::crop_persistent:
      case flat_body::op_kind::stop: SLINKY_ASSERT(false, "kinds are specialized after this"); break;
      }
    }
    if (reads_any) return;
    for (flat_body::crop_op& c : fb.crops) {
      if (!c.refresh || c.call || bound[c.sym] != 1) continue;
      auto r = readers.find(c.sym);
      // Inside its body: after the crop's op and before its end (at c.next - 1).
      c.persistent = r == readers.end() || (r->second.first > c.begin && r->second.second + 1 < c.next);
      fb.any_persistent = fb.any_persistent || c.persistent;
    }
    if (!fb.any_persistent) return;
    // The end of a persistent crop does nothing: it is left out, and the ops renumbered (index[i]:
    // the new index of op i, or of the op after it if it is left out).
    std::vector<std::size_t> index(fb.ops.size() + 1);
    std::vector<flat_body::op> kept;
    for (std::size_t i = 0; i < fb.ops.size(); ++i) {
      index[i] = kept.size();
      const flat_body::op& o = fb.ops[i];
      if (o.kind == flat_body::op_kind::end && static_cast<const flat_body::crop_op*>(o.target)->persistent) continue;
      kept.push_back(o);
    }
    index[fb.ops.size()] = kept.size();
    for (flat_body::crop_op& c : fb.crops) {
      c.begin = index[c.begin];
      c.next = index[c.next];
    }
    fb.ops = std::move(kept);
  }

  void flatten(flat_body& fb, const stmt& s, std::size_t depth) {
    if (!s.defined()) return;
    switch (s.type()) {
    case stmt_node_type::block:
      for (const stmt& i : s.as<block>()->stmts) flatten(fb, i, depth);
      return;
    case stmt_node_type::call_stmt: {
      const compiled_call* call = call_of(s);
      if (call->direct()) {
        fb.ops.push_back({flat_body::op_kind::call, call});
      } else {
        fb.ops.push_back({flat_body::op_kind::node, compile(s)});
      }
      return;
    }
    case stmt_node_type::crop_dim: {
      const crop_dim* op = s.as<crop_dim>();
      flatten_crop(fb, s, op->sym, op->src, {{static_cast<std::size_t>(op->dim), op->bounds}}, op->body, depth);
      return;
    }
    case stmt_node_type::crop_buffer: {
      const crop_buffer* op = s.as<crop_buffer>();
      std::vector<std::pair<std::size_t, interval_expr>> dims;
      for (std::size_t d = 0; d < op->bounds.size(); ++d) {
        if (op->bounds[d].min.defined() || op->bounds[d].max.defined()) dims.emplace_back(d, op->bounds[d]);
      }
      flatten_crop(fb, s, op->sym, op->src, dims, op->body, depth);
      return;
    }
    default:
      if (const exec_node* node = compile(s)) fb.ops.push_back({flat_body::op_kind::node, node});
      return;
    }
  }

  void flatten_crop(flat_body& fb, const stmt& s, var sym, var src,
                    const std::vector<std::pair<std::size_t, interval_expr>>& dims, const stmt& body,
                    std::size_t depth) {
    // Compiled first, so that the statements inside are compiled once and shared.
    const exec_node* fallback = compile(s);
    flat_body::crop_op& c = fb.crops.emplace_back(
        flat_body::crop_op{sym.sym(),
                           src,
                           depth * sizeof(flat_body::slot),
                           fb.ops.size(),
                           0,
                           dims.empty() ? std::numeric_limits<std::size_t>::max() : dims.front().first,
                           compiled_interval(dims.empty() ? interval_expr() : dims.front().second),
                           {},
                           dims.size() > 1,
                           body.as<call_stmt>() ? call_of(body) : nullptr,
                           false,
                           false,
                           fallback});
    for (std::size_t i = 1; i < dims.size(); ++i) c.more.emplace_back(dims[i].first, compiled_interval(dims[i].second));
    fb.depth = std::max(fb.depth, depth + 1);
    if (c.call) {
      fb.ops.push_back({flat_body::op_kind::crop_call, &c});
    } else {
      fb.ops.push_back({flat_body::op_kind::crop, &c});
      flatten(fb, body, depth + 1);
      fb.ops.push_back({flat_body::op_kind::end, &c});
    }
    c.next = fb.ops.size();
  }

  const exec_node* crop_one_dim(var sym, var src, int dim, const interval_expr& bounds, const stmt& body) {
    const compiled_call* call = body.as<call_stmt>() ? call_of(body) : nullptr;
    return add(std::make_unique<crop_dim_node>(sym, src, dim, bounds, call, call ? nullptr : compile(body)));
  }
  // The compiled form of a call statement (compiled once, like any statement).
  const compiled_call* call_of(const stmt& s) { return &static_cast<const call_node*>(compile(s))->call; }
  const exec_node* add(std::unique_ptr<exec_node> node) {
    exe_.nodes_.push_back(std::move(node));
    return exe_.nodes_.back().get();
  }
  template <typename T, index_t (evaluator::*exec)(const T*)>
  const exec_node* leaf(const stmt& s) {
    return add(std::make_unique<leaf_node<T, exec>>(s.as<T>()));
  }
  template <typename T, index_t (evaluator::*exec)(const T*, body_ref)>
  const exec_node* with_body(const stmt& s) {
    const T* op = s.as<T>();
    return add(std::make_unique<body_node<T, exec>>(op, compile(op->body)));
  }
};

executable::executable(stmt s) : source_(std::move(s)), symbol_count_(slinky::symbol_count(source_)) {
  root_ = compiler(*this).compile(source_);
}

executable::~executable() = default;

index_t executable::run(eval_context& ctx) const {
  evaluator e(ctx, nullptr);
  return root_ ? root_->run(e) : 0;
}

bool executable::enabled() {
  static const bool enabled = [] {
    const char* mode = std::getenv("SLINKY_EVALUATOR");
    return !(mode && std::strcmp(mode, "interpret") == 0);
  }();
  return enabled;
}

}  // namespace internal
}  // namespace slinky
