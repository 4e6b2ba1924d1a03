// Random pipeline testing, part 5: see shrink.h.
#include "random_pipeline/shrink.h"

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "random_pipeline/auto.h"

namespace slinky {
namespace random_test {

namespace internal_run {

// Every field of a case, to tell whether two differ.
std::string describe(const case_spec& c) {
  std::ostringstream os;
  const graph_spec& g = c.graph;
  os << g.shared_vars << "F" << g.fail_stage << "," << g.fail_call << ";";
  for (const buffer_spec& b : g.buffers) {
    os << "b" << b.rank << b.elem_size << b.input << b.output << b.producer << to_string(b.base);
    for (std::size_t d = 0; d < b.margin_lo.size(); ++d) os << "m" << b.margin_lo[d] << "," << b.margin_hi[d];
    for (std::size_t d = 0; d < b.order.size(); ++d) os << "o" << b.order[d] << "," << b.padding[d];
    os << "c" << b.constant;
    for (index_t f : b.fold) os << "f" << f;
    os << ";";
  }
  for (const stage_spec& st : g.stages) {
    os << "s" << st.rank << st.copy << static_cast<int>(st.op) << "p" << st.pad << "d" << st.dim
       << (st.sliced ? "/" : "");
    for (index_t b : st.cat_bounds) os << "," << b;
    for (const stage_input& i : st.inputs) {
      os << "i" << i.buffer << to_string(i.input_crop) << to_string(i.output_crop);
      for (const access& a : i.dims) {
        os << "(" << a.var << "," << a.mul << "," << a.div << "," << a.lo << "," << a.hi << a.whole << a.mod << ","
           << a.var2 << "," << a.mul2 << a.flat << a.symbolic << a.var3 << "," << a.mul3 << ")";
      }
    }
    for (int o : st.outputs) os << "o" << o;
    os << ";";
  }
  for (const schedule_spec& s : c.schedules) {
    os << "S" << s.no_alias_buffers << s.thread_pool << s.pool_workers << "A" << static_cast<int>(s.automatic) << ","
       << s.auto_machine;
    for (const stage_schedule& ss : s.stages) {
      for (const loop_spec& l : ss.loops) os << "l" << l.var << "," << l.step << l.parallel;
      if (ss.compute_at) os << "c" << ss.compute_at->stage << "," << ss.compute_at->var;
      os << ";";
    }
    for (const buffer_schedule& bs : s.buffers) {
      if (bs.store_at) os << "s" << bs.store_at->stage << "," << bs.store_at->var;
      os << static_cast<int>(bs.storage) << ";";
    }
  }
  return os.str();
}

// Simpler variants of a case, one change each, roughly biggest simplification first.
std::vector<case_spec> simplifications(const case_spec& c) {
  std::vector<case_spec> result;
  const graph_spec& g = c.graph;
  const std::string original = describe(c);
  auto add = [&](case_spec v) {
    compact(v);
    if (describe(v) != original) result.push_back(std::move(v));
  };
  // Fewer schedules.
  for (std::size_t i = 0; c.schedules.size() > 1 && i < c.schedules.size(); ++i) {
    case_spec v = c;
    v.schedules = {c.schedules[i]};
    add(v);
  }
  // Fewer pipeline outputs.
  int outputs = 0;
  for (const buffer_spec& b : g.buffers) outputs += b.output ? 1 : 0;
  for (std::size_t b = 0; outputs > 1 && b < g.buffers.size(); ++b) {
    if (!g.buffers[b].output) continue;
    case_spec v = c;
    v.graph.buffers[b].output = false;
    add(v);
  }
  // Fewer funcs: the readers of a func's outputs read one of its inputs instead.
  for (int s = static_cast<int>(g.stages.size()) - 1; s >= 0; --s) {
    for (const stage_input& in : g.stages[s].inputs) {
      case_spec v = c;
      bool changed = false, ok = true;
      for (int o : g.stages[s].outputs) {
        if (g.buffers[o].rank != g.buffers[in.buffer].rank) continue;
        if (g.buffers[o].output) {
          v.graph.buffers[o].output = false;
          outputs = 0;
          for (const buffer_spec& b : v.graph.buffers) outputs += b.output ? 1 : 0;
          if (outputs == 0) ok = false;
        }
        for (stage_spec& st : v.graph.stages) {
          for (stage_input& i : st.inputs) {
            if (i.buffer != o) continue;
            if (st.copy && g.buffers[in.buffer].elem_size != g.buffers[o].elem_size) ok = false;
            i.buffer = in.buffer;
            changed = true;
          }
        }
      }
      if (changed && ok) add(v);
    }
  }
  // Fewer funcs: a func producing pipeline outputs is dropped, its intermediate input becomes
  // the output.
  for (std::size_t s = 0; s < g.stages.size(); ++s) {
    const stage_spec& st = g.stages[s];
    bool all_outputs = true;
    for (int o : st.outputs) all_outputs = all_outputs && g.buffers[o].output;
    for (const stage_input& in : st.inputs) {
      const buffer_spec& b = g.buffers[in.buffer];
      if (!all_outputs || b.input || b.output || b.rank != g.buffers[st.outputs[0]].rank) continue;
      case_spec v = c;
      for (int o : st.outputs) v.graph.buffers[o].output = false;
      v.graph.buffers[in.buffer].output = true;
      v.graph.buffers[in.buffer].base = g.buffers[st.outputs[0]].base;
      add(v);
    }
  }
  // Fewer inputs and outputs of a func.
  for (std::size_t s = 0; s < g.stages.size(); ++s) {
    for (std::size_t i = 0; g.stages[s].inputs.size() > 1 && i < g.stages[s].inputs.size(); ++i) {
      case_spec v = c;
      v.graph.stages[s].inputs.erase(v.graph.stages[s].inputs.begin() + i);
      add(v);
    }
    if (g.stages[s].outputs.size() > 1) {
      case_spec v = c;
      const int first = g.stages[s].outputs[0], second = g.stages[s].outputs[1];
      for (stage_spec& st : v.graph.stages) {
        for (stage_input& i : st.inputs) i.buffer = i.buffer == second && !st.copy ? first : i.buffer;
      }
      if (g.buffers[second].output) v.graph.buffers[first].output = true;
      v.graph.buffers[second].output = false;
      v.graph.stages[s].outputs.pop_back();
      add(v);
    }
    if (g.stages[s].copy) {
      // Not a copy: a func reading the same accesses (without the crops and pad).
      case_spec v = c;
      stage_spec& st = v.graph.stages[s];
      st.copy = false;
      st.op = copy_kind::plain;
      st.pad = -1;
      st.cat_bounds.clear();
      for (stage_input& i : st.inputs) i.input_crop.clear(), i.output_crop.clear();
      add(v);
    }
    if (g.stages[s].copy && g.stages[s].op != copy_kind::plain) {
      // A plain copy of one of the inputs.
      for (std::size_t k = 0; k < g.stages[s].inputs.size(); ++k) {
        case_spec v = c;
        stage_spec& st = v.graph.stages[s];
        st.op = copy_kind::plain;
        st.pad = -1;
        st.cat_bounds.clear();
        st.inputs = {st.inputs[k]};
        st.inputs[0].input_crop.clear();
        st.inputs[0].output_crop.clear();
        add(v);
      }
    }
  }
  // A stack indexed by a variable per dim instead of leaving out the stacked one.
  for (std::size_t s = 0; s < g.stages.size(); ++s) {
    if (!g.stages[s].sliced) continue;
    case_spec v = c;
    v.graph.stages[s].sliced = false;
    add(v);
  }
  // Simpler accesses (those of concatenations and stacks are fixed by their bounds).
  for (std::size_t s = 0; s < g.stages.size(); ++s) {
    if (g.stages[s].copy && (g.stages[s].op == copy_kind::concat || g.stages[s].op == copy_kind::stack)) continue;
    for (std::size_t i = 0; i < g.stages[s].inputs.size(); ++i) {
      for (std::size_t d = 0; d < g.stages[s].inputs[i].dims.size(); ++d) {
        const access a = g.stages[s].inputs[i].dims[d];
        auto with = [&](access b) {
          if (b.lo > b.hi) return;
          case_spec v = c;
          v.graph.stages[s].inputs[i].dims[d] = b;
          add(v);
        };
        auto changed = [&](const std::function<void(access&)>& change) {
          access b = a;
          change(b);
          with(b);
        };
        // A whole dimension read at the constant 0 instead.
        if (a.whole) with(access());
        if (a.symbolic) changed([](access& b) { b.symbolic = false; });
        if (a.mod != 0) changed([](access& b) { b.mod = 0; });
        if (a.var3 >= 0) changed([](access& b) { b.var3 = -1, b.mul3 = 0; });
        if (a.var2 >= 0 && a.var3 < 0) changed([](access& b) { b.var2 = -1, b.mul2 = 0; });
        if (a.mul != 1) changed([](access& b) { b.mul = 1; });
        if (a.div != 1) changed([](access& b) { b.div = 1; });
        if (a.lo != a.hi) changed([](access& b) { b.hi = b.lo; });
        if (a.lo != a.hi) changed([](access& b) { b.lo = b.hi; });
        if (a.lo != 0 || a.hi != 0) changed([](access& b) { b.hi -= b.lo, b.lo = 0; });
        if (a.lo < -1 || a.hi > 1) {
          changed([](access& b) { b.lo = std::max<index_t>(b.lo, -1), b.hi = std::min<index_t>(b.hi, 1); });
        }
      }
      // Fewer crops of a padded copy.
      const stage_input& in = g.stages[s].inputs[i];
      for (std::size_t d = 0; d < in.input_crop.size(); ++d) {
        const ival crop = in.input_crop[d];
        auto with = [&](ival x) {
          case_spec v = c;
          v.graph.stages[s].inputs[i].input_crop[d] = x;
          add(v);
        };
        if (crop.min > -unbounded) with({-unbounded, crop.max});
        if (crop.max < unbounded) with({crop.min, unbounded});
      }
    }
  }
  // Smaller shapes, plain layouts and types.
  for (std::size_t b = 0; b < g.buffers.size(); ++b) {
    const buffer_spec& bs = g.buffers[b];
    auto with = [&](const std::function<void(buffer_spec&)>& change) {
      case_spec v = c;
      change(v.graph.buffers[b]);
      add(v);
    };
    if (!bs.order.empty()) with([](buffer_spec& x) { x.order.clear(), x.padding.clear(); });
    bool copied = bs.producer >= 0 && g.stages[bs.producer].copy;
    for (const stage_spec& st : g.stages) {
      for (const stage_input& i : st.inputs) copied = copied || (st.copy && i.buffer == static_cast<int>(b));
      copied = copied || st.pad == static_cast<int>(b);
    }
    if (!bs.fold.empty()) with([](buffer_spec& x) { x.fold.clear(); });
    if (bs.elem_size != 4 && !copied) with([](buffer_spec& x) { x.elem_size = 4; });
    for (int d = 0; d < bs.rank; ++d) {
      const ival base = bs.base[d];
      if (bs.output && base.extent() > 1) {
        with([d](buffer_spec& x) { x.base[d].max = x.base[d].min; });
        with([d](buffer_spec& x) { x.base[d].max = x.base[d].min + x.base[d].extent() / 2 - 1; });
        with([d](buffer_spec& x) { x.base[d].max -= 1; });
      }
      if (bs.input && base.extent() > 1) with([d](buffer_spec& x) { x.base[d].max = x.base[d].min; });
      if ((bs.input || bs.output) && base.min != 0) {
        with([d](buffer_spec& x) { x.base[d] = {0, x.base[d].max - x.base[d].min}; });
      }
      if (bs.input && (bs.margin_lo[d] || bs.margin_hi[d])) {
        with([d](buffer_spec& x) { x.margin_lo[d] = x.margin_hi[d] = 0; });
      }
    }
  }
  // No failing call (a failure of another kind may not need it; its regression test then checks
  // the memory bound of parallel loops against the bounding schedules, which a failing callback
  // would stop).
  if (g.fail_stage >= 0) {
    case_spec v = c;
    v.graph.fail_stage = -1;
    v.graph.fail_call = 1;
    add(v);
  }
  // An earlier failing call.
  if (g.fail_stage >= 0 && g.fail_call > 1) {
    case_spec v = c;
    v.graph.fail_call = 1;
    add(v);
  }
  // Simpler schedules.
  for (std::size_t k = 0; k < c.schedules.size(); ++k) {
    const schedule_spec& s = c.schedules[k];
    auto with = [&](const std::function<void(schedule_spec&)>& change) {
      case_spec v = c;
      change(v.schedules[k]);
      add(v);
    };
    for (std::size_t i = 0; i < s.stages.size(); ++i) {
      for (std::size_t l = 0; l < s.stages[i].loops.size(); ++l) {
        with([&](schedule_spec& x) { x.stages[i].loops.erase(x.stages[i].loops.begin() + l); });
        if (s.stages[i].loops[l].step != 1) with([&](schedule_spec& x) { x.stages[i].loops[l].step = 1; });
        if (s.stages[i].loops[l].step > 2) with([&](schedule_spec& x) { x.stages[i].loops[l].step /= 2; });
        if (s.stages[i].loops[l].parallel) with([&](schedule_spec& x) { x.stages[i].loops[l].parallel = false; });
      }
      if (s.stages[i].compute_at) with([&](schedule_spec& x) { x.stages[i].compute_at.reset(); });
    }
    for (std::size_t b = 0; b < s.buffers.size(); ++b) {
      if (s.buffers[b].store_at) with([&](schedule_spec& x) { x.buffers[b].store_at.reset(); });
      if (s.buffers[b].storage != memory_type::automatic) {
        with([&](schedule_spec& x) { x.buffers[b].storage = memory_type::automatic; });
      }
    }
    if (s.no_alias_buffers) with([](schedule_spec& x) { x.no_alias_buffers = false; });
    if (s.thread_pool) with([](schedule_spec& x) { x.thread_pool = false; });
  }
  return result;
}

}  // namespace internal_run

std::pair<case_spec, outcome> shrink(case_spec c, outcome failure, const features& f, bool use_fork, double seconds,
                                     const std::function<void(const case_spec&, const outcome&)>& progress_made) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  auto still_fails = [&](const case_spec& v, outcome* o) {
    // Stay within what the generator makes, so as not to wander into a known bug.
    if (!generated_by(v, f)) return false;
    *o = run_isolated(v, use_fork, f);
    // A crash or a hang must be the same signal (a segfault does not shrink into an abort).
    auto signal_of = [](const outcome& x) { return x.message.substr(0, x.message.find(':')); };
    const bool crashed = failure.kind == "crash" || failure.kind == "timeout";
    const bool fails = o->kind == failure.kind && (!crashed || signal_of(*o) == signal_of(failure));
    if (fails && progress_made) progress_made(v, *o);
    return fails;
  };
  if (failure.schedule >= 0) {
    case_spec v = c;
    v.schedules = {c.schedules[failure.schedule]};
    outcome o;
    if (still_fails(v, &o)) c = v, failure = o;
  } else if (failure.schedule == -1) {
    case_spec v = c;
    v.schedules.clear();
    outcome o;
    if (still_fails(v, &o)) c = v, failure = o;
  }
  auto time_left = [&]() { return std::chrono::steady_clock::now() < deadline; };
  for (bool progress = true; progress && time_left();) {
    progress = false;
    std::vector<case_spec> candidates = internal_run::simplifications(c);
    for (std::size_t i = 0; i < candidates.size() && time_left(); ++i) {
      outcome o;
      if (!still_fails(candidates[i], &o)) continue;
      c = std::move(candidates[i]);
      failure = o;
      progress = true;
      // Go on from about the same place: the simplifications before it were just tried.
      candidates = internal_run::simplifications(c);
      --i;
    }
  }
  return {c, failure};
}

// ---------------------------------------------------------------------------------------------
// Printing a case as a C++ test.

namespace internal_run {

// With div_name or mod_name, a flat access divides by it, or takes % it (symbols bound at run
// time, access::symbolic).
std::string cpp(const access& a, const std::string& buffer, int d, const std::string& x_name,
                const std::string& y_name = "", const std::string& div_name = "", const std::string& mod_name = "",
                const std::string& z_name = "") {
  if (a.whole) return buffer + "->dim(" + std::to_string(d) + ").bounds";
  auto num = [](index_t v) { return std::to_string(v); };
  if (a.var < 0) return a.lo == a.hi ? "point(" + num(a.lo) + ")" : "bounds(" + num(a.lo) + ", " + num(a.hi) + ")";
  std::string x = x_name;
  if (a.flat) {
    // ((x * mul + y * mul2) / div) % mod + c.
    std::string e = a.mul != 1 ? x + " * " + num(a.mul) : x;
    if (a.var2 >= 0) e = e + " + " + y_name + " * " + num(a.mul2);
    if (a.var3 >= 0) e = e + " + " + z_name + " * " + num(a.mul3);
    auto paren = [](const std::string& t) { return t.find(' ') == std::string::npos ? t : "(" + t + ")"; };
    if (!div_name.empty()) {
      e = paren(e) + " / " + paren(div_name);
    } else if (a.div != 1) {
      e = paren(e) + " / " + num(a.div);
    }
    if (a.mod > 0) e = paren(e) + " % " + (mod_name.empty() ? num(a.mod) : mod_name);
    auto flat_at = [&](index_t c) { return c == 0 ? e : c > 0 ? e + " + " + num(c) : e + " - " + num(-c); };
    return a.lo == a.hi ? "point(" + flat_at(a.lo) + ")" : "bounds(" + flat_at(a.lo) + ", " + flat_at(a.hi) + ")";
  }
  const std::string y = a.var2 >= 0 ? y_name + " * " + num(a.mul2) + " + " : "";
  auto plus = [&](index_t c) { return c == 0 ? x : c > 0 ? x + " + " + num(c) : x + " - " + num(-c); };
  auto at = [&](index_t c) {
    // A flip: c - x.
    if (a.mod == 0 && a.mul < 0 && a.div == 1) {
      return y + num(c) + " - " + (a.mul == -1 ? x : "(" + x + " * " + num(-a.mul) + ")");
    }
    return y + plus(c);
  };
  if (a.mod > 0) {
    x += " % " + num(a.mod);
  } else if (!(a.mul < 0 && a.div == 1)) {
    if (a.mul != 1) x += " * " + num(a.mul);
    if (a.div != 1) x = (a.mul != 1 ? "(" + x + ")" : x) + " / " + num(a.div);
  }
  return a.lo == a.hi ? "point(" + at(a.lo) + ")" : "bounds(" + at(a.lo) + ", " + at(a.hi) + ")";
}

// A crop as a box_expr: unbounded sides are expr().
std::string cpp_crop(const box& b) {
  std::string s = "{";
  auto end = [](index_t v) { return v <= -unbounded || v >= unbounded ? std::string("expr()") : std::to_string(v); };
  for (std::size_t d = 0; d < b.size(); ++d) {
    s += d ? ", " : "";
    if (b[d].min <= -unbounded && b[d].max >= unbounded) {
      s += "interval_expr()";
    } else {
      s += "interval_expr(" + end(b[d].min) + ", " + end(b[d].max) + ")";
    }
  }
  return s + "}";
}

std::string cpp(const box& b) {
  std::string s = "{";
  for (std::size_t d = 0; d < b.size(); ++d) {
    s += (d ? ", " : "") + std::string("{") + std::to_string(b[d].min) + ", " + std::to_string(b[d].max) + "}";
  }
  return s + "}";
}

template <typename T>
std::string cpp_list(const std::vector<T>& v) {
  std::string s = "{";
  for (std::size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + std::to_string(v[i]);
  return s + "}";
}

// An access with named fields: the variable, and the fields that are not the default.
std::string cpp_named(const access& a) {
  const access d;
  std::string s = std::string("{.var = ").append(std::to_string(a.var));
  auto field = [&](const char* name, index_t value, index_t default_value) {
    if (value != default_value) s.append(", .").append(name).append(" = ").append(std::to_string(value));
  };
  field("mul", a.mul, d.mul);
  field("div", a.div, d.div);
  field("lo", a.lo, d.lo);
  field("hi", a.hi, d.hi);
  if (a.whole != d.whole) s.append(", .whole = ").append(a.whole ? "true" : "false");
  field("mod", a.mod, d.mod);
  field("var2", a.var2, d.var2);
  field("mul2", a.mul2, d.mul2);
  if (a.flat != d.flat) s.append(", .flat = true");
  if (a.symbolic != d.symbolic) s.append(", .symbolic = true");
  field("var3", a.var3, d.var3);
  field("mul3", a.mul3, d.mul3);
  return s + "}";
}

// A kernel_spec with named fields.
std::string cpp_named(const kernel_spec& k) {
  std::string s = std::string("{.stage = ").append(std::to_string(k.stage)).append(", .inputs = {");
  for (std::size_t i = 0; i < k.inputs.size(); ++i) {
    s += i ? ", {" : "{";
    for (std::size_t d = 0; d < k.inputs[i].size(); ++d) s.append(d ? ", " : "").append(cpp_named(k.inputs[i][d]));
    s += "}";
  }
  s.append("}, .outputs = ").append(cpp_list(k.outputs));
  if (k.fail_on_call != 0) s.append(", .fail_on_call = ").append(std::to_string(k.fail_on_call));
  return s + "}";
}

std::string cpp_level(const graph_spec& g, const level& l, const std::string& what) {
  if (l.root()) return what == "compute_at" ? "compute_root()" : "store_root()";
  return what + "({&f" + std::to_string(l.stage) + ", " + var_name(g, l.stage, l.var) + "})";
}

}  // namespace internal_run

std::string to_cpp(const case_spec& c, const std::string& name, const outcome& o) {
  using namespace internal_run;
  const graph_spec& g = c.graph;
  const plan p = make_plan(g);
  std::ostringstream os;
  os << "TEST(random_regressions, " << name << ") {\n";
  std::istringstream message(o.kind + ": " + o.message);
  for (std::string line; std::getline(message, line);) os << "  // " << line << "\n";
  // The monitor checks what each callback is asked to compute: at most what the unscheduled
  // pipeline computes.
  os << "  random_test::monitor m;\n  m.allowed = {";
  for (std::size_t b = 0; b < g.buffers.size(); ++b)
    os << (b ? ", " : "") << (g.buffers[b].input ? "{}" : cpp(p.bounds[b]));
  os << "};\n";
  os << "  node_context ctx;\n";
  std::vector<std::string> names;
  for (std::size_t s = 0; s < g.stages.size(); ++s) {
    for (int v = 0; v < g.stages[s].rank; ++v) {
      const std::string n = var_name(g, static_cast<int>(s), v);
      if (std::find(names.begin(), names.end(), n) == names.end()) names.push_back(n);
    }
  }
  os << "  var";
  for (std::size_t v = 0; v < names.size(); ++v) os << (v ? ", " : " ") << names[v] << "(ctx, \"" << names[v] << "\")";
  os << ";\n";
  // The radices given at run time, and the pipeline's lets binding them.
  const std::vector<std::pair<std::string, index_t>> radices = radix_lets(g);
  std::string lets = "{";
  for (std::size_t k = 0; k < radices.size(); ++k) {
    os << "  var " << radices[k].first << "(ctx, \"" << radices[k].first << "\");\n";
    lets += (k ? ", {" : "{") + radices[k].first + ", " + std::to_string(radices[k].second) + "}";
  }
  lets += "}";
  // The arguments of build_pipeline before the options.
  auto pipeline_args = [&](const std::string& ins, const std::string& outs) {
    return radices.empty() ? ins + ", " + outs : "{}, " + ins + ", " + outs + ", " + lets;
  };
  for (std::size_t b = 0; b < g.buffers.size(); ++b) {
    const buffer_spec& bs = g.buffers[b];
    const std::string n = buffer_name(g, static_cast<int>(b));
    if (bs.constant && bs.rank == 0) {
      static const char* types[] = {"", "std::int8_t", "std::int16_t", "", "std::int32_t"};
      os << "  auto " << n << " = buffer_expr::make_scalar<" << types[bs.elem_size] << ">(ctx, \"" << n << "\", "
         << scalar_value(g, p, static_cast<int>(b), c.data_seed + b) << ");\n";
      continue;
    }
    if (bs.constant) {
      os << "  random_test::host_buffer " << n << "_data(" << bs.elem_size << ", " << cpp(p.bounds[b]) << ");\n";
      os << "  random_test::fill(" << n << "_data, " << c.data_seed + b << "ull);\n";
      os << "  auto " << n << " = buffer_expr::make_constant(ctx, \"" << n << "\", raw_buffer::make_copy(" << n
         << "_data.raw()));\n";
      continue;
    }
    os << "  auto " << n << " = buffer_expr::make(ctx, \"" << n << "\", " << bs.rank << ", " << bs.elem_size << ");\n";
    for (std::size_t d = 0; d < bs.fold.size(); ++d) {
      if (bs.fold[d] > 0) os << "  " << n << "->dim(" << d << ").fold_factor = " << bs.fold[d] << ";\n";
    }
  }
  for (std::size_t s = 0; s < g.stages.size(); ++s) {
    const stage_spec& st = g.stages[s];
    std::string ins = "{";
    for (std::size_t i = 0; i < st.inputs.size(); ++i) {
      const std::string n = buffer_name(g, st.inputs[i].buffer);
      const radix_names rn = symbolic_radices(st.inputs[i], static_cast<int>(s), static_cast<int>(i));
      std::string bounds = "{";
      for (std::size_t d = 0; d < st.inputs[i].dims.size(); ++d) {
        const access& a = st.inputs[i].dims[d];
        std::string div_name;
        for (const std::string& f : rn.divisor[d]) div_name += (div_name.empty() ? "" : " * ") + f;
        bounds +=
            (d ? ", " : "") + cpp(a, n, static_cast<int>(d), a.var < 0 ? "" : var_name(g, static_cast<int>(s), a.var),
                                  a.var2 < 0 ? "" : var_name(g, static_cast<int>(s), a.var2), div_name, rn.radix[d],
                                  a.var3 < 0 ? "" : var_name(g, static_cast<int>(s), a.var3));
      }
      bounds += "}";
      ins += i ? ", " : "";
      if (st.copy && (!st.inputs[i].input_crop.empty() || !st.inputs[i].output_crop.empty())) {
        // A copy's input with crops: named fields.
        ins += std::string("{.buffer = ").append(n).append(", .bounds = ").append(bounds);
        if (!st.inputs[i].input_crop.empty()) ins.append(", .input_crop = ").append(cpp_crop(st.inputs[i].input_crop));
        if (!st.inputs[i].output_crop.empty()) {
          ins.append(", .output_crop = ").append(cpp_crop(st.inputs[i].output_crop));
        }
        ins += "}";
      } else {
        ins += std::string("{").append(n).append(", ").append(bounds).append("}");
      }
    }
    ins += "}";
    std::string dims = "{";
    for (int v = 0; v < st.rank; ++v) dims += std::string(v ? ", " : "") + var_name(g, static_cast<int>(s), v);
    dims += "}";
    std::string outs = "{";
    for (std::size_t k = 0; k < st.outputs.size(); ++k) {
      outs += std::string(k ? ", " : "") + "{" + buffer_name(g, st.outputs[k]) + ", " + dims + "}";
    }
    outs += "}";
    if (st.copy) {
      const std::string out = outs.substr(1, outs.size() - 2);
      std::string srcs = "{";
      for (std::size_t i = 0; i < st.inputs.size(); ++i) srcs += (i ? ", " : "") + buffer_name(g, st.inputs[i].buffer);
      srcs += "}";
      os << "  func f" << s << " = ";
      switch (st.op) {
      case copy_kind::plain:
        // A failure of a view or of a reshape's calls counts the copy's calls (expect_same's
        // .view_stages, .copy_calls_at_most).
        os << "func::make_copy(" << ins.substr(1, ins.size() - 2) << ", " << out
           << (o.kind == "view" || o.kind == "copy_calls" ? ", random_test::counted_copy(&m, " + std::to_string(s) + ")"
                                                          : std::string())
           << ");\n";
        break;
      case copy_kind::padded: {
        // A pad from a buffer is read at the output's point.
        std::string pad_at = "{";
        for (int d = 0; d < g.buffers[st.pad].rank; ++d) {
          pad_at += std::string(d ? ", " : "") + "point(" + var_name(g, static_cast<int>(s), d) + ")";
        }
        os << "func::make_copy(" << ins.substr(1, ins.size() - 2) << ", " << out << ", {" << buffer_name(g, st.pad)
           << ", " << pad_at << "}});\n";
        break;
      }
      case copy_kind::multi:
        os << "func::make_copy({" << ins.substr(1, ins.size() - 2) << "}, " << out << ");\n";
        break;
      case copy_kind::concat:
        os << "func::make_concat(" << srcs << ", " << out << ", " << st.dim << ", " << cpp_list(st.cat_bounds)
           << ");\n";
        break;
      case copy_kind::stack: {
        // Sliced: the stacked dim takes no variable.
        std::string sliced_dims = "{";
        for (int v = 0, n = 0; v < st.rank; ++v) {
          if (v != st.dim) sliced_dims += std::string(n++ ? ", " : "") + var_name(g, static_cast<int>(s), v);
        }
        sliced_dims += "}";
        const std::string stack_out = st.sliced ? "{" + buffer_name(g, st.outputs[0]) + ", " + sliced_dims + "}" : out;
        os << "func::make_stack(" << srcs << ", " << stack_out << ", " << st.dim << ");\n";
        break;
      }
      }
      continue;
    }
    // The kernel's accesses, with whole dims as the constant bounds of the input.
    os << "  func f" << s << "(random_test::kernel(" << cpp_named(p.kernels[s]) << ", &m), " << ins << ", " << outs
       << ", {}, {.name = \"f" << s << "\"});\n";
  }
  std::string ins = "{", outs = "{";
  for (std::size_t b = 0; b < g.buffers.size(); ++b) {
    const std::string n = buffer_name(g, static_cast<int>(b));
    if (g.buffers[b].input && !g.buffers[b].constant) ins += (ins.size() > 1 ? ", " : "") + n;
    if (g.buffers[b].output) outs += (outs.size() > 1 ? ", " : "") + n;
  }
  ins += "}";
  outs += "}";
  os << "  pipeline unscheduled = build_pipeline(ctx, " << pipeline_args(ins, outs) << ");\n";
  const schedule_spec* s = c.schedules.empty() ? nullptr : &c.schedules[0];
  // The loops of stage i: as scheduled, or with the parallel ones serial (and their steps times
  // the iterations in flight), the bounding schedules of the memory bound of parallel loops.
  enum class loop_variant { as_is, serial, serial_in_flight };
  auto loops_cpp = [&](std::size_t i, loop_variant variant) {
    const stage_schedule& ss = s->stages[i];
    std::string list = "{";
    for (std::size_t l = 0; l < ss.loops.size(); ++l) {
      const loop_spec& ls = ss.loops[l];
      list.append(l ? ", " : "").append("{").append(var_name(g, static_cast<int>(i), ls.var)).append(", ");
      list.append(std::to_string(ls.step));
      if (ls.parallel && variant == loop_variant::serial_in_flight) list.append(" * random_test::in_flight()");
      if (ls.parallel && variant == loop_variant::as_is) list.append(", loop::parallel");
      list.append("}");
    }
    return list + "}";
  };
  if (s) {
    for (std::size_t i = 0; i < s->stages.size(); ++i) {
      const stage_schedule& ss = s->stages[i];
      if (!ss.loops.empty()) os << "  f" << i << ".loops(" << loops_cpp(i, loop_variant::as_is) << ");\n";
      if (ss.compute_at) os << "  f" << i << "." << cpp_level(g, *ss.compute_at, "compute_at") << ";\n";
    }
    for (std::size_t b = 0; b < s->buffers.size(); ++b) {
      const buffer_schedule& bs = s->buffers[b];
      if (bs.store_at)
        os << "  " << buffer_name(g, static_cast<int>(b)) << "->" << cpp_level(g, *bs.store_at, "store_at") << ";\n";
      if (bs.storage != memory_type::automatic) {
        os << "  " << buffer_name(g, static_cast<int>(b))
           << "->store_in(memory_type::" << (bs.storage == memory_type::stack ? "stack" : "heap") << ");\n";
      }
    }
  }
  // Auto mode: the scheduler, after the schedule above.
  if (s && s->automatic != auto_mode::none) os << auto_to_cpp(g, p, *s);
  os << "  build_options options;\n";
  if (s && s->no_alias_buffers) os << "  options.no_alias_buffers = true;\n";
  os << "  pipeline scheduled = build_pipeline(ctx, " << pipeline_args(ins, outs) << ", options);\n";
  // A failure of the memory bound of parallel loops (oracle item 8): the bound is the same
  // schedule with its parallel loops serial, serial with their steps times the iterations in
  // flight, and serial with funcs computed at the parallel loops, not the unscheduled pipeline.
  // (Not with a failing callback: the bound is not checked where it failed, and the bounding runs
  // would call it again.)
  const bool parallel_bound =
      s && o.kind == "memory" && g.fail_stage < 0 && o.message.find("with parallel loops") != std::string::npos;
  if (parallel_bound) {
    for (loop_variant variant : {loop_variant::serial, loop_variant::serial_in_flight}) {
      for (std::size_t i = 0; i < s->stages.size(); ++i) {
        bool parallel = false;
        for (const loop_spec& l : s->stages[i].loops) parallel = parallel || l.parallel;
        if (parallel) os << "  f" << i << ".loops(" << loops_cpp(i, variant) << ");\n";
      }
      os << "  pipeline " << (variant == loop_variant::serial ? "serial" : "serial_in_flight")
         << " = build_pipeline(ctx, " << pipeline_args(ins, outs) << ", options);\n";
    }
    // The third: serial, with the funcs the builder may make stages of a pipelined loop computed
    // at that loop (stages_at_parallel_loops).
    schedule_spec legal = *s;
    const placement where = legalize(g, legal);
    const schedule_spec staged = stages_at_parallel_loops(g, legal, where);
    for (std::size_t i = 0; i < s->stages.size(); ++i) {
      bool parallel = false;
      for (const loop_spec& l : s->stages[i].loops) parallel = parallel || l.parallel;
      if (parallel) os << "  f" << i << ".loops(" << loops_cpp(i, loop_variant::serial) << ");\n";
    }
    for (std::size_t i = 0; i < staged.stages.size(); ++i) {
      const std::optional<level>& at = staged.stages[i].compute_at;
      if (at && !legal.stages[i].compute_at) os << "  f" << i << "." << cpp_level(g, *at, "compute_at") << ";\n";
    }
    os << "  pipeline serial_staged = build_pipeline(ctx, " << pipeline_args(ins, outs) << ", options);\n";
  }
  // The run and its checks: random_test::expect_same (random_pipeline/regression_check.h).
  std::vector<std::string> fields;
  std::string inputs = "{", outputs = "{";
  for (std::size_t b = 0; b < g.buffers.size(); ++b) {
    const buffer_spec& bs = g.buffers[b];
    if ((!bs.input && !bs.output) || bs.constant) continue;
    std::string arg = "{";
    // (4 bytes, buffer_arg's default, is not printed.)
    if (bs.elem_size != 4) arg.append(".elem_size = ").append(std::to_string(bs.elem_size)).append(", ");
    arg.append(".bounds = ").append(cpp(p.bounds[b]));
    if (!bs.order.empty()) {
      arg.append(", .order = ").append(cpp_list(bs.order)).append(", .padding = ").append(cpp_list(bs.padding));
    }
    if (bs.input) arg.append(", .seed = ").append(std::to_string(c.data_seed + b)).append("ull");
    arg += "}";
    std::string& list = bs.input ? inputs : outputs;
    list.append(list.size() > 1 ? ", " : "").append(arg);
  }
  fields.push_back(std::string(".inputs = ").append(inputs).append("}"));
  fields.push_back(std::string(".outputs = ").append(outputs).append("}"));
  fields.push_back(".monitor = &m");
  if (s && s->thread_pool) {
    os << "  thread_pool_impl pool(" << s->pool_workers << ");\n";
    fields.push_back(".pool = &pool");
  }
  if (g.fail_stage >= 0) {
    // A failure on purpose: evaluate returns it, call_failed is called once, nothing leaks, no
    // callback runs after it (in a schedule with no parallel loop), and outputs are compared only
    // if neither run failed.
    bool serial = true;
    for (std::size_t i = 0; s && i < s->stages.size(); ++i) {
      for (const loop_spec& l : s->stages[i].loops) serial = serial && !l.parallel;
    }
    os << "  // f" << g.fail_stage << " fails on its call " << g.fail_call << ".\n";
    fields.push_back(".failing = true");
    if (!serial) fields.push_back(".serial = false");
  }
  auto buffer_list = [&](const std::vector<int>& buffers) {
    std::string list = "{";
    for (int b : buffers) list.append(list.size() > 1 ? ", " : "").append(buffer_name(g, b));
    return list + "}";
  };
  // No heap allocation larger than unscheduled (checked for the buffers of a memory failure).
  std::vector<int> intermediates;
  for (std::size_t b = 0; b < g.buffers.size(); ++b) {
    if (!g.buffers[b].input && !g.buffers[b].output) intermediates.push_back(static_cast<int>(b));
  }
  if (o.kind == "memory" && !intermediates.empty()) {
    fields.push_back(std::string(".no_larger = ").append(buffer_list(intermediates)));
    if (parallel_bound) fields.push_back(".bounded_by = {&serial, &serial_in_flight, &serial_staged}");
  }
  if (o.kind == "view") {
    const std::vector<int> views = predicted_view_copies(g);
    std::vector<int> stages;
    for (int b : views) stages.push_back(g.buffers[b].producer);
    fields.push_back(std::string(".views = ").append(buffer_list(views)));
    fields.push_back(std::string(".view_stages = ").append(cpp_list(stages)));
  }
  if (o.kind == "copy_calls") {
    std::string list = "{";
    for (const std::pair<int, index_t>& most : predicted_copy_calls(g, p)) {
      list.append(list.size() > 1 ? ", {" : "{").append(std::to_string(most.first)).append(", ");
      list.append(std::to_string(most.second)).append("}");
    }
    fields.push_back(std::string(".copy_calls_at_most = ").append(list).append("}"));
  }
  if (s && (o.kind == "recompute" || o.kind == "allocations")) {
    schedule_spec legal = *s;
    const placement where = legalize(g, legal);
    const std::vector<bool> recompute = may_recompute(g, legal, where);
    std::vector<int> once;
    for (std::size_t st = 0; o.kind == "recompute" && st < g.stages.size(); ++st) {
      if (!g.stages[st].copy && !recompute[st]) once.push_back(static_cast<int>(st));
    }
    if (o.kind == "recompute" && !once.empty())
      fields.push_back(std::string(".computed_once = ").append(cpp_list(once)));
    std::vector<int> at_root;
    for (int b : intermediates) {
      if (stored_at_root(g, legal, where, b)) at_root.push_back(b);
    }
    if (o.kind == "allocations" && !at_root.empty())
      fields.push_back(std::string(".allocated_once = ").append(buffer_list(at_root)));
  }
  if (o.kind == "unscheduled_mismatch") {
    std::vector<const raw_buffer*> input_raw;
    std::vector<std::unique_ptr<host_buffer>> input_data;
    for (std::size_t b = 0; b < g.buffers.size(); ++b) {
      if (!g.buffers[b].input) continue;
      input_data.push_back(internal_run::make_buffer(g.buffers[b], p.bounds[b]));
      fill(*input_data.back(), c.data_seed + b);
      input_raw.push_back(&input_data.back()->raw());
    }
    std::vector<std::unique_ptr<host_buffer>> expected = reference(g, p, input_raw);
    // The reference's values of each output, dim 0 fastest.
    std::string values_list = "{";
    for (std::size_t b = 0; b < g.buffers.size(); ++b) {
      if (!g.buffers[b].output) continue;
      std::vector<std::int64_t> values;
      for_each_point(p.bounds[b], [&](const index_t* at) {
        values.push_back(static_cast<std::int32_t>(load(expected[b]->raw(), at)));
      });
      values_list.append(values_list.size() > 1 ? ", " : "").append(cpp_list(values));
    }
    fields.push_back(std::string(".reference = ").append(values_list).append("}"));
  }
  os << "  random_test::expect_same(unscheduled, scheduled,\n                           {";
  for (std::size_t i = 0; i < fields.size(); ++i) os << (i ? ",\n                            " : "") << fields[i];
  os << "});\n";
  os << "}\n";
  return os.str();
}

}  // namespace random_test
}  // namespace slinky
