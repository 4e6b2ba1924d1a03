// Binding arguments to a program and running it.
#include "slinky/runtime/pipeline.h"

#include <iostream>

#include "slinky/runtime/print.h"

namespace slinky {

std::ostream& operator<<(std::ostream& os, const named_stmt& s) {
  print(os, s, s.symbols.get());
  return os;
}

std::ostream& operator<<(std::ostream& os, const pipeline& p) { return os << p.body; }

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

index_t pipeline::evaluate(scalars args, buffers inputs, buffers outputs, eval_context& ctx) const {
  if (report_count_mismatch(ctx, "scalar arguments", this->args.size(), args.size())) return 1;
  if (report_count_mismatch(ctx, "input buffers", this->inputs.size(), inputs.size())) return 1;
  if (report_count_mismatch(ctx, "output buffers", this->outputs.size(), outputs.size())) return 1;

  // Give the default failure messages the names of the symbols.
  eval_config named_config;
  const eval_config* old_config = ctx.config;
  if (body.symbols && (!ctx.config || !ctx.config->symbols)) {
    if (ctx.config) named_config = *ctx.config;
    named_config.symbols = body.symbols.get();
    ctx.config = &named_config;
  }
  std::vector<std::pair<var, index_t>> saved;
  saved.reserve(args.size() + inputs.size() + outputs.size() + constants.size());
  auto bind = [&](var v, index_t value) {
    saved.emplace_back(v, ctx.lookup(v));
    ctx[v] = value;
  };
  for (std::size_t i = 0; i < args.size(); ++i) bind(this->args[i], args[i]);
  for (std::size_t i = 0; i < inputs.size(); ++i) bind(this->inputs[i], reinterpret_cast<index_t>(inputs[i]));
  for (std::size_t i = 0; i < outputs.size(); ++i) bind(this->outputs[i], reinterpret_cast<index_t>(outputs[i]));
  for (const auto& c : constants) bind(c.first, reinterpret_cast<index_t>(c.second.get()));

  // Every symbol of a built program comes from its node_context; hand-made programs are counted.
  ctx.reserve(body.symbols ? body.symbols->size() : symbol_count(body));
  index_t result = evaluate_reserved(body, ctx);

  for (auto i = saved.rbegin(); i != saved.rend(); ++i) ctx.set(i->first, i->second);
  ctx.config = old_config;
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
