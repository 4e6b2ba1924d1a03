// symbol_map<T>: an environment mapping symbols to values, stored as a vector indexed by symbol
// id, with RAII scoped bindings. Used by the simplifier and the lowering passes.
#ifndef SLINKY_BUILDER_SYMBOL_MAP_H
#define SLINKY_BUILDER_SYMBOL_MAP_H

#include <cstddef>
#include <optional>
#include <utility>
#include <vector>

#include "slinky/runtime/expr.h"

namespace slinky {

// Maps symbols to optional values of T. Lookups of symbols never set return an empty optional;
// operator[] grows the map as needed. Copying a symbol_map copies the values.
template <typename T>
class symbol_map {
  std::vector<std::optional<T>> values_;

  void grow(symbol_id id) {
    if (id >= values_.size()) values_.resize(id + 1);
  }

public:
  symbol_map() = default;
  symbol_map(std::initializer_list<std::pair<var, T>> init) {
    for (const auto& i : init) set(i.first, i.second);
  }

  // The slot of a symbol, made empty if it did not exist.
  std::optional<T>& operator[](var v) {
    grow(v.sym());
    return values_[v.sym()];
  }
  std::optional<T>& operator[](symbol_id id) {
    grow(id);
    return values_[id];
  }

  // The value of a symbol (an empty optional if it has none).
  const std::optional<T>& lookup(var v) const { return lookup(v.sym()); }
  const std::optional<T>& lookup(symbol_id id) const {
    static const std::optional<T> none;
    return id < values_.size() ? values_[id] : none;
  }
  // A pointer to the value of a symbol, or null if it has none.
  const T* find(var v) const {
    const std::optional<T>& r = lookup(v);
    return r ? &*r : nullptr;
  }

  bool contains(var v) const { return lookup(v).has_value(); }
  void set(var v, std::optional<T> value) { (*this)[v] = std::move(value); }
  void erase(var v) {
    if (v.sym() < values_.size()) values_[v.sym()] = std::nullopt;
  }

  // The number of slots (one more than the largest symbol id ever set), for iteration by id.
  std::size_t size() const { return values_.size(); }
  void clear() { values_.clear(); }

  // Binds (or unbinds, with an empty optional) a symbol for the lifetime of this object, then
  // restores the previous value. Scoped values binding the same symbol must be destroyed in the
  // reverse order of their construction, as stack objects are (a std::vector of them is not:
  // pop its elements from the back).
  class scoped_value {
    symbol_map* map_ = nullptr;
    symbol_id sym_ = 0;
    std::optional<T> old_;

  public:
    scoped_value() = default;
    scoped_value(symbol_map& map, var v, std::optional<T> value) : map_(&map), sym_(v.sym()) {
      std::optional<T>& slot = map[sym_];
      old_ = std::move(slot);
      slot = std::move(value);
    }
    scoped_value(scoped_value&& other) noexcept : map_(other.map_), sym_(other.sym_), old_(std::move(other.old_)) {
      other.map_ = nullptr;
    }
    scoped_value& operator=(scoped_value&&) = delete;
    scoped_value(const scoped_value&) = delete;
    scoped_value& operator=(const scoped_value&) = delete;
    ~scoped_value() {
      if (map_) (*map_)[sym_] = std::move(old_);
    }
  };

  // Shorthand for constructing a scoped_value.
  scoped_value bind(var v, std::optional<T> value) { return scoped_value(*this, v, std::move(value)); }
};

}  // namespace slinky

#endif  // SLINKY_BUILDER_SYMBOL_MAP_H
