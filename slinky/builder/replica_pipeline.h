/// \file
/// `define_replica_pipeline`: C++ source that rebuilds a pipeline's graph and schedule, for bug
/// reports (a pipeline can be reproduced without the code or the data of the application).
#ifndef SLINKY_BUILDER_REPLICA_PIPELINE_H
#define SLINKY_BUILDER_REPLICA_PIPELINE_H

// The generated source uses these too.
#include <cstring>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "slinky/base/span.h"
#include "slinky/builder/pipeline.h"

namespace slinky {

/// Takes the arguments of build_pipeline and returns the source of a C++ lambda `fname` (a
/// statement `auto fname = []() -> slinky::pipeline { ... };`) that rebuilds an equivalent graph
/// (the buffers with their dims, element sizes and constants; the funcs with their input bounds and
/// crops, outputs, scalars and attributes; copies, padded copies, concatenations and stacks; the
/// loops, compute_at, store_at and storage) and calls build_pipeline with the same options. Calls
/// become stand-ins that call internal::replica_pipeline_handler, so the replica runs, and its
/// outputs depend on exactly the regions each func declares it reads. The source needs
/// "slinky/builder/replica_pipeline.h" and nothing else. docs/tools.md.
///@{
std::string define_replica_pipeline(node_context& ctx, const std::vector<var>& args,
                                    const std::vector<buffer_expr_ptr>& inputs,
                                    const std::vector<buffer_expr_ptr>& outputs, std::vector<std::pair<var, expr>> lets,
                                    const build_options& options = {}, const std::string& fname = "p");
std::string define_replica_pipeline(node_context& ctx, const std::vector<buffer_expr_ptr>& inputs,
                                    const std::vector<buffer_expr_ptr>& outputs, const build_options& options = {},
                                    const std::string& fname = "p");
///@}

namespace internal {

// The stand-in callback of a replica: sets every element of each output to the XOR of the
// elements of every input in the region the func declares for that output element (its input
// bounds evaluated with the output dims fout_dims[o] bound to the element's coordinates), within
// the input buffer; element sizes of 1, 2, 4 and 8 bytes (others use their first 8 bytes).
// Symbols other than the output dims are read from ctx (none if null).
index_t replica_pipeline_handler(span<const buffer<const void>*> inputs, span<const buffer<void>*> outputs,
                                 span<func::input> fins, span<std::vector<var>> fout_dims,
                                 const eval_context* ctx = nullptr);

}  // namespace internal

}  // namespace slinky

#endif  // SLINKY_BUILDER_REPLICA_PIPELINE_H
