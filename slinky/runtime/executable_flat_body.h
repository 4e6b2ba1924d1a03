// Internal to executable.cc (not installed), after executable_nodes.h: a serial loop's body
// flattened into one array of operations (flat_body), and the loop node that runs it. This is
// the per-iteration path of the executable form: what it does per operation, and why, is below
// and in docs/runtime.md ("The evaluator").
#ifndef SLINKY_RUNTIME_EXECUTABLE_FLAT_BODY_H
#define SLINKY_RUNTIME_EXECUTABLE_FLAT_BODY_H

#include <cstdint>
#include <deque>
#include <new>
#include <unordered_map>
#include <vector>

#include "slinky/runtime/evaluator.h"
#include "slinky/runtime/executable.h"
#include "slinky/runtime/executable_nodes.h"

namespace slinky {
namespace internal {
// Internal linkage, as executable_nodes.h (the only file that includes this one is executable.cc).
namespace {

// A loop body flattened into one sequence of operations run by one function, so that an
// iteration does not go through a virtual call, a prologue and an epilogue per statement: a crop
// (a crop_dim, or a crop_buffer of any number of dims) opens a scope that the matching `end`
// closes, or, when its body is one call, runs the call and closes itself; calls run the callback;
// blocks disappear; every other statement is an operation that runs its compiled node. A crop's
// descriptor lives in a slot of a frame that a loop allocates once per run of the loop (not per
// iteration): crops open at the same depth are never live together, so there is one slot per
// level of nesting.
class flat_body final : public exec_node {
public:
  struct slot {
    raw_buffer buf;
    index_t saved;
    // For a refreshed crop: the source buf was copied from, if buf holds a crop of it made in an
    // earlier iteration of this run of the loop; no_source() otherwise (never a bound buffer, nor
    // null: a crop compares its source with src alone to know whether to refresh).
    const raw_buffer* src;
    // The same, set only where the refresh is one of the two common cases computed inline (bounds
    // affine in one symbol, compiled_interval::affine, of a source dim with a stride and a base):
    // an unfolded dim, or one with a power-of-two fold factor. A crop compares its source with
    // these first: one comparison tells both that it refreshes and how.
    const raw_buffer* unfolded_src;
    const raw_buffer* folded_src;
    // For a refreshed crop, what the refresh needs of its source (which does not change while
    // src is that source): the base, the cropped dim (if the source has it), where the crop's
    // copy of it is, and for folded_src, the fold factor minus 1.
    void* src_base;
    dim src_dim;
    dim* cropped;
    index_t fold_mask;
    dim dims[inline_rank];
  };

  struct crop_op {
    symbol_id sym;
    var src;
    // The byte offset of its slot in the frame (the slot's index times sizeof(slot), computed once).
    std::size_t slot_offset;
    // This crop's op, and the op after its end (after itself if it runs a call).
    std::size_t begin, next;
    // The first dim cropped (a huge d if none: a negative dim converts to one too), and the
    // others.
    std::size_t d;
    compiled_interval bounds;
    std::vector<std::pair<std::size_t, compiled_interval>> more;
    // !more.empty(), read without the vector's two pointers.
    bool has_more;
    // The body if it is one call.
    const compiled_call* call;
    // True if the crop is refreshed rather than rebuilt when its source is the one it copied in the
    // previous iteration (see refresh_crop).
    bool refresh;
    // True if the crop (refreshed, with a body) stays bound from its first iteration to the end of
    // the run of the loop (see mark_refreshed_crops).
    bool persistent;
    // The crop with its body as compiled nodes, for a source of rank above inline_rank (a slot
    // has room for inline_rank dims).
    const exec_node* fallback;
  };

  // A call with a direct entry is a `call`; one without is a `node` (its call_node). The end of a
  // persistent crop does nothing and is left out (mark_refreshed_crops). The last op is a `stop`,
  // which ends the ops (run_in): the loop that runs them need not test for their end. The most
  // common ops have kinds of their own, which save a test each where they run (run_in tests them
  // first): `crop_call_out`, a refreshed crop_call whose call has two buffers, the second of which
  // (only) is the crop (compiled_call::second_of_two); `crop_persistent`, a persistent crop;
  // `call_pair`, a call of two buffers.
  enum class op_kind : std::uint8_t {
    crop_call_out,
    call_pair,
    crop_persistent,
    stop,
    crop_call,
    crop,
    end,
    call,
    node,
  };
  struct op {
    op_kind kind;
    // crop, crop_persistent, crop_call, crop_call_out and end: a crop_op; call and call_pair: a
    // compiled_call with a direct entry; node: an exec_node; stop: null.
    const void* target;
  };

  // The ops, then a stop, as flattening builds them; pack() moves them (and empties both).
  std::vector<op> ops;
  // Pointed to by ops: a deque keeps them in place as it grows.
  std::deque<crop_op> crops;
  std::size_t depth = 0;
  // The slots of a frame: one per level of nesting, then one for each refreshed crop (which
  // keeps its crop from one iteration to the next, so shares its slot with no other crop).
  std::size_t slots = 0;
  bool any_persistent = false;

  // The ops to run, in the packed block (after pack()); ops_end() is the stop.
  const op* ops_begin() const { return packed_ops_; }
  const op* ops_end() const { return packed_ops_ + packed_ops_n_ - 1; }

  flat_body() = default;
  flat_body(const flat_body&) = delete;
  flat_body& operator=(const flat_body&) = delete;
  ~flat_body() override {
    for (std::size_t i = 0; i < packed_crops_n_; ++i) packed_crops_[i].~crop_op();
    if (packed_) ::operator delete(packed_, std::align_val_t(packed_align_));
  }

  // Moves the ops, the crops they run and copies of the direct calls they make into one block,
  // aligned so that it lies in one page where it fits in one: an iteration then reads its
  // operations from one page instead of from the pages where the compiler happened to allocate
  // them. Every page an iteration touches beside the callbacks' own costs the callbacks time
  // where they stream from memory (docs/runtime_measurements.md, "Pages per iteration"). Called
  // once, when the body is complete.
  void pack() {
    std::vector<const compiled_call*> calls;
    for (const op& o : ops) {
      if (o.kind == op_kind::call || o.kind == op_kind::call_pair) {
        calls.push_back(static_cast<const compiled_call*>(o.target));
      }
    }
    for (const crop_op& c : crops) {
      if (c.call) calls.push_back(c.call);
    }
    const auto lines = [](std::size_t n) { return (n + 63) & ~std::size_t{63}; };
    const std::size_t ops_bytes = lines(ops.size() * sizeof(op));
    const std::size_t calls_bytes = lines(calls.size() * sizeof(compiled_call));
    const std::size_t total = ops_bytes + calls_bytes + lines(crops.size() * sizeof(crop_op));
    // A power of two at least as large as the block (up to a page): it then lies in one page.
    std::size_t align = 64;
    while (align < total && align < 4096) align *= 2;
    char* block = static_cast<char*>(::operator new(total, std::align_val_t(align)));
    op* new_ops = reinterpret_cast<op*>(block);
    compiled_call* new_calls = reinterpret_cast<compiled_call*>(block + ops_bytes);
    crop_op* new_crops = reinterpret_cast<crop_op*>(block + ops_bytes + calls_bytes);
    // Where each call and crop moved (every target of an op but a node's is one of them).
    std::unordered_map<const void*, const void*> moved;
    const auto moved_to = [&](const void* from) {
      auto i = moved.find(from);
      SLINKY_ASSERT(i != moved.end(), "flat_body::pack: an op's target was not moved");
      return i->second;
    };
    for (std::size_t i = 0; i < calls.size(); ++i) moved[calls[i]] = new (&new_calls[i]) compiled_call(*calls[i]);
    std::size_t n = 0;
    for (crop_op& c : crops) {
      crop_op* to = new (&new_crops[n++]) crop_op(std::move(c));
      if (to->call) to->call = static_cast<const compiled_call*>(moved_to(to->call));
      moved[&c] = to;
    }
    for (std::size_t i = 0; i < ops.size(); ++i) {
      new (&new_ops[i]) op(ops[i]);
      if (ops[i].target && ops[i].kind != op_kind::node) new_ops[i].target = moved_to(ops[i].target);
    }
    packed_ = block;
    packed_align_ = align;
    packed_ops_ = new_ops;
    packed_ops_n_ = ops.size();
    packed_crops_ = new_crops;
    packed_crops_n_ = n;
    ops.clear();
    ops.shrink_to_fit();
    crops.clear();
  }

  static slot& slot_of(slot* frame, const crop_op& c) {
    return *reinterpret_cast<slot*>(reinterpret_cast<char*>(frame) + c.slot_offset);
  }

  std::size_t frame_bytes() const { return sizeof(slot) * (slots > 0 ? slots : 1); }

  // The src of a slot that holds no crop to refresh: an address no buffer has.
  static const raw_buffer* no_source() {
    static const char tag = 0;
    return reinterpret_cast<const raw_buffer*>(&tag);
  }

  // Readies a frame for a run of the loop: no slot holds a crop to refresh yet.
  void init_frame(slot* frame) const {
    for (std::size_t i = 0; i < slots; ++i) frame[i].src = frame[i].unfolded_src = frame[i].folded_src = no_source();
  }

  index_t run(evaluator& e) const override {
    slot* frame = static_cast<slot*>(alloca(frame_bytes()));
    init_frame(frame);
    const index_t result = run_in(e, frame);
    finish(e, frame);
    return result;
  }

  // Ends a run of the loop: unbinds the persistent crops that were bound.
  void finish(evaluator& e, slot* frame) const {
    if (SLINKY_LIKELY(!any_persistent)) return;
    for (std::size_t i = 0; i < packed_crops_n_; ++i) {
      const crop_op& c = packed_crops_[i];
      if (c.persistent && slot_of(frame, c).src != no_source()) e.values[c.sym] = slot_of(frame, c).saved;
    }
  }

  // Refreshes the crop c of in into s if s holds the crop of in made in an earlier iteration of
  // this run of the loop, and returns true; false otherwise. Nothing since that iteration can
  // have changed *in or s (every call in the body takes const views, nothing else runs, and in
  // is not bound in the body), so base, element size, rank, the dims pointer and the dims not
  // cropped are still right: only the cropped dim and the base are made again, from what s kept
  // of in (s.src_base, s.src_dim), as crop_and_unfold_from would.
  __attribute__((always_inline)) static bool refresh_crop(evaluator& e, const crop_op& c, const raw_buffer* in,
                                                          slot& s) {
    const dim& sd = s.src_dim;
    if (SLINKY_LIKELY(in == s.unfolded_src)) {
      const index_t x = e.values[c.bounds.affine_sym];
      const index_t lo = std::max(saturate_add(x, c.bounds.c0), sd.min());
      const index_t hi = std::min(saturate_add(x, c.bounds.c1), sd.max());
      void* base = s.src_base;
      if (lo <= hi) base = offset_bytes_non_null(base, (lo - sd.min()) * sd.stride());
      s.buf.base = base;
      s.cropped->set_bounds(lo, hi);
      return true;
    }
    if (SLINKY_LIKELY(in == s.folded_src)) {
      const index_t x = e.values[c.bounds.affine_sym];
      const index_t lo = std::max(saturate_add(x, c.bounds.c0), sd.min());
      const index_t hi = std::min(saturate_add(x, c.bounds.c1), sd.max());
      void* base = s.src_base;
      index_t fold = sd.fold_factor();
      if (lo <= hi) {
        // euclidean_mod_positive_modulus(lo, fold), as crop_and_unfold_from takes it.
        const index_t at = lo & s.fold_mask;
        if (at + (hi - lo) <= s.fold_mask) {
          base = offset_bytes_non_null(base, at * sd.stride());
          fold = dim::unfolded;
        }
      }
      s.buf.base = base;
      s.cropped->set_bounds(lo, hi);
      s.cropped->set_fold_factor(fold);
      return true;
    }
    // Only a refreshed crop's slot has a src other than no_source(), which in never is.
    if (in != s.src) return false;
    if (c.d < s.buf.rank) {
      s.buf.base = s.src_base;
      c.bounds.crop_from(e, s.buf, c.d, sd);
    }
    return true;
  }

  // Keeps in s what refresh_crop needs of in, the source of the refreshed crop c that s holds.
  static void keep_source(const crop_op& c, const raw_buffer* in, slot& s) {
    s.src = in;
    s.unfolded_src = s.folded_src = no_source();
    s.src_base = in->base;
    if (c.d >= in->rank) return;
    s.src_dim = in->dims[c.d];
    s.cropped = &s.dims[c.d];
    const index_t stride = s.src_dim.stride(), fold = s.src_dim.fold_factor();
    if (!c.bounds.affine || !in->base || stride == 0) return;
    if (fold <= 0) {
      s.unfolded_src = in;
    } else if ((fold & (fold - 1)) == 0) {
      s.folded_src = in;
      s.fold_mask = fold - 1;
    }
  }

  // Runs the crop (with_call: and its call) at o, which moves to the op before the next one to
  // run if that is not o + 1; returns non-zero on a failure, with o left at the crop. The crop is
  // known to be a crop_call_out (out) or a crop_persistent (persistent) if its kind says so.
  template <bool with_call, bool out = false, bool persistent = false>
  __attribute__((always_inline)) index_t run_crop(evaluator& e, slot* frame, const op*& o, const op* first) const {
    const crop_op& c = *static_cast<const crop_op*>(o->target);
    const raw_buffer* in = reinterpret_cast<const raw_buffer*>(e.values[c.src.sym()]);
    slot& s = slot_of(frame, c);
    if ((out || persistent || c.refresh) && SLINKY_LIKELY(refresh_crop(e, c, in, s))) {
      if (with_call) {
        // The call takes its buffers from an array: the crop need not be bound for it. No block
        // is parked: the first iteration's call gave them back, and since then only crops and
        // calls ran (a refreshed crop's body has no other operation), which park none.
        if (out) return c.call->run_second_of_two(e, &s.buf);
        return c.call->run_in_crop(e, c.sym, &s.buf);
      }
      // Still bound to s.buf from an earlier iteration if persistent.
      if (persistent) return 0;
      s.saved = e.values[c.sym];
      e.values[c.sym] = reinterpret_cast<index_t>(&s.buf);
      return 0;
    }
    if (SLINKY_UNLIKELY(!in || in->rank > inline_rank)) {
      const index_t result = in ? c.fallback->run(e) : fail_null_buffer(e, c.src);
      if (result) return result;
      o = first + c.next - 1;
      return 0;
    }
    // A refreshed crop remembers what it copied (a failure below leaves nothing to refresh:
    // the loop stops).
    // A persistent crop with a source is bound already: what it saved is the outer value.
    const bool bound = c.persistent && s.src != no_source();
    if (c.refresh) {
      keep_source(c, in, s);
    } else {
      // (A slot of a crop not refreshed has no unfolded_src or folded_src.)
      s.src = no_source();
    }
    s.buf.base = in->base;
    s.buf.elem_size = in->elem_size;
    s.buf.rank = in->rank;
    s.buf.dims = s.dims;
    copy_small_dims(*in, s.dims);
    if (c.d < s.buf.rank) c.bounds.crop_from(e, s.buf, c.d, in->dims[c.d]);
    if (SLINKY_UNLIKELY(c.has_more)) {
      for (const auto& j : c.more) {
        if (j.first < s.buf.rank) j.second.crop(e, s.buf, j.first);
      }
    }
    if (!bound) s.saved = e.values[c.sym];
    e.values[c.sym] = reinterpret_cast<index_t>(&s.buf);
    if (!with_call) return 0;
    const index_t result = c.call->run(e);
    e.values[c.sym] = s.saved;
    return result;
  }

  // Runs the ops with crops' descriptors in frame (frame_bytes() of storage).
  __attribute__((always_inline)) index_t run_in(evaluator& e, slot* frame) const {
    return run_in(e, frame, ops_begin(), ops_end(), []() { return false; });
  }
  // The same with the ops' range read by the caller (last: the stop), and, at the stop, again from
  // the first op for as long as next() returns true: a serial loop runs its iterations in the same
  // loop as the ops (an iteration costs the stop's dispatch and what next() does), with the range
  // read once for all its iterations (the callbacks of an iteration would make the compiler read
  // it again).
  template <typename Next>
  __attribute__((always_inline)) index_t run_in(evaluator& e, slot* frame, const op* first, const op* last,
                                                const Next& next) const {
    index_t result = 0;
    const op* o = first;
    for (;;) {
      // The most common kinds first (their values are in that order).
      const op_kind kind = o->kind;
      if (SLINKY_LIKELY(kind == op_kind::crop_call_out)) {
        result = run_crop</*with_call=*/true, /*out=*/true>(e, frame, o, first);
        if (SLINKY_UNLIKELY(result)) goto failed;
      } else if (kind == op_kind::call_pair) {
        result = static_cast<const compiled_call*>(o->target)->run_pair(e);
        if (SLINKY_UNLIKELY(result)) goto failed;
      } else if (kind == op_kind::crop_persistent) {
        result = run_crop</*with_call=*/false, /*out=*/false, /*persistent=*/true>(e, frame, o, first);
        if (SLINKY_UNLIKELY(result)) goto failed;
      } else if (kind == op_kind::stop) {
        if (!next()) return 0;
        o = first;
        continue;
      } else if (kind == op_kind::crop_call) {
        result = run_crop</*with_call=*/true>(e, frame, o, first);
        if (SLINKY_UNLIKELY(result)) goto failed;
      } else if (kind == op_kind::crop) {
        result = run_crop</*with_call=*/false>(e, frame, o, first);
        if (SLINKY_UNLIKELY(result)) goto failed;
      } else if (kind == op_kind::end) {
        const crop_op& c = *static_cast<const crop_op*>(o->target);
        if (!c.persistent) e.values[c.sym] = slot_of(frame, c).saved;
      } else if (kind == op_kind::call) {
        result = static_cast<const compiled_call*>(o->target)->run_direct(e);
        if (SLINKY_UNLIKELY(result)) goto failed;
      } else {
        result = static_cast<const exec_node*>(o->target)->run(e);
        if (SLINKY_UNLIKELY(result)) goto failed;
      }
      ++o;
    }
  failed:
    // Close the crops open at o, innermost first: the ends after o of crops that began before it.
    const std::size_t i = static_cast<std::size_t>(o - first);
    for (const op* j = o + 1; j != last; ++j) {
      if (j->kind != op_kind::end) continue;
      const crop_op& c = *static_cast<const crop_op*>(j->target);
      if (c.begin < i && !c.persistent) e.values[c.sym] = slot_of(frame, c).saved;
    }
    return result;
  }

private:
  // The block of pack() (null: not packed yet), its alignment, and the ops and crops in it.
  char* packed_ = nullptr;
  std::size_t packed_align_ = 0;
  op* packed_ops_ = nullptr;
  std::size_t packed_ops_n_ = 0;
  crop_op* packed_crops_ = nullptr;
  std::size_t packed_crops_n_ = 0;
};

class loop_node final : public exec_node {
public:
  const loop* op;
  compiled_expr min, max, step, workers;
  // The body, flattened.
  const flat_body* body;

  explicit loop_node(const loop* op, const flat_body* body)
      : op(op), min(op->bounds.min), max(op->bounds.max), step(op->step), workers(op->max_workers), body(body) {}

  index_t run(evaluator& e) const override {
    const index_t lo = min.eval(e, 0);
    const index_t hi = max.eval(e, 0);
    const index_t s = step.eval(e, 0);
    if (s <= 0) return e.fail_check(op->step > 0);
    if (lo > hi) return 0;
    const std::size_t span = static_cast<std::size_t>(hi) - static_cast<std::size_t>(lo);
    if (e.config.thread_pool && span >= static_cast<std::size_t>(s)) {
      const index_t w = workers.eval(e, 1);
      if (w > 1) return e.exec_parallel_loop(op, lo, hi, s, w, body_ref(body));
    }
    // One frame for the crops of every iteration.
    flat_body::slot* frame = static_cast<flat_body::slot*>(alloca(body->frame_bytes()));
    body->init_frame(frame);
    const flat_body::op* const first = body->ops_begin();
    const flat_body::op* const last = body->ops_end();
    index_t result;
    {
      evaluator::serial_loop l(e, op->sym, lo, hi, s);
      result = body->run_in(e, frame, first, last, [&]() { return l.next(); });
      if (result == 0) result = l.result();
    }
    body->finish(e, frame);
    return result;
  }
};

}  // namespace
}  // namespace internal
}  // namespace slinky

#endif  // SLINKY_RUNTIME_EXECUTABLE_FLAT_BODY_H
