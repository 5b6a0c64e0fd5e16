#include "decoder_impl.h"
#include "utf.h"
#include "wire.h"

#include <array>
#include <bit>
#include <limits>

namespace wheelbeat::hessian {

void DecoderLimits::validate() const {
  const std::pair<const char*, std::size_t> fields[] = {{"maxDepth", maxDepth},
                                                        {"maxTotalBytes", maxTotalBytes},
                                                        {"maxStringUnits", maxStringUnits},
                                                        {"maxBytesLength", maxBytesLength},
                                                        {"maxClassDefs", maxClassDefs},
                                                        {"maxTypes", maxTypes},
                                                        {"maxRefs", maxRefs},
                                                        {"maxElements", maxElements}};
  for (const auto& [name, value] : fields) {
    if (value == 0) {
      throw std::invalid_argument(
          fmt::format("hessian: DecoderLimits.{} = 0 (expected >= 1)", name));
    }
  }
}

DecodeError::DecodeError(std::size_t offset, const std::string& what)
    : std::runtime_error(fmt::format("hessian: at byte {}: {}", offset, what)), offset_(offset) {}

namespace {

constexpr std::array<Tag, 256> makeTags() {
  std::array<Tag, 256> t{};  // Invalid: 0x40, 'E', 'G', 'P' (reserved)
  auto range = [&t](int from, int to, Tag tag) {
    for (int i = from; i <= to; ++i) t[static_cast<std::size_t>(i)] = tag;
  };
  range(0x00, 0x1f, Tag::StringShort);
  range(0x20, 0x2f, Tag::BytesShort);
  range(0x30, 0x33, Tag::StringMedium);
  range(0x34, 0x37, Tag::BytesMedium);
  range(0x38, 0x3f, Tag::LongThree);
  range('A', 'B', Tag::BytesChunk);
  range('R', 'S', Tag::StringChunk);
  t['C'] = Tag::ClassDef;
  t['D'] = Tag::Double;
  t['F'] = Tag::False;
  t['H'] = Tag::Map;
  t['I'] = Tag::Int;
  t['J'] = Tag::DateMillis;
  t['K'] = Tag::DateMinutes;
  t['L'] = Tag::Long;
  t['M'] = Tag::Map;
  t['N'] = Tag::Null;
  t['O'] = Tag::Object;
  t['Q'] = Tag::Ref;
  t['T'] = Tag::True;
  range(0x55, 0x58, Tag::List);  // 'U', 'V', 'W', 'X'
  t['Y'] = Tag::LongInt;
  t['Z'] = Tag::End;
  t[0x5b] = Tag::DoubleZero;
  t[0x5c] = Tag::DoubleOne;
  t[0x5d] = Tag::DoubleByte;
  t[0x5e] = Tag::DoubleShort;
  t[0x5f] = Tag::DoubleMill;
  range(0x60, 0x6f, Tag::Object);
  range(0x70, 0x7f, Tag::List);
  range(0x80, 0xbf, Tag::IntOne);
  range(0xc0, 0xcf, Tag::IntTwo);
  range(0xd0, 0xd7, Tag::IntThree);
  range(0xd8, 0xef, Tag::LongOne);
  range(0xf0, 0xff, Tag::LongTwo);
  return t;
}

constexpr std::array<Tag, 256> kTags = makeTags();

template <typename T>
T signExtend(std::uint64_t v, int bits) {
  const std::uint64_t sign = std::uint64_t{1} << (bits - 1);
  return static_cast<T>(static_cast<std::int64_t>((v ^ sign) - sign));
}

}  // namespace

Tag tagOf(std::uint8_t byte) { return kTags[byte]; }

Value Decoder::Impl::readValue(std::size_t depth, std::size_t& height) {
  height = 0;
  for (;;) {  // class definitions before the value: a loop, never a recursion
    const std::uint8_t* start = p;
    if (p == end) fail(start, "input ends where a value was expected");
    const std::uint8_t tag = *p++;
    switch (tagOf(tag)) {
      case Tag::ClassDef: readClassDef(start); continue;
      case Tag::List: return readList(tag, start, depth, height);
      case Tag::Map: return readMap(tag, start, depth, height);
      case Tag::Object: return readObject(tag, start, depth, height);
      case Tag::Ref: return readRef(start, height);
      default: return readScalar(tag, start);
    }
  }
}

Value Decoder::Impl::readScalar(std::uint8_t tag, const std::uint8_t* start) {
  switch (tagOf(tag)) {
    case Tag::Null: return Value::null();
    case Tag::True: return Value::boolean(true);
    case Tag::False: return Value::boolean(false);
    case Tag::IntOne:
    case Tag::IntTwo:
    case Tag::IntThree:
    case Tag::Int: return Value::int32(readIntTail(tag, start));
    case Tag::LongOne: return Value::int64(static_cast<std::int64_t>(tag) - wire::kLongOne);
    case Tag::LongTwo:
      need(1, start, "a long");
      return Value::int64(((static_cast<std::int64_t>(tag) - wire::kLongTwo) << 8) | *p++);
    case Tag::LongThree:
      need(2, start, "a long");
      return Value::int64(((static_cast<std::int64_t>(tag) - wire::kLongThree) << 16) |
                          static_cast<std::int64_t>(big(2)));
    case Tag::LongInt:
      need(4, start, "a long");
      return Value::int64(signExtend<std::int64_t>(big(4), 32));
    case Tag::Long:
      need(8, start, "a long");
      return Value::int64(static_cast<std::int64_t>(big(8)));
    case Tag::DoubleZero:
    case Tag::DoubleOne:
    case Tag::DoubleByte:
    case Tag::DoubleShort:
    case Tag::DoubleMill:
    case Tag::Double: return Value::float64(readDouble(tag, start));
    case Tag::StringShort:
    case Tag::StringMedium:
    case Tag::StringChunk: return Value::string(readString(tag, start));
    case Tag::BytesShort:
    case Tag::BytesMedium:
    case Tag::BytesChunk: return Value::bytes(readBytes(tag, start));
    case Tag::DateMillis:
      need(8, start, "a date");
      return Value::date(Date{static_cast<std::int64_t>(big(8))});
    case Tag::DateMinutes:
      need(4, start, "a date");
      return Value::date(Date{signExtend<std::int64_t>(big(4), 32) * 60000});
    case Tag::End: fail(start, "'Z' (0x5a) outside a list or map (expected a value)");
    default: fail(start, "reserved or unknown code 0x{:02x} (expected a value)", tag);
  }
}

// The int whose tag was just read.
std::int32_t Decoder::Impl::readIntTail(std::uint8_t tag, const std::uint8_t* start) {
  switch (tagOf(tag)) {
    case Tag::IntOne: return static_cast<std::int32_t>(tag) - wire::kIntOne;
    case Tag::IntTwo:
      need(1, start, "an int");
      return ((static_cast<std::int32_t>(tag) - wire::kIntTwo) * 256) | *p++;
    case Tag::IntThree:
      need(2, start, "an int");
      return ((static_cast<std::int32_t>(tag) - wire::kIntThree) * 65536) |
             static_cast<std::int32_t>(big(2));
    case Tag::Int: need(4, start, "an int"); return signExtend<std::int32_t>(big(4), 32);
    default: fail(start, "code 0x{:02x} where an int was expected", tag);
  }
}

// An int (a length, a count, a ref) where only an int may stand.
std::int32_t Decoder::Impl::readInt(const char* what) {
  const std::uint8_t* start = p;
  if (p == end) fail(start, "input ends where {} (an int) was expected", what);
  const std::uint8_t tag = *p++;
  const Tag t = tagOf(tag);
  if (t != Tag::IntOne && t != Tag::IntTwo && t != Tag::IntThree && t != Tag::Int) {
    fail(start, "code 0x{:02x} where {} (an int) was expected", tag, what);
  }
  return readIntTail(tag, start);
}

double Decoder::Impl::readDouble(std::uint8_t tag, const std::uint8_t* start) {
  switch (tagOf(tag)) {
    case Tag::DoubleZero: return 0.0;
    case Tag::DoubleOne: return 1.0;
    case Tag::DoubleByte: need(1, start, "a double"); return static_cast<std::int8_t>(*p++);
    case Tag::DoubleShort: need(2, start, "a double"); return signExtend<std::int16_t>(big(2), 16);
    case Tag::DoubleMill:
      need(4, start, "a double");
      return 0.001 * signExtend<std::int32_t>(big(4), 32);  // as Java: milliseconds
    default: need(8, start, "a double"); return std::bit_cast<double>(big(8));
  }
}

// Chunks: 'R' + u16 (more follow), then a final 'S' + u16, 0x00-0x1f or 0x30-0x33 + 1 byte.
std::string Decoder::Impl::readString(std::uint8_t tag, const std::uint8_t* start) {
  std::string out;
  std::size_t total = 0;
  std::uint32_t pendingHigh = 0;
  for (;;) {
    std::size_t units = tag;
    const bool last = tag != wire::kStringChunk;
    if (tagOf(tag) == Tag::StringMedium) {
      need(1, start, "a string length");
      units = (static_cast<std::size_t>(tag - wire::kStringMedium) << 8) | *p++;
    } else if (tagOf(tag) == Tag::StringChunk) {
      need(2, start, "a string length");
      units = big(2);
    }
    total += units;
    if (total > limits.maxStringUnits) {
      fail(start, "string length {} exceeds maxStringUnits = {}", total, limits.maxStringUnits);
    }
    out.reserve(out.size() + std::min(units, remaining()));  // at least a byte per unit
    if (const char* why = utf::decodeCesu8(p, end, units, out, pendingHigh))
      fail(p, "string: {}", why);
    if (last) break;
    const std::uint8_t* at = p;
    if (p == end) fail(at, "input ends where a string chunk was expected");
    tag = *p++;
    const Tag t = tagOf(tag);
    if (t != Tag::StringShort && t != Tag::StringMedium && t != Tag::StringChunk) {
      fail(at, "code 0x{:02x} where a string chunk was expected", tag);
    }
  }
  if (pendingHigh != 0) fail(start, "string ends inside a surrogate pair (a high surrogate alone)");
  return out;
}

// A string where only a string may stand (class and field names).
std::string Decoder::Impl::readStringField(const char* what) {
  const std::uint8_t* start = p;
  if (p == end) fail(start, "input ends where {} (a string) was expected", what);
  const std::uint8_t tag = *p++;
  const Tag t = tagOf(tag);
  if (t != Tag::StringShort && t != Tag::StringMedium && t != Tag::StringChunk) {
    fail(start, "code 0x{:02x} where {} (a string) was expected", tag, what);
  }
  return readString(tag, start);
}

// Chunks: 'A' + u16 (more follow), then a final 'B' + u16, 0x20-0x2f or 0x34-0x37 + 1 byte.
Bytes Decoder::Impl::readBytes(std::uint8_t tag, const std::uint8_t* start) {
  Bytes out;
  for (;;) {
    std::size_t n = 0;
    const Tag t = tagOf(tag);
    if (t == Tag::BytesShort) {
      n = tag - wire::kBytesShort;
    } else if (t == Tag::BytesMedium) {
      need(1, start, "a binary length");
      n = (static_cast<std::size_t>(tag - wire::kBytesMedium) << 8) | *p++;
    } else {
      need(2, start, "a binary length");
      n = big(2);
    }
    if (out.size() + n > limits.maxBytesLength) {
      fail(start, "binary length {} exceeds maxBytesLength = {}", out.size() + n,
           limits.maxBytesLength);
    }
    need(n, start, "binary data");
    out.insert(out.end(), p, p + n);
    p += n;
    if (tag != wire::kBytesChunk) break;
    const std::uint8_t* at = p;
    if (p == end) fail(at, "input ends where a binary chunk was expected");
    tag = *p++;
    const Tag next = tagOf(tag);
    if (next != Tag::BytesShort && next != Tag::BytesMedium && next != Tag::BytesChunk) {
      fail(at, "code 0x{:02x} where a binary chunk was expected", tag);
    }
  }
  return out;
}

Decoder::Decoder(std::string_view input, DecoderLimits limits) : impl_(std::make_unique<Impl>()) {
  limits.validate();
  if (input.size() > limits.maxTotalBytes) {
    throw DecodeError(0, fmt::format("input of {} bytes exceeds maxTotalBytes = {}", input.size(),
                                     limits.maxTotalBytes));
  }
  impl_->begin = reinterpret_cast<const std::uint8_t*>(input.data());
  impl_->p = impl_->begin;
  impl_->end = impl_->begin + input.size();
  impl_->limits = limits;
}
Decoder::~Decoder() = default;
Decoder::Decoder(Decoder&&) noexcept = default;
Decoder& Decoder::operator=(Decoder&&) noexcept = default;

Value Decoder::read() {
  Impl& d = *impl_;
  const std::uint8_t* mark = d.p;
  const std::size_t refs = d.refs.size();
  const std::size_t types = d.types.size();
  const std::size_t classes = d.classes.size();
  try {
    std::size_t height = 0;
    return d.readValue(0, height);
  } catch (const DecodeError&) {
    d.p = mark;
    d.refs.resize(refs);
    d.types.resize(types);
    d.classes.resize(classes);
    throw;
  }
}

bool Decoder::atEnd() const { return impl_->p == impl_->end; }
std::size_t Decoder::offset() const { return impl_->offset(impl_->p); }
void Decoder::resetReferences() { impl_->refs.clear(); }

Value decode(std::string_view input, const DecoderLimits& limits) {
  Decoder decoder(input, limits);
  Value value = decoder.read();
  if (!decoder.atEnd()) {
    throw DecodeError(decoder.offset(), fmt::format("{} bytes after the value (expected the end)",
                                                    input.size() - decoder.offset()));
  }
  return value;
}

}  // namespace wheelbeat::hessian
