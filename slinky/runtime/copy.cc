// How a copy (copy.h) copies one piece of dst, over which the src coordinates are affine: by one
// call of the impl on strided views of src, dst and pad, after splitting the piece where a
// folded dimension would wrap around its fold or where src runs out along several virtual
// dimensions at once (docs/copies.md). Where src runs out along one, the src view is restricted
// and the impl writes the padding around it.
#include "slinky/runtime/copy.h"

#include <alloca.h>

#include <algorithm>

#include "slinky/base/arithmetic.h"
#include "slinky/base/span.h"
#include "slinky/base/util.h"

namespace slinky {
namespace internal {

// Room for n dims (at least one) on the stack of the calling function.
#define SLINKY_STACK_DIMS(n) static_cast<dim*>(alloca(sizeof(dim) * ((n) > 0 ? (n) : 1)))

// The src coordinate k at virtual coordinates u.
index_t copy_pieces::src_at(std::size_t k, const index_t* u) const {
  index_t c = s0_[k];
  for (std::size_t v = 0; v < nv_; ++v) c += step(k, v) * u[v];
  return c;
}

// The dst coordinate j at virtual coordinates u.
index_t copy_pieces::dst_at(std::size_t j, const index_t* u) const {
  index_t c = x0_[j];
  for (std::size_t v = 0; v < nv_; ++v) {
    if (vdims_[v].j == j) c += vdims_[v].step * u[v];
  }
  return c;
}

// Splits the box along v at `at` (lo[v] < at <= hi[v]) and copies both parts.
void copy_pieces::split(index_t* lo, index_t* hi, std::size_t v, index_t at) {
  const std::size_t V = nv_;
  index_t* lo2 = static_cast<index_t*>(alloca(sizeof(index_t) * (2 * V + 1)));
  index_t* hi2 = lo2 + V;
  std::copy(lo, lo + V, lo2);
  std::copy(hi, hi + V, hi2);
  hi2[v] = at - 1;
  copy_box(lo2, hi2);
  std::copy(lo, lo + V, lo2);
  std::copy(hi, hi + V, hi2);
  lo2[v] = at;
  copy_box(lo2, hi2);
}

// The first u in (lo, hi] at which c(u) = c_lo + d * (u - lo) leaves the fold period of c_lo.
SLINKY_INLINE static index_t fold_boundary(index_t c_lo, index_t d, index_t fold, index_t lo) {
  const index_t block = euclidean_div(c_lo, fold) * fold;
  if (d > 0) return lo + ceil_div(block + fold - c_lo, d);
  return lo + (c_lo - block) / -d + 1;
}

// Where a coordinate along dimension dd of a buffer wraps around its fold within [lo, hi]
// along the only virtual dimension v it moves with, the box is split there; with several,
// at the middle of the outermost.
bool copy_pieces::split_folded(index_t* lo, index_t* hi, const dim& dd, index_t c_lo, index_t cmin, index_t cmax,
                               const index_t* steps, std::size_t stride) {
  if (!dd.is_folded(cmin, cmax)) return false;
  const std::size_t V = nv_;
  std::size_t moving = V;
  int count = 0;
  for (std::size_t v = 0; v < V; ++v) {
    if (steps[v * stride] != 0 && hi[v] > lo[v]) {
      moving = v;
      ++count;
    }
  }
  if (count == 0) return false;
  if (count > 1) {
    split(lo, hi, moving, lo[moving] + (hi[moving] - lo[moving] + 1) / 2);
    return true;
  }
  // One piece per fold period, in a loop (not recursion: a range may cross many periods).
  const index_t d = steps[moving * stride];
  index_t* lo2 = static_cast<index_t*>(alloca(sizeof(index_t) * (2 * V + 1)));
  index_t* hi2 = lo2 + V;
  index_t c = c_lo;
  for (index_t u = lo[moving]; u <= hi[moving];) {
    const index_t next = std::min(fold_boundary(c, d, dd.fold_factor(), u), hi[moving] + 1);
    std::copy(lo, lo + V, lo2);
    std::copy(hi, hi + V, hi2);
    lo2[moving] = u;
    hi2[moving] = next - 1;
    copy_box(lo2, hi2);
    c += d * (next - u);
    u = next;
  }
  return true;
}

void copy_pieces::copy_box(index_t* lo, index_t* hi) {
  const std::size_t V = nv_;
  // Folded dst dimensions must not wrap within the box, first: everything below writes the
  // whole box (its padding too) through one strided view.
  index_t* dst_steps = static_cast<index_t*>(alloca(sizeof(index_t) * (V + 1)));
  for (std::size_t j = 0; j < rank_; ++j) {
    const dim& dd = dst_.dim(j);
    if (dd.fold_factor() <= 0) continue;
    index_t cmin = dst_at(j, lo), cmax = cmin;
    for (std::size_t v = 0; v < V; ++v) {
      dst_steps[v] = vdims_[v].j == j ? vdims_[v].step : 0;
      cmax += dst_steps[v] * (hi[v] - lo[v]);
    }
    if (split_folded(lo, hi, dd, cmin, cmin, cmax, dst_steps, 1)) return;
  }
  // The part of the box where src is read: vlo, vhi.
  index_t* vlo = static_cast<index_t*>(alloca(sizeof(index_t) * (2 * V + 1)));
  index_t* vhi = vlo + V;
  std::copy(lo, lo + V, vlo);
  std::copy(hi, hi + V, vhi);
  bool src_empty = !src_.base;
  // An empty dim leaves src without elements, even one of stride 0 (which contains every
  // coordinate, so the bounds below would not tell).
  for (std::size_t k = 0; k < src_.rank && !src_empty; ++k) src_empty = src_.dims[k].empty();
  for (std::size_t k = 0; k < src_rank_ && !src_empty; ++k) {
    const dim& sd = src_.dim(k);
    index_t cmin = src_at(k, lo), cmax = cmin;
    std::size_t moving = V;
    int count = 0;
    for (std::size_t v = 0; v < V; ++v) {
      const index_t d = step(k, v);
      if (d == 0 || hi[v] == lo[v]) continue;
      (d > 0 ? cmax : cmin) += d * (hi[v] - lo[v]);
      moving = v;
      ++count;
    }
    // A stride-0 dim contains every coordinate.
    if (sd.stride() != 0 && (cmin < sd.min() || cmax > sd.max())) {
      if (count == 0) {
        src_empty = true;
      } else if (count == 1) {
        // Restrict the moving dimension to where the coordinate is inside src.
        const index_t d = step(k, moving);
        const index_t base = src_at(k, lo) - d * lo[moving];
        index_t ulo, uhi;
        if (d > 0) {
          ulo = ceil_div(sd.min() - base, d);
          uhi = euclidean_div(sd.max() - base, d);
        } else {
          ulo = ceil_div(base - sd.max(), -d);
          uhi = euclidean_div(base - sd.min(), -d);
        }
        vlo[moving] = std::max(vlo[moving], ulo);
        vhi[moving] = std::min(vhi[moving], uhi);
        if (vlo[moving] > vhi[moving]) src_empty = true;
      } else {
        // Leaving src along a combination of dimensions: split the outermost one.
        split(lo, hi, moving, lo[moving] + (hi[moving] - lo[moving] + 1) / 2);
        return;
      }
    }
  }
  // Folded dimensions must not wrap within the box.
  for (std::size_t k = 0; k < src_rank_ && !src_empty; ++k) {
    const dim& sd = src_.dim(k);
    if (sd.fold_factor() <= 0) continue;
    index_t cmin = src_at(k, vlo), cmax = cmin;
    for (std::size_t v = 0; v < V; ++v) (step(k, v) > 0 ? cmax : cmin) += step(k, v) * (vhi[v] - vlo[v]);
    if (split_folded(vlo, vhi, sd, src_at(k, vlo), cmin, cmax, &d_[k * V], 1)) {
      // The src part was split; the dst parts outside it are padding only.
      pad_outside(lo, hi, vlo, vhi);
      return;
    }
  }
  call(lo, hi, src_empty ? nullptr : vlo, vhi);
}

// Copies the padding of the box [lo, hi] outside [vlo, vhi] (whose src part has been copied).
void copy_pieces::pad_outside(const index_t* lo, const index_t* hi, const index_t* vlo, const index_t* vhi) {
  if (!pad_) return;
  const std::size_t V = nv_;
  index_t* empty_lo = static_cast<index_t*>(alloca(sizeof(index_t) * (V + 1)));
  index_t* empty_hi = static_cast<index_t*>(alloca(sizeof(index_t) * (V + 1)));
  for (std::size_t v = 0; v < V; ++v) {
    empty_lo[v] = vlo[v];
    empty_hi[v] = vhi[v];
  }
  call(lo, hi, nullptr, nullptr, empty_lo, empty_hi);
}

// Calls impl for the dst box [lo, hi], reading src in [vlo, vhi] (no src if vlo is null).
// With skip_lo, the dst box [skip_lo, skip_hi] is left alone (only padding is written).
void copy_pieces::call(const index_t* lo, const index_t* hi, const index_t* vlo, const index_t* vhi,
                       const index_t* skip_lo, const index_t* skip_hi) {
  const std::size_t V = nv_;
  const std::size_t elem_size = dst_.elem_size;
  dim* dst_dims = SLINKY_STACK_DIMS(V);
  dim* src_dims = SLINKY_STACK_DIMS(V);
  dim* pad_dims = SLINKY_STACK_DIMS(V);
  for (std::size_t v = 0; v < V; ++v) {
    dst_dims[v] = dim(lo[v], hi[v], vdims_[v].step * dst_.dim(vdims_[v].j).stride());
    pad_dims[v] = dim(lo[v], hi[v], 0);
  }
  index_t* x = static_cast<index_t*>(alloca(sizeof(index_t) * (rank_ + 1)));
  for (std::size_t j = 0; j < rank_; ++j) x[j] = dst_at(j, lo);
  raw_buffer dst_view{dst_.address_at(span<const index_t>(x, rank_)), elem_size, V, dst_dims};

  raw_buffer pad_view{nullptr, elem_size, V, pad_dims};
  if (pad_ && pad_->base) {
    if (!per_element_) {
      pad_view.base = pad_->base;
    } else {
      // V == 0: the pad element at x, if pad has it.
      bool inside = true;
      for (std::size_t j = 0; j < pad_->rank && j < rank_; ++j) {
        const dim& pd = pad_->dim(j);
        if (pd.extent() == 1) {
          x[j] = pd.min();
        } else {
          inside = inside && pd.contains(x[j]);
        }
      }
      if (inside) pad_view.base = pad_->address_at(span<const index_t>(x, std::min(rank_, pad_->rank)));
    }
  }

  raw_buffer src_view{nullptr, elem_size, V, src_dims};
  if (skip_lo) {
    // A src that covers the skipped box and has no memory: copy writes only the padding.
    // (A non-zero stride: pad() reads a stride-0 entry as unbounded.)
    for (std::size_t v = 0; v < V; ++v) src_dims[v] = dim(skip_lo[v], skip_hi[v]);
    slinky::pad(src_dims, dst_view, pad_view);
    return;
  }
  if (vlo) {
    index_t* c = static_cast<index_t*>(alloca(sizeof(index_t) * (src_rank_ + 1)));
    for (std::size_t k = 0; k < src_rank_; ++k) c[k] = src_at(k, vlo);
    src_view.base = src_.address_at(span<const index_t>(c, src_rank_));
    for (std::size_t v = 0; v < V; ++v) {
      index_t stride = 0;
      for (std::size_t k = 0; k < src_rank_; ++k) stride += step(k, v) * src_.dim(k).stride();
      src_dims[v] = dim(vlo[v], vhi[v], stride);
    }
  } else {
    for (std::size_t v = 0; v < V; ++v) src_dims[v] = dim(0, -1, 0);
    if (V == 0) src_view.base = nullptr;
  }
  if (impl_) {
    impl_(src_view, dst_view, pad_view);
  } else {
    slinky::copy(src_view, dst_view, pad_view);
  }
}

}  // namespace internal
}  // namespace slinky
