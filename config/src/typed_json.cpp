#include <wheelbeat/config/typed_json.h>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <limits>
#include <stdexcept>

namespace wheelbeat::config {

namespace {

using Json = nlohmann::ordered_json;  // objects keep their order: an object's fields are ordered
namespace h = hessian;

constexpr std::string_view kB64 =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

[[noreturn]] void bad(const std::string& path, const Json& value, std::string_view expected) {
  throw std::invalid_argument(fmt::format("typed JSON {}: {} (expected {})",
                                          path.empty() ? "/" : path, value.dump(), expected));
}

std::string base64(const h::Bytes& bytes) {
  std::string out;
  out.reserve((bytes.size() + 2) / 3 * 4);
  for (std::size_t i = 0; i < bytes.size(); i += 3) {
    const std::uint32_t n = (std::uint32_t{bytes[i]} << 16) |
                            (i + 1 < bytes.size() ? std::uint32_t{bytes[i + 1]} << 8 : 0) |
                            (i + 2 < bytes.size() ? std::uint32_t{bytes[i + 2]} : 0);
    out += kB64[(n >> 18) & 63];
    out += kB64[(n >> 12) & 63];
    out += i + 1 < bytes.size() ? kB64[(n >> 6) & 63] : '=';
    out += i + 2 < bytes.size() ? kB64[n & 63] : '=';
  }
  return out;
}

h::Bytes unbase64(const std::string& path, const Json& j) {
  const std::string& text = j.get_ref<const std::string&>();
  h::Bytes out;
  std::uint32_t acc = 0;
  int bits = 0;
  std::size_t pad = 0;
  for (const char c : text) {
    if (c == '=') {
      ++pad;
      continue;
    }
    const std::size_t v = kB64.find(c);
    if (v == std::string_view::npos || pad > 0) bad(path, j, "base64 text");
    acc = (acc << 6) | static_cast<std::uint32_t>(v);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out.push_back(static_cast<std::uint8_t>((acc >> bits) & 0xff));
    }
  }
  if ((text.size() % 4) != 0 || pad > 2) bad(path, j, "base64 text (length a multiple of 4)");
  return out;
}

std::int64_t integer(const std::string& path, const Json& j, std::int64_t lo, std::int64_t hi) {
  const std::string range = fmt::format("an integer in {}..{}", lo, hi);
  std::int64_t v = 0;
  if (j.is_number_integer() && !(j.is_number_unsigned() && j.get<std::uint64_t>() > INT64_MAX)) {
    v = j.get<std::int64_t>();
  } else if (j.is_string()) {
    const std::string& s = j.get_ref<const std::string&>();
    std::size_t used = 0;
    try {
      v = std::stoll(s, &used, 10);
    } catch (const std::exception&) {
      bad(path, j, range);
    }
    if (used != s.size()) bad(path, j, range);
  } else {
    bad(path, j, range);
  }
  if (v < lo || v > hi) bad(path, j, range);
  return v;
}

double number(const std::string& path, const Json& j) {
  if (j.is_number()) return j.get<double>();
  if (!j.is_string()) bad(path, j, "a number, \"NaN\", \"Infinity\" or \"-Infinity\"");
  const std::string& s = j.get_ref<const std::string&>();
  if (s == "NaN") return std::numeric_limits<double>::quiet_NaN();
  if (s == "Infinity") return std::numeric_limits<double>::infinity();
  if (s == "-Infinity") return -std::numeric_limits<double>::infinity();
  std::size_t used = 0;
  double d = 0;
  try {
    d = std::stod(s, &used);
  } catch (const std::exception&) {
    bad(path, j, "a number, \"NaN\", \"Infinity\" or \"-Infinity\"");
  }
  if (used != s.size()) bad(path, j, "a number, \"NaN\", \"Infinity\" or \"-Infinity\"");
  return d;
}

h::Value fromJson(const Json& j, const std::string& path);

std::string typeOf(const Json& j, const std::string& path) {
  if (!j.contains("$type")) return {};
  const Json& t = j["$type"];
  if (!t.is_string()) bad(path + "/$type", t, "a type name string");
  return t.get<std::string>();
}

// {"$int": ...} and the other one-key forms; nullptr when `j` is none of them.
std::optional<h::Value> tagged(const Json& j, const std::string& path) {
  if (j.size() != 1) return std::nullopt;
  // Through an iterator that lives to the end: items()'s proxy would dangle here.
  const auto first = j.begin();
  const std::string key = first.key();
  const Json& v = first.value();
  const std::string at = path + "/" + key;
  if (key == "$int")
    return h::Value::int32(static_cast<std::int32_t>(integer(at, v, INT32_MIN, INT32_MAX)));
  if (key == "$long") return h::Value::int64(integer(at, v, INT64_MIN, INT64_MAX));
  if (key == "$double") return h::Value::float64(number(at, v));
  if (key == "$date") return h::Value::date({integer(at, v, INT64_MIN, INT64_MAX)});
  if (key == "$bytes") {
    if (!v.is_string()) bad(at, v, "base64 text");
    return h::Value::bytes(unbase64(at, v));
  }
  return std::nullopt;
}

h::Value fromObject(const Json& j, const std::string& path) {
  if (auto v = tagged(j, path)) return std::move(*v);
  if (j.contains("$class")) {
    const Json& name = j["$class"];
    if (!name.is_string() || name.get_ref<const std::string&>().empty()) {
      bad(path + "/$class", name, "a class name");
    }
    std::vector<std::string> fields;
    std::vector<h::Value> values;
    for (const auto& [key, v] : j.items()) {
      if (key == "$class") continue;
      fields.push_back(key);
      values.push_back(fromJson(v, path + "/" + key));
    }
    return h::Value::object(h::makeObject(
        h::makeClassDef(name.get<std::string>(), std::move(fields)), std::move(values)));
  }
  if (j.contains("$list")) {
    const Json& items = j["$list"];
    if (!items.is_array()) bad(path + "/$list", items, "an array");
    std::vector<h::Value> values;
    for (std::size_t i = 0; i < items.size(); ++i) {
      values.push_back(fromJson(items[i], fmt::format("{}/$list/{}", path, i)));
    }
    return h::Value::list(h::makeList(typeOf(j, path), std::move(values)));
  }
  if (j.contains("$map")) {
    const Json& entries = j["$map"];
    if (!entries.is_array()) bad(path + "/$map", entries, "an array of [key, value] pairs");
    std::vector<std::pair<h::Value, h::Value>> out;
    for (std::size_t i = 0; i < entries.size(); ++i) {
      const std::string at = fmt::format("{}/$map/{}", path, i);
      if (!entries[i].is_array() || entries[i].size() != 2)
        bad(at, entries[i], "a [key, value] pair");
      out.emplace_back(fromJson(entries[i][0], at + "/0"), fromJson(entries[i][1], at + "/1"));
    }
    return h::Value::map(h::makeMap(typeOf(j, path), std::move(out)));
  }
  std::vector<std::pair<h::Value, h::Value>> out;
  for (const auto& [key, v] : j.items()) {
    if (!key.empty() && key[0] == '$') {
      bad(path + "/" + key, v, "no other key beginning with '$' (a typed form takes it alone)");
    }
    out.emplace_back(h::Value::string(key), fromJson(v, path + "/" + key));
  }
  return h::Value::map(h::makeMap({}, std::move(out)));
}

h::Value fromJson(const Json& j, const std::string& path) {
  switch (j.type()) {
    case Json::value_t::null: return {};
    case Json::value_t::boolean: return h::Value::boolean(j.get<bool>());
    case Json::value_t::string: return h::Value::string(j.get<std::string>());
    case Json::value_t::number_integer:
    case Json::value_t::number_unsigned: {
      const std::int64_t v = integer(path, j, INT64_MIN, INT64_MAX);
      if (v >= INT32_MIN && v <= INT32_MAX) return h::Value::int32(static_cast<std::int32_t>(v));
      return h::Value::int64(v);
    }
    case Json::value_t::number_float: return h::Value::float64(j.get<double>());
    case Json::value_t::array: {
      std::vector<h::Value> values;
      for (std::size_t i = 0; i < j.size(); ++i)
        values.push_back(fromJson(j[i], fmt::format("{}/{}", path, i)));
      return h::Value::list(h::makeList({}, std::move(values)));
    }
    case Json::value_t::object: return fromObject(j, path);
    default: bad(path, j, "a JSON value");
  }
}

Json parse(std::string_view text) {
  try {
    return Json::parse(text);
  } catch (const nlohmann::json::parse_error& e) {
    throw std::invalid_argument(fmt::format("typed JSON: not JSON: {}", e.what()));
  }
}

std::string doubleText(double d) {
  if (std::isnan(d)) return "NaN";
  if (std::isinf(d)) return d > 0 ? "Infinity" : "-Infinity";
  return fmt::format("{}", d);
}

Json toJson(const h::Value& v);

Json mapToJson(const h::Map& map) {
  bool plain = map.type.empty();
  for (const auto& [k, v] : map.entries) {
    plain = plain && k.type() == h::Type::String && !k.asString().empty() && k.asString()[0] != '$';
  }
  if (plain) {
    Json out = Json::object();
    for (const auto& [k, v] : map.entries) out[k.asString()] = toJson(v);
    return out;
  }
  Json entries = Json::array();
  for (const auto& [k, v] : map.entries) entries.push_back(Json::array({toJson(k), toJson(v)}));
  Json out = {{"$map", std::move(entries)}};
  if (!map.type.empty()) out["$type"] = map.type;
  return out;
}

Json toJson(const h::Value& v) {
  switch (v.type()) {
    case h::Type::Null: return nullptr;
    case h::Type::Bool: return v.asBool();
    case h::Type::Int: return v.asInt();
    case h::Type::Long: return {{"$long", std::to_string(v.asLong())}};
    case h::Type::Double: return {{"$double", doubleText(v.asDouble())}};
    case h::Type::String: return v.asString();
    case h::Type::Bytes: return {{"$bytes", base64(v.asBytes())}};
    case h::Type::Date: return {{"$date", v.asDate().millis}};
    case h::Type::List: {
      const h::List& list = *v.asList();
      Json items = Json::array();
      for (const auto& item : list.items) items.push_back(toJson(item));
      if (list.type.empty()) return items;
      return {{"$list", std::move(items)}, {"$type", list.type}};
    }
    case h::Type::Map: return mapToJson(*v.asMap());
    case h::Type::Object: {
      const h::Object& object = *v.asObject();
      Json out = {{"$class", object.def->name}};
      for (std::size_t i = 0; i < object.values.size(); ++i)
        out[object.def->fields[i]] = toJson(object.values[i]);
      return out;
    }
    case h::Type::BackRef: {
      const h::Value target = v.asBackRef().lock();
      std::string what = h::typeName(target.type());
      if (target.type() == h::Type::Object) what = target.asObject()->def->name;
      return {{"$backref", what}};
    }
  }
  return nullptr;
}

}  // namespace

hessian::Value valueFromTypedJson(std::string_view json) { return fromJson(parse(json), ""); }

std::vector<hessian::Value> valuesFromTypedJson(std::string_view jsonArray) {
  if (jsonArray.empty()) return {};
  const Json j = parse(jsonArray);
  if (!j.is_array()) bad("", j, "a JSON array of arguments");
  std::vector<hessian::Value> out;
  for (std::size_t i = 0; i < j.size(); ++i) out.push_back(fromJson(j[i], fmt::format("/{}", i)));
  return out;
}

std::string toTypedJson(const hessian::Value& value) { return toJson(value).dump(); }

}  // namespace wheelbeat::config
