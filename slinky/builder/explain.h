/// \file
/// `explain_pipeline`: a readable account of what build_pipeline decides for a graph and why.
#ifndef SLINKY_BUILDER_EXPLAIN_H
#define SLINKY_BUILDER_EXPLAIN_H

#include <string>
#include <vector>

#include "slinky/builder/pipeline.h"

namespace slinky {

/// Takes the arguments of build_pipeline and returns, in plain text, the decisions the builder
/// makes (it runs the same passes, up to the program): for each func, where it is computed (and
/// why, where the builder moved it), its loops (steps, parallel or serial, pipelined), and along
/// which loop it slides (each iteration computing only what the previous one did not); for each
/// buffer, what it is (input, output, constant, intermediate), where it is stored and in which
/// memory, which dims fold into a ring buffer of how many elements along which loop, and whether
/// it has memory of its own or is a view of another (a copy removed); which copies are removed
/// and which are kept. docs/tools.md.
///@{
std::string explain_pipeline(node_context& ctx, const std::vector<var>& args,
                             const std::vector<buffer_expr_ptr>& inputs, const std::vector<buffer_expr_ptr>& outputs,
                             const build_options& options = {});
std::string explain_pipeline(node_context& ctx, const std::vector<buffer_expr_ptr>& inputs,
                             const std::vector<buffer_expr_ptr>& outputs, const build_options& options = {});
///@}

}  // namespace slinky

#endif  // SLINKY_BUILDER_EXPLAIN_H
