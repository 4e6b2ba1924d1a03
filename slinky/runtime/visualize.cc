// visualize (visualize.h): runs the program with recording stand-ins for its calls and copies,
// then writes the record as JSON into a page whose script replays it. docs/tools.md.
#include "slinky/runtime/visualize.h"

#include <algorithm>
#include <array>
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
    // How to draw it: the dims of the buffer it was made from, as [elements in memory (the fold
    // if folded, else the extent; 1 if the stride is 0), stride in bytes, 1 if folded else 0], and
    // the offset of that buffer's base from lo.
    std::vector<std::array<index_t, 3>> dims;
    std::ptrdiff_t base;
    // "input", "output", "allocation", or "other" (memory none of these holds: a constant).
    std::string kind;
    // False between an allocation's free and its next allocation.
    bool live = true;

    bool same_shape(const memory& m) const {
      return name == m.name && elem_size == m.elem_size && dims == m.dims && base == m.base && hi - lo == m.hi - m.lo;
    }
  };

  std::mutex mutex;
  std::vector<memory> memories;
  std::ostringstream steps;
  int num_steps = 0;
  int num_calls = 0;

  static memory make_memory(const std::string& name, const raw_buffer& b, const char* kind) {
    memory m{name, 0, 0, static_cast<index_t>(b.elem_size), {}, 0, kind};
    address_range(b, m.lo, m.hi);
    for (std::size_t d = 0; d < b.rank; ++d) {
      const dim& i = b.dim(d);
      const index_t extent = i.stride() == 0 ? 1 : i.fold_factor() > 0 ? i.fold_factor() : i.extent();
      m.dims.push_back({extent, i.stride(), i.stride() != 0 && i.fold_factor() > 0 ? 1 : 0});
    }
    m.base = static_cast<std::ptrdiff_t>(reinterpret_cast<std::uintptr_t>(b.base) - m.lo);
    return m;
  }

  int add_memory(const std::string& name, const raw_buffer& b, const char* kind) {
    memory m = make_memory(name, b, kind);
    if (m.lo == m.hi) return -1;
    memories.push_back(std::move(m));
    return static_cast<int>(memories.size()) - 1;
  }

  // The memory of an allocation: a freed one of the same name and shape if there is one (an
  // allocation inside a loop is one memory, allocated and freed in each iteration, not one per
  // iteration), at b's address from now on.
  int allocation(const std::string& name, const raw_buffer& b) {
    memory m = make_memory(name, b, "allocation");
    if (m.lo == m.hi) return -1;
    for (std::size_t i = 0; i < memories.size(); ++i) {
      memory& old = memories[i];
      if (old.kind == m.kind && !old.live && old.same_shape(m)) {
        old.lo = m.lo;
        old.hi = m.hi;
        old.live = true;
        return static_cast<int>(i);
      }
    }
    memories.push_back(std::move(m));
    return static_cast<int>(memories.size()) - 1;
  }

  // The memory holding b's elements: a live one, the most recent first (a block handed on to
  // another allocation is the same memory), else a freed one; a new one (named name) if none.
  int memory_of(const std::string& name, const raw_buffer& b) {
    std::uintptr_t lo, hi;
    address_range(b, lo, hi);
    if (lo == hi) return -1;
    for (bool live : {true, false}) {
      for (std::size_t i = memories.size(); i-- > 0;) {
        if (memories[i].live == live && memories[i].lo <= lo && hi <= memories[i].hi) return static_cast<int>(i);
      }
    }
    return add_memory(name, b, "other");
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
// Calls fn with the element index (in its memory) of each element of an access [memory, offset,
// name, dims], the first `limit` of them.
function forEachCell(mem, a, limit, fn) {
  const dims = a[3], elem = mem.elem, n = dims.length;
  for (const d of dims) if (d[1] < d[0]) return;
  // The offset in bytes of coordinate x of dim d = [min, max, stride, fold] from the base.
  const offset = (d, x) => d[2] == 0 ? 0 : d[3] > 0 ? (((x % d[3]) + d[3]) % d[3]) * d[2] : (x - d[0]) * d[2];
  if (n == 0) { if (limit > 0) fn(Math.floor(a[1] / elem)); return; }
  const at = dims.map(d => d[0]);
  let count = 0;
  for (;;) {
    let off = a[1];
    for (let i = 1; i < n; ++i) off += offset(dims[i], at[i]);
    const d0 = dims[0];
    for (let x = d0[0]; x <= d0[1]; ++x) {
      fn(Math.floor((off + offset(d0, x)) / elem));
      if (++count >= limit) return;
    }
    let i = 1;
    for (; i < n; ++i) {
      if (at[i] < dims[i][1]) { ++at[i]; break; }
      at[i] = dims[i][0];
    }
    if (i >= n) return;
  }
}
// The state after steps [0, t): which elements of each memory hold data (an input's or a
// constant's from the start, an allocation's once written since it was allocated), which memories
// are allocated (all but allocations always are), and which memories changed since `dirty` was
// last cleared.
function makeState() {
  return {t: 0, calls: 0,
          written: data.memories.map(m => new Uint8Array(m.size).fill(m.kind == "input" || m.kind == "other" ? 1 : 0)),
          live: data.memories.map(m => m.kind != "allocation"), dirty: data.memories.map(() => true)};
}
function apply(state, s) {
  const step = data.steps[s];
  if (step.k == "alloc") { state.live[step.m] = true; state.written[step.m].fill(0); state.dirty[step.m] = true; }
  else if (step.k == "free") state.live[step.m] = false;
  else ++state.calls;
  for (const w of step.w) {
    const mem = data.memories[w[0]], written = state.written[w[0]];
    forEachCell(mem, w, 1 << 22, c => { if (c >= 0 && c < mem.size) written[c] = 1; });
    state.dirty[w[0]] = true;
  }
}
function advance(state, t) {
  if (t < state.t) { const s = makeState(); Object.assign(state, s); }
  while (state.t < t) apply(state, state.t++);
  return state;
}
// Where each element of a memory is drawn, from the dims of the buffer it was made from: dim 0
// across, dim 1 down, the planes of dim 2 side by side and those of dim 3 (and higher) in rows,
// one pixel apart; a 1-D memory in rows of 256. pos[e] is the pixel of element e, -1 for an
// element no coordinate reaches (padding) or past the 4096 x 4096 pixels drawn.
function layout(m) {
  const dims = m.dims.length ? m.dims.map(d => ({n: Math.max(1, d[0]), stride: d[1]})) : [{n: 1, stride: 0}];
  const wrap = dims.length == 1 && dims[0].n > 256;
  const w = wrap ? 256 : dims[0].n, h = wrap ? Math.ceil(dims[0].n / 256) : dims.length > 1 ? dims[1].n : 1;
  const across = dims.length > 2 ? dims[2].n : 1;
  let down = 1;
  for (let d = 3; d < dims.length; ++d) down *= dims[d].n;
  const gap = 1;
  const width = Math.min(4096, across * (w + gap) - gap), height = Math.min(4096, down * (h + gap) - gap);
  const pos = new Int32Array(m.size).fill(-1);
  const at = dims.map(() => 0);
  for (let count = 0; count < (1 << 24); ++count) {
    let off = m.base, plane = 0;
    for (let d = 0; d < dims.length; ++d) off += at[d] * dims[d].stride;
    for (let d = dims.length - 1; d >= 3; --d) plane = plane * dims[d].n + at[d];
    const x = (wrap ? at[0] % 256 : at[0]) + (dims.length > 2 ? at[2] * (w + gap) : 0);
    const y = (wrap ? Math.floor(at[0] / 256) : dims.length > 1 ? at[1] : 0) + plane * (h + gap);
    const e = Math.floor(off / m.elem);
    if (x < width && y < height && e >= 0 && e < m.size) pos[e] = y * width + x;
    let d = 0;
    for (; d < dims.length; ++d) {
      if (++at[d] < dims[d].n) break;
      at[d] = 0;
    }
    if (d == dims.length) break;
  }
  return {width: Math.max(1, width), height: Math.max(1, height), pos};
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
    const shape = m.dims.map(d => d[0]).join(" x ");
    const folded = m.dims.map((d, i) => d[2] ? "dim " + i : "").filter(f => f).join(", ");
    title.textContent = m.name + " (" + m.kind + (shape ? ", " + shape : "") + ", " + m.elem + "-byte elements" +
                        (folded ? "; a ring buffer in " + folded : "") + ")";
    const canvas = document.createElement("canvas");
    const l = layout(m);
    canvas.width = l.width;
    canvas.height = l.height;
    const scale = Math.max(1, Math.floor(Math.min(320 / canvas.width, 240 / canvas.height)));
    canvas.style.width = canvas.width * scale + "px";
    canvas.style.height = canvas.height * scale + "px";
    box.appendChild(title);
    box.appendChild(canvas);
    document.getElementById("memories").appendChild(box);
    const ctx = canvas.getContext("2d");
    return {box, canvas, ctx, pos: l.pos, img: ctx.createImageData(canvas.width, canvas.height), marked: false};
  });
  const colors = [[235, 235, 235], [120, 190, 120], [40, 90, 220], [220, 40, 40]];
  function draw() {
    const t = Number(slider.value);
    // The state after this step: what it and the steps before it wrote, what is allocated.
    advance(state, Math.min(t + 1, data.steps.length));
    const step = data.steps[t];
    // Marks of this step: 2 read, 3 written.
    const marks = new Map();
    if (step) {
      for (const [list, color] of [[step.r, 2], [step.w, 3]]) {
        for (const a of list) {
          const m = data.memories[a[0]];
          if (!marks.has(a[0])) marks.set(a[0], new Uint8Array(m.size));
          const mark = marks.get(a[0]);
          forEachCell(m, a, 1 << 22, c => { if (c >= 0 && c < m.size) mark[c] = color; });
        }
      }
    }
    // Only memories that changed, or are marked now or were at the last draw, are painted again.
    data.memories.forEach((m, i) => {
      const v = views[i];
      v.box.style.opacity = state.live[i] ? 1 : 0.3;
      const mark = marks.get(i);
      // The memories of this step stand out in a long list: their box takes the color of the access.
      v.box.style.borderColor = !mark ? "" : step.w.some(a => a[0] == i) ? "rgb(220,40,40)" : "rgb(40,90,220)";
      if (!state.dirty[i] && !mark && !v.marked) return;
      state.dirty[i] = false;
      v.marked = !!mark;
      const px = v.img.data, written = state.written[i];
      for (let e = 0; e < m.size; ++e) {
        const p = v.pos[e];
        if (p < 0) continue;
        const rgb = colors[mark && mark[e] ? mark[e] : written[e]];
        px[4 * p] = rgb[0]; px[4 * p + 1] = rgb[1]; px[4 * p + 2] = rgb[2]; px[4 * p + 3] = 255;
      }
      v.ctx.putImageData(v.img, 0, 0);
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
    // At the last step, play starts over.
    if (Number(slider.value) >= Number(slider.max)) { slider.value = 0; draw(); }
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
  // #step=N in the address opens the page at step N.
  const at = typeof location !== "undefined" && /^#step=(\d+)$/.exec(location.hash);
  if (at) slider.value = Math.min(Math.max(1, Number(at[1])), data.steps.length) - 1;
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
    if (inputs[i]) r.add_memory(name(p.inputs[i]), *inputs[i], "input");
  }
  for (std::size_t i = 0; i < outputs.size() && i < p.outputs.size(); ++i) {
    if (outputs[i]) r.add_memory(name(p.outputs[i]), *outputs[i], "output");
  }
  const std::size_t fixed = r.memories.size();

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
    const int mem = r.allocation(name(sym), *b);
    if (mem >= 0) r.step("alloc", name(sym), "", "", mem);
    return block;
  };
  config.free = [&](var sym, raw_buffer* b, void* block) {
    {
      std::lock_guard<std::mutex> lock(r.mutex);
      std::uintptr_t lo, hi;
      address_range(*b, lo, hi);
      for (std::size_t i = r.memories.size(); i-- > fixed;) {
        recorder::memory& mem = r.memories[i];
        if (mem.live && mem.kind == "allocation" && mem.lo == lo && mem.hi == hi) {
          mem.live = false;
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
  dst << "<div>Red: written by the step; blue: read by it; green: holds data (an input's, a constant's, or written "
      << "since allocated); grey: not written. Faded: not allocated.</div>\n"
      << "<div id=\"memories\"></div>\n<script>\nconst data = {\"calls\":" << r.num_calls
      << ",\"failed\":" << (failure.empty() ? "false" : "true") << ",\n\"memories\":[";
  for (std::size_t i = 0; i < r.memories.size(); ++i) {
    const recorder::memory& mem = r.memories[i];
    dst << (i > 0 ? "," : "") << "{\"name\":";
    write_json_string(dst, mem.name);
    dst << ",\"elem\":" << mem.elem_size << ",\"size\":" << (mem.hi - mem.lo + mem.elem_size - 1) / mem.elem_size
        << ",\"kind\":\"" << mem.kind << "\",\"base\":" << mem.base << ",\"dims\":[";
    for (std::size_t d = 0; d < mem.dims.size(); ++d) {
      dst << (d > 0 ? "," : "") << "[" << mem.dims[d][0] << "," << mem.dims[d][1] << "," << mem.dims[d][2] << "]";
    }
    dst << "]}";
  }
  dst << "],\n\"steps\":[\n" << r.steps.str() << "]};\n" << page_script << "</script>\n</body></html>\n";
}

void visualize(std::ostream& dst, const pipeline& p, pipeline::buffers inputs, pipeline::buffers outputs,
               const node_context* ctx) {
  visualize(dst, p, {}, inputs, outputs, ctx);
}

}  // namespace slinky
