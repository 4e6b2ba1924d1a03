// The runtime's copy between buffers, as a copy_stmt asks for it: dst(x) = src(f(x)) at every
// point x of dst, or pad's value where f(x) is outside src (dst is left unchanged there without
// a pad), done as a few calls of an impl on strided views of equal shape (docs/copies.md). It
// evaluates no expression and needs no evaluator: f is any function of the dst coordinates that
// is affine over the ranges a plan per dst dimension gives (the evaluator runs a copy_stmt with
// f = its src_x and its plan evaluated). It allocates nothing on the heap: its scratch memory
// comes from the caller's stack. Not part of the public API.
#ifndef SLINKY_RUNTIME_COPY_H
#define SLINKY_RUNTIME_COPY_H

#include <alloca.h>

#include <algorithm>
#include <cstddef>
#include <initializer_list>

#include "slinky/base/arithmetic.h"
#include "slinky/runtime/buffer.h"
#include "slinky/runtime/stmt.h"

namespace slinky {
namespace internal {

// How a dst dimension x is cut into ranges over which f is affine (copy_stmt::dim_plan, with
// its expressions evaluated). period <= 0: f is not affine in x, each index of x is copied
// separately. Otherwise f is affine in x within each block of `period` consecutive indices that
// starts where (x + offset) % period == 0; period 1 is affine everywhere (offset is not read).
struct copy_dim_plan {
  index_t period;
  index_t offset;
};

// The part of a copy that does not depend on f: its buffers, the piece being copied, and how
// a piece is copied (copy.cc). copy_runner cuts dst into the pieces.
class copy_pieces {
public:
  // A virtual dimension of a piece.
  struct vdim {
    std::size_t j;  // The dst dimension.
    index_t step;   // dst coordinate step of one index of this virtual dimension.
    index_t extent;
  };

  // Whether pad varies (it is not one value broadcast everywhere).
  static bool pad_varies(const raw_buffer* pad) {
    if (!pad) return false;
    for (std::size_t d = 0; d < pad->rank; ++d) {
      if (pad->dim(d).extent() != 1) return true;
    }
    return false;
  }
  // Whether a pad that varies can be read through strided views at dst's coordinates: it covers
  // dst in each dimension where it varies, and is not folded there.
  static bool pad_covers(const raw_buffer& pad, const raw_buffer& dst) {
    for (std::size_t d = 0; d < pad.rank; ++d) {
      const dim& pd = pad.dim(d);
      if (pd.extent() == 1 || pd.stride() == 0) continue;
      if (d >= dst.rank || pd.is_folded()) return false;
      const dim& dd = dst.dim(d);
      if (dd.min() < pd.min() || dd.max() > pd.max()) return false;
    }
    return true;
  }
  // Whether pad is read element by element: it varies and does not cover dst. A copy with such a
  // pad copies each element separately, whatever its plans say.
  static bool per_element(const raw_buffer* pad, const raw_buffer& dst) {
    return pad_varies(pad) && (!pad->base || !pad_covers(*pad, dst));
  }
  // The bytes of scratch memory for a copy into a dst of rank `rank` from `src_rank` src
  // coordinates.
  static std::size_t scratch_bytes(std::size_t rank, std::size_t src_rank) {
    return sizeof(vdim) * 2 * rank + sizeof(index_t) * (rank + 2 * src_rank + src_rank * 2 * rank) + 1;
  }

  // The bytes of scratch memory for trying a copy as a reshape (copy_runner::try_flat).
  static std::size_t flat_scratch_bytes(std::size_t rank, std::size_t src_rank) {
    return sizeof(index_t) * (src_rank * rank + 4 * src_rank + rank) + sizeof(bool) * rank + 1;
  }

protected:
  copy_pieces(const raw_buffer& src, std::size_t src_rank, const raw_buffer& dst, const raw_buffer* pad,
              const copy_stmt::callable& impl, void* scratch)
      : src_(src), dst_(dst), pad_(pad), impl_(impl), src_rank_(src_rank), rank_(dst.rank),
        per_element_(per_element(pad, dst)), pad_view_(pad_varies(pad) && !per_element_) {
    vdims_ = static_cast<vdim*>(scratch);
    x0_ = reinterpret_cast<index_t*>(vdims_ + 2 * rank_);
    s0_ = x0_ + rank_;
    s_ = s0_ + src_rank_;
    d_ = s_ + src_rank_;
  }

  // Copies the box [lo, hi] (nv_ virtual coordinates each) of the current piece: the dst points
  // x0_ + sum_v u[v] * vdims_[v].step along dimension vdims_[v].j, for lo[v] <= u[v] <= hi[v],
  // reading src at s0_[k] + sum_v u[v] * d_[k * nv_ + v].
  void copy_box(index_t* lo, index_t* hi);

  // A copy whose src coordinates are the digits of one mixed radix number F (a flat index of
  // dst), checked at run time (copy_stmt::flat): src coordinate k with q[k] > 0 is
  // (F / q[k]) % e[k] (no modulus if e[k] == 0), F = c + sum_j a[j] * x[j].
  struct flat_plan {
    index_t* a;
    index_t c;
    index_t* q;
    index_t* e;
    bool* outer;             // Per dst dimension: iterated per index, not part of a run.
    std::size_t run_dim;     // The dst dimension a run starts along (rank_: runs of 1).
    index_t run_extent;      // The dst points of a segment (the dims not outer), in F order.
    index_t run_dst_stride;  // Bytes between them in dst,
    index_t run_src_stride;  // and in src.
    index_t block;           // src is affine in F within blocks of F of this size (0: everywhere).
    // Whole blocks of src that start blocks_src_stride bytes apart (the step of the block's
    // digit) within each span of F of size block2 (0: everywhere), or not at all
    // (!blocks_even: the block's digit is folded); they are copied as one 2-D view.
    bool blocks_even;
    index_t blocks_src_stride;
    index_t block2;
  };
  flat_plan flat_;

  // Sets up flat_ from the evaluated copy_stmt::flat, with coefficients coeffs[k * rank_ + j]
  // and offsets of the digits' linear forms; false where the copy is not done that way (not a
  // mixed radix, folded dst dims or folds of src that do not divide their digit's modulus, src
  // coordinates that may leave src, a pad with non-digit coordinates).
  bool plan_flat(const index_t* coeffs, const index_t* offsets);
  // Copies the segment of dst that starts at x0_ (src coordinates s0_) along the dims that are
  // not outer: one call per run within a block of src, where whole blocks evenly spaced in src
  // are one call together (a 2-D view: the run, and the blocks).
  void flat_segment();

  const raw_buffer& src_;
  const raw_buffer& dst_;
  const raw_buffer* pad_;
  const copy_stmt::callable& impl_;
  std::size_t src_rank_;
  std::size_t rank_;  // dst.rank
  bool per_element_;
  bool pad_view_;       // pad varies and is read through strided views at dst's coordinates.
  index_t* x0_;         // dst coordinates of the current piece's origin.
  vdim* vdims_;         // The current piece's virtual dimensions, innermost first.
  std::size_t nv_ = 0;  // How many.
  index_t* s0_;         // src coordinates at the origin.
  index_t* s_;          // src coordinates elsewhere.
  index_t* d_;          // d_[k * V + v]: src coordinate k's step along virtual dim v.

private:
  // How copy_box copies a piece (copy.cc).
  index_t step(std::size_t k, std::size_t v) const { return d_[k * nv_ + v]; }
  index_t src_at(std::size_t k, const index_t* u) const;
  index_t dst_at(std::size_t j, const index_t* u) const;
  void split(index_t* lo, index_t* hi, std::size_t v, index_t at);
  bool split_folded(index_t* lo, index_t* hi, const dim& dd, index_t c_lo, index_t cmin, index_t cmax,
                    const index_t* steps, std::size_t stride);
  void pad_outside(const index_t* lo, const index_t* hi, const index_t* vlo, const index_t* vhi);
  void call(const index_t* lo, const index_t* hi, const index_t* vlo, const index_t* vhi,
            const index_t* skip_lo = nullptr, const index_t* skip_hi = nullptr);
};

// Runs a copy from src to dst, padded with pad (null: no padding), by calls of impl(src_view,
// dst_view, pad_view) (slinky::copy if impl is empty). The map f says where dst points read src:
// f.src_at(x, s) writes to s the first src_rank src coordinates of the dst point x (dst.rank
// coordinates), and f.plan(j) is the plan of dst dimension j (asked for at each visit of the
// dimension, unless the pad is read per element). f.flat(coeffs, offsets, q, e) evaluates
// copy_stmt::flat (false if it is empty; q[k] = 0 for a coordinate that is not a digit, e[k] = 0
// for no modulus; false if a divisor or modulus is not positive). dst has elements; src_rank <= src.rank;
// scratch is scratch_bytes(dst.rank, src_rank) of memory with the alignment of index_t that
// outlives the runner.
//
// The dst bounds are cut into pieces over which the src coordinates are affine: a dimension of
// period p > 1 becomes a head, a body of whole blocks (two virtual dimensions: the index in the
// block and the block) and a tail. In each piece the src coordinates are measured at the piece's
// origin and one step along each virtual dimension, which gives the views' strides; a piece is
// split further where a folded dimension would wrap, or where a src dimension that depends on
// several virtual dimensions leaves src. The map is a template parameter, held by value, so that
// the evaluator's expression evaluation is inlined here.
template <typename Map>
class copy_runner : copy_pieces {
public:
  copy_runner(const raw_buffer& src, std::size_t src_rank, const raw_buffer& dst, const raw_buffer* pad,
              const copy_stmt::callable& impl, Map f, void* scratch)
      : copy_pieces(src, src_rank, dst, pad, impl, scratch), f_(f) {}

  void run() {
    if (try_flat()) return;
    pieces(0);
  }

private:
  Map f_;

  // Copies dst as a reshape (copy_stmt::flat) if it is one: true if done.
  bool try_flat() {
    char* scratch = static_cast<char*>(alloca(flat_scratch_bytes(rank_, src_rank_)));
    index_t* coeffs = reinterpret_cast<index_t*>(scratch);
    index_t* offsets = coeffs + src_rank_ * rank_;
    flat_.q = offsets + src_rank_;
    flat_.e = flat_.q + src_rank_;
    flat_.a = flat_.e + src_rank_;
    flat_.outer = reinterpret_cast<bool*>(flat_.a + rank_ + src_rank_);
    if (!f_.flat(coeffs, offsets, flat_.q, flat_.e)) return false;
    if (!plan_flat(coeffs, offsets)) return false;
    flat_outer(0);
    return true;
  }

  void flat_outer(std::size_t j) {
    if (j == rank_) {
      f_.src_at(x0_, s0_);
      return flat_segment();
    }
    if (!flat_.outer[j]) {
      x0_[j] = dst_.dim(j).min();
      return flat_outer(j + 1);
    }
    for (index_t x = dst_.dim(j).min(); x <= dst_.dim(j).max(); ++x) {
      x0_[j] = x;
      flat_outer(j + 1);
    }
  }

  void pieces(std::size_t j) {
    if (j == rank_) return leaf();
    const index_t a = dst_.dim(j).min();
    const index_t b = dst_.dim(j).max();
    const copy_dim_plan plan = per_element_ ? copy_dim_plan{0, 0} : f_.plan(j);
    const index_t period = plan.period;
    if (period <= 0) {
      for (index_t x = a; x <= b; ++x) {
        x0_[j] = x;
        pieces(j + 1);
      }
      return;
    }
    if (period == 1) return piece(j, a, {{j, 1, b - a + 1}});
    // Blocks start where (x + offset) % period == 0: a1 is the first start >= a, b1 the last
    // start <= b + 1.
    const index_t offset = plan.offset;
    const index_t a1 = a + euclidean_mod(-(a + offset), period);
    const index_t b1 = b + 1 - euclidean_mod(b + 1 + offset, period);
    if (a1 > b) return piece(j, a, {{j, 1, b - a + 1}});
    if (a1 > a) piece(j, a, {{j, 1, a1 - a}});
    if (b1 > a1) {
      const index_t blocks = (b1 - a1) / period;
      if (blocks == 1) {
        piece(j, a1, {{j, 1, period}});
      } else {
        piece(j, a1, {{j, 1, period}, {j, period, blocks}});
      }
    }
    if (b1 <= b) piece(j, b1, {{j, 1, b - b1 + 1}});
  }

  void piece(std::size_t j, index_t origin, std::initializer_list<vdim> dims) {
    x0_[j] = origin;
    for (const vdim& v : dims) vdims_[nv_++] = v;
    pieces(j + 1);
    nv_ -= dims.size();
  }

  void leaf() {
    const std::size_t V = nv_;
    f_.src_at(x0_, s0_);
    std::fill(d_, d_ + src_rank_ * V, 0);
    for (std::size_t v = 0; v < V; ++v) {
      if (vdims_[v].extent <= 1) continue;
      const index_t saved = x0_[vdims_[v].j];
      x0_[vdims_[v].j] += vdims_[v].step;
      f_.src_at(x0_, s_);
      x0_[vdims_[v].j] = saved;
      for (std::size_t k = 0; k < src_rank_; ++k) d_[k * V + v] = s_[k] - s0_[k];
    }
    index_t* lo = static_cast<index_t*>(alloca(sizeof(index_t) * (2 * V + 1)));
    index_t* hi = lo + V;
    for (std::size_t v = 0; v < V; ++v) {
      lo[v] = 0;
      hi[v] = vdims_[v].extent - 1;
    }
    copy_box(lo, hi);
  }
};

}  // namespace internal
}  // namespace slinky

#endif  // SLINKY_RUNTIME_COPY_H
