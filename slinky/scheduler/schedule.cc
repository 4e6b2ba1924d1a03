// The scheduler's explicit entry point (the work is the scheduler object's, scheduler.h), and its
// report.
#include "slinky/scheduler/schedule.h"

#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <sstream>

#include "slinky/scheduler/scheduler.h"

namespace slinky {

using namespace scheduler_internal;

schedule_shapes& schedule_shapes::add(buffer_expr_ptr b, const std::vector<index_t>& extents) {
  buffer_shape s;
  s.buffer = std::move(b);
  for (index_t e : extents) s.bounds.emplace_back(0, e - 1);
  buffers.push_back(std::move(s));
  return *this;
}

schedule_shapes& schedule_shapes::add(buffer_expr_ptr b, const raw_buffer& like) {
  buffer_shape s;
  s.buffer = std::move(b);
  for (std::size_t d = 0; d < like.rank; ++d) s.bounds.emplace_back(like.dim(d).min(), like.dim(d).max());
  s.elem_size = static_cast<index_t>(like.elem_size);
  buffers.push_back(std::move(s));
  return *this;
}

schedule_shapes& schedule_shapes::add_scalar(var v, index_t value) {
  scalars.emplace_back(v, value);
  return *this;
}

schedule_report schedule(const std::vector<buffer_expr_ptr>& inputs, const std::vector<buffer_expr_ptr>& outputs,
                         const schedule_shapes& shapes, const machine& m, const schedule_options& options) {
  schedule_report report = scheduler(inputs, outputs, shapes, m, options).run();
  // With SLINKY_PRINT_SCHEDULE set, every schedule's report goes to stderr (as SLINKY_PRINT_PASSES
  // prints build_pipeline's passes): a refactoring of the scheduler diffs these over the tests and
  // benchmarks to show that it leaves every schedule as it was.
  static const bool print = std::getenv("SLINKY_PRINT_SCHEDULE") != nullptr;
  if (print) {
    std::cerr << "// schedule\n" << report.to_string();
    // The estimates to the last bit (the report rounds them to microseconds).
    for (const schedule_report::loop_decision& l : report.loops) {
      char buf[96];
      std::snprintf(buf, sizeof(buf), "// estimates (ns): %a, %a\n", l.cost_ns, l.unscheduled_cost_ns);
      std::cerr << buf;
    }
  }
  return report;
}

std::string schedule_report::to_string(const node_context* ctx) const {
  std::ostringstream os;
  char buf[256];
  for (const loop_decision& l : loops) {
    os << (l.produces_output ? "output of " : "loop of ") << l.f->name(ctx)
       << (l.produces_output ? ": " : " (at the root, with the funcs feeding only it): ");
    if (!l.looped) {
      os << "no loop (" << l.why << ")";
      if (l.unscheduled_cost_ns > 0) {
        std::snprintf(buf, sizeof(buf), "; estimated %.3f ms", l.unscheduled_cost_ns * 1e-6);
        os << buf;
      }
      os << "\n";
      continue;
    }
    os << "loop over dim " << l.dim << " (" << (ctx ? ctx->name(l.loop_var) : "_" + std::to_string(l.loop_var.id))
       << ") in steps of " << l.step
       << (l.recomputes ? ", parallel (data-parallel, overlaps recomputed)"
           : l.parallel ? ", parallel"
                        : ", serial")
       << ", " << l.iterations << " iterations";
    if (l.outer_dim >= 0) {
      os << ", inside a loop over dim " << l.outer_dim << " ("
         << (ctx ? ctx->name(l.outer_var) : "_" + std::to_string(l.outer_var.id)) << ") in steps of " << l.outer_step
         << (l.outer_parallel ? ", parallel, " : ", serial, ") << l.outer_iterations << " iterations (a tile)";
    }
    os << ", " << l.calls << " calls; working set " << l.working_set_bytes << " bytes (budget " << l.budget_bytes
       << ", ";
    if (l.level <= 3) {
      os << "L" << l.level;
      if (l.level == 3 && l.workers > 1) {
        os << ", shared by " << l.workers << " iterations at once";
      }
    } else {
      os << "memory";
    }
    std::snprintf(buf, sizeof(buf), "); memory %lld bytes; estimated %.3f ms, no schedule %.3f ms",
                  static_cast<long long>(l.memory_bytes), l.cost_ns * 1e-6, l.unscheduled_cost_ns * 1e-6);
    os << buf;
    if (l.granularity > 1) {
      os << "; steps in multiples of " << l.granularity
         << (l.hinted_multiple == l.granularity ? " (a func's hint)"
             : l.hinted_multiple > 1            ? " (blocks read, a func's hint)"
                                                : " (blocks read)");
    }
    if (l.invariant_bytes > 0) os << "; " << l.invariant_bytes << " bytes read whole by every iteration";
    if (l.outer_dim >= 0 && (l.reread_cost_ns > 0 || l.unscheduled_reread_cost_ns > 0)) {
      std::snprintf(buf, sizeof(buf), "; read again row by row: %.3f ms (no schedule %.3f ms)", l.reread_cost_ns * 1e-6,
                    l.unscheduled_reread_cost_ns * 1e-6);
      os << buf;
    }
    os << "\n";
  }
  for (const func_decision& d : funcs) {
    static const char* names[] = {"output", "in loop", "root", "left alone"};
    os << "  " << d.f->name(ctx) << ": " << names[static_cast<int>(d.where)];
    if (d.where == placement::in_loop || d.elements_per_iteration > 0) {
      os << ", " << d.elements_per_iteration << " elements per iteration";
      if (d.moving_dim >= 0) os << ", moving along dim " << d.moving_dim;
    }
    if (d.why && *d.why) os << " (" << d.why << ")";
    os << "\n";
  }
  return os.str();
}

}  // namespace slinky
