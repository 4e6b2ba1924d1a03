// The executable form of a program: the statement tree compiled once into nodes with their
// symbols, constants and expression shapes resolved, so that running it does not walk the tree
// generically. pipeline::evaluate runs its program this way; the tree interpreter (evaluate.cc)
// stays the reference semantics, and SLINKY_EVALUATOR=interpret in the environment makes
// pipelines use it instead (the test suite runs both ways). docs/runtime.md, "The executable
// form". Not part of the public API.
#ifndef SLINKY_RUNTIME_EXECUTABLE_H
#define SLINKY_RUNTIME_EXECUTABLE_H

#include <memory>
#include <vector>

#include "slinky/runtime/evaluate.h"
#include "slinky/runtime/stmt.h"

namespace slinky {
namespace internal {

class exec_node;

class executable {
public:
  // Compiles s. The executable keeps a reference to s (its nodes point into it).
  explicit executable(stmt s);
  ~executable();
  executable(const executable&) = delete;
  executable& operator=(const executable&) = delete;

  // The statement this was compiled from.
  const stmt& source() const { return source_; }

  // symbol_count(source()), counted once.
  std::size_t symbol_count() const { return symbol_count_; }

  // Runs the program with the values in ctx, which must have room for symbol_count() symbols
  // (eval_context::reserve). Returns 0 on success, like evaluate.
  index_t run(eval_context& ctx) const;

  // Whether pipelines run the executable form (true unless the environment sets
  // SLINKY_EVALUATOR=interpret; read once per process).
  static bool enabled();

private:
  stmt source_;
  std::size_t symbol_count_;
  std::vector<std::unique_ptr<exec_node>> nodes_;
  const exec_node* root_ = nullptr;

  friend class compiler;
};

}  // namespace internal
}  // namespace slinky

#endif  // SLINKY_RUNTIME_EXECUTABLE_H
