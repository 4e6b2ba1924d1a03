// The out-of-line parts of util.h: where `unreachable` writes, and how it stops.
#include "slinky/base/util.h"

#include <cstdlib>
#include <iostream>

namespace slinky {

std::ostream& internal::unreachable_stream() { return std::cerr; }

void unreachable::abort_now() { std::abort(); }

}  // namespace slinky
