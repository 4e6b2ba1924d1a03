// uninitialized_allocator<T>: an STL allocator that leaves value-initialized elements
// uninitialized, for vectors of scratch values that are always written before they are read.
#ifndef SLINKY_BASE_ALLOCATOR_H
#define SLINKY_BASE_ALLOCATOR_H

#include <cstddef>
#include <memory>
#include <new>
#include <utility>

namespace slinky {

// Allocates like std::allocator<T>, but construct(p) with no arguments default-initializes
// instead of value-initializing: std::vector<T, uninitialized_allocator<T>>::resize(n) leaves
// new elements of trivial types (int, pointers, ...) uninitialized instead of zeroing them.
// Types with a default constructor still get it run. All instances are interchangeable (==).
template <typename T>
class uninitialized_allocator {
public:
  using value_type = T;

  uninitialized_allocator() = default;
  template <typename U>
  uninitialized_allocator(const uninitialized_allocator<U>&) noexcept {}

  T* allocate(std::size_t n) { return std::allocator<T>().allocate(n); }
  void deallocate(T* p, std::size_t n) noexcept { std::allocator<T>().deallocate(p, n); }

  template <typename U>
  void construct(U* p) noexcept(std::is_nothrow_default_constructible_v<U>) {
    ::new (static_cast<void*>(p)) U;
  }
  template <typename U, typename... Args>
  void construct(U* p, Args&&... args) {
    ::new (static_cast<void*>(p)) U(std::forward<Args>(args)...);
  }

  template <typename U>
  bool operator==(const uninitialized_allocator<U>&) const {
    return true;
  }
  template <typename U>
  bool operator!=(const uninitialized_allocator<U>&) const {
    return false;
  }
};

}  // namespace slinky

#endif  // SLINKY_BASE_ALLOCATOR_H
