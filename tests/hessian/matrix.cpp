#include "support.h"

#include <fmt/format.h>

#include <cstdlib>
#include <stdexcept>

namespace wbhessian {

std::string hex(std::string_view bytes) {
  std::string out;
  out.reserve(bytes.size() * 2);
  for (unsigned char c : bytes) out += fmt::format("{:02x}", c);
  return out;
}

std::string unhex(std::string_view text) {
  std::string out;
  for (std::size_t i = 0; i + 1 < text.size(); i += 2) {
    out.push_back(static_cast<char>(std::stoi(std::string(text.substr(i, 2)), nullptr, 16)));
  }
  return out;
}

std::string patternString(std::size_t units, std::string_view kind) {
  // Each character with its UTF-16 units: a, é (U+00E9), 中 (U+4E2D), 😀 (U+1F600, a pair).
  struct Char {
    const char* utf8;
    std::size_t units;
  };
  std::vector<Char> cycle;
  if (kind == "ascii") cycle = {{"a", 1}, {"b", 1}, {"c", 1}};
  if (kind == "two") cycle = {{"\xc3\xa9", 1}};
  if (kind == "three") cycle = {{"\xe4\xb8\xad", 1}};
  if (kind == "pair") cycle = {{"\xf0\x9f\x98\x80", 2}, {"a", 1}};
  if (kind == "mixed")
    cycle = {{"a", 1}, {"\xc3\xa9", 1}, {"\xe4\xb8\xad", 1}, {"\xf0\x9f\x98\x80", 2}};
  if (cycle.empty()) throw std::invalid_argument(fmt::format("no string kind '{}'", kind));
  std::string s;
  std::size_t n = 0;
  for (std::size_t i = 0; n < units; ++i) {
    const Char& c = cycle[i % cycle.size()];
    if (n + c.units > units) {
      s += 'a';
      ++n;
    } else {
      s += c.utf8;
      n += c.units;
    }
  }
  return s;
}

Value scalarFromName(const std::string& name) {
  const auto colon = name.find(':');
  const std::string kind = name.substr(0, colon);
  const std::string arg = colon == std::string::npos ? "" : name.substr(colon + 1);
  if (kind == "null") return Value::null();
  if (kind == "bool") return Value::boolean(arg == "true");
  if (kind == "int") return Value::int32(static_cast<std::int32_t>(std::stoll(arg)));
  if (kind == "long") return Value::int64(std::stoll(arg));
  if (kind == "double") return Value::float64(std::strtod(arg.c_str(), nullptr));
  if (kind == "date") return Value::date(Date{std::stoll(arg)});
  if (kind == "bytes") {
    Bytes b(std::stoul(arg));
    for (std::size_t i = 0; i < b.size(); ++i) b[i] = static_cast<std::uint8_t>(i % 251);
    return Value::bytes(std::move(b));
  }
  if (kind == "string") {
    const auto second = arg.find(':');
    return Value::string(patternString(std::stoul(arg.substr(0, second)), arg.substr(second + 1)));
  }
  throw std::invalid_argument(fmt::format("no scalar recipe '{}'", name));
}

namespace {

const char* kPoint = "HessianOracle$Point";

// Java's field order for Point: its primitive and String fields first, then the others.
ObjectPtr point(std::string label, std::int32_t x, std::int64_t y, Value next = {}) {
  static const auto def = makeClassDef(kPoint, {"label", "x", "y", "next"});
  return makeObject(
      def, {Value::string(std::move(label)), Value::int32(x), Value::int64(y), std::move(next)});
}

Value ints(std::string type, std::vector<std::int32_t> values) {
  std::vector<Value> items;
  for (std::int32_t v : values) items.push_back(Value::int32(v));
  return Value::list(makeList(std::move(type), std::move(items)));
}

void addScalars(std::vector<Case>& out) {
  std::vector<std::string> names = {"null", "bool:true", "bool:false"};
  for (const char* v : {"-2147483648", "-262145", "-262144", "-2049", "-2048", "-17", "-16", "0",
                        "47", "48", "2047", "2048", "262143", "262144", "2147483647"}) {
    names.push_back(fmt::format("int:{}", v));
  }
  for (const char* v : {"-9223372036854775808", "-2147483649", "-2147483648", "-262145", "-262144",
                        "-2049", "-2048", "-9", "-8", "0", "15", "16", "2047", "2048", "262143",
                        "262144", "2147483647", "2147483648", "9223372036854775807"}) {
    names.push_back(fmt::format("long:{}", v));
  }
  for (const char* v :
       {"0.0",          "1.0",     "-1.0", "127.0",   "-128.0", "128.0",       "32767.0",
        "-32768.0",     "32768.0", "0.5",  "0.001",   "3.5",    "2147483.647", "2147483.648",
        "-2147483.648", "0.0005",  "1e10", "123.456", "NaN",    "Infinity",    "-Infinity"}) {
    names.push_back(fmt::format("double:{}", v));
  }
  for (const char* v : {"0", "60000", "1", "-60000", "1699999980000", "1700000000001",
                        "128849018880000", "-128849018880000"}) {
    names.push_back(fmt::format("date:{}", v));
  }
  for (const char* v : {"0:ascii",    "1:ascii",     "31:ascii",    "32:ascii",    "1023:ascii",
                        "1024:ascii", "32768:ascii", "32769:ascii", "40000:ascii", "31:two",
                        "32:two",     "1023:two",    "1024:two",    "40000:two",   "1023:three",
                        "1024:three", "32768:three", "40000:three", "2:pair",      "32:pair",
                        "1024:pair",  "32768:pair",  "40000:pair",  "32768:mixed", "40000:mixed"}) {
    names.push_back(fmt::format("string:{}", v));
  }
  for (const char* v : {"0", "15", "16", "1023", "1024", "4096", "8000"}) {
    names.push_back(fmt::format("bytes:{}", v));
  }
  for (const std::string& name : names) out.push_back(Case{name, scalarFromName(name), true});
  // Java writes -0.0 as 0x5b (0.0); binary above 8189 bytes in chunks that depend on its buffer.
  out.push_back(Case{"double:-0.0", Value::float64(-0.0), false});
  out.push_back(Case{"bytes:70000", scalarFromName("bytes:70000"), false});
}

void addNodes(std::vector<Case>& out) {
  auto add = [&out](std::string name, Value v) {
    out.push_back(Case{std::move(name), std::move(v), true});
  };
  add("list:empty", Value::list(makeList()));
  add("list:seven", ints("", {1, 2, 3, 4, 5, 6, 7}));
  add("list:eight", ints("", {1, 2, 3, 4, 5, 6, 7, 8}));
  add("list:intarray", ints("[int", {1, 2, 3}));
  add("list:intarray8", ints("[int", {1, 2, 3, 4, 5, 6, 7, 8}));
  add("list:strarray", Value::list(makeList("[string", {Value::string("a"), Value::string("b")})));
  add("list:linked", ints("java.util.LinkedList", {1, 2}));
  add("list:nested", Value::list(makeList("", {ints("", {1}), ints("[int", {1}), ints("[int", {2}),
                                               Value::null(), Value::int64(5)})));
  add("list:mixed",
      Value::list(makeList("", {Value::null(), Value::boolean(true), Value::int32(1),
                                Value::int64(2), Value::float64(3.5), Value::string("s"),
                                Value::bytes({1, 2}), Value::date(Date{60000})})));
  auto self = makeList();
  self->items.push_back(Value::backRef(BackRef(self)));
  add("list:selfref", Value::list(self));
  add("map:empty", Value::map(makeMap()));
  add("map:intkeys", Value::map(makeMap("", {{Value::int32(1), Value::string("a")},
                                             {Value::int32(2), Value::string("b")},
                                             {Value::int32(3), Value::string("c")}})));
  add("map:longkeys", Value::map(makeMap("", {{Value::int64(1), Value::string("x")},
                                              {Value::int64(2), Value::string("y")}})));
  add("map:nullkey",
      Value::map(makeMap("java.util.LinkedHashMap", {{Value::null(), Value::int32(1)},
                                                     {Value::int64(2), Value::string("x")},
                                                     {Value::string("k"), ints("", {1})}})));
  add("map:nested",
      Value::map(makeMap(
          "", {{Value::int32(1), Value::map(makeMap("", {{Value::int32(2), Value::int32(3)}}))}})));
  add("map:typedtwice",
      Value::list(makeList(
          "",
          {Value::map(makeMap("java.util.LinkedHashMap", {{Value::int32(1), Value::int32(1)}})),
           Value::map(makeMap("java.util.LinkedHashMap", {{Value::int32(2), Value::int32(2)}}))})));
  auto selfMap = makeMap();
  selfMap->entries.emplace_back(Value::int32(1), Value::backRef(BackRef(selfMap)));
  add("map:selfref", Value::map(selfMap));
}

void addObjects(std::vector<Case>& out) {
  auto add = [&out](std::string name, Value v) {
    out.push_back(Case{std::move(name), std::move(v), true});
  };
  add("object:point", Value::object(point("p", 1, 2)));
  auto self = point("self", 3, 4);
  self->values[3] = Value::backRef(BackRef(self));
  add("object:self", Value::object(self));
  auto q = point("q", 5, 6);
  auto p = point("p", 7, 8, Value::object(q));
  add("object:shared",
      Value::list(makeList("", {Value::object(p), Value::object(p), Value::object(q)})));
  auto c = point("c", 0, -1);
  auto b = point("b", -16, 262144, Value::object(c));
  add("object:chain", Value::object(point("a", 48, -9, Value::object(b))));
  add("enum:red", makeEnum("HessianOracle$Color", "RED"));
  const Value red = makeEnum("HessianOracle$Color", "RED");
  add("enum:list",
      Value::list(makeList("[object", {red, makeEnum("HessianOracle$Color", "GREEN"), red})));
}

}  // namespace

std::vector<Case> matrix() {
  std::vector<Case> out;
  addScalars(out);
  addNodes(out);
  addObjects(out);
  return out;
}

}  // namespace wbhessian
