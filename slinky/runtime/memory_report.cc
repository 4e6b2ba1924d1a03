// report_memory (memory_report.h): the program runs twice with no-op calls and copies: once as it
// is, with the config's allocation settings, counting what the allocate hook sees (exactly what a
// real run's hook would); once with a call at the start and end of every allocation's body that
// records the buffer allocated, so the stack allocations are seen too (those calls change when
// freed blocks are handed on, so the hook's figures come from the first run). Where each
// allocation sits in the loop nest is read from the program.
#include "slinky/runtime/memory_report.h"

#include <algorithm>
#include <functional>
#include <map>
#include <ostream>

#include "slinky/runtime/buffer.h"
#include "slinky/runtime/node_mutator.h"

namespace slinky {

namespace {

// Calls and copies that do nothing; with `on_allocate`, each allocation's body also starts and
// ends with a call of it (entering: true, then false) given the allocated buffer.
using allocation_observer = std::function<void(var sym, const raw_buffer* b, bool entering)>;
class no_op_program : public stmt_mutator {
  const allocation_observer* on_allocate_;

public:
  explicit no_op_program(const allocation_observer* on_allocate = nullptr) : on_allocate_(on_allocate) {}
  using stmt_mutator::visit;
  void visit(const call_stmt* op) override {
    set_result(call_stmt::make([](const call_stmt*, eval_context&) -> index_t { return 0; }, op->inputs, op->outputs,
                               op->scalars, op->attrs));
  }
  void visit(const copy_stmt* op) override {
    set_result(copy_stmt::make([](const raw_buffer&, const raw_buffer&, const raw_buffer&) {}, op->src, op->src_x,
                               op->dst, op->dst_x, op->pad));
  }
  void visit(const allocate* op) override {
    stmt body = mutate(op->body);
    if (on_allocate_) {
      auto observe = [observer = on_allocate_, sym = op->sym](bool entering) {
        return call_stmt::make(
            [observer, sym, entering](const call_stmt*, eval_context& ctx) -> index_t {
              (*observer)(sym, ctx.lookup_buffer(sym), entering);
              return 0;
            },
            {sym}, {}, {}, {});
      };
      body = block::make({observe(true), body, observe(false)});
    }
    set_result(allocate::make(op->sym, op->storage, op->elem_size, op->dims, body));
  }
};

// The loops around each allocation (by symbol), and its storage.
struct allocation_site {
  memory_type storage;
  std::vector<var> loops;
};
class site_finder : public recursive_node_visitor {
public:
  std::vector<var> loops;
  std::map<symbol_id, allocation_site> sites;

  using recursive_node_visitor::visit;
  void visit(const loop* op) override {
    loops.push_back(op->sym);
    recursive_node_visitor::visit(op);
    loops.pop_back();
  }
  void visit(const allocate* op) override {
    sites.emplace(op->sym.id, allocation_site{op->storage, loops});
    recursive_node_visitor::visit(op);
  }
};

}  // namespace

memory_report report_memory(const pipeline& p, pipeline::scalars args, pipeline::buffers inputs,
                            pipeline::buffers outputs, const eval_config* config) {
  const eval_config& base = config ? *config : eval_config();
  const node_context* names = p.body.symbols.get();
  auto name = [&](var v) { return names ? names->name(v) : "b" + std::to_string(v.id); };
  memory_report report;

  // As a real run: the hook's view.
  {
    std::map<const void*, std::size_t> live;
    std::size_t live_bytes = 0;
    eval_config c;
    c.auto_stack_threshold = base.auto_stack_threshold;
    c.stride_alignment = base.stride_alignment;
    c.base_alignment = base.base_alignment;
    c.allocate = [&](var sym, raw_buffer* b) {
      void* block = default_allocate(sym, b, eval_config::default_heap_alignment);
      const std::size_t bytes = b->size_bytes();
      live[block] = bytes;
      live_bytes += bytes;
      report.peak_heap_bytes = std::max(report.peak_heap_bytes, live_bytes);
      ++report.heap_allocations;
      return block;
    };
    c.free = [&](var sym, raw_buffer* b, void* block) {
      auto i = live.find(block);
      if (i != live.end()) {
        live_bytes -= i->second;
        live.erase(i);
      }
      default_free(sym, b, block);
    };
    c.check_failed = [](const expr&) {};
    c.call_failed = [](const call_stmt*) {};
    pipeline q = p;
    q.body = named_stmt(no_op_program().mutate(p.body), p.body.symbols);
    eval_context ctx;
    ctx.config = &c;
    report.result = q.evaluate(args, inputs, outputs, ctx);
  }

  // Every allocation, observed from inside it: sizes, counts, placement, and the stack's peak.
  site_finder finder;
  if (p.body.defined()) p.body.accept(&finder);
  const std::map<symbol_id, allocation_site>& sites = finder.sites;
  std::map<symbol_id, allocation_report> by_sym;
  std::vector<symbol_id> order;
  {
    std::size_t stack_bytes = 0;
    const allocation_observer observe = [&](var sym, const raw_buffer* b, bool entering) {
      const std::size_t bytes = b ? b->size_bytes() : 0;
      auto [i, first] = by_sym.try_emplace(sym.id);
      allocation_report& a = i->second;
      if (first) {
        order.push_back(sym.id);
        a.name = name(sym);
        auto site = sites.find(sym.id);
        if (site != sites.end()) {
          a.storage = site->second.storage;
          for (var l : site->second.loops) a.loops.push_back(name(l));
        }
      }
      // As the evaluator decides (exec_allocate).
      const bool on_stack = a.storage == memory_type::stack ||
                            (a.storage == memory_type::automatic && bytes <= base.auto_stack_threshold);
      if (entering) {
        a.bytes = std::max(a.bytes, bytes);
        a.on_stack = on_stack;
        ++a.count;
        ++report.total_allocations;
        if (on_stack) {
          stack_bytes += bytes;
          report.peak_stack_bytes = std::max(report.peak_stack_bytes, stack_bytes);
        }
      } else if (on_stack) {
        stack_bytes -= bytes;
      }
    };
    eval_config c;
    c.auto_stack_threshold = base.auto_stack_threshold;
    c.stride_alignment = base.stride_alignment;
    c.base_alignment = base.base_alignment;
    c.check_failed = [](const expr&) {};
    c.call_failed = [](const call_stmt*) {};
    pipeline q = p;
    q.body = named_stmt(no_op_program(&observe).mutate(p.body), p.body.symbols);
    eval_context ctx;
    ctx.config = &c;
    q.evaluate(args, inputs, outputs, ctx);
  }
  for (symbol_id i : order) report.allocations.push_back(by_sym[i]);
  // Allocations that never ran, in the order of the program.
  for (const auto& s : sites) {
    if (by_sym.count(s.first)) continue;
    allocation_report a;
    a.name = name(var(s.first));
    a.storage = s.second.storage;
    for (var l : s.second.loops) a.loops.push_back(name(l));
    report.allocations.push_back(a);
  }
  return report;
}

memory_report report_memory(const pipeline& p, pipeline::buffers inputs, pipeline::buffers outputs,
                            const eval_config* config) {
  return report_memory(p, {}, inputs, outputs, config);
}

std::ostream& operator<<(std::ostream& os, const memory_report& r) {
  os << "| buffer | bytes | times per evaluation | storage | placed | loops around it |\n";
  os << "| --- | --- | --- | --- | --- | --- |\n";
  for (const allocation_report& a : r.allocations) {
    os << "| " << a.name << " | " << a.bytes << " | " << a.count << " | " << to_string(a.storage) << " | "
       << (a.on_stack ? "stack" : "heap") << " | ";
    for (std::size_t i = 0; i < a.loops.size(); ++i) os << (i > 0 ? ", " : "") << a.loops[i];
    os << " |\n";
  }
  os << "peak heap bytes (allocate hook): " << r.peak_heap_bytes << " in " << r.heap_allocations
     << " allocations; peak stack bytes: " << r.peak_stack_bytes
     << "; allocations per evaluation: " << r.total_allocations << "\n";
  if (r.result != 0) os << "the pipeline fails (result " << r.result << "): the report covers what ran before\n";
  return os;
}

}  // namespace slinky
