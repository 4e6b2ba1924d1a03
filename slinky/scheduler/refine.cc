// auto_pipeline's measured refinement: the neighbours of a candidate, the walk over them, the
// steps followed further, the finalists timed again and the choice (docs/scheduler.md).
#include "slinky/scheduler/refine.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <limits>

#include "slinky/base/assert.h"
#include "slinky/scheduler/cost_model.h"
#include "slinky/scheduler/loop_analysis.h"

namespace slinky {
namespace scheduler_internal {

namespace {

// The candidates timed again after the walk (the fastest and those with smaller steps within
// confirm_band times equal_time of it), at most, besides the model's choice.
constexpr std::size_t confirm_candidates = 4;
constexpr double confirm_band = 4;
// Candidates with a parallel loop are timed again in this many times `repetitions` rounds, and
// so are all the finalists where the one kept after `repetitions` rounds has steps at least
// memory_factor times the model's choice's (keeping it would multiply the memory the model's
// choice takes).
constexpr int parallel_rounds = 3;
constexpr double memory_factor = 4;

// Whether n sets other strips than `from` on a tile of some loop (the next-best, which has no
// tile, is another loop).
bool changes_strips(const candidate_loops& n, const candidate_loops& from) {
  for (std::size_t i = 0; i < n.size(); ++i) {
    if (n[i].which == from[i].which && n[i].strip != from[i].strip) return true;
  }
  return false;
}

// Whether n only switches loops of `from` (serial or parallel, pipelined or data-parallel).
bool only_switches(const candidate_loops& n, const candidate_loops& from) {
  for (std::size_t i = 0; i < n.size(); ++i) {
    if (n[i].which != from[i].which || n[i].step != from[i].step || n[i].strip != from[i].strip) return false;
  }
  return true;
}

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
    const bool tile = c[i].which == 0 && !r.outer.empty() && c[i].strip > 0;
    for (const buffer_expr_ptr& b : r.in_tile) {
      b->store_at(tile ? std::optional<loop_id>(loop_id{r.f, r.outer.front().var}) : std::optional<loop_id>());
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

// The neighbours of c, in a fixed order: for each loop, its step doubled (while the model's iterations
// allow), halved (to the largest power of two below it, a multiple of the granularity), a tile's strips
// doubled (up to a single strip) and halved (down to cost_model::min_strip), then doubled with the step
// halved and halved with the step doubled (the same tile area), the model's next-best candidate (from the
// model's dim; from a tile, also the loop it beat at the tile's inner step), serial or parallel, and a
// parallel loop of the model's dim pipelined or data-parallel.
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
      // Halved: the power of two below it (28: 16, not 14, 7), callbacks' fast paths (scheduler.md).
      const index_t half = c[i].step > 1 ? scheduler_internal::floor_power_of_two(c[i].step - 1) : 0;
      if (half >= 1 && half % granularity == 0) {
        r.push_back(c);
        r.back()[i].step = half;
      }
      if (model_dim && c[i].strip > 0) {
        // Up to a single strip (the loop over the rows alone, at this step).
        if (c[i].strip < l.strip_extent) {
          r.push_back(c);
          r.back()[i].strip *= 2;
        }
        if (c[i].strip / 2 >= scheduler_internal::cost_model::min_strip) {
          r.push_back(c);
          r.back()[i].strip /= 2;
        }
        // The same tile area (about the same memory) in another shape: wider strips of fewer
        // rows, narrower strips of more rows.
        if (c[i].strip < l.strip_extent && half >= 1 && half % granularity == 0) {
          r.push_back(c);
          r.back()[i].strip *= 2;
          r.back()[i].step = half;
        }
        if (c[i].strip / 2 >= scheduler_internal::cost_model::min_strip && c[i].step * 2 < extent) {
          r.push_back(c);
          r.back()[i].strip /= 2;
          r.back()[i].step *= 2;
        }
      }
    }
    if (model_dim && l.has_next) {
      r.push_back(c);
      r.back()[i] = {1, l.next_none ? 0 : l.next_step, l.next_parallel, 0, false};
      // From a tile whose next-best is the loop it beat over the tile's inner dim, that loop at
      // the tile's inner step too: the strips taken away, the rows as the walk found them.
      const index_t next_extent = l.next_step * l.next_iterations;
      if (looped && c[i].strip > 0 && !l.next_none && l.next_v == l.v && c[i].step != l.next_step &&
          c[i].step % l.next_granularity == 0 && c[i].step < next_extent) {
        r.push_back(c);
        r.back()[i] = {1, c[i].step, l.next_parallel, 0, false};
      }
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

std::vector<refined_loop> refined_loops(const schedule_report& report, const sched_graph& g) {
  std::vector<refined_loop> loops;
  for (const schedule_report::loop_decision& l : report.loops) {
    // An output without a loop: refined where the model priced a loop for it (its next-best).
    if (!l.looped && !(l.has_next && l.next_dim >= 0)) continue;
    for (const sched_node& n : g.nodes) {
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
                       {},
                       {}});
      // The funcs of this output's group computed in its loop, or in its tile.
      if (l.looped) {
        std::vector<buffer_expr_ptr>& in = l.outer_dim < 0 ? loops.back().in_loop : loops.back().in_tile;
        for (const schedule_report::func_decision& d : report.funcs) {
          if (d.where != schedule_report::placement::in_loop) continue;
          for (const sched_node& member : g.nodes) {
            if (member.f != d.f || member.group < 0 || g.nodes[member.group].f != l.f) continue;
            for (const func::output& o : member.f->outputs()) in.push_back(o.buffer);
          }
        }
      }
    }
  }
  return loops;
}

candidate_loops model_setting(const std::vector<refined_loop>& loops) {
  candidate_loops c;
  for (const refined_loop& l : loops) {
    // A tile's setting is parallel where its strips are.
    c.push_back({0, l.none ? 0 : l.step, l.outer.empty() ? l.parallel : l.outer_parallel, l.outer.empty() ? 0 : l.strip,
                 l.recomputes});
  }
  return c;
}

candidate_loops other_setting(const std::vector<refined_loop>& loops, const schedule_report& other) {
  candidate_loops c = model_setting(loops);
  for (std::size_t i = 0; i < loops.size(); ++i) {
    const refined_loop& l = loops[i];
    const schedule_report::loop_decision* d = nullptr;
    for (const schedule_report::loop_decision& o : other.loops) {
      if (o.f == l.f) d = &o;
    }
    if (!d) continue;
    const bool tiled = d->looped && d->outer_dim >= 0;
    if (!l.none && d->looped && d->loop_var == l.v && tiled == !l.outer.empty() &&
        (!tiled || d->outer_var == l.outer.front().var) && d->step % l.granularity == 0) {
      c[i].step = d->step;
      if (tiled) c[i].strip = d->outer_step;
    } else if (l.has_next &&
               (l.next_none ? !d->looped
                            : d->looped && !tiled && d->loop_var == l.next_v && d->step % l.next_granularity == 0)) {
      c[i] = {1, l.next_none ? 0 : d->step, l.next_parallel, 0, false};
    }
  }
  return c;
}

refinement::refinement(const node_context& ctx, const refine_options& options, std::vector<refined_loop> loops,
                       int threads, build_fn build, evaluate_fn evaluate)
    : ctx_(ctx), refine_(options), loops_(std::move(loops)), threads_(threads), build_(std::move(build)),
      evaluate_(std::move(evaluate)) {
  model_ = model_setting(loops_);
  model_name_ = describe(loops_, model_, ctx_);
}

std::shared_ptr<const pipeline> refinement::run(std::shared_ptr<const pipeline> model, std::string& text,
                                                const std::vector<first_candidate>& first) {
  model_s_ = time_candidate(*model, model_name_, std::numeric_limits<double>::infinity());
  limit_ = refine_.max_slowdown * model_s_;
  tried_ = {model_};
  measured_ = {{model_, model_s_, model}};
  // The walk starts from the fastest of the model's choice and the first candidates (the first
  // measured on a tie, or within min_gain of it).
  std::size_t from = 0;
  for (const first_candidate& f : first) {
    if (explored_ >= refine_.max_evaluations) break;
    if (std::find(tried_.begin(), tried_.end(), f.c) != tried_.end()) continue;
    const std::size_t j = measure(f.c, f.why);
    if (measured_[j].s * (1 + refine_.min_gain) < measured_[from].s) from = j;
  }
  walk(from);
  follow_steps();
  const measured_candidate& keep = choose();
  report(keep, text);
  return keep.p;
}

// Evaluates cp once and returns its wall-clock time.
std::function<double()> refinement::runner(const pipeline& cp) const {
  return [this, &cp]() {
    const auto t0 = std::chrono::steady_clock::now();
    evaluate_(cp);
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  };
}

// One evaluation's time in seconds, from the client's timer if it has one. A time that is not a
// number, infinite or negative (a faulty timer) counts as infinitely slow: never chosen over a
// time that was measured.
double refinement::time_once(const std::string& name, const std::function<double()>& run) const {
  // Without an injected timer, each evaluation is timed at the core's usual speed (settled_time):
  // on the 2-core AMD EPYC of family 25 the core ran stretches of 1 to 55 ms 1.5 to 2 times
  // slower (another tenant on its other hardware thread); the walk timed attention's rows of 8
  // at 21.2 ms, then 31.0 in the interleaved rounds, the benchmark's rounds at 21.3.
  const double s = refine_.timer ? refine_.timer(name, run)
                                 : settled_time(run, speed_probe_ns, fastest_speed_probe_ns(),
                                                std::chrono::milliseconds(20), speed_);
  return std::isfinite(s) && s >= 0 ? s : std::numeric_limits<double>::infinity();
}

// Builds and times a candidate: the median of the repetitions, which stop after one slower
// than `limit` seconds.
std::shared_ptr<const pipeline> refinement::build_candidate(const candidate_loops& c) const {
  set_loops(loops_, c);
  return build_();
}

double refinement::time_candidate(const pipeline& cp, const std::string& name, double limit) const {
  const std::function<double()> run = runner(cp);
  // Without an injected timer, a first evaluation warms up (the candidate's allocations, its
  // first touch of the caches) untimed.
  if (!refine_.timer) run();
  std::vector<double> t;
  for (int r = 0; r < std::max(1, refine_.repetitions); ++r) {
    t.push_back(time_once(name, run));
    if (t.back() > limit) break;
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

// Builds, times and records a candidate not tried yet; its index in `measured_`.
std::size_t refinement::measure(const candidate_loops& n, const std::string& why) {
  tried_.push_back(n);
  const std::string name = describe(loops_, n, ctx_);
  std::shared_ptr<const pipeline> np = build_candidate(n);
  const double s = time_candidate(*np, name, limit_);
  ++explored_;
  worst_ = std::max(worst_, model_s_ > 0 ? s / model_s_ : 1);
  char buf[160];
  std::snprintf(buf, sizeof(buf), "  %.3f ms (%.2fx the model's choice): ", s * 1e3, model_s_ > 0 ? s / model_s_ : 1);
  log_ += buf + name + (why.empty() ? "" : " (" + why + ")") + "\n";
  measured_.push_back({n, s, np});
  return measured_.size() - 1;
}

// Times candidates again in `repetitions` interleaved rounds, one evaluation of each per round
// (not counted in max_evaluations), and records the medians as their times.
void refinement::time_again(const std::vector<std::size_t>& which, const char* why) {
  std::vector<std::vector<double>> t(which.size());
  for (int r = 0; r < std::max(1, refine_.repetitions); ++r) {
    for (std::size_t i = 0; i < which.size(); ++i) {
      const std::function<double()> run = runner(*measured_[which[i]].p);
      t[i].push_back(time_once(describe(loops_, measured_[which[i]].c, ctx_), run));
    }
  }
  log_ += std::string("  timed again (") + why + "), interleaved, " + std::to_string(std::max(1, refine_.repetitions)) +
          " rounds:\n";
  char buf[160];
  for (std::size_t i = 0; i < which.size(); ++i) {
    std::sort(t[i].begin(), t[i].end());
    measured_[which[i]].s = t[i][t[i].size() / 2];
    std::snprintf(buf, sizeof(buf), "  %.3f ms: ", measured_[which[i]].s * 1e3);
    log_ += buf + describe(loops_, measured_[which[i]].c, ctx_) + "\n";
  }
}

// A candidate that takes a loop away from `from` (the model's next-best, no loop): it has no
// steps to walk.
bool refinement::is_leaf(const candidate_loops& n, const candidate_loops& from) const {
  for (std::size_t i = 0; i < n.size(); ++i) {
    if (!(n[i] == from[i]) && no_loop(loops_[i], n[i])) return true;
  }
  return false;
}

// The walk from measured candidate `at`: the untried neighbours of the current candidate are
// measured, and it goes on from the fastest.
void refinement::walk(std::size_t at) {
  while (explored_ < refine_.max_evaluations) {
    const candidate_loops current = measured_[at].c;
    int best = -1;
    // A neighbour without a loop faster than the current candidate beyond min_gain: the time
    // falls towards larger steps, and the walk goes on through a slower step on the way.
    bool leaf_faster = false;
    const std::vector<candidate_loops> all = neighbours(loops_, current, threads_);
    // The neighbours that keep the tiles' strips first; those that change them only where none of
    // the others is faster than the current candidate beyond min_gain. The two products' tile
    // (strips of 512 columns, rows one at a time, at 0.39 of the best hand schedule: the kernel
    // is blocked by 4 rows) spent the budget of 8 as much on strips of 256 and 1024, as fast as
    // 512, as on the rows, and kept 4 rows in strips of 256 at 0.88 of the best hand schedule.
    for (int pass = 0; pass < 2; ++pass) {
      if (pass == 1 && (leaf_faster || (best >= 0 && measured_[best].s * (1 + refine_.min_gain) < measured_[at].s))) {
        break;
      }
      for (const candidate_loops& n : all) {
        if (explored_ >= refine_.max_evaluations) break;
        if (changes_strips(n, current) != (pass == 1)) continue;
        if (std::find(tried_.begin(), tried_.end(), n) != tried_.end()) continue;
        const std::size_t j = measure(n);
        // A neighbour that takes a loop away is measured and may be kept, but the walk goes on
        // from the others (it would stop there, before the steps where a blocked kernel is as
        // fast with less memory).
        if (is_leaf(n, current)) {
          leaf_faster = leaf_faster || measured_[j].s * (1 + refine_.min_gain) < measured_[at].s;
          continue;
        }
        // The plateaus are along the steps: a neighbour that only switches a loop counts only where
        // faster (the parallel 2-stage stencil went on from strips of 4 rows, data-parallel, to 4
        // pipelined, 1% slower, and spent its budget on that line, never timing the hand's 32).
        if (only_switches(n, current) && measured_[j].s > measured_[at].s) continue;
        if (best < 0 || measured_[j].s < measured_[best].s) best = static_cast<int>(j);
      }
    }
    if (best < 0) break;
    // The walk goes on from the fastest neighbour unless it is slower than the current
    // candidate (beyond min_gain): across a plateau (a kernel blocked by 4 rows runs 2 rows
    // as slowly as 1), not down a slope.
    const auto goes_on = [&]() { return measured_[best].s <= measured_[at].s * (1 + refine_.min_gain) || leaf_faster; };
    // Slower by less than confirm_band times min_gain: the two times may differ by the
    // machine's load between them rather than by the candidates (a walk stopped by noise
    // never reaches the steps beyond); both are timed again, interleaved, and compared on
    // those times.
    if (!goes_on() && measured_[best].s <= measured_[at].s * (1 + confirm_band * refine_.min_gain)) {
      time_again({at, static_cast<std::size_t>(best)}, "a neighbour slower by a little");
    }
    if (!goes_on()) break;
    at = static_cast<std::size_t>(best);
  }
}

// The fastest candidate with a loop (the first measured on a tie), or -1.
int refinement::fastest_looped() const {
  int from = -1;
  for (std::size_t j = 0; j < measured_.size(); ++j) {
    bool looped = false;
    for (std::size_t i = 0; i < loops_.size(); ++i) looped = looped || !no_loop(loops_[i], measured_[j].c[i]);
    if (looped && (from < 0 || measured_[j].s < measured_[from].s)) from = static_cast<int>(j);
  }
  return from;
}

// The next untried step on loop i's line from base, up or down.
std::optional<candidate_loops> refinement::next_on_line(const candidate_loops& base, std::size_t i, bool up) const {
  const refined_loop& l = loops_[i];
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
    if (std::find(tried_.begin(), tried_.end(), c) == tried_.end()) return c;
  }
}

// The next step to probe from measured candidate `from`, the lines taken in turn from
// `next_line` (advanced past the line probed), or none.
std::optional<candidate_loops> refinement::next_probe(int from, std::size_t& next_line) const {
  const candidate_loops base = measured_[from].c;
  std::optional<candidate_loops> probe;
  // Memory before time on a plateau: where the step doubled was timed within confirm_band
  // times equal_time of the fastest (the band where the load may hide equal times, that of
  // the finalists below), larger steps are as likely to be only larger (the walk climbed while
  // they were as fast), and what the budget can still find is a smaller step as fast (memory
  // when time is equal); so that loop's line is followed down first, to its end. On the
  // development machine the elementwise chain of 8 ran chunks of 32768 to 262144 within 6% of
  // each other, 4096 and 2048 16% and 25% slower than 8192, and 1024 as fast as 16384: going
  // up and down in turn, the budget ran out on the plateau before chunks of 1024.
  for (std::size_t i = 0; i < loops_.size() && !probe; ++i) {
    if (no_loop(loops_[i], base[i])) continue;
    candidate_loops doubled = base;
    doubled[i].step *= 2;
    bool flat = false;
    for (const measured_candidate& m : measured_) {
      flat = flat || (m.c == doubled && m.s <= measured_[from].s * (1 + confirm_band * refine_.equal_time));
    }
    if (flat) probe = next_on_line(base, i, /*up=*/false);
  }
  const std::size_t lines = 2 * loops_.size();
  for (std::size_t k = 0; k < lines && !probe; ++k) {
    const std::size_t line = (next_line + k) % lines;
    probe = next_on_line(base, line / 2, /*up=*/line % 2 == 0);
    if (probe) next_line = line + 1;
  }
  return probe;
}

// With budget left, the lines of the fastest candidate's steps are followed further, one
// step at a time, in both directions, past what the walk tried: the walk stops at the first
// slower neighbour, and a time may rise and then fall again along a step (on the development
// machine, a chain of elementwise funcs runs chunks of 2K to 32K elements slower than both
// 1K and 64K). Where a probe is faster than that candidate beyond min_gain, the walk goes on
// from it. The lines are probed in turn (loop by loop, larger then smaller steps).
void refinement::follow_steps() {
  std::size_t next_line = 0;
  int probed_from = -1;
  while (explored_ < refine_.max_evaluations) {
    const int from = fastest_looped();
    if (from < 0) break;
    if (from != probed_from) next_line = 0;
    probed_from = from;
    const std::optional<candidate_loops> probe = next_probe(from, next_line);
    if (!probe) break;
    const std::size_t j = measure(*probe);
    if (measured_[j].s * (1 + refine_.min_gain) < measured_[from].s) walk(j);
  }
}

// The memory of a candidate, as the part of its loops' dims one iteration covers, summed (a
// loop's intermediates grow with it; no loop covers the whole dim; a tile's iteration covers
// that part of the strip's part of its outer dim).
double refinement::steps(const candidate_loops& c) const {
  double sum = 0;
  for (std::size_t i = 0; i < c.size(); ++i) {
    const refined_loop& l = loops_[i];
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
}

// The synchronisation of a candidate's parallel loops as the cost model prices it (cost_model::parallel_iteration_ns
// per iteration, shared by the threads), in seconds. A smaller parallel step costs more iterations, so more hand-offs;
// on a loaded machine, where the workers do not run at once, the timings hide that cost (the chain into a parallel
// reduction: its 256 parallel iterations timed within 1.3% of 52 and 26, then 0.83 ms against 0.63 in the benchmark's
// rounds). So a candidate with smaller steps counts as equal to a faster one only if its time plus the synchronisation
// it adds is within equal_time of it: the saving of memory must not be paid in synchronisation.
double refinement::sync_s(const candidate_loops& c) const {
  double iterations = 0;
  for (std::size_t i = 0; i < c.size(); ++i) {
    const refined_loop& l = loops_[i];
    if (no_loop(l, c[i]) || !c[i].parallel) continue;
    const bool tile = c[i].which == 0 && c[i].strip > 0;
    const index_t extent = tile              ? l.strip_extent
                           : c[i].which == 0 ? l.step * l.iterations
                                             : l.next_step * l.next_iterations;
    const index_t step = std::max<index_t>(1, tile ? c[i].strip : c[i].step);
    iterations += static_cast<double>((extent + step - 1) / step);
  }
  return iterations * cost_model::parallel_iteration_ns * 1e-9 / std::max(1, threads_);
}

double refinement::added_sync_s(const candidate_loops& c, const candidate_loops& than) const {
  return std::max(0.0, sync_s(c) - sync_s(than));
}

// A candidate with a parallel loop: its wall-clock time varies with the other processes'
// load far more than a serial one's (9 to 17% from one evaluation to the next on the loaded
// development machine, against a few percent serially).
bool refinement::has_parallel(const candidate_loops& c) const {
  bool any = false;
  for (std::size_t i = 0; i < c.size(); ++i) {
    any = any || (threads_ > 1 && !no_loop(loops_[i], c[i]) && c[i].parallel);
  }
  return any;
}

// The candidates timed again with the fastest (measured `fastest`), the fastest not included.
std::vector<const refinement::measured_candidate*>
refinement::choose_finalists(double fastest, const measured_candidate* fastest_c) const {
  // The model's choice is left out here and added below: it takes none of the places of the
  // others (where it took one, the padded stencil's step between it and the fastest's was not
  // timed again, and a step twice that was kept: scheduler_measurements.md).
  const measured_candidate* model_c = &measured_[0];
  std::vector<const measured_candidate*> finalists;
  for (const measured_candidate& c : measured_) {
    if (&c != fastest_c && &c != model_c && steps(c.c) < steps(fastest_c->c) &&
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
  // The model's choice, where not the fastest, is timed again whatever the walk timed it at: it is
  // the cost model's fit of the working set to the cache, and a walk that timed it or the fastest
  // in a moment of load would otherwise keep steps 16 times as large, or half as large and 1.25
  // times slower (docs/scheduler.md).
  if (model_c != fastest_c) finalists.push_back(model_c);
  return finalists;
}

// Times the fastest and the finalists (if any) again in interleaved rounds: their medians in
// confirmed_ (the fastest first), their times in each round in rounds_s_.
void refinement::time_finalists(const measured_candidate* fastest_c, std::vector<const measured_candidate*> finalists) {
  if (finalists.empty()) return;
  finalists.insert(finalists.begin(), fastest_c);
  finalists_ = std::move(finalists);
  rounds_s_.assign(finalists_.size(), {});
  // Parallel finalists are timed in parallel_rounds times as many rounds (as
  // scheduler_benchmark times its parallel pipelines): with their noise, the medians of
  // `repetitions` rounds differ by more than equal_time between candidates that are equal.
  bool parallel_finalists = false;
  for (const measured_candidate* c : finalists_) parallel_finalists = parallel_finalists || has_parallel(c->c);
  time_rounds(std::max(1, refine_.repetitions) * (parallel_finalists ? parallel_rounds : 1), "");
}

// Times the finalists in `rounds` more interleaved rounds, one evaluation of each per round, and
// sets their times in confirmed_ to their medians over all their rounds.
void refinement::time_rounds(int rounds, const std::string& why) {
  for (int r = 0; r < rounds; ++r) {
    for (std::size_t i = 0; i < finalists_.size(); ++i) {
      const std::function<double()> run = runner(*finalists_[i]->p);
      rounds_s_[i].push_back(time_once(describe(loops_, finalists_[i]->c, ctx_), run));
    }
  }
  log_ += "  timed again, interleaved, " + std::to_string(rounds) + " rounds" + why + ":\n";
  confirmed_.clear();
  char buf[160];
  for (std::size_t i = 0; i < finalists_.size(); ++i) {
    std::vector<double> t = rounds_s_[i];
    std::sort(t.begin(), t.end());
    confirmed_.push_back({finalists_[i]->c, t[t.size() / 2], finalists_[i]->p});
    std::snprintf(buf, sizeof(buf), "  %.3f ms: ", confirmed_.back().s * 1e3);
    log_ += buf + describe(loops_, confirmed_.back().c, ctx_) + "\n";
  }
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
int refinement::rounds_beyond_band(const measured_candidate& c, const measured_candidate* fastest_chosen,
                                   std::size_t& rounds) const {
  if (confirmed_.empty() || &c == fastest_chosen || !(has_parallel(c.c) || has_parallel(fastest_chosen->c))) {
    return -1;
  }
  const std::vector<double>& tc = rounds_s_[&c - confirmed_.data()];
  const std::vector<double>& tf = rounds_s_[fastest_chosen - confirmed_.data()];
  const double sync = added_sync_s(c.c, fastest_chosen->c);
  int beyond = 0;
  const double band = equal_band(c, *fastest_chosen);
  for (std::size_t r = 0; r < tc.size(); ++r) beyond += tc[r] + sync > tf[r] * (1 + band);
  rounds = tc.size();
  return beyond;
}

// Memory when time is equal: of the candidates measured within equal_time of the fastest, the
// one with the smallest steps (a loop's intermediates grow with its step), the first measured
// on a tie (the model's choice first).
const refinement::measured_candidate& refinement::choose() {
  double fastest = measured_[0].s;
  for (const measured_candidate& c : measured_) fastest = std::min(fastest, c.s);
  // The walk timed each candidate in its own moment: a candidate with smaller steps that lost
  // to the fastest by a few times equal_time may have lost to the machine's load rather than
  // to its steps. The fastest and up to confirm_candidates - 1 of those are timed again in
  // interleaved rounds, and the choice is made on these times: those the walk timed as equal,
  // then the fastest of the others (the likeliest to be equal; after a walk up a step's line the
  // smallest steps are those it left because they were slower).
  // Nothing measured in finite time (a faulty timer): the model's choice.
  if (!std::isfinite(fastest)) return measured_[0];
  const measured_candidate* fastest_c = nullptr;
  for (const measured_candidate& c : measured_) {
    if (c.s == fastest) {
      fastest_c = &c;
      break;
    }
  }
  time_finalists(fastest_c, choose_finalists(fastest, fastest_c));
  const measured_candidate* keep = equal_smallest();
  // Where the candidate kept would multiply the memory of the model's choice, timed again with
  // it, a few slow rounds of the model's choice (or fast ones of the candidate) must not decide:
  // the finalists are timed in rounds up to parallel_rounds times `repetitions`, and the choice
  // is made again on the medians of all of them. The convolution, as fast without a loop as with
  // one, kept no loop (100 times the model's memory) in one full run of scheduler_benchmark on the
  // medians of 5 rounds, and the model's choice in every run of its row alone
  // (scheduler_measurements.md). Only then: timing every refinement's finalists in 3 times the
  // rounds made the refinement of the benchmark's pipelines 26% slower, this 16% (with the
  // fifth finalist of choose_finalists).
  const bool model_timed_again = std::find(finalists_.begin(), finalists_.end(), &measured_[0]) != finalists_.end();
  const int all_rounds = std::max(1, refine_.repetitions) * parallel_rounds;
  const int rounds_so_far = rounds_s_.empty() ? 0 : static_cast<int>(rounds_s_[0].size());
  if (model_timed_again && !(keep->c == model_) && steps(keep->c) >= memory_factor * steps(model_) &&
      rounds_so_far < all_rounds) {
    char why[160];
    std::snprintf(why, sizeof(why), " more (the one kept after %d takes %.0f times the steps of the model's choice)",
                  rounds_so_far, steps(keep->c) / steps(model_));
    time_rounds(all_rounds - rounds_so_far, why);
    keep = equal_smallest();
  }
  return *keep;
}

// c's time over than's, c's with the synchronisation it adds: where the finalists were timed again
// (c and than are then in confirmed_, as equal_smallest chooses from it), the median of their
// ratios round by round (the mean of the middle two of an even number), else the ratio of their
// times (c and than in measured_).
double refinement::time_ratio(const measured_candidate& c, const measured_candidate& than) const {
  const double sync = added_sync_s(c.c, than.c);
  if (confirmed_.empty()) return than.s > 0 ? (c.s + sync) / than.s : 1;
  const std::vector<double>& tc = rounds_s_[&c - confirmed_.data()];
  const std::vector<double>& tt = rounds_s_[&than - confirmed_.data()];
  std::vector<double> ratios;
  for (std::size_t r = 0; r < tc.size() && r < tt.size(); ++r) ratios.push_back(tt[r] > 0 ? (tc[r] + sync) / tt[r] : 1);
  std::sort(ratios.begin(), ratios.end());
  const std::size_t n = ratios.size();
  return n % 2 ? ratios[n / 2] : (ratios[n / 2 - 1] + ratios[n / 2]) / 2;
}

// The band within which c's time counts as equal to the fastest's: equal_time, widened by an
// eighth of it for each halving of the steps (the memory) from the fastest's to c's, up to twice
// equal_time at 256 times. Both bands are 5% (scheduler_benchmark's memory target judges its own
// rounds with the same fraction), and the measurements differ by a few percent from one run to
// the next: attention kept no loop at 5.3% faster than rows of 8 (8 MiB against 128 KiB), which
// the benchmark's rounds then timed 3.8% faster than its lean hand schedule, a miss of the
// memory target. A candidate that saves a factor of 64 of the memory counts as equal within 8.75%.
double refinement::equal_band(const measured_candidate& c, const measured_candidate& fastest) const {
  const double saved = steps(fastest.c) / std::max(steps(c.c), 1e-12);
  return refine_.equal_time * (1 + std::clamp(std::log2(saved), 0.0, 8.0) / 8);
}

// Of the candidates timed again (else of those measured) within equal_band of the fastest, the
// one with the smallest steps; but steps smaller than the model's choice's only if timed within
// min_gain of the fastest. The model sized its steps to the caches: smaller ones save memory the
// caches did not need, at the price of more calls, and where several of them are timed within the
// band, the one kept is the likeliest to have been timed fast by chance. In full runs of
// scheduler_benchmark, the 3-stage stencils' refinements kept half the model's step timed within
// the band, 0.89-0.90 of the best hand schedule in the benchmark's rounds, where the model's choice
// took 0.96 (scheduler_measurements.md).
const refinement::measured_candidate* refinement::equal_smallest() {
  const std::vector<measured_candidate>& chosen_from = confirmed_.empty() ? measured_ : confirmed_;
  double fastest = chosen_from[0].s;
  for (const measured_candidate& c : chosen_from) fastest = std::min(fastest, c.s);
  const measured_candidate* fastest_chosen = nullptr;
  for (const measured_candidate& c : chosen_from) {
    if (!fastest_chosen && c.s == fastest) fastest_chosen = &c;
  }
  const measured_candidate* keep = nullptr;
  for (const measured_candidate& c : chosen_from) {
    if (c.s + added_sync_s(c.c, fastest_chosen->c) > fastest * (1 + equal_band(c, *fastest_chosen))) continue;
    std::size_t rounds = 0;
    const int beyond = rounds_beyond_band(c, fastest_chosen, rounds);
    if (beyond >= 0 && 2 * static_cast<std::size_t>(beyond) > rounds) {
      log_ += "  beyond equal_time of the fastest in " + std::to_string(beyond) + " of " + std::to_string(rounds) +
              " rounds (more than half), not kept: " + describe(loops_, c.c, ctx_) + "\n";
      continue;
    }
    const double ratio = steps(c.c) < steps(model_) ? time_ratio(c, *fastest_chosen) : 1;
    if (ratio > 1 + refine_.min_gain) {
      char buf[160];
      std::snprintf(buf, sizeof(buf), "  %.2fx the fastest, smaller steps than the model's choice, not kept: ", ratio);
      log_ += buf + describe(loops_, c.c, ctx_) + "\n";
      continue;
    }
    if (!keep || steps(c.c) < steps(keep->c)) keep = &c;
  }
  return keep;
}

// What the refinement measured and kept.
void refinement::report(const measured_candidate& keep, std::string& text) const {
  const candidate_loops kept = keep.c;
  const double kept_s = keep.s;
  char buf[160];
  std::snprintf(buf, sizeof(buf), "refinement: the model's choice %.3f ms (", model_s_ * 1e3);
  text += buf + model_name_ + "); " + std::to_string(explored_) + " candidates evaluated";
  std::snprintf(buf, sizeof(buf), ", the slowest %.2fx the model's choice:\n", worst_);
  text += buf + log_;
  if (speed_.retimed > 0) {
    text += "  " + std::to_string(speed_.retimed) +
            " evaluations timed again: the core ran slower around them (a speed probe before and after)\n";
  }
  std::snprintf(buf, sizeof(buf), "refinement kept: %s, %.3f ms (%.2fx the model's choice)\n",
                kept == model_ ? "the model's choice" : "a measured neighbour", kept_s * 1e3,
                model_s_ > 0 ? kept_s / model_s_ : 1);
  text += buf + std::string("  ") + describe(loops_, kept, ctx_) + "\n";
}

}  // namespace scheduler_internal
}  // namespace slinky
