#include "encoder_impl.h"
#include "utf.h"
#include "wire.h"

#include <wheelbeat/hessian/ascii.h>
#include <wheelbeat/hessian/encoder.h>

#include <fmt/format.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>

namespace wheelbeat::hessian {

void EncoderLimits::validate() const {
  if (maxDepth == 0) {
    throw std::invalid_argument("hessian: EncoderLimits.maxDepth = 0 (expected >= 1)");
  }
}

void Encoder::Impl::rollback(const Mark& m) {
  out.resize(m.out);
  for (std::size_t i = m.refs; i < held.size(); ++i) refs.erase(held[i].get());
  held.resize(m.refs);
  for (std::size_t i = m.types; i < typeOrder.size(); ++i) types.erase(*typeOrder[i]);
  typeOrder.resize(m.types);
  for (std::size_t i = m.classes; i < classes.size(); ++i) {
    classByAddress.erase(classes[i].get());
    auto [first, last] = classByName.equal_range(classes[i]->name);
    for (auto it = first; it != last; ++it) {
      if (it->second == i) {
        classByName.erase(it);
        break;
      }
    }
  }
  classes.resize(m.classes);
}

void Encoder::Impl::writeInt(std::int32_t v) {
  if (v >= -16 && v <= 47) {
    put(static_cast<std::uint8_t>(wire::kIntOne + v));
  } else if (v >= -2048 && v <= 2047) {
    put(static_cast<std::uint8_t>(wire::kIntTwo + (v >> 8)));
    put(static_cast<std::uint8_t>(v));
  } else if (v >= -262144 && v <= 262143) {
    put(static_cast<std::uint8_t>(wire::kIntThree + (v >> 16)));
    putBig(static_cast<std::uint32_t>(v), 2);
  } else {
    put(wire::kInt);
    putBig(static_cast<std::uint32_t>(v), 4);
  }
}

void Encoder::Impl::writeLong(std::int64_t v) {
  if (v >= -8 && v <= 15) {
    put(static_cast<std::uint8_t>(wire::kLongOne + v));
  } else if (v >= -2048 && v <= 2047) {
    put(static_cast<std::uint8_t>(wire::kLongTwo + (v >> 8)));
    put(static_cast<std::uint8_t>(v));
  } else if (v >= -262144 && v <= 262143) {
    put(static_cast<std::uint8_t>(wire::kLongThree + (v >> 16)));
    putBig(static_cast<std::uint64_t>(v), 2);
  } else if (v >= std::numeric_limits<std::int32_t>::min() &&
             v <= std::numeric_limits<std::int32_t>::max()) {
    put(wire::kLongInt);
    putBig(static_cast<std::uint64_t>(v), 4);
  } else {
    put(wire::kLong);
    putBig(static_cast<std::uint64_t>(v), 8);
  }
}

namespace {

// Java's (int) cast of a double: NaN is 0, out-of-range values saturate, the rest truncate.
std::int32_t javaIntCast(double d) {
  if (std::isnan(d)) return 0;
  if (d >= 2147483647.0) return std::numeric_limits<std::int32_t>::max();
  if (d <= -2147483648.0) return std::numeric_limits<std::int32_t>::min();
  return static_cast<std::int32_t>(d);
}

}  // namespace

// Java's Hessian2Output.writeDouble, measured against Hessian 4.0.38: a whole number in int16
// range takes 0x5b / 0x5c / 0x5d / 0x5e; otherwise 0x5f when (int)(value * 1000) * 0.001 gives
// the value back exactly (0.5, 0.001, 3.5, 32768.0, 2147483.647, but not 0.0005 or 2147483.648);
// otherwise 'D'. The one difference: -0.0 is 'D' here, keeping its sign (Java writes 0x5b).
void Encoder::Impl::writeDouble(double v) {
  const bool negativeZero = v == 0.0 && std::signbit(v);
  if (!negativeZero && v >= -32768.0 && v <= 32767.0 && v == std::trunc(v)) {
    const auto i = static_cast<std::int32_t>(v);
    if (i == 0) return put(wire::kDoubleZero);
    if (i == 1) return put(wire::kDoubleOne);
    if (i >= -128 && i <= 127) {
      put(wire::kDoubleByte);
      return put(static_cast<std::uint8_t>(i));
    }
    put(wire::kDoubleShort);
    return putBig(static_cast<std::uint32_t>(i), 2);
  }
  const std::int32_t mills = javaIntCast(v * 1000.0);
  if (!negativeZero && 0.001 * mills == v) {
    put(wire::kDoubleMill);
    return putBig(static_cast<std::uint32_t>(mills), 4);
  }
  put(wire::kDouble);
  putBig(std::bit_cast<std::uint64_t>(v), 8);
}

void Encoder::Impl::writeDate(Date d) {
  const std::int64_t minutes = d.millis / 60000;
  if (d.millis % 60000 == 0 && minutes >= std::numeric_limits<std::int32_t>::min() &&
      minutes <= std::numeric_limits<std::int32_t>::max()) {
    put(wire::kDateMinutes);
    return putBig(static_cast<std::uint64_t>(minutes), 4);
  }
  put(wire::kDateMillis);
  putBig(static_cast<std::uint64_t>(d.millis), 8);
}

// Lengths count UTF-16 units; chunks of 0x8000 units ('R'), never ending in a high surrogate
// (Java then writes 0x7fff), and the last chunk in its shortest form.

void Encoder::Impl::putStringHeader(std::uint32_t units) {
  if (units <= wire::kShortMax) {
    put(static_cast<std::uint8_t>(units));
  } else if (units <= wire::kMediumMax) {
    put(static_cast<std::uint8_t>(wire::kStringMedium + (units >> 8)));
    put(static_cast<std::uint8_t>(units));
  } else {
    put(wire::kStringFinal);
    putBig(units, 2);
  }
}

void Encoder::Impl::writeString(std::string_view s) {
  // Nearly every string a call carries: one chunk of ASCII, whose bytes are its UTF-16 units.
  if (s.size() <= wire::kChunk && isAscii(s)) {
    putStringHeader(static_cast<std::uint32_t>(s.size()));
    out.append(s);
    return;
  }
  const utf::Scan scan = utf::scanUtf8(s);
  if (scan.why != nullptr) {
    throw EncodeError(fmt::format("hessian: encode: {} at byte {} of a string of {} bytes",
                                  scan.why, scan.badOffset, s.size()));
  }
  out.reserve(out.size() + s.size() + 3 * (scan.units / wire::kChunk + 1));
  std::size_t remaining = scan.units;
  std::size_t from = 0;
  while (remaining > wire::kChunk) {
    const std::size_t header = out.size();
    out.append({static_cast<char>(wire::kStringChunk), 0, 0});
    const utf::Piece piece = utf::appendCesu8(out, s, from, wire::kChunk);
    out[header + 1] = static_cast<char>(piece.units >> 8);
    out[header + 2] = static_cast<char>(piece.units);
    from += piece.bytesRead;
    remaining -= piece.units;
  }
  putStringHeader(static_cast<std::uint32_t>(remaining));
  if (scan.units == s.size()) {
    out.append(s.substr(from));  // ASCII: the bytes as they are
  } else {
    utf::appendCesu8(out, s, from, remaining);
  }
}

void Encoder::Impl::writeBytes(const std::uint8_t* data, std::size_t size) {
  out.reserve(out.size() + size + 3 * (size / wire::kChunk + 1));
  while (size > wire::kChunk) {
    put(wire::kBytesChunk);
    putBig(wire::kChunk, 2);
    out.append(reinterpret_cast<const char*>(data), wire::kChunk);
    data += wire::kChunk;
    size -= wire::kChunk;
  }
  const auto n = static_cast<std::uint32_t>(size);
  if (n <= wire::kBytesShortMax) {
    put(static_cast<std::uint8_t>(wire::kBytesShort + n));
  } else if (n <= wire::kMediumMax) {
    put(static_cast<std::uint8_t>(wire::kBytesMedium + (n >> 8)));
    put(static_cast<std::uint8_t>(n));
  } else {
    put(wire::kBytesFinal);
    putBig(n, 2);
  }
  out.append(reinterpret_cast<const char*>(data), size);
}

void Encoder::Impl::writeType(const std::string& type) {
  const auto [it, added] = types.try_emplace(type, static_cast<std::uint32_t>(typeOrder.size()));
  if (!added) return writeInt(static_cast<std::int32_t>(it->second));
  typeOrder.push_back(&it->first);
  writeString(type);
}

Encoder::Encoder(EncoderLimits limits) : impl_(std::make_unique<Impl>()) {
  limits.validate();
  impl_->limits = limits;
}
Encoder::~Encoder() = default;
Encoder::Encoder(Encoder&&) noexcept = default;
Encoder& Encoder::operator=(Encoder&&) noexcept = default;

void Encoder::write(const Value& value) {
  const Impl::Mark mark = impl_->mark();
  try {
    impl_->writeValue(value, 0);
  } catch (...) {
    impl_->rollback(mark);
    throw;
  }
}

void Encoder::writeNull() { impl_->put(wire::kNull); }
void Encoder::writeBool(bool b) { impl_->put(b ? wire::kTrue : wire::kFalse); }
void Encoder::writeInt(std::int32_t i) { impl_->writeInt(i); }
void Encoder::writeLong(std::int64_t l) { impl_->writeLong(l); }
void Encoder::writeDouble(double d) { impl_->writeDouble(d); }
void Encoder::writeString(std::string_view utf8) { impl_->writeString(utf8); }
void Encoder::writeBytes(std::string_view bytes) {
  impl_->writeBytes(reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size());
}
void Encoder::writeDate(Date d) { impl_->writeDate(d); }
std::string& Encoder::buffer() { return impl_->out; }

void Encoder::resetReferences() {
  impl_->refs.clear();
  impl_->held.clear();
}

void Encoder::reset() {
  Impl& d = *impl_;
  // In place: an encoder reused body after body (one per thread) keeps its buffer's capacity
  // and allocates nothing here; a buffer grown past kKeptCapacity (a rare large body) is freed.
  constexpr std::size_t kKeptCapacity = 64 * 1024;
  if (d.out.capacity() > kKeptCapacity) {
    std::string().swap(d.out);
  } else {
    d.out.clear();
  }
  // clear() on an unordered_map costs its bucket count even when empty: only the used ones.
  if (!d.refs.empty()) d.refs.clear();
  d.held.clear();
  if (!d.types.empty()) d.types.clear();
  d.typeOrder.clear();
  d.classes.clear();
  if (!d.classByAddress.empty()) d.classByAddress.clear();
  if (!d.classByName.empty()) d.classByName.clear();
}

std::string encode(const Value& value, const EncoderLimits& limits) {
  Encoder encoder(limits);
  encoder.write(value);
  return std::move(encoder.buffer());
}

}  // namespace wheelbeat::hessian
