// Intrusive reference counting: ref_counted<T> holds the count inside the object, and
// ref_count<T> is the owning handle. Counts are atomic so built programs can be shared
// between threads.
#ifndef SLINKY_BASE_REF_COUNT_H
#define SLINKY_BASE_REF_COUNT_H

#include <atomic>
#include <type_traits>
#include <utility>

namespace slinky {

// Base for reference counted objects. When the count drops to 0, release() calls
// `T::destroy(T*)`; the default destroy deletes (through the virtual destructor, so a handle
// to a base class may hold a derived object). Copying or moving an object does not copy its
// count: the new object starts with no references, and assignment leaves the target's count
// alone.
template <typename T>
class ref_counted {
  mutable std::atomic<int> ref_count_{0};

public:
  ref_counted() = default;
  ref_counted(const ref_counted&) : ref_count_(0) {}
  ref_counted(ref_counted&&) noexcept : ref_count_(0) {}
  ref_counted& operator=(const ref_counted&) { return *this; }
  ref_counted& operator=(ref_counted&&) noexcept { return *this; }
  virtual ~ref_counted() = default;

  int ref_count() const { return ref_count_.load(std::memory_order_relaxed); }
  void add_ref() const { ref_count_.fetch_add(1, std::memory_order_relaxed); }
  void release() const {
    if (ref_count_.fetch_sub(1, std::memory_order_acq_rel) == 1) {
      T::destroy(const_cast<T*>(static_cast<const T*>(this)));
    }
  }
  static void destroy(T* p) { delete p; }
};

// An owning handle to a ref_counted object; null by default.
//
// It converts implicitly to T*, so handles compare with each other and with nullptr, order as
// pointers (std::map keys), and pass where a T* or const T* is expected. Constness is shallow:
// a const handle still hands out T*.
template <typename T>
class ref_count {
  T* value_ = nullptr;

public:
  // Adds a reference to v (if not null).
  ref_count(T* v = nullptr) : value_(v) {
    if (value_) value_->add_ref();
  }
  ref_count(const ref_count& other) : ref_count(other.value_) {}
  ref_count(ref_count&& other) noexcept : value_(other.value_) { other.value_ = nullptr; }
  ~ref_count() {
    if (value_) value_->release();
  }

  // Adopts value without adding a reference: the handle takes over one the caller owned (e.g.
  // one obtained from take()).
  static ref_count assume(T* value) {
    ref_count result;
    result.value_ = value;
    return result;
  }

  ref_count& operator=(T* v) {
    if (v != value_) {
      if (v) v->add_ref();
      T* old = value_;
      value_ = v;
      if (old) old->release();
    }
    return *this;
  }
  ref_count& operator=(const ref_count& other) { return *this = other.value_; }
  ref_count& operator=(ref_count&& other) noexcept {
    std::swap(value_, other.value_);
    return *this;
  }

  T* get() const { return value_; }
  T& operator*() const { return *value_; }
  T* operator->() const { return value_; }
  operator T*() const { return value_; }
  explicit operator bool() const { return value_ != nullptr; }
  bool defined() const { return value_ != nullptr; }

  // A handle to the same object as a base class (or const) type.
  template <typename U, typename = std::enable_if_t<std::is_convertible_v<T*, U*>>>
  operator ref_count<U>() const {
    return ref_count<U>(value_);
  }

  // Gives up the pointer without releasing its reference, which the caller now owns (hand it
  // to assume() or call release() on it).
  T* take() {
    T* r = value_;
    value_ = nullptr;
    return r;
  }
};

}  // namespace slinky

#endif  // SLINKY_BASE_REF_COUNT_H
