#include "values.h"

#include <fmt/format.h>

#include <array>
#include <cctype>
#include <cmath>
#include <limits>

namespace wheelbeat::config::detail {
namespace {

constexpr std::int64_t kMaxNs = std::numeric_limits<std::int64_t>::max();

struct Unit {
  std::string_view suffix;
  std::int64_t ns;
};
// Largest first: formatDuration() picks the first that divides exactly.
constexpr std::array<Unit, 6> kUnits{{{"h", 3'600'000'000'000},
                                      {"m", 60'000'000'000},
                                      {"s", 1'000'000'000},
                                      {"ms", 1'000'000},
                                      {"us", 1'000},
                                      {"ns", 1}}};

// count × unit as nanoseconds; nullopt (and *overflow) beyond int64.
std::optional<nanoseconds> scaled(std::uint64_t count, std::int64_t unitNs, bool* overflow) {
  if (count > static_cast<std::uint64_t>(kMaxNs / unitNs)) {
    if (overflow != nullptr) *overflow = true;
    return std::nullopt;
  }
  return nanoseconds(static_cast<std::int64_t>(count) * unitNs);
}

std::optional<nanoseconds> parseDurationString(std::string_view s, bool* overflow) {
  std::size_t digits = 0;
  while (digits < s.size() && std::isdigit(static_cast<unsigned char>(s[digits])) != 0) ++digits;
  if (digits == 0) return std::nullopt;
  const std::string_view suffix = s.substr(digits);
  std::uint64_t count = 0;
  bool tooBig = false;
  for (char c : s.substr(0, digits)) {
    tooBig = tooBig || __builtin_mul_overflow(count, 10U, &count) ||
             __builtin_add_overflow(count, static_cast<unsigned>(c - '0'), &count);
  }
  for (const Unit& unit : kUnits) {
    if (unit.suffix != suffix) continue;
    if (!tooBig) return scaled(count, unit.ns, overflow);
    if (overflow != nullptr) *overflow = true;
    return std::nullopt;
  }
  return std::nullopt;  // no unit, or an unknown one
}

}  // namespace

std::optional<nanoseconds> parseDuration(const Json& value, bool* overflow) {
  if (value.is_number_unsigned()) return scaled(value.get<std::uint64_t>(), 1'000'000, overflow);
  if (value.is_string()) return parseDurationString(value.get_ref<const std::string&>(), overflow);
  return std::nullopt;  // negative integers, fractions, other types
}

std::string formatDuration(nanoseconds d) {
  if (d.count() == 0) return "0s";
  if (d.count() < 0) return fmt::format("{}ns", d.count());
  for (const Unit& unit : kUnits) {
    if (d.count() % unit.ns == 0) return fmt::format("{}{}", d.count() / unit.ns, unit.suffix);
  }
  return fmt::format("{}ns", d.count());  // unreachable: the last unit divides everything
}

Json durationJson(nanoseconds d) {
  if (d.count() == 0) return Json(0);
  return Json(formatDuration(d));
}

bool readDuration(Errors& errors, const Json& value, const std::string& pointer, nanoseconds& out,
                  nanoseconds min) {
  bool overflow = false;
  const auto d = parseDuration(value, &overflow);
  if (!d) {
    errors.add(pointer, value,
               overflow ? fmt::format("a duration of at most {}ns (about 292 years)", kMaxNs)
                        : std::string(kDurationExpected));
    return false;
  }
  if (*d < min) {
    errors.add(pointer, value, fmt::format(">= {}", formatDuration(min)));
    return false;
  }
  out = *d;
  return true;
}

bool readPositiveDuration(Errors& errors, const Json& value, const std::string& pointer,
                          nanoseconds& out) {
  nanoseconds d{0};
  if (!readDuration(errors, value, pointer, d)) return false;
  if (d.count() == 0) {
    errors.add(pointer, value, "> 0");
    return false;
  }
  out = d;
  return true;
}

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

bool readEnum(Errors& errors, const Json& value, const std::string& pointer, std::size_t& out,
              std::initializer_list<std::string_view> names) {
  std::size_t index = 0;
  for (std::string_view name : names) {
    if (value.is_string() && value.get_ref<const std::string&>() == name) {
      out = index;
      return true;
    }
    ++index;
  }
  std::string expected = "one of ";
  for (std::string_view name : names) {
    expected += fmt::format("{}\"{}\"", name == *names.begin() ? "" : ", ", name);
  }
  errors.add(pointer, value, std::move(expected));
  return false;
}

}  // namespace wheelbeat::config::detail
