/// \file
/// Set helpers: whether two sorted ranges (or two std::sets) share no element.
#ifndef SLINKY_BASE_SET_H
#define SLINKY_BASE_SET_H

#include <set>

namespace slinky {

/// Whether the sorted ranges [a_begin, a_end) and [b_begin, b_end) have no element in common
/// (elements compared with <, both ranges sorted by it). Linear in the sizes of the ranges.
template <typename It>
bool empty_intersection(It a_begin, It a_end, It b_begin, It b_end) {
  while (a_begin != a_end && b_begin != b_end) {
    if (*a_begin < *b_begin) {
      ++a_begin;
    } else if (*b_begin < *a_begin) {
      ++b_begin;
    } else {
      return false;
    }
  }
  return true;
}

/// Whether the sets a and b have no element in common.
template <typename T>
bool empty_intersection(const std::set<T>& a, const std::set<T>& b) {
  return empty_intersection(a.begin(), a.end(), b.begin(), b.end());
}

}  // namespace slinky

#endif  // SLINKY_BASE_SET_H
