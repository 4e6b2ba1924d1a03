/// \file
/// `report_memory`: what a pipeline will allocate for given shapes, found without running its
/// callbacks.
#ifndef SLINKY_RUNTIME_MEMORY_REPORT_H
#define SLINKY_RUNTIME_MEMORY_REPORT_H

#include <cstddef>
#include <iosfwd>
#include <string>
#include <vector>

#include "slinky/runtime/evaluate.h"
#include "slinky/runtime/pipeline.h"
#include "slinky/runtime/stmt.h"

namespace slinky {

/// One allocation of the program (an `allocate` statement), over one evaluation.
struct allocation_report {
  /// The buffer's name.
  std::string name;
  /// The storage as declared.
  memory_type storage = memory_type::automatic;
  /// Where a run with the config puts it: on the stack (memory_type::stack, or automatic of at
  /// most eval_config::auto_stack_threshold bytes), else through the allocate hook.
  bool on_stack = false;
  /// The size in bytes of one allocation (the largest, if it varies).
  std::size_t bytes = 0;
  /// How many times it is allocated per evaluation (0 if it never runs, e.g. skipped for empty
  /// outputs).
  std::size_t count = 0;
  /// The loops around it, outermost first (their symbols' names).
  std::vector<std::string> loops;
};

/// What report_memory finds: every allocation of one evaluation, and the totals.
struct memory_report {
  /// Each allocate statement of the program.
  std::vector<allocation_report> allocations;
  /// The most bytes live at once through the allocate hook (what a hook counting sizes sees, with
  /// memory handed on between allocations as in a real run).
  std::size_t peak_heap_bytes = 0;
  /// The most bytes live at once on the stack.
  std::size_t peak_stack_bytes = 0;
  /// Calls of the allocate hook per evaluation.
  std::size_t heap_allocations = 0;
  /// Allocations of either kind per evaluation.
  std::size_t total_allocations = 0;
  /// What evaluate would return (non-zero: a check failed; the report covers what ran before).
  index_t result = 0;
};

/// The memory pipeline p allocates when evaluated with these arguments and the config's
/// auto_stack_threshold and stride_alignment (the default config if null). The program runs with
/// every call and copy replaced by one that does nothing: no callback runs, and the buffers'
/// contents are not touched. Exact for serial programs (the allocate hook of a real run sees the
/// same sizes, counts and peak); parallel loops run serially here (a real run keeps a block per
/// worker and allocates in each worker).
///@{
memory_report report_memory(const pipeline& p, pipeline::scalars args, pipeline::buffers inputs,
                            pipeline::buffers outputs, const eval_config* config = nullptr);
memory_report report_memory(const pipeline& p, pipeline::buffers inputs, pipeline::buffers outputs,
                            const eval_config* config = nullptr);
///@}

/// A table: each allocation with its size, count, placement and loops; then the peaks.
std::ostream& operator<<(std::ostream& os, const memory_report& r);

}  // namespace slinky

#endif  // SLINKY_RUNTIME_MEMORY_REPORT_H
