// visualize (visualize.h): runs the program with recording stand-ins for its calls and copies,
// then writes the record as JSON into a page whose script replays it. docs/tools.md.
#include "slinky/runtime/visualize.h"

#include <algorithm>
#include <cstdint>
#include <mutex>
#include <ostream>
#include <sstream>
#include <string>
#include <vector>

#include "slinky/runtime/buffer.h"
#include "slinky/runtime/evaluate.h"
#include "slinky/runtime/node_mutator.h"
#include "slinky/runtime/print.h"
#include "slinky/runtime/stmt.h"

namespace slinky {

namespace {

void write_json_string(std::ostream& os, const std::string& s) {
  os << '"';
  for (char c : s) {
    switch (c) {
    case '"': os << "\\\""; break;
    case '\\': os << "\\\\"; break;
    case '\n': os << "\\n"; break;
    // Keeps "</script>" out of the page's script.
    case '<': os << "\\u003c"; break;
    case '>': os << "\\u003e"; break;
    case '&': os << "\\u0026"; break;
    default:
      if (static_cast<unsigned char>(c) < 0x20) {
        os << "\\u00"
           << "0123456789abcdef"[(c >> 4) & 0xf] << "0123456789abcdef"[c & 0xf];
      } else {
        os << c;
      }
    }
  }
  os << '"';
}

// The bytes [lo, hi) a buffer's elements occupy (lo == hi if it has none). A folded dim spans
// its fold from the base (coordinate i is at euclidean_mod(i, fold) * stride), an unfolded one its
// extent (min is at the base).
void address_range(const raw_buffer& b, std::uintptr_t& lo, std::uintptr_t& hi) {
  lo = hi = reinterpret_cast<std::uintptr_t>(b.base);
  if (!b.base || b.elem_size == 0) return;
  std::ptrdiff_t min_offset = 0, max_offset = 0;
  for (std::size_t d = 0; d < b.rank; ++d) {
    const dim& i = b.dim(d);
    if (i.empty()) return;
    const index_t last = i.fold_factor() > 0 ? i.fold_factor() - 1 : i.extent() - 1;
    const std::ptrdiff_t span = static_cast<std::ptrdiff_t>(last) * i.stride();
    min_offset += std::min<std::ptrdiff_t>(0, span);
    max_offset += std::max<std::ptrdiff_t>(0, span);
  }
  lo = reinterpret_cast<std::uintptr_t>(b.base) + min_offset;
  hi = reinterpret_cast<std::uintptr_t>(b.base) + max_offset + b.elem_size;
}

// What the stand-ins record: the memories (inputs, outputs, allocations) and the steps.
class recorder {
public:
  struct memory {
    std::string name;
    std::uintptr_t lo, hi;
    index_t elem_size;
    // Elements per row of the drawing: the extent (or fold) of the dim with stride elem_size.
    index_t row;
  };

  std::mutex mutex;
  std::vector<memory> memories;
  std::ostringstream steps;
  int num_steps = 0;
  int num_calls = 0;

  int add_memory(const std::string& name, const raw_buffer& b) {
    std::uintptr_t lo, hi;
    address_range(b, lo, hi);
    if (lo == hi) return -1;
    index_t row = 1;
    for (std::size_t d = 0; d < b.rank; ++d) {
      const dim& i = b.dim(d);
      if (static_cast<std::size_t>(std::abs(i.stride())) == b.elem_size) {
        row = i.fold_factor() > 0 ? i.fold_factor() : i.extent();
        break;
      }
    }
    memories.push_back({name, lo, hi, static_cast<index_t>(b.elem_size), std::max<index_t>(row, 1)});
    return static_cast<int>(memories.size()) - 1;
  }

  // The memory holding b's elements, the most recent first (a block handed on to another
  // allocation is the same memory); a new one (named name) if none does.
  int memory_of(const std::string& name, const raw_buffer& b) {
    std::uintptr_t lo, hi;
    address_range(b, lo, hi);
    if (lo == hi) return -1;
    for (std::size_t i = memories.size(); i-- > 0;) {
      if (memories[i].lo <= lo && hi <= memories[i].hi) return static_cast<int>(i);
    }
    return add_memory(name, b);
  }

  // [memory, offset in bytes of the base from the memory's start, [[min, max, stride, fold], ...]]
  void access(std::ostream& os, const std::string& name, const raw_buffer* b) {
    if (!b) return;
    const int m = memory_of(name, *b);
    if (m < 0) return;
    os << (os.tellp() > 0 ? "," : "") << "[" << m << ","
       << static_cast<std::ptrdiff_t>(reinterpret_cast<std::uintptr_t>(b->base) - memories[m].lo) << ",";
    write_json_string(os, name);
    os << ",[";
    for (std::size_t d = 0; d < b->rank; ++d) {
      const dim& i = b->dim(d);
      os << (d > 0 ? "," : "") << "[" << i.min() << "," << i.max() << "," << i.stride() << "," << i.fold_factor()
         << "]";
    }
    os << "]]";
  }

  void step(const std::string& kind, const std::string& name, const std::string& reads, const std::string& writes,
            int mem = -1) {
    steps << (num_steps > 0 ? ",\n" : "") << "{\"k\":\"" << kind << "\",\"n\":";
    write_json_string(steps, name);
    steps << ",\"m\":" << mem << ",\"r\":[" << reads << "],\"w\":[" << writes << "]}";
    ++num_steps;
  }
};

// The symbols' names: from ctx, else the pipeline's own, else "b<id>".
class namer {
  const node_context* ctx_;

public:
  explicit namer(const node_context* ctx) : ctx_(ctx) {}
  std::string operator()(var v) const { return ctx_ ? ctx_->name(v) : "b" + std::to_string(v.id); }
};

// Replaces every call and copy by a stand-in that records the buffers it is given.
class stand_ins : public stmt_mutator {
  recorder& r_;
  const namer& name_;

public:
  stand_ins(recorder& r, const namer& name) : r_(r), name_(name) {}
  using stmt_mutator::visit;

  void visit(const call_stmt* op) override {
    recorder& r = r_;
    const namer& name = name_;
    const std::string func = op->attrs.name.empty() ? "call" : op->attrs.name;
    call_stmt::callable record = [&r, &name, func](const call_stmt* c, eval_context& ctx) -> index_t {
      std::lock_guard<std::mutex> lock(r.mutex);
      std::ostringstream reads, writes;
      for (var i : c->inputs) r.access(reads, name(i), ctx.lookup_buffer(i));
      for (var o : c->outputs) r.access(writes, name(o), ctx.lookup_buffer(o));
      r.step("call", func, reads.str(), writes.str());
      ++r.num_calls;
      return 0;
    };
    set_result(call_stmt::make(std::move(record), op->inputs, op->outputs, op->scalars, op->attrs));
  }

  void visit(const copy_stmt* op) override {
    recorder& r = r_;
    const std::string src = name_(op->src), dst = name_(op->dst);
    copy_stmt::callable record = [&r, src, dst](const raw_buffer& s, const raw_buffer& d, const raw_buffer&) {
      std::lock_guard<std::mutex> lock(r.mutex);
      std::ostringstream reads, writes;
      r.access(reads, src, &s);
      r.access(writes, dst, &d);
      r.step("copy", "copy " + src + " to " + dst, reads.str(), writes.str());
      ++r.num_calls;
    };
    set_result(copy_stmt::make(std::move(record), op->src, op->src_x, op->dst, op->dst_x, op->pad));
  }
};

// The page's script. `data` is defined before it. Replay logic first (no DOM: it also runs
// under node for tests), then the drawing.
const char* page_script = R"js(
"use strict";
// Element indices (in its memory) of an access [memory, offset, name, dims], capped.
function accessCells(mem, a, limit) {
  const dims = a[3], elem = mem.elem, out = [];
  const n = dims.length;
  for (const d of dims) if (d[1] < d[0]) return out;
  const at = dims.map(d => d[0]);
  for (;;) {
    let off = a[1];
    for (let i = 0; i < n; ++i) {
      const d = dims[i];
      if (d[3] > 0 && d[2] != 0) off += (((at[i] % d[3]) + d[3]) % d[3]) * d[2];
      else if (d[2] != 0) off += (at[i] - d[0]) * d[2];
    }
    out.push(Math.floor(off / elem));
    if (out.length >= limit) return out;
    let i = 0;
    for (; i < n; ++i) {
      if (at[i] < dims[i][1]) { ++at[i]; break; }
      at[i] = dims[i][0];
    }
    if (i == n) return out;
  }
}
// The state after steps [0, t): which elements of each memory were written, which memories are
// allocated (inputs and outputs always are).
function makeState() {
  return {t: 0, calls: 0, written: data.memories.map(m => new Uint8Array(m.size)),
          live: data.memories.map(m => !m.allocated)};
}
function apply(state, s) {
  const step = data.steps[s];
  if (step.k == "alloc") state.live[step.m] = true;
  else if (step.k == "free") state.live[step.m] = false;
  else ++state.calls;
  for (const w of step.w) {
    const mem = data.memories[w[0]];
    for (const c of accessCells(mem, w, 1 << 22)) if (c >= 0 && c < mem.size) state.written[w[0]][c] = 1;
  }
}
function advance(state, t) {
  if (t < state.t) { const s = makeState(); Object.assign(state, s); }
  while (state.t < t) apply(state, state.t++);
  return state;
}
if (typeof document !== "undefined") {
  const state = makeState();
  const slider = document.getElementById("slider");
  const status = document.getElementById("status");
  const play = document.getElementById("play");
  slider.max = Math.max(0, data.steps.length - 1);
  const views = data.memories.map((m, i) => {
    const box = document.createElement("div");
    box.className = "memory";
    const title = document.createElement("div");
    title.textContent = m.name + " (" + m.size + " elements of " + m.elem + " bytes)";
    const canvas = document.createElement("canvas");
    canvas.width = Math.min(m.row, 4096);
    canvas.height = Math.max(1, Math.ceil(m.size / m.row));
    const scale = Math.max(1, Math.floor(Math.min(320 / canvas.width, 240 / canvas.height)));
    canvas.style.width = canvas.width * scale + "px";
    canvas.style.height = canvas.height * scale + "px";
    box.appendChild(title);
    box.appendChild(canvas);
    document.getElementById("memories").appendChild(box);
    return {box, canvas, ctx: canvas.getContext("2d"), row: m.row};
  });
  function draw() {
    const t = Number(slider.value);
    // The state after this step: what it and the steps before it wrote, what is allocated.
    advance(state, Math.min(t + 1, data.steps.length));
    const step = data.steps[t];
    const marks = data.memories.map(() => new Map());
    if (step) {
      for (const [list, color] of [[step.r, 2], [step.w, 3]]) {
        for (const a of list) {
          for (const c of accessCells(data.memories[a[0]], a, 1 << 20)) marks[a[0]].set(c, color);
        }
      }
    }
    data.memories.forEach((m, i) => {
      const v = views[i];
      v.box.style.opacity = state.live[i] ? 1 : 0.3;
      const img = v.ctx.createImageData(v.canvas.width, v.canvas.height);
      for (let e = 0; e < m.size; ++e) {
        const x = e % m.row, y = Math.floor(e / m.row);
        if (x >= v.canvas.width) continue;
        const p = 4 * (y * v.canvas.width + x);
        const mark = marks[i].get(e);
        const rgb = mark == 3 ? [220, 40, 40] : mark == 2 ? [40, 90, 220] :
                    state.written[i][e] ? [120, 190, 120] : [235, 235, 235];
        img.data[p] = rgb[0]; img.data[p + 1] = rgb[1]; img.data[p + 2] = rgb[2]; img.data[p + 3] = 255;
      }
      v.ctx.putImageData(img, 0, 0);
    });
    const names = list => list.map(a => a[2]).join(", ");
    const what = !step ? "nothing to replay" : step.k + " " + step.n +
        (step.r.length ? "; reads " + names(step.r) : "") + (step.w.length ? "; writes " + names(step.w) : "");
    status.textContent = "step " + Math.min(t + 1, data.steps.length) + " of " + data.steps.length + ", call " +
                         state.calls + " of " + data.calls + ": " + what;
    document.body.dataset.replayedCalls = state.calls;
  }
  let timer = null;
  function toggle() {
    if (timer) { clearInterval(timer); timer = null; play.textContent = "play"; return; }
    play.textContent = "pause";
    timer = setInterval(() => {
      if (Number(slider.value) >= Number(slider.max)) { toggle(); return; }
      slider.value = Number(slider.value) + 1;
      draw();
    }, 100);
  }
  slider.addEventListener("input", draw);
  play.addEventListener("click", toggle);
  document.addEventListener("keydown", e => { if (e.code == "Space") { e.preventDefault(); toggle(); } });
  document.body.dataset.calls = data.calls;
  draw();
}
)js";

}  // namespace

void visualize(std::ostream& dst, const pipeline& p, pipeline::scalars args, pipeline::buffers inputs,
               pipeline::buffers outputs, const node_context* ctx) {
  const namer name(ctx ? ctx : p.body.symbols.get());
  recorder r;
  // Inputs and outputs first: their memories are never allocated or freed.
  for (std::size_t i = 0; i < inputs.size() && i < p.inputs.size(); ++i) {
    if (inputs[i]) r.add_memory(name(p.inputs[i]), *inputs[i]);
  }
  for (std::size_t i = 0; i < outputs.size() && i < p.outputs.size(); ++i) {
    if (outputs[i]) r.add_memory(name(p.outputs[i]), *outputs[i]);
  }
  const std::size_t fixed = r.memories.size();
  std::vector<bool> allocated(fixed, false);

  stand_ins m(r, name);
  pipeline replica = p;
  replica.body = named_stmt(m.mutate(p.body), p.body.symbols);

  std::string failure;
  eval_config config;
  // Every allocation goes through the hooks, so every memory is seen allocated and freed.
  config.auto_stack_threshold = 0;
  config.allocate = [&](var sym, raw_buffer* b) -> void* {
    void* block = default_allocate(sym, b, eval_config::default_heap_alignment);
    std::lock_guard<std::mutex> lock(r.mutex);
    const int mem = r.add_memory(name(sym), *b);
    if (mem >= 0) {
      allocated.resize(r.memories.size(), false);
      allocated[mem] = true;
      r.step("alloc", name(sym), "", "", mem);
    }
    return block;
  };
  config.free = [&](var sym, raw_buffer* b, void* block) {
    {
      std::lock_guard<std::mutex> lock(r.mutex);
      std::uintptr_t lo, hi;
      address_range(*b, lo, hi);
      for (std::size_t i = r.memories.size(); i-- > fixed;) {
        if (r.memories[i].lo == lo && r.memories[i].hi == hi) {
          r.step("free", name(sym), "", "", static_cast<int>(i));
          break;
        }
      }
    }
    default_free(sym, b, block);
  };
  config.check_failed = [&](const expr& condition) {
    std::ostringstream os;
    os << "check failed: ";
    print(os, condition, ctx ? ctx : p.body.symbols.get());
    failure = os.str();
  };
  config.call_failed = [&](const call_stmt* op) { failure = "call failed: " + op->attrs.name; };
  eval_context ectx;
  ectx.config = &config;
  const index_t result = replica.evaluate(args, inputs, outputs, ectx);
  if (result != 0 && failure.empty()) failure = "the pipeline failed (" + std::to_string(result) + ")";
  allocated.resize(r.memories.size(), false);

  dst << "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>slinky pipeline</title>\n"
      << "<style>body{font-family:sans-serif;margin:12px}#memories{display:flex;flex-wrap:wrap;gap:12px}"
      << ".memory{border:1px solid #ccc;padding:4px}canvas{image-rendering:pixelated;display:block}"
      << "#failure{color:#b00}</style></head>\n<body>\n"
      << "<div><button id=\"play\">play</button> <input id=\"slider\" type=\"range\" min=\"0\" value=\"0\" "
      << "style=\"width:60%\"> (space: play/pause)</div>\n<div id=\"status\"></div>\n";
  if (!failure.empty()) {
    dst << "<div id=\"failure\">The pipeline stopped: ";
    for (char c : failure) {
      if (c == '<')
        dst << "&lt;";
      else if (c == '>')
        dst << "&gt;";
      else if (c == '&')
        dst << "&amp;";
      else
        dst << c;
    }
    dst << "</div>\n";
  }
  dst << "<div>Red: written by the step; blue: read by it; green: written before. Faded: not allocated.</div>\n"
      << "<div id=\"memories\"></div>\n<script>\nconst data = {\"calls\":" << r.num_calls
      << ",\"failed\":" << (failure.empty() ? "false" : "true") << ",\n\"memories\":[";
  for (std::size_t i = 0; i < r.memories.size(); ++i) {
    const recorder::memory& mem = r.memories[i];
    dst << (i > 0 ? "," : "") << "{\"name\":";
    write_json_string(dst, mem.name);
    dst << ",\"elem\":" << mem.elem_size << ",\"size\":" << (mem.hi - mem.lo + mem.elem_size - 1) / mem.elem_size
        << ",\"row\":" << mem.row << ",\"allocated\":" << (allocated[i] ? "true" : "false") << "}";
  }
  dst << "],\n\"steps\":[\n" << r.steps.str() << "]};\n" << page_script << "</script>\n</body></html>\n";
}

void visualize(std::ostream& dst, const pipeline& p, pipeline::buffers inputs, pipeline::buffers outputs,
               const node_context* ctx) {
  visualize(dst, p, {}, inputs, outputs, ctx);
}

}  // namespace slinky
