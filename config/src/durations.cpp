// Durations: "60s", "1.5s", "1m30s", "250us" — always a string with a unit (see values.h).
#include "values.h"

#include <fmt/format.h>

#include <array>
#include <limits>

namespace wheelbeat::config::detail {
namespace {

constexpr std::int64_t kMaxNs = std::numeric_limits<std::int64_t>::max();
// 10^18 × 3.6·10^12 (18 decimals of an hour in ns) fits; int64 does not.
__extension__ using Wide = unsigned __int128;

struct Unit {
  std::string_view suffix;
  std::int64_t ns;
};
// Largest first: the order terms must follow, and formatDuration() picks the first that divides.
constexpr std::array<Unit, 6> kUnits{{{"h", 3'600'000'000'000},
                                      {"m", 60'000'000'000},
                                      {"s", 1'000'000'000},
                                      {"ms", 1'000'000},
                                      {"us", 1'000},
                                      {"ns", 1}}};

// Reads one term "<digits>[.<digits>]<unit>" at s[pos...]; its unit must come after `lastUnit`.
class TermReader {
public:
  explicit TermReader(std::string_view s) : s_(s) {}

  // Adds the next term to `total`; false when it is malformed (why_ says how it failed).
  bool next(Wide& total, std::size_t& lastUnit) {
    const std::string_view whole = digits();
    if (whole.empty()) return false;
    std::string_view fraction;
    if (pos_ < s_.size() && s_[pos_] == '.') {
      ++pos_;
      fraction = digits();
      if (fraction.empty()) return false;
    }
    const std::size_t unit = readUnit();
    if (unit >= kUnits.size() || (lastUnit < kUnits.size() && unit <= lastUnit)) return false;
    lastUnit = unit;
    total += scaled(whole, fraction, static_cast<Wide>(kUnits.at(unit).ns));
    return true;
  }
  [[nodiscard]] bool done() const noexcept { return pos_ == s_.size(); }
  [[nodiscard]] DurationError issue() const noexcept { return issue_; }

private:
  std::string_view digits() {
    const std::size_t start = pos_;
    while (pos_ < s_.size() && s_[pos_] >= '0' && s_[pos_] <= '9') ++pos_;
    return s_.substr(start, pos_ - start);
  }
  // Two-letter units first: "ms" is not "m" followed by a stray "s".
  std::size_t readUnit() {
    for (std::size_t i : {3UL, 4UL, 5UL, 0UL, 1UL, 2UL}) {
      if (s_.substr(pos_).starts_with(kUnits.at(i).suffix)) {
        pos_ += kUnits.at(i).suffix.size();
        return i;
      }
    }
    return kUnits.size();
  }
  // whole.fraction × unit in nanoseconds; marks Overflow / Inexact (the value is then unused).
  Wide scaled(std::string_view whole, std::string_view fraction, Wide unit) {
    Wide w = 0;
    for (char c : whole) {
      w = w * 10 + static_cast<Wide>(c - '0');
      if (w > static_cast<Wide>(kMaxNs)) issue_ = DurationError::Overflow;
      if (issue_ == DurationError::Overflow) return 0;
    }
    while (fraction.ends_with('0')) fraction.remove_suffix(1);
    // 18 significant decimals and more are never whole nanoseconds: no unit has 2^18 and 5^18.
    if (fraction.size() > 18) {
      issue_ = DurationError::Inexact;
      return 0;
    }
    Wide f = 0;
    Wide scale = 1;
    for (char c : fraction) {
      f = f * 10 + static_cast<Wide>(c - '0');
      scale *= 10;
    }
    if ((f * unit) % scale != 0) issue_ = DurationError::Inexact;
    return w * unit + f * unit / scale;
  }

  std::string_view s_;
  std::size_t pos_ = 0;
  DurationError issue_ = DurationError::None;
};

std::optional<nanoseconds> parseUnsignedString(std::string_view s, DurationError& why) {
  TermReader reader(s);
  Wide total = 0;
  std::size_t lastUnit = kUnits.size();
  do {
    if (!reader.next(total, lastUnit)) {
      why = DurationError::Malformed;
      return std::nullopt;
    }
    if (total > static_cast<Wide>(kMaxNs)) total = static_cast<Wide>(kMaxNs) + 1;  // stays big
  } while (!reader.done());
  why = reader.issue();
  if (why == DurationError::None && total > static_cast<Wide>(kMaxNs)) {
    why = DurationError::Overflow;
  }
  if (why != DurationError::None) return std::nullopt;
  return nanoseconds(static_cast<std::int64_t>(total));
}

std::optional<nanoseconds> parseString(std::string_view s, DurationError& why) {
  if (s.starts_with('-')) {
    // Named as negative only if the rest is a duration: "-1s" is negative, "-x" is malformed.
    DurationError rest = DurationError::None;
    const bool shaped = parseUnsignedString(s.substr(1), rest) || rest != DurationError::Malformed;
    why = shaped ? DurationError::Negative : DurationError::Malformed;
    return std::nullopt;
  }
  return parseUnsignedString(s, why);
}

}  // namespace

std::optional<nanoseconds> parseDuration(const Json& value, DurationError* why) {
  DurationError local = DurationError::None;
  DurationError& out = why != nullptr ? *why : local;
  out = DurationError::None;
  if (value.is_string()) return parseString(value.get_ref<const std::string&>(), out);
  // A bare number has no unit: 30 could be seconds or milliseconds, so it is refused.
  out = value.is_number() ? DurationError::NoUnit : DurationError::Malformed;
  return std::nullopt;
}

std::string formatDuration(nanoseconds d) {
  if (d.count() == 0) return "0s";
  if (d.count() < 0) return fmt::format("{}ns", d.count());
  for (const Unit& unit : kUnits) {
    if (d.count() % unit.ns == 0) return fmt::format("{}{}", d.count() / unit.ns, unit.suffix);
  }
  return fmt::format("{}ns", d.count());  // unreachable: the last unit divides everything
}

Json durationJson(nanoseconds d) { return Json(formatDuration(d)); }

bool readDuration(Errors& errors, const Json& value, const std::string& pointer, nanoseconds& out,
                  nanoseconds min) {
  DurationError why = DurationError::None;
  const auto d = parseDuration(value, &why);
  if (!d) {
    switch (why) {
      case DurationError::Negative: errors.add(pointer, value, "a non-negative duration"); break;
      case DurationError::Overflow:
        errors.add(pointer, value,
                   fmt::format("a duration of at most {}ns (about 292 years)", kMaxNs));
        break;
      case DurationError::Inexact:
        errors.add(pointer, value, "a whole number of nanoseconds");
        break;
      case DurationError::NoUnit: errors.add(pointer, value, std::string(kDurationNoUnit)); break;
      case DurationError::None:
      case DurationError::Malformed: errors.add(pointer, value, std::string(kDurationExpected));
    }
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

}  // namespace wheelbeat::config::detail
