/// \file
/// `symbol_map<T>` is declared in slinky/runtime/expr.h, as in the original slinky. This header
/// includes it, for code that includes slinky/builder/symbol_map.h (the contract keeps the path:
/// shared API_COMPAT.md, "symbol_map<T> lives in runtime/expr.h").
#ifndef SLINKY_BUILDER_SYMBOL_MAP_H
#define SLINKY_BUILDER_SYMBOL_MAP_H

#include "slinky/runtime/expr.h"

#endif  // SLINKY_BUILDER_SYMBOL_MAP_H
