/// \file
/// Non-owning views of contiguous elements: span<T, Extent> reads them (whatever T is: span<int>
/// hands out const int&), mutable_span<T, Extent> may write them. Both accept a C array, a
/// std::vector, a std::array, another span, pointer + size or begin + end; span also accepts a
/// braced list (valid for the full expression it appears in).
#ifndef SLINKY_BASE_SPAN_H
#define SLINKY_BASE_SPAN_H

#include <array>
#include <cstddef>
#include <initializer_list>
#include <limits>
#include <type_traits>
#include <utility>
#include <vector>

#include "slinky/base/assert.h"

namespace slinky {

/// The Extent of a span whose size is known only at run time.
constexpr std::size_t dynamic_extent = std::numeric_limits<std::size_t>::max();

namespace internal {

// The size of a span: a compile-time constant (no storage) or a run-time value.
template <std::size_t Extent>
class span_extent {
public:
  constexpr span_extent() = default;
  explicit span_extent(std::size_t size) {
    (void)size;
    SLINKY_ASSERT(size == Extent, "span of fixed extent made from a range of another size");
  }
  static constexpr std::size_t size() { return Extent; }
};

template <>
class span_extent<dynamic_extent> {
  std::size_t size_ = 0;

public:
  constexpr span_extent() = default;
  constexpr explicit span_extent(std::size_t size) : size_(size) {}
  constexpr std::size_t size() const { return size_; }
};

// Whether elements of type From can be viewed as elements of type To (through To*): same type
// up to added const, not derived to base (the element sizes could differ).
template <typename From, typename To>
constexpr bool is_element_compatible = std::is_convertible_v<From (*)[], To (*)[]>;

// Whether C has data() and size() and its elements can be viewed as Element.
template <typename C, typename Element, typename = void>
struct is_compatible_container_impl : std::false_type {};
template <typename C, typename Element>
struct is_compatible_container_impl<
    C, Element, std::void_t<decltype(std::declval<C&>().data()), decltype(std::declval<C&>().size())>>
    : std::bool_constant<is_element_compatible<std::remove_pointer_t<decltype(std::declval<C&>().data())>, Element>> {};

template <typename C, typename Element>
constexpr bool is_compatible_container = is_compatible_container_impl<C, Element>::value;

}  // namespace internal

template <typename T, std::size_t Extent = dynamic_extent>
class span;
template <typename T, std::size_t Extent = dynamic_extent>
class mutable_span;

/// A read-only view of Extent (or, by default, any number of) elements of type T. With a fixed
/// Extent, size() is a static constexpr function and the constructors assert that the range
/// has Extent elements; subspan returns the dynamic form.
template <typename T, std::size_t Extent>
class span : public internal::span_extent<Extent> {
  using extent_base = internal::span_extent<Extent>;

public:
  /// T without const or volatile.
  using value_type = std::remove_cv_t<T>;
  /// The elements, always const.
  using element_type = const value_type;
  /// A pointer to an element.
  using pointer = const value_type*;
  /// A reference to an element.
  using reference = const value_type&;
  /// An iterator over the elements.
  using iterator = const value_type*;
  /// The type of sizes and indices.
  using size_type = std::size_t;
  /// The number of elements, or dynamic_extent.
  static constexpr std::size_t extent = Extent;

private:
  pointer data_ = nullptr;

public:
  /// An empty span (only for Extent 0 or dynamic_extent).
  template <std::size_t E = Extent, typename = std::enable_if_t<E == 0 || E == dynamic_extent>>
  constexpr span() {}
  /// The size elements from data.
  span(pointer data, std::size_t size) : extent_base(size), data_(data) {}
  /// The elements [begin, end).
  span(pointer begin, pointer end) : extent_base(static_cast<std::size_t>(end - begin)), data_(begin) {}
  /// The elements of a C array.
  template <typename U, std::size_t N,
            typename = std::enable_if_t<internal::is_element_compatible<U, element_type> &&
                                        (Extent == dynamic_extent || Extent == N)>>
  span(U (&a)[N]) : extent_base(N), data_(a) {}
  /// Containers with data() and size(): std::vector, std::array, std::string, other spans.
  template <typename C, typename = std::enable_if_t<internal::is_compatible_container<const C, element_type>>>
  span(const C& c) : extent_base(c.size()), data_(c.data()) {}
  /// A braced list converts each element to value_type (so {&derived_buffer, ...} makes a span of
  /// base pointers).
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Winit-list-lifetime"
#endif
  span(std::initializer_list<value_type> l) : extent_base(l.size()), data_(l.begin()) {}
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif

  /// The number of elements.
  using extent_base::size;
  /// The first element (null for a default span).
  pointer data() const { return data_; }
  /// True if there are no elements.
  bool empty() const { return size() == 0; }
  /// The first element.
  iterator begin() const { return data_; }
  /// Past the last element.
  iterator end() const { return data_ + size(); }
  /// Element i (not checked).
  reference operator[](std::size_t i) const { return data_[i]; }
  /// The first element (must not be empty).
  reference front() const { return data_[0]; }
  /// The last element (must not be empty).
  reference back() const { return data_[size() - 1]; }
  /// The count elements from offset.
  span<T> subspan(std::size_t offset, std::size_t count) const { return span<T>(data_ + offset, count); }
  /// The elements from offset to the end.
  span<T> subspan(std::size_t offset) const { return span<T>(data_ + offset, size() - offset); }
};

/// A writable view of Extent (or any number of) elements of type T; converts to span.
template <typename T, std::size_t Extent>
class mutable_span : public internal::span_extent<Extent> {
  using extent_base = internal::span_extent<Extent>;

public:
  /// T without const or volatile.
  using value_type = std::remove_cv_t<T>;
  /// The elements.
  using element_type = T;
  /// A pointer to an element.
  using pointer = T*;
  /// A reference to an element.
  using reference = T&;
  /// An iterator over the elements.
  using iterator = T*;
  /// The type of sizes and indices.
  using size_type = std::size_t;
  /// The number of elements, or dynamic_extent.
  static constexpr std::size_t extent = Extent;

private:
  pointer data_ = nullptr;

public:
  /// An empty span (only for Extent 0 or dynamic_extent).
  template <std::size_t E = Extent, typename = std::enable_if_t<E == 0 || E == dynamic_extent>>
  constexpr mutable_span() {}
  /// The size elements from data.
  mutable_span(pointer data, std::size_t size) : extent_base(size), data_(data) {}
  /// The elements [begin, end).
  mutable_span(pointer begin, pointer end) : extent_base(static_cast<std::size_t>(end - begin)), data_(begin) {}
  /// The elements of a C array.
  template <typename U, std::size_t N,
            typename = std::enable_if_t<internal::is_element_compatible<U, element_type> &&
                                        (Extent == dynamic_extent || Extent == N)>>
  mutable_span(U (&a)[N]) : extent_base(N), data_(a) {}
  /// Containers with data() and size() whose elements are writable as T (a const container only
  /// for a mutable_span<const T>).
  template <typename C, typename = std::enable_if_t<internal::is_compatible_container<C, element_type>>>
  mutable_span(C& c) : extent_base(c.size()), data_(c.data()) {}
  /// The same elements.
  mutable_span(const mutable_span&) = default;
  /// Views other's elements instead (copies no element).
  mutable_span& operator=(const mutable_span&) = default;

  /// The number of elements.
  using extent_base::size;
  /// The first element (null for a default span).
  pointer data() const { return data_; }
  /// True if there are no elements.
  bool empty() const { return size() == 0; }
  /// The first element.
  iterator begin() const { return data_; }
  /// Past the last element.
  iterator end() const { return data_ + size(); }
  /// Element i (not checked).
  reference operator[](std::size_t i) const { return data_[i]; }
  /// The first element (must not be empty).
  reference front() const { return data_[0]; }
  /// The last element (must not be empty).
  reference back() const { return data_[size() - 1]; }
  /// The count elements from offset.
  mutable_span<T> subspan(std::size_t offset, std::size_t count) const {
    return mutable_span<T>(data_ + offset, count);
  }
  /// The elements from offset to the end.
  mutable_span<T> subspan(std::size_t offset) const { return mutable_span<T>(data_ + offset, size() - offset); }
};

/// result[i] = x[p[i]] where p[i] is an index into x, and default_value where it is not (p[i] < 0
/// or p[i] >= x.size()). The result has p.size() elements. Example:
///
///     permute<int>({2, 0, 5}, {10, 11, 12}) == {12, 10, 0}
template <typename T>
std::vector<T> permute(span<const int> p, const std::vector<T>& x, T default_value = T()) {
  std::vector<T> result(p.size(), default_value);
  for (std::size_t i = 0; i < p.size(); ++i) {
    if (p[i] >= 0 && static_cast<std::size_t>(p[i]) < x.size()) result[i] = x[p[i]];
  }
  return result;
}

}  // namespace slinky

#endif  // SLINKY_BASE_SPAN_H
