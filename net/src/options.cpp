#include <wheelbeat/core/option_error.h>
#include <wheelbeat/net/options.h>

#include <fmt/chrono.h>
#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <stdexcept>
#include <string>

namespace wheelbeat::net {
namespace {

// `path`: "ServerOptions.codec.maxBody" — the struct, then the member.
[[noreturn]] void fail(std::string_view path, std::string value, std::string expected,
                       std::string other = {}, std::string otherExpected = {}) {
  const std::size_t dot = path.find('.');
  throw core::OptionError(std::string(path.substr(0, dot)), std::string(path.substr(dot + 1)),
                          std::move(value), std::move(expected), std::move(other),
                          std::move(otherExpected));
}

std::string quoted(std::string_view s) { return fmt::format("\"{}\"", s); }

void checkEndpoint(const Endpoint& e, bool server, std::string_view path) {
  if (e.host.empty()) fail(fmt::format("{}.host", path), quoted(e.host), "a non-empty host");
  if (!server && e.port == 0) fail(fmt::format("{}.port", path), "0", "1 .. 65535");
}

void checkCodec(const CodecOptions& o, std::string_view path) {
  constexpr std::size_t kMax = 0x7fffffff;
  if (o.maxBody < 1 || o.maxBody > kMax) {
    fail(fmt::format("{}.maxBody", path), std::to_string(o.maxBody), "1 .. 2147483647");
  }
}

void checkSendQueue(std::size_t queue, const CodecOptions& codec, std::string_view path) {
  if (queue < codec.maxBody + 16) {
    fail(fmt::format("{}.maxSendQueue", path), std::to_string(queue),
         fmt::format(">= codec.maxBody + 16 = {}", codec.maxBody + 16), "codec.maxBody",
         fmt::format("<= maxSendQueue - 16 = {}", queue < 16 ? 0 : queue - 16));
  }
}

// Re-throws a nested validator's error under `member` of `options` ("HeartbeatOptions.x" →
// "ServerOptions.heartbeat.x").
template <typename Options, typename... Args>
void checkNested(const Options& o, std::string options, std::string_view member, Args... args) {
  try {
    tasks::validate(o, args...);
  } catch (const core::OptionError& e) {
    throw e.within(std::move(options), member);
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
  checkSendQueue(o.maxSendQueue, o.codec, "ServerOptions");
  if (o.shutdownGrace < std::chrono::nanoseconds(0)) {
    fail("ServerOptions.shutdownGrace", fmt::format("{}", o.shutdownGrace), ">= 0");
  }
  checkNested(o.heartbeat, "ServerOptions", "heartbeat");
}

void validate(const ClientOptions& o) {
  checkEndpoint(o.server, false, "ClientOptions.server");
  if (o.connectTimeout <= std::chrono::nanoseconds(0)) {
    fail("ClientOptions.connectTimeout", fmt::format("{}", o.connectTimeout), "> 0");
  }
  checkCodec(o.codec, "ClientOptions.codec");
  checkSendQueue(o.maxSendQueue, o.codec, "ClientOptions");
  checkNested(o.heartbeat, "ClientOptions", "heartbeat");
}

void validate(const ServerOptions& o, std::chrono::nanoseconds tick) {
  validate(o);
  checkNested(o.heartbeat, "ServerOptions", "heartbeat", tick);
}

void validate(const ClientOptions& o, std::chrono::nanoseconds tick) {
  validate(o);
  checkNested(o.heartbeat, "ClientOptions", "heartbeat", tick);
}

}  // namespace wheelbeat::net

namespace wheelbeat::net {
namespace {

bool validHost(std::string_view host) {
  return !host.empty() && std::none_of(host.begin(), host.end(), [](char c) {
    return std::isspace(static_cast<unsigned char>(c)) != 0 || c == '[' || c == ']' || c == '/';
  });
}

}  // namespace

std::optional<Endpoint> parseEndpoint(std::string_view text) {
  const std::size_t colon = text.rfind(':');
  if (colon == std::string_view::npos) return std::nullopt;
  std::string_view host = text.substr(0, colon);
  if (host.starts_with('[')) {
    if (!host.ends_with(']') || host.size() < 3) return std::nullopt;
    host = host.substr(1, host.size() - 2);
    if (host.find(':') == std::string_view::npos) return std::nullopt;  // brackets: IPv6 only
  } else if (host.find(':') != std::string_view::npos) {
    return std::nullopt;  // an unbracketed IPv6 literal: its port would be ambiguous
  }
  const std::string_view port = text.substr(colon + 1);
  if (!validHost(host) || port.empty() || port.size() > 5) return std::nullopt;
  std::uint32_t value = 0;
  for (char c : port) {
    if (std::isdigit(static_cast<unsigned char>(c)) == 0) return std::nullopt;
    value = value * 10 + static_cast<std::uint32_t>(c - '0');
  }
  if (value > 65535) return std::nullopt;
  return Endpoint{std::string(host), static_cast<std::uint16_t>(value)};
}

}  // namespace wheelbeat::net
