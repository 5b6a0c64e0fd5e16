// The error names of wheelbeat: one vocabulary for every failure a retry policy can match
// (RetryOptions::retryOn / ignore), whoever reports it — a RetryRunner's operation, a failback
// backend, a registry engine, the reconnect task, or net (net::errorName() maps CallStatus,
// SendResult, a response's status byte and NetError onto it). config/ accepts only these names in
// "retry_on" and "ignore", so a policy written in JSON cannot name an error that never happens.
//
//   name                 meaning (who reports it)                               retrying helps?
//   "timeout"            no answer within the time allowed: a request's timeout  usually
//                        (net CallStatus::Timeout, Dubbo status 30 / 31), a
//                        registry reply, a RetryRunner attempt's attemptTimeout,
//                        ETIMEDOUT
//   "disconnected"       no connection, or it closed before the answer            usually
//                        (CallStatus::Closed, SendResult::NotConnected, Dubbo
//                        status 35, a refused / reset connection, a host name
//                        that does not resolve, a registry without its server,
//                        the reconnect task)
//   "read-idle"          the connection went silent beyond the idle timeout      yes (reconnect)
//                        (reconnect task, Redis engine)
//   "overloaded"         no room to take the request now: the send queue is      with backoff
//                        full (SendResult::QueueFull), the server's pool is
//                        exhausted (Dubbo status 100), the process ran short of
//                        memory or descriptors
//   "rejected"           the service received the request and answered with an   rarely
//                        error (Dubbo status 50, 60, 70, 80; a registry that
//                        refused the command)
//   "bad-request"        the request itself is wrong and will fail again         no
//                        (SendResult::BodyTooLarge, Dubbo status 40 / 90)
//   "no-endpoint"        no endpoint to send the call to (FailbackInvoker)        once one joins
//   "exception"          the operation threw (RetryRunner, failback)             rarely
//   "failback-rejected"  FailbackInvoker already holds maxPendingRetries          no
//                        failed invocations (a final outcome, never retried)
//
// Names are lower case, ASCII, compared exactly. C++ callers may report names of their own (the
// retry policy matches any non-empty string); only config/ restricts a document to this list.
// Thread: constants and pure functions, any thread.
#pragma once

#include <wheelbeat/core/cxx20.h>

#include <algorithm>
#include <array>
#include <string_view>

namespace wheelbeat::tasks::errors {

inline constexpr std::string_view kTimeout = "timeout";
inline constexpr std::string_view kDisconnected = "disconnected";
inline constexpr std::string_view kReadIdle = "read-idle";
inline constexpr std::string_view kOverloaded = "overloaded";
inline constexpr std::string_view kRejected = "rejected";
inline constexpr std::string_view kBadRequest = "bad-request";
inline constexpr std::string_view kNoEndpoint = "no-endpoint";
inline constexpr std::string_view kException = "exception";
inline constexpr std::string_view kFailbackRejected = "failback-rejected";

// Every name above, in the order of the table (config/ lists them in this order in its errors).
inline constexpr std::array<std::string_view, 9> kAll{
    kTimeout,    kDisconnected, kReadIdle,  kOverloaded,       kRejected,
    kBadRequest, kNoEndpoint,   kException, kFailbackRejected,
};

// True if `name` is one of kAll.
[[nodiscard]] constexpr bool isKnown(std::string_view name) noexcept {
  return std::ranges::find(kAll, name) != kAll.end();
}

}  // namespace wheelbeat::tasks::errors
