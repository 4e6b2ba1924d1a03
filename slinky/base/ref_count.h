/// \file
/// Intrusive reference counting: ref_counted<T> holds the count inside the object, and
/// ref_count<T> is the owning handle. Counts are atomic so built programs can be shared
/// between threads.
#ifndef SLINKY_BASE_REF_COUNT_H
#define SLINKY_BASE_REF_COUNT_H

#include <atomic>
#include <type_traits>
#include <utility>

namespace slinky {

/// Base for reference counted objects. When the count drops to 0, release() calls
/// `T::destroy(T*)`; the default destroy deletes (through the virtual destructor, so a handle
/// to a base class may hold a derived object). Copying or moving an object does not copy its
/// count: the new object starts with no references, and assignment leaves the target's count
/// alone.
template <typename T>
class ref_counted {
  mutable std::atomic<int> ref_count_{0};

public:
  /// An object with no references yet.
  ref_counted() = default;
  /// A copy, with no references yet (the count is not copied).
  ref_counted(const ref_counted&) : ref_count_(0) {}
  /// A move, with no references yet (the count is not moved).
  ref_counted(ref_counted&&) noexcept : ref_count_(0) {}
  /// Leaves this object's count alone.
  ref_counted& operator=(const ref_counted&) { return *this; }
  /// Leaves this object's count alone.
  ref_counted& operator=(ref_counted&&) noexcept { return *this; }
  /// Virtual, so that destroying through a base class destroys the derived object.
  virtual ~ref_counted() = default;

  /// The number of references (a snapshot: other threads may change it at any time).
  int ref_count() const { return ref_count_.load(std::memory_order_relaxed); }
  /// Adds a reference.
  void add_ref() const { ref_count_.fetch_add(1, std::memory_order_relaxed); }
  /// Drops a reference; the last one calls T::destroy on the object.
  void release() const {
    if (ref_count_.fetch_sub(1, std::memory_order_acq_rel) == 1) {
      T::destroy(const_cast<T*>(static_cast<const T*>(this)));
    }
  }
  /// Deletes p: the default of what release() calls (T may hide it with its own destroy).
  static void destroy(T* p) { delete p; }
};

/// An owning handle to a ref_counted object; null by default.
///
/// It converts implicitly to T*, so handles compare with each other and with nullptr, order as
/// pointers (std::map keys), and pass where a T* or const T* is expected. Constness is shallow:
/// a const handle still hands out T*.
template <typename T>
class ref_count {
  T* value_ = nullptr;

public:
  /// Adds a reference to v (if not null).
  ref_count(T* v = nullptr) : value_(v) {
    if (value_) value_->add_ref();
  }
  /// Another reference to other's object.
  ref_count(const ref_count& other) : ref_count(other.value_) {}
  /// Takes other's reference; other becomes null.
  ref_count(ref_count&& other) noexcept : value_(other.value_) { other.value_ = nullptr; }
  /// Releases the reference (if not null).
  ~ref_count() {
    if (value_) value_->release();
  }

  /// Adopts value without adding a reference: the handle takes over one the caller owned (e.g.
  /// one obtained from take()).
  static ref_count assume(T* value) {
    ref_count result;
    result.value_ = value;
    return result;
  }

  /// Refers to v (adding a reference) instead, releasing the old reference.
  ref_count& operator=(T* v) {
    if (v != value_) {
      if (v) v->add_ref();
      T* old = value_;
      value_ = v;
      if (old) old->release();
    }
    return *this;
  }
  /// Refers to other's object instead, releasing the old reference.
  ref_count& operator=(const ref_count& other) { return *this = other.value_; }
  /// Swaps the objects of the two handles (other releases this handle's old object when it is
  /// destroyed or reassigned).
  ref_count& operator=(ref_count&& other) noexcept {
    std::swap(value_, other.value_);
    return *this;
  }

  /// The object, or null.
  T* get() const { return value_; }
  /// The object (must not be null).
  T& operator*() const { return *value_; }
  /// The object's members (must not be null).
  T* operator->() const { return value_; }
  /// The object, or null.
  operator T*() const { return value_; }
  /// True if not null.
  explicit operator bool() const { return value_ != nullptr; }
  /// True if not null.
  bool defined() const { return value_ != nullptr; }

  /// A handle to the same object as a base class (or const) type.
  template <typename U, typename = std::enable_if_t<std::is_convertible_v<T*, U*>>>
  operator ref_count<U>() const {
    return ref_count<U>(value_);
  }

  /// Gives up the pointer without releasing its reference, which the caller now owns (hand it
  /// to assume() or call release() on it).
  T* take() {
    T* r = value_;
    value_ = nullptr;
    return r;
  }
};

}  // namespace slinky

#endif  // SLINKY_BASE_REF_COUNT_H
