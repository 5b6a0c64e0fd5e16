#include "values.h"

#include <fmt/format.h>

namespace wheelbeat::config::detail {
bool readInt(Errors& errors, const Json& value, const std::string& pointer, std::int64_t& out,
             std::int64_t lo, std::int64_t hi, std::string_view expected) {
  bool inRange = false;
  if (value.is_number_unsigned()) {
    const auto u = value.get<std::uint64_t>();
    inRange = u <= static_cast<std::uint64_t>(hi) && static_cast<std::int64_t>(u) >= lo;
  } else if (value.is_number_integer()) {
    const auto i = value.get<std::int64_t>();
    inRange = i >= lo && i <= hi;
  }
  if (!inRange) {
    errors.add(pointer, value, std::string(expected));
    return false;
  }
  out = value.get<std::int64_t>();
  return true;
}

bool readUnsigned(Errors& errors, const Json& value, const std::string& pointer, std::uint64_t& out,
                  std::uint64_t lo, std::uint64_t hi, std::string_view expected) {
  if (!value.is_number_unsigned() || value.get<std::uint64_t>() < lo ||
      value.get<std::uint64_t>() > hi) {
    errors.add(pointer, value, std::string(expected));
    return false;
  }
  out = value.get<std::uint64_t>();
  return true;
}

bool readSize(Errors& errors, const Json& value, const std::string& pointer, std::size_t& out,
              std::uint64_t lo, std::uint64_t hi, std::string_view expected) {
  std::uint64_t v = 0;
  if (!readUnsigned(errors, value, pointer, v, lo, hi, expected)) return false;
  out = static_cast<std::size_t>(v);
  return true;
}

bool readNumber(Errors& errors, const Json& value, const std::string& pointer, double& out,
                double lo, double hi, std::string_view expected) {
  // JSON has no NaN or infinity, and a literal too large for a double is a parse error.
  if (!value.is_number() || !(value.get<double>() >= lo && value.get<double>() <= hi)) {
    errors.add(pointer, value, std::string(expected));
    return false;
  }
  out = value.get<double>();
  return true;
}

bool readBool(Errors& errors, const Json& value, const std::string& pointer, bool& out) {
  if (!value.is_boolean()) {
    errors.add(pointer, value, "true or false");
    return false;
  }
  out = value.get<bool>();
  return true;
}

std::string enumExpected(std::span<const std::string_view> names) {
  std::string expected = "one of ";
  for (std::size_t i = 0; i < names.size(); ++i) {
    expected += fmt::format("{}\"{}\"", i == 0 ? "" : ", ", names[i]);
  }
  return expected;
}

bool readEnum(Errors& errors, const Json& value, const std::string& pointer, std::size_t& out,
              std::span<const std::string_view> names) {
  for (std::size_t i = 0; i < names.size(); ++i) {
    if (value.is_string() && value.get_ref<const std::string&>() == names[i]) {
      out = i;
      return true;
    }
  }
  errors.add(pointer, value, enumExpected(names));
  return false;
}

}  // namespace wheelbeat::config::detail
