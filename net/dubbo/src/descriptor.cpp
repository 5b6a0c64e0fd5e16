#include <wheelbeat/dubbo/descriptor.h>

#include <fmt/format.h>

#include <array>
#include <stdexcept>

namespace wheelbeat::dubbo {

namespace {

struct Primitive {
  std::string_view name;
  char letter;
};
constexpr std::array<Primitive, 8> kPrimitives{{{"boolean", 'Z'},
                                                {"byte", 'B'},
                                                {"char", 'C'},
                                                {"short", 'S'},
                                                {"int", 'I'},
                                                {"long", 'J'},
                                                {"float", 'F'},
                                                {"double", 'D'}}};

[[noreturn]] void badType(std::string_view type, std::string_view why) {
  throw std::invalid_argument(fmt::format("dubbo: Java type \"{}\": {}", type, why));
}

[[noreturn]] void badDescriptor(std::string_view descriptor, std::size_t at, std::string_view why) {
  throw std::invalid_argument(
      fmt::format("dubbo: descriptor \"{}\" at char {}: {}", descriptor, at, why));
}

bool isNameChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
         c == '$' || static_cast<unsigned char>(c) >= 0x80;
}

// A class name with '.' (or '/') between non-empty identifiers, written with '/'.
std::string className(std::string_view whole, std::string_view name) {
  if (name.empty()) badType(whole, "empty class name (expected e.g. java.lang.String)");
  std::string out;
  out.reserve(name.size() + 2);
  out += 'L';
  char previous = '.';
  for (const char c : name) {
    if (c == '.' || c == '/') {
      if (previous == '.') badType(whole, "empty part in the class name");
      out += '/';
      previous = '.';
      continue;
    }
    if (!isNameChar(c)) badType(whole, fmt::format("character '{}' in a class name", c));
    out += c;
    previous = c;
  }
  if (previous == '.') badType(whole, "class name ends with '.'");
  out += ';';
  return out;
}

std::string elementOf(std::string_view whole, std::string_view element) {
  for (const auto& p : kPrimitives) {
    if (element == p.name) return std::string(1, p.letter);
  }
  return className(whole, element);
}

// Class.getName()'s array form: "[I", "[[Ljava.lang.String;".
std::string jvmArray(std::string_view whole) {
  std::size_t depth = 0;
  while (depth < whole.size() && whole[depth] == '[') ++depth;
  const std::string_view rest = whole.substr(depth);
  if (rest.size() == 1 && std::string_view("ZBCSIJFD").find(rest[0]) != std::string_view::npos) {
    return std::string(whole);
  }
  if (rest.size() < 3 || rest.front() != 'L' || rest.back() != ';') {
    badType(whole, "array name without a primitive letter or Lclass; element");
  }
  return std::string(depth, '[') + className(whole, rest.substr(1, rest.size() - 2));
}

// The length of the field descriptor starting at `at`.
std::size_t fieldLength(std::string_view d, std::size_t at) {
  std::size_t i = at;
  while (i < d.size() && d[i] == '[') ++i;
  if (i == d.size()) badDescriptor(d, at, "array without its element type");
  const char c = d[i];
  if (c == 'L') {
    const std::size_t end = d.find(';', i);
    if (end == std::string_view::npos) badDescriptor(d, at, "class name without its closing ';'");
    if (end == i + 1) badDescriptor(d, at, "empty class name");
    for (std::size_t k = i + 1; k < end; ++k) {
      if (d[k] != '/' && !isNameChar(d[k])) {
        badDescriptor(d, k, fmt::format("character '{}' in a class name", d[k]));
      }
    }
    return end + 1 - at;
  }
  if (std::string_view("ZBCSIJFD").find(c) == std::string_view::npos) {
    badDescriptor(d, i, fmt::format("'{}' (expected one of ZBCSIJFD, L or [)", c));
  }
  return i + 1 - at;
}

}  // namespace

std::string descriptorOf(std::string_view javaType) {
  if (javaType.empty()) badType(javaType, "empty (expected e.g. int or java.lang.String)");
  if (javaType.front() == '[') return jvmArray(javaType);
  std::size_t depth = 0;
  std::string_view element = javaType;
  while (element.size() >= 2 && element.substr(element.size() - 2) == "[]") {
    element.remove_suffix(2);
    ++depth;
  }
  return std::string(depth, '[') + elementOf(javaType, element);
}

std::string descriptorOf(const std::vector<std::string>& javaTypes) {
  std::string out;
  for (const auto& type : javaTypes) out += descriptorOf(type);
  return out;
}

std::vector<std::string_view> splitDescriptor(std::string_view descriptor) {
  std::vector<std::string_view> out;
  std::size_t at = 0;
  while (at < descriptor.size()) {
    const std::size_t length = fieldLength(descriptor, at);
    out.push_back(descriptor.substr(at, length));
    at += length;
  }
  return out;
}

std::string javaTypeOf(std::string_view field) {
  if (field.empty() || fieldLength(field, 0) != field.size()) {
    throw std::invalid_argument(
        fmt::format("dubbo: \"{}\" is not one field descriptor (expected e.g. I or "
                    "Ljava/lang/String;)",
                    field));
  }
  std::size_t depth = 0;
  while (field[depth] == '[') ++depth;
  std::string out;
  const char c = field[depth];
  if (c == 'L') {
    out.assign(field.substr(depth + 1, field.size() - depth - 2));
    for (char& ch : out) {
      if (ch == '/') ch = '.';
    }
  } else {
    for (const auto& p : kPrimitives) {
      if (p.letter == c) out = p.name;
    }
  }
  for (std::size_t i = 0; i < depth; ++i) out += "[]";
  return out;
}

}  // namespace wheelbeat::dubbo
