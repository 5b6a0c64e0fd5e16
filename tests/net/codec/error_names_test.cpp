// net's outcomes as the shared error names of tasks/error_names.h (what a RetryRunner's
// operation reports): CallResult (status and Dubbo status byte), SendResult, NetError.
#include <wheelbeat/net/channel.h>
#include <wheelbeat/net/error.h>
#include <wheelbeat/tasks/error_names.h>

#include <doctest/doctest.h>

#include <cerrno>
#include <cstdint>

using wheelbeat::net::CallResult;
using wheelbeat::net::CallStatus;
using wheelbeat::net::errorName;
using wheelbeat::net::NetError;
using wheelbeat::net::SendResult;
namespace errors = wheelbeat::tasks::errors;

namespace {

CallResult answered(std::uint8_t frameStatus) {
  CallResult r;
  r.frameStatus = frameStatus;
  return r;
}

}  // namespace

TEST_SUITE("codec") {

TEST_CASE("error names: a call's status and Dubbo status byte") {
  CHECK(errorName(answered(20)).empty());
  CallResult timedOut;
  timedOut.status = CallStatus::Timeout;
  CHECK(errorName(timedOut) == "timeout");
  CallResult closed;
  closed.status = CallStatus::Closed;
  CHECK(errorName(closed) == "disconnected");
  CHECK(errorName(answered(30)) == "timeout");
  CHECK(errorName(answered(31)) == "timeout");
  CHECK(errorName(answered(35)) == "disconnected");
  CHECK(errorName(answered(40)) == "bad-request");
  CHECK(errorName(answered(90)) == "bad-request");
  CHECK(errorName(answered(100)) == "overloaded");
  for (std::uint8_t s : {50, 60, 70, 80, 0, 255}) CHECK(errorName(answered(s)) == "rejected");
}

TEST_CASE("error names: refused sends") {
  CHECK(errorName(SendResult::Queued).empty());
  CHECK(errorName(SendResult::NotConnected) == "disconnected");
  CHECK(errorName(SendResult::QueueFull) == "overloaded");
  CHECK(errorName(SendResult::BodyTooLarge) == "bad-request");
}

TEST_CASE("error names: libuv codes") {
  // On Unix libuv's codes are the negated errno values (UV_EOF, -4095, is libuv's own).
  CHECK(errorName(NetError()).empty());
  CHECK(errorName(NetError(-ETIMEDOUT)) == "timeout");
  for (int e : {ENOMEM, ENOBUFS, EMFILE, ENFILE, EAGAIN}) {
    CHECK(errorName(NetError(-e)) == "overloaded");
  }
  for (int code : {-ECONNREFUSED, -ECONNRESET, -EPIPE, -ENETUNREACH, -4095}) {
    CHECK(errorName(NetError(code)) == "disconnected");
  }
}

TEST_CASE("error names: every name net produces is in the shared vocabulary") {
  for (std::uint8_t s = 21; s != 20; ++s) CHECK(errors::isKnown(errorName(answered(s))));
  for (int code = -200; code < 0; ++code) CHECK(errors::isKnown(errorName(NetError(code))));
  for (auto r : {SendResult::NotConnected, SendResult::QueueFull, SendResult::BodyTooLarge}) {
    CHECK(errors::isKnown(errorName(r)));
  }
}

}  // TEST_SUITE("codec")
