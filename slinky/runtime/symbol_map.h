/// \file
/// symbol_map<T>: values indexed by symbol, with scoped bindings. Included by expr.h (include
/// that; the contract declares symbol_map in slinky/runtime/expr.h).
#ifndef SLINKY_RUNTIME_SYMBOL_MAP_H
#define SLINKY_RUNTIME_SYMBOL_MAP_H

#include <cstddef>
#include <initializer_list>
#include <optional>
#include <utility>
#include <vector>

#include "slinky/runtime/expr.h"

namespace slinky {

template <typename T>
class scoped_value_in_symbol_map;

/// symbol_map<T>: an environment mapping symbols to optional values of T, stored as a vector
/// indexed by symbol id, with RAII scoped bindings. Lookups of symbols never set give an empty
/// optional; the non-const operator[] grows the map as needed.
template <typename T>
class symbol_map {
  std::vector<std::optional<T>> values_;

  // Out of line: inlined, the resize makes GCC warn (-Wstringop-overflow, a false positive) where
  // a client writes a slot of a new map.
  SLINKY_NO_INLINE void grow_to(std::size_t id) { values_.resize(id + 1); }
  void grow(std::size_t id) {
    if (id >= values_.size()) grow_to(id);
  }

public:
  /// An empty map.
  symbol_map() = default;
  /// An empty map with room for `reserve` symbols.
  explicit symbol_map(std::size_t reserve) { values_.reserve(reserve); }
  /// A map with the given values.
  symbol_map(std::initializer_list<std::pair<var, T>> init) {
    for (const auto& i : init) set(i.first, i.second);
  }

  /// The slot of a symbol (made empty if it did not exist).
  ///@{
  std::optional<T>& operator[](var v) {
    grow(v.id);
    return values_[v.id];
  }
  std::optional<T>& operator[](std::size_t id) {
    grow(id);
    return values_[id];
  }
  ///@}
  /// The value of a symbol (an empty optional if it has none).
  ///@{
  std::optional<T> operator[](var v) const { return lookup(v); }
  std::optional<T> operator[](std::size_t id) const { return id < values_.size() ? values_[id] : std::nullopt; }
  ///@}

  /// The value of a symbol (an empty optional if it has none).
  ///@{
  const std::optional<T>& lookup(var v) const { return lookup(v.id); }
  const std::optional<T>& lookup(std::size_t id) const {
    static const std::optional<T> none;
    return id < values_.size() ? values_[id] : none;
  }
  ///@}
  /// The value of a symbol, or def if it has none.
  const T& lookup(var v, const T& def) const {
    const std::optional<T>& r = lookup(v);
    return r ? *r : def;
  }
  /// A pointer to the value of a symbol, or null if it has none.
  const T* find(var v) const {
    const std::optional<T>& r = lookup(v);
    return r ? &*r : nullptr;
  }

  /// True if the symbol has a value.
  bool contains(var v) const { return lookup(v).has_value(); }
  /// Sets (or, with an empty optional, removes) the value of a symbol.
  void set(var v, std::optional<T> value) { (*this)[v] = std::move(value); }
  /// Removes the value of a symbol.
  void erase(var v) {
    if (v.id < values_.size()) values_[v.id] = std::nullopt;
  }

  /// The number of slots (one more than the largest symbol id ever set), for iteration by id.
  std::size_t size() const { return values_.size(); }
  /// Makes room for n slots.
  void reserve(std::size_t n) { values_.reserve(n); }
  /// Removes every value (and slot).
  void clear() { values_.clear(); }

  /// Iterate over the slots (std::optional<T>), in symbol id order.
  ///@{
  auto begin() { return values_.begin(); }
  auto end() { return values_.end(); }
  auto begin() const { return values_.begin(); }
  auto end() const { return values_.end(); }
  ///@}

  /// Binds a symbol for the lifetime of the returned object (see scoped_value_in_symbol_map).
  using scoped_value = scoped_value_in_symbol_map<T>;

  /// Shorthand for constructing a scoped_value.
  scoped_value bind(var v, std::optional<T> value) { return scoped_value(*this, v, std::move(value)); }
};

/// Binds (or unbinds, with an empty optional) a symbol for the lifetime of this object, then
/// restores the previous value. Scoped values binding the same symbol must be destroyed in the
/// reverse order of their construction, as stack objects are.
template <typename T>
class scoped_value_in_symbol_map {
  symbol_map<T>* map_ = nullptr;
  var sym_;
  std::optional<T> old_;

public:
  /// Binds nothing.
  scoped_value_in_symbol_map() = default;
  /// Saves the current value and leaves it in place.
  scoped_value_in_symbol_map(symbol_map<T>& map, var v) : map_(&map), sym_(v), old_(map.lookup(v)) {}
  /// Saves the current value of v and sets it to value.
  ///@{
  scoped_value_in_symbol_map(symbol_map<T>& map, var v, std::optional<T> value) : map_(&map), sym_(v) {
    std::optional<T>& slot = map[v];
    old_ = std::move(slot);
    slot = std::move(value);
  }
  scoped_value_in_symbol_map(symbol_map<T>& map, var v, T value)
      : scoped_value_in_symbol_map(map, v, std::optional<T>(std::move(value))) {}
  ///@}
  /// Takes over other's binding (other then restores nothing).
  scoped_value_in_symbol_map(scoped_value_in_symbol_map&& other) noexcept
      : map_(other.map_), sym_(other.sym_), old_(std::move(other.old_)) {
    other.map_ = nullptr;
  }
  /// Restores this binding's old value, then takes over other's binding.
  scoped_value_in_symbol_map& operator=(scoped_value_in_symbol_map&& other) noexcept {
    if (this != &other) {
      exit_scope();
      map_ = other.map_;
      sym_ = other.sym_;
      old_ = std::move(other.old_);
      other.map_ = nullptr;
    }
    return *this;
  }
  /// Not copyable.
  scoped_value_in_symbol_map(const scoped_value_in_symbol_map&) = delete;
  /// Not copyable.
  scoped_value_in_symbol_map& operator=(const scoped_value_in_symbol_map&) = delete;
  /// Restores the old value (exit_scope).
  ~scoped_value_in_symbol_map() { exit_scope(); }

  /// The symbol bound.
  var sym() const { return sym_; }
  /// The value the symbol had before.
  const std::optional<T>& old_value() const { return old_; }
  /// Restores the old value now (the destructor then does nothing).
  void exit_scope() {
    if (map_) (*map_)[sym_] = std::move(old_);
    map_ = nullptr;
  }
};

/// Binds v to value (or unbinds it, with nullopt) in map for the lifetime of the returned object.
///@{
template <typename T>
typename symbol_map<T>::scoped_value set_value_in_scope(symbol_map<T>& map, var v, T value) {
  return typename symbol_map<T>::scoped_value(map, v, std::optional<T>(std::move(value)));
}
template <typename T>
typename symbol_map<T>::scoped_value set_value_in_scope(symbol_map<T>& map, var v, std::optional<T> value) {
  return typename symbol_map<T>::scoped_value(map, v, std::move(value));
}
template <typename T>
typename symbol_map<T>::scoped_value set_value_in_scope(symbol_map<T>& map, var v, std::nullopt_t) {
  return typename symbol_map<T>::scoped_value(map, v, std::optional<T>());
}
///@}

}  // namespace slinky

#endif  // SLINKY_RUNTIME_SYMBOL_MAP_H
