// Aliasing decisions: see alias.h and docs/copies.md.
#include "slinky/builder/alias.h"

#include <algorithm>
#include <map>
#include <set>

#include "slinky/builder/alias_views.h"
#include "slinky/runtime/node_mutator.h"

namespace slinky {

namespace {

// True if the client declared strides of b only (its bounds and fold factors are the builder's).
bool declares_strides_only(const buffer_expr& b) {
  const var sym = b.sym();
  for (std::size_t d = 0; d < b.rank(); ++d) {
    const int dd = static_cast<int>(d);
    const dim_expr& i = b.dim(d);
    if (!is_default(i.bounds.min, buffer_min(sym, dd)) || !is_default(i.bounds.max, buffer_max(sym, dd)) ||
        !is_default(i.fold_factor, buffer_fold_factor(sym, dd))) {
      return false;
    }
  }
  return true;
}

// True if b's declared strides are those of a view of it with dims `view`: each declared stride
// is the view's, as expressions (e.g. a copy of an input whose destination declares the input's
// strides). Such a buffer may be a view: its layout is the client's, and the view has it.
bool strides_agree(const buffer_expr& b, const std::vector<dim_expr>& view) {
  if (!declares_strides_only(b) || view.size() != b.rank()) return false;
  for (std::size_t d = 0; d < b.rank(); ++d) {
    const expr& declared = b.dim(d).stride;
    if (is_default(declared, buffer_stride(b.sym(), static_cast<int>(d)))) continue;
    if (!view[d].stride.defined()) return false;
    const expr a = simplify(declared), v = simplify(view[d].stride);
    if (!match(a, v) && !prove_true(a == v)) return false;
  }
  return true;
}

// True if the client declared dim d of b unfolded (b->dim(d).fold_factor = dim::unfolded): the
// pipeline checks it, and views may address b linearly there.
bool declared_unfolded(const buffer_expr& b, int d) { return is_constant(b.dim(d).fold_factor, dim::unfolded); }

bool depends_on_any(const expr& e, const std::vector<var>& vars) {
  for (var v : vars) {
    if (depends_on(e, v)) return true;
  }
  return false;
}

// The single variable of vars that e depends on (-1 if none, -2 if several).
int only_dependency(const expr& e, const std::vector<var>& vars) {
  int result = -1;
  for (std::size_t j = 0; j < vars.size(); ++j) {
    if (!depends_on(e, vars[j])) continue;
    if (result != -1) return -2;
    result = static_cast<int>(j);
  }
  return result;
}

// True if the coefficient is provably 0, or provably not 0 (a non-zero constant).
bool is_zero_coeff(const expr& c) { return is_zero(c); }
bool is_nonzero_constant(const expr& c) {
  std::optional<index_t> v = as_constant(c);
  return v && *v != 0;
}

}  // namespace

int alias_plan::depth(int buffer) const {
  SLINKY_ASSERT(buffer >= 0 && static_cast<std::size_t>(buffer) < buffers.size(), "a buffer of the plan");
  int result = 0;
  for (int b = buffer; buffers[b].target >= 0; b = buffers[b].target) {
    SLINKY_ASSERT(static_cast<std::size_t>(buffers[b].target) < buffers.size() && buffers[b].target != b,
                  "an alias targets another buffer of the plan");
    // A chain of views visits each buffer once: a cycle would never end.
    SLINKY_ASSERT(static_cast<std::size_t>(result) < buffers.size(), "alias chains have no cycle");
    ++result;
  }
  return result;
}

namespace {

class alias_planner {
  const graph& g_;
  const bounds_inference& bounds_;
  alias_plan& plan_;

  bool is_intermediate(int bi) const {
    const buffer_node& b = g_.buffers[bi];
    return b.producer >= 0 && !b.is_output && !b.is_input && !b.buffer->constant();
  }
  // True if the builder folds b, or the client declared a fold factor for it.
  bool folded(int bi) const {
    for (const expr& f : bounds_.folds[bi]) {
      if (f.defined()) return true;
    }
    const buffer_expr& b = *g_.buffers[bi].buffer;
    for (std::size_t d = 0; d < b.rank(); ++d) {
      if (!is_default(b.dim(d).fold_factor, buffer_fold_factor(b.sym(), static_cast<index_t>(d)))) return true;
    }
    return false;
  }
  // True if storage level `outer` is `inner` or contains it.
  bool encloses(loop_level outer, loop_level inner) const {
    if (outer.root()) return true;
    if (inner.root()) return false;
    for (loop_level l : g_.chain(inner)) {
      if (l == outer) return true;
    }
    return false;
  }
  // The index of a buffer of the graph (every buffer a func reads or writes is one: -1, "not
  // found", is never a valid answer here).
  int buffer_of(const buffer_expr_ptr& b) const {
    const int result = g_.buffer_index(b.get());
    SLINKY_ASSERT(result >= 0 && static_cast<std::size_t>(result) < g_.buffers.size(),
                  "the buffers of the funcs are the graph's");
    return result;
  }
  // The func producing intermediate bi (-1 for inputs and constants, which callers exclude).
  const func_node& producer_of(int bi) const {
    const int p = g_.buffers[bi].producer;
    SLINKY_ASSERT(p >= 0 && static_cast<std::size_t>(p) < g_.funcs.size(), "an intermediate has a producer");
    return g_.funcs[p];
  }
  bool is_target(int bi) const {
    for (const buffer_alias& a : plan_.buffers) {
      if (a.target == bi) return true;
    }
    return false;
  }
  int uses_in(const func& f, int bi) const {
    int n = 0;
    for (const func::input& i : f.inputs()) n += buffer_of(i.buffer) == bi;
    return n;
  }

  // Adds to view a the dim of a source of copy input `in` that is destination d's dim j
  // translated by offset (src_x = x_j + offset); dst_fold is the fold of d there when d is an
  // intermediate (undefined: unfolded), output_fold says it is a pipeline output's own (d is a
  // view of an output). Sets `at`, the coordinate of d in dim j at the view's base.
  // With `within` defined, the view covers only that part of d (in d's coordinates).
  void add_destination_dim(buffer_alias& a, const func::input& in, int d, int j, const expr& offset,
                           const expr& dst_fold, bool output_fold, expr& at,
                           const interval_expr& within = interval_expr()) const {
    const buffer_node& dst = g_.buffers[d];
    const var dsym = dst.buffer->sym();
    interval_expr b(buffer_min(dsym, j), buffer_max(dsym, j));
    if (static_cast<std::size_t>(j) < in.output_crop.size()) b &= in.output_crop[j];
    if (within.min.defined() && within.max.defined()) b &= within;
    b = interval_expr(simplify(b.min + offset), simplify(b.max + offset));
    const expr stride = buffer_stride(dsym, j);
    const bool untranslated_output = dst.is_output && is_zero(offset) && !declared_unfolded(*dst.buffer, j);
    if (output_fold || untranslated_output) {
      // An output that may be folded (or a view of it that has its fold), viewed untranslated: the
      // view takes the fold factor, so it addresses the output's memory as the output does,
      // wherever the output's range crosses a turn of its fold. Unfolded, the base is the element
      // at the view's min; folded, at a multiple of the fold.
      const expr fold = output_fold ? dst_fold : buffer_fold_factor(dsym, j);
      at = simplify(select(fold == dim::unfolded, b.min, 0));
      a.dims.push_back({b, stride, fold});
      a.output_folds.push_back(true);
      if (untranslated_output) a.fold_target_dims.push_back(j);
    } else if (dst_fold.defined()) {
      // Folded: the base is the address of a coordinate that is a multiple of the fold.
      at = 0;
      a.dims.push_back({b, stride, dst_fold});
      a.output_folds.push_back(false);
    } else {
      // Linear from the element at the view's min: exact within one turn of a fold (checked for
      // outputs not declared unfolded).
      at = simplify(b.min - offset);
      a.dims.push_back({b, stride, expr()});
      a.output_folds.push_back(false);
      if (!dst.is_output || !declared_unfolded(*dst.buffer, j)) a.unfolded_target_dims.push_back(j);
    }
  }

  // The source of input `in` of copy fi becomes a view of the destination.
  bool alias_into_destination(int fi, std::size_t input) {
    const func& f = *g_.funcs[fi].f;
    const func::input& in = f.inputs()[input];
    const std::vector<var>& x = f.outputs()[0].dims;
    const int s = buffer_of(in.buffer);
    const int d = buffer_of(f.outputs()[0].buffer);
    // A source with declared strides is a view only where they agree with the view's (below).
    const bool declared = declares_layout(*in.buffer);
    if (!is_intermediate(s) || plan_.is_alias(s) || (declared && !declares_strides_only(*in.buffer))) return false;
    if (g_.buffers[s].consumers.size() != 1 || uses_in(f, s) != 1) return false;
    // Inputs of a copy with several write their own part of the destination.
    const std::size_t sources = f.is_padded_copy() ? 1 : f.inputs().size();
    if (sources > 1 && in.output_crop.empty()) return false;
    // A producer with several outputs may compute a wider region than the copy reads (the union
    // of what its outputs' consumers need): in the destination those extra values could land on
    // padding written before them, on another input's part of a concatenation or stack, or
    // outside the destination altogether (an empty destination: random_regressions,
    // stack_of_a_multi_output_func_into_an_empty_output).
    if (producer_of(s).f->outputs().size() != 1) return false;
    // The destination: an output, or an intermediate stored where the source's view is made (at
    // the source's level or outside it); its fold factors (undefined: unfolded) restrict the
    // view below.
    const buffer_node& dst = g_.buffers[d];
    std::vector<expr> dst_folds(x.size());
    std::vector<bool> output_folds(x.size(), false);
    if (!dst.is_output) {
      if (!is_intermediate(d) || declares_layout(*dst.buffer)) return false;
      if (plan_.is_alias(d) && plan_.buffers[d].same) return false;
      if (!encloses(dst.store, g_.buffers[s].store)) return false;
      const buffer_alias& da = plan_.buffers[d];
      for (std::size_t j = 0; j < x.size(); ++j) {
        dst_folds[j] = plan_.is_alias(d) ? da.dims[j].fold_factor : bounds_.folds[d][j];
        output_folds[j] = plan_.is_alias(d) && j < da.output_folds.size() && da.output_folds[j];
      }
    }
    // src_x[k] = x[j] + c: each source dimension is one destination dimension, translated; the
    // destination dimensions no source dimension maps to must be a point of output_crop.
    std::vector<int> dst_dim;
    std::vector<expr> offset;
    std::vector<bool> mapped(x.size(), false);
    for (const interval_expr& i : internal::used_bounds(in)) {
      if (!is_point_interval(i)) return false;
      const int j = only_dependency(i.min, x);
      // -1: no destination variable, -2: several.
      if (j < 0 || mapped[j]) return false;
      SLINKY_ASSERT(static_cast<std::size_t>(j) < x.size(), "a destination dim");
      const expr c = simplify(i.min - x[j]);
      if (depends_on_any(c, x)) return false;
      // A folded destination dimension (a ring buffer) can be viewed only untranslated, and
      // only if the source is produced where the copy runs, exactly the window the copy
      // needs (each window just before it is copied, nothing written over live rows): its
      // producer runs at the copy's level and has no other output to widen its region.
      // A dimension with a pipeline output's fold (which holds the output's whole range) is viewed
      // through that fold: untranslated only, as the output itself would be.
      if (output_folds[j] && !is_zero(c)) return false;
      if (dst_folds[j].defined() && !output_folds[j]) {
        const func_node& producer = producer_of(s);
        if (!is_zero(c) || producer.compute != g_.funcs[fi].compute || producer.f->outputs().size() != 1) {
          return false;
        }
      }
      mapped[j] = true;
      dst_dim.push_back(j);
      offset.push_back(c);
    }
    if (dst_dim.size() != in.buffer->rank()) return false;
    for (std::size_t j = 0; j < x.size(); ++j) {
      if (!mapped[j] && (j >= in.output_crop.size() || !is_point_interval(in.output_crop[j]))) return false;
    }

    // dst_dim maps source dims to distinct destination dims (a partial permutation).
    SLINKY_ASSERT(offset.size() == dst_dim.size() && dst_dim.size() <= x.size(),
                  "one destination dim and offset per source dim");
    buffer_alias a;
    a.target = d;
    std::vector<expr> at(x.size());
    for (std::size_t k = 0; k < dst_dim.size(); ++k) {
      const int j = dst_dim[k];
      add_destination_dim(a, in, d, j, offset[k], dst_folds[j], output_folds[j], at[j]);
    }
    SLINKY_ASSERT(a.dims.size() == in.buffer->rank() && a.output_folds.size() == a.dims.size(),
                  "the view has a dim (and a fold flag) per source dim");
    for (std::size_t j = 0; j < x.size(); ++j) {
      if (!mapped[j]) at[j] = in.output_crop[j].min;
    }
    if (declared && !strides_agree(*in.buffer, a.dims)) return false;
    a.base = buffer_at(dst.buffer->sym(), at);
    plan_.buffers[s] = std::move(a);
    plan_.removed[fi][input] = true;
    if (f.is_padded_copy()) {
      box_expr& inside = plan_.padding_inside[fi];
      inside.resize(x.size());
      for (std::size_t k = 0; k < dst_dim.size() && k < in.input_crop.size(); ++k) {
        const interval_expr& crop = in.input_crop[k];
        inside[dst_dim[k]] = interval_expr(crop.min.defined() ? simplify(crop.min - offset[k]) : expr(),
                                           crop.max.defined() ? simplify(crop.max - offset[k]) : expr());
      }
    }
    return true;
  }

  // True if a consumer of d reads it through an input_crop bounding a dimension in which a view
  // of s through m may have stride 0. A stride-0 dim contains every coordinate, so cropping it
  // removes nothing (runtime.md): a padded copy would read the source where it should pad, and
  // a call would see values outside its crop (random_regressions,
  // padded_transposing_copy_into_a_user_folded_buffer). The view's stride in dimension j is
  // sum over k of m.coeff[k][j] * (s's stride k): 0 for a broadcast (no coefficient), and
  // possibly 0 unless it is one stride of an intermediate the builder lays out (an input, a
  // constant, a view or a declared layout may have stride-0 dims).
  bool cropped_where_stride_may_be_zero(int d, int s, const linear_map& m) const {
    const bool builder_strides = is_intermediate(s) && !plan_.is_alias(s) && !declares_layout(*g_.buffers[s].buffer);
    for (int ci : g_.buffers[d].consumers) {
      for (const func::input& i : g_.funcs[ci].f->inputs()) {
        if (buffer_of(i.buffer) != d) continue;
        for (std::size_t j = 0; j < i.input_crop.size(); ++j) {
          if (!i.input_crop[j].min.defined() && !i.input_crop[j].max.defined()) continue;
          // A coefficient given at run time may be 0.
          int moving = 0;
          for (const std::vector<expr>& c : m.coeff) {
            if (j >= c.size() || is_zero_coeff(c[j])) continue;
            if (!is_nonzero_constant(c[j])) return true;
            ++moving;
          }
          if (moving != 1 || !builder_strides) return true;
        }
      }
    }
    return false;
  }

  // True if the coefficient c of a copy from buffer s into buffer d has one value wherever the
  // view of s is made and used: it reads no loop variable (of any func) and no field of a buffer
  // but s and the pipeline's inputs, outputs and constants (d's are the view's own; another
  // intermediate's may not be defined there). Scalar arguments of the pipeline are accepted.
  bool invariant_coefficient(const expr& c, int s, int d) const {
    bool ok = true;
    rewrite<variable>(c, [&](const variable* v, node_mutator&) -> expr {
      if (v->field == buffer_field::none) {
        if (loop_vars_.count(v->sym)) ok = false;
      } else {
        auto b = buffer_syms_.find(v->sym);
        if (b == buffer_syms_.end() || b->second == d) {
          ok = false;
        } else if (b->second != s && is_intermediate(b->second)) {
          ok = false;
        }
      }
      return expr(v);
    });
    return ok;
  }

  // The destination of copy fi becomes a view of its source.
  bool alias_from_source(int fi) {
    const func& f = *g_.funcs[fi].f;
    if (f.is_padded_copy() || f.inputs().size() != 1) return false;
    const func::input& in = f.inputs()[0];
    if (!in.output_crop.empty() || !in.input_crop.empty() || !in.output_slice.empty()) return false;
    const std::vector<var>& x = f.outputs()[0].dims;
    const int s = buffer_of(in.buffer);
    const int d = buffer_of(f.outputs()[0].buffer);
    // A destination with declared strides is a view only where they agree with the view's (below).
    const buffer_expr& dbuf = *f.outputs()[0].buffer;
    const bool declared = declares_layout(dbuf);
    if (!is_intermediate(d) || plan_.is_alias(d) || (declared && !declares_strides_only(dbuf))) return false;
    // Nothing may write into the destination's memory once it is the source's (an input's).
    if (is_target(d)) return false;
    const buffer_node& src = g_.buffers[s];
    if (is_intermediate(s)) {
      if (folded(s) || !encloses(src.store, g_.buffers[d].store)) return false;
      if (plan_.is_alias(s) && plan_.buffers[s].same) return false;
    } else if (!src.is_input && !src.buffer->constant()) {
      // A pipeline output read by a copy: its memory is written while the view is read.
      return false;
    }
    linear_map m;
    if (!m.match(in, x, [&](const expr& c) { return invariant_coefficient(c, s, d); })) {
      return !declared && reshape_from_source(fi, s, d);
    }
    // A copy that changes which source dimension is innermost (a transpose), run in a loop,
    // is a cache-blocked reorganization the consumers benefit from: reading the source
    // through a view instead would gather with large strides. Keep such copies; at the root
    // the copy is a whole extra pass over memory, and the view wins. A view whose innermost
    // dimension moves along no source dimension but the innermost, with any step (a strided
    // stencil in(x * S + dx * D), a downsampling) or none (a broadcast), is made in loops too.
    const bool keeps_innermost =
        std::all_of(m.coeff.begin() + (m.coeff.empty() ? 0 : 1), m.coeff.end(),
                    [](const std::vector<expr>& c) { return c.empty() || is_zero_coeff(c[0]); });
    if (!keeps_innermost && !x.empty() && !g_.funcs[fi].compute.root()) return false;
    if (cropped_where_stride_may_be_zero(d, s, m)) return false;

    const var ssym = in.buffer->sym();
    const box_expr& needed = bounds_.needed[d];
    SLINKY_ASSERT(needed.size() == x.size(), "the region of the destination has an interval per variable");
    SLINKY_ASSERT(m.at.size() == in.buffer->rank() && m.coeff.size() == m.at.size(),
                  "the linear map has a row per source dim");
    buffer_alias a;
    a.target = s;
    std::vector<expr> at;
    for (std::size_t k = 0; k < m.at.size(); ++k) {
      // All at once: the mins may use loop variables that are also the copy's variables.
      expr e = rewrite<variable>(m.at[k], [&](const variable* v, node_mutator&) -> expr {
        for (std::size_t j = 0; j < x.size(); ++j) {
          if (v->sym == x[j] && v->field == buffer_field::none) return needed[j].min;
        }
        return expr(v);
      });
      at.push_back(simplify(e));
      if (std::any_of(m.coeff[k].begin(), m.coeff[k].end(), [](const expr& c) { return !is_zero_coeff(c); })) {
        a.unfolded_target_dims.push_back(static_cast<int>(k));
      }
    }
    for (std::size_t j = 0; j < x.size(); ++j) {
      expr stride = 0;
      for (std::size_t k = 0; k < m.at.size(); ++k) {
        SLINKY_ASSERT(m.coeff[k].size() == x.size(), "a coefficient per destination variable");
        if (!is_zero_coeff(m.coeff[k][j])) stride += buffer_stride(ssym, static_cast<index_t>(k)) * m.coeff[k][j];
      }
      a.dims.push_back({needed[j], simplify(stride), expr()});
    }
    if (declared && !strides_agree(dbuf, a.dims)) return false;
    a.base = buffer_at(ssym, at);
    plan_.buffers[d] = std::move(a);
    plan_.removed[fi][0] = true;
    return true;
  }

  // The destination d of copy fi, a reshape from source s, becomes a view of s addressed by the
  // flat index (match_reshape_view, alias_views.h, proves when). Preconditions of
  // alias_from_source already checked: one unpadded, uncropped input, d an intermediate with no
  // declared layout, not a target, s not folded and stored at or outside d's level.
  bool reshape_from_source(int fi, int s, int d) {
    const func& f = *g_.funcs[fi].f;
    const func::input& in = f.inputs()[0];
    const std::vector<var>& x = f.outputs()[0].dims;
    const buffer_expr& sbuf = *in.buffer;
    const buffer_expr& dbuf = *f.outputs()[0].buffer;
    const buffer_node& src = g_.buffers[s];
    // s is laid out by the builder (its strides are the plan's to give), and only once.
    if (!is_intermediate(s) || plan_.is_alias(s) || declares_layout(sbuf) || folded(s)) return false;
    if (!plan_.also_holds[s].empty() || !plan_.strides[s].empty()) return false;
    // Read by this copy only, and produced by a func with one output (which computes exactly what
    // its consumers need): its region is then the digits' range (checked below).
    if (src.consumers.size() != 1 || uses_in(f, s) != 1) return false;
    if (producer_of(s).f->outputs().size() != 1) return false;
    if (!sbuf.has_elem_size() || !dbuf.has_elem_size() || !match(sbuf.elem_size(), dbuf.elem_size())) return false;
    // A consumer reading d through a crop: the view's strides are F's coefficients, which may be
    // 0 (see cropped_where_stride_may_be_zero); keep the copy.
    for (int ci : g_.buffers[d].consumers) {
      for (const func::input& i : g_.funcs[ci].f->inputs()) {
        if (buffer_of(i.buffer) == d && !i.input_crop.empty()) return false;
      }
    }
    std::vector<expr> src_x;
    for (const interval_expr& i : internal::used_bounds(in)) {
      if (!is_point_interval(i)) return false;
      src_x.push_back(i.min);
    }
    SLINKY_ASSERT(bounds_.needed[d].size() == x.size(), "the region of the destination has an interval per variable");
    std::optional<reshape_view> v =
        match_reshape_view(sbuf, dbuf, src_x, x, bounds_.needed[s], bounds_.needed[d],
                           [&](const expr& e) { return invariant_coefficient(e, s, d) && valid_at(e, src.store); });
    if (!v) return false;
    buffer_alias a;
    if (v->condition.defined()) {
      // Checked once per evaluation, at the root of the program, and shared by every conditional
      // view (alias_plan::view_condition): it may read no loop variable and no intermediate.
      if (!valid_at(v->condition, loop_level())) return false;
      plan_.view_condition =
          plan_.view_condition.defined() ? simplify(plan_.view_condition && v->condition) : v->condition;
      a.conditional = true;
    }
    a.target = s;
    for (std::size_t k = 0; k < src_x.size(); ++k) a.unfolded_target_dims.push_back(static_cast<int>(k));
    a.dims = std::move(v->dims);
    a.base = buffer_at(sbuf.sym(), v->src_at);
    plan_.strides[s] = std::move(v->strides);
    plan_.buffers[d] = std::move(a);
    plan_.removed[fi][0] = true;
    return true;
  }

  // True if e can be evaluated where buffers stored at level l are allocated: it reads no loop
  // variable but those of the loops around l, and no field of an intermediate buffer (which may
  // not be allocated there).
  bool valid_at(const expr& e, loop_level l) const {
    std::set<var> outer;
    if (!l.root()) {
      for (loop_level c : g_.chain(l)) outer.insert(g_.loop_var(c));
    }
    bool ok = true;
    rewrite<variable>(e, [&](const variable* v, node_mutator&) -> expr {
      if (v->field == buffer_field::none) {
        if (loop_vars_.count(v->sym) && !outer.count(v->sym)) ok = false;
      } else {
        auto b = buffer_syms_.find(v->sym);
        if (b == buffer_syms_.end() || is_intermediate(b->second)) ok = false;
      }
      return expr(v);
    });
    return ok;
  }

  // The destination of padded copy fi becomes a view of its source, an intermediate allocated at
  // the padded size: the source's producer writes the values, the copy only the padding, outside
  // the input_crop, where the source holds nothing else. A destination stored inside a loop (or
  // folded along one) then takes no memory of its own, and the source's one allocation holds
  // both (API_COMPAT.md 5.2, item 12).
  bool alias_padded_from_source(int fi) {
    const func& f = *g_.funcs[fi].f;
    if (!f.is_padded_copy()) return false;
    const func::input& in = f.inputs()[0];
    if (!in.output_crop.empty() || !in.output_slice.empty()) return false;
    const std::vector<var>& x = f.outputs()[0].dims;
    const int s = buffer_of(in.buffer);
    const int d = buffer_of(f.outputs()[0].buffer);
    if (!is_intermediate(d) || plan_.is_alias(d) || declares_layout(*f.outputs()[0].buffer) || is_target(d)) {
      return false;
    }
    // The padding is written into the source's memory: the source must be the builder's own
    // allocation (not a view, not folded, no declared layout), read by this copy only (another
    // reader could need what lies under the padding), from a producer with one output (which
    // computes exactly what the copy reads, inside the input_crop).
    const buffer_node& src = g_.buffers[s];
    if (!is_intermediate(s) || plan_.is_alias(s) || declares_layout(*in.buffer) || folded(s)) return false;
    if (src.consumers.size() != 1 || uses_in(f, s) != 1) return false;
    if (producer_of(s).f->outputs().size() != 1) return false;
    if (!encloses(src.store, g_.buffers[d].store)) return false;
    // Each source dim is one destination dim translated by an offset known where the source is
    // allocated, the ranks equal: the padding (outside the input_crop in the destination) lands
    // outside the input_crop in the source, and the whole destination is a box of the source.
    if (in.buffer->rank() != x.size()) return false;
    linear_map m;
    if (!m.match(in, x, [&](const expr&) { return false; })) return false;
    std::vector<int> dst_dim;
    std::vector<bool> mapped(x.size(), false);
    for (const std::vector<expr>& c : m.coeff) {
      int j = -1;
      for (std::size_t jj = 0; jj < c.size(); ++jj) {
        if (is_zero_coeff(c[jj])) continue;
        if (j >= 0 || !is_constant(c[jj], 1)) return false;
        j = static_cast<int>(jj);
      }
      if (j < 0 || mapped[j]) return false;
      mapped[j] = true;
      dst_dim.push_back(j);
    }
    std::vector<expr> offset;
    for (std::size_t k = 0; k < dst_dim.size(); ++k) {
      offset.push_back(simplify(m.at[k] - x[dst_dim[k]]));
      if (!valid_at(offset.back(), src.store)) return false;
    }
    const span<const interval_expr> crop = internal::used_input_crop(in);
    for (const interval_expr& c : crop) {
      if ((c.min.defined() && !valid_at(c.min, src.store)) || (c.max.defined() && !valid_at(c.max, src.store))) {
        return false;
      }
    }
    // A transpose in a loop stays a copy (see alias_from_source).
    for (std::size_t k = 1; k < dst_dim.size(); ++k) {
      if (dst_dim[k] == 0 && !g_.funcs[fi].compute.root()) return false;
    }
    // Iterations of a parallel loop write their padding into the one source: they must not write
    // the same elements (unless the copy slides with the loop, each iteration its new part).
    for (loop_level l : g_.funcs[fi].compute_chain) {
      if (!encloses(src.store, l) || l == src.store || !g_.loop(l).is_parallel()) continue;
      if (!bounds_.slides_with(fi, l) && bounds_.windows_overlap(d, l)) return false;
    }
    if (cropped_where_stride_may_be_zero(d, s, m)) return false;

    // The destination's region over the loops between the two storage levels, in the source's
    // coordinates: what the source's allocation must hold too.
    const buffer_node& dst = g_.buffers[d];
    box_expr region = bounds_.needed[d];
    SLINKY_ASSERT(region.size() == x.size(), "the region of the destination has an interval per dim");
    if (dst.store != src.store) {
      const std::vector<loop_level> chain = g_.chain(dst.store);
      const box_expr full = bounds_.lift(region, chain, src.store, bounds_inference::view::full, true);
      const box_expr actual = bounds_.lift(region, chain, src.store, bounds_inference::view::actual, true);
      SLINKY_ASSERT(full.size() == region.size() && actual.size() == region.size(), "lifting keeps the rank");
      for (std::size_t j = 0; j < region.size(); ++j) region[j] = full[j] | actual[j];
    }
    box_expr holds(dst_dim.size());
    for (std::size_t k = 0; k < dst_dim.size(); ++k) {
      const interval_expr& r = region[dst_dim[k]];
      holds[k] = interval_expr(simplify(r.min + offset[k]), simplify(r.max + offset[k]));
      if (!valid_at(holds[k].min, src.store) || !valid_at(holds[k].max, src.store)) return false;
    }

    const var ssym = in.buffer->sym();
    const box_expr& needed = bounds_.needed[d];
    buffer_alias a;
    a.target = s;
    std::vector<expr> at(dst_dim.size());
    for (std::size_t k = 0; k < dst_dim.size(); ++k) at[k] = simplify(needed[dst_dim[k]].min + offset[k]);
    // Equal ranks and distinct destination dims: dst_dim is a permutation of the destination dims.
    SLINKY_ASSERT(dst_dim.size() == x.size() && offset.size() == x.size() && needed.size() == x.size(),
                  "a source dim, an offset and an interval per destination dim");
    for (std::size_t j = 0; j < x.size(); ++j) {
      std::size_t k = 0;
      while (k < dst_dim.size() && dst_dim[k] != static_cast<int>(j)) ++k;
      SLINKY_ASSERT(k < dst_dim.size(), "every destination dim is some source dim's");
      a.dims.push_back({needed[j], buffer_stride(ssym, static_cast<index_t>(k)), expr()});
    }
    a.base = buffer_at(ssym, at);
    plan_.buffers[d] = std::move(a);
    plan_.removed[fi][0] = true;
    // What the allocation of s (allocation_dims in emit.cc) takes the hull with, dim by dim.
    SLINKY_ASSERT(holds.size() == in.buffer->rank(), "an interval per dim of the source's allocation");
    plan_.also_holds[s] = std::move(holds);
    box_expr& inside = plan_.padding_inside[fi];
    inside.resize(x.size());
    for (std::size_t k = 0; k < dst_dim.size() && k < crop.size(); ++k) {
      const interval_expr& c = crop[k];
      inside[dst_dim[k]] = interval_expr(c.min.defined() ? simplify(c.min - offset[k]) : expr(),
                                         c.max.defined() ? simplify(c.max - offset[k]) : expr());
    }
    return true;
  }

  // True if the builder folds buffers a and b alike (or neither).
  bool same_folds(int a, int b) const {
    const std::vector<expr>& fa = bounds_.folds[a];
    const std::vector<expr>& fb = bounds_.folds[b];
    if (fa.size() != fb.size()) return false;
    for (std::size_t d = 0; d < fa.size(); ++d) {
      if (fa[d].defined() != fb[d].defined()) return false;
      if (fa[d].defined() && !match(fa[d], fb[d])) return false;
    }
    return true;
  }

  // Output o of func fi is written over input i. The input may itself be written over an earlier
  // buffer (an in-place chain: each link is the same memory). The output may be a pipeline
  // output: the first buffer of the chain is then a view of it, so the whole chain is computed in
  // the output's memory (in a loop, in its slice), with no allocation.
  bool alias_in_place(int fi, std::size_t i, std::size_t o) {
    const func& f = *g_.funcs[fi].f;
    const func::input& in = f.inputs()[i];
    const func::output& out = f.outputs()[o];
    const int ib = buffer_of(in.buffer);
    const int ob = buffer_of(out.buffer);
    const bool into_output = g_.buffers[ob].is_output && !g_.buffers[ob].is_input && !out.buffer->constant();
    if (!is_intermediate(ib) || (!is_intermediate(ob) && !into_output)) return false;
    if ((plan_.is_alias(ib) && !plan_.buffers[ib].same) || plan_.is_alias(ob)) return false;
    // Folds (the builder's: a declared one is a declared layout) only where the chain's memory is
    // the output's (which holds its whole range), or the same on both sides of a link (a ring
    // buffer shared by two funcs reading and writing the same window).
    if (declares_layout(*in.buffer)) return false;
    if (!into_output && (declares_layout(*out.buffer) || !same_folds(ib, ob))) return false;
    if (in.buffer->rank() != out.buffer->rank() || !match(in.buffer->elem_size(), out.buffer->elem_size()))
      return false;
    if (g_.buffers[ib].consumers.size() != 1 || uses_in(f, ib) != 1) return false;
    if (!into_output && g_.buffers[ib].store != g_.buffers[ob].store) return false;
    // Read pointwise: each element of the input is read only for the same element of the output.
    const span<const interval_expr> bounds = internal::used_bounds(in);
    if (bounds.size() != out.dims.size()) return false;
    for (std::size_t d = 0; d < out.dims.size(); ++d) {
      if (!is_point_interval(bounds[d])) return false;
      std::optional<var> v = as_variable(bounds[d].min);
      if (!v || *v != out.dims[d]) return false;
    }
    // Not the memory of other buffers already (another in-place output of this func, or the
    // destination of a copy).
    if (is_target(ib) || is_target(ob)) return false;
    if (into_output) return chain_into_output(fi, in, ib, ob);
    buffer_alias a;
    a.target = ib;
    a.same = true;
    plan_.buffers[ob] = std::move(a);
    return true;
  }

  // The in-place chain ending in input `in` (buffer ib) of func fi, which writes pipeline output
  // ob over it, is computed in ob's memory: the first buffer of the chain becomes a view of ob
  // (the others are the same memory already). Every func of the chain has one output, so each
  // computes exactly the region fi reads, which is within what fi writes of ob.
  bool chain_into_output(int fi, const func::input& in, int ib, int ob) {
    if (g_.funcs[fi].f->outputs().size() != 1) return false;
    int first = ib;
    for (;;) {
      SLINKY_ASSERT(first >= 0 && first < static_cast<int>(g_.buffers.size()), "a buffer of the graph");
      if (g_.funcs[g_.buffers[first].producer].f->outputs().size() != 1) return false;
      if (!plan_.is_alias(first)) break;
      SLINKY_ASSERT(plan_.buffers[first].same, "only in-place links are followed");
      first = plan_.buffers[first].target;
    }
    // The first buffer is the memory of the chain's other links only.
    for (const buffer_alias& a : plan_.buffers) {
      if (a.target == first && !a.same) return false;
    }
    const std::vector<var>& x = g_.funcs[fi].f->outputs()[0].dims;
    if (g_.buffers[first].buffer->rank() != x.size()) return false;
    // The view covers what the chain computes where its first buffer is stored (a loop's slice
    // of the output), so each func of the chain sees its input at its output's address.
    const box_expr& region = bounds_.needed[first];
    if (region.size() != x.size()) return false;
    buffer_alias a;
    a.target = ob;
    std::vector<expr> at(x.size());
    for (std::size_t j = 0; j < x.size(); ++j) {
      add_destination_dim(a, in, ob, static_cast<int>(j), expr(0), expr(), false, at[j], region[j]);
    }
    a.base = buffer_at(g_.buffers[ob].buffer->sym(), at);
    plan_.buffers[first] = std::move(a);
    return true;
  }

  // The symbols of loop variables, and the buffers by symbol.
  std::set<var> loop_vars_;
  std::map<var, int> buffer_syms_;

public:
  alias_planner(const graph& g, const bounds_inference& bounds, alias_plan& plan)
      : g_(g), bounds_(bounds), plan_(plan) {
    for (const func_node& fn : g_.funcs) {
      for (const func::loop_info& l : fn.f->loops()) loop_vars_.insert(l.var);
      for (var v : fn.loop_syms) loop_vars_.insert(v);
      for (const func::output& o : fn.f->outputs()) {
        for (var v : o.dims) loop_vars_.insert(v);
      }
    }
    for (std::size_t b = 0; b < g_.buffers.size(); ++b) buffer_syms_[g_.buffers[b].buffer->sym()] = static_cast<int>(b);
  }

  void run() {
    // Copies, consumers first, so a chain of copies collapses into the last destination.
    for (int fi = static_cast<int>(g_.funcs.size()) - 1; fi >= 0; --fi) {
      const func& f = *g_.funcs[fi].f;
      if (!f.is_copy()) continue;
      const std::size_t sources = f.is_padded_copy() ? 1 : f.inputs().size();
      bool removed = false;
      for (std::size_t i = 0; i < sources; ++i) removed = alias_into_destination(fi, i) || removed;
      if (!removed && !alias_from_source(fi)) alias_padded_from_source(fi);
    }
    for (std::size_t fi = 0; fi < g_.funcs.size(); ++fi) {
      const func& f = *g_.funcs[fi].f;
      const std::uint64_t mask = f.attrs().allow_in_place;
      if (f.is_copy() || mask == 0) continue;
      const std::size_t ni = f.inputs().size();
      for (std::size_t o = 0; o < f.outputs().size(); ++o) {
        for (std::size_t i = 0; i < ni; ++i) {
          const std::size_t bit = o * ni + i;
          if (bit < 64 && (mask >> bit) & 1 && alias_in_place(static_cast<int>(fi), i, o)) break;
        }
      }
    }
  }
};

}  // namespace

alias_plan plan_aliases(const graph& g, const bounds_inference& bounds, bool enabled) {
  alias_plan plan;
  plan.buffers.resize(g.buffers.size());
  plan.removed.resize(g.funcs.size());
  plan.padding_inside.resize(g.funcs.size());
  plan.also_holds.resize(g.buffers.size());
  plan.strides.resize(g.buffers.size());
  for (std::size_t fi = 0; fi < g.funcs.size(); ++fi) plan.removed[fi].resize(g.funcs[fi].f->inputs().size());
  if (enabled) alias_planner(g, bounds, plan).run();
  // What the emitter indexes: per buffer a target (-1 or another buffer) and the extra region of
  // its allocation (empty or one interval per dim); per func a removed flag per input.
  for (std::size_t b = 0; b < plan.buffers.size(); ++b) {
    const int target = plan.buffers[b].target;
    SLINKY_ASSERT(target >= -1 && target < static_cast<int>(g.buffers.size()) && target != static_cast<int>(b),
                  "an alias targets another buffer of the graph, or none (-1)");
    SLINKY_ASSERT(!plan.buffers[b].same || plan.buffers[b].dims.empty(), "an in-place alias is its target, no view");
    SLINKY_ASSERT(plan.also_holds[b].empty() || plan.also_holds[b].size() == g.buffers[b].buffer->rank(),
                  "an allocation holds an extra box of its own rank");
  }
  for (std::size_t fi = 0; fi < g.funcs.size(); ++fi) {
    SLINKY_ASSERT(plan.removed[fi].size() == g.funcs[fi].f->inputs().size(), "a removed flag per input");
  }
  return plan;
}

}  // namespace slinky
