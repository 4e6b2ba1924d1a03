// symbol_count (evaluate.h): one more than the largest symbol id a program or expression refers
// to or declares, so that the evaluator can make room for every symbol before it runs.
#include <algorithm>
#include <cstddef>

#include "slinky/runtime/evaluate.h"
#include "slinky/runtime/stmt.h"

namespace slinky {

namespace {

// Finds the largest symbol id of a program.
class symbol_counter : public stmt_visitor {
public:
  std::size_t count = 0;
  void add(var v) {
    if (v.defined()) count = std::max(count, v.sym() + 1);
  }
  void add(const symbol_list& vs) {
    for (var v : vs) add(v);
  }

  using stmt_visitor::visit;
  void visit(const variable* op) override { add(op->sym); }
  void visit(const let* op) override {
    for (const auto& l : op->lets) add(l.first);
    stmt_visitor::visit(op);
  }
  void visit(const call_stmt* op) override {
    add(op->inputs);
    add(op->outputs);
    stmt_visitor::visit(op);
  }
  void visit(const copy_stmt* op) override {
    add(op->src);
    add(op->dst);
    add(op->pad);
    for (var v : op->dst_x) add(v);
    stmt_visitor::visit(op);
  }
  void visit(const let_stmt* op) override {
    for (const auto& l : op->lets) add(l.first);
    stmt_visitor::visit(op);
  }
  void visit(const loop* op) override { add(op->sym), stmt_visitor::visit(op); }
  void visit(const allocate* op) override { add(op->sym), stmt_visitor::visit(op); }
  void visit(const make_buffer* op) override { add(op->sym), stmt_visitor::visit(op); }
  void visit(const constant_buffer* op) override { add(op->sym), stmt_visitor::visit(op); }
  void visit(const async* op) override { add(op->sym), stmt_visitor::visit(op); }
  void visit(const clone_buffer* op) override { add(op->sym), add(op->src), stmt_visitor::visit(op); }
  void visit(const crop_buffer* op) override { add(op->sym), add(op->src), stmt_visitor::visit(op); }
  void visit(const crop_dim* op) override { add(op->sym), add(op->src), stmt_visitor::visit(op); }
  void visit(const slice_buffer* op) override { add(op->sym), add(op->src), stmt_visitor::visit(op); }
  void visit(const slice_dim* op) override { add(op->sym), add(op->src), stmt_visitor::visit(op); }
  void visit(const transpose* op) override { add(op->sym), add(op->src), stmt_visitor::visit(op); }
};

}  // namespace

std::size_t symbol_count(const stmt& s) {
  symbol_counter c;
  if (s.defined()) s.accept(&c);
  return c.count;
}

std::size_t symbol_count(const expr& e) {
  symbol_counter c;
  if (e.defined()) e.accept(&c);
  return c.count;
}

}  // namespace slinky
