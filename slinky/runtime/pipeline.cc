// Binding arguments to a program and running it.
#include "slinky/runtime/pipeline.h"

#include <atomic>
#include <iostream>

#include "slinky/runtime/executable.h"
#include "slinky/runtime/print.h"

namespace slinky {

std::ostream& operator<<(std::ostream& os, const named_stmt& s) {
  print(os, s, s.symbols.get());
  return os;
}

std::ostream& operator<<(std::ostream& os, const pipeline& p) { return os << p.body; }

namespace internal {

executable_cache::executable_cache(const executable_cache& other) : cached_(std::atomic_load(&other.cached_)) {}
executable_cache& executable_cache::operator=(const executable_cache& other) {
  if (this != &other) std::atomic_store(&cached_, std::atomic_load(&other.cached_));
  return *this;
}
executable_cache::~executable_cache() = default;

std::shared_ptr<const executable> executable_cache::get(const stmt& body) const {
  std::shared_ptr<const executable> result = std::atomic_load(&cached_);
  // The executable holds its source, so a program at the same address is the same program.
  if (result && result->source().same_as(body)) return result;
  result = std::make_shared<const executable>(body);
  std::atomic_store(&cached_, result);
  return result;
}

}  // namespace internal

namespace {

bool report_count_mismatch(const eval_context& ctx, const char* what, std::size_t expected, std::size_t actual) {
  if (expected == actual) return false;
  // A wrong number of arguments is a failed check of the call itself.
  expr condition = expr(static_cast<index_t>(actual)) == expr(static_cast<index_t>(expected));
  const eval_config* config = ctx.config;
  if (config && config->check_failed) {
    config->check_failed(condition);
  } else {
    std::cerr << "slinky: pipeline::evaluate: expected " << expected << " " << what << ", got " << actual << std::endl;
  }
  return true;
}

}  // namespace

namespace {

// Binds the pipeline's symbols to values, keeping what they were bound to before if `saved` is
// given.
class binder {
  eval_context& ctx_;
  std::vector<std::pair<var, index_t>>* saved_;

public:
  binder(eval_context& ctx, std::vector<std::pair<var, index_t>>* saved) : ctx_(ctx), saved_(saved) {}
  void operator()(var v, index_t value) {
    if (saved_) saved_->emplace_back(v, ctx_.lookup(v));
    ctx_[v] = value;
  }
};

}  // namespace

bool pipeline::bind(scalars args, buffers inputs, buffers outputs, eval_context& ctx,
                    std::vector<std::pair<var, index_t>>* saved) const {
  if (report_count_mismatch(ctx, "scalar arguments", this->args.size(), args.size())) return false;
  if (report_count_mismatch(ctx, "input buffers", this->inputs.size(), inputs.size())) return false;
  if (report_count_mismatch(ctx, "output buffers", this->outputs.size(), outputs.size())) return false;
  binder bind(ctx, saved);
  for (std::size_t i = 0; i < args.size(); ++i) bind(this->args[i], args[i]);
  for (std::size_t i = 0; i < inputs.size(); ++i) bind(this->inputs[i], reinterpret_cast<index_t>(inputs[i]));
  for (std::size_t i = 0; i < outputs.size(); ++i) bind(this->outputs[i], reinterpret_cast<index_t>(outputs[i]));
  for (const auto& c : constants) bind(c.first, reinterpret_cast<index_t>(c.second.get()));
  return true;
}

void pipeline::setup(scalars args, buffers inputs, buffers outputs, eval_context& ctx) const {
  bind(args, inputs, outputs, ctx, nullptr);
}
void pipeline::setup(buffers inputs, buffers outputs, eval_context& ctx) const {
  setup(scalars(), inputs, outputs, ctx);
}

index_t pipeline::evaluate(eval_context& ctx) const {
  // Give the default failure messages the names of the symbols.
  const node_context* old_symbols = ctx.symbols;
  if (body.symbols && !ctx.symbols) ctx.symbols = body.symbols.get();
  // Every symbol of a built program comes from its node_context; hand-made programs are counted
  // (once, when compiled).
  index_t result;
  if (internal::executable::enabled()) {
    const std::shared_ptr<const internal::executable> exe = executable_.get(body);
    ctx.reserve(body.symbols ? body.symbols->size() : exe->symbol_count());
    result = exe->run(ctx);
  } else {
    ctx.reserve(body.symbols ? body.symbols->size() : symbol_count(body));
    result = evaluate_reserved(body, ctx);
  }
  ctx.symbols = old_symbols;
  return result;
}

index_t pipeline::evaluate(scalars args, buffers inputs, buffers outputs, eval_context& ctx) const {
  std::vector<std::pair<var, index_t>> saved;
  saved.reserve(args.size() + inputs.size() + outputs.size() + constants.size());
  if (!bind(args, inputs, outputs, ctx, &saved)) return 1;
  const index_t result = evaluate(ctx);
  for (auto i = saved.rbegin(); i != saved.rend(); ++i) ctx.set(i->first, i->second);
  return result;
}

index_t pipeline::evaluate(scalars args, buffers inputs, buffers outputs) const {
  eval_context ctx;
  return evaluate(args, inputs, outputs, ctx);
}

index_t pipeline::evaluate(buffers inputs, buffers outputs, eval_context& ctx) const {
  return evaluate(scalars(), inputs, outputs, ctx);
}

index_t pipeline::evaluate(buffers inputs, buffers outputs) const {
  eval_context ctx;
  return evaluate(scalars(), inputs, outputs, ctx);
}

}  // namespace slinky
