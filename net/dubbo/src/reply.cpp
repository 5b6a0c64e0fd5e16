#include "provider_impl.h"
#include "result_encoding.h"

#include <wheelbeat/core/log.h>

#include <exception>

namespace wheelbeat::dubbo {

namespace detail {

namespace {

// One encoder per thread: its buffer keeps its capacity from reply to reply.
hessian::Encoder& threadEncoder() {
  thread_local hessian::Encoder encoder;
  encoder.reset();
  return encoder;
}

bool send(ReplyState& state, std::uint8_t status, std::string_view body) {
  const InlineReply& here = inlineReply();
  if (here.state == &state) {
    return here.channel->send(state.serialization, status, state.requestId, body) ==
           net::SendResult::Queued;
  }
  const std::lock_guard lock(state.channels->mutex);
  const auto it = state.channels->byId.find(state.channelId);
  if (it == state.channels->byId.end()) return false;
  return it->second->send(state.serialization, status, state.requestId, body) ==
         net::SendResult::Queued;
}

bool claim(ReplyState& state) {
  if (!state.twoWay) return false;
  if (state.local) {  // one thread's: no locked exchange needed
    if (state.answered.load(std::memory_order_relaxed)) return false;
    state.answered.store(true, std::memory_order_relaxed);
    return true;
  }
  return !state.answered.exchange(true);
}

}  // namespace

void Counters::add(Field field) noexcept {
  static std::atomic<std::size_t> threads{0};
  thread_local const std::size_t index = threads.fetch_add(1, std::memory_order_relaxed);
  if (index < kOwned) {  // this thread's own block: no other thread writes it
    auto& n = blocks_[index].n[field];
    n.store(n.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
  } else {
    blocks_[kOwned].n[field].fetch_add(1, std::memory_order_relaxed);
  }
}

std::uint64_t Counters::sum(Field field) const noexcept {
  std::uint64_t total = 0;
  for (const Block& b : blocks_) total += b.n[field].load(std::memory_order_relaxed);
  return total;
}

InlineReply& inlineReply() {
  thread_local InlineReply current;
  return current;
}

bool sendResult(ReplyState& state, const Result& result) {
  if (!claim(state)) return false;
  hessian::Encoder& enc = threadEncoder();
  try {
    encodeResult(result, state.dubboVersion, enc);
  } catch (const std::exception& e) {
    // A value the encoder refuses (invalid UTF-8, an expired BackRef): the caller hears why.
    enc.reset();
    encodeErrorMessage(std::string("Fail to encode response: ") + e.what(), enc);
    state.counters->add(Counters::kErrors);
    return send(state, status::kBadResponse, enc.buffer());
  }
  state.counters->add(result.kind == ResultKind::Exception ? Counters::kExceptions
                                                           : Counters::kValues);
  return send(state, status::kOk, enc.buffer());
}

bool sendString(ReplyState& state, std::string_view value) {
  if (!claim(state)) return false;
  hessian::Encoder& enc = threadEncoder();
  try {
    encodeStringResult(value, state.dubboVersion, enc);
  } catch (const std::exception& e) {  // invalid UTF-8: the caller hears why
    enc.reset();
    encodeErrorMessage(std::string("Fail to encode response: ") + e.what(), enc);
    state.counters->add(Counters::kErrors);
    return send(state, status::kBadResponse, enc.buffer());
  }
  state.counters->add(Counters::kValues);
  return send(state, status::kOk, enc.buffer());
}

std::shared_ptr<ReplyState> share(const ReplyState& state, std::shared_ptr<OpenChannels> channels) {
  auto shared = std::allocate_shared<ReplyState>(RecyclingAllocator<ReplyState>{});
  shared->channels = std::move(channels);
  shared->counters = state.counters;
  shared->channelId = state.channelId;
  shared->requestId = state.requestId;
  shared->serialization = state.serialization;
  shared->twoWay = state.twoWay;
  shared->dubboVersion = state.dubboVersion;
  return shared;
}

bool sendError(ReplyState& state, std::uint8_t status, std::string_view message) {
  if (!claim(state)) return false;
  hessian::Encoder& enc = threadEncoder();
  encodeErrorMessage(message, enc);
  state.counters->add(Counters::kErrors);
  return send(state, status, enc.buffer());
}

}  // namespace detail

Reply::Reply(std::shared_ptr<detail::ReplyState> state) : state_(std::move(state)) {}
Reply::Reply(Reply&&) noexcept = default;
Reply& Reply::operator=(Reply&& other) noexcept {
  if (this != &other) {
    Reply old(std::move(*this));  // answers the call this one held, if it was not answered
    state_ = std::move(other.state_);
  }
  return *this;
}

Reply::~Reply() {
  // While an exception unwinds (a handler threw), the dispatcher answers with it instead.
  if (!state_ || state_->answered.load() || std::uncaught_exceptions() > 0) return;
  try {
    (void)detail::sendError(*state_, status::kServiceError,
                            "the provider dropped the call without an answer");
  } catch (...) {
    core::log(core::LogLevel::Error, "dubbo: a dropped call could not be answered");
  }
}

bool Reply::value(hessian::Value value) {
  return state_ && detail::sendResult(*state_, Result::ofValue(std::move(value)));
}

bool Reply::exception(std::string_view className, std::string_view message) {
  if (!state_) return false;
  Result result;
  result.kind = ResultKind::Exception;
  result.value = makeThrowable(className, message);
  return detail::sendResult(*state_, result);
}

bool Reply::error(std::uint8_t status, std::string_view message) {
  return state_ && detail::sendError(*state_, status, message);
}

}  // namespace wheelbeat::dubbo
