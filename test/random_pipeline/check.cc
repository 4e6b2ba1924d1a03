// Random pipeline testing, part 4: see check.h.
#include "random_pipeline/check.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "random_pipeline/auto.h"

#if SLINKY_RANDOM_HAVE_THREAD_POOL
#include "slinky/base/thread_pool_impl.h"
#endif

namespace slinky {
namespace random_test {

thread_pool* shared_thread_pool(int workers) {
#if SLINKY_RANDOM_HAVE_THREAD_POOL
  // One set of pools per process. A forked child inherits the parent's pool objects but not
  // their worker threads, and a worker may have held a pool's mutex at the instant of the fork
  // (a worker going idle locks it to sleep): using the inherited pools could then deadlock the
  // child. So a child makes its own and never touches (nor destroys) what it inherited.
  struct pools {
    thread_pool_impl p1{1}, p2{2}, p3{3};
  };
  static pools* current = nullptr;
  static pid_t owner = 0;
  if (!current || owner != getpid()) {
    current = new pools();  // Lives until the process exits; the parent's are leaked in a child.
    owner = getpid();
  }
  return workers <= 1 ? &current->p1 : workers == 2 ? &current->p2 : &current->p3;
#else
  // Without slinky/base/thread_pool_impl.h (detected by SLINKY_RANDOM_HAVE_THREAD_POOL),
  // parallel loops run serially.
  return nullptr;
#endif
}

std::vector<std::pair<int, index_t>> predicted_copy_calls(const graph_spec& g, const plan& p) {
  std::vector<std::pair<int, index_t>> result;
  auto unfolded = [&](int b) {
    const buffer_spec& bs = g.buffers[b];
    if (bs.input || bs.output || bs.producer < 0) return false;
    return std::all_of(bs.fold.begin(), bs.fold.end(), [](index_t f) { return f <= 0; });
  };
  for (std::size_t s = 0; s < g.stages.size(); ++s) {
    const stage_spec& st = g.stages[s];
    if (!st.copy || st.op != copy_kind::plain || st.inputs.size() != 1 || st.pad >= 0) continue;
    const stage_input& in = st.inputs[0];
    if (!in.input_crop.empty() || !in.output_crop.empty()) continue;
    if (std::none_of(in.dims.begin(), in.dims.end(), [](const access& a) { return a.flat; })) continue;
    const int src = in.buffer, dst = st.outputs[0];
    if (!unfolded(src) || !unfolded(dst) || g.stages[g.buffers[src].producer].copy) continue;
    bool copied_again = false;
    for (const stage_spec& c : g.stages) {
      for (const stage_input& i : c.inputs) copied_again = copied_again || (c.copy && i.buffer == dst);
    }
    if (copied_again) continue;
    const box& sb = p.bounds[src];
    const box& db = p.bounds[dst];
    if (elem_count(db) == 0) continue;
    index_t runs = 0, last = 0;
    bool first = true;
    // Predicted only for a reshape: each destination element reads a distinct source element
    // (a copy reading one source element for several destination elements is not one, and the
    // builder may copy it element by element), and what it reads spans the source's region in
    // every dim (a source larger than the reshape's digits, read by other consumers too, is not
    // laid out in the reshape's radix).
    std::vector<bool> read(static_cast<std::size_t>(elem_count(sb)), false);
    box hull(sb.size());
    bool reshape = true;
    for_each_point(db, [&](const index_t* at) {
      // The source element's offset in a dense layout of its region, dim 0 innermost.
      index_t offset = 0, stride = 1;
      for (std::size_t d = 0; d < sb.size(); ++d) {
        const index_t c = access_at(in.dims[d], at);
        if (c < sb[d].min || c > sb[d].max) reshape = false;
        hull[d].min = first ? c : std::min(hull[d].min, c);
        hull[d].max = first ? c : std::max(hull[d].max, c);
        offset += (c - sb[d].min) * stride;
        stride *= sb[d].extent();
      }
      if (!reshape) return;
      if (read[offset]) reshape = false;
      read[offset] = true;
      if (first || offset != last + 1) ++runs;
      first = false;
      last = offset;
    });
    for (std::size_t d = 0; d < sb.size(); ++d) {
      reshape = reshape && hull[d].min == sb[d].min && hull[d].max == sb[d].max;
    }
    if (!reshape) continue;
    result.emplace_back(static_cast<int>(s), runs);
  }
  return result;
}

namespace internal_run {

std::unique_ptr<host_buffer> make_buffer(const buffer_spec& b, const box& bounds) {
  return std::make_unique<host_buffer>(b.elem_size, bounds, b.order, b.padding);
}

// Everything one evaluation needs besides the schedule.
struct context {
  const case_spec& c;
  plan p;
  std::vector<std::unique_ptr<host_buffer>> inputs;
  // The pipeline's inputs (not the constants), and all of them (with the constants).
  std::vector<const raw_buffer*> input_raw, all_input_raw;
  std::vector<std::unique_ptr<host_buffer>> expected;
  monitor m;
  // Per buffer: the most bytes one heap allocation of it took unscheduled.
  std::vector<index_t> unscheduled_bytes;
  // Per stage: the points the unscheduled pipeline computes.
  std::vector<index_t> unscheduled_points;
  // Per buffer: the most bytes one heap allocation of it took in the last run.
  std::vector<index_t> last_bytes;
  // Per stage: the points it computed in the last run, and whether it computed a point twice.
  std::vector<index_t> last_points;
  std::vector<bool> last_repeated;
  // Check that the unscheduled pipeline allocates none of the predicted views
  // (predicted_view_copies; features::view_copies).
  bool check_views = false;
  // Check that the unscheduled pipeline calls no reshape more often than predicted
  // (predicted_copy_calls; features::radix_reshapes).
  bool check_copy_calls = false;

  explicit context(const case_spec& c) : c(c), p(make_plan(c.graph)) {
    const graph_spec& g = c.graph;
    for (std::size_t b = 0; b < g.buffers.size(); ++b) {
      if (!g.buffers[b].input) continue;
      inputs.push_back(make_buffer(g.buffers[b], p.bounds[b]));
      fill(*inputs.back(), c.data_seed + b);
      all_input_raw.push_back(&inputs.back()->raw());
      if (!g.buffers[b].constant) input_raw.push_back(&inputs.back()->raw());
    }
    expected = reference(g, p, all_input_raw);
    m.allowed.resize(g.buffers.size());
    for (std::size_t b = 0; b < g.buffers.size(); ++b) {
      if (!g.buffers[b].input) m.allowed[b] = p.bounds[b];
    }
    unscheduled_bytes.assign(g.buffers.size(), 0);
  }

  // Builds and runs one pipeline (unscheduled if s is null) and checks it. For a run that bounds
  // the memory of another (`bounding`, serial), last_bytes also counts the allocations that took
  // over a block another buffer freed just before, which the hooks do not see
  // (largest_allocations).
  outcome run(const schedule_spec* s, int index, bool bounding = false) {
    const graph_spec& g = c.graph;
    outcome o;
    o.schedule = index;
    m.reset();
    std::unique_ptr<built> b = build(g, p, s, &m, c.data_seed);
    const bool automatic = s && s->automatic != auto_mode::none;
    std::vector<std::unique_ptr<host_buffer>> outputs;
    std::vector<const raw_buffer*> output_raw;
    std::vector<int> output_index;
    for (std::size_t i = 0; i < g.buffers.size(); ++i) {
      if (!g.buffers[i].output) continue;
      outputs.push_back(make_buffer(g.buffers[i], p.bounds[i]));
      outputs.back()->fill_bytes(0xa5);
      output_raw.push_back(&outputs.back()->raw());
      output_index.push_back(static_cast<int>(i));
    }
    eval_hooks hooks(b->p.body.symbols.get());
    if (s && s->thread_pool) hooks.config.thread_pool = shared_thread_pool(s->pool_workers);
    const index_t result = b->p.evaluate(input_raw, output_raw, hooks.context);
    ++o.runs;
    auto fail = [&](const std::string& kind, const std::string& message) {
      o.kind = kind;
      o.message = message;
      // What the scheduler decided.
      if (automatic) {
        o.message += std::string("\nauto mode ") + to_string(s->automatic) + " on machine " +
                     describe_auto_machine(s->auto_machine) + ":\n" + b->schedule_report;
      }
      return o;
    };
    if (automatic) {
      o.auto_looped = b->auto_looped ? 1 : 0;
      if (!b->not_left_alone.empty()) return fail("not_left_alone", b->not_left_alone);
      // Deterministic: the graph built again from the spec gets the same schedule.
      const std::unique_ptr<built> again = build(g, p, s, nullptr, c.data_seed, /*make_pipeline=*/false);
      if (again->schedule_report != b->schedule_report) {
        return fail("nondeterministic", "scheduled again:\n" + again->schedule_report);
      }
    }
    if (!m.kind().empty()) return fail(m.kind(), m.failure());
    if (!hooks.check().empty()) return fail("check_failed", "check failed: " + hooks.check());
    if (m.failed) {
      // f<fail_stage> failed on purpose: evaluate returns its result, call_failed is called once,
      // nothing leaks, and in a schedule with no parallel loop, no callback runs after it.
      bool serial = true;
      for (std::size_t i = 0; s && i < s->stages.size(); ++i) {
        for (const loop_spec& l : s->stages[i].loops) serial = serial && !l.parallel;
      }
      serial = serial && !b->auto_parallel;
      if (result != injected_failure) {
        return fail("failure", "f" + std::to_string(g.fail_stage) + " failed with " + std::to_string(injected_failure) +
                                   ", evaluate returned " + std::to_string(result));
      }
      if (hooks.call_failures() != 1) {
        return fail("failure", "call_failed called " + std::to_string(hooks.call_failures()) + " times");
      }
      if (serial && m.after_failure > 0) {
        return fail("failure", std::to_string(m.after_failure) + " calls after f" + std::to_string(g.fail_stage) +
                                   " failed, in a serial schedule");
      }
      if (hooks.allocations() != hooks.frees()) {
        return fail("leak", std::to_string(hooks.allocations()) + " allocations, " + std::to_string(hooks.frees()) +
                                " frees after a failure");
      }
      return o;
    }
    if (result != 0) return fail("evaluate", "evaluate returned " + std::to_string(result));
    if (hooks.call_failures() != 0) return fail("failure", "call_failed called, but nothing failed");
    for (std::size_t i = 0; i < outputs.size(); ++i) {
      const int bi = output_index[i];
      std::string diff = compare(expected[bi]->raw(), outputs[i]->raw());
      if (diff.empty()) continue;
      return fail(s ? "mismatch" : "unscheduled_mismatch", "output " + buffer_name(g, bi) + " " + diff);
    }
    if (hooks.allocations() != hooks.frees()) {
      return fail("leak",
                  std::to_string(hooks.allocations()) + " allocations, " + std::to_string(hooks.frees()) + " frees");
    }
    if (!s && check_views) {
      // A broadcast or stencil copy of an intermediate is a view of its source: no allocation of
      // its destination (so no call of the copy either).
      for (int bi : predicted_view_copies(g)) {
        const index_t calls = m.copy_calls_of(g.buffers[bi].producer);
        if (calls > 0) {
          return fail("view",
                      buffer_name(g, bi) + " is a broadcast or stencil copy of an intermediate (a view of its " +
                          "source) but the unscheduled pipeline calls the copy " + std::to_string(calls) + " times");
        }
        const int n = hooks.allocations(b->buffers[bi]->sym());
        if (n == 0) continue;
        return fail("view", buffer_name(g, bi) + " is a broadcast or stencil copy of an intermediate (a view of its " +
                                "source) but the unscheduled pipeline allocates it " + std::to_string(n) + " times");
      }
    }
    if (!s && check_copy_calls) {
      for (const std::pair<int, index_t>& expected : predicted_copy_calls(g, p)) {
        const index_t calls = m.copy_calls_of(expected.first);
        if (calls <= expected.second) continue;
        return fail("copy_calls", "the reshape f" + std::to_string(expected.first) + " calls the copy " +
                                      std::to_string(calls) + " times, more than the " +
                                      std::to_string(expected.second) + " runs contiguous in both buffers");
      }
    }
    if (!s) {
      unscheduled_points.resize(g.stages.size());
      for (std::size_t st = 0; st < g.stages.size(); ++st) unscheduled_points[st] = m.points_of(static_cast<int>(st));
    } else if (!automatic) {
      // (In auto mode the schedule_spec is not the schedule that ran: these oracles, which read
      // it, do not apply.)
      schedule_spec legal = *s;
      const placement where = legalize(g, legal);
      const risky_windows w = find_risky_windows(g, legal, where);
      const bool risky = w.two_dims || w.fixed_and_moving || w.constant_loop || w.shadowed;
      const std::vector<bool> recompute = may_recompute(g, legal, where);
      // The unscheduled run's counts, unless it stopped at the failing func (a failure on purpose
      // in a call the scheduled pipeline does not make: it has nothing to compare with).
      const bool counted = unscheduled_points.size() == g.stages.size();
      for (std::size_t st = 0; st < g.stages.size() && !risky && counted; ++st) {
        if (g.stages[st].copy || recompute[st]) continue;
        const index_t points = m.points_of(static_cast<int>(st));
        if (points <= unscheduled_points[st]) continue;
        return fail("recompute", "f" + std::to_string(st) + " computes " + std::to_string(points) +
                                     " points, the unscheduled pipeline " + std::to_string(unscheduled_points[st]));
      }
      for (std::size_t bi = 0; bi < g.buffers.size(); ++bi) {
        if (g.buffers[bi].input || g.buffers[bi].output || !stored_at_root(g, legal, where, static_cast<int>(bi))) {
          continue;
        }
        const int n = hooks.allocations(b->buffers[bi]->sym());
        if (n <= 1) continue;
        return fail("allocations", buffer_name(g, static_cast<int>(bi)) +
                                       " is stored outside every loop but allocated " + std::to_string(n) + " times");
      }
    }
    last_points.assign(g.stages.size(), 0);
    last_repeated.assign(g.stages.size(), false);
    for (std::size_t st = 0; st < g.stages.size(); ++st) {
      last_points[st] = m.points_of(static_cast<int>(st));
      last_repeated[st] = m.repeated_points(static_cast<int>(st));
    }
    last_bytes.assign(g.buffers.size(), 0);
    if (bounding) {
      std::vector<var> syms;
      for (const buffer_expr_ptr& buffer : b->buffers) syms.push_back(buffer->sym());
      last_bytes = largest_allocations(b->p, syms, input_raw, output_raw);
    }
    for (std::size_t bi = 0; bi < g.buffers.size(); ++bi) {
      const index_t bytes = std::max(last_bytes[bi], hooks.max_bytes(b->buffers[bi]->sym()));
      last_bytes[bi] = bytes;
      if (!s) {
        unscheduled_bytes[bi] = bytes;
        continue;
      }
      // The region, or the user's fold where it is larger.
      box region = p.bounds[bi];
      for (std::size_t d = 0; d < g.buffers[bi].fold.size(); ++d) {
        region[d].max = std::max(region[d].max, region[d].min + g.buffers[bi].fold[d] - 1);
      }
      // The source of a padded copy may hold the copy's destination too, padding included (its
      // destination a view of it: docs/copies.md, "Padded, from the source").
      for (const stage_spec& st : g.stages) {
        if (!st.copy || st.op != copy_kind::padded || st.inputs.empty() ||
            st.inputs[0].buffer != static_cast<int>(bi) || st.outputs.empty()) {
          continue;
        }
        const box& dst = p.bounds[st.outputs[0]];
        for (std::size_t d = 0; d < region.size() && d < st.inputs[0].dims.size(); ++d) {
          region[d] |= map_access(st.inputs[0].dims[d], dst);
        }
      }
      const index_t limit =
          std::max(unscheduled_bytes[bi], elem_count(region) * static_cast<index_t>(g.buffers[bi].elem_size));
      if (bytes > limit) {
        return fail("memory", "an allocation of " + buffer_name(g, static_cast<int>(bi)) + " takes " +
                                  std::to_string(bytes) + " bytes, more than the " + std::to_string(limit) +
                                  " of the unscheduled pipeline");
      }
    }
    return o;
  }
};

// True if intermediate b is the source of a padded copy whose destination has an allocation of its
// own in a bounding run (bound_bytes) and none in the parallel run (parallel_bytes): there the
// destination became a view of b, which then holds the destination's region over the loops
// between their storage levels, padding included (alias_padded_from_source; docs/copies.md,
// "Padded, from the source"). The builder does so where the destination is stored inside the
// source's storage loop: with parallel loops it keeps a default-stored destination inside the
// innermost parallel loop when its windows do not overlap there (docs/threads.md), where the
// serial runs fold it at the root instead. b is then bounded by the unscheduled check only (its
// region with the destination's).
bool holds_a_padded_destination(const graph_spec& g, int b, const std::vector<index_t>& parallel_bytes,
                                const std::vector<index_t>& bound_bytes) {
  for (const stage_spec& st : g.stages) {
    if (!st.copy || st.op != copy_kind::padded || st.inputs.empty() || st.inputs[0].buffer != b || st.outputs.empty()) {
      continue;
    }
    const int d = st.outputs[0];
    if (parallel_bytes[d] == 0 && bound_bytes[d] > 0) return true;
  }
  return false;
}

}  // namespace internal_run

outcome run_case(const case_spec& c, const features& f) {
  internal_run::context ctx(c);
  ctx.check_views = f.view_copies;
  ctx.check_copy_calls = f.radix_reshapes && f.copy_call_counts;
  outcome total;
  outcome o = ctx.run(nullptr, -1);
  total.runs += o.runs;
  if (!o.ok()) {
    o.runs = total.runs;
    return o;
  }
  // What an intermediate takes with parallel loops (docs/threads.md): a buffer stored inside a
  // parallel loop takes a block per worker, each no larger than the serial schedule's; one stored
  // outside (shared, pipelined) folds over the hull of the windows of the iterations in flight, at
  // most the machine's hardware threads: no more than the window of one iteration of the same loop
  // run serially with that many times its step. So each schedule with parallel loops also runs
  // with them serial, and with them serial and their steps multiplied by the hardware threads,
  // and, third, with them serial and the funcs the builder may make stages of their own of a
  // pipelined loop computed at that loop (stages_at_parallel_loops: each then computes its region
  // over one iteration of the loop, and so do the funcs it reads); no intermediate may take more
  // than the largest of the three, unless its producer may recompute, or recomputes in the
  // parallel run (unbounded_by_parallel_fold): its windows overlap across the iterations of a
  // parallel loop and it does not slide, the documented limit (docs/threads.md), so it is bounded
  // by the unscheduled size only.
  const index_t k_in_flight = in_flight();
  for (std::size_t i = 0; i < c.schedules.size(); ++i) {
    const schedule_spec& s = c.schedules[i];
    o = ctx.run(&s, static_cast<int>(i));
    total.runs += o.runs;
    total.auto_looped += o.auto_looped;
    if (!o.ok()) {
      o.runs = total.runs;
      return o;
    }
    // The bound of parallel loops is checked on the schedule_spec's loops, not the scheduler's.
    if (s.automatic != auto_mode::none) continue;
    bool parallel = false;
    schedule_spec serial = s;
    schedule_spec serial_in_flight = s;
    for (std::size_t st = 0; st < s.stages.size(); ++st) {
      for (std::size_t li = 0; li < s.stages[st].loops.size(); ++li) {
        if (!s.stages[st].loops[li].parallel) continue;
        parallel = true;
        serial.stages[st].loops[li].parallel = false;
        serial_in_flight.stages[st].loops[li].parallel = false;
        serial_in_flight.stages[st].loops[li].step *= k_in_flight;
      }
    }
    if (!f.parallel_memory_bound || !parallel || ctx.m.failed) continue;
    const std::vector<index_t> parallel_bytes = ctx.last_bytes;
    schedule_spec legal = s;
    const placement where = legalize(c.graph, legal);
    // The producers that may recompute (may_recompute, the prediction of the computed-once
    // oracle), or that do recompute with the parallel loops: more points than unscheduled, or a
    // point computed twice (windows that share elements and whose union is smaller than their
    // hull), which the prediction misses for windows moving in two dimensions with one loop.
    const std::vector<bool> predicted = may_recompute(c.graph, legal, where);
    std::vector<bool> observed(predicted.size(), false);
    for (std::size_t st = 0; st < observed.size() && st < ctx.unscheduled_points.size(); ++st) {
      observed[st] = ctx.last_points[st] > ctx.unscheduled_points[st] || ctx.last_repeated[st];
    }
    std::vector<index_t> bound(parallel_bytes.size(), 0);
    // Buffers with no allocation of their own in a bounding run: the builder made them views of
    // another one's allocation whose users were done (early free and reuse, docs/builder.md), so
    // their size there is not known, and the other run's size is no bound. (A block handed on at
    // run time is counted: the bounding runs' sizes come from largest_allocations.)
    std::vector<bool> unknown(parallel_bytes.size(), false);
    schedule_spec serial_staged = stages_at_parallel_loops(c.graph, legal, where);
    // A bounding run that stopped at the failing callback (its calls come in another order than
    // the parallel run's, or more of them) sizes nothing: no bound for this schedule.
    bool stopped = false;
    for (const schedule_spec* bounding : {&serial, &serial_in_flight, &serial_staged}) {
      o = ctx.run(bounding, static_cast<int>(i), /*bounding=*/true);
      total.runs += o.runs;
      if (!o.ok()) {
        o.runs = total.runs;
        return o;
      }
      if (ctx.m.failed) {
        stopped = true;
        break;
      }
      for (std::size_t b = 0; b < bound.size(); ++b) {
        bound[b] = std::max(bound[b], ctx.last_bytes[b]);
        if (ctx.last_bytes[b] == 0) unknown[b] = true;
      }
    }
    for (std::size_t b = 0; b < parallel_bytes.size() && !stopped; ++b) {
      if (unknown[b] || parallel_bytes[b] <= bound[b]) continue;
      if (unbounded_by_parallel_fold(c.graph, legal, where, predicted, observed, static_cast<int>(b))) continue;
      if (internal_run::holds_a_padded_destination(c.graph, static_cast<int>(b), parallel_bytes, bound)) continue;
      o.kind = "memory";
      o.message = "an allocation of " + buffer_name(c.graph, static_cast<int>(b)) + " takes " +
                  std::to_string(parallel_bytes[b]) + " bytes with parallel loops, more than the " +
                  std::to_string(bound[b]) + " of the same schedule with serial loops (steps times " +
                  std::to_string(k_in_flight) + " or not, or funcs computed at the parallel loops)";
      o.runs = total.runs;
      return o;
    }
  }
  return total;
}

outcome run_isolated(const case_spec& c, bool use_fork, const features& f, int timeout_seconds) {
  if (!use_fork) return run_case(c, f);
  std::FILE* result = std::tmpfile();
  std::FILE* err = std::tmpfile();
  std::fflush(stdout);
  std::fflush(stderr);
  const pid_t pid = fork();
  if (pid == 0) {
    dup2(fileno(err), 2);
    alarm(timeout_seconds);
    outcome o = run_case(c, f);
    std::fprintf(result, "%s\n%d\n%d\n%s", o.kind.c_str(), o.schedule, o.runs, o.message.c_str());
    std::fflush(result);
    _exit(0);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  auto read_all = [](std::FILE* f) {
    std::string s;
    std::rewind(f);
    char buf[4096];
    for (std::size_t n; (n = std::fread(buf, 1, sizeof(buf), f)) > 0;) s.append(buf, n);
    std::fclose(f);
    return s;
  };
  const std::string text = read_all(result);
  std::string errors = read_all(err);
  outcome o;
  if (WIFSIGNALED(status) || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    const int sig = WIFSIGNALED(status) ? WTERMSIG(status) : 0;
    o.kind = sig == SIGALRM ? "timeout" : "crash";
    if (errors.size() > 2000) errors = errors.substr(0, 2000) + "...";
    o.message = (sig ? "signal " + std::to_string(sig) : "exit status " + std::to_string(WEXITSTATUS(status))) +
                (errors.empty() ? "" : ": " + errors);
    // The schedule that crashed is not known: shrinking keeps all of them until it can tell.
    o.schedule = -2;
    return o;
  }
  std::istringstream in(text);
  std::getline(in, o.kind);
  std::string line;
  std::getline(in, line);
  o.schedule = std::atoi(line.c_str());
  std::getline(in, line);
  o.runs = std::atoi(line.c_str());
  std::getline(in, o.message, '\0');
  return o;
}

}  // namespace random_test
}  // namespace slinky
