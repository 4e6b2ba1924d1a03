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
    if (pad_view_) {
      // pad at the box's dst coordinates, moving with them where it varies.
      for (std::size_t j = 0; j < pad_->rank && j < rank_; ++j) {
        if (pad_->dim(j).extent() == 1) x[j] = pad_->dim(j).min();
      }
      pad_view.base = pad_->address_at(span<const index_t>(x, std::min(rank_, pad_->rank)));
      for (std::size_t v = 0; v < V; ++v) {
        const std::size_t j = vdims_[v].j;
        if (j < pad_->rank && pad_->dim(j).extent() != 1) {
          pad_dims[v] = dim(lo[v], hi[v], vdims_[v].step * pad_->dim(j).stride());
        }
      }
    } else if (!per_element_) {
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

// The digit of src coordinate k of F.
static index_t flat_digit(index_t f, index_t q, index_t e) {
  const index_t d = euclidean_div(f, q);
  return e > 0 ? euclidean_mod(d, e) : d;
}

bool copy_pieces::plan_flat(const index_t* coeffs, const index_t* offsets) {
  flat_plan& p = flat_;
  const std::size_t K = src_rank_;
  if (!src_.base) return false;
  for (std::size_t k = 0; k < src_.rank; ++k) {
    if (src_.dims[k].empty()) return false;
  }
  // The top digit (largest divisor) gives F; the others must be digits of the same F.
  std::size_t top = K, first = K;
  std::size_t digits = 0;
  bool div_mod = false;
  bool others = false;
  for (std::size_t k = 0; k < K; ++k) {
    if (p.q[k] <= 0) {
      others = true;
      continue;
    }
    ++digits;
    div_mod = div_mod || p.q[k] != 1 || p.e[k] != 0;
    if (p.q[k] == 1) first = k;
    if (top == K || p.q[k] > p.q[top]) {
      top = k;
    } else if (p.q[k] == p.q[top]) {
      return false;
    }
  }
  // Without a division or modulus the copy is affine: the plans do it.
  if (!div_mod || first == K) return false;
  // With a pad, coordinates that are not digits might leave src and need it.
  if (pad_ && others) return false;
  for (std::size_t j = 0; j < rank_; ++j) p.a[j] = coeffs[top * rank_ + j];
  p.c = offsets[top];
  // A mixed radix: from q == 1 up, each divisor is the previous one times its modulus.
  std::size_t seen = 1;
  for (std::size_t k = first; k != top; ++seen) {
    index_t next_q;
    if (p.e[k] <= 0 || __builtin_mul_overflow(p.q[k], p.e[k], &next_q)) return false;
    std::size_t next = K;
    for (std::size_t i = 0; i < K; ++i) {
      if (p.q[i] == next_q) next = i;
    }
    if (next == K) return false;
    // Digits of L mod q * e are digits of F when L == F mod q * e.
    for (std::size_t j = 0; j < rank_; ++j) {
      if (euclidean_mod(coeffs[k * rank_ + j] - p.a[j], next_q) != 0) return false;
    }
    if (euclidean_mod(offsets[k] - p.c, next_q) != 0) return false;
    k = next;
  }
  if (seen != digits) return false;
  // The range of F over dst, and the digits' ranges over it, which must lie inside src.
  index_t f_min = p.c, f_max = p.c;
  for (std::size_t j = 0; j < rank_; ++j) {
    const dim& dd = dst_.dim(j);
    if (p.a[j] < 0 || dd.is_folded()) return false;
    f_min += p.a[j] * dd.min();
    f_max += p.a[j] * dd.max();
  }
  for (std::size_t k = 0; k < K; ++k) {
    if (p.q[k] <= 0) continue;
    const dim& sd = src_.dim(k);
    if (sd.stride() == 0) continue;
    index_t lo = euclidean_div(f_min, p.q[k]), hi = euclidean_div(f_max, p.q[k]);
    if (p.e[k] > 0) {
      if (euclidean_div(lo, p.e[k]) != euclidean_div(hi, p.e[k])) {
        lo = 0;
        hi = p.e[k] - 1;
      } else {
        lo = euclidean_mod(lo, p.e[k]);
        hi = euclidean_mod(hi, p.e[k]);
      }
    }
    if (lo < sd.min() || hi > sd.max()) return false;
  }
  // The dst dims of a segment: from the smallest coefficient up, while dst stays affine in F
  // (each coefficient and stride the previous one's times its extent).
  for (std::size_t j = 0; j < rank_; ++j) p.outer[j] = true;
  p.run_dim = rank_;
  for (std::size_t j = 0; j < rank_; ++j) {
    if (p.a[j] > 0 && dst_.dim(j).extent() > 1 && (p.run_dim == rank_ || p.a[j] < p.a[p.run_dim])) p.run_dim = j;
  }
  p.run_extent = 1;
  p.run_dst_stride = 0;
  p.run_src_stride = 0;
  p.block = 0;
  p.blocks_even = false;
  p.blocks_src_stride = 0;
  p.block2 = 0;
  if (p.run_dim == rank_) return true;
  p.outer[p.run_dim] = false;
  p.run_extent = dst_.dim(p.run_dim).extent();
  p.run_dst_stride = dst_.dim(p.run_dim).stride();
  for (std::size_t prev = p.run_dim;;) {
    const index_t extent = dst_.dim(prev).extent();
    std::size_t next = rank_;
    for (std::size_t j = 0; j < rank_ && next == rank_; ++j) {
      const dim& dd = dst_.dim(j);
      if (p.outer[j] && dd.extent() > 1 && p.a[j] == p.a[prev] * extent &&
          dd.stride() == dst_.dim(prev).stride() * extent) {
        next = j;
      }
    }
    if (next == rank_) break;
    p.outer[next] = false;
    if (__builtin_mul_overflow(p.run_extent, dst_.dim(next).extent(), &p.run_extent)) return false;
    prev = next;
  }
  // src is affine in F from q == 1 up while each dim's stride is the previous one's times its
  // modulus: within blocks of the first divisor where that fails. A folded digit (a ring
  // buffer) wraps every fold factor values: blocks of q times that, if they divide its modulus.
  p.run_src_stride = p.a[p.run_dim] * src_.dim(first).stride();
  // From digit k up, the first divisor at which src stops being affine in F: where the stride
  // chain breaks (*at is its divisor, 0 if it never does, or the top digit's q * e where that
  // wraps), or at a folded digit (*folded is that digit).
  auto chain = [&](std::size_t k, index_t* at, std::size_t* folded) {
    for (;;) {
      const dim& sd = src_.dim(k);
      if (sd.stride() != 0 && sd.fold_factor() > 0) {
        *folded = k;
        return true;
      }
      if (k == top) {
        *at = 0;
        return !(p.e[k] > 0 && __builtin_mul_overflow(p.q[k], p.e[k], at));
      }
      std::size_t next = K;
      for (std::size_t i = 0; i < K; ++i) {
        if (p.q[i] == p.q[k] * p.e[k]) next = i;
      }
      if (src_.dim(next).stride() != src_.dim(k).stride() * p.e[k]) {
        *at = p.q[next];
        return true;
      }
      k = next;
    }
  };
  std::size_t folded = K;
  if (!chain(first, &p.block, &folded)) return false;
  if (folded < K) {
    // A folded digit wraps every fold factor values: blocks of q times that, if they divide its
    // modulus. Such blocks are not evenly spaced in src.
    const index_t fold = src_.dim(folded).fold_factor();
    if (p.e[folded] > 0 && p.e[folded] % fold != 0) return false;
    return !__builtin_mul_overflow(p.q[folded], fold, &p.block);
  }
  if (p.block == 0) return true;
  // Whole blocks start at multiples of block: one step of the block's digit apart in src as long
  // as the digits from there up are affine in F (every block reads the same src where the top
  // digit wrapped).
  std::size_t m = K;
  for (std::size_t i = 0; i < K; ++i) {
    if (p.q[i] == p.block) m = i;
  }
  p.blocks_even = true;
  if (m == K) return true;
  p.blocks_src_stride = src_.dim(m).stride();
  if (!chain(m, &p.block2, &folded)) {
    p.blocks_even = false;
  } else if (folded < K) {
    // Blocks stay evenly spaced while the folded digit does not change.
    p.blocks_even = folded != m;
    p.block2 = p.q[folded];
  }
  return true;
}

void copy_pieces::flat_segment() {
  const flat_plan& p = flat_;
  const std::size_t K = src_rank_;
  // Coordinates that are not digits: outside src, dst is left alone (there is no pad here).
  for (std::size_t k = 0; k < K; ++k) {
    if (p.q[k] > 0) continue;
    const dim& sd = src_.dim(k);
    if (sd.stride() != 0 && !sd.contains(s0_[k])) return;
  }
  index_t f0 = p.c;
  for (std::size_t j = 0; j < rank_; ++j) f0 += p.a[j] * x0_[j];
  const index_t step = p.run_dim < rank_ ? p.a[p.run_dim] : 1;
  char* dst_base = static_cast<char*>(dst_.address_at(span<const index_t>(x0_, rank_)));
  std::copy(s0_, s0_ + K, s_);
  dim src_dims[2], dst_dims[2], pad_dims[2];
  raw_buffer src_view{nullptr, src_.elem_size, 1, src_dims};
  raw_buffer dst_view{nullptr, dst_.elem_size, 1, dst_dims};
  raw_buffer pad_view{nullptr, dst_.elem_size, 1, pad_dims};
  // The runs of whole blocks, when several are copied as one 2-D view.
  const index_t block_run = p.blocks_even && p.block > 0 && p.block % step == 0 ? p.block / step : 0;
  for (index_t t = 0; t < p.run_extent;) {
    const index_t f = f0 + step * t;
    index_t n = p.run_extent - t;
    index_t blocks = 1;
    if (p.block > 0) {
      if (block_run > 0 && euclidean_mod(f, p.block) == 0 && n >= 2 * block_run) {
        blocks = n / block_run;
        if (p.block2 > 0) {
          blocks = std::min(blocks, ((euclidean_div(f, p.block2) + 1) * p.block2 - f) / p.block);
        }
      }
      n = blocks > 1 ? block_run : std::min(n, ceil_div((euclidean_div(f, p.block) + 1) * p.block - f, step));
    }
    for (std::size_t k = 0; k < K; ++k) {
      if (p.q[k] > 0) s_[k] = flat_digit(f, p.q[k], p.e[k]);
    }
    src_view.base = src_.address_at(span<const index_t>(s_, K));
    dst_view.base = dst_base + t * p.run_dst_stride;
    src_dims[0] = dim(0, n - 1, p.run_src_stride);
    dst_dims[0] = dim(0, n - 1, p.run_dst_stride);
    pad_dims[0] = dim(0, n - 1, 0);
    const std::size_t rank = blocks > 1 ? 2 : 1;
    if (blocks > 1) {
      src_dims[1] = dim(0, blocks - 1, p.blocks_src_stride);
      dst_dims[1] = dim(0, blocks - 1, block_run * p.run_dst_stride);
      pad_dims[1] = dim(0, blocks - 1, 0);
    }
    src_view.rank = dst_view.rank = pad_view.rank = rank;
    if (impl_) {
      impl_(src_view, dst_view, pad_view);
    } else {
      slinky::copy(src_view, dst_view, pad_view);
    }
    t += n * blocks;
  }
}

}  // namespace internal
}  // namespace slinky
