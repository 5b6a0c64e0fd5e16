// Exact bytes at every compact-form boundary, as Java's Hessian 4.0.38 writes them (the bytes of
// the object, enum and shared-structure cases are Java's own output for the same values).
#include "support.h"

#include <doctest/doctest.h>

#include <cmath>
#include <limits>

using namespace wbhessian;

namespace {

std::string enc(const Value& v) { return hex(encode(v)); }
std::string encInt(std::int32_t i) { return enc(Value::int32(i)); }
std::string encLong(std::int64_t l) { return enc(Value::int64(l)); }
std::string encDouble(double d) { return enc(Value::float64(d)); }
std::string repeat(std::string_view unit, std::size_t n) {
  std::string s;
  for (std::size_t i = 0; i < n; ++i) s += unit;
  return s;
}

}  // namespace

TEST_SUITE("hessian") {
TEST_CASE("hessian encoding: int at every compact-form boundary") {
  CHECK(encInt(0) == "90");
  CHECK(encInt(1) == "91");
  CHECK(encInt(-16) == "80");
  CHECK(encInt(47) == "bf");
  CHECK(encInt(-17) == "c7ef");
  CHECK(encInt(48) == "c830");
  CHECK(encInt(-2048) == "c000");
  CHECK(encInt(2047) == "cfff");
  CHECK(encInt(-2049) == "d3f7ff");
  CHECK(encInt(2048) == "d40800");
  CHECK(encInt(-262144) == "d00000");
  CHECK(encInt(262143) == "d7ffff");
  CHECK(encInt(-262145) == "49fffbffff");
  CHECK(encInt(262144) == "4900040000");
  CHECK(encInt(std::numeric_limits<std::int32_t>::min()) == "4980000000");
  CHECK(encInt(std::numeric_limits<std::int32_t>::max()) == "497fffffff");
}

TEST_CASE("hessian encoding: long at every compact-form boundary and never in an int form") {
  CHECK(encLong(0) == "e0");
  CHECK(encLong(1) == "e1");
  CHECK(encLong(-8) == "d8");
  CHECK(encLong(15) == "ef");
  CHECK(encLong(-9) == "f7f7");
  CHECK(encLong(16) == "f810");
  CHECK(encLong(-2048) == "f000");
  CHECK(encLong(2047) == "ffff");
  CHECK(encLong(-2049) == "3bf7ff");
  CHECK(encLong(2048) == "3c0800");
  CHECK(encLong(-262144) == "380000");
  CHECK(encLong(262143) == "3fffff");
  CHECK(encLong(-262145) == "59fffbffff");
  CHECK(encLong(262144) == "5900040000");
  CHECK(encLong(std::numeric_limits<std::int32_t>::min()) == "5980000000");
  CHECK(encLong(std::numeric_limits<std::int32_t>::max()) == "597fffffff");
  CHECK(encLong(std::int64_t{1} << 31) == "4c0000000080000000");
  CHECK(encLong(std::numeric_limits<std::int64_t>::min()) == "4c8000000000000000");
}

TEST_CASE("hessian encoding: double in every form / as Java chooses them") {
  CHECK(encDouble(0.0) == "5b");
  CHECK(encDouble(1.0) == "5c");
  CHECK(encDouble(2.0) == "5d02");
  CHECK(encDouble(-1.0) == "5dff");
  CHECK(encDouble(127.0) == "5d7f");
  CHECK(encDouble(-128.0) == "5d80");
  CHECK(encDouble(128.0) == "5e0080");
  CHECK(encDouble(32767.0) == "5e7fff");
  CHECK(encDouble(-32768.0) == "5e8000");
  // Whole numbers beyond int16 and numbers with at most 3 decimals: int32 milliseconds.
  CHECK(encDouble(32768.0) == "5f01f40000");
  CHECK(encDouble(0.5) == "5f000001f4");
  CHECK(encDouble(0.001) == "5f00000001");
  CHECK(encDouble(3.5) == "5f00000dac");
  CHECK(encDouble(2147483.647) == "5f7fffffff");
  CHECK(encDouble(-2147483.648) == "5f80000000");
  // value * 1000 outside int32, or not giving the value back: the full 8 bytes.
  CHECK(encDouble(2147483.648) == "444140624dd2f1a9fc");
  CHECK(encDouble(0.0005) == "443f40624dd2f1a9fc");
  CHECK(encDouble(2147483647.0) == "4441dfffffffc00000");
  CHECK(encDouble(std::nan("")) == "447ff8000000000000");
  CHECK(encDouble(std::numeric_limits<double>::infinity()) == "447ff0000000000000");
  CHECK(encDouble(-std::numeric_limits<double>::infinity()) == "44fff0000000000000");
  CHECK(encDouble(-0.0) == "448000000000000000");  // Java: 5b, losing the sign
}

TEST_CASE("hessian encoding: strings count UTF-16 units and chunk at 0x8000") {
  CHECK(enc(Value::string("")) == "00");
  CHECK(enc(Value::string(std::string(31, 'a'))) == "1f" + repeat("61", 31));
  CHECK(enc(Value::string(std::string(32, 'a'))) == "3020" + repeat("61", 32));
  CHECK(enc(Value::string(std::string(1023, 'a'))) == "33ff" + repeat("61", 1023));
  CHECK(enc(Value::string(std::string(1024, 'a'))) == "530400" + repeat("61", 1024));
  CHECK(enc(Value::string(std::string(0x8000, 'a'))) == "538000" + repeat("61", 0x8000));
  CHECK(enc(Value::string(std::string(0x8001, 'a'))) == "528000" + repeat("61", 0x8000) + "0161");
  CHECK(enc(Value::string("\xc3\xa9")) == "01c3a9");
  CHECK(enc(Value::string("\xe4\xb8\xad")) == "01e4b8ad");
  // Outside the BMP: two units, each surrogate as 3 bytes (CESU-8).
  CHECK(enc(Value::string("\xf0\x9f\x98\x80")) == "02eda0bdedb880");
  // A pair that would straddle the chunk boundary moves to the next chunk (Java: 0x7fff).
  CHECK(enc(Value::string(std::string(0x7fff, 'a') + "\xf0\x9f\x98\x80" + "bbb")) ==
        "527fff" + repeat("61", 0x7fff) + "05eda0bdedb880626262");
}

TEST_CASE("hessian encoding: invalid UTF-8 is refused and nothing is written") {
  Encoder e;
  e.writeInt(1);
  for (const char* bad :
       {"\xc3", "\xc0\x80", "\xed\xa0\x80", "\xf4\x90\x80\x80", "a\x80", "\xe0\x80\x80", "\xff"}) {
    CAPTURE(hex(bad));
    CHECK_THROWS_AS(e.write(Value::string(bad)), EncodeError);
    CHECK(hex(e.buffer()) == "91");
  }
  CHECK_THROWS_WITH(e.writeString("ab\xc3"),
                    "hessian: encode: truncated UTF-8 sequence at byte 2 of a string of 3 bytes");
  CHECK(hex(e.buffer()) == "91");
}

TEST_CASE("hessian encoding: bytes at every compact-form boundary and chunk") {
  auto bytesHex = [](std::size_t n) { return enc(Value::bytes(Bytes(n, 0xab))); };
  CHECK(bytesHex(0) == "20");
  CHECK(bytesHex(15) == "2f" + repeat("ab", 15));
  CHECK(bytesHex(16) == "3410" + repeat("ab", 16));
  CHECK(bytesHex(1023) == "37ff" + repeat("ab", 1023));
  CHECK(bytesHex(1024) == "420400" + repeat("ab", 1024));
  CHECK(bytesHex(0x8000) == "428000" + repeat("ab", 0x8000));
  CHECK(bytesHex(0x8011) == "418000" + repeat("ab", 0x8000) + "3411" + repeat("ab", 0x11));
}

TEST_CASE("hessian encoding: null / bool and Date") {
  CHECK(enc(Value::null()) == "4e");
  CHECK(enc(Value::boolean(true)) == "54");
  CHECK(enc(Value::boolean(false)) == "46");
  CHECK(enc(Value::date(Date{0})) == "4b00000000");
  CHECK(enc(Value::date(Date{60000})) == "4b00000001");
  CHECK(enc(Value::date(Date{1})) == "4a0000000000000001");
  CHECK(enc(Value::date(Date{60000LL << 31})) == "4a0000753000000000");
  CHECK(enc(Value::date(Date{-(60000LL << 31)})) == "4b80000000");
}

TEST_CASE("hessian encoding: lists untyped and typed / direct and fixed / with type refs") {
  auto ints = [](std::string type, std::size_t n) {
    std::vector<Value> items;
    for (std::size_t i = 0; i < n; ++i) items.push_back(Value::int32(static_cast<int>(i)));
    return Value::list(makeList(std::move(type), std::move(items)));
  };
  CHECK(enc(ints("", 0)) == "78");
  CHECK(enc(ints("", 7)) == "7f90919293949596");
  CHECK(enc(ints("", 8)) == "5898" + std::string("9091929394959697"));
  CHECK(enc(ints("[int", 0)) == "70045b696e74");
  CHECK(enc(ints("[int", 2)) == "72045b696e749091");
  CHECK(enc(ints("[int", 8)) == "56045b696e7498" + std::string("9091929394959697"));
  // Java's output for [HashMap{1:2}, the same map, int[]{1}, int[]{2}, new LinkedList()].
  const Value h = Value::map(makeMap("", {{Value::int32(1), Value::int32(2)}}));
  const Value shared =
      Value::list(makeList("", {h, h, Value::list(makeList("[int", {Value::int32(1)})),
                                Value::list(makeList("[int", {Value::int32(2)})),
                                Value::list(makeList("java.util.LinkedList"))}));
  CHECK(enc(shared) ==
        "7d4891925a519171045b696e749171909270146a6176612e7574696c2e4c696e6b65644c697374");
}

TEST_CASE("hessian encoding: maps untyped and typed / keys of any type") {
  CHECK(enc(Value::map(makeMap())) == "485a");
  CHECK(enc(Value::map(
            makeMap("java.util.LinkedHashMap",
                    {{Value::null(), Value::int32(1)}, {Value::int64(2), Value::string("x")}}))) ==
        "4d176a6176612e7574696c2e4c696e6b6564486173684d61704e91e201785a");
}

TEST_CASE("hessian encoding: objects / class definitions by ref / a self-reference / enums") {
  // Java's bytes for a Probe$Pt{label "a", x 1, y 2L, next = itself}.
  auto pt = makeObject(makeClassDef("Probe$Pt", {"label", "x", "y", "next"}),
                       {Value::string("a"), Value::int32(1), Value::int64(2), Value::null()});
  pt->values[3] = Value::backRef(BackRef(pt));
  CHECK(enc(Value::object(pt)) ==
        "430850726f626524507494056c6162656c01780179046e65787460016191e25190");
  // Java's bytes for new Object[]{Color.RED, Color.GREEN, Color.RED}.
  const Value red = makeEnum("Probe$Color", "RED");
  CHECK(enc(Value::list(makeList("[object", {red, makeEnum("Probe$Color", "GREEN"), red}))) ==
        "73075b6f626a656374430b50726f626524436f6c6f7291046e616d6560035245446005475245454e5191");
}

TEST_CASE("hessian encoding: the 17th class definition is referred to with 'O'") {
  std::vector<Value> objects;
  for (int i = 0; i < 17; ++i) {
    objects.push_back(Value::object(makeObject(makeClassDef(fmt::format("c{}", i), {}), {})));
  }
  const std::string bytes = hex(encode(Value::list(makeList("", std::move(objects)))));
  // Definition 15: 43 02 "c15" 90, then 6f; definition 16: 43 03 "c16" 90, then 4f a0.
  CHECK(bytes.find("4303633135906f") != std::string::npos);
  CHECK(
      bytes.ends_with("43036331369"
                      "04fa0"));
}

TEST_CASE("hessian encoding: a ref is written for a node met again / across writes too") {
  Encoder e;
  const ListPtr list = makeList("", {Value::int32(1)});
  e.write(Value::list(list));
  e.write(Value::list(list));
  CHECK(hex(e.buffer()) == "79915190");
  e.resetReferences();
  e.write(Value::list(list));
  CHECK(hex(e.buffer()) ==
        "7991519079"
        "91");
}
}  // TEST_SUITE("hessian")
