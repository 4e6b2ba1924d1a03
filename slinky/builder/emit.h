// Emitting the program of a scheduled, bounds-inferred graph: allocations at their storage
// levels around exactly the statements that use them, each func's loops with the crops of its
// outputs (so each call sees exactly the region it must produce), the funcs computed inside
// each loop, and the calls and copies.
//
//   intm = allocate(...) {            // stored at the root
//     loop(y in [out.min1, out.max1], step 1) {
//       out.y = crop_dim(out, 1, [y, y]) {
//         intm.r = crop_buffer(intm, {region of intm for this y}) { call f(in, intm.r) }
//         call g(intm, out.y)
//       }
//     }
//   }
//
// Crops make new symbols rather than shadowing, so buffer metadata in the client's bounds always
// means the buffers as passed in (or as allocated).
#ifndef SLINKY_BUILDER_EMIT_H
#define SLINKY_BUILDER_EMIT_H

#include "slinky/builder/alias.h"
#include "slinky/builder/bounds.h"
#include "slinky/builder/graph.h"

namespace slinky {

// Buffers aliased by `aliases` are views instead of allocations; removed copies are left out.
// With merge_loops, a serial loop whose body would be one call that nothing else in it depends
// on is that call over the loop's whole range (docs/builder.md, "Loops that need not exist").
stmt emit_program(const graph& g, const bounds_inference& bounds, const alias_plan& aliases, node_context& ctx,
                  bool merge_loops = true);

// The number of func fi's loops, innermost first, that emit_program with merge_loops runs as one
// call over their range (docs/builder.md, "Loops that need not exist"): serial loops whose body
// is the func's call alone, that nothing but the crops of the func's outputs depends on, over
// outputs in which no two coordinates share memory (as far as the builder knows).
std::size_t loops_run_as_one_call(const graph& g, const bounds_inference& bounds, const alias_plan& aliases, int fi);

// The checks of the pipeline's inputs and outputs: not null, rank, element size, the bounds
// every consumer reads, and the constraints the client declared on their dims.
// Inputs and outputs that other buffers are views of must be unfolded where the views use them.
// Conditions that nothing of a buffer is read are named by lets around the checks (symbols
// `<buffer>.unread`, made in ctx). The checks come simplified, but for the size checks (no fact
// proves them), which are written in the simplifier's form.
stmt emit_checks(const graph& g, const bounds_inference& bounds, const alias_plan& aliases, node_context& ctx);

}  // namespace slinky

#endif  // SLINKY_BUILDER_EMIT_H
