// Round trips of the matrix (support.h): every value decodes to a deep-equal graph (sharing and
// cycles included) and re-encodes to the same bytes; the value model's rules.
#include "support.h"

#include <doctest/doctest.h>

#include <cmath>

using namespace wbhessian;

TEST_SUITE("hessian") {
TEST_CASE("hessian round trip: every value of the matrix / alone") {
  const std::vector<Case> cases = matrix();
  REQUIRE(cases.size() >= 100);
  std::size_t checked = 0;
  for (const Case& c : cases) {
    CAPTURE(c.name);
    const std::string bytes = encode(c.value);
    const Value back = decode(bytes);
    CHECK(deepEqual(back, c.value));
    CHECK(encode(back) == bytes);
    ++checked;
  }
  CHECK(checked == cases.size());
}

TEST_CASE("hessian round trip: the whole matrix through one encoder and one decoder") {
  const std::vector<Case> cases = matrix();
  Encoder encoder;
  for (const Case& c : cases) encoder.write(c.value);
  // The bytes hold some 600 KB of strings and bytes: more than the default maxStringUnits per
  // string is never needed, but the total is above nothing else.
  Decoder decoder(encoder.buffer());
  std::size_t n = 0;
  while (!decoder.atEnd() && n < cases.size()) {
    CAPTURE(cases[n].name);
    CHECK(deepEqual(decoder.read(), cases[n].value));
    ++n;
  }
  CHECK(n == cases.size());
  CHECK(decoder.atEnd());
}

TEST_CASE("hessian round trip: a value written twice is a ref the second time and decodes shared") {
  const ListPtr list = makeList("", {Value::string("x")});
  Encoder encoder;
  encoder.write(Value::list(list));
  encoder.write(Value::list(list));
  Decoder decoder(encoder.buffer());
  const Value first = decoder.read();
  const Value second = decoder.read();
  CHECK(first.asList() == second.asList());  // the same node, not a copy
  CHECK(first.asList()->items[0].asString() == "x");
}

TEST_CASE("hessian round trip: a decoded cycle is a BackRef / owned by the root alone") {
  const Value root =
      decode(unhex("7a"
                   "5190"
                   "91"));  // [itself, 1]
  const ListPtr& list = root.asList();
  REQUIRE(list->items.size() == 2);
  CHECK(list->items[0].type() == Type::BackRef);
  CHECK(list->items[0].asBackRef().lock().asList() == list);
  CHECK(list.use_count() == 1);  // the back edge does not own: no leak when root goes
  const BackRef weak = list->items[0].asBackRef();
  { const Value copy = root; }
  CHECK_FALSE(weak.expired());
}

TEST_CASE("hessian round trip: a BackRef whose target is gone is refused / nothing written") {
  BackRef dangling;
  {
    const ListPtr gone = makeList();
    dangling = BackRef(gone);
  }
  Encoder encoder;
  encoder.writeInt(7);
  CHECK_THROWS_WITH(encoder.write(Value::list(makeList("[x", {Value::backRef(dangling)}))),
                    "hessian: encode: a BackRef whose target no longer exists");
  CHECK(hex(encoder.buffer()) == "97");
  // The type "[x" and the list's ref slot were rolled back: written again, they are new.
  encoder.write(Value::list(makeList("[x")));
  CHECK(hex(encoder.buffer()) ==
        "97"
        "7002"
        "5b78");
}

TEST_CASE("hessian round trip: a refused object leaves the class table as it was") {
  auto def = makeClassDef("C", {"a"});
  auto bad = std::make_shared<Object>(Object{def, {}});
  Encoder encoder;
  CHECK_THROWS_WITH(
      encoder.write(Value::list(
          makeList("", {Value::object(makeObject(def, {Value::int32(1)})), Value::object(bad)}))),
      "hessian: encode: an Object of class 'C' has 0 values (expected 1, one per field)");
  CHECK(encoder.buffer().empty());
  encoder.write(Value::object(makeObject(def, {Value::int32(1)})));
  CHECK(hex(encoder.buffer()) ==
        "430143"
        "91"
        "0161"
        "60"
        "91");
}

TEST_CASE("hessian round trip: -0.0 keeps its sign / NaN stays NaN") {
  const Value negZero = decode(encode(Value::float64(-0.0)));
  CHECK(std::signbit(negZero.asDouble()));
  CHECK(std::isnan(decode(encode(Value::float64(std::nan("")))).asDouble()));
}

TEST_CASE("hessian round trip: variable-length lists (0x55 / 0x57) decode as fixed ones") {
  const Value untyped =
      decode(unhex("57"
                   "91"
                   "92"
                   "5a"));
  CHECK(deepEqual(untyped, Value::list(makeList("", {Value::int32(1), Value::int32(2)}))));
  const Value typed =
      decode(unhex("55"
                   "045b696e74"
                   "91"
                   "5a"));
  CHECK(deepEqual(typed, Value::list(makeList("[int", {Value::int32(1)}))));
  // Re-encoded in the fixed forms (hessian.js reads no other).
  CHECK(hex(encode(typed)) == "71045b696e7491");
}

TEST_CASE("hessian round trip: string chunks of any form / a pair split across chunks") {
  CHECK(decode(unhex("5200026162"
                     "0163"))
            .asString() == "abc");
  CHECK(decode(unhex("520000"
                     "5300026162"))
            .asString() == "ab");
  CHECK(decode(unhex("520001eda0bd"
                     "01edb880"))
            .asString() == "\xf0\x9f\x98\x80");
  CHECK(decode(unhex("410001ff"
                     "410000"
                     "2101"))
            .asBytes() == Bytes{0xff, 0x01});
}

TEST_CASE("hessian value: accessors name both types / builders check counts") {
  CHECK_THROWS_WITH(Value::int64(1).asInt(), "hessian: value is a long, not a int");
  CHECK_THROWS_WITH(Value::null().asString(), "hessian: value is a null, not a string");
  CHECK_THROWS_WITH(makeObject(makeClassDef("P", {"x", "y"}), {Value::int32(1)}),
                    "hessian: makeObject: 1 values for class 'P' (expected 2, one per field)");
  CHECK(makeEnum("E", "A").asObject()->field("name")->asString() == "A");
  CHECK(makeEnum("E", "A").asObject()->field("other") == nullptr);
  CHECK(Value::list(nullptr).isNull());
  CHECK_THROWS_WITH(EncoderLimits{.maxDepth = 0}.validate(),
                    "hessian: EncoderLimits.maxDepth = 0 (expected >= 1)");
}

TEST_CASE("hessian value: deepEqual sees sharing / cycles and double bits") {
  const ListPtr shared = makeList("", {Value::int32(1)});
  const Value twice = Value::list(makeList("", {Value::list(shared), Value::list(shared)}));
  const Value copies = Value::list(makeList("", {Value::list(makeList("", {Value::int32(1)})),
                                                 Value::list(makeList("", {Value::int32(1)}))}));
  CHECK(deepEqual(twice, twice));
  CHECK_FALSE(deepEqual(twice, copies));
  CHECK_FALSE(deepEqual(Value::float64(0.0), Value::float64(-0.0)));
  CHECK_FALSE(deepEqual(Value::int32(1), Value::int64(1)));
}

TEST_CASE("hessian round trip: nesting deeper than the encoder's maxDepth is refused") {
  Value v = Value::int32(1);
  for (int i = 0; i < 5; ++i) v = Value::list(makeList("", {v}));
  CHECK(encode(v, EncoderLimits{.maxDepth = 5}).size() == 6);
  CHECK_THROWS_WITH(encode(v, EncoderLimits{.maxDepth = 4}),
                    "hessian: encode: lists, maps and objects nested deeper than maxDepth = 4");
}
}  // TEST_SUITE("hessian")
