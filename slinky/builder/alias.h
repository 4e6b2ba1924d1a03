// Aliasing: removing copies by letting one side of a copy be a view of the other's memory
// (docs/copies.md, "Aliasing"), and running calls in place.
//
// - Into the consumer: the source of a copy, an intermediate read by nothing else, becomes a view
//   of the copy's destination, so its producer writes straight into it (a stencil into a
//   translated or transposed region of the output; several producers into their slots of a
//   concatenation or stack). The copy's call is removed; a padded copy keeps only its padding.
// - From the producer: the destination of a copy, an intermediate, becomes a view of the copy's
//   source, so its consumers read the source directly (an input copied into a stencil's input).
//   A padded copy's destination may be a view of an intermediate source allocated at the padded
//   size: the copy then writes only the padding, into the source's memory around its values.
// - In place: a func allowed to write output o over input i (call_attributes::allow_in_place),
//   reading i pointwise, where i is an intermediate read by nothing else, writes o into i's
//   memory; a chain of such funcs is one memory, and a chain ending in a pipeline output is
//   computed in the output's memory.
//
// Every decision is made on the graph after bounds inference; the emitter then makes views
// (make_buffer) instead of allocations and leaves out the removed copies.
#ifndef SLINKY_BUILDER_ALIAS_H
#define SLINKY_BUILDER_ALIAS_H

#include <vector>

#include "slinky/builder/bounds.h"
#include "slinky/builder/graph.h"

namespace slinky {

struct buffer_alias {
  // The buffer (index into graph::buffers) whose memory this one uses, or -1.
  int target = -1;
  // In place: this buffer is the target itself (same coordinates), not a make_buffer view.
  bool same = false;
  // The view: make_buffer(sym, base, elem_size, dims), expressions of the target's metadata.
  expr base;
  std::vector<dim_expr> dims;
  // For each of dims (when set): its fold factor is a pipeline output's own, which holds the
  // output's whole range (see fold_target_dims), so it is not a ring buffer whose live rows a
  // view could overwrite: only the addressing follows it.
  std::vector<bool> output_folds;
  // Dimensions of the target the view addresses linearly: the target's range must lie within one
  // turn of its fold, if it has one (checked at run time when the target is a pipeline input or
  // output).
  std::vector<int> unfolded_target_dims;
  // Dimensions of a pipeline output the view addresses through the output's own fold factor (it
  // is untranslated there): the output must hold its whole range, its fold factor (if it has one)
  // at least its extent (checked at run time).
  std::vector<int> fold_target_dims;
  // The view is correct only where alias_plan::view_condition holds at run time (a reshape with
  // radices known only then): elsewhere this buffer has its own memory and the copy into it runs.
  bool conditional = false;
};

struct alias_plan {
  std::vector<buffer_alias> buffers;  // One per graph buffer.
  // For each func and input: the copy of that input is removed (its source is a view of the
  // destination, already written by the source's producer).
  std::vector<std::vector<bool>> removed;
  // For each padded copy whose source is a view of its destination: the part of the
  // destination the source covers (input_crop in destination coordinates), outside which the
  // copy still writes the padding.
  std::vector<box_expr> padding_inside;
  // For each buffer: a region (in its own coordinates, valid where it is allocated) its
  // allocation must also hold, beyond what its consumers need: the padding a padded copy writes
  // into it through a view of it (empty: nothing beyond).
  std::vector<box_expr> also_holds;
  // For each buffer: the strides its allocation must have (empty: the allocation's own, dense
  // with dim 0 innermost, each rounded up to the evaluator's stride_alignment). A source viewed
  // through a reshape (its destination a view addressing it by the flat index) is allocated
  // exactly dense in the reshape's radices, so that its elements lie in flat order whatever the
  // alignment.
  std::vector<std::vector<expr>> strides;
  // The condition the conditional views need (the conjunction of each one's), an expression
  // valid at the root of the program (undefined: no conditional view). One condition for all, so
  // that the program has two variants of their scope, not one per combination.
  expr view_condition;

  bool is_alias(int buffer) const { return buffers[buffer].target >= 0; }
  // The number of alias steps from buffer to memory of its own (0 if it has its own).
  int depth(int buffer) const;
};

alias_plan plan_aliases(const graph& g, const bounds_inference& bounds, bool enabled);

}  // namespace slinky

#endif  // SLINKY_BUILDER_ALIAS_H
