// The tracing pass (build_options::trace): brackets the program, each loop, each loop iteration
// and each call with trace_begin(name) / trace_end(token), so that eval_config's trace hooks
// (e.g. writing a chrome_trace) see "pipeline", "loop <var>", "loop <var> iteration" and the
// call's name. Without trace hooks the brackets cost two intrinsic calls each.
#ifndef SLINKY_BUILDER_TRACE_H
#define SLINKY_BUILDER_TRACE_H

#include <map>
#include <string>

#include "slinky/runtime/expr.h"
#include "slinky/runtime/stmt.h"

namespace slinky {

// loop_names gives the name to show for a loop's symbol (the client's variable, where the
// builder renamed it); other loops show their symbol's name in ctx. New symbols for the tokens
// come from ctx.
stmt add_tracing(const stmt& program, node_context& ctx, const std::map<var, std::string>& loop_names);

}  // namespace slinky

#endif  // SLINKY_BUILDER_TRACE_H
