// The scheduler's view of a pipeline graph (internal): the funcs reachable from the outputs,
// consumers before producers, each func's consumers, which output each func feeds, the concrete
// regions of every func for given output shapes, and what each func does computed whole at the
// root, as counts (root_counts; the cost model prices them).
#ifndef SLINKY_SCHEDULER_SCHED_GRAPH_H
#define SLINKY_SCHEDULER_SCHED_GRAPH_H

#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "slinky/builder/pipeline.h"
#include "slinky/scheduler/cost_model.h"
#include "slinky/scheduler/regions.h"
#include "slinky/scheduler/schedule.h"

namespace slinky {
namespace scheduler_internal {

struct sched_node {
  // The func; the scheduler sets its schedule (the client owns it, non-const).
  func* f = nullptr;
  // Funcs reading an output of this one (indices into sched_graph::nodes), without duplicates.
  std::vector<int> consumers;
  // Produces a pipeline output.
  bool head = false;
  // The head whose funcs this one belongs to (every path from it leads to that output's func), or
  // -1 if it feeds several outputs.
  int group = -1;
  // The client's schedule: loops or compute_at set; compute_at at the root; compute_at a loop.
  bool user_scheduled = false;
  bool pinned_root = false;
  bool pinned_loop = false;
  // The client gave it loops, or stored one of its outputs at a loop (not the root): funcs around
  // it must stay where the builder would put them, or the client's loops may no longer contain
  // what they store.
  bool client_loops = false;
  // Its variables are the first output's dims: slots [slot, slot + rank) of a region array.
  std::size_t slot = 0;
  std::size_t rank = 0;
  // For each output, the slot of each of its dims (relative to slot), or -1 if the output indexes
  // a variable the first output does not have (the scheduler then cannot say what it covers).
  std::vector<std::vector<int>> out_slots;
  std::vector<index_t> out_elem_size;
  // Filled by full_regions: the bytes of its whole region (all outputs), whether it is known, its
  // points, and the bytes of one point's footprint: every element of each input it reads for one
  // point (9 for a 3x3 stencil, a row and a column for a matrix product) and the elements it
  // writes (the measure of the callback's own work, cost_model::work_ns).
  double full_bytes = 0;
  bool full_known = false;
  double full_elements = 0;
  double footprint_bytes = 0;
  // What it does computed whole at the root: the above, and its reads from outside its group.
  root_counts at_root;
  // Per input (in the func's order): where the callback reads it row by row (a row: a run along
  // its first output's dim 0), the share of its window for the whole region that one row reads;
  // 0 where it does not. Read row by row: the rows that differ along some other variable read the
  // same window, and no row's window overlaps a neighbouring row's in part. A product c = a x b
  // reads all of b's window for each row of c (1); a product whose reduction is split in 8 blocks,
  // one block per row of its partial sums, reads an eighth of b for each (1/8); a stencil's rows
  // read windows overlapping their neighbours' (0). Such an input is read again row by row
  // (loop_counts::rereads).
  std::vector<double> row_window_share;
  // Its one output, an intermediate whose layout the client left to the builder, is read only by
  // a copy that reads it point for point (each dim at the copy's variable of the same dim: a pad or
  // a crop, not translated) and neither crops nor slices its output: the builder removes such a
  // copy by making this func write straight into the copy's destination (docs/copies.md, "Into
  // the destination"). Where both are in a loop, the model gives this func no storage and the copy
  // no work (loop_analysis.cc, account_copies_removed).
  bool writes_into_copy = false;
  // A copy with one input, neither padded nor cropped, into an intermediate whose layout the
  // client left to the builder, reading its source at coordinates linear in its own with constant
  // coefficients (a transpose, a broadcast, a stencil view, a stride), its source not removed into
  // it (above): where it is at the root (its source then at the root or an input), the builder
  // makes its destination a view of the source (docs/copies.md, "From the source") and nothing is
  // copied. The model then gives it no writes, work, call or allocation, and its consumers read
  // the source's memory (root_counts::view_level). In a loop it is priced as a copy: where its
  // source slides along the loop, a ring buffer, which a view cannot address, it is one.
  bool view_of_source = false;
  // A copy the runtime runs element by element (cost_model::strided_copy_element_ns): it reads
  // its one source at coordinates linear in its own with constant coefficients, and along its
  // destination's dim 0 either the source does not advance by one element of its dim 0 (a
  // transpose, a stride, a downsampling, a broadcast), or the runs are shorter than
  // cost_model::contiguous_run_bytes (the pooling's 3x3 windows: the runtime then copies along a
  // longer dim, strided). Set by full_regions, which knows the runs' extent. A copy that is not
  // linear so (a padded select, a concatenation) is priced by its footprint, as other funcs.
  bool strided_copy = false;
  // An output's func whose first output was given an empty shape.
  bool empty_output = false;
  // A head whose first output was given a shape of another rank than the buffer's.
  bool shape_rank_mismatch = false;
};

struct sched_graph {
  std::vector<sched_node> nodes;
  // Consumers first: every func comes before the funcs producing its inputs.
  std::vector<int> order;
  // The buffers produced in the graph: producer node and output index.
  std::unordered_map<const buffer_expr*, std::pair<int, int>> produced;
  std::unordered_set<const buffer_expr*> outputs;
  std::size_t num_slots = 0;
  // Known shapes (inputs and outputs), by buffer symbol, and scalar values.
  std::unordered_map<symbol_id, std::vector<index_range>> shape_store;
  std::unordered_map<symbol_id, const std::vector<index_range>*> shapes;
  std::unordered_map<const buffer_expr*, index_t> shape_elem_size;
  std::unordered_map<symbol_id, index_t> scalars;

  // The element size of a buffer: its constant element size, else the shape's, else 4.
  index_t elem_size(const buffer_expr* b) const;
  // The producer node of b, or -1 if it is not produced in the graph (an input or constant).
  int producer_of(const buffer_expr* b) const;
  // The environment of node n's variables ranging over `regions`.
  region_env env(const sched_node& n, const index_range* regions) const;
  // The bytes of node n's outputs over the region regions[n.slot...] (0 for an empty region).
  double region_bytes(const sched_node& n, const index_range* regions) const;
};

// A func's hints (func::cost_hints) as the cost model uses them: the cost per point, negative if
// none (or not finite); the cost per call, 0 if none; the multiple of elements of output dim `dim`
// per call, 1 if none.
double hinted_point_ns(const func& f);
double hinted_call_ns(const func& f);
index_t hinted_multiple(const func& f, int dim);

// Collects and orders the graph reachable from `outputs` (stopping at `inputs` and at buffers
// nothing produces), finds each func's consumers and group, and records the known shapes.
void build_sched_graph(const std::vector<buffer_expr_ptr>& inputs, const std::vector<buffer_expr_ptr>& outputs,
                       const schedule_shapes& shapes, sched_graph& g);

// The bytes of a box of elements of `elem_size` bytes.
double box_bytes(const std::vector<index_range>& box, index_t elem_size);

// The region of input `in` of node c that c reads over the region regions[c.slot...], restricted
// by the input's output_crop (all ranges empty if the crop leaves none of the region); false if it
// cannot be evaluated.
bool consumer_reads(const sched_graph& g, const sched_node& c, const index_range* regions, const func::input& in,
                    std::vector<index_range>& result);

// Hulls the box `needed` of output k of node p into p's slots of `regions`.
void add_to_region(const sched_node& p, int k, const std::vector<index_range>& needed, index_range* regions);

// The whole region of every func (one iteration, no loops) into `regions` (g.num_slots entries),
// and each node's full_bytes, full_known, full_elements, footprint_bytes and at_root (the levels
// as `model` sees them).
void full_regions(sched_graph& g, const cost_model& model, std::vector<index_range>& regions);

}  // namespace scheduler_internal
}  // namespace slinky

#endif  // SLINKY_SCHEDULER_SCHED_GRAPH_H
