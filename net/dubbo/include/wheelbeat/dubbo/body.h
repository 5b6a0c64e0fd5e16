// Dubbo 2 RPC bodies in Hessian 2.0 (serialization id 2): what goes inside the exchange codec's
// frames (net/codec.h) when a Java or Node Dubbo peer calls a method or answers one.
//
// Request body: a sequence of Hessian values —
//   dubbo version   string, "2.0.2" (the protocol version; Dubbo 3 peers send it too)
//   service path    string, the interface name unless the service was exported under a path
//   service version string or null (null, "" and "0.0.0" all mean "no version")
//   method name     string
//   descriptor      string, the JVM parameter descriptor ("Ljava/lang/String;I", see descriptor.h)
//   arguments       one value per parameter of the descriptor
//   attachments     a map with string keys: path, interface, version, group, timeout, ...
//
// Response body (frame status 20): an int flag, then
//   0 exception, 1 value, 2 null             — for clients older than Dubbo 2.0.2 or
//   in 2.0.10..2.6.2 3 / 4 / 5 the same, then an attachments map — for the others
//   (supportsResponseAttachments())
// An exception is the Throwable object as Java writes it (exception.h). A frame whose status is
// not 20 carries one Hessian string instead: the error message (encodeErrorMessage()).
//
// Encoding: the encode functions append to an Encoder's buffer; reuse one Encoder per thread
// (reset() between bodies: Hessian's refs, types and class definitions are per body, as Java's
// Hessian2Output is per message). Decoding: within BodyLimits; every refusal is a BodyError
// naming the body, the field and the byte offset, e.g.
//   `dubbo request body: at byte 7: method name: expected a string, got int`.
// Threads: plain data and pure functions; an Encoder is used by one thread at a time.
#pragma once

#include <wheelbeat/hessian/decoder.h>
#include <wheelbeat/hessian/encoder.h>
#include <wheelbeat/hessian/value.h>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace wheelbeat::dubbo {

/// The protocol version this library speaks (Dubbo's DEFAULT_DUBBO_PROTOCOL_VERSION).
inline constexpr std::string_view kDubboVersion = "2.0.2";

/// Dubbo's response status codes (the frame's status byte).
namespace status {
inline constexpr std::uint8_t kOk = 20;
inline constexpr std::uint8_t kClientTimeout = 30;
inline constexpr std::uint8_t kServerTimeout = 31;
inline constexpr std::uint8_t kChannelInactive = 35;
inline constexpr std::uint8_t kBadRequest = 40;
inline constexpr std::uint8_t kBadResponse = 50;
inline constexpr std::uint8_t kServiceNotFound = 60;
inline constexpr std::uint8_t kServiceError = 70;
inline constexpr std::uint8_t kServerError = 80;
inline constexpr std::uint8_t kClientError = 90;
inline constexpr std::uint8_t kThreadPoolExhausted = 100;
}  // namespace status
/// "ok", "client-timeout", "server-timeout", "channel-inactive", "bad-request", "bad-response",
/// "service-not-found", "service-error", "server-error", "client-error",
/// "thread-pool-exhausted"; "unknown" for any other byte. Thread: any.
std::string_view statusName(std::uint8_t code) noexcept;

/// A body the decoder refuses; what() names the body, the byte offset and the field.
class BodyError : public std::runtime_error {
public:
  BodyError(std::size_t offset, const std::string& what);
  /// Where the refused field starts (from the start of the body).
  std::size_t offset() const { return offset_; }

private:
  std::size_t offset_;
};

/// Bounds on what the body decoders accept. validate() throws std::invalid_argument naming the
/// field ("dubbo: BodyLimits.maxArguments = 0 (expected >= 1)").
struct BodyLimits {
  hessian::DecoderLimits hessian{};
  /// Parameters of one descriptor (Java allows 255).
  std::size_t maxArguments = 255;
  /// Entries of the attachments map.
  std::size_t maxAttachments = 1024;
  void validate() const;
};

/// Dubbo's attachments: string keys (unique; set() replaces), values of any type (strings in
/// practice), in insertion order. Held in a Hessian map node, so encoding copies nothing;
/// copying an Attachments copies its entries (never shares them). An empty one holds no node
/// (none is allocated until the first set(): every call's Result and Request has one).
class Attachments {
public:
  Attachments() = default;
  Attachments(const Attachments& other);
  Attachments& operator=(const Attachments& other);
  Attachments(Attachments&&) noexcept = default;
  Attachments& operator=(Attachments&&) noexcept = default;

  /// Sets `key` to `value`, replacing an entry of the same key (it keeps its place).
  void set(std::string_view key, hessian::Value value);
  /// The value of `key`, or nullptr.
  const hessian::Value* find(std::string_view key) const;
  /// The value of `key` when it is a string, else `fallback` (absent, null or another type).
  std::string_view stringOr(std::string_view key, std::string_view fallback) const;
  std::size_t size() const { return map_ ? map_->entries.size() : 0; }
  bool empty() const { return !map_ || map_->entries.empty(); }
  /// The map node itself (never null: a new empty node when there are no entries), e.g. to
  /// encode or to walk its entries.
  hessian::MapPtr map() const;
  /// Takes a decoded map. Throws BodyError (at `offset`) naming the first key that is not a
  /// string or repeats another.
  static Attachments adopt(hessian::MapPtr map, std::size_t offset);

private:
  hessian::MapPtr map_;  // null: no entries
};

/// One call, as its request body carries it.
struct Request {
  std::string dubboVersion{kDubboVersion};
  std::string path;
  /// nullopt is written as Hessian null (what Java writes for a service without a version).
  std::optional<std::string> version;
  std::string method;
  std::string descriptor;
  std::vector<hessian::Value> args;
  Attachments attachments;
};

/// Appends the body of `request` to enc.buffer(). Throws std::invalid_argument when the number
/// of args differs from the descriptor's parameters (naming both) or the descriptor is
/// malformed, hessian::EncodeError for a value the encoder refuses; on a throw the buffer may
/// hold a partial body (reset() the encoder).
void encodeRequest(const Request& request, hessian::Encoder& enc);
/// The same into a fresh string.
std::string encodeRequest(const Request& request);
/// Throws BodyError (every field checked: strings where strings are due, a well-formed
/// descriptor, one value per parameter, an attachments map with string keys, nothing after it).
/// A body that ends after the arguments (no attachments map) is accepted with no attachments.
Request decodeRequest(std::string_view body, const BodyLimits& limits = {});
/// The same into `out`, reusing its storage: what a server does for every call. Bodies whose
/// strings are all short ASCII (compact or medium forms) with string arguments and attachments,
/// nearly every call's, are read in place: no Value tree, and no allocation once `out` has held a
/// call of that shape (its strings, argument values and attachments node keep their capacity; the
/// node only while nothing else holds it). Any other body takes decodeRequest() above. Same
/// result, same BodyError; after a throw `out` is unspecified (decode into it again or assign
/// it). Thread: any (per-thread state: the last descriptor's parameter count).
void decodeRequest(std::string_view body, Request& out, const BodyLimits& limits = {});

/// The outcome a response body carries (flags 0/1/2, or 3/4/5 with attachments).
enum class ResultKind : std::uint8_t { Exception = 0, Value = 1, Null = 2 };
/// "exception", "value", "null".
std::string_view resultKindName(ResultKind kind) noexcept;

struct Result {
  ResultKind kind = ResultKind::Null;
  /// Value: the returned value; Exception: the Throwable object (exception.h); Null: null.
  hessian::Value value;
  /// Sent only to clients that read them; received when the flag was 3, 4 or 5.
  Attachments attachments;

  /// A returned value (a null Value gives kind Null, as Java answers a null return).
  static Result ofValue(hessian::Value value);
};

/// Dubbo's Version.getIntVersion(): "2.0.2" -> 2000200, "2.6.2" -> 2060200, "2.6.2.1" ->
/// 2060201; each part's leading digits, two decimal digits per part, three-part versions times
/// 100. A version without digits is 0; one too large to parse is 2009900 (Dubbo's highest).
std::int64_t intVersion(std::string_view dubboVersion) noexcept;
/// Whether a client that sent `dubboVersion` reads flags 3/4/5 (Dubbo's
/// Version.isSupportResponseAttachment): >= 2.0.2 and outside 2.0.10 .. 2.6.2; false for "".
bool supportsResponseAttachments(std::string_view dubboVersion) noexcept;

/// Appends the body of `result` to enc.buffer(), in the form the request's `dubboVersion`
/// reads: with attachments (flags 3/4/5, the attachments then holding "dubbo" -> kDubboVersion
/// unless set) or without (0/1/2, attachments dropped). A Value result whose value is null is
/// written as Null. Throws hessian::EncodeError (the buffer may hold a partial body).
void encodeResult(const Result& result, std::string_view dubboVersion, hessian::Encoder& enc);
std::string encodeResult(const Result& result, std::string_view dubboVersion);
/// Reads any of the six forms. Throws BodyError (a flag outside 0..5, a value missing, an
/// exception that is null, attachments that are not a map with string keys, bytes after the
/// end).
Result decodeResult(std::string_view body, const BodyLimits& limits = {});

/// The body of a response whose status is not 20: one Hessian string.
void encodeErrorMessage(std::string_view message, hessian::Encoder& enc);
std::string encodeErrorMessage(std::string_view message);
/// The message (Hessian null gives ""). Throws BodyError for anything but one string or null.
std::string decodeErrorMessage(std::string_view body, const BodyLimits& limits = {});

}  // namespace wheelbeat::dubbo
