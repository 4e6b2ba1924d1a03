// Pipelined parallel loops: the synchronization emitted around the stages of a loop body that
// slides (docs/threads.md). Stage k of iteration t starts once iteration t - 1 has finished
// stage k, and iterations finish in order, so at most the loop's workers are in flight:
//
//   let y.first = <first y> in allocate(y.sem, stack, [0, stages - 1]) {
//     semaphore_init(y.sem[k], 0) for each stage k
//     loop(y, workers) {
//       check(semaphore_wait(y.sem[0], y - y.first))
//       stage 0
//       check(semaphore_signal(y.sem[0], y - y.first + step))
//       ...
//       last stage
//       check(semaphore_wait(y.sem[n - 1], y - y.first))
//       check(semaphore_signal(y.sem[n - 1], y - y.first + step))
//     }
//   }
//
// Each semaphore counts the distance (y - first) the next iteration may start at; a wait gives
// up (and its check fails quietly) when another worker has failed.
#ifndef SLINKY_BUILDER_STAGE_SEMAPHORES_H
#define SLINKY_BUILDER_STAGE_SEMAPHORES_H

#include <cstddef>

#include "slinky/runtime/expr.h"
#include "slinky/runtime/stmt.h"

namespace slinky {

struct pipeline_sync {
  var loop_var;
  // The loop's first value, bound around the loop.
  var first;
  // A buffer of one semaphore per stage, allocated around the loop.
  var semaphores;
  expr step;
  std::size_t stages = 0;
};

// Stage k of the loop body: when ordered_start, it starts after the previous iteration's stage k
// finished; else (the last stage only) it runs at once and then finishes after the previous
// iteration's.
stmt pipeline_stage(const pipeline_sync& p, std::size_t k, stmt body, bool ordered_start);

// Wraps the loop: binds p.first to `first`, allocates and initializes the semaphores.
stmt pipeline_loop(const pipeline_sync& p, expr first, stmt loop);

}  // namespace slinky

#endif  // SLINKY_BUILDER_STAGE_SEMAPHORES_H
