// The just-in-time entry: a cache of pipelines per shape class, scheduled and built on demand.
#include "slinky/scheduler/auto_pipeline.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <iostream>
#include <limits>
#include <optional>

#include "slinky/base/assert.h"
#include "slinky/scheduler/sched_graph.h"

namespace slinky {

namespace {

// The class of an extent: the smallest power of two not less than it (0 for an empty dim; an
// extent above 2^62, where the next power of two does not fit an index_t, is its own class).
index_t extent_class(index_t extent) {
  if (extent <= 0) return 0;
  constexpr index_t largest = static_cast<index_t>(1) << 62;
  if (extent > largest) return extent;
  index_t c = 1;
  while (c < extent) c <<= 1;
  return c;
}

// Reports a wrong call like pipeline::evaluate does: to check_failed, else on stderr.
void report_wrong_call(const eval_context* ctx, expr condition, const char* what) {
  const eval_config* config = ctx ? ctx->config : nullptr;
  if (config && config->check_failed) {
    config->check_failed(condition);
  } else {
    std::cerr << "slinky: auto_pipeline::evaluate: " << what << std::endl;
  }
}

bool count_matches(const eval_context* ctx, const char* what, std::size_t expected, std::size_t actual) {
  if (expected == actual) return true;
  std::string message = "wrong number of ";
  message += what;
  message += ": expected " + std::to_string(expected) + ", got " + std::to_string(actual);
  report_wrong_call(ctx, expr(static_cast<index_t>(actual)) == expr(static_cast<index_t>(expected)), message.c_str());
  return false;
}

// The schedule of the funcs of a graph, to be put back after the scheduler changed it.
class saved_schedule {
public:
  explicit saved_schedule(const scheduler_internal::sched_graph& g) {
    for (const scheduler_internal::sched_node& n : g.nodes) {
      func_state s;
      s.f = n.f;
      s.loops = n.f->loops();
      s.compute_at = n.f->compute_at();
      for (const func::output& o : n.f->outputs()) s.store_at.push_back(o.buffer->store_at());
      funcs_.push_back(std::move(s));
    }
  }
  void restore() const {
    for (const func_state& s : funcs_) {
      s.f->loops(s.loops);
      s.f->compute_at(s.compute_at);
      const std::vector<func::output>& outs = s.f->outputs();
      for (std::size_t i = 0; i < outs.size(); ++i) outs[i].buffer->store_at(s.store_at[i]);
    }
  }

private:
  struct func_state {
    func* f;
    std::vector<func::loop_info> loops;
    std::optional<loop_id> compute_at;
    std::vector<std::optional<loop_id>> store_at;
  };
  std::vector<func_state> funcs_;
};

// The bytes a buffer's elements span: [lo, hi).
std::pair<const char*, const char*> span_of(const raw_buffer& b) {
  const char* base = static_cast<const char*>(b.base);
  index_t lo = 0, hi = static_cast<index_t>(b.elem_size);
  for (std::size_t d = 0; d < b.rank; ++d) {
    const index_t extent = b.dim(d).extent();
    if (extent <= 0) return {base, base};
    const index_t reach = b.dim(d).stride() * (extent - 1);
    (reach < 0 ? lo : hi) += reach;
  }
  return {base + lo, base + hi};
}

// Whether an output's memory overlaps an input's (or another output's): evaluating the pipeline
// again would then read what the previous evaluation wrote.
bool outputs_alias(span<const raw_buffer* const> inputs, span<const raw_buffer* const> outputs) {
  for (std::size_t i = 0; i < outputs.size(); ++i) {
    const auto o = span_of(*outputs[i]);
    if (o.first == o.second) continue;
    for (int side = 0; side < 2; ++side) {
      const span<const raw_buffer* const> others = side == 0 ? inputs : outputs;
      for (std::size_t j = 0; j < others.size(); ++j) {
        if (side == 1 && j == i) continue;
        const auto x = span_of(*others[j]);
        if (x.first < o.second && o.first < x.second) return true;
      }
    }
  }
  return false;
}

// The candidates timed again after the walk (the fastest and those with smaller steps within
// confirm_band times equal_time of it), at most.
constexpr std::size_t confirm_candidates = 4;
constexpr double confirm_band = 4;
// Candidates with a parallel loop are timed again in this many times `repetitions` rounds.
constexpr int parallel_rounds = 3;

// One output of the model's schedule that the refinement may change: its loop (or none), and the
// model's next-best candidate for it.
struct refined_loop {
  func* f;
  // The model's loop: over v in steps of `step` (none: the model left the output without a loop).
  bool none;
  var v;
  index_t step;
  bool parallel;
  index_t granularity;
  index_t iterations;
  bool recomputes;
  // A tile's outer loop as the scheduler set it (empty without one): the refinement walks its
  // step (the strip's width, strip_extent the dim's extent rounded up to whole strips) beside the
  // inner loop's.
  std::vector<func::loop_info> outer;
  index_t strip, strip_extent;
  bool outer_parallel;
  // The model's next-best candidate (schedule_report::loop_decision::has_next): a loop over
  // next_v, or no loop (next_none).
  bool has_next;
  bool next_none;
  var next_v;
  index_t next_step, next_granularity, next_iterations;
  bool next_parallel;
  // The outputs of the funcs computed in the model's loop (not a tile's): stored in the loop
  // where a candidate makes it data-parallel (each iteration its own windows), else where the
  // builder stores them (pipelined when the loop is parallel).
  std::vector<buffer_expr_ptr> in_loop;
};
// A candidate's setting of one refined_loop: the model's dim (which 0) or the next-best
// candidate's (which 1), in steps of `step`, parallel or not; with the model's tile, in strips of
// `strip` (0 without a tile), and then `parallel` is the strips' (the outer loop's; the inner one
// is serial).
struct loop_setting {
  int which;
  index_t step;
  bool parallel;
  index_t strip;
  // The model's loop, parallel, with the funcs in it stored in it (data-parallel) rather than
  // pipelined.
  bool data_parallel;
  bool operator==(const loop_setting& o) const {
    return which == o.which && step == o.step && parallel == o.parallel && strip == o.strip &&
           data_parallel == o.data_parallel;
  }
};
using candidate_loops = std::vector<loop_setting>;

// No loop in this setting.
bool no_loop(const refined_loop& l, const loop_setting& s) { return s.which == 0 ? l.none : l.next_none; }

std::string describe(const std::vector<refined_loop>& loops, const candidate_loops& c, const node_context& ctx) {
  std::string s;
  for (std::size_t i = 0; i < loops.size(); ++i) {
    if (!s.empty()) s += "; ";
    s += loops[i].f->name(&ctx) + ": ";
    if (no_loop(loops[i], c[i])) {
      s += "no loop";
      continue;
    }
    // The next-best candidate's loop is named by its variable (the model's dim is the default).
    if (c[i].which == 1) s += "over " + ctx.name(loops[i].next_v) + ", ";
    const bool tile = c[i].which == 0 && c[i].strip > 0;
    s += "step " + std::to_string(c[i].step) + (c[i].parallel && !tile ? ", parallel" : "");
    if (c[i].which == 0 && c[i].parallel && c[i].data_parallel) s += ", data-parallel";
    if (tile) s += std::string(c[i].parallel ? ", parallel" : "") + ", strips of " + std::to_string(c[i].strip);
  }
  return s;
}

// The loops of a candidate set on the funcs.
void set_loops(const std::vector<refined_loop>& loops, const candidate_loops& c) {
  SLINKY_ASSERT(c.size() == loops.size(), "a setting per refined loop");
  for (std::size_t i = 0; i < loops.size(); ++i) {
    const refined_loop& r = loops[i];
    // Stored in the model's loop where it is data-parallel, else by default (a store_at a loop
    // the candidate does not have would not build).
    const bool stored_in_loop = c[i].which == 0 && c[i].parallel && c[i].data_parallel && !no_loop(r, c[i]);
    for (const buffer_expr_ptr& b : r.in_loop) {
      b->store_at(stored_in_loop ? std::optional<loop_id>(loop_id{r.f, r.v}) : std::optional<loop_id>());
    }
    if (no_loop(r, c[i])) {
      r.f->loops({});
      continue;
    }
    std::vector<func::loop_info> l = {
        {c[i].which == 0 ? r.v : r.next_v, c[i].step, c[i].parallel ? loop::parallel : loop::serial}};
    if (c[i].which == 0) {
      l.insert(l.end(), r.outer.begin(), r.outer.end());
      if (!r.outer.empty() && c[i].strip > 0) {
        // A tile: the strips parallel or not, the inner loop serial.
        l[0].max_workers = loop::serial;
        l[1].step = c[i].strip;
        l[1].max_workers = c[i].parallel ? loop::parallel : loop::serial;
      }
    }
    r.f->loops(std::move(l));
  }
}

// The neighbours of c, in a fixed order: for each loop, its step doubled (while the model's
// iterations allow), halved (a multiple of the granularity), a tile's strips doubled (while two
// are left) and halved (down to cost_model::min_strip), the model's next-best candidate (from the
// model's dim), serial or parallel, and a parallel loop of the model's dim pipelined or
// data-parallel.
std::vector<candidate_loops> neighbours(const std::vector<refined_loop>& loops, const candidate_loops& c, int threads) {
  SLINKY_ASSERT(c.size() == loops.size(), "a setting per refined loop");
  std::vector<candidate_loops> r;
  for (std::size_t i = 0; i < loops.size(); ++i) {
    const refined_loop& l = loops[i];
    const bool looped = !no_loop(l, c[i]);
    const bool model_dim = c[i].which == 0;
    if (looped) {
      const index_t extent = model_dim ? l.step * l.iterations : l.next_step * l.next_iterations;
      const index_t granularity = model_dim ? l.granularity : l.next_granularity;
      if (c[i].step * 2 < extent) {
        r.push_back(c);
        r.back()[i].step *= 2;
      }
      const index_t half = c[i].step / 2;
      if (half >= 1 && half % granularity == 0) {
        r.push_back(c);
        r.back()[i].step = half;
      }
      if (model_dim && c[i].strip > 0) {
        if (c[i].strip * 2 < l.strip_extent) {
          r.push_back(c);
          r.back()[i].strip *= 2;
        }
        if (c[i].strip / 2 >= scheduler_internal::cost_model::min_strip) {
          r.push_back(c);
          r.back()[i].strip /= 2;
        }
      }
    }
    if (model_dim && l.has_next) {
      r.push_back(c);
      r.back()[i] = {1, l.next_none ? 0 : l.next_step, l.next_parallel, 0, false};
    }
    if (looped && threads > 1 && !(model_dim && c[i].data_parallel)) {
      r.push_back(c);
      r.back()[i].parallel = !c[i].parallel;
    }
    // A parallel loop of the model's dim pipelined or data-parallel.
    if (looped && model_dim && c[i].parallel && c[i].strip == 0 && !l.in_loop.empty()) {
      r.push_back(c);
      r.back()[i].data_parallel = !c[i].data_parallel;
    }
  }
  return r;
}

}  // namespace

auto_pipeline::auto_pipeline(node_context& ctx, std::vector<var> args, std::vector<buffer_expr_ptr> inputs,
                             std::vector<buffer_expr_ptr> outputs, const build_options& build, const machine& m,
                             const schedule_options& options, std::size_t capacity)
    : ctx_(ctx), args_(std::move(args)), inputs_(std::move(inputs)), outputs_(std::move(outputs)),
      build_options_(build), machine_(m), schedule_options_(options), capacity_(std::max<std::size_t>(capacity, 1)) {}

auto_pipeline::auto_pipeline(node_context& ctx, std::vector<buffer_expr_ptr> inputs,
                             std::vector<buffer_expr_ptr> outputs, const build_options& build, const machine& m,
                             const schedule_options& options, std::size_t capacity)
    : auto_pipeline(ctx, {}, std::move(inputs), std::move(outputs), build, m, options, capacity) {}

bool auto_pipeline::shape_class(scalars args, buffers inputs, buffers outputs, const eval_context* ctx,
                                std::vector<index_t>& key) const {
  if (!count_matches(ctx, "scalar arguments", args_.size(), args.size()) ||
      !count_matches(ctx, "input buffers", inputs_.size(), inputs.size()) ||
      !count_matches(ctx, "output buffers", outputs_.size(), outputs.size())) {
    return false;
  }
  key.clear();
  for (int side = 0; side < 2; ++side) {
    const buffers bufs = side == 0 ? inputs : outputs;
    const std::vector<buffer_expr_ptr>& exprs = side == 0 ? inputs_ : outputs_;
    for (std::size_t i = 0; i < bufs.size(); ++i) {
      const raw_buffer* b = bufs[i];
      if (!b) {
        const var sym = exprs[i]->sym();
        std::string message = side == 0 ? "input buffer " : "output buffer ";
        message += ctx_.name(sym);
        message += " is null";
        report_wrong_call(ctx, expr(variable::make(sym)) != 0, message.c_str());
        return false;
      }
      key.push_back(static_cast<index_t>(b->rank));
      key.push_back(static_cast<index_t>(b->elem_size));
      for (std::size_t d = 0; d < b->rank; ++d) key.push_back(extent_class(b->dim(d).extent()));
    }
  }
  key.push_back(workers_for(ctx));
  return true;
}

int auto_pipeline::workers_for(const eval_context* ctx) const {
  const int most = std::max(1, machine_.threads);
  if (!ctx) return most;
  const thread_pool* pool = ctx->config ? ctx->config->thread_pool : nullptr;
  // The pool's background threads and the thread that waits for the loop.
  return pool ? std::max(1, std::min(most, pool->thread_count() + 1)) : 1;
}

std::shared_ptr<const pipeline> auto_pipeline::lookup(const std::vector<index_t>& key) const {
  std::lock_guard<std::mutex> lock(cache_mutex_);
  for (entry& e : entries_) {
    if (e.key == key) {
      e.last_use = ++clock_;
      return e.p;
    }
  }
  return nullptr;
}

std::shared_ptr<const pipeline> auto_pipeline::build(const std::vector<index_t>& key, scalars args, buffers inputs,
                                                     buffers outputs, const eval_context* ctx) const {
  std::lock_guard<std::mutex> build_lock(build_mutex_);
  // Another thread may have built this class while this one waited.
  if (std::shared_ptr<const pipeline> p = lookup(key)) return p;

  // The largest shapes of the class: each buffer with mins 0 and its extents rounded up, so the
  // schedule depends only on the class (not on which of its shapes came first), and the working
  // set it fits to the cache is the largest any shape of the class can have.
  schedule_shapes shapes;
  std::size_t k = 0;
  for (const std::vector<buffer_expr_ptr>* bufs : {&inputs_, &outputs_}) {
    for (const buffer_expr_ptr& b : *bufs) {
      schedule_shapes::buffer_shape s;
      s.buffer = b;
      const index_t rank = key[k++];
      s.elem_size = key[k++];
      for (index_t d = 0; d < rank; ++d) s.bounds.emplace_back(0, key[k++] - 1);
      shapes.buffers.push_back(std::move(s));
    }
  }
  // The scalars of this evaluation (not part of the class: they only inform the schedule).
  for (std::size_t i = 0; i < args_.size(); ++i) shapes.add_scalar(args_[i], args[i]);

  scheduler_internal::sched_graph g;
  scheduler_internal::build_sched_graph(inputs_, outputs_, schedule_shapes(), g);
  const saved_schedule saved(g);
  machine m = machine_;
  m.threads = static_cast<int>(key.back());
  const schedule_report report = schedule(inputs_, outputs_, shapes, m, schedule_options_);
  std::string text = report.to_string(&ctx_);
  auto p = std::make_shared<const pipeline>(build_pipeline(ctx_, args_, inputs_, outputs_, {}, build_options_));

  // The measured refinement: the loops the scheduler set (a client's are left alone).
  std::vector<refined_loop> loops;
  if (refine_.max_evaluations > 0) {
    for (const schedule_report::loop_decision& l : report.loops) {
      // An output without a loop: refined where the model priced a loop for it (its next-best).
      if (!l.looped && !(l.has_next && l.next_dim >= 0)) continue;
      for (const scheduler_internal::sched_node& n : g.nodes) {
        if (n.f != l.f) continue;
        std::vector<func::loop_info> outer(n.f->loops().begin() + std::min<std::size_t>(1, n.f->loops().size()),
                                           n.f->loops().end());
        loops.push_back({n.f,
                         !l.looped,
                         l.loop_var,
                         l.step,
                         l.parallel,
                         std::max<index_t>(1, l.granularity),
                         l.iterations,
                         l.recomputes,
                         std::move(outer),
                         l.outer_step,
                         l.outer_step * l.outer_iterations,
                         l.outer_parallel,
                         l.has_next,
                         l.next_dim < 0,
                         l.next_var,
                         l.next_step,
                         std::max<index_t>(1, l.next_granularity),
                         l.next_iterations,
                         l.next_parallel,
                         {}});
        // The funcs of this output's group computed in its loop (not a tile's).
        if (l.looped && l.outer_dim < 0) {
          for (const schedule_report::func_decision& d : report.funcs) {
            if (d.where != schedule_report::placement::in_loop) continue;
            for (const scheduler_internal::sched_node& member : g.nodes) {
              if (member.f != d.f || member.group < 0 || g.nodes[member.group].f != l.f) continue;
              for (const func::output& o : member.f->outputs()) loops.back().in_loop.push_back(o.buffer);
            }
          }
        }
      }
    }
  }
  // Timing evaluates the pipeline several times: not where an output overlaps an input (each
  // evaluation would read what the previous one wrote).
  const bool aliased = !loops.empty() && outputs_alias(inputs, outputs);
  if (aliased) {
    text += "refinement: none, an output overlaps an input or another output (the model's choice is kept)\n";
  } else if (!loops.empty()) {
    eval_context timing_ctx;
    if (ctx) timing_ctx.config = ctx->config;
    const int threads = m.threads;
    // Builds and times a candidate: the median of the repetitions, which stop after one slower
    // than `limit` seconds.
    auto build_candidate = [&](const candidate_loops& c) {
      set_loops(loops, c);
      return std::make_shared<const pipeline>(build_pipeline(ctx_, args_, inputs_, outputs_, {}, build_options_));
    };
    auto time_candidate = [&](const pipeline& cp, const std::string& name, double limit) {
      const std::function<double()> run = [&]() {
        const auto t0 = std::chrono::steady_clock::now();
        cp.evaluate(args, inputs, outputs, timing_ctx);
        return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      };
      // Without an injected timer, a first evaluation warms up (the candidate's allocations, its
      // first touch of the caches) untimed.
      if (!refine_.timer) run();
      std::vector<double> t;
      for (int r = 0; r < std::max(1, refine_.repetitions); ++r) {
        t.push_back(refine_.timer ? refine_.timer(name, run) : run());
        if (t.back() > limit) break;
      }
      std::sort(t.begin(), t.end());
      return t[t.size() / 2];
    };
    candidate_loops model;
    for (const refined_loop& l : loops) {
      // A tile's setting is parallel where its strips are.
      model.push_back({0, l.none ? 0 : l.step, l.outer.empty() ? l.parallel : l.outer_parallel,
                       l.outer.empty() ? 0 : l.strip, l.recomputes});
    }
    const std::string model_name = describe(loops, model, ctx_);
    const double model_s = time_candidate(*p, model_name, std::numeric_limits<double>::infinity());
    const double limit = refine_.max_slowdown * model_s;
    std::vector<candidate_loops> tried = {model};
    // Every candidate measured, in order, with its time and pipeline.
    struct measured_candidate {
      candidate_loops c;
      double s;
      std::shared_ptr<const pipeline> p;
    };
    std::vector<measured_candidate> measured = {{model, model_s, p}};
    int explored = 0;
    double worst = 1;
    char buf[160];
    std::string log;
    // Builds, times and records a candidate not tried yet; its index in `measured`.
    auto measure = [&](const candidate_loops& n) {
      tried.push_back(n);
      const std::string name = describe(loops, n, ctx_);
      std::shared_ptr<const pipeline> np = build_candidate(n);
      const double s = time_candidate(*np, name, limit);
      ++explored;
      worst = std::max(worst, model_s > 0 ? s / model_s : 1);
      std::snprintf(buf, sizeof(buf), "  %.3f ms (%.2fx the model's choice): ", s * 1e3, model_s > 0 ? s / model_s : 1);
      log += buf + name + "\n";
      measured.push_back({n, s, np});
      return measured.size() - 1;
    };
    // Times candidates again in `repetitions` interleaved rounds, one evaluation of each per round
    // (not counted in max_evaluations), and records the medians as their times.
    auto time_again = [&](const std::vector<std::size_t>& which, const char* why) {
      std::vector<std::vector<double>> t(which.size());
      for (int r = 0; r < std::max(1, refine_.repetitions); ++r) {
        for (std::size_t i = 0; i < which.size(); ++i) {
          const pipeline& cp = *measured[which[i]].p;
          const std::function<double()> run = [&]() {
            const auto t0 = std::chrono::steady_clock::now();
            cp.evaluate(args, inputs, outputs, timing_ctx);
            return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
          };
          t[i].push_back(refine_.timer ? refine_.timer(describe(loops, measured[which[i]].c, ctx_), run) : run());
        }
      }
      log += std::string("  timed again (") + why + "), interleaved, " +
             std::to_string(std::max(1, refine_.repetitions)) + " rounds:\n";
      for (std::size_t i = 0; i < which.size(); ++i) {
        std::sort(t[i].begin(), t[i].end());
        measured[which[i]].s = t[i][t[i].size() / 2];
        std::snprintf(buf, sizeof(buf), "  %.3f ms: ", measured[which[i]].s * 1e3);
        log += buf + describe(loops, measured[which[i]].c, ctx_) + "\n";
      }
    };
    // A candidate that takes a loop away from `from` (the model's next-best, no loop): it has no
    // steps to walk.
    auto is_leaf = [&](const candidate_loops& n, const candidate_loops& from) {
      for (std::size_t i = 0; i < n.size(); ++i) {
        if (!(n[i] == from[i]) && no_loop(loops[i], n[i])) return true;
      }
      return false;
    };
    // The walk from measured candidate `at`: the untried neighbours of the current candidate are
    // measured, and it goes on from the fastest.
    auto walk = [&](std::size_t at) {
      while (explored < refine_.max_evaluations) {
        const candidate_loops current = measured[at].c;
        int best = -1;
        // A neighbour without a loop faster than the current candidate beyond min_gain: the time
        // falls towards larger steps, and the walk goes on through a slower step on the way.
        bool leaf_faster = false;
        for (const candidate_loops& n : neighbours(loops, current, threads)) {
          if (explored >= refine_.max_evaluations) break;
          if (std::find(tried.begin(), tried.end(), n) != tried.end()) continue;
          const std::size_t j = measure(n);
          // A neighbour that takes a loop away is measured and may be kept, but the walk goes on
          // from the others (it would stop there, before the steps where a blocked kernel is as
          // fast with less memory).
          if (is_leaf(n, current)) {
            leaf_faster = leaf_faster || measured[j].s * (1 + refine_.min_gain) < measured[at].s;
            continue;
          }
          if (best < 0 || measured[j].s < measured[best].s) best = static_cast<int>(j);
        }
        if (best < 0) break;
        // The walk goes on from the fastest neighbour unless it is slower than the current
        // candidate (beyond min_gain): across a plateau (a kernel blocked by 4 rows runs 2 rows
        // as slowly as 1), not down a slope.
        const auto goes_on = [&]() {
          return measured[best].s <= measured[at].s * (1 + refine_.min_gain) || leaf_faster;
        };
        // Slower by less than confirm_band times min_gain: the two times may differ by the
        // machine's load between them rather than by the candidates (a walk stopped by noise
        // never reaches the steps beyond); both are timed again, interleaved, and compared on
        // those times.
        if (!goes_on() && measured[best].s <= measured[at].s * (1 + confirm_band * refine_.min_gain)) {
          time_again({at, static_cast<std::size_t>(best)}, "a neighbour slower by a little");
        }
        if (!goes_on()) break;
        at = static_cast<std::size_t>(best);
      }
    };
    walk(0);
    // With budget left, the lines of the fastest candidate's steps are followed further, one
    // step at a time, in both directions, past what the walk tried: the walk stops at the first
    // slower neighbour, and a time may rise and then fall again along a step (on the development
    // machine, a chain of elementwise funcs runs chunks of 2K to 32K elements slower than both
    // 1K and 64K). Where a probe is faster than that candidate beyond min_gain, the walk goes on
    // from it. The lines are probed in turn (loop by loop, larger then smaller steps).
    std::size_t next_line = 0;
    int probed_from = -1;
    while (explored < refine_.max_evaluations) {
      // The fastest candidate with a loop (the first measured on a tie).
      int from = -1;
      for (std::size_t j = 0; j < measured.size(); ++j) {
        bool looped = false;
        for (std::size_t i = 0; i < loops.size(); ++i) looped = looped || !no_loop(loops[i], measured[j].c[i]);
        if (looped && (from < 0 || measured[j].s < measured[from].s)) from = static_cast<int>(j);
      }
      if (from < 0) break;
      if (from != probed_from) next_line = 0;
      probed_from = from;
      const candidate_loops base = measured[from].c;
      // The next untried step on loop i's line from base, up or down.
      auto next_on_line = [&](std::size_t i, bool up) -> std::optional<candidate_loops> {
        const refined_loop& l = loops[i];
        if (no_loop(l, base[i])) return std::nullopt;
        const bool model_dim = base[i].which == 0;
        const index_t extent = model_dim ? l.step * l.iterations : l.next_step * l.next_iterations;
        const index_t granularity = model_dim ? l.granularity : l.next_granularity;
        candidate_loops c = base;
        while (true) {
          if (up) {
            if (c[i].step * 2 >= extent) return std::nullopt;
            c[i].step *= 2;
          } else {
            if (c[i].step / 2 < 1 || (c[i].step / 2) % granularity != 0) return std::nullopt;
            c[i].step /= 2;
          }
          if (std::find(tried.begin(), tried.end(), c) == tried.end()) return c;
        }
      };
      std::optional<candidate_loops> probe;
      // Memory before time on a plateau: where the step doubled was timed within confirm_band
      // times equal_time of the fastest (the band where the load may hide equal times, that of
      // the finalists below), larger steps are as likely to be only larger (the walk climbed while
      // they were as fast), and what the budget can still find is a smaller step as fast (memory
      // when time is equal); so that loop's line is followed down first, to its end. On the
      // development machine the elementwise chain of 8 ran chunks of 32768 to 262144 within 6% of
      // each other, 4096 and 2048 16% and 25% slower than 8192, and 1024 as fast as 16384: going
      // up and down in turn, the budget ran out on the plateau before chunks of 1024.
      for (std::size_t i = 0; i < loops.size() && !probe; ++i) {
        if (no_loop(loops[i], base[i])) continue;
        candidate_loops doubled = base;
        doubled[i].step *= 2;
        bool flat = false;
        for (const measured_candidate& m : measured) {
          flat = flat || (m.c == doubled && m.s <= measured[from].s * (1 + confirm_band * refine_.equal_time));
        }
        if (flat) probe = next_on_line(i, /*up=*/false);
      }
      const std::size_t lines = 2 * loops.size();
      for (std::size_t k = 0; k < lines && !probe; ++k) {
        const std::size_t line = (next_line + k) % lines;
        probe = next_on_line(line / 2, /*up=*/line % 2 == 0);
        if (probe) next_line = line + 1;
      }
      if (!probe) break;
      const std::size_t j = measure(*probe);
      if (measured[j].s * (1 + refine_.min_gain) < measured[from].s) walk(j);
    }
    // Memory when time is equal: of the candidates measured within equal_time of the fastest, the
    // one with the smallest steps (a loop's intermediates grow with its step), the first measured
    // on a tie (the model's choice first).
    double fastest = measured[0].s;
    for (const measured_candidate& c : measured) fastest = std::min(fastest, c.s);
    // The memory of a candidate, as the part of its loops' dims one iteration covers, summed (a
    // loop's intermediates grow with it; no loop covers the whole dim; a tile's iteration covers
    // that part of the strip's part of its outer dim).
    auto steps = [&](const candidate_loops& c) {
      double sum = 0;
      for (std::size_t i = 0; i < c.size(); ++i) {
        const refined_loop& l = loops[i];
        if (no_loop(l, c[i])) {
          sum += 1;
          continue;
        }
        const index_t extent = c[i].which == 0 ? l.step * l.iterations : l.next_step * l.next_iterations;
        double part = static_cast<double>(c[i].step) / static_cast<double>(std::max<index_t>(1, extent));
        if (c[i].which == 0 && c[i].strip > 0) {
          part *= static_cast<double>(c[i].strip) / static_cast<double>(std::max<index_t>(1, l.strip_extent));
        }
        sum += part;
      }
      return sum;
    };
    // The synchronisation of a candidate's parallel loops as the cost model prices it
    // (cost_model::parallel_iteration_ns per iteration, shared by the threads), in seconds. A
    // smaller step of a parallel loop costs more iterations, and so more hand-offs between the
    // threads; on a loaded machine, where the workers do not run at once, the timings hide that
    // cost (the chain into a parallel reduction: its 256 parallel iterations timed within 1.3% of
    // 52 and 26, then 0.83 ms against 0.63 in the benchmark's rounds). So a candidate with smaller
    // steps counts as equal to a faster one only if its time plus the synchronisation it adds is
    // within equal_time of it: the saving of memory must not be paid in synchronisation.
    auto sync_s = [&](const candidate_loops& c) {
      double iterations = 0;
      for (std::size_t i = 0; i < c.size(); ++i) {
        const refined_loop& l = loops[i];
        if (no_loop(l, c[i]) || !c[i].parallel) continue;
        const bool tile = c[i].which == 0 && c[i].strip > 0;
        const index_t extent = tile              ? l.strip_extent
                               : c[i].which == 0 ? l.step * l.iterations
                                                 : l.next_step * l.next_iterations;
        const index_t step = std::max<index_t>(1, tile ? c[i].strip : c[i].step);
        iterations += static_cast<double>((extent + step - 1) / step);
      }
      return iterations * scheduler_internal::cost_model::parallel_iteration_ns * 1e-9 / std::max(1, threads);
    };
    auto added_sync_s = [&](const candidate_loops& c, const candidate_loops& than) {
      return std::max(0.0, sync_s(c) - sync_s(than));
    };
    // The walk timed each candidate in its own moment: a candidate with smaller steps that lost
    // to the fastest by a few times equal_time may have lost to the machine's load rather than
    // to its steps. The fastest and up to confirm_candidates - 1 of those are timed again in
    // interleaved rounds, and the choice is made on these times: those the walk timed as equal,
    // then the fastest of the others (the likeliest to be equal; after a walk up a step's line the
    // smallest steps are those it left because they were slower).
    const measured_candidate* fastest_c = nullptr;
    for (const measured_candidate& c : measured) {
      if (c.s == fastest) {
        fastest_c = &c;
        break;
      }
    }
    std::vector<const measured_candidate*> finalists;
    for (const measured_candidate& c : measured) {
      if (&c != fastest_c && steps(c.c) < steps(fastest_c->c) &&
          c.s + added_sync_s(c.c, fastest_c->c) <= fastest * (1 + confirm_band * refine_.equal_time)) {
        finalists.push_back(&c);
      }
    }
    // Those the walk timed within equal_time of the fastest first, the smallest steps first (the
    // most memory saved if they are equal), then the fastest of the others.
    const auto walk_equal = [&](const measured_candidate* c) { return c->s <= fastest * (1 + refine_.equal_time); };
    std::stable_sort(finalists.begin(), finalists.end(), [&](const measured_candidate* a, const measured_candidate* b) {
      if (walk_equal(a) != walk_equal(b)) return walk_equal(a);
      return walk_equal(a) ? steps(a->c) < steps(b->c) : a->s < b->s;
    });
    if (finalists.size() + 1 > confirm_candidates) finalists.resize(confirm_candidates - 1);
    // The model's choice, where its steps are smaller than the fastest's, is timed again whatever
    // the walk timed it at: it is the cost model's fit of the working set to the cache, and a walk
    // that left it in a moment of load (on the development machine, an elementwise chain in
    // chunks of 1024 took 24.8 ms in one process's walk, then as long as chunks of 16384 in the
    // benchmark's rounds of the same process) would otherwise keep steps 16 times as large.
    const measured_candidate* model_c = &measured[0];
    if (model_c != fastest_c && steps(model_c->c) < steps(fastest_c->c) &&
        std::find(finalists.begin(), finalists.end(), model_c) == finalists.end()) {
      finalists.push_back(model_c);
    }
    // A candidate with a parallel loop: its wall-clock time varies with the other processes'
    // load far more than a serial one's (9 to 17% from one evaluation to the next on the loaded
    // development machine, against a few percent serially).
    auto has_parallel = [&](const candidate_loops& c) {
      bool any = false;
      for (std::size_t i = 0; i < c.size(); ++i) {
        any = any || (threads > 1 && !no_loop(loops[i], c[i]) && c[i].parallel);
      }
      return any;
    };
    std::vector<measured_candidate> confirmed;
    // The times of the confirmed candidates in each round (round r of every candidate taken
    // together), for the comparison of parallel candidates below.
    std::vector<std::vector<double>> rounds_s;
    if (!finalists.empty()) {
      finalists.insert(finalists.begin(), fastest_c);
      // Parallel finalists are timed in parallel_rounds times as many rounds (as
      // scheduler_benchmark times its parallel pipelines): with their noise, the medians of
      // `repetitions` rounds differ by more than equal_time between candidates that are equal.
      bool parallel_finalists = false;
      for (const measured_candidate* c : finalists) parallel_finalists = parallel_finalists || has_parallel(c->c);
      const int rounds = std::max(1, refine_.repetitions) * (parallel_finalists ? parallel_rounds : 1);
      std::vector<std::vector<double>> t(finalists.size());
      for (int r = 0; r < rounds; ++r) {
        for (std::size_t i = 0; i < finalists.size(); ++i) {
          const pipeline& cp = *finalists[i]->p;
          const std::function<double()> run = [&]() {
            const auto t0 = std::chrono::steady_clock::now();
            cp.evaluate(args, inputs, outputs, timing_ctx);
            return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
          };
          t[i].push_back(refine_.timer ? refine_.timer(describe(loops, finalists[i]->c, ctx_), run) : run());
        }
      }
      log += "  timed again, interleaved, " + std::to_string(rounds) + " rounds:\n";
      rounds_s = t;
      for (std::size_t i = 0; i < finalists.size(); ++i) {
        std::sort(t[i].begin(), t[i].end());
        confirmed.push_back({finalists[i]->c, t[i][t[i].size() / 2], finalists[i]->p});
        std::snprintf(buf, sizeof(buf), "  %.3f ms: ", confirmed.back().s * 1e3);
        log += buf + describe(loops, confirmed.back().c, ctx_) + "\n";
      }
    }
    const std::vector<measured_candidate>& chosen_from = confirmed.empty() ? measured : confirmed;
    if (!confirmed.empty()) {
      fastest = confirmed[0].s;
      for (const measured_candidate& c : confirmed) fastest = std::min(fastest, c.s);
    }
    const measured_candidate* fastest_chosen = nullptr;
    for (const measured_candidate& c : chosen_from) {
      if (!fastest_chosen && c.s == fastest) fastest_chosen = &c;
    }
    // A parallel candidate is compared with the fastest round by round: it counts as equal only
    // if within equal_time of the fastest's time in the same round (with the synchronisation it
    // adds) in at least half of the rounds, the median of the paired ratios. Each round times the
    // two one after the other, under nearly the same load, so the pairs cancel most of the load
    // that the medians of the two, taken apart, mix in: a parallel loop's wall-clock time varies
    // by 9 to 17% from one evaluation to the next on the loaded development machine, and the
    // 3-stage stencil's parallel strips of 16 rows timed 3.7% slower than 128 at the medians of 5
    // rounds, then 15% slower than strips of 32 in the benchmark's. Stricter rules (within the band
    // in three quarters of the rounds; not slower in more than three quarters, however little)
    // kept steps twice as large as the lean hand schedule's in the benchmark's parallel rows
    // (scheduler_measurements.md).
    // The rounds (of `rounds`) where it was beyond the band, or -1 where the rule does not apply.
    auto rounds_beyond_band = [&](const measured_candidate& c, std::size_t& rounds) -> int {
      if (confirmed.empty() || &c == fastest_chosen || !(has_parallel(c.c) || has_parallel(fastest_chosen->c))) {
        return -1;
      }
      const std::vector<double>& tc = rounds_s[&c - confirmed.data()];
      const std::vector<double>& tf = rounds_s[fastest_chosen - confirmed.data()];
      const double sync = added_sync_s(c.c, fastest_chosen->c);
      int beyond = 0;
      for (std::size_t r = 0; r < tc.size(); ++r) beyond += tc[r] + sync > tf[r] * (1 + refine_.equal_time);
      rounds = tc.size();
      return beyond;
    };
    const measured_candidate* keep = nullptr;
    for (const measured_candidate& c : chosen_from) {
      if (c.s + added_sync_s(c.c, fastest_chosen->c) > fastest * (1 + refine_.equal_time)) continue;
      std::size_t rounds = 0;
      const int beyond = rounds_beyond_band(c, rounds);
      if (beyond >= 0 && 2 * static_cast<std::size_t>(beyond) > rounds) {
        log += "  beyond equal_time of the fastest in " + std::to_string(beyond) + " of " + std::to_string(rounds) +
               " rounds (more than half), not kept: " + describe(loops, c.c, ctx_) + "\n";
        continue;
      }
      if (!keep || steps(c.c) < steps(keep->c)) keep = &c;
    }
    const candidate_loops kept = keep->c;
    const double kept_s = keep->s;
    p = keep->p;
    std::snprintf(buf, sizeof(buf), "refinement: the model's choice %.3f ms (", model_s * 1e3);
    text += buf + model_name + "); " + std::to_string(explored) + " candidates evaluated";
    std::snprintf(buf, sizeof(buf), ", the slowest %.2fx the model's choice:\n", worst);
    text += buf + log;
    std::snprintf(buf, sizeof(buf), "refinement kept: %s, %.3f ms (%.2fx the model's choice)\n",
                  kept == model ? "the model's choice" : "a measured neighbour", kept_s * 1e3,
                  model_s > 0 ? kept_s / model_s : 1);
    text += buf + std::string("  ") + describe(loops, kept, ctx_) + "\n";
  }
  saved.restore();

  std::lock_guard<std::mutex> lock(cache_mutex_);
  ++builds_;
  report_ = std::move(text);
  if (entries_.size() >= capacity_) {
    auto oldest = std::min_element(entries_.begin(), entries_.end(),
                                   [](const entry& a, const entry& b) { return a.last_use < b.last_use; });
    entries_.erase(oldest);
  }
  entries_.push_back({key, p, ++clock_});
  return p;
}

std::shared_ptr<const pipeline> auto_pipeline::pipeline_for(scalars args, buffers inputs, buffers outputs,
                                                            const eval_context* ctx) const {
  std::vector<index_t> key;
  if (!shape_class(args, inputs, outputs, ctx, key)) return nullptr;
  if (std::shared_ptr<const pipeline> p = lookup(key)) return p;
  return build(key, args, inputs, outputs, ctx);
}

index_t auto_pipeline::evaluate(scalars args, buffers inputs, buffers outputs, eval_context& ctx) const {
  const std::shared_ptr<const pipeline> p = pipeline_for(args, inputs, outputs, &ctx);
  if (!p) return 1;
  return p->evaluate(args, inputs, outputs, ctx);
}

index_t auto_pipeline::evaluate(scalars args, buffers inputs, buffers outputs) const {
  eval_context ctx;
  return evaluate(args, inputs, outputs, ctx);
}

index_t auto_pipeline::evaluate(buffers inputs, buffers outputs, eval_context& ctx) const {
  return evaluate(scalars(), inputs, outputs, ctx);
}

index_t auto_pipeline::evaluate(buffers inputs, buffers outputs) const {
  eval_context ctx;
  return evaluate(scalars(), inputs, outputs, ctx);
}

std::size_t auto_pipeline::builds() const {
  std::lock_guard<std::mutex> lock(cache_mutex_);
  return builds_;
}

std::size_t auto_pipeline::cache_size() const {
  std::lock_guard<std::mutex> lock(cache_mutex_);
  return entries_.size();
}

std::string auto_pipeline::last_report() const {
  std::lock_guard<std::mutex> lock(cache_mutex_);
  return report_;
}

}  // namespace slinky
