/// \file
/// `visualize`: one self-contained HTML page that replays what a pipeline does for given shapes.
#ifndef SLINKY_RUNTIME_VISUALIZE_H
#define SLINKY_RUNTIME_VISUALIZE_H

#include <iosfwd>

#include "slinky/runtime/expr.h"
#include "slinky/runtime/pipeline.h"

namespace slinky {

/// Writes to dst an HTML page (no network fetches, no external scripts) that replays the pipeline
/// p for these arguments: each memory (an input, an output, each allocation) drawn as a grid of
/// the coordinates of the buffer it was made from (dim 0 across, dim 1 down, the planes of dims 2
/// and 3 side by side and in rows; a ring buffer by its fold), and, step by step, what each call
/// and copy writes (red) and reads (blue), what holds data so far, and when memory is allocated
/// and freed. A time slider moves through the steps; the space bar (or the play button) toggles
/// autoplay; "#step=N" in the page's address opens it at step N.
///
/// The callbacks are not run: the program runs with every call and copy replaced by one that
/// records the buffers it is given, so the replay shows the shapes, crops, folds and aliases of
/// the real run (buffers that share memory are drawn as that one memory), not data. Parallel loops
/// run serially (one valid order of the steps). The inputs' and outputs' contents are not read or
/// written; intermediates are allocated (with the default allocator) as in a real run. If the
/// program fails (a check), the page shows the steps up to the failure and says so. ctx names the
/// symbols (default: the names the pipeline was built with).
///@{
void visualize(std::ostream& dst, const pipeline& p, pipeline::scalars args, pipeline::buffers inputs,
               pipeline::buffers outputs, const node_context* ctx = nullptr);
void visualize(std::ostream& dst, const pipeline& p, pipeline::buffers inputs, pipeline::buffers outputs,
               const node_context* ctx = nullptr);
///@}

}  // namespace slinky

#endif  // SLINKY_RUNTIME_VISUALIZE_H
