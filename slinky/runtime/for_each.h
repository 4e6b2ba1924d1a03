/// \file
/// for_each_element and for_each_contiguous_slice: the walks over the elements (or contiguous runs)
/// of buffers that callbacks use, with the loops at the call site so the user's function inlines
/// into them. Included by buffer.h (include that).
#ifndef SLINKY_RUNTIME_FOR_EACH_H
#define SLINKY_RUNTIME_FOR_EACH_H

#include <cstddef>
#include <tuple>
#include <type_traits>
#include <utility>

#include "slinky/runtime/buffer.h"

namespace slinky {

namespace internal {

// The for_each walkers. An out-of-line part analyses the buffers (bounds, folds, null buffers,
// fusing dims) and, when every buffer either covers the first one linearly or is absent
// everywhere, returns the walk as a loop nest: the common case, which then runs here, at the call
// site, so that the user's function inlines into the innermost loop. Other walks (runs split where a
// buffer's bounds end or a fold wraps) run out of line, calling back here once per run.

// The most dims (after fusing) of a loop nest run at the call site; more take the general walk.
constexpr std::size_t for_each_max_rank = 8;

// A walk as a loop nest: dim 0 innermost, at least one dim (a single element is one dim of extent
// 1). strides[d * n + k] is the stride in bytes of buffer k (of n) in dim d < 2, 0 for a null base;
// for d >= 2, the step of an odometer: what moves buffer k from the last coordinate of dims 2 to
// d - 1 to the first, and one coordinate on in d (so the walk needs no multiplications). bases[k]
// is buffer k's first element (null if it has none or is absent). contiguous: a run of dim 0 is
// contiguous in the first buffer and in every other one with a base (stride == elem_size).
// any_inner (set by the caller): the order of the runs is free (for_each_contiguous_slice), so
// when the buffers' dim 0 is not contiguous but another dim is, that one is the nest's dim 0.
struct for_each_nest {
  std::size_t rank;
  bool contiguous;
  bool any_inner = false;
  index_t extents[for_each_max_rank];
  index_t* strides;
  void** bases;
};

// A run of n elements of the innermost dim at ptrs, stepping by strides (bytes; 0 for null
// pointers); contiguous as in for_each_nest.
using for_each_segment_fn = void (*)(void* user, index_t n, void* const* ptrs, const index_t* strides, bool contiguous);

// If the walk over the elements of bufs[0] (with bufs[1...] at the same coordinates) is a loop nest
// of at most for_each_max_rank dims, describes it in nest (whose strides and bases point at room
// for for_each_max_rank * bufs.size() and bufs.size() entries) and returns true. Otherwise walks
// it, calling segment for each run, and returns false (also when there is nothing to walk).
bool for_each_walk(span<const raw_buffer* const> bufs, for_each_nest& nest, for_each_segment_fn segment, void* user);

template <typename Buf>
using pointer_of = typename Buf::pointer;
// The size of what a pointer of Buf points at; 0 for void.
template <typename Buf>
constexpr std::size_t pointee_size = type_size<std::remove_pointer_t<pointer_of<Buf>>>::value;

template <typename Buf>
SLINKY_INLINE pointer_of<Buf> step(void* p, index_t i, index_t stride) {
  return static_cast<pointer_of<Buf>>(static_cast<void*>(static_cast<char*>(p) + i * stride));
}

// fn(pointers...) for the n elements of a run. Dense runs of typed pointers index the pointers
// (so that loops vectorize as a hand-written one would); others step by the byte strides.
template <typename... Bufs, typename Fn, std::size_t... Is>
SLINKY_INLINE void for_each_element_run(const Fn& fn, index_t n, void* const* ptrs, const index_t* strides, bool dense,
                                        std::index_sequence<Is...>) {
  if constexpr (((pointee_size<Bufs> != 0) && ...)) {
    if (dense) {
      const std::tuple<pointer_of<Bufs>...> p(static_cast<pointer_of<Bufs>>(ptrs[Is])...);
      for (index_t i = 0; i < n; ++i) fn((std::get<Is>(p) + i)...);
      return;
    }
  }
  void* const p[] = {ptrs[Is]...};
  const index_t s[] = {strides[Is]...};
  for (index_t i = 0; i < n; ++i) fn(step<Bufs>(p[Is], i, s[Is])...);
}

// fn(n, pointers...) for a contiguous run, otherwise fn(1, pointers...) for each of its elements.
template <typename... Bufs, typename Fn, std::size_t... Is>
SLINKY_INLINE void for_each_slice_run(const Fn& fn, index_t n, void* const* ptrs, const index_t* strides,
                                      bool contiguous, std::index_sequence<Is...>) {
  if (contiguous) {
    fn(n, static_cast<pointer_of<Bufs>>(ptrs[Is])...);
    return;
  }
  void* const p[] = {ptrs[Is]...};
  const index_t s[] = {strides[Is]...};
  for (index_t i = 0; i < n; ++i) fn(index_t{1}, step<Bufs>(p[Is], i, s[Is])...);
}

// True if every run of dim 0 of the nest is dense in every buffer for typed pointer arithmetic.
template <typename... Bufs, std::size_t... Is>
SLINKY_INLINE bool dense_inner(const for_each_nest& nest, std::index_sequence<Is...>) {
  return ((nest.bases[Is] && nest.strides[Is] == static_cast<index_t>(pointee_size<Bufs>)) && ...);
}

// Calls row(ptrs) for every coordinate of dims 1 and up of the nest: a loop over dim 1 (pointers
// in registers, as a hand-written loop nest has them) inside an odometer over the other dims.
template <std::size_t N, typename Row>
SLINKY_INLINE void for_each_nest_loop(const for_each_nest& nest, const Row& row) {
  const std::size_t rank = nest.rank;
  const index_t n1 = rank > 1 ? nest.extents[1] : 1;
  index_t s1[N];
  for (std::size_t k = 0; k < N; ++k) s1[k] = rank > 1 ? nest.strides[N + k] : 0;
  char* p[N];
  for (std::size_t k = 0; k < N; ++k) p[k] = static_cast<char*>(nest.bases[k]);
  index_t i[for_each_max_rank];
  for (std::size_t d = 2; d < rank; ++d) i[d] = 0;
  while (true) {
    // One call site of row, which holds the user's function.
    for (index_t i1 = 0; i1 < n1; ++i1) {
      void* q[N];
      for (std::size_t k = 0; k < N; ++k) q[k] = p[k] + i1 * s1[k];
      row(static_cast<void* const*>(q));
    }
    std::size_t d = 2;
    for (; d < rank; ++d) {
      if (++i[d] < nest.extents[d]) break;
      i[d] = 0;
    }
    if (d >= rank) return;
    for (std::size_t k = 0; k < N; ++k) p[k] += nest.strides[d * N + k];
  }
}

template <typename Fn, typename... Bufs>
void for_each_element_segment(void* user, index_t n, void* const* ptrs, const index_t* strides, bool) {
  constexpr std::size_t N = sizeof...(Bufs);
  bool dense = true;
  for (std::size_t k = 0; k < N; ++k) dense = dense && ptrs[k];
  const index_t sizes[] = {static_cast<index_t>(pointee_size<Bufs>)...};
  for (std::size_t k = 0; k < N; ++k) dense = dense && strides[k] == sizes[k];
  for_each_element_run<Bufs...>(*static_cast<const Fn*>(user), n, ptrs, strides, dense,
                                std::index_sequence_for<Bufs...>());
}

template <typename Fn, typename... Bufs>
void for_each_slice_segment(void* user, index_t n, void* const* ptrs, const index_t* strides, bool contiguous) {
  for_each_slice_run<Bufs...>(*static_cast<const Fn*>(user), n, ptrs, strides, contiguous,
                              std::index_sequence_for<Bufs...>());
}

}  // namespace internal

/// Calls fn(Buf::pointer, Bufs::pointer...) for every element of buf (pointers to the element at
/// the same coordinates in each of bufs; null where a buffer does not contain the element), in order
/// of increasing coordinates with dim 0 innermost. The pointer types are T* for buffer<T, N> and
/// void* for raw_buffer and other classes derived from it (scalar<T>). Other buffers may have lower
/// rank: their missing dimensions broadcast. The loops run here (fn inlines into them) when every
/// other buffer contains all of buf or none of it and no fold wraps inside buf's bounds.
template <typename Fn, typename Buf, typename... Bufs>
void for_each_element(const Fn& fn, const Buf& buf, const Bufs&... bufs) {
  constexpr std::size_t N = 1 + sizeof...(Bufs);
  const raw_buffer* const all[] = {&buf, static_cast<const raw_buffer*>(&bufs)...};
  index_t strides[internal::for_each_max_rank * N];
  void* bases[N];
  internal::for_each_nest nest;
  nest.strides = strides;
  nest.bases = bases;
  void* user = const_cast<void*>(static_cast<const void*>(&fn));
  if (!internal::for_each_walk(all, nest, internal::for_each_element_segment<Fn, Buf, Bufs...>, user)) return;
  constexpr auto is = std::index_sequence_for<Buf, Bufs...>();
  const bool dense = internal::dense_inner<Buf, Bufs...>(nest, is);
  const index_t n = nest.extents[0];
  internal::for_each_nest_loop<N>(nest, [&fn, n, &strides, dense, is](void* const* p) {
    internal::for_each_element_run<Buf, Bufs...>(fn, n, p, strides, dense, is);
  });
}

/// Calls fn(extent, Buf::pointer, Bufs::pointer...) for every maximal run of elements of buf that
/// is contiguous (stride == elem_size) in buf and in every other buffer that contains it
/// (dimensions fused where the strides allow); extent counts elements. The runs go along any dim
/// that is contiguous in all of them (dim 0 if it is; another one otherwise, e.g. in a
/// transposed layout, folded or not), in no particular order. A run is split where it
/// would leave another buffer's bounds or stop being contiguous there, and a buffer's pointer is
/// null where it does not contain the run. The loops run at the call site as in for_each_element.
template <typename Buf, typename Fn, typename... Bufs>
void for_each_contiguous_slice(const Buf& buf, const Fn& fn, const Bufs&... bufs) {
  constexpr std::size_t N = 1 + sizeof...(Bufs);
  const raw_buffer* const all[] = {&buf, static_cast<const raw_buffer*>(&bufs)...};
  index_t strides[internal::for_each_max_rank * N];
  void* bases[N];
  internal::for_each_nest nest;
  nest.strides = strides;
  nest.bases = bases;
  nest.any_inner = true;
  void* user = const_cast<void*>(static_cast<const void*>(&fn));
  if (!internal::for_each_walk(all, nest, internal::for_each_slice_segment<Fn, Buf, Bufs...>, user)) return;
  constexpr auto is = std::index_sequence_for<Buf, Bufs...>();
  const bool contiguous = nest.contiguous;
  const index_t n = nest.extents[0];
  internal::for_each_nest_loop<N>(nest, [&fn, n, &strides, contiguous, is](void* const* p) {
    internal::for_each_slice_run<Buf, Bufs...>(fn, n, p, strides, contiguous, is);
  });
}

}  // namespace slinky

#endif  // SLINKY_RUNTIME_FOR_EACH_H
