// Hostile input: every refusal names the byte offset and what was expected, allocates nothing
// from an untrusted length, and leaves the decoder as it was.
#include "support.h"

#include <doctest/doctest.h>

using namespace wbhessian;

namespace {

// The message of the DecodeError `bytes` (hex) raises, or "decoded" if it raises none.
std::string refusal(const std::string& hexBytes, const DecoderLimits& limits = {}) {
  try {
    decode(unhex(hexBytes), limits);
  } catch (const DecodeError& e) {
    return e.what();
  }
  return "decoded";
}

std::string repeat(std::string_view unit, std::size_t n) {
  std::string s;
  for (std::size_t i = 0; i < n; ++i) s += unit;
  return s;
}

}  // namespace

TEST_SUITE("hessian") {
TEST_CASE("hessian hostile: 10 000-deep nesting stops at maxDepth") {
  CHECK(refusal(repeat("79", 10000) + "4e") ==
        "hessian: at byte 256: lists, maps and objects nested deeper than maxDepth = 256");
  CHECK(refusal(repeat("48"
                       "91",
                       10000)) ==
        "hessian: at byte 512: lists, maps and objects nested deeper than maxDepth = 256");
  CHECK(refusal(repeat("79", 256) + "4e") == "decoded");
}

TEST_CASE("hessian hostile: 2 GiB lengths cost nothing") {
  CHECK(refusal("58497fffffff") ==
        "hessian: at byte 0: list length 2147483647 exceeds maxElements = 1048576");
  CHECK(refusal("5849ffffffff") == "hessian: at byte 0: list length -1 (expected >= 0)");
  // Within a (huge) limit, but the elements are not there: reserved by the bytes present only.
  DecoderLimits open;
  open.maxElements = std::size_t{1} << 40;
  CHECK(refusal("58497fffffff"
                "91",
                open) == "hessian: at byte 7: input ends where a value was expected");
  CHECK(refusal("42ffff010203") ==
        "hessian: at byte 0: input ends inside binary data (65535 more bytes needed, 3 left)");
  CHECK(refusal("53ffff6162") ==
        "hessian: at byte 5: string: input ends before its last character");
  CHECK(refusal("4301"
                "61"
                "497fffffff") ==
        "hessian: at byte 0: class field count 2147483647 exceeds maxElements = 1048576");
}

TEST_CASE("hessian hostile: string and binary lengths over their limits / all chunks counted") {
  DecoderLimits small;
  small.maxStringUnits = 4;
  small.maxBytesLength = 4;
  CHECK(refusal("0461626364", small) == "decoded");
  CHECK(refusal("056162636465", small) ==
        "hessian: at byte 0: string length 5 exceeds maxStringUnits = 4");
  CHECK(refusal("520003616263"
                "026465",
                small) == "hessian: at byte 0: string length 5 exceeds maxStringUnits = 4");
  CHECK(refusal("410003010203"
                "220405",
                small) == "hessian: at byte 0: binary length 5 exceeds maxBytesLength = 4");
}

TEST_CASE("hessian hostile: refs / class and type refs to nothing") {
  CHECK(refusal("5190") ==
        "hessian: at byte 0: ref 0 to nothing (0 lists, maps and objects so far)");
  CHECK(refusal("79"
                "5191") ==
        "hessian: at byte 1: ref 1 to nothing (1 lists, maps and objects so far)");
  CHECK(refusal("60") == "hessian: at byte 0: object of class definition 0, but 0 are defined");
  CHECK(refusal("4f9f") == "hessian: at byte 0: object of class definition 15, but 0 are defined");
  CHECK(refusal("7190") == "hessian: at byte 1: type ref 0 to nothing (0 type names so far)");
  CHECK(refusal("714e") ==
        "hessian: at byte 1: code 0x4e where a type (a string or a type ref) was expected");
}

TEST_CASE("hessian hostile: class definitions inside an object's fields keep its class") {
  // Class 0 "a" with one field; an object of it whose field value comes after 40 more
  // definitions (the table grows under the object being read).
  std::string input =
      "430161"
      "91"
      "0166"
      "60";
  for (int i = 0; i < 40; ++i)
    input +=
        "430162"
        "90";
  const Value v = decode(unhex(input + "4e"));
  CHECK(v.asObject()->def->name == "a");
  CHECK(v.asObject()->field("f")->isNull());
}

TEST_CASE("hessian hostile: 100 000 class definitions stop at maxClassDefs") {
  const std::string defs = repeat(
                               "430161"
                               "90",
                               100000) +
                           "4e";
  CHECK(refusal(defs) == "hessian: at byte 16384: more than maxClassDefs = 4096 class definitions");
}

TEST_CASE("hessian hostile: surrogates / 4-byte sequences and bad UTF-8 in strings") {
  CHECK(refusal("01eda0bd") ==
        "hessian: at byte 0: string ends inside a surrogate pair (a high surrogate alone)");
  CHECK(refusal("520001eda0bd"
                "0161") == "hessian: at byte 7: string: unpaired high surrogate");
  CHECK(refusal("01edb880") == "hessian: at byte 1: string: unpaired low surrogate");
  CHECK(refusal("01f09f9880") ==
        "hessian: at byte 1: string: 4-byte UTF-8 sequence (expected CESU-8: a character outside "
        "the BMP as two 3-byte surrogates)");
  CHECK(refusal("01c080") == "hessian: at byte 1: string: invalid UTF-8 lead byte");
  CHECK(refusal("01e08080") == "hessian: at byte 1: string: overlong UTF-8 sequence");
  CHECK(refusal("01c341") == "hessian: at byte 1: string: invalid UTF-8 continuation byte");
  CHECK(refusal("01e4b8") == "hessian: at byte 1: string: input ends before its last character");
  CHECK(refusal("5200016144") == "hessian: at byte 4: code 0x44 where a string chunk was expected");
}

TEST_CASE("hessian hostile: reserved codes / a stray 'Z' / bytes after the value") {
  for (const char* code : {"40", "45", "47", "50"}) {
    CHECK(
        refusal(code) ==
        fmt::format("hessian: at byte 0: reserved or unknown code 0x{} (expected a value)", code));
  }
  CHECK(refusal("5a") == "hessian: at byte 0: 'Z' (0x5a) outside a list or map (expected a value)");
  CHECK(refusal("9191") == "hessian: at byte 1: 1 bytes after the value (expected the end)");
  CHECK(refusal("") == "hessian: at byte 0: input ends where a value was expected");
  CHECK(refusal("5791") ==
        "hessian: at byte 0: input ends inside a list (expected a value or 'Z')");
  CHECK(refusal("4891") == "hessian: at byte 2: input ends where a value was expected");
}

TEST_CASE("hessian hostile: counts over maxRefs / maxTypes and maxElements") {
  DecoderLimits small;
  small.maxRefs = 3;
  small.maxTypes = 1;
  small.maxElements = 2;
  CHECK(refusal("7a7878", small) == "decoded");
  CHECK(refusal("7b787878", small) == "hessian: at byte 0: list length 3 exceeds maxElements = 2");
  CHECK(refusal("7a797878", small) ==
        "hessian: at byte 3: more than maxRefs = 3 lists, maps and objects");
  CHECK(refusal("7a70016170016278", small) ==
        "hessian: at byte 5: more than maxTypes = 1 type names");
  CHECK(refusal("5791929394"
                "5a",
                small) == "hessian: at byte 0: list longer than maxElements = 2");
  CHECK(refusal("48"
                "9191"
                "9292"
                "9393"
                "5a",
                small) == "hessian: at byte 0: map larger than maxElements = 2 entries");
}

TEST_CASE("hessian hostile: owning chains through refs are bounded by maxDepth") {
  // [A = [], B = [A], [B]]: each inner list owns the one before it (refs 1 and 2), the outer
  // one (ref 0) owns them all: four deep, with nesting only two deep.
  const std::string chain =
      "7b"
      "78"
      "795191"
      "795192";
  DecoderLimits limits;
  limits.maxDepth = 4;
  CHECK(refusal(chain, limits) == "decoded");
  limits.maxDepth = 3;
  CHECK(refusal(chain, limits) ==
        "hessian: at byte 0: nodes own each other through refs 4 deep (more than maxDepth = 3)");
}

TEST_CASE("hessian hostile: truncated anywhere / every prefix of the matrix's values is refused") {
  std::size_t prefixes = 0;
  for (const Case& c : matrix()) {
    const std::string bytes = encode(c.value);
    const std::size_t step = bytes.size() <= 2048 ? 1 : bytes.size() / 64;
    for (std::size_t cut = 0; cut < bytes.size(); cut += step) {
      CAPTURE(c.name);
      CAPTURE(cut);
      try {
        decode(std::string_view(bytes).substr(0, cut));
        FAIL("a truncated value decoded");
      } catch (const DecodeError& e) {
        CHECK(e.offset() <= cut);
      }
      ++prefixes;
    }
  }
  CHECK(prefixes > 8000);  // at least the first 64 cuts of each value
}

TEST_CASE("hessian hostile: a refused read changes nothing and fails again the same way") {
  const std::string input = unhex(
      "79"
      "91"
      "7a"
      "5190"
      "5195");  // outlives the decoder
  Decoder decoder(input);
  CHECK(deepEqual(decoder.read(), Value::list(makeList("", {Value::int32(1)}))));
  CHECK(decoder.offset() == 2);
  std::string first;
  try {
    decoder.read();
  } catch (const DecodeError& e) {
    first = e.what();
  }
  CHECK(first == "hessian: at byte 5: ref 5 to nothing (2 lists, maps and objects so far)");
  CHECK(decoder.offset() == 2);
  CHECK_THROWS_WITH(decoder.read(), first.c_str());
}

TEST_CASE("hessian hostile: limits are validated and the total size is bounded") {
  DecoderLimits bad;
  bad.maxRefs = 0;
  CHECK_THROWS_WITH(Decoder("", bad), "hessian: DecoderLimits.maxRefs = 0 (expected >= 1)");
  DecoderLimits tiny;
  tiny.maxTotalBytes = 3;
  CHECK(refusal("7a9191", tiny) == "decoded");
  CHECK(refusal("7b919191", tiny) ==
        "hessian: at byte 0: input of 4 bytes exceeds maxTotalBytes = 3");
}

TEST_CASE("hessian hostile: every single byte decodes or is refused") {
  std::size_t decoded = 0;
  std::size_t refused = 0;
  for (int b = 0; b < 256; ++b) {
    try {
      decode(std::string(1, static_cast<char>(b)));
      ++decoded;
    } catch (const DecodeError&) {
      ++refused;
    }
  }
  // One byte holds: 64 ints, 24 longs, 0.0 and 1.0, the empty string and binary, null, true,
  // false, the empty untyped list (0x78); everything else needs more bytes or is reserved.
  CHECK(decoded == 64 + 24 + 2 + 2 + 3 + 1);
  CHECK(decoded + refused == 256);
}
}  // TEST_SUITE("hessian")
