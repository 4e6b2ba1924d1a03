/// \file
/// `pipeline`: a built, runnable program. It binds the caller's buffers and scalars to the
/// program's symbols and runs it. It does not depend on the graph that described it.
#ifndef SLINKY_RUNTIME_PIPELINE_H
#define SLINKY_RUNTIME_PIPELINE_H

#include <iosfwd>
#include <memory>
#include <utility>
#include <vector>

#include "slinky/base/span.h"
#include "slinky/runtime/buffer.h"
#include "slinky/runtime/evaluate.h"
#include "slinky/runtime/expr.h"
#include "slinky/runtime/stmt.h"

namespace slinky {

namespace internal {

class executable;

// The executable form of a pipeline's program (executable.h), compiled on first use and shared
// by copies of the pipeline; recompiled if the program changes. Thread-safe.
class executable_cache {
public:
  executable_cache() = default;
  executable_cache(const executable_cache& other);
  executable_cache& operator=(const executable_cache& other);
  ~executable_cache();

  // The executable form of body.
  std::shared_ptr<const executable> get(const stmt& body) const;

private:
  mutable std::shared_ptr<const executable> cached_;
};

}  // namespace internal

/// A statement that remembers the names of its symbols, so `std::cout << p.body` prints them.
/// It is a stmt in every other respect.
class named_stmt : public stmt {
public:
  /// The names of the symbols (may be null: symbols print as _<id>).
  std::shared_ptr<const node_context> symbols;

  /// An undefined statement without names.
  named_stmt() = default;
  /// s, with the names in symbols.
  named_stmt(stmt s, std::shared_ptr<const node_context> symbols = nullptr)
      : stmt(std::move(s)), symbols(std::move(symbols)) {}
  /// Replaces the statement, keeping the names.
  named_stmt& operator=(stmt s) {
    stmt::operator=(std::move(s));
    return *this;
  }
};
/// Prints s readably, with its symbols' names.
std::ostream& operator<<(std::ostream& os, const named_stmt& s);

/// A built, runnable program: the symbols its arguments bind, and the body that runs.
/// build_pipeline (slinky/builder/pipeline.h) makes one; it does not depend on the graph that
/// described it.
class pipeline {
public:
  /// The scalar arguments of evaluate (a C array, a std::vector or a braced list).
  using scalars = span<const index_t>;
  /// The buffer arguments of evaluate (a C array, a std::vector or a braced list).
  using buffers = span<const raw_buffer* const>;

  /// The symbols of the scalar arguments, in the order evaluate takes them.
  std::vector<var> args;
  /// The symbols of the input buffers, in the order evaluate takes them.
  std::vector<var> inputs;
  /// The symbols of the output buffers, in the order evaluate takes them.
  std::vector<var> outputs;
  /// Buffers with known contents, bound before the program runs.
  std::vector<std::pair<var, const_raw_buffer_ptr>> constants;
  /// The program.
  named_stmt body;

  /// Binds the arguments in ctx (scalars by value, buffers by address, and the constants) without
  /// running anything, so that evaluate(ctx) can run the program, again and again: the client may
  /// change the base and dims of the same raw_buffer objects between runs. The counts must match
  /// the pipeline's (otherwise nothing is bound, check_failed is told, and the program's checks
  /// then fail on the unbound buffers).
  ///@{
  void setup(scalars args, buffers inputs, buffers outputs, eval_context& ctx) const;
  void setup(buffers inputs, buffers outputs, eval_context& ctx) const;
  ///@}
  /// Runs the program on a context set up by setup (or otherwise holding the values of the
  /// pipeline's symbols).
  index_t evaluate(eval_context& ctx) const;

  /// Runs the program. Returns 0 on success; non-zero if the numbers of arguments do not match,
  /// a check failed (e.g. a buffer does not satisfy the pipeline's requirements) or a callback
  /// failed. ctx may carry an eval_config and values of other symbols; the pipeline's symbols are
  /// restored to their previous values afterwards.
  ///@{
  index_t evaluate(scalars args, buffers inputs, buffers outputs, eval_context& ctx) const;
  index_t evaluate(scalars args, buffers inputs, buffers outputs) const;
  index_t evaluate(buffers inputs, buffers outputs, eval_context& ctx) const;
  index_t evaluate(buffers inputs, buffers outputs) const;
  ///@}

  /// The program's executable form, compiled on the first evaluation. Not part of the API: it
  /// is a public member (the last one) only so that pipeline stays an aggregate, which clients
  /// may initialize with designated initializers.
  internal::executable_cache executable_ = {};

private:
  bool bind(scalars args, buffers inputs, buffers outputs, eval_context& ctx,
            std::vector<std::pair<var, index_t>>* saved) const;
};

/// Prints the pipeline's body (as operator<< of named_stmt).
std::ostream& operator<<(std::ostream& os, const pipeline& p);

}  // namespace slinky

#endif  // SLINKY_RUNTIME_PIPELINE_H
