/// \file
/// `symbol_map<T>` moved to slinky/runtime/expr.h (where the original slinky declares it); this
/// header remains for code that includes it from here.
#ifndef SLINKY_BUILDER_SYMBOL_MAP_H
#define SLINKY_BUILDER_SYMBOL_MAP_H

#include "slinky/runtime/expr.h"

#endif  // SLINKY_BUILDER_SYMBOL_MAP_H
