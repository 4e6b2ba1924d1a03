/// \file
/// `function_ref<R(Args...)>`: a non-owning, non-allocating reference to a callable. The callable
/// must outlive the function_ref (pass it down a call stack, never store it).
#ifndef SLINKY_BASE_FUNCTION_REF_H
#define SLINKY_BASE_FUNCTION_REF_H

#include <cstddef>
#include <type_traits>
#include <utility>

namespace slinky {

/// A non-owning reference to a callable of signature Fn; only function types R(Args...) are
/// defined.
template <typename Fn>
class function_ref;

/// A non-owning reference to a callable taking Args... and returning R.
/// Null when default constructed or made from nullptr (calling it then is undefined); converts
/// to bool (true when it refers to a callable). The callable is called as the lvalue it was
/// given as, so mutable lambdas work.
template <typename R, typename... Args>
class function_ref<R(Args...)> {
  void* obj_ = nullptr;
  R (*call_)(void*, Args...) = nullptr;

public:
  /// A null reference.
  function_ref() = default;
  /// A null reference, so that `function_ref<void()> f = nullptr` and default arguments work.
  function_ref(std::nullptr_t) {}
  /// Refers to f (any callable with a compatible signature but a function_ref), which must
  /// outlive this function_ref.
  template <typename F, typename = std::enable_if_t<!std::is_same_v<std::decay_t<F>, function_ref> &&
                                                    std::is_invocable_r_v<R, F&, Args...>>>
  function_ref(F&& f)
      : obj_(const_cast<void*>(static_cast<const void*>(&f))), call_([](void* obj, Args... args) -> R {
          return (*static_cast<std::remove_reference_t<F>*>(obj))(std::forward<Args>(args)...);
        }) {}

  /// Calls the callable (undefined if null).
  R operator()(Args... args) const { return call_(obj_, std::forward<Args>(args)...); }
  /// True if it refers to a callable.
  operator bool() const { return call_ != nullptr; }
};

}  // namespace slinky

#endif  // SLINKY_BASE_FUNCTION_REF_H
