// A minimal client of an installed slinky: runs a hand-built program that copies a buffer.
#include <cstdio>

#include "slinky/runtime/buffer.h"
#include "slinky/runtime/evaluate.h"
#include "slinky/runtime/expr.h"
#include "slinky/runtime/stmt.h"
#include "slinky/version.h"

static_assert(SLINKY_VERSION_MAJOR >= 0 && SLINKY_VERSION_MINOR >= 0 && SLINKY_VERSION_PATCH >= 0,
              "slinky/version.h gives the version");

int main() {
  using namespace slinky;
  node_context ctx;
  var in(ctx, "in"), out(ctx, "out");
  buffer<int, 1> a({10}), b({10});
  a.allocate();
  b.allocate();
  for (int i = 0; i < 10; ++i) a(i) = i * 3;
  stmt program = call_stmt::make(
      [](const call_stmt* op, eval_context& ctx) -> index_t {
        copy(*ctx.lookup_buffer(op->inputs[0]), *ctx.lookup_buffer(op->outputs[0]));
        return 0;
      },
      {in}, {out}, {}, {});
  eval_context values;
  values[in] = reinterpret_cast<index_t>(static_cast<const raw_buffer*>(&a));
  values[out] = reinterpret_cast<index_t>(static_cast<const raw_buffer*>(&b));
  if (evaluate(program, values) != 0) return 1;
  for (int i = 0; i < 10; ++i) {
    if (b(i) != i * 3) {
      std::printf("client: wrong result at %d\n", i);
      return 1;
    }
  }
  std::printf("client: slinky %s\n", SLINKY_VERSION_STRING);
  return 0;
}
