// The tracing pass: trace_begin/trace_end brackets around the program, loops, iterations and
// calls.
#include "slinky/builder/trace.h"

#include <mutex>
#include <set>

#include "slinky/runtime/node_mutator.h"

namespace slinky {

namespace {

// The names are passed to trace_begin as addresses, so they must live as long as any program
// that uses them: they are interned for the life of the process (one copy per distinct name).
const char* intern(const std::string& name) {
  static std::mutex mutex;
  static std::set<std::string> names;
  std::lock_guard<std::mutex> lock(mutex);
  return names.insert(name).first->c_str();
}

class tracer : public node_mutator {
  node_context& ctx_;
  const std::map<var, std::string>& loop_names_;

public:
  tracer(node_context& ctx, const std::map<var, std::string>& loop_names) : ctx_(ctx), loop_names_(loop_names) {}

  // let t = trace_begin(name) in { body; trace_end(t) }
  stmt bracket(const std::string& name, stmt body) {
    const var token = ctx_.insert_unique("trace");
    const expr begin = call::make(intrinsic::trace_begin, {constant::make(static_cast<const void*>(intern(name)))});
    const stmt end = check::make(call::make(intrinsic::trace_end, {token}));
    return let_stmt::make(token, begin, block::make(std::move(body), end));
  }

  using node_mutator::visit;
  void visit(const call_stmt* op) override {
    set_result(bracket(op->attrs.name.empty() ? "call" : op->attrs.name, stmt(op)));
  }
  void visit(const loop* op) override {
    auto i = loop_names_.find(op->sym);
    const std::string name = "loop " + (i != loop_names_.end() ? i->second : ctx_.name(op->sym));
    stmt body = bracket(name + " iteration", mutate(op->body));
    set_result(bracket(name, loop::make(op->sym, op->max_workers, op->bounds, op->step, std::move(body))));
  }
};

}  // namespace

stmt add_tracing(const stmt& program, node_context& ctx, const std::map<var, std::string>& loop_names) {
  tracer t(ctx, loop_names);
  return t.bracket("pipeline", t.mutate(program));
}

}  // namespace slinky
