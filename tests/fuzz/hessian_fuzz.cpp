// libFuzzer target for the Hessian 2.0 decoder (net/hessian/). The input is one control byte,
// then the bytes decoded:
//   byte 0   bits 0-3: maxDepth - 1 (1 .. 16); bits 4-7: maxElements / 4 (1 .. 61)
//   rest     the Hessian bytes, read value after value with one Decoder, small limits
// Invariants: a refusal names an offset within the input and changes nothing (the offset stays,
// the same read fails again the same way); every value decoded encodes again (its strings are
// valid UTF-8, its objects whole, its BackRefs alive) and those bytes decode, alone, to a
// deep-equal value that re-encodes to the same bytes. Leaks (cycles) are LeakSanitizer's.
#include <wheelbeat/hessian/decoder.h>
#include <wheelbeat/hessian/encoder.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

namespace {

using namespace wheelbeat::hessian;

void require(bool ok, const char* what) {
  if (ok) return;
  std::fprintf(stderr, "hessian_fuzz: invariant violated: %s\n", what);
  std::abort();
}

DecoderLimits limitsFrom(std::uint8_t control) {
  DecoderLimits limits;
  limits.maxDepth = 1 + (control & 0x0f);
  limits.maxElements = 1 + static_cast<std::size_t>(control >> 4) * 4;
  limits.maxStringUnits = 300;
  limits.maxBytesLength = 300;
  limits.maxClassDefs = 8;
  limits.maxTypes = 8;
  limits.maxRefs = 64;
  return limits;
}

void checkReencoding(const Value& value, const DecoderLimits& limits) {
  std::string bytes;
  try {
    bytes = encode(value);
  } catch (const EncodeError&) {
    require(false, "a decoded value does not encode");
  }
  // The value alone may need more room than its share of a stream did: a ref to a value read
  // earlier in the stream becomes a copy, written where the ref was, so as deep as the ref plus
  // the value's own depth. Each such copy adds at most maxDepth levels, and a path meets at most
  // maxRefs of them: decode with the limits opened that far.
  DecoderLimits open;
  open.maxDepth = limits.maxDepth * (limits.maxRefs + 1);
  try {
    const Value again = decode(bytes, open);
    require(deepEqual(again, value), "re-encoded bytes decode to another value");
    require(encode(again) == bytes, "re-encoding is not stable");
  } catch (const DecodeError&) {
    require(false, "re-encoded bytes are refused");
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const DecoderLimits limits = limitsFrom(data[0]);
  const std::string_view input(reinterpret_cast<const char*>(data) + 1, size - 1);
  Decoder decoder(input, limits);
  for (int values = 0; !decoder.atEnd() && values < 64; ++values) {
    const std::size_t before = decoder.offset();
    try {
      const Value value = decoder.read();
      require(decoder.offset() > before, "a value read no byte");
      checkReencoding(value, limits);
    } catch (const DecodeError& e) {
      require(e.offset() <= input.size(), "an error offset beyond the input");
      require(decoder.offset() == before, "a refused read moved the decoder");
      const std::string first = e.what();
      try {
        decoder.read();
        require(false, "a refused read succeeded the second time");
      } catch (const DecodeError& again) {
        require(first == again.what(), "a refused read failed differently the second time");
      }
      break;
    }
  }
  return 0;
}
