// span<T>: a non-owning view of contiguous elements. It accepts a C array, a std::vector, a
// std::array, a braced list (valid for the full expression it appears in), or pointer + size.
#ifndef SLINKY_BASE_SPAN_H
#define SLINKY_BASE_SPAN_H

#include <array>
#include <cstddef>
#include <initializer_list>
#include <type_traits>
#include <vector>

namespace slinky {

template <typename T>
class span {
  T* data_ = nullptr;
  std::size_t size_ = 0;

public:
  using value_type = std::remove_cv_t<T>;

  span() = default;
  span(T* data, std::size_t size) : data_(data), size_(size) {}
  span(T* begin, T* end) : data_(begin), size_(end - begin) {}
  template <std::size_t N>
  span(T (&a)[N]) : data_(a), size_(N) {}
  template <typename U, std::size_t N, typename = std::enable_if_t<std::is_convertible_v<U (*)[], T (*)[]>>>
  span(std::array<U, N>& a) : data_(a.data()), size_(N) {}
  template <typename U, std::size_t N, typename = std::enable_if_t<std::is_convertible_v<const U (*)[], T (*)[]>>>
  span(const std::array<U, N>& a) : data_(a.data()), size_(N) {}
  template <typename U, typename A, typename = std::enable_if_t<std::is_convertible_v<U (*)[], T (*)[]>>>
  span(std::vector<U, A>& v) : data_(v.data()), size_(v.size()) {}
  template <typename U, typename A, typename = std::enable_if_t<std::is_convertible_v<const U (*)[], T (*)[]>>>
  span(const std::vector<U, A>& v) : data_(v.data()), size_(v.size()) {}
  // A braced list converts each element to T (so {&derived_buffer, ...} makes a span of base
  // pointers); only for spans of const elements.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Winit-list-lifetime"
#endif
  template <typename U = T, typename = std::enable_if_t<std::is_const_v<U>>>
  span(std::initializer_list<std::remove_const_t<T>> l) : data_(l.begin()), size_(l.size()) {}
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif
  template <typename U, typename = std::enable_if_t<std::is_convertible_v<U (*)[], T (*)[]>>>
  span(const span<U>& other) : data_(other.data()), size_(other.size()) {}

  T* data() const { return data_; }
  std::size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  T* begin() const { return data_; }
  T* end() const { return data_ + size_; }
  T& operator[](std::size_t i) const { return data_[i]; }
  T& front() const { return data_[0]; }
  T& back() const { return data_[size_ - 1]; }
  span subspan(std::size_t offset, std::size_t count) const { return span(data_ + offset, count); }
  span subspan(std::size_t offset) const { return span(data_ + offset, size_ - offset); }
};

}  // namespace slinky

#endif  // SLINKY_BASE_SPAN_H
