// The just-in-time entry: a cache of pipelines per shape class, scheduled and built on demand.
#include "slinky/scheduler/auto_pipeline.h"

#include <algorithm>
#include <iostream>
#include <optional>

#include "slinky/scheduler/refine.h"
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

// The largest shapes of the class `key` (auto_pipeline::shape_class) of the graph from `inputs`
// to `outputs`: each buffer with mins 0 and its extents rounded up, so the schedule depends only
// on the class (not on which of its shapes came first), and the working set it fits to the cache
// is the largest any shape of the class can have (of a key of own extents, own_key: the buffers'
// own shapes).
schedule_shapes class_shapes(const std::vector<index_t>& key, const std::vector<buffer_expr_ptr>& inputs,
                             const std::vector<buffer_expr_ptr>& outputs, const std::vector<var>& args,
                             span<const index_t> values) {
  schedule_shapes shapes;
  std::size_t k = 0;
  for (const std::vector<buffer_expr_ptr>* bufs : {&inputs, &outputs}) {
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
  for (std::size_t i = 0; i < args.size(); ++i) shapes.add_scalar(args[i], values[i]);
  return shapes;
}

// The key of this evaluation's own extents, laid out as its class's `key` (auto_pipeline::shape_class)
// but not rounded: class_shapes of it are the buffers' own shapes (mins 0).
std::vector<index_t> own_key(const std::vector<index_t>& key, pipeline::buffers ins, pipeline::buffers outs) {
  std::vector<index_t> own;
  own.reserve(key.size());
  for (const pipeline::buffers bufs : {ins, outs}) {
    for (const raw_buffer* b : bufs) {
      own.push_back(static_cast<index_t>(b->rank));
      own.push_back(static_cast<index_t>(b->elem_size));
      for (std::size_t d = 0; d < b->rank; ++d) own.push_back(std::max<index_t>(0, b->dim(d).extent()));
    }
  }
  own.push_back(key.back());
  return own;
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

  // Refined, the class is scheduled for this evaluation's own extents (the refinement measures on
  // its buffers, and the class's largest shapes may be up to twice as large in each dim: an output
  // of 300 x 400 is of the class of 512 x 512), else for its largest shapes (the schedule depends
  // only on the class).
  const bool refining = refine_.max_evaluations > 0;
  const schedule_shapes largest = class_shapes(key, inputs_, outputs_, args_, args);
  const std::vector<index_t> exact = refining ? own_key(key, inputs, outputs) : key;
  const bool own_smaller = exact != key;
  const schedule_shapes own = own_smaller ? class_shapes(exact, inputs_, outputs_, args_, args) : schedule_shapes();
  const schedule_shapes& shapes = own_smaller ? own : largest;
  scheduler_internal::sched_graph g;
  scheduler_internal::build_sched_graph(inputs_, outputs_, schedule_shapes(), g);
  const saved_schedule saved(g);
  machine m = machine_;
  m.threads = static_cast<int>(key.back());
  // The candidates evaluated before the walk, each with why, scheduled before the model's own (each
  // from the client's schedule: the funcs are put back after each): the model's choice for the
  // class's largest shapes, where the evaluation's are smaller, and its choices for the other
  // prefetch windows.
  std::vector<std::pair<std::string, schedule_report>> others;
  if (own_smaller) {
    others.emplace_back("the model's choice for the class's largest extents",
                        schedule(inputs_, outputs_, largest, m, schedule_options_));
    saved.restore();
  }
  for (index_t window : refine_.prefetch_windows) {
    if (!refining || window == m.prefetch_bytes || window < 0) continue;
    machine other = m;
    other.prefetch_bytes = window;
    others.emplace_back("the model's choice for a prefetch window of " + std::to_string(window) + " bytes",
                        schedule(inputs_, outputs_, shapes, other, schedule_options_));
    saved.restore();
  }
  const schedule_report report = schedule(inputs_, outputs_, shapes, m, schedule_options_);
  std::string text = report.to_string(&ctx_);
  // Builds the pipeline of the funcs' schedules now.
  const auto build_now = [&]() {
    return std::make_shared<const pipeline>(build_pipeline(ctx_, args_, inputs_, outputs_, {}, build_options_));
  };
  std::shared_ptr<const pipeline> p = build_now();

  // The measured refinement: the loops the scheduler set (a client's are left alone).
  std::vector<scheduler_internal::refined_loop> loops;
  if (refine_.max_evaluations > 0) loops = scheduler_internal::refined_loops(report, g);
  // Timing evaluates the pipeline several times: not where an output overlaps an input (each
  // evaluation would read what the previous one wrote).
  const bool aliased = !loops.empty() && outputs_alias(inputs, outputs);
  if (aliased) {
    text += "refinement: none, an output overlaps an input or another output (the model's choice is kept)\n";
  } else if (!loops.empty()) {
    eval_context timing_ctx;
    if (ctx) timing_ctx.config = ctx->config;
    std::vector<scheduler_internal::first_candidate> first;
    for (const auto& [why, other] : others) first.push_back({scheduler_internal::other_setting(loops, other), why});
    scheduler_internal::refinement refine(ctx_, refine_, std::move(loops), m.threads, build_now,
                                          [&](const pipeline& cp) { cp.evaluate(args, inputs, outputs, timing_ctx); });
    p = refine.run(p, text, first);
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
