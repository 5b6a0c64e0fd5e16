// The names of send and call outcomes (channel.h).
#include <wheelbeat/net/channel.h>
#include <wheelbeat/net/codec.h>
#include <wheelbeat/tasks/error_names.h>

namespace wheelbeat::net {

std::string_view sendResultName(SendResult result) noexcept {
  switch (result) {
    case SendResult::Queued: return "queued";
    case SendResult::QueueFull: return "queue-full";
    case SendResult::NotConnected: return "not-connected";
    case SendResult::BodyTooLarge: return "body-too-large";
  }
  return "unknown";
}

std::string_view callStatusName(CallStatus status) noexcept {
  switch (status) {
    case CallStatus::Ok: return "ok";
    case CallStatus::Timeout: return "timeout";
    case CallStatus::Closed: return "closed";
  }
  return "unknown";
}

std::string_view errorName(SendResult result) noexcept {
  switch (result) {
    case SendResult::Queued: return {};
    case SendResult::QueueFull: return tasks::errors::kOverloaded;
    case SendResult::NotConnected: return tasks::errors::kDisconnected;
    case SendResult::BodyTooLarge: return tasks::errors::kBadRequest;
  }
  return tasks::errors::kDisconnected;
}

std::string_view errorName(const CallResult& result) noexcept {
  namespace errors = tasks::errors;
  if (result.status == CallStatus::Timeout) return errors::kTimeout;
  if (result.status == CallStatus::Closed) return errors::kDisconnected;
  // Dubbo 2's response status codes (org.apache.dubbo.remoting.exchange.Response).
  switch (result.frameStatus) {
    case kStatusOk: return {};
    case 30:
    case 31: return errors::kTimeout;
    case 35: return errors::kDisconnected;
    case 40:
    case 90: return errors::kBadRequest;
    case 100: return errors::kOverloaded;
    default: return errors::kRejected;
  }
}

}  // namespace wheelbeat::net
