// The failure path of SLINKY_CHECK and SLINKY_ASSERT.
#include "slinky/base/assert.h"

#include <cstdio>
#include <cstdlib>

namespace slinky {

void assert_failed(const char* file, int line, const char* condition, const char* message) {
  std::fprintf(stderr, "%s:%d: assertion failed: %s: %s\n", file, line, condition, message);
  std::fflush(stderr);
  std::abort();
}

}  // namespace slinky
