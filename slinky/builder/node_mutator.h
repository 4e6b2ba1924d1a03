/// \file
/// The original slinky declares node_mutator (and stmt_mutator, clone_with) here; ours live in
/// runtime/node_mutator.h, since the runtime's substitute is built on them. This header forwards.
#ifndef SLINKY_BUILDER_NODE_MUTATOR_H
#define SLINKY_BUILDER_NODE_MUTATOR_H

#include "slinky/runtime/node_mutator.h"

#endif  // SLINKY_BUILDER_NODE_MUTATOR_H
