// The Provider's shared parts: the open channels (so a late Reply never touches a closed one),
// the counters, and one call's reply state. Internal to net/dubbo.
#pragma once

#include <wheelbeat/dubbo/provider.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

namespace wheelbeat::dubbo::detail {

// Channels by id, between onConnected and onClosed. A reply sends while holding the mutex, so
// the channel cannot finish closing (onClosed waits for the mutex) during its send().
struct OpenChannels {
  std::mutex mutex;
  std::unordered_map<std::uint64_t, net::Channel*> byId;
};

struct Counters {
  std::atomic<std::uint64_t> requests{0};
  std::atomic<std::uint64_t> values{0};
  std::atomic<std::uint64_t> exceptions{0};
  std::atomic<std::uint64_t> errors{0};
};

// Both in one block, so that a call's ReplyState keeps them alive with one reference.
struct Shared {
  OpenChannels channels;
  Counters counters;
};

struct ReplyState {
  std::shared_ptr<OpenChannels> channels;  // owns the whole Shared block
  Counters* counters = nullptr;            // in that block
  std::uint64_t channelId = 0;
  std::uint64_t requestId = 0;
  std::uint8_t serialization = net::kHessian2;
  bool twoWay = true;
  std::string dubboVersion;  // the request's: decides the response's form
  std::atomic<bool> answered{false};
};

// A one-block cache per thread for what every call allocates once and frees soon after (its
// ReplyState, with its shared_ptr's control block): the next call on the thread reuses the block
// instead of a malloc / free pair. A block freed on another thread (an async answer) goes to that
// thread's cache, or to the heap when it holds one already.
template <typename T>
struct RecyclingAllocator {
  using value_type = T;
  RecyclingAllocator() = default;
  template <typename U>
  RecyclingAllocator(const RecyclingAllocator<U>&) noexcept {}  // NOLINT: rebinding is implicit
  T* allocate(std::size_t n) {
    Slot& s = slot();
    if (n == 1 && s.block != nullptr) return std::exchange(s.block, nullptr);
    return std::allocator<T>{}.allocate(n);
  }
  void deallocate(T* p, std::size_t n) noexcept {
    Slot& s = slot();
    if (n == 1 && s.block == nullptr) {
      s.block = p;
      return;
    }
    std::allocator<T>{}.deallocate(p, n);
  }
  template <typename U>
  bool operator==(const RecyclingAllocator<U>&) const noexcept {
    return true;
  }

private:
  struct Slot {
    T* block = nullptr;
    Slot() = default;
    Slot(const Slot&) = delete;
    Slot& operator=(const Slot&) = delete;
    ~Slot() {
      if (block != nullptr) std::allocator<T>{}.deallocate(block, 1);
    }
  };
  static Slot& slot() {
    thread_local Slot s;
    return s;
  }
};

// The call the loop thread is in onFrame for: an answer to it given before onFrame returns (a
// synchronous handler's, nearly all) goes straight to its channel, which cannot close while its
// loop thread is here, without the lock and the lookup. Set and restored by InlineScope.
struct InlineReply {
  const ReplyState* state = nullptr;
  net::Channel* channel = nullptr;
};
InlineReply& inlineReply();  // this thread's
class InlineScope {
public:
  InlineScope(const ReplyState& state, net::Channel& channel)
      : saved_(std::exchange(inlineReply(), InlineReply{&state, &channel})) {}
  ~InlineScope() { inlineReply() = saved_; }
  InlineScope(const InlineScope&) = delete;
  InlineScope& operator=(const InlineScope&) = delete;

private:
  InlineReply saved_;
};

// Each answers at most once per state (false: answered before, one-way, or the channel gone).
bool sendResult(ReplyState& state, const Result& result);
bool sendError(ReplyState& state, std::uint8_t status, std::string_view message);

}  // namespace wheelbeat::dubbo::detail

namespace wheelbeat::dubbo {

struct Provider::Impl {
  struct Method {
    std::string name;
    std::string descriptor;
    AsyncHandler handler;
  };
  struct Service {
    ServiceId id;  // version normalised: "0.0.0" -> ""
    std::vector<Method> methods;
  };

  BodyLimits limits;
  std::vector<Service> services;
  std::shared_ptr<detail::Shared> shared = std::make_shared<detail::Shared>();
  std::shared_ptr<detail::OpenChannels> channels{shared, &shared->channels};
  std::shared_ptr<detail::Counters> counters{shared, &shared->counters};

  void add(const ServiceId& service, std::string method, std::string descriptor,
           AsyncHandler handler);
  void dispatch(Request& request, const std::shared_ptr<detail::ReplyState>& state);
};

// "" for null, "" and "0.0.0" (Dubbo's "no version").
std::string normalVersion(std::string_view version);

}  // namespace wheelbeat::dubbo
