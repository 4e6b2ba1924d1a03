// Where a program's intermediates live (internal to the builder; used by emit.cc): the
// allocation of each buffer stored at a level, around the items of the level that use it, the
// memory handed on from a buffer to a later one, the storage shared within a loop's iteration, and
// the early frees (docs/builder.md, emit_program).
#ifndef SLINKY_BUILDER_STORAGE_PLAN_H
#define SLINKY_BUILDER_STORAGE_PLAN_H

#include <cstddef>
#include <optional>
#include <vector>

#include "slinky/builder/alias.h"
#include "slinky/builder/bounds.h"
#include "slinky/builder/graph.h"

namespace slinky {

// A statement of a level's body (docs/builder.md, emit_program): a func computed at the level,
// the continuation (the rest of the loop's body, after the funcs computed there), or an
// allocation around the statements from its first user to the end of the level.
struct level_item {
  enum class kind { func, continuation, allocation };
  kind what;
  // The func it computes (kind::func only).
  int func;
  stmt body;
  // The frees (free intrinsic) right after it, of the allocations whose last user it is.
  std::vector<stmt> frees;
  // The pipeline outputs every func in it reaches, when they are the same for all of them (it is
  // idle when they are all empty); null when not known to be the same.
  const std::vector<int>* reach = nullptr;
};

// A buffer stored at a level, and the items of the level (indices into its level_items) that use
// its memory: the buffer's producer and consumers, and those of the buffers that are views of it.
struct allocation {
  int buffer;
  std::size_t first_user, last_user;
  // Views nest inside what they view (alias_plan::depth).
  int alias_depth;
  // At the root: the outputs every user of the buffer reaches (when they are all empty, it is
  // not allocated: its bounds are not meaningful), or null.
  const std::vector<int>* reach;
  // Memory handed on: the buffer whose memory this one takes instead of allocating its own.
  std::optional<int> donor;
  // The last item any buffer in this allocation's memory uses: last_user, or for an allocation
  // that hands its memory on, that of the buffer taking it.
  std::size_t memory_last_user;
  // Storage shared within an iteration (docs/builder.md, emit_program): for a buffer stored
  // outside the serial loop its producer is computed at, `inner`, whose data does not outlive an
  // iteration of it, the items of that loop's body that use it (first and last) and the last
  // item of that body that uses any buffer in its memory.
  std::optional<loop_level> inner;
  std::size_t inner_first = 0, inner_last = 0, memory_inner_last = 0;
};

// The storage decisions of emit_program, over the graph, its bounds and its aliases.
class storage_planner {
  const graph& g_;
  const bounds_inference& bounds_;
  const alias_plan& aliases_;
  // For each buffer, the buffers that are views of it, directly or not.
  std::vector<std::vector<int>> views_;

  // The allocation of buffer bi, stored at level l, if an item uses it. A buffer other buffers
  // are views of is used by their users too.
  // item_of_func: the index of the item computing each func at this level (-1 if none).
  std::optional<allocation> find_allocation(int bi, loop_level l, const std::vector<level_item>& items,
                                            const std::vector<int>& item_of_func) const;

  // Whether func fi computes, in each iteration of the loops chain[k0...], everything its
  // consumers read of it there: in each dimension its produce region is their actual need,
  // clamped at most by bounds that none of these loops' variables move (the total it computes).
  // A cheap structural test of what bounds inference found (a sliding func that trims what
  // earlier iterations computed has a bound of the previous iteration instead); false when it
  // does not show it.
  bool computes_whole_need(int fi, const std::vector<loop_level>& chain, std::size_t k0) const;

  // The loop whose iterations buffer bi's data does not outlive, for a buffer stored at level l
  // (docs/builder.md, emit_program): the loop its producer is computed at, when that is inside l,
  // every loop from l's body down to it is serial (not parallel, not pipelined), along each of
  // them the producer does not slide or the windows its consumers read are disjoint from one
  // iteration to the next (a sliding producer then computes each window whole), so what an
  // iteration reads of the buffer that iteration computed, and every consumer runs in that loop.
  // Views, and buffers other buffers view, are left out.
  std::optional<loop_level> iteration_scope(int bi, loop_level l) const;

public:
  storage_planner(const graph& g, const bounds_inference& bounds, const alias_plan& aliases);

  // The buffers that are views of buffer bi, directly or not.
  const std::vector<int>& views(int bi) const { return views_[bi]; }

  // True if func x runs inside the statements emitted for func y (y itself, or computed in one
  // of y's loops, directly or not).
  bool runs_inside(int x, int y) const;

  // True if func x runs in the continuation of loop l (the part of l's body after the funcs
  // computed at l): l's func itself and whatever is computed in its inner loops.
  bool runs_in_continuation(int x, loop_level l) const;

  // The dims an intermediate is allocated with: the region its consumers need (or the bounds the
  // client declared), the client's strides and fold factors, or the folds bounds inference found.
  std::vector<dim_expr> allocation_dims(int bi) const;

  // Whether buffer b can live in the memory allocated for buffer a once a's users (and its views'
  // users) are done: both allocated (not views; b not viewed either), in the same kind of memory, with the same
  // constant element size, dense (no strides or folds) and extents proved equal. b is then a view of a's memory with
  // a's strides.
  //
  // With `within_iteration` (share_within_iterations), both are buffers whose data does not
  // outlive an iteration of the loop they are computed in, and they may be folded along it: with
  // fold factors the builder found (not declared by the client) and proved equal, b's addresses
  // with a's strides are a's. Their memory is automatic or stack (never heap: the client asked
  // for those allocations, and may count them).
  bool can_take_memory_of(int b, int a, bool within_iteration = false) const;

  // True if func fi runs inside item (which computes a func or is the continuation of level l).
  bool runs_in(const level_item& item, int fi, loop_level l) const;

  // The allocations of the intermediates stored at level l, in the order they nest: by first
  // use, and for the same first use, views inside what they view. Those whose data does not
  // outlive an iteration of a loop inside l (iteration_scope) also get the items of that loop's
  // body that use them.
  std::vector<allocation> level_allocations(loop_level l, const std::vector<level_item>& items) const;

  // Memory handed on: a buffer first used after every user of an earlier allocation is done, of
  // the same size and kind, and idle in the same cases, takes that allocation's memory instead
  // of allocating (an unscheduled chain of equal-sized intermediates then allocates two). The
  // earlier allocation is freed after the last user of either.
  // The most recently allocated candidates are tried first, and at most a few of them (each try
  // may need a proof): build time stays linear in long chains.
  void hand_on_memory(std::vector<allocation>& allocations) const;

  // Storage shared within an iteration: buffers stored outside a serial loop whose data does not
  // outlive one of its iterations (iteration_scope) are live, in each iteration, from the first
  // item of the loop's body that uses them to the last. A buffer whose items come after those of
  // every buffer in an earlier allocation's memory takes that memory (a view of it), when both are
  // in the same loop, of the same kind of memory (automatic or stack), the same layout
  // (can_take_memory_of) and idle in the same cases: an interval graph coloured greedily in the
  // order of first use, so buffers live together never share and a chain needs two blocks. The
  // allocations of the same first use at this level are then reordered so that each memory's
  // allocation nests outside the views of it. Like hand_on_memory, a few candidates are tried.
  void share_within_iterations(std::vector<allocation>& allocations) const;

  // Early free: each allocation that has memory of its own is freed (free intrinsic) right after
  // the last user of its memory, unless that is the last item (the end of its scope frees it).
  // Lifetimes that cross (a chain: t1 used by f1 and f2, t2 by f2 and f3) then keep no dead
  // buffer alive: t1 is freed before t3 is allocated.
  void add_frees(std::vector<level_item>& items, const std::vector<allocation>& allocations) const;
};

}  // namespace slinky

#endif  // SLINKY_BUILDER_STORAGE_PLAN_H
