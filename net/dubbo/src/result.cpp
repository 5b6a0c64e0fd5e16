#include "body_reader.h"
#include "result_encoding.h"
#include "text.h"

#include <wheelbeat/dubbo/body.h>

#include <fmt/format.h>

#include <algorithm>
#include <cstdint>

namespace wheelbeat::dubbo {

namespace {

// Dubbo's Version constants.
constexpr std::int64_t kLowestForAttachments = 2000200;  // 2.0.2
constexpr std::int64_t kHighest = 2009900;               // 2.0.99: what an unparsable one counts
constexpr std::int64_t kBrokenFrom = 2001000;            // 2.0.10
constexpr std::int64_t kBrokenUntil = 2060300;           // 2.6.3 (exclusive)

std::uint8_t flagOf(ResultKind kind, bool withAttachments) {
  return static_cast<std::uint8_t>(static_cast<std::uint8_t>(kind) + (withAttachments ? 3 : 0));
}

// The bytes of the attachments map {"dubbo": kDubboVersion} (read-only after its first use).
const std::string& versionOnlyAttachments() {
  static const std::string bytes = [] {
    hessian::Encoder enc;
    auto map = hessian::makeMap();
    map->entries.emplace_back(hessian::Value::string("dubbo"),
                              hessian::Value::string(std::string(kDubboVersion)));
    enc.write(hessian::Value::map(std::move(map)));
    return std::move(enc.buffer());
  }();
  return bytes;
}

}  // namespace

std::string_view resultKindName(ResultKind kind) noexcept {
  switch (kind) {
    case ResultKind::Exception: return "exception";
    case ResultKind::Value: return "value";
    case ResultKind::Null: return "null";
  }
  return "?";
}

Result Result::ofValue(hessian::Value value) {
  Result out;
  out.kind = value.isNull() ? ResultKind::Null : ResultKind::Value;
  out.value = std::move(value);
  return out;
}

std::int64_t intVersion(std::string_view version) noexcept {
  const std::size_t parts =
      1 + static_cast<std::size_t>(std::count(version.begin(), version.end(), '.'));
  std::int64_t v = 0;
  std::size_t start = 0;
  for (std::size_t index = 0; index < parts; ++index) {
    const std::size_t end = std::min(version.find('.', start), version.size());
    std::int64_t digits = 0;
    std::size_t i = start;
    for (; i < end && version[i] >= '0' && version[i] <= '9'; ++i) {
      digits = digits * 10 + (version[i] - '0');
      if (digits > INT32_MAX) return kHighest;  // Integer.parseInt refuses it: Dubbo's fallback
    }
    // Two decimal digits per part; Java adds a double to an int, which saturates.
    for (std::size_t k = index + 1; k < parts && digits > 0; ++k)
      digits = std::min<std::int64_t>(digits * 100, INT32_MAX);
    if (i > start) v = std::min<std::int64_t>(v + digits, INT32_MAX);
    start = end + 1;
  }
  return parts == 3 ? v * 100 : v;
}

bool supportsResponseAttachments(std::string_view dubboVersion) noexcept {
  if (dubboVersion == kDubboVersion) return true;  // nearly every caller: no parsing
  if (dubboVersion.empty()) return false;
  const std::int64_t v = intVersion(dubboVersion);
  if (v >= kBrokenFrom && v < kBrokenUntil) return false;
  return v >= kLowestForAttachments;
}

void encodeResult(const Result& result, std::string_view dubboVersion, hessian::Encoder& enc) {
  const bool attach = supportsResponseAttachments(dubboVersion);
  ResultKind kind = result.kind;
  if (kind == ResultKind::Value && result.value.isNull()) kind = ResultKind::Null;
  enc.writeInt(flagOf(kind, attach));
  if (kind != ResultKind::Null) enc.write(result.value);
  if (!attach) return;
  if (result.attachments.find("dubbo") != nullptr) {
    enc.write(hessian::Value::map(result.attachments.map()));
    return;
  }
  if (result.attachments.empty()) {
    // Nearly every answer: {"dubbo": kDubboVersion}, encoded once. It is the body's last value,
    // so no ref written after it can depend on the ref number the map takes.
    enc.buffer() += versionOnlyAttachments();
    return;
  }
  Attachments withVersion = result.attachments;
  withVersion.set("dubbo", hessian::Value::string(std::string(kDubboVersion)));
  enc.write(hessian::Value::map(withVersion.map()));
}

void detail::encodeStringResult(std::string_view value, std::string_view dubboVersion,
                                hessian::Encoder& enc) {
  const bool attach = supportsResponseAttachments(dubboVersion);
  const std::uint8_t flag = flagOf(ResultKind::Value, attach);
  constexpr std::size_t kMediumMax = 1023;  // Hessian's longest medium-form string
  if (value.size() <= kMediumMax && isAscii(value)) {
    // What the encoder writes, spelled out (a string writes no ref, so the encoder's state is
    // not involved): the flag as a compact int (0x90 + 0..5), the string's compact (0x00-0x1f)
    // or medium (0x30-0x33 + 1 byte) length, its bytes (ASCII: bytes are UTF-16 units).
    std::string& out = enc.buffer();
    out += static_cast<char>(0x90 + flag);
    if (value.size() < 32) {
      out += static_cast<char>(value.size());
    } else {
      out += static_cast<char>(0x30 + (value.size() >> 8));
      out += static_cast<char>(value.size() & 0xff);
    }
    out += value;
  } else {
    enc.writeInt(flag);
    enc.writeString(value);
  }
  if (attach) enc.buffer() += versionOnlyAttachments();
}

std::string encodeResult(const Result& result, std::string_view dubboVersion) {
  hessian::Encoder enc;
  encodeResult(result, dubboVersion, enc);
  return std::move(enc.buffer());
}

Result decodeResult(std::string_view body, const BodyLimits& limits) {
  detail::BodyReader in(body, limits, "dubbo response body");
  const std::size_t flagAt = in.offset();
  const std::int32_t flag = in.readInt("result flag");
  if (flag < 0 || flag > 5) {
    in.fail(flagAt, "result flag",
            fmt::format("{} (expected 0..5: exception, value, null; +3 with attachments)", flag));
  }
  Result out;
  out.kind = static_cast<ResultKind>(flag % 3);
  if (out.kind == ResultKind::Exception) {
    const std::size_t at = in.offset();
    out.value = in.read("exception");
    if (out.value.isNull()) in.fail(at, "exception", "null (expected the Throwable)");
  } else if (out.kind == ResultKind::Value) {
    out.value = in.read("value");
  }
  if (flag >= 3) out.attachments = in.readAttachments();
  in.expectEnd(flag >= 3 ? "attachments" : resultKindName(out.kind));
  return out;
}

void encodeErrorMessage(std::string_view message, hessian::Encoder& enc) {
  enc.writeString(message);
}

std::string encodeErrorMessage(std::string_view message) {
  hessian::Encoder enc;
  enc.writeString(message);
  return std::move(enc.buffer());
}

std::string decodeErrorMessage(std::string_view body, const BodyLimits& limits) {
  detail::BodyReader in(body, limits, "dubbo error body");
  std::optional<std::string> message = in.readOptionalString("error message");
  in.expectEnd("error message");
  return message ? std::move(*message) : std::string();
}

}  // namespace wheelbeat::dubbo
