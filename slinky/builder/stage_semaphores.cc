// The semaphores of pipelined parallel loops (see stage_semaphores.h).
#include "slinky/builder/stage_semaphores.h"

#include <vector>

namespace slinky {

namespace {

expr semaphore(const pipeline_sync& p, std::size_t k) { return buffer_at(p.semaphores, static_cast<index_t>(k)); }

}  // namespace

stmt pipeline_stage(const pipeline_sync& p, std::size_t k, stmt body, bool ordered_start) {
  const expr t = p.loop_var - p.first;
  stmt wait = check::make(call::make(intrinsic::semaphore_wait, {semaphore(p, k), t}));
  stmt signal = check::make(call::make(intrinsic::semaphore_signal, {semaphore(p, k), t + p.step}));
  if (ordered_start) return block::make({std::move(wait), std::move(body), std::move(signal)});
  return block::make({std::move(body), std::move(wait), std::move(signal)});
}

stmt pipeline_loop(const pipeline_sync& p, expr first, stmt loop) {
  std::vector<stmt> body;
  for (std::size_t k = 0; k < p.stages; ++k) {
    body.push_back(check::make(call::make(intrinsic::semaphore_init, {semaphore(p, k), 0})));
  }
  body.push_back(std::move(loop));
  dim_expr sems;
  sems.bounds = interval_expr(0, static_cast<index_t>(p.stages) - 1);
  stmt result = allocate::make(p.semaphores, memory_type::stack, static_cast<index_t>(sizeof(index_t)), {sems},
                               block::make(std::move(body)));
  return let_stmt::make(p.first, std::move(first), std::move(result));
}

}  // namespace slinky
