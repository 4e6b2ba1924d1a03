// Intrusive reference counting: ref_counted<T> holds the count inside the object, and
// ref_count<T> is the owning handle. Counts are atomic so built programs can be shared
// between threads.
#ifndef SLINKY_BASE_REF_COUNT_H
#define SLINKY_BASE_REF_COUNT_H

#include <atomic>
#include <utility>

namespace slinky {

// Base for reference counted objects. T must provide `static void destroy(T*)` or be
// deletable through a T* (the default destroy deletes).
template <typename T>
class ref_counted {
  mutable std::atomic<int> ref_count_{0};

public:
  ref_counted() = default;
  ref_counted(const ref_counted&) : ref_count_(0) {}
  ref_counted& operator=(const ref_counted&) { return *this; }

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
template <typename T>
class ref_count {
  T* value_ = nullptr;

public:
  ref_count() = default;
  ref_count(T* v) : value_(v) {
    if (value_) value_->add_ref();
  }
  ref_count(const ref_count& other) : ref_count(other.value_) {}
  ref_count(ref_count&& other) noexcept : value_(other.value_) { other.value_ = nullptr; }
  template <typename U>
  ref_count(const ref_count<U>& other) : ref_count(other.get()) {}
  ~ref_count() {
    if (value_) value_->release();
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
  explicit operator bool() const { return value_ != nullptr; }
  bool defined() const { return value_ != nullptr; }

  // Takes the pointer without changing its count (for handing an object between handles).
  T* take() {
    T* r = value_;
    value_ = nullptr;
    return r;
  }
};

}  // namespace slinky

#endif  // SLINKY_BASE_REF_COUNT_H
