// The one-pass scheduling heuristic of the largest production client of slinky (an ML inference
// engine), written here as a baseline for the automatic scheduler (scheduler_benchmark), with only
// the builder's public API (func::loops, compute_at):
//
// 1. Cache sizes are constants, not measured: 32 KiB L1, 128 KiB L2. A tile of an output is sized
//    to the L2: 128 KiB of output elements. (The L1 constant is kept for the record; the tiling
//    rule below uses only the L2.)
// 2. Per output func: its dims are taken innermost first; a dim whose whole extent fits in what is
//    left of the tile's elements is kept whole (no loop; the rest of the tile is divided by its
//    extent), the first dim that does not fit gets a loop of step (elements left, at least 1), and
//    every dim outside it a loop of step 1. So the innermost dim is whole when a row of the output
//    fits in 128 KiB, and a tile is a block of whole rows (or a piece of one row).
// 3. Parallelism: the outermost of these loops is parallel when the machine has several threads
//    and that loop has at least 2 iterations per thread (about 2 tasks per thread).
// 4. Fusion along the longest common prefix (LCP) of the consumers' loop nests: consumers first,
//    each producer is computed at the innermost loop common to the loop nests of all its consumers
//    (an output func's nest is its own loops, outermost first; a producer's nest is the prefix of
//    its consumer's nest up to where it is computed), at the root when they share none (consumers
//    in the nests of two different outputs). It stores its output where it is computed (the
//    builder's default), which lets the builder slide windows along the loop.
//
// It looks at nothing else: not the funcs' bounds (a reduction over the looped dim is recomputed
// in each tile's loop like any producer, which is correct but may repeat work), not the cost of
// the callbacks, not the machine.
#ifndef SLINKY_APPS_ONE_PASS_HEURISTIC_H
#define SLINKY_APPS_ONE_PASS_HEURISTIC_H

#include <algorithm>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "workloads.h"

#include "slinky/builder/pipeline.h"
#include "slinky/runtime/buffer.h"

namespace slinky_bench {

struct one_pass_heuristic {
  static constexpr slinky::index_t l1_bytes = 32 << 10;
  static constexpr slinky::index_t l2_bytes = 128 << 10;
  // The elements of one output tile: l2_bytes of them.
  static constexpr slinky::index_t tile_bytes = l2_bytes;

  // Schedules g's funcs for outputs of these shapes (one per g.outputs, in order) and `threads`
  // threads. Returns a description of the output funcs' loops ("no loop" if none).
  static std::string schedule(graph& g, const std::vector<const slinky::raw_buffer*>& output_shapes, int threads) {
    using namespace slinky;
    std::map<const func*, func*> mutable_of;
    for (func& f : g.funcs) mutable_of[&f] = &f;
    // The loop nest of each scheduled func, outermost first.
    std::map<const func*, std::vector<loop_id>> nest;
    std::string description;
    for (std::size_t o = 0; o < g.outputs.size(); ++o) {
      const func* fc = g.outputs[o]->producer();
      if (!fc || !mutable_of.count(fc)) continue;
      func& f = *mutable_of[fc];
      const raw_buffer& shape = *output_shapes[o];
      const std::vector<var>& dims = f.outputs()[0].dims;
      index_t left = std::max<index_t>(1, tile_bytes / static_cast<index_t>(shape.elem_size));
      std::vector<func::loop_info> loops;  // innermost first
      std::vector<index_t> iterations;
      std::string tile;
      for (std::size_t d = 0; d < dims.size(); ++d) {
        const index_t extent = shape.dim(d).extent();
        const index_t step = extent <= left ? extent : std::max<index_t>(1, left);
        left = std::max<index_t>(1, left / std::max<index_t>(1, step));
        if (step >= extent) continue;
        loops.emplace_back(dims[d], step);
        iterations.push_back((extent + step - 1) / step);
        tile += (tile.empty() ? "" : ", ") + std::string("dim ") + std::to_string(d) + " by " + std::to_string(step);
      }
      if (!loops.empty() && threads > 1 && iterations.back() >= 2 * threads) {
        loops.back().max_workers = loop::parallel;
        tile += ", parallel";
      }
      if (!description.empty()) description += "; ";
      description += loops.empty() ? std::string("no loop") : "tiles: " + tile;
      f.loops(loops);
      std::vector<loop_id>& n = nest[fc];
      for (auto l = loops.rbegin(); l != loops.rend(); ++l) n.push_back({fc, l->var});
    }
    // Consumers first: a depth-first post-order from the outputs lists producers before their
    // consumers; walk it backwards.
    std::vector<const func*> order;
    std::map<const func*, std::vector<const func*>> consumers;
    std::map<const func*, bool> seen;
    std::function<void(const func*)> visit = [&](const func* f) {
      if (seen[f]) return;
      seen[f] = true;
      for (const func::input& in : f->inputs()) {
        const func* p = in.buffer->producer();
        if (!p || !mutable_of.count(p)) continue;
        consumers[p].push_back(f);
        visit(p);
      }
      order.push_back(f);
    };
    for (const buffer_expr_ptr& out : g.outputs) {
      if (out->producer()) visit(out->producer());
    }
    for (auto i = order.rbegin(); i != order.rend(); ++i) {
      const func* f = *i;
      if (nest.count(f)) continue;  // an output func, looped above
      std::vector<loop_id> common;
      bool first = true;
      for (const func* c : consumers[f]) {
        const std::vector<loop_id>& cn = nest[c];
        if (first) {
          common = cn;
          first = false;
          continue;
        }
        std::size_t k = 0;
        while (k < common.size() && k < cn.size() && common[k] == cn[k]) ++k;
        common.resize(k);
      }
      nest[f] = common;
      func& mf = *mutable_of[f];
      if (common.empty()) {
        mf.compute_root();
      } else {
        mf.compute_at(common.back());
      }
    }
    return description;
  }
};

}  // namespace slinky_bench

#endif  // SLINKY_APPS_ONE_PASS_HEURISTIC_H
