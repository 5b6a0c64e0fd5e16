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

// Reads one compact or medium ASCII string at p into `s` (a view of the body), advancing p; false
// (p unchanged) for anything else, a string above maxUnits, or bytes missing. `bodyAscii`: every
// byte of the body is known to be ASCII already (one check for the whole body: the usual case).
[[gnu::always_inline]] inline bool asciiString(const std::uint8_t*& p, const std::uint8_t* end,
                                               std::size_t maxUnits, bool bodyAscii,
                                               std::string_view& s) {
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
  if (!bodyAscii && !isAscii(p + header, len)) return false;
  s = std::string_view(reinterpret_cast<const char*>(p + header), len);
  p += header + len;
  return true;
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
  if (scan(body, limits, scanned_)) {
    fill(scanned_, out);
  } else {
    out = decodeRequest(body, limits);
  }
}

std::size_t RequestDecoder::paramCount(std::string_view descriptor) {
  if (haveLast_ && sameText(descriptor, lastDescriptor_)) return lastParams_;
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

namespace {

std::string_view viewAt(const std::uint8_t* base, RequestDecoder::Span span) {
  return {reinterpret_cast<const char*>(base) + span.at, span.len};
}

RequestDecoder::Span spanOf(const std::uint8_t* base, std::string_view s) {
  return {static_cast<std::uint32_t>(reinterpret_cast<const std::uint8_t*>(s.data()) - base),
          static_cast<std::uint32_t>(s.size())};
}

bool sameBytes(const std::string& kept, const std::uint8_t* p, std::size_t available) {
  return kept.size() <= available && std::memcmp(kept.data(), p, kept.size()) == 0;
}

}  // namespace

bool RequestDecoder::scan(std::string_view body, const BodyLimits& limits, ScannedCall& call) {
  if (body.size() > limits.hessian.maxTotalBytes) return false;
  const auto* begin = reinterpret_cast<const std::uint8_t*>(body.data());
  const auto* end = begin + body.size();
  const std::size_t units = limits.hessian.maxStringUnits;
  const std::uint8_t* p = begin;
  bool ascii = false;  // the whole body known to be ASCII (see scanHeader())
  if (header_.valid && header_.longest <= units && header_.params <= limits.maxArguments &&
      sameBytes(header_.bytes, begin, body.size())) {
    call.dubboVersion = viewAt(begin, header_.dubboVersion);
    call.path = viewAt(begin, header_.path);
    call.nullVersion = header_.nullVersion;
    call.version = header_.nullVersion ? std::string_view() : viewAt(begin, header_.version);
    call.method = viewAt(begin, header_.method);
    call.descriptor = viewAt(begin, header_.descriptor);
    call.args.resize(header_.params);
    p += header_.bytes.size();
  } else if (!scanHeader(p, end, limits, ascii, call)) {
    return false;
  }
  for (auto& arg : call.args) {
    if (!asciiString(p, end, units, ascii, arg)) return false;
  }
  const std::size_t most = std::min(limits.maxAttachments, limits.hessian.maxElements);
  const auto rest = static_cast<std::size_t>(end - p);
  if (tail_.valid && tail_.bytes.size() == rest && tail_.longest <= units &&
      tail_.entries.size() <= most && sameBytes(tail_.bytes, p, rest)) {
    call.attachments.clear();
    for (const auto& [k, v] : tail_.entries)
      call.attachments.emplace_back(viewAt(p, k), viewAt(p, v));
    call.attachmentsMap = tail_.map;
    return true;
  }
  if (!scanAttachments(p, end, limits, ascii, call)) return false;
  keepTail(p, end, call);
  return true;
}

// The five header values from `p` (advanced past them), then the descriptor's parameter count
// (call.args sized to it); kept in header_ for the next body. `ascii` becomes whether the whole
// body is ASCII: tags, compact lengths and ASCII text are all below 0x80, so one pass over it
// spares each string its own check (a medium string's length byte may not be: each is checked).
bool RequestDecoder::scanHeader(const std::uint8_t*& p, const std::uint8_t* end,
                                const BodyLimits& limits, bool& ascii, ScannedCall& call) {
  const std::uint8_t* begin = p;
  const std::size_t units = limits.hessian.maxStringUnits;
  ascii = isAscii(p, static_cast<std::size_t>(end - p));
  header_.valid = false;
  if (!asciiString(p, end, units, ascii, call.dubboVersion) ||
      !asciiString(p, end, units, ascii, call.path)) {
    return false;
  }
  call.nullVersion = p != end && *p == kNull;
  if (call.nullVersion) {
    ++p;
    call.version = {};
  } else if (!asciiString(p, end, units, ascii, call.version)) {
    return false;
  }
  if (!asciiString(p, end, units, ascii, call.method) ||
      !asciiString(p, end, units, ascii, call.descriptor)) {
    return false;
  }
  const std::size_t params = paramCount(call.descriptor);
  if (params == kNotSplit || params > limits.maxArguments) return false;
  call.args.resize(params);
  header_.bytes.assign(reinterpret_cast<const char*>(begin), static_cast<std::size_t>(p - begin));
  header_.dubboVersion = spanOf(begin, call.dubboVersion);
  header_.path = spanOf(begin, call.path);
  header_.version = spanOf(begin, call.version);
  header_.nullVersion = call.nullVersion;
  header_.method = spanOf(begin, call.method);
  header_.descriptor = spanOf(begin, call.descriptor);
  header_.params = params;
  header_.longest = std::max({call.dubboVersion.size(), call.path.size(), call.version.size(),
                              call.method.size(), call.descriptor.size()});
  header_.valid = true;
  return true;
}

void RequestDecoder::keepTail(const std::uint8_t* p, const std::uint8_t* end,
                              const ScannedCall& call) {
  tail_.bytes.assign(reinterpret_cast<const char*>(p), static_cast<std::size_t>(end - p));
  tail_.entries.clear();
  tail_.longest = 0;
  for (const auto& [k, v] : call.attachments) {
    tail_.entries.emplace_back(spanOf(p, k), spanOf(p, v));
    tail_.longest = std::max({tail_.longest, k.size(), v.size()});
  }
  tail_.map = call.attachmentsMap;
  tail_.valid = true;
}

// The rest of the body from p: nothing (no attachments), or an untyped map of ASCII string keys
// and values, 'Z', and the end of the body.
bool RequestDecoder::scanAttachments(const std::uint8_t* p, const std::uint8_t* end,
                                     const BodyLimits& limits, bool ascii, ScannedCall& call) {
  call.attachments.clear();
  call.attachmentsMap = p != end;
  if (p == end) return true;
  if (*p++ != kUntypedMap) return false;
  const std::size_t most = std::min(limits.maxAttachments, limits.hessian.maxElements);
  const std::size_t units = limits.hessian.maxStringUnits;
  while (p != end && *p != kEnd) {
    std::string_view key, value;
    if (call.attachments.size() == most || !asciiString(p, end, units, ascii, key) ||
        !asciiString(p, end, units, ascii, value)) {
      return false;
    }
    for (const auto& [seen, v] : call.attachments) {
      if (sameText(seen, key)) return false;  // decodeRequest() names the repeat
    }
    call.attachments.emplace_back(key, value);
  }
  return p != end && p + 1 == end;  // 'Z', and nothing after it
}

void RequestDecoder::fill(const ScannedCall& call, Request& out) {
  out.args.resize(call.args.size());
  for (std::size_t i = 0; i < call.args.size(); ++i) {
    assignString(out.args[i], call.args[i], false);  // arguments differ from call to call
  }
  out.attachments = Attachments();  // drops the Request's hold on node_
  if (call.attachmentsMap) {
    if (!node_ || node_.use_count() != 1) node_ = hessian::makeMap();  // a handler kept the last
    auto& entries = node_->entries;
    entries.resize(call.attachments.size());
    for (std::size_t i = 0; i < call.attachments.size(); ++i) {
      assignString(entries[i].first, call.attachments[i].first, true);
      assignString(entries[i].second, call.attachments[i].second, true);
    }
    node_->type.clear();
    out.attachments = Attachments::adopt(node_, 0);
  }
  setText(out.dubboVersion, call.dubboVersion);
  setText(out.path, call.path);
  if (call.nullVersion) {
    out.version.reset();
  } else if (out.version) {
    setText(*out.version, call.version);
  } else {
    out.version.emplace(call.version);
  }
  setText(out.method, call.method);
  setText(out.descriptor, call.descriptor);
}

RequestDecoder& threadDecoder() {
  thread_local RequestDecoder decoder;
  return decoder;
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
  detail::threadDecoder().decode(body, limits, out);
}

}  // namespace wheelbeat::dubbo
