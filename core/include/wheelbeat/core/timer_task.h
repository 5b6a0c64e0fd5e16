// TimerTask: the body a Timeout runs, a move-only type-erased callable.
//
// Any callable invocable as f(const Timeout&) or f() converts to a TimerTask. Callables up to
// 16 bytes (two pointers, a std::shared_ptr, a lambda capturing `this` and one more word) that
// are nothrow-movable live inline: scheduling them allocates nothing. Larger ones are moved to
// the heap once, when the TimerTask is built.
//
// Exceptions thrown by the body are caught by the timer's safe-run wrapper (see
// HashedWheelTimer), never by TimerTask itself.
#pragma once

#include <wheelbeat/core/cxx20.h>

#include <concepts>
#include <cstddef>
#include <new>
#include <type_traits>
#include <utility>

namespace wheelbeat::core {

class Timeout;

class TimerTask {
public:
  static constexpr std::size_t kInlineBytes = 16;

  TimerTask() noexcept = default;

  template <typename F>
    requires(!std::same_as<std::remove_cvref_t<F>, TimerTask> &&
             (std::invocable<std::decay_t<F>&, const Timeout&> || std::invocable<std::decay_t<F>&>))
  // Implicit on purpose: a lambda *is* a task. The requires-clause keeps TimerTask itself out,
  // which clang-tidy 14's forwarding-reference check does not read.
  TimerTask(F&& f) {  // NOLINT(google-explicit-constructor,bugprone-forwarding-reference-overload)
    using Fn = std::decay_t<F>;
    if constexpr (fitsInline<Fn>()) {
      ::new (static_cast<void*>(buf_)) Fn(std::forward<F>(f));
      ops_ = &inlineOps<Fn>;
    } else {
      ::new (static_cast<void*>(buf_)) Fn*(new Fn(std::forward<F>(f)));
      ops_ = &heapOps<Fn>;
    }
  }

  TimerTask(TimerTask&& other) noexcept : ops_(other.ops_) { relocateFrom(other); }
  TimerTask& operator=(TimerTask&& other) noexcept {
    if (this != &other) {
      reset();
      ops_ = other.ops_;
      relocateFrom(other);
    }
    return *this;
  }
  TimerTask(const TimerTask&) = delete;
  TimerTask& operator=(const TimerTask&) = delete;
  ~TimerTask() { reset(); }

  [[nodiscard]] explicit operator bool() const noexcept { return ops_ != nullptr; }

  // Runs the body. Precondition: *this holds a callable.
  void operator()(const Timeout& timeout) { ops_->invoke(buf_, timeout); }

  // Destroys the held callable (and everything it captured); *this becomes empty.
  void reset() noexcept {
    if (ops_ != nullptr) {
      if (!ops_->trivial) ops_->destroy(buf_);
      ops_ = nullptr;
    }
  }

private:
  struct Ops {
    void (*invoke)(void* self, const Timeout& timeout);
    void (*relocate)(void* dst, void* src) noexcept;  // move-construct into dst, destroy src
    void (*destroy)(void* self) noexcept;
    // Trivially copyable and destructible inline callables (lambdas capturing pointers and
    // integers, the common case) move by memcpy and need no destructor call: no indirect call
    // on the schedule and release paths.
    bool trivial;
  };

  void relocateFrom(TimerTask& other) noexcept {
    if (ops_ == nullptr) return;
    if (ops_->trivial) {
      __builtin_memcpy(buf_, other.buf_, kInlineBytes);
    } else {
      ops_->relocate(buf_, other.buf_);
    }
    other.ops_ = nullptr;
  }

  template <typename Fn>
  static constexpr bool fitsInline() {
    // NOLINTNEXTLINE(misc-redundant-expression): differs per Fn; tidy sees one instantiation.
    return sizeof(Fn) <= kInlineBytes && alignof(Fn) <= 8 &&
           std::is_nothrow_move_constructible_v<Fn>;
  }

  template <typename Fn>
  static void call(Fn& fn, const Timeout& timeout) {
    if constexpr (std::invocable<Fn&, const Timeout&>) {
      fn(timeout);
    } else {
      fn();
    }
  }

  template <typename Fn>
  static constexpr Ops inlineOps{
      [](void* self, const Timeout& t) { call(*static_cast<Fn*>(self), t); },
      [](void* dst, void* src) noexcept {
        ::new (dst) Fn(std::move(*static_cast<Fn*>(src)));
        static_cast<Fn*>(src)->~Fn();
      },
      [](void* self) noexcept { static_cast<Fn*>(self)->~Fn(); },
      std::is_trivially_copyable_v<Fn>&& std::is_trivially_destructible_v<Fn>,
  };

  template <typename Fn>
  static constexpr Ops heapOps{
      [](void* self, const Timeout& t) { call(**static_cast<Fn**>(self), t); },
      [](void* dst, void* src) noexcept { ::new (dst) Fn*(*static_cast<Fn**>(src)); },
      [](void* self) noexcept { delete *static_cast<Fn**>(self); },
      false,
  };

  alignas(8) unsigned char buf_[kInlineBytes]{};
  const Ops* ops_ = nullptr;
};

}  // namespace wheelbeat::core
