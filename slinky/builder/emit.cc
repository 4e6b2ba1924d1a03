// Emitting the program: loops, crops, calls, copies, allocations and checks.
#include "slinky/builder/emit.h"

#include <algorithm>
#include <limits>
#include <optional>

#include "slinky/base/assert.h"
#include "slinky/builder/stage_semaphores.h"
#include "slinky/builder/storage_plan.h"
#include "slinky/builder/substitute.h"
#include "slinky/runtime/node_finder.h"
#include "slinky/runtime/node_mutator.h"

namespace slinky {

namespace {

std::optional<std::size_t> index_of(const std::vector<var>& vars, var v) {
  for (std::size_t i = 0; i < vars.size(); ++i) {
    if (vars[i] == v) return i;
  }
  return std::nullopt;
}

// Whether loop k of func fi (loops innermost first; loops 0 to k - 1 run as one call) runs as
// one call over its whole range (docs/builder.md, "Loops that need not exist"): a serial loop
// whose body would be the func's call alone (no other func computed in it, no buffer stored in
// it, no warm-up), that nothing but the crops of the outputs depends on (no scalar reads its
// variable, no input_crop), and whose crops partition outputs in which no two coordinates share
// memory as far as the builder knows (no fold along it, no declared strides or folds but
// dim::unfolded, not a view of another buffer). The union of the crops is then the region the
// loop's owner computes, and one call over it writes the same values as the calls of the
// iterations.
bool loop_runs_as_one_call(const graph& g, const bounds_inference& bounds, const alias_plan& aliases, int fi,
                           std::size_t k) {
  const func_node& fn = g.funcs[fi];
  const func& f = *fn.f;
  const func::loop_info& l = f.loops()[k];
  if (f.is_copy() || l.is_parallel()) return false;
  const loop_level level{fi, static_cast<int>(k)};
  for (const func_node& other : g.funcs) {
    if (other.compute == level) return false;
  }
  for (const buffer_node& b : g.buffers) {
    if (b.store == level) return false;
  }
  const std::optional<std::size_t> v = index_of(bounds.funcs[fi].vars, l.var);
  if (!v || !match(bounds.loop_start(level), bounds.funcs[fi].produce[*v].min)) return false;
  for (const expr& s : f.scalars()) {
    if (depends_on(s, l.var).any() || depends_on(s, fn.loop_syms[k]).any()) return false;
  }
  for (const func::input& i : f.inputs()) {
    if (!i.input_crop.empty()) return false;
  }
  for (const func::output& o : f.outputs()) {
    const std::optional<std::size_t> d = index_of(o.dims, l.var);
    if (!d) return false;
    const int bi = g.buffer_index(o.buffer.get());
    if (aliases.buffers[bi].target >= 0) return false;
    if (*d < bounds.folds[bi].size() && bounds.folds[bi][*d].defined()) return false;
    const buffer_expr& b = *o.buffer;
    for (std::size_t dd = 0; dd < b.rank(); ++dd) {
      const int i = static_cast<int>(dd);
      if (!is_default(b.dim(dd).stride, buffer_stride(b.sym(), i))) return false;
      const expr& fold = b.dim(dd).fold_factor;
      if (!is_default(fold, buffer_fold_factor(b.sym(), i)) && !is_constant(fold, dim::unfolded)) return false;
    }
  }
  return true;
}

// The statements of items[begin...], each followed by its frees.
std::vector<stmt> flatten(const std::vector<level_item>& items, std::size_t begin) {
  std::vector<stmt> result;
  for (std::size_t k = begin; k < items.size(); ++k) {
    result.push_back(items[k].body);
    result.insert(result.end(), items[k].frees.begin(), items[k].frees.end());
  }
  return result;
}

class emitter {
  const graph& g_;
  const bounds_inference& bounds_;
  const alias_plan& aliases_;
  node_context& ctx_;
  // Whether serial loops around a single call may run as one call (loops_run_as_one_call).
  const bool merge_loops_;
  // Where the intermediates live and which share memory (storage_plan.h).
  const storage_planner storage_;
  // Bound at the root to alias_plan::view_condition, if there is one: the conditional views are
  // made where it holds, their buffers allocated and their copies run where it does not.
  var view_ok_;

  var fresh(const std::string& name) { return var(ctx_.insert_unique(name)); }

  stmt make_call(int fi, const std::vector<var>& outputs) {
    const func& f = *g_.funcs[fi].f;
    if (f.is_copy()) return make_copy(fi, outputs[0]);
    symbol_list inputs;
    // Inputs with an input_crop are cropped to it (within the region the call needs), possibly
    // to nothing: the callback is called with the empty buffer.
    std::vector<std::pair<var, const buffer_expr*>> cropped_inputs;
    for (const func::input& i : f.inputs()) {
      if (i.input_crop.empty()) {
        inputs.push_back(i.buffer->sym());
        continue;
      }
      const var cropped = fresh(ctx_.name(i.buffer->sym()) + ".crop");
      cropped_inputs.emplace_back(cropped, i.buffer.get());
      inputs.push_back(cropped);
    }
    call_stmt::attributes attrs = f.attrs();
    if (attrs.name.empty()) attrs.name = f.name(&ctx_);
    // The scalars may read this func's loop variables, which the emitted loops may bind under
    // other symbols.
    std::vector<expr> scalars = f.scalars();
    const func_node& fn = g_.funcs[fi];
    for (std::size_t k = 0; k < fn.loop_syms.size(); ++k) {
      const var user = f.loops()[k].var;
      if (fn.loop_syms[k] == user) continue;
      for (expr& s : scalars) s = substitute(s, user, fn.loop_syms[k]);
    }
    stmt call = call_stmt::make(f.impl(), std::move(inputs), outputs, std::move(scalars), std::move(attrs),
                                internal::entry_of(f));
    for (const auto& c : cropped_inputs) {
      const box_expr need = bounds_.need_at_call(fi, g_.buffer_index(c.second), bounds_inference::view::actual);
      call = crop_buffer::make(c.first, c.second->sym(), need, call);
    }
    return call;
  }

  // Writes the padding of padded copy fi whose source is a view of dst: dst outside the part
  // the source covers (worked out by the alias plan).
  stmt make_padding(int fi, var dst) {
    const func& f = *g_.funcs[fi].f;
    var inner = fresh(ctx_.name(dst.sym()) + ".inside");
    auto pad_outside = [](const call_stmt* op, eval_context& ctx) -> index_t {
      const raw_buffer* inside = ctx.lookup_buffer(op->inputs[0]);
      const raw_buffer* value = ctx.lookup_buffer(op->inputs[1]);
      const raw_buffer* dst = ctx.lookup_buffer(op->outputs[0]);
      if (!inside || !value || !dst) return 1;
      pad(inside->dims, *dst, *value);
      return 0;
    };
    call_stmt::attributes attrs;
    attrs.name = "pad";
    // Only the part of dst the copy writes (its output_crop: a slice of a stack) is padded.
    const box_expr& output_crop = f.inputs()[0].output_crop;
    const var padded = output_crop.empty() ? dst : fresh(ctx_.name(dst.sym()) + ".crop");
    stmt call = call_stmt::make(pad_outside, {inner, f.inputs()[1].buffer->sym()}, {padded}, {}, std::move(attrs));
    call = crop_buffer::make(inner, padded, aliases_.padding_inside[fi], call);
    return output_crop.empty() ? call : crop_buffer::make(padded, dst, output_crop, call);
  }

  stmt make_copy(int fi, var dst) {
    const func& f = *g_.funcs[fi].f;
    const std::vector<var>& dst_x = f.outputs()[0].dims;
    std::vector<stmt> copies;
    const std::size_t sources = f.is_padded_copy() ? 1 : f.inputs().size();
    // A destination that is a view of the source only where the view's condition holds
    // (make_allocation): the copy runs where it does not.
    const bool conditional = aliases_.buffers[g_.buffer_index(f.outputs()[0].buffer.get())].conditional;
    for (std::size_t k = 0; k < sources; ++k) {
      const func::input& in = f.inputs()[k];
      if (aliases_.removed[fi][k] && !conditional) {
        // The source's producer wrote it into dst (or dst is a view of the source): a padded copy
        // still writes its padding.
        if (f.is_padded_copy()) copies.push_back(make_padding(fi, dst));
        continue;
      }
      std::vector<expr> src_x;
      for (const interval_expr& i : internal::used_bounds(in)) src_x.push_back(i.min);
      var src = in.buffer->sym();
      var pad;
      // The source of a padded copy is cropped to its input_crop (outside it, the copy pads);
      // the destination of an input with an output_crop to that crop.
      var src_cropped = src, dst_cropped = dst;
      if (f.is_padded_copy()) {
        pad = f.inputs()[1].buffer->sym();
        src_cropped = fresh(ctx_.name(src.sym()) + ".crop");
      }
      if (!in.output_crop.empty()) dst_cropped = fresh(ctx_.name(dst.sym()) + ".crop");
      stmt copy = copy_stmt::make(f.copy_impl(), src_cropped, src_x, dst_cropped, dst_x, pad);
      if (f.is_padded_copy()) {
        const span<const interval_expr> crop = internal::used_input_crop(in);
        copy = crop_buffer::make(src_cropped, src, box_expr(crop.begin(), crop.end()), copy);
      }
      if (!in.output_crop.empty()) copy = crop_buffer::make(dst_cropped, dst, in.output_crop, copy);
      if (aliases_.removed[fi][k]) {
        SLINKY_ASSERT(conditional && view_ok_.defined(), "a conditional view has the program's view condition");
        copy = if_then_else::make(!view_ok_, copy);
      }
      copies.push_back(copy);
    }
    return block::make(std::move(copies));
  }

  // The interval of variable v that func fi computes (bounds_inference::func_bounds::produce).
  const interval_expr& produced(int fi, var v) const {
    const std::optional<std::size_t> i = index_of(bounds_.funcs[fi].vars, v);
    SLINKY_CHECK(i, "bounds inference has an interval of each variable indexing a func's outputs, and a func "
                    "loops over some of those");
    return bounds_.funcs[fi].produce[*i];
  }

  stmt emit_func(int fi) {
    const func_node& fn = g_.funcs[fi];
    const func& f = *fn.f;
    const std::vector<func::loop_info>& loops = f.loops();
    const std::size_t n = loops.size();
    // Loops 0 to merged - 1 (innermost first) run as one call over their range: they have no
    // loop and no crop.
    const std::size_t merged = merge_loops_ ? loops_run_as_one_call(g_, bounds_, aliases_, fi) : 0;
    // syms[o][j]: the symbol of output o at nesting depth j: 0 is the buffer itself, 1 its crop
    // to the func's region, 2 + m the crop of the m-th loop from the outside.
    std::vector<std::vector<var>> syms(f.outputs().size());
    for (std::size_t o = 0; o < f.outputs().size(); ++o) {
      const buffer_expr& b = *f.outputs()[o].buffer;
      const std::string name = ctx_.name(b.sym().sym());
      syms[o].push_back(b.sym());
      syms[o].push_back(fresh(name));
      for (std::size_t m = 0; m < n - merged; ++m) {
        syms[o].push_back(fresh(name + "." + ctx_.name(loops[n - 1 - m].var)));
      }
    }
    std::vector<var> innermost;
    for (const auto& s : syms) innermost.push_back(s.back());
    stmt body = make_call(fi, innermost);

    // A merged loop keeps what the loop does when it has no iteration (no call) and when its
    // step is not positive (the evaluator fails it, however empty): the simplifier removes both
    // where they are proven.
    for (std::size_t k = 0; k < merged; ++k) {
      const interval_expr& range = produced(fi, loops[k].var);
      body = if_then_else::make(range.min <= range.max, body);
      body = block::make({check::make(loops[k].step > 0), body});
    }

    for (std::size_t k = merged; k < n; ++k) {
      const func::loop_info& l = loops[k];
      const var u = fn.loop_syms[k];
      const std::size_t depth = 2 + (n - 1 - k);
      const loop_level level{fi, static_cast<int>(k)};
      const bool pipelined = bounds_.pipelined(level);
      pipeline_sync sync;
      if (pipelined) {
        sync = {u, fresh(ctx_.name(u.sym()) + ".first"), fresh(ctx_.name(u.sym()) + ".sem"), l.step, 0};
      }
      body = emit_level(level, body, pipelined ? &sync : nullptr);
      for (std::size_t o = 0; o < f.outputs().size(); ++o) {
        const std::vector<var>& dims = f.outputs()[o].dims;
        const std::optional<std::size_t> d = index_of(dims, l.var);
        if (!d) {
          body = clone_buffer::make(syms[o][depth], syms[o][depth - 1], body);
        } else {
          const int dim = static_cast<int>(*d);
          body = crop_dim::make(syms[o][depth], syms[o][depth - 1], dim, bounds(u, u + l.step - 1), body);
        }
      }
      interval_expr range = produced(fi, l.var);
      // The loop starts early enough for the windows sliding with it to warm up.
      range.min = bounds_.loop_start(level);
      if (!pipelined) {
        body = loop::make(u, l.max_workers, range, l.step, body);
        continue;
      }
      const index_t workers = bounds_.pipeline_workers(level);
      const expr max_workers = workers == 1 || as_constant(l.max_workers) ? expr(workers) : min(l.max_workers, workers);
      body = loop::make(u, max_workers, interval_expr(sync.first, range.max), l.step, body);
      body = pipeline_loop(sync, range.min, body);
    }
    for (std::size_t o = 0; o < f.outputs().size(); ++o) {
      box_expr region;
      for (var v : f.outputs()[o].dims) region.push_back(produced(fi, v));
      body = crop_buffer::make(syms[o][1], syms[o][0], std::move(region), body);
    }
    return body;
  }

  // Buffer bi as a view of the memory of buffer `donor` (see can_take_memory_of).
  stmt make_view_of(int bi, int donor, stmt body) const {
    const buffer_expr& buf = *g_.buffers[bi].buffer;
    const var donor_sym = g_.buffers[donor].buffer->sym();
    std::vector<dim_expr> dims = storage_.allocation_dims(bi);
    for (std::size_t d = 0; d < dims.size(); ++d) dims[d].stride = buffer_stride(donor_sym, static_cast<int>(d));
    return make_buffer::make(buf.sym(), buffer_at(donor_sym), buf.elem_size(), std::move(dims), std::move(body));
  }

  // The element size a buffer is allocated with: 0 when none is given (see make_allocation).
  static expr elem_size_or_zero(const buffer_expr& buf) { return buf.has_elem_size() ? buf.elem_size() : expr(0); }

  // With `idle` defined, the allocation is empty when it holds.
  stmt make_allocation(int bi, stmt body, const expr& idle = expr()) {
    const buffer_node& b = g_.buffers[bi];
    const buffer_expr& buf = *b.buffer;
    const var sym = buf.sym();
    const buffer_alias& alias = aliases_.buffers[bi];
    if (alias.target >= 0) {
      const var target = g_.buffers[alias.target].buffer->sym();
      if (alias.same) return clone_buffer::make(sym, target, std::move(body));
      if (alias.conditional) {
        // Two variants of the scope: the view, where the copy into it is gone, and the buffer's own
        // allocation, where the copy runs. The condition is known in each (so a conditional view
        // nested in this scope has one variant in each), and the simplifier removes the other
        // branches.
        SLINKY_ASSERT(view_ok_.defined(), "a conditional view has the program's view condition");
        stmt view =
            make_buffer::make(sym, alias.base, elem_size_or_zero(buf), alias.dims, substitute(body, view_ok_, 1));
        stmt own = make_own_allocation(bi, substitute(body, view_ok_, 0), idle);
        return if_then_else::make(view_ok_, std::move(view), std::move(own));
      }
      return make_buffer::make(sym, alias.base, elem_size_or_zero(buf), alias.dims, std::move(body));
    }
    return make_own_allocation(bi, std::move(body), idle);
  }

  // Buffer bi's own memory (not a view), around body; with `idle` defined, empty when it holds.
  stmt make_own_allocation(int bi, stmt body, const expr& idle) {
    const buffer_expr& buf = *g_.buffers[bi].buffer;
    const var sym = buf.sym();
    std::vector<dim_expr> dims = storage_.allocation_dims(bi);
    if (idle.defined() && !dims.empty()) {
      dims[0].bounds.max = simplify(select(idle, dims[0].bounds.min - 1, dims[0].bounds.max));
    }
    SLINKY_ASSERT(!as_constant(buf.elem_size()) || *as_constant(buf.elem_size()) >= 0,
                  "check_graph rejects negative element sizes");
    // An element size of 0 (or none: no typed callback gave one) is legal: the buffer holds no
    // data, its descriptor only (clients pass bounds and fold factors to callbacks so). It is
    // allocated as nothing (size 0, a null base).
    return allocate::make(sym, buf.storage(), elem_size_or_zero(buf), std::move(dims), std::move(body));
  }

  // The funcs computed at level l in order, each skipped when idle, then the continuation.
  std::vector<level_item> level_items(loop_level l, stmt continuation) {
    std::vector<level_item> items;
    for (std::size_t fi = 0; fi < g_.funcs.size(); ++fi) {
      if (g_.funcs[fi].compute != l) continue;
      stmt body = emit_func(static_cast<int>(fi));
      // A func idle when the outputs it reaches are empty is skipped then (its region is not
      // meaningful), unless its loop's owner is idle in the same case (its loop has no iterations).
      const std::vector<int>& reach = bounds_.reach[fi];
      if (!reach.empty() && (l.root() || reach != bounds_.reach[l.func])) {
        const expr idle = bounds_.all_empty(reach);
        if (!is_zero(idle)) body = if_then_else::make(simplify(!idle), body);
      }
      items.push_back(
          {level_item::kind::func, static_cast<int>(fi), std::move(body), {}, reach.empty() ? nullptr : &reach});
    }
    if (continuation.defined()) {
      items.push_back({level_item::kind::continuation, 0, std::move(continuation), {}, nullptr});
    }
    return items;
  }

  // Makes each item a stage of pipelined loop l. Every stage but the last is ordered: a sliding
  // producer computes only what the previous iteration did not. The last stage (the loop's
  // owner) starts at once unless a func in it slides, and finishes in order, which bounds the
  // iterations in flight.
  void make_stages(loop_level l, std::vector<level_item>& items, pipeline_sync& sync) const {
    sync.stages = items.size();
    for (std::size_t k = 0; k < items.size(); ++k) {
      bool ordered = k + 1 < items.size();
      for (std::size_t x = 0; x < g_.funcs.size() && !ordered; ++x) {
        ordered = storage_.runs_in(items[k], static_cast<int>(x), l) && bounds_.slides_with(static_cast<int>(x), l);
      }
      items[k].body = pipeline_stage(sync, k, items[k].body, ordered);
    }
  }

  // The level's statements, each allocation around the items from its first user to the end of
  // the level. Innermost (latest first use) first: each wraps everything from its first use on.
  // A free does not count as a user of the level's buffers when deciding whether an allocation
  // is idle with the items around it.
  stmt wrap_allocations(std::vector<level_item> items, const std::vector<allocation>& allocations) {
    for (auto i = allocations.rbegin(); i != allocations.rend(); ++i) {
      const allocation& a = *i;
      const std::size_t first = a.first_user;
      SLINKY_ASSERT(first < items.size(), "allocations nest in the order of their first use");
      // Skipped with its users if every item in its scope is idle in the same case, else
      // allocated empty.
      bool idle_together = a.reach != nullptr;
      for (std::size_t k = first; k < items.size() && idle_together; ++k) {
        idle_together = items[k].reach && *items[k].reach == *a.reach;
      }
      const expr idle = a.reach ? bounds_.all_empty(*a.reach) : expr(0);
      stmt inside = block::make(flatten(items, first));
      stmt wrapped;
      if (a.donor) {
        wrapped = make_view_of(a.buffer, *a.donor, std::move(inside));
      } else if (idle_together && !is_zero(idle)) {
        wrapped = if_then_else::make(simplify(!idle), make_allocation(a.buffer, std::move(inside)));
      } else {
        wrapped = make_allocation(a.buffer, std::move(inside), is_zero(idle) ? expr() : idle);
      }
      items.resize(first);
      items.push_back({level_item::kind::allocation, 0, std::move(wrapped), {}, idle_together ? a.reach : nullptr});
    }
    return block::make(flatten(items, 0));
  }

public:
  emitter(const graph& g, const bounds_inference& bounds, const alias_plan& aliases, node_context& ctx,
          bool merge_loops)
      : g_(g), bounds_(bounds), aliases_(aliases), ctx_(ctx), merge_loops_(merge_loops), storage_(g, bounds, aliases) {
    if (aliases.view_condition.defined()) view_ok_ = fresh("views_ok");
  }

  // The program's body with the view condition bound around it.
  stmt bind_view_condition(stmt body) const {
    if (!view_ok_.defined()) return body;
    return let_stmt::make(view_ok_, aliases_.view_condition, std::move(body));
  }

  // The body of loop level l (or the root): the funcs computed there, then the continuation,
  // with the allocations of the buffers stored there around the statements that use them. Each
  // buffer's memory is held from the first item that uses it to the last: its allocation wraps
  // the items from its first user to the end of the level, and it is freed right after its last
  // user. With `sync`, l is a pipelined loop and each of these statements is a stage.
  stmt emit_level(loop_level l, stmt continuation, pipeline_sync* sync = nullptr) {
    std::vector<level_item> items = level_items(l, std::move(continuation));
    if (sync) make_stages(l, items, *sync);
    std::vector<allocation> allocations = storage_.level_allocations(l, items);
    storage_.share_within_iterations(allocations);
    storage_.hand_on_memory(allocations);
    storage_.add_frees(items, allocations);
    return wrap_allocations(std::move(items), allocations);
  }
};

// The largest coordinate (in absolute value) a buffer passed in may have: it leaves room to
// compute coordinates a little outside the buffer (end(), stencil halos) without overflow.
constexpr index_t max_coordinate = std::numeric_limits<index_t>::max() / 2;

// Checks that addressing any element of dimension d of buffer `sym` (of rank `rank`) cannot
// overflow an index_t: the coordinates are within +/-max_coordinate, and the dimension spans at
// most max_coordinate / rank bytes (so the offsets of all dimensions together stay below 2^62).
// The span of a dimension is (max - min) * |stride| when it is unfolded, and (|fold| - 1) *
// |stride| when it is folded: dim::flat_offset_bytes addresses coordinate i at
// euclidean_mod(i, fold) * stride for every fold factor other than dim::unfolded, which is in
// [0, |fold| - 1] for any fold (0 and negative ones included, which the runtime's folding never
// makes but a client may pass as data), so no fold factor needs to be rejected. The
// evaluator's saturating arithmetic makes each condition exact.
void check_addressable(var sym, std::size_t d, std::size_t rank, std::vector<stmt>& checks) {
  const int dd = static_cast<int>(d);
  const index_t max_span = max_coordinate / static_cast<index_t>(rank);
  checks.push_back(check::make(abs(buffer_min(sym, dd)) <= max_coordinate));
  checks.push_back(check::make(abs(buffer_max(sym, dd)) <= max_coordinate));
  // An empty dimension has a negative span. (Written as the simplifier would write them: these
  // checks are not simplified, see emit_checks.)
  const expr span = abs(buffer_stride(sym, dd)) * (buffer_max(sym, dd) - buffer_min(sym, dd));
  checks.push_back(check::make(span <= max_span));
  const expr fold = buffer_fold_factor(sym, dd);
  const expr fold_span = abs(buffer_stride(sym, dd)) * select(fold == dim::unfolded, 0, abs(fold) - 1);
  checks.push_back(check::make(fold_span <= max_span));
}

// The checks of one pipeline input or output, in four groups run in order: the descriptor
// (rank, element size), the memory, the sizes (no address computation overflows, no address
// wraps around), then the bounds and declared constraints, so the first failure is the most
// basic one.
// `unread` is the condition that nothing reads the buffer (its readers are idle, see
// bounds_inference::reach). A condition that nothing of the buffer is read with selects, mins or
// maxes in it (in pipelines with several outputs, a select per dim of each reached) becomes a
// symbol `<buffer>.unread`, defined in `lets` (around all the checks): each bounds check of the
// buffer names it instead of repeating it, so it is simplified and evaluated once. Plain
// conditions (a comparison per dim of one output) stay in the checks, whose messages then show
// them.
void check_buffer(const graph& g, const buffer_node& b, const box_expr& needed, const expr& unread,
                  std::vector<stmt> (&checks)[4], std::vector<std::pair<var, expr>>& lets, node_context& ctx) {
  const buffer_expr& buf = *b.buffer;
  const var sym = buf.sym();
  checks[0].push_back(check::make(buffer_rank(sym) == static_cast<index_t>(buf.rank())));
  if (buf.has_elem_size()) checks[0].push_back(check::make(buffer_elem_size(sym) == buf.elem_size()));
  // A buffer may have no memory only if nothing of it is used.
  expr is_empty = expr(0);
  for (std::size_t d = 0; d < buf.rank(); ++d) {
    const int dd = static_cast<int>(d);
    if (b.is_output) {
      is_empty = is_empty || buffer_max(sym, dd) < buffer_min(sym, dd);
    } else if (needed.size() > d) {
      is_empty = is_empty || needed[d].max < needed[d].min;
    }
  }
  if (!b.is_output) is_empty = is_empty || unread;
  // An input no func reads (given for its shape only, its metadata used in expressions) needs no
  // memory, whatever its rank (API_COMPAT 5.1).
  const bool never_read = !b.is_output && b.consumers.empty();
  if (!never_read) checks[1].push_back(check::make(buffer_at(sym) != 0 || simplify(is_empty)));
  for (std::size_t d = 0; d < buf.rank(); ++d) check_addressable(sym, d, buf.rank(), checks[2]);
  // Last of the sizes, once every offset is known to fit: the elements' addresses must not wrap
  // around the address space (a base near its top with an extent past it, which no check on the
  // descriptor's numbers alone sees). One call per buffer, whatever its rank; a null base
  // passes. An input nothing reads has no data to check (see above).
  if (!never_read) checks[2].push_back(check::make(validate_buffer(sym)));
  // Nothing of the buffer is read if the needed region is empty in any dimension (e.g. for an
  // empty output): then it need not cover it.
  expr nothing_read = unread;
  for (const interval_expr& n : needed) nothing_read = nothing_read || n.max < n.min;
  nothing_read = simplify(nothing_read);
  const bool costly = any_node(
      nothing_read, [](const conditional*) { return true; }, [](const minimum*) { return true; },
      [](const maximum*) { return true; });
  if (costly) {
    const var unread_sym(ctx.insert_unique(g.name(sym) + ".unread"));
    lets.emplace_back(unread_sym, nothing_read);
    nothing_read = unread_sym;
  }
  for (std::size_t d = 0; d < buf.rank(); ++d) {
    const int dd = static_cast<int>(d);
    if (d < needed.size()) {
      const interval_expr& n = needed[d];
      if (n.min.defined() && !is_infinity(n.min)) {
        checks[3].push_back(check::make(buffer_min(sym, dd) <= n.min || nothing_read));
      }
      if (n.max.defined() && !is_infinity(n.max)) {
        checks[3].push_back(check::make(n.max <= buffer_max(sym, dd) || nothing_read));
      }
    }
    const dim_expr& declared = buf.dim(d);
    if (!is_default(declared.bounds.min, buffer_min(sym, dd))) {
      checks[3].push_back(check::make(buffer_min(sym, dd) == declared.bounds.min));
    }
    if (!is_default(declared.bounds.max, buffer_max(sym, dd))) {
      checks[3].push_back(check::make(buffer_max(sym, dd) == declared.bounds.max));
    }
    // The stride and fold factor of a dim of at most one element address nothing: declared ones
    // constrain only longer dims (a client declares dim::broadcast() on a dim it knows has extent
    // 1, whatever stride the caller's buffer has there).
    const expr single = buffer_max(sym, dd) <= buffer_min(sym, dd);
    if (!is_default(declared.stride, buffer_stride(sym, dd))) {
      checks[3].push_back(check::make(buffer_stride(sym, dd) == declared.stride || single));
    }
    if (!is_default(declared.fold_factor, buffer_fold_factor(sym, dd))) {
      checks[3].push_back(check::make(buffer_fold_factor(sym, dd) == declared.fold_factor || single));
    }
  }
}

}  // namespace

std::size_t loops_run_as_one_call(const graph& g, const bounds_inference& bounds, const alias_plan& aliases, int fi) {
  const std::size_t n = g.funcs[fi].f->loops().size();
  std::size_t merged = 0;
  while (merged < n && loop_runs_as_one_call(g, bounds, aliases, fi, merged)) ++merged;
  return merged;
}

stmt emit_program(const graph& g, const bounds_inference& bounds, const alias_plan& aliases, node_context& ctx,
                  bool merge_loops) {
  // The plan the emitter indexes: bounds for every func and buffer (checked when inferred), an
  // alias decision per buffer whose target is another buffer of the graph.
  SLINKY_ASSERT(bounds.funcs.size() == g.funcs.size() && bounds.needed.size() == g.buffers.size(),
                "bounds are inferred for this graph before the program is emitted");
  SLINKY_ASSERT(aliases.buffers.size() == g.buffers.size() && aliases.removed.size() <= g.funcs.size(),
                "aliases are planned for this graph before the program is emitted");
  for (std::size_t bi = 0; bi < aliases.buffers.size(); ++bi) {
    const int target = aliases.buffers[bi].target;
    SLINKY_ASSERT(target < static_cast<int>(g.buffers.size()) && target != static_cast<int>(bi),
                  "an alias targets another buffer of the graph, or none (-1)");
  }
  emitter e(g, bounds, aliases, ctx, merge_loops);
  return e.bind_view_condition(e.emit_level(loop_level(), stmt()));
}

stmt emit_checks(const graph& g, const bounds_inference& bounds, const alias_plan& aliases, node_context& ctx) {
  std::vector<stmt> checks[4];
  std::vector<std::pair<var, expr>> lets;
  for (std::size_t bi = 0; bi < g.buffers.size(); ++bi) {
    const buffer_node& b = g.buffers[bi];
    if (b.buffer->constant()) continue;
    if (b.is_input || b.is_output) {
      check_buffer(g, b, bounds.needed[bi], bounds.all_empty(bounds.readers_reach[bi]), checks, lets, ctx);
    }
  }
  // Views of inputs and outputs address them with plain strides, or with an output's own fold.
  for (const buffer_alias& a : aliases.buffers) {
    if (a.target < 0) continue;
    const buffer_node& t = g.buffers[a.target];
    if (t.buffer->constant() || !(t.is_input || t.is_output)) continue;
    const var tsym = t.buffer->sym();
    for (int d : a.unfolded_target_dims) {
      // Linear within one turn of the fold (Euclidean division: fold > 0 here).
      const expr fold = buffer_fold_factor(tsym, d);
      checks[3].push_back(check::make(fold <= 0 || buffer_stride(tsym, d) == 0 ||
                                      buffer_min(tsym, d) / fold == buffer_max(tsym, d) / fold));
    }
    for (int d : a.fold_target_dims) {
      const expr fold = buffer_fold_factor(tsym, d);
      checks[3].push_back(
          check::make(fold <= 0 || buffer_stride(tsym, d) == 0 || buffer_max(tsym, d) - buffer_min(tsym, d) < fold));
    }
  }
  // Simplified, but for the size checks: they are about the caller's descriptors only, so no
  // fact proves or shortens them, and simplifying them was 15% of the random tester's time. The
  // lets are simplified on their own, and dropped if no check is left to use them.
  stmt first = simplify(block::make({block::make(std::move(checks[0])), block::make(std::move(checks[1]))}));
  stmt bounds_checks = simplify(block::make(std::move(checks[3])));
  std::vector<std::pair<var, expr>> used_lets;
  for (std::pair<var, expr>& l : lets) {
    if (depends_on(bounds_checks, l.first).any()) used_lets.emplace_back(l.first, simplify(l.second));
  }
  stmt result = block::make({std::move(first), block::make(std::move(checks[2])), std::move(bounds_checks)});
  return let_stmt::make(std::move(used_lets), std::move(result));
}

}  // namespace slinky
