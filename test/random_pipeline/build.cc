// Random pipeline testing, part 2: see build.h.
#include "random_pipeline/build.h"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "random_pipeline/auto.h"
#include "slinky/builder/pipeline.h"
#include "slinky/runtime/copy.h"
#include "slinky/runtime/memory_report.h"
#include "slinky/runtime/print.h"

namespace slinky {
namespace random_test {

std::string to_string(const box& b) {
  std::string s = "[";
  for (std::size_t d = 0; d < b.size(); ++d) {
    s += (d ? ", " : "") + std::to_string(b[d].min) + ".." + std::to_string(b[d].max);
  }
  return s + "]";
}

std::string compute_stage(const kernel_spec& k, const raw_buffer* const* ins, const raw_buffer* const* outs) {
  for (std::size_t o = 0; o < k.outputs.size(); ++o) {
    const raw_buffer& out = *outs[o];
    const box crop = bounds_of(out);
    if (elem_count(crop) == 0) continue;
    for (std::size_t i = 0; i < k.inputs.size(); ++i) {
      const raw_buffer& in = *ins[i];
      for (std::size_t d = 0; d < k.inputs[i].size(); ++d) {
        const ival need = map_access(k.inputs[i][d], crop, /*exact=*/true);
        if (!ival{in.dim(d).min(), in.dim(d).max()}.contains(need) || !in.base) {
          return "f" + std::to_string(k.stage) + " computing output " + std::to_string(o) + " over " + to_string(crop) +
                 " reads input " + std::to_string(i) + " dim " + std::to_string(d) + " over " + to_string({need}) +
                 ", but the input buffer covers " + to_string(bounds_of(in)) + (in.base ? "" : " (null base)");
        }
      }
    }
    const std::uint32_t salt = 0x9e3779b9u * static_cast<std::uint32_t>(k.stage + 1) + 0x85ebca6bu * (o + 1);
    for_each_point(crop, [&](const index_t* p) {
      std::uint32_t h = salt;
      for (std::size_t d = 0; d < crop.size(); ++d) h = mix(h, static_cast<std::uint32_t>(p[d]));
      for (std::size_t i = 0; i < k.inputs.size(); ++i) {
        box read(k.inputs[i].size());
        for (std::size_t d = 0; d < read.size(); ++d) {
          const access& a = k.inputs[i][d];
          const index_t x = access_at(a, p);
          read[d] = {x, x + a.hi - a.lo};
        }
        for_each_point(read, [&](const index_t* q) { h = mix(h, load(*ins[i], q)); });
      }
      store(out, p, h);
    });
  }
  return std::string();
}

void compute_copy(const stage_spec& st, const raw_buffer* const* ins, const raw_buffer* pad, const raw_buffer& out) {
  for_each_point(bounds_of(out), [&](const index_t* p) {
    for (std::size_t i = 0; i < st.inputs.size(); ++i) {
      const stage_input& in = st.inputs[i];
      if (!in.output_crop.empty() && !contains(in.output_crop, p)) continue;
      index_t q[max_rank + 1] = {};
      for (std::size_t d = 0; d < in.dims.size(); ++d) q[d] = access_at(in.dims[d], p);
      void* dst = out.address_at(span<const index_t>(p, out.rank));
      if (!in.input_crop.empty() && !contains(in.input_crop, q)) {
        // A pad of rank 0 is one value; a pad buffer is read at the output's point.
        const void* value = pad->rank == 0 ? pad->base : pad->address_at(span<const index_t>(p, pad->rank));
        std::memcpy(dst, value, out.elem_size);
      } else if (contains(bounds_of(*ins[i]), q)) {
        std::memcpy(dst, ins[i]->address_at(span<const index_t>(q, ins[i]->rank)), out.elem_size);
      }
      return;
    }
  });
}

copy_stmt::callable counted_copy(monitor* m, int stage) {
  return [m, stage](const raw_buffer& src, const raw_buffer& dst, const raw_buffer& pad) {
    m->count_copy(stage);
    m->record_points(stage, bounds_of(dst));
    ::slinky::copy(src, dst, pad);
  };
}

call_stmt::callable kernel(kernel_spec k, monitor* m) {
  return [k = std::move(k), m](const call_stmt* op, eval_context& ctx) -> index_t {
    const raw_buffer* ins[8];
    const raw_buffer* outs[4];
    for (std::size_t i = 0; i < op->inputs.size(); ++i) ins[i] = ctx.lookup_buffer(op->inputs[i]);
    for (std::size_t o = 0; o < op->outputs.size(); ++o) outs[o] = ctx.lookup_buffer(op->outputs[o]);
    if (m) {
      ++m->calls;
      if (m->failed) ++m->after_failure;
      if (!k.outputs.empty()) m->count_points(k.stage, bounds_of(*outs[0]));
      for (std::size_t o = 0; o < k.outputs.size(); ++o) {
        const box& allowed = m->allowed[k.outputs[o]];
        const box crop = bounds_of(*outs[o]);
        if (allowed.empty() || elem_count(crop) == 0) continue;
        for (std::size_t d = 0; d < crop.size(); ++d) {
          if (allowed[d].contains(crop[d])) continue;
          m->fail("crop", "f" + std::to_string(k.stage) + " is asked to compute output " + std::to_string(o) +
                              " over " + to_string(crop) + ", outside the region " + to_string(allowed) +
                              " the unscheduled pipeline computes");
          return 1;
        }
      }
    }
    if (m && k.fail_on_call > 0 && ++m->failing_calls == k.fail_on_call) {
      m->failed = true;
      return injected_failure;
    }
    std::string error = compute_stage(k, ins, outs);
    if (error.empty()) return 0;
    if (m) {
      m->fail("read_outside", error);
    } else {
      std::fprintf(stderr, "%s\n", error.c_str());
    }
    return 1;
  };
}

host_buffer::host_buffer(int elem_size, const box& bounds, std::vector<int> order, std::vector<index_t> padding) {
  const std::size_t rank = bounds.size();
  dims_.resize(rank);
  if (order.size() != rank) {
    order.clear();
    for (std::size_t d = 0; d < rank; ++d) order.push_back(static_cast<int>(d));
  }
  index_t stride = elem_size;
  for (std::size_t k = 0; k < rank; ++k) {
    const int d = order[k];
    dims_[d] = dim(bounds[d].min, bounds[d].max, stride);
    stride *= std::max<index_t>(bounds[d].extent(), 1) + (k < padding.size() ? padding[k] : 0);
  }
  data_.assign(stride / 8 + 2, 0);
  raw_.base = data_.data();
  raw_.elem_size = elem_size;
  raw_.rank = rank;
  raw_.dims = dims_.data();
}

void fill(const host_buffer& b, std::uint64_t seed) {
  for_each_point(b.bounds(), [&](const index_t* p) {
    std::uint32_t h = static_cast<std::uint32_t>(seed) ^ static_cast<std::uint32_t>(seed >> 32);
    for (std::size_t d = 0; d < b.raw().rank; ++d) h = mix(h * 0x01000193u, static_cast<std::uint32_t>(p[d]));
    store(b.raw(), p, mix(h, 0x27d4eb2fu));
  });
}

std::string compare(const raw_buffer& expected, const raw_buffer& actual) {
  std::string result;
  const box b = bounds_of(expected);
  if (!(b == bounds_of(actual))) return "bounds differ";
  for_each_point(b, [&](const index_t* p) {
    if (!result.empty()) return;
    const std::uint32_t e = load(expected, p), a = load(actual, p);
    if (e == a) return;
    result = "at (";
    for (std::size_t d = 0; d < b.size(); ++d) result += (d ? ", " : "") + std::to_string(p[d]);
    result += ") expected " + std::to_string(static_cast<std::int32_t>(e)) + ", got " +
              std::to_string(static_cast<std::int32_t>(a));
  });
  return result;
}

bool equal(const host_buffer& a, const host_buffer& b) { return compare(a.raw(), b.raw()).empty(); }

bool equal_values(const host_buffer& b, const std::vector<std::int64_t>& values) {
  std::size_t i = 0;
  bool ok = true;
  for_each_point(b.bounds(), [&](const index_t* at) {
    ok = ok && i < values.size() && static_cast<std::int32_t>(load(b.raw(), at)) == values[i];
    ++i;
  });
  return ok && i == values.size();
}

std::vector<index_t> largest_allocations(const pipeline& p, const std::vector<var>& syms,
                                         const std::vector<const raw_buffer*>& inputs,
                                         const std::vector<const raw_buffer*>& outputs) {
  eval_config config;
  config.auto_stack_threshold = 0;
  const memory_report r = report_memory(p, inputs, outputs, &config);
  const node_context* names = p.body.symbols.get();
  std::vector<index_t> result(syms.size(), 0);
  for (std::size_t i = 0; i < syms.size() && names; ++i) {
    const std::string name = names->name(syms[i]);
    for (const allocation_report& a : r.allocations) {
      if (a.name == name) result[i] = std::max<index_t>(result[i], static_cast<index_t>(a.bytes));
    }
  }
  return result;
}

eval_hooks::eval_hooks(const node_context* symbols) {
  config.auto_stack_threshold = 0;
  config.allocate = [this](var sym, raw_buffer* buf) -> void* {
    std::lock_guard<std::mutex> lock(mutex_);
    ++allocations_;
    ++allocations_of_[sym.sym()];
    index_t& bytes = max_bytes_[sym.sym()];
    bytes = std::max<index_t>(bytes, buf->size_bytes());
    return buf->allocate();
  };
  config.free = [this](var, raw_buffer* buf, void* p) {
    std::lock_guard<std::mutex> lock(mutex_);
    ++frees_;
    // Poisoned, so that a callback reading a buffer after it was freed (early, after what
    // should be its last reader) computes a wrong result.
    if (p) std::memset(p, 0xcd, buf->size_bytes());
    std::free(p);
  };
  config.check_failed = [this, symbols](const expr& e) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (check_.empty()) check_ = to_string(e, symbols);
  };
  config.call_failed = [this](const call_stmt*) {
    std::lock_guard<std::mutex> lock(mutex_);
    ++call_failures_;
  };
  context.config = &config;
}

std::vector<std::unique_ptr<host_buffer>> reference(const graph_spec& g, const plan& p,
                                                    const std::vector<const raw_buffer*>& inputs) {
  std::vector<std::unique_ptr<host_buffer>> bufs(g.buffers.size());
  std::vector<const raw_buffer*> raw(g.buffers.size());
  for (std::size_t b = 0, i = 0; b < g.buffers.size(); ++b) {
    if (g.buffers[b].input) raw[b] = inputs[i++];
  }
  for (std::size_t s = 0; s < g.stages.size(); ++s) {
    const stage_spec& st = g.stages[s];
    std::vector<const raw_buffer*> ins, outs;
    for (const stage_input& i : st.inputs) ins.push_back(raw[i.buffer]);
    for (int o : st.outputs) {
      bufs[o] = std::make_unique<host_buffer>(g.buffers[o].elem_size, p.bounds[o]);
      raw[o] = &bufs[o]->raw();
      outs.push_back(raw[o]);
    }
    if (st.copy) {
      compute_copy(st, ins.data(), st.pad >= 0 ? raw[st.pad] : nullptr, *outs[0]);
    } else {
      compute_stage(p.kernels[s], ins.data(), outs.data());
    }
  }
  return bufs;
}

// ---------------------------------------------------------------------------------------------
// The pipeline, through the builder API.

namespace {

expr offset(expr e, index_t c) { return c == 0 ? e : c > 0 ? e + c : e - (-c); }

// With div_e or mod_e defined, a flat access divides by div_e, or takes % mod_e (symbols bound at
// run time), instead of by its constants.
interval_expr to_interval(const access& a, const std::vector<var>& vars, const buffer_expr_ptr& b, int d,
                          const expr& div_e = expr(), const expr& mod_e = expr()) {
  if (a.whole) return b->dim(d).bounds;
  if (a.var < 0) return a.lo == a.hi ? point(expr(a.lo)) : bounds(expr(a.lo), expr(a.hi));
  auto at = [&](index_t c) -> expr {
    expr x = vars[a.var];
    expr e;
    if (a.flat) {
      e = a.mul != 1 ? x * a.mul : x;
      if (a.var2 >= 0) e = e + vars[a.var2] * a.mul2;
      if (a.var3 >= 0) e = e + vars[a.var3] * a.mul3;
      if (div_e.defined()) {
        e = e / div_e;
      } else if (a.div != 1) {
        e = e / a.div;
      }
      if (a.mod > 0) e = mod_e.defined() ? e % mod_e : e % a.mod;
      return offset(e, c);
    }
    if (a.mod > 0) {
      e = x % a.mod;
    } else if (a.mul < 0 && a.div == 1) {
      // A flip: c - x.
      e = expr(c) - (a.mul == -1 ? x : x * -a.mul);
      return a.var2 >= 0 ? vars[a.var2] * a.mul2 + e : e;
    } else {
      if (a.mul != 1) x = x * a.mul;
      if (a.div != 1) x = x / a.div;
      e = x;
    }
    if (a.var2 >= 0) e = vars[a.var2] * a.mul2 + e;
    return offset(e, c);
  };
  return a.lo == a.hi ? point(at(a.lo)) : bounds(at(a.lo), at(a.hi));
}

// The contents of a constant buffer: the bounds of the plan, filled with `seed`.
std::unique_ptr<host_buffer> constant_data(const graph_spec& g, const plan& pl, int b, std::uint64_t seed) {
  auto result = std::make_unique<host_buffer>(g.buffers[b].elem_size, pl.bounds[b]);
  fill(*result, seed);
  return result;
}

buffer_expr_ptr make_constant_buffer(node_context& ctx, const graph_spec& g, const plan& pl, int b,
                                     std::uint64_t seed) {
  const std::string name = buffer_name(g, b);
  if (g.buffers[b].rank == 0) {
    const std::int32_t v = scalar_value(g, pl, b, seed);
    switch (g.buffers[b].elem_size) {
    case 1: return buffer_expr::make_scalar<std::int8_t>(ctx, name, static_cast<std::int8_t>(v));
    case 2: return buffer_expr::make_scalar<std::int16_t>(ctx, name, static_cast<std::int16_t>(v));
    default: return buffer_expr::make_scalar<std::int32_t>(ctx, name, v);
    }
  }
  return buffer_expr::make_constant(ctx, name, raw_buffer::make_copy(constant_data(g, pl, b, seed)->raw()));
}

box_expr to_box_expr(const box& b) {
  box_expr result;
  for (const ival& i : b) {
    result.emplace_back(i.min <= -unbounded ? expr() : expr(i.min), i.max >= unbounded ? expr() : expr(i.max));
  }
  return result;
}

}  // namespace

radix_names symbolic_radices(const stage_input& in, int stage, int input) {
  radix_names result;
  index_t product = 1;
  std::vector<std::string> factors;
  for (std::size_t d = 0; d < in.dims.size(); ++d) {
    const access& a = in.dims[d];
    const std::string suffix = std::to_string(stage) + "_" + std::to_string(input) + "_" + std::to_string(d);
    result.divisor.emplace_back();
    result.radix.emplace_back();
    if (!a.flat || !a.symbolic) continue;
    if (a.div == 1) {
      // No division (by a symbol, bounds inference could be less precise: map_access).
    } else if (a.div == product) {
      result.divisor.back() = factors;
    } else {
      result.divisor.back() = {"Q" + suffix};
      result.lets.emplace_back("Q" + suffix, a.div);
    }
    if (a.mod > 0) {
      result.radix.back() = "E" + suffix;
      result.lets.emplace_back("E" + suffix, a.mod);
      factors.push_back("E" + suffix);
      product *= a.mod;
    }
  }
  return result;
}

std::vector<std::pair<std::string, index_t>> radix_lets(const graph_spec& g) {
  std::vector<std::pair<std::string, index_t>> result;
  for (std::size_t s = 0; s < g.stages.size(); ++s) {
    for (std::size_t i = 0; i < g.stages[s].inputs.size(); ++i) {
      const radix_names n = symbolic_radices(g.stages[s].inputs[i], static_cast<int>(s), static_cast<int>(i));
      result.insert(result.end(), n.lets.begin(), n.lets.end());
    }
  }
  return result;
}

std::vector<std::pair<var, expr>> pipeline_lets(const built& b) {
  std::vector<std::pair<var, expr>> lets;
  for (const std::pair<var, index_t>& l : b.lets) lets.emplace_back(l.first, l.second);
  return lets;
}

std::int32_t scalar_value(const graph_spec& g, const plan& pl, int b, std::uint64_t seed) {
  return static_cast<std::int32_t>(load(constant_data(g, pl, b, seed)->raw(), nullptr));
}

std::unique_ptr<built> build(const graph_spec& g, const plan& pl, const schedule_spec* s, monitor* m,
                             std::uint64_t data_seed, bool make_pipeline) {
  auto r = std::make_unique<built>();
  for (std::size_t i = 0; i < g.stages.size(); ++i) {
    r->vars.emplace_back();
    for (int v = 0; v < g.stages[i].rank; ++v) r->vars[i].emplace_back(r->ctx, var_name(g, static_cast<int>(i), v));
  }
  for (std::size_t b = 0; b < g.buffers.size(); ++b) {
    const buffer_spec& bs = g.buffers[b];
    if (bs.constant) {
      r->buffers.push_back(make_constant_buffer(r->ctx, g, pl, static_cast<int>(b), data_seed + b));
      continue;
    }
    r->buffers.push_back(buffer_expr::make(r->ctx, buffer_name(g, static_cast<int>(b)), bs.rank, bs.elem_size));
    for (std::size_t d = 0; d < bs.fold.size(); ++d) {
      if (bs.fold[d] > 0) r->buffers.back()->dim(d).fold_factor = bs.fold[d];
    }
  }
  std::map<std::string, var> let_vars;
  for (const std::pair<std::string, index_t>& l : radix_lets(g)) {
    const var v(r->ctx, l.first);
    let_vars.emplace(l.first, v);
    r->lets.emplace_back(v, l.second);
  }
  for (std::size_t i = 0; i < g.stages.size(); ++i) {
    const stage_spec& st = g.stages[i];
    std::vector<func::input> inputs;
    for (std::size_t k = 0; k < st.inputs.size(); ++k) {
      const stage_input& in = st.inputs[k];
      const radix_names names = symbolic_radices(in, static_cast<int>(i), static_cast<int>(k));
      func::input fi;
      fi.buffer = r->buffers[in.buffer];
      for (std::size_t d = 0; d < in.dims.size(); ++d) {
        expr div_e, mod_e;
        if (in.dims[d].flat && in.dims[d].symbolic) {
          div_e = 1;
          for (const std::string& n : names.divisor[d])
            div_e = is_one(div_e) ? expr(let_vars.at(n)) : div_e * let_vars.at(n);
          if (!names.radix[d].empty()) mod_e = let_vars.at(names.radix[d]);
          if (is_one(div_e)) div_e = expr();
        }
        fi.bounds.push_back(to_interval(in.dims[d], r->vars[i], fi.buffer, static_cast<int>(d), div_e, mod_e));
      }
      if (st.copy) {
        fi.input_crop = to_box_expr(in.input_crop);
        fi.output_crop = to_box_expr(in.output_crop);
      }
      inputs.push_back(std::move(fi));
    }
    std::vector<func::output> outputs;
    for (int o : st.outputs) outputs.push_back({r->buffers[o], r->vars[i]});
    if (st.copy) {
      std::vector<buffer_expr_ptr> srcs;
      for (const stage_input& in : st.inputs) srcs.push_back(r->buffers[in.buffer]);
      std::vector<expr> cat_bounds(st.cat_bounds.begin(), st.cat_bounds.end());
      func f;
      // With a monitor, the copy's calls are counted (slinky::copy either way).
      const copy_stmt::callable impl = m ? counted_copy(m, static_cast<int>(i)) : copy_stmt::callable();
      switch (st.op) {
      case copy_kind::plain: f = func::make_copy(inputs[0], outputs[0], impl); break;
      case copy_kind::padded: {
        // A pad from a buffer, read at the output's point, or a scalar.
        box_expr pad_at;
        for (int d = 0; d < g.buffers[st.pad].rank; ++d) pad_at.push_back(point(r->vars[i][d]));
        f = func::make_copy(inputs[0], outputs[0], {r->buffers[st.pad], pad_at}, impl);
        break;
      }
      case copy_kind::multi: f = func::make_copy(inputs, outputs[0], impl); break;
      case copy_kind::concat: f = func::make_concat(srcs, outputs[0], st.dim, cat_bounds, impl); break;
      case copy_kind::stack: {
        // Sliced: the stacked dim takes no variable.
        func::output out = outputs[0];
        if (st.sliced) out.dims.erase(out.dims.begin() + st.dim);
        f = func::make_stack(srcs, out, st.dim, impl);
        break;
      }
      }
      r->funcs.push_back(std::make_unique<func>(std::move(f)));
    } else {
      call_stmt::attributes attrs;
      attrs.name = "f" + std::to_string(i);
      r->funcs.push_back(std::make_unique<func>(kernel(pl.kernels[i], m), inputs, outputs, std::vector<expr>(), attrs));
    }
  }
  build_options options;
  if (s) {
    for (std::size_t i = 0; i < g.stages.size(); ++i) {
      func& f = *r->funcs[i];
      const stage_schedule& ss = s->stages[i];
      std::vector<func::loop_info> loops;
      for (const loop_spec& l : ss.loops) {
        loops.emplace_back(r->vars[i][l.var], l.step, l.parallel ? loop::parallel : loop::serial);
      }
      f.loops(loops);
      if (ss.compute_at) {
        if (ss.compute_at->root()) {
          f.compute_root();
        } else {
          f.compute_at(
              loop_id{r->funcs[ss.compute_at->stage].get(), r->vars[ss.compute_at->stage][ss.compute_at->var]});
        }
      }
    }
    for (std::size_t b = 0; b < g.buffers.size(); ++b) {
      const buffer_schedule& bs = s->buffers[b];
      if (bs.store_at) {
        if (bs.store_at->root()) {
          r->buffers[b]->store_root();
        } else {
          r->buffers[b]->store_at(
              loop_id{r->funcs[bs.store_at->stage].get(), r->vars[bs.store_at->stage][bs.store_at->var]});
        }
      }
      r->buffers[b]->store_in(bs.storage);
    }
    options.no_alias_buffers = s->no_alias_buffers;
    if (s->automatic != auto_mode::none) {
      const auto_result a = schedule_auto(g, pl, *s, *r);
      r->schedule_report = a.report;
      r->not_left_alone = a.not_left_alone;
      r->auto_looped = a.looped;
      r->auto_parallel = a.parallel;
    }
  }
  if (!make_pipeline) return r;
  std::vector<buffer_expr_ptr> ins, outs;
  for (std::size_t b = 0; b < g.buffers.size(); ++b) {
    if (g.buffers[b].input && !g.buffers[b].constant) ins.push_back(r->buffers[b]);
    if (g.buffers[b].output) outs.push_back(r->buffers[b]);
  }
  r->p = build_pipeline(r->ctx, {}, ins, outs, pipeline_lets(*r), options);
  return r;
}

}  // namespace random_test
}  // namespace slinky
