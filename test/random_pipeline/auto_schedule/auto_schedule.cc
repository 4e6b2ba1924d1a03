// Random pipeline testing, part 7: auto mode's implementation (auto_schedule.h, auto.h).
#include "random_pipeline/auto_schedule/auto_schedule.h"

#include <algorithm>
#include <sstream>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "random_pipeline/auto.h"
#include "slinky/scheduler/machine.h"
#include "slinky/scheduler/schedule.h"

namespace slinky {
namespace random_test {

namespace {

struct named_machine {
  const char* name;
  machine m;
};

const std::vector<named_machine>& machines() {
  static const std::vector<named_machine> all = []() {
    machine tiny;
    tiny.l1_bytes = 4 * 1024;
    tiny.l2_bytes = 16 * 1024;
    tiny.l3_bytes = 64 * 1024;
    // The host's caches, or machine's defaults where sysfs does not say; machine::host() would
    // also measure the call overhead, which differs from run to run.
    machine host;
    read_sysfs_cache_sizes("/sys/devices/system/cpu/cpu0/cache", host);
    // Caches of a few hundred bytes, calls nearly free and fresh memory expensive: loops of small
    // steps even on buffers of a few elements (as in slinky/scheduler/test/random_schedule_test.cc).
    machine minute;
    minute.l1_bytes = 64;
    minute.l2_bytes = 256;
    minute.l3_bytes = 1024;
    minute.call_overhead_ns = 0.001;
    minute.page_touch_ns = 1e5;
    minute.fresh_block_bytes = 0;
    // The same caches and calls with memory a thousand times slower (every byte costs more than
    // starting a parallel loop) and 8 threads: parallel loops on the smallest buffers, pipelined
    // or data-parallel with their overlaps recomputed (a loop of 2 funcs pipelines on 2 workers
    // whatever the machine, so recomputing often wins).
    machine slow = minute;
    for (int l = 0; l < 4; ++l) slow.ns_per_byte[l] *= 1000;
    auto with_threads = [](machine m, int threads) {
      m.threads = threads;
      return m;
    };
    const int host_threads = std::min(4, std::max(2, static_cast<int>(std::thread::hardware_concurrency())));
    return std::vector<named_machine>{
        {"tiny", tiny},
        {"tiny_4_threads", with_threads(tiny, 4)},
        {"host", host},
        {"host_threads", with_threads(host, host_threads)},
        {"minute", minute},
        {"minute_3_threads", with_threads(minute, 3)},
        {"slow_8_threads", with_threads(slow, 8)},
    };
  }();
  return all;
}

int num_machines() { return static_cast<int>(machines().size()); }

const machine& auto_machine(int i) { return machines()[i].m; }

int machine_threads(int i) { return auto_machine(i).threads; }

std::string describe_machine(int i) {
  const machine& m = auto_machine(i);
  std::ostringstream os;
  os << machines()[i].name << " (l1 " << m.l1_bytes << ", l2 " << m.l2_bytes << ", l3 " << m.l3_bytes << ", threads "
     << m.threads << ", call " << m.call_overhead_ns << " ns, page " << m.page_touch_ns << " ns)";
  return os.str();
}

auto_result schedule(const graph_spec& g, const plan& pl, const schedule_spec& s, built& b) {
  std::vector<buffer_expr_ptr> ins, outs;
  schedule_shapes shapes;
  for (std::size_t i = 0; i < g.buffers.size(); ++i) {
    const bool input = g.buffers[i].input && !g.buffers[i].constant;
    if (input) ins.push_back(b.buffers[i]);
    if (g.buffers[i].output) outs.push_back(b.buffers[i]);
    if (!input && !g.buffers[i].output) continue;
    schedule_shapes::buffer_shape shape;
    shape.buffer = b.buffers[i];
    for (const ival& d : pl.bounds[i]) shape.bounds.emplace_back(d.min, d.max);
    shapes.buffers.push_back(std::move(shape));
  }
  // The radices given at run time (access::symbolic).
  shapes.scalars = b.lets;
  schedule_options options;
  options.reschedule = s.automatic == auto_mode::reschedule;
  const schedule_report r = slinky::schedule(ins, outs, shapes, auto_machine(s.auto_machine), options);
  auto_result result;
  result.report = r.to_string(&b.ctx);
  for (const schedule_report::loop_decision& l : r.loops) {
    result.looped = result.looped || l.looped;
    result.parallel = result.parallel || (l.looped && l.parallel);
  }
  if (s.automatic != auto_mode::keep) return result;
  // The funcs the schedule_spec scheduled keep its loops and compute_at.
  for (std::size_t i = 0; i < g.stages.size() && result.not_left_alone.empty(); ++i) {
    const stage_schedule& ss = s.stages[i];
    if (ss.loops.empty() && !ss.compute_at) continue;
    const func& f = *b.funcs[i];
    const std::string name = "f" + std::to_string(i);
    // An output's func is reported as `output` (computed at the root, in its loops) either way.
    for (const schedule_report::func_decision& d : r.funcs) {
      if (d.f == &f &&
          (d.where == schedule_report::placement::in_loop || d.where == schedule_report::placement::root)) {
        result.not_left_alone = name + " was placed (" + d.why + ")";
      }
    }
    bool same = f.loops().size() == ss.loops.size() && f.compute_at().has_value() == ss.compute_at.has_value();
    for (std::size_t l = 0; same && l < ss.loops.size(); ++l) {
      const func::loop_info& li = f.loops()[l];
      same = li.var.sym() == b.vars[i][ss.loops[l].var].sym() && as_constant(li.step) == ss.loops[l].step &&
             as_constant(li.max_workers) == (ss.loops[l].parallel ? loop::parallel : loop::serial);
    }
    if (same && ss.compute_at) {
      const loop_id& at = *f.compute_at();
      same = ss.compute_at->root() ? at.root()
                                   : at.func == b.funcs[ss.compute_at->stage].get() &&
                                         at.var.sym() == b.vars[ss.compute_at->stage][ss.compute_at->var].sym();
    }
    if (!same && result.not_left_alone.empty()) result.not_left_alone = name + "'s loops or compute_at changed";
  }
  return result;
}

std::string to_cpp(const graph_spec& g, const plan& pl, const schedule_spec& s) {
  const machine& m = auto_machine(s.auto_machine);
  std::ostringstream os;
  os << "  // Auto mode " << to_string(s.automatic) << " on machine " << describe_machine(s.auto_machine) << ".\n";
  os << "  machine target;\n";
  os << "  target.l1_bytes = " << m.l1_bytes << ";\n";
  os << "  target.l2_bytes = " << m.l2_bytes << ";\n";
  os << "  target.l3_bytes = " << m.l3_bytes << ";\n";
  os << "  target.threads = " << m.threads << ";\n";
  os << "  target.call_overhead_ns = " << m.call_overhead_ns << ";\n";
  os << "  target.page_touch_ns = " << m.page_touch_ns << ";\n";
  os << "  target.fresh_block_bytes = " << m.fresh_block_bytes << ";\n";
  for (int l = 0; l < 4; ++l) os << "  target.ns_per_byte[" << l << "] = " << m.ns_per_byte[l] << ";\n";
  os << "  target.l1_buffers = " << m.l1_buffers << ";\n";
  os << "  schedule_shapes shapes;\n";
  std::string ins = "{", outs = "{";
  for (std::size_t i = 0; i < g.buffers.size(); ++i) {
    const bool input = g.buffers[i].input && !g.buffers[i].constant;
    const std::string n = buffer_name(g, static_cast<int>(i));
    if (input) ins += (ins.size() > 1 ? ", " : "") + n;
    if (g.buffers[i].output) outs += (outs.size() > 1 ? ", " : "") + n;
    if (!input && !g.buffers[i].output) continue;
    os << "  shapes.buffers.push_back({" << n << ", {";
    for (std::size_t d = 0; d < pl.bounds[i].size(); ++d) {
      os << (d ? ", " : "") << "{" << pl.bounds[i][d].min << ", " << pl.bounds[i][d].max << "}";
    }
    os << "}});\n";
  }
  for (const std::pair<std::string, index_t>& l : radix_lets(g)) {
    os << "  shapes.scalars.push_back({" << l.first << ", " << l.second << "});\n";
  }
  os << "  schedule_options auto_options;\n";
  if (s.automatic == auto_mode::reschedule) os << "  auto_options.reschedule = true;\n";
  os << "  schedule(" << ins << "}, " << outs << "}, shapes, target, auto_options);\n";
  return os.str();
}

const auto_scheduler implementation = {num_machines, machine_threads, describe_machine, schedule, to_cpp};

}  // namespace

void enable_auto_mode() { set_auto_scheduler(&implementation); }

}  // namespace random_test
}  // namespace slinky
