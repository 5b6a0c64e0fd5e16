#include <wheelbeat/net/options.h>

#include <fmt/chrono.h>
#include <fmt/format.h>

#include <stdexcept>
#include <string>

namespace wheelbeat::net {
namespace {

[[noreturn]] void fail(std::string_view path, std::string_view value, std::string_view expected) {
  throw std::invalid_argument(fmt::format("{} = {} (expected: {})", path, value, expected));
}

std::string quoted(std::string_view s) { return fmt::format("\"{}\"", s); }

void checkEndpoint(const Endpoint& e, bool server, std::string_view path) {
  if (e.host.empty()) fail(fmt::format("{}.host", path), quoted(e.host), "a non-empty host");
  if (!server && e.port == 0) fail(fmt::format("{}.port", path), "0", "1 .. 65535");
}

void checkCodec(const CodecOptions& o, std::string_view path) {
  constexpr std::size_t kMax = 0x7fffffff;
  if (o.maxBodyBytes < 1 || o.maxBodyBytes > kMax) {
    fail(fmt::format("{}.maxBodyBytes", path), std::to_string(o.maxBodyBytes), "1 .. 2147483647");
  }
}

void checkSendQueue(std::size_t queue, const CodecOptions& codec, std::string_view path) {
  if (queue < codec.maxBodyBytes + 16) {
    fail(fmt::format("{}.maxSendQueueBytes", path), std::to_string(queue),
         fmt::format(">= codec.maxBodyBytes + 16 = {}", codec.maxBodyBytes + 16));
  }
}

// Re-throws a nested validator's message under `path` ("HeartbeatOptions.x" → "path.x").
template <typename Options>
void checkNested(const Options& o, std::string_view prefix, std::string_view path) {
  try {
    tasks::validate(o);
  } catch (const std::invalid_argument& e) {
    std::string_view message = e.what();
    if (message.starts_with(prefix)) message.remove_prefix(prefix.size());
    throw std::invalid_argument(fmt::format("{}{}", path, message));
  }
}

}  // namespace

void validate(const CodecOptions& o) { checkCodec(o, "CodecOptions"); }

void validate(const ServerOptions& o) {
  checkEndpoint(o.listen, true, "ServerOptions.listen");
  if (o.backlog < 1 || o.backlog > 65535) {
    fail("ServerOptions.backlog", std::to_string(o.backlog), "1 .. 65535");
  }
  checkCodec(o.codec, "ServerOptions.codec");
  checkSendQueue(o.maxSendQueueBytes, o.codec, "ServerOptions");
  if (o.shutdownGrace < std::chrono::nanoseconds(0)) {
    fail("ServerOptions.shutdownGrace", fmt::format("{}", o.shutdownGrace), ">= 0");
  }
  checkNested(o.heartbeat, "HeartbeatOptions", "ServerOptions.heartbeat");
}

void validate(const ClientOptions& o) {
  checkEndpoint(o.server, false, "ClientOptions.server");
  if (o.connectTimeout <= std::chrono::nanoseconds(0)) {
    fail("ClientOptions.connectTimeout", fmt::format("{}", o.connectTimeout), "> 0");
  }
  checkCodec(o.codec, "ClientOptions.codec");
  checkSendQueue(o.maxSendQueueBytes, o.codec, "ClientOptions");
  checkNested(o.heartbeat, "HeartbeatOptions", "ClientOptions.heartbeat");
}

}  // namespace wheelbeat::net
