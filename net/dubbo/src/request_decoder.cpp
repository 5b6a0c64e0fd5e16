#include "request_decoder.h"

#include <wheelbeat/dubbo/descriptor.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <variant>

namespace wheelbeat::dubbo::detail {

namespace {

constexpr std::uint8_t kNull = 'N';
constexpr std::uint8_t kUntypedMap = 'H';
constexpr std::uint8_t kEnd = 'Z';
constexpr std::uint8_t kCompactMax = 0x1f;   // 0x00-0x1f: a string of that many units
constexpr std::uint8_t kMediumFirst = 0x30;  // 0x30-0x33 + 1 byte: up to 1023 units
constexpr std::uint8_t kMediumLast = 0x33;
constexpr std::size_t kNotSplit = static_cast<std::size_t>(-1);

[[gnu::always_inline]] inline bool allAscii(const std::uint8_t* p, std::size_t n) {
  std::uint64_t any = 0;
  std::size_t i = 0;
  for (; i + 8 <= n; i += 8) {  // eight bytes at a time
    std::uint64_t word = 0;
    std::memcpy(&word, p + i, 8);
    any |= word;
  }
  for (; i < n; ++i) any |= p[i];
  return (any & 0x8080808080808080ULL) == 0;
}

// Reads one compact or medium ASCII string at p into `s` (a view of the body), advancing p; false
// (p unchanged) for anything else, a string above maxUnits, or bytes missing.
[[gnu::always_inline]] inline bool asciiString(const std::uint8_t*& p, const std::uint8_t* end,
                                               std::size_t maxUnits, std::string_view& s) {
  if (p == end) return false;
  const std::uint8_t tag = *p;
  std::size_t len = 0;
  std::size_t header = 1;
  if (tag <= kCompactMax) {
    len = tag;
  } else if (tag >= kMediumFirst && tag <= kMediumLast && end - p >= 2) {
    len = (static_cast<std::size_t>(tag - kMediumFirst) << 8) | p[1];
    header = 2;
  } else {
    return false;
  }
  if (len > maxUnits || static_cast<std::size_t>(end - p) - header < len) return false;
  if (!allAscii(p + header, len)) return false;
  s = std::string_view(reinterpret_cast<const char*>(p + header), len);
  p += header + len;
  return true;
}

// a == b, inline: a call's strings are short, and libc's memcmp costs a call and its dispatch.
bool sameText(std::string_view a, std::string_view b) {
  const std::size_t n = a.size();
  if (n != b.size()) return false;
  const char* x = a.data();
  const char* y = b.data();
  const auto word = [](const char* p) {
    std::uint64_t w = 0;
    std::memcpy(&w, p, 8);
    return w;
  };
  if (n < 8) {
    for (std::size_t i = 0; i < n; ++i) {
      if (x[i] != y[i]) return false;
    }
    return true;
  }
  for (std::size_t i = 0; i + 8 < n; i += 8) {
    if (word(x + i) != word(y + i)) return false;
  }
  return word(x + n - 8) == word(y + n - 8);  // the last 8 bytes (overlapping the loop's)
}

// `to` becomes `s`. A call's header strings and attachments nearly always repeat the previous
// call's (one service, one client): compared first, they are not copied again (a short copy is
// dearer than the compare: the compiler inlines it as a `rep movs`).
void setText(std::string& to, std::string_view s) {
  if (!sameText(to, s)) to.assign(s);
}

// `v` becomes the string `s`, in the string it already holds when it holds one (its capacity);
// `compareFirst`: as setText().
void assignString(hessian::Value& v, std::string_view s, bool compareFirst) {
  if (v.type() != hessian::Type::String) {
    v = hessian::Value::string(std::string(s));
    return;
  }
  // `v` is not a const object (an element of the reused Request's vectors): writing through the
  // accessor's constness is sound, and keeps the string's buffer.
  std::string& to = std::get<std::string>(const_cast<hessian::Value::Storage&>(v.storage()));
  if (compareFirst) {
    setText(to, s);
  } else {
    to.clear();  // then append: a plain copy into the capacity (assign() handles aliasing)
    to.append(s);
  }
}

}  // namespace

void RequestDecoder::decode(std::string_view body, const BodyLimits& limits, Request& out) {
  if (!tryFast(body, limits, out)) out = decodeRequest(body, limits);
}

std::size_t RequestDecoder::paramCount(std::string_view descriptor) {
  if (haveLast_ && descriptor == lastDescriptor_) return lastParams_;
  std::size_t n = 0;
  try {
    n = splitDescriptor(descriptor).size();
  } catch (const std::invalid_argument&) {
    return kNotSplit;  // decodeRequest() names the fault
  }
  lastDescriptor_.assign(descriptor);
  lastParams_ = n;
  haveLast_ = true;
  return n;
}

bool RequestDecoder::tryFast(std::string_view body, const BodyLimits& limits, Request& out) {
  if (body.size() > limits.hessian.maxTotalBytes) return false;
  const auto* p = reinterpret_cast<const std::uint8_t*>(body.data());
  const auto* end = p + body.size();
  const std::size_t units = limits.hessian.maxStringUnits;
  std::string_view dubboVersion, path, version, method, descriptor;
  if (!asciiString(p, end, units, dubboVersion) || !asciiString(p, end, units, path)) return false;
  const bool nullVersion = p != end && *p == kNull;
  if (nullVersion) {
    ++p;
  } else if (!asciiString(p, end, units, version)) {
    return false;
  }
  if (!asciiString(p, end, units, method) || !asciiString(p, end, units, descriptor)) return false;
  const std::size_t params = paramCount(descriptor);
  if (params == kNotSplit || params > limits.maxArguments) return false;
  out.args.resize(params);
  for (auto& arg : out.args) {
    std::string_view s;
    if (!asciiString(p, end, units, s)) return false;
    assignString(arg, s, false);  // arguments differ from call to call
  }
  if (!readAttachments(p, end, limits, out)) return false;
  setText(out.dubboVersion, dubboVersion);
  setText(out.path, path);
  if (nullVersion) {
    out.version.reset();
  } else if (out.version) {
    setText(*out.version, version);
  } else {
    out.version.emplace(version);
  }
  setText(out.method, method);
  setText(out.descriptor, descriptor);
  return true;
}

// The rest of the body from p: nothing (no attachments), or an untyped map of ASCII string keys
// and values, 'Z', and the end of the body.
bool RequestDecoder::readAttachments(const std::uint8_t* p, const std::uint8_t* end,
                                     const BodyLimits& limits, Request& out) {
  out.attachments = Attachments();  // drops the Request's hold on node_
  if (p == end) return true;
  if (*p++ != kUntypedMap) return false;
  if (!node_ || node_.use_count() != 1) node_ = hessian::makeMap();  // a handler kept the last
  auto& entries = node_->entries;
  const std::size_t most = std::min(limits.maxAttachments, limits.hessian.maxElements);
  const std::size_t units = limits.hessian.maxStringUnits;
  std::size_t n = 0;
  for (; p != end && *p != kEnd; ++n) {
    std::string_view key, value;
    if (n == most || !asciiString(p, end, units, key) || !asciiString(p, end, units, value)) {
      return false;
    }
    for (std::size_t j = 0; j < n; ++j) {
      if (sameText(std::get<std::string>(entries[j].first.storage()), key)) {
        return false;  // decodeRequest() names the repeat
      }
    }
    if (n == entries.size()) entries.emplace_back();
    assignString(entries[n].first, key, true);
    assignString(entries[n].second, value, true);
  }
  if (p == end || p + 1 != end) return false;  // no 'Z', or bytes after it
  entries.resize(n);
  node_->type.clear();
  out.attachments = Attachments::adopt(node_, 0);
  return true;
}

}  // namespace wheelbeat::dubbo::detail

namespace wheelbeat::dubbo {

void decodeRequest(std::string_view body, Request& out, const BodyLimits& limits) {
  try {
    limits.validate();
  } catch (const std::invalid_argument&) {
    out = decodeRequest(body, limits);  // throws the BodyError naming the limit
    return;
  }
  thread_local detail::RequestDecoder decoder;
  decoder.decode(body, limits, out);
}

}  // namespace wheelbeat::dubbo
