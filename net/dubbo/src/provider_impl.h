// The Provider's shared parts: the open channels (so a late Reply never touches a closed one),
// the counters, and one call's reply state. Internal to net/dubbo.
#pragma once

#include <wheelbeat/dubbo/call_view.h>
#include <wheelbeat/dubbo/provider.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
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

// The provider's counters, counted on every call by the loop threads: one block per thread, so
// that no add is a locked instruction nor bounces a cache line between cores. The first kOwned
// threads of the process that count own a block each (their adds: a load and a store); any later
// thread adds atomically to the last, shared block. Read from any thread: summed over the blocks.
struct Counters {
  enum Field : std::uint8_t { kRequests, kValues, kExceptions, kErrors, kFields };
  static constexpr std::size_t kOwned = 15;

  void add(Field field) noexcept;
  std::uint64_t sum(Field field) const noexcept;

private:
  struct alignas(64) Block {
    std::atomic<std::uint64_t> n[kFields]{};
  };
  Block blocks_[kOwned + 1];
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
  // The state onFrame keeps on its stack: only its thread answers it (a Reply gets a shared copy).
  bool local = false;
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
bool sendString(ReplyState& state, std::string_view value);
bool sendError(ReplyState& state, std::uint8_t status, std::string_view message);

// A copy of a call's state (not yet answered) for a Reply, which may outlive the call: it holds
// the open channels, and its block comes from the thread's RecyclingAllocator.
std::shared_ptr<ReplyState> share(const ReplyState& state, std::shared_ptr<OpenChannels> channels);

struct ScannedCall;

// Builds the CallView and Answer of one call (their constructors are private).
struct CallViewAccess {
  static CallView of(const ScannedCall& call, std::string_view body, const BodyLimits& limits);
  static CallView of(const Request& request);
  static Answer answer(ReplyState& state) { return Answer(state); }
};

}  // namespace wheelbeat::dubbo::detail

namespace wheelbeat::dubbo {

struct Provider::Impl {
  struct Method {
    std::string name;
    std::string descriptor;
    AsyncHandler handler;    // or
    InPlaceHandler inPlace;  // exactly one of them
  };
  struct Service {
    ServiceId id;  // version normalised: "0.0.0" -> ""
    std::vector<Method> methods;
  };

  BodyLimits limits;
  std::vector<Service> services;
  // Unique in the process, and renewed by every add(): what a thread's cache of its last match
  // (provider_call.cpp) is keyed by.
  std::uint64_t id = nextId();
  std::shared_ptr<detail::Shared> shared = std::make_shared<detail::Shared>();
  std::shared_ptr<detail::OpenChannels> channels{shared, &shared->channels};
  std::shared_ptr<detail::Counters> counters{shared, &shared->counters};

  // What a call asks for, as dispatch() matches it: views of its body or of its Request.
  struct Key {
    std::string_view path, method, descriptor;
    std::string_view version;  // the attachment's or the header's, normalised ("" for none)
    std::string_view group;
    bool echo = false;  // $echo with one argument
  };

  void add(const ServiceId& service, std::string method, std::string descriptor,
           AsyncHandler handler, InPlaceHandler inPlace);
  static std::uint64_t nextId();
  // The method serving `key`, or nullptr for an echo; nullopt after answering the failure
  // (Dubbo's status and words for an unknown path, method, version or group).
  std::optional<const Method*> dispatch(const Key& key, detail::ReplyState& state) const;
  // dispatch() without the thread's cache of its last match.
  std::optional<const Method*> match(const Key& key, detail::ReplyState& state) const;
  // One call's two ways: read in place (`call`), or decoded into `request` first.
  // One call's two ways: read in place (`call`), or decoded into `request` first. `state` is
  // the call's, answered inline on `channel` while onFrame runs.
  void serveScanned(const detail::ScannedCall& call, std::string_view body, Request& reused,
                    detail::ReplyState& state, net::Channel& channel);
  void serveDecoded(Request& request, detail::ReplyState& state, net::Channel& channel);
  // Runs a Handler / AsyncHandler: its Reply gets a shared copy of `state`.
  void runHandler(const AsyncHandler& handler, const Request& request,
                  const detail::ReplyState& state, net::Channel& channel);
};

// "" for "" and "0.0.0" (Dubbo's "no version"), else `version`.
std::string_view normalVersion(std::string_view version);
// Dubbo's service key in its messages: "group/path:version" (group and version when not "").
std::string serviceKey(std::string_view group, std::string_view path, std::string_view version);

}  // namespace wheelbeat::dubbo
