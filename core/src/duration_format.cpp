#include <wheelbeat/core/duration_format.h>

#include <charconv>
#include <cstdint>

namespace wheelbeat::core {
namespace {

using U = std::uint64_t;

constexpr U kUs = 1'000;
constexpr U kMs = 1'000'000;
constexpr U kS = 1'000'000'000;
constexpr U kMin = 60 * kS;

// Appends to a caller's buffer of kMaxDurationText characters (every text fits: see the header).
class Writer {
public:
  explicit Writer(char* out) noexcept : begin_(out), at_(out) {}
  void text(std::string_view s) noexcept {
    for (const char c : s) *at_++ = c;
  }
  void number(U n) noexcept { at_ = std::to_chars(at_, begin_ + kMaxDurationText, n).ptr; }
  // `n` on exactly `width` digits, then its trailing zeros dropped (the decimals of a value).
  void decimals(U n, int width) noexcept {
    char digits[20];
    for (int i = width - 1; i >= 0; --i, n /= 10) digits[i] = static_cast<char>('0' + n % 10);
    while (width > 0 && digits[width - 1] == '0') --width;
    if (width == 0) return;
    *at_++ = '.';
    text(std::string_view(digits, static_cast<std::size_t>(width)));
  }
  [[nodiscard]] std::size_t size() const noexcept { return static_cast<std::size_t>(at_ - begin_); }

private:
  char* begin_;
  char* at_;
};

int digitCount(U n) noexcept {
  int d = 1;
  for (; n >= 10; n /= 10) ++d;
  return d;
}

U pow10(int e) noexcept {
  U p = 1;
  while (e-- > 0) p *= 10;
  return p;
}

// Rounded half up to three significant digits (m < one minute, so nothing overflows).
U roundToThreeDigits(U m) noexcept {
  const int digits = digitCount(m);
  if (digits <= 3) return m;
  const U p = pow10(digits - 3);
  return (m + p / 2) / p * p;
}

void belowMinute(U r, Writer& w) noexcept {
  const U unit = r >= kS ? kS : r >= kMs ? kMs : r >= kUs ? kUs : 1;
  const U whole = r / unit;
  w.number(whole);
  const int width = 3 - digitCount(whole);
  if (unit > 1 && width > 0) w.decimals(r % unit / (unit / pow10(width)), width);
  w.text(unit == kS ? "s" : unit == kMs ? "ms" : unit == kUs ? "us" : "ns");
}

// m >= one minute, or just below it and rounding up to it.
void minutesAndMore(U m, Writer& w) noexcept {
  const U seconds = m / kS + (m % kS >= kS / 2 ? 1 : 0);
  if (seconds < 3600) {
    w.number(seconds / 60);
    w.text("m");
    if (seconds % 60 != 0) {
      w.number(seconds % 60);
      w.text("s");
    }
    return;
  }
  const U minutes = m / kMin + (m % kMin >= kMin / 2 ? 1 : 0);
  w.number(minutes / 60);
  w.text("h");
  if (minutes % 60 != 0) {
    w.number(minutes % 60);
    w.text("m");
  }
}

}  // namespace

std::size_t formatDurationTo(std::chrono::nanoseconds d, char* out) noexcept {
  Writer w(out);
  const std::int64_t n = d.count();
  if (n == 0) {
    w.text("0s");
    return w.size();
  }
  if (n < 0) w.text("-");
  // The magnitude in unsigned arithmetic: -INT64_MIN does not fit in int64_t.
  const U m = n < 0 ? U{0} - static_cast<U>(n) : static_cast<U>(n);
  const U r = m < kMin ? roundToThreeDigits(m) : m;
  if (r < kMin) {
    belowMinute(r, w);
  } else {
    minutesAndMore(r, w);
  }
  return w.size();
}

std::string formatDurationExact(std::chrono::nanoseconds d) {
  struct Unit {
    U ns;
    std::string_view suffix;
  };
  static constexpr Unit kUnits[] = {{60 * kMin, "h"}, {kMin, "m"}, {kS, "s"},
                                    {kMs, "ms"},      {kUs, "us"}, {1, "ns"}};
  const std::int64_t n = d.count();
  if (n == 0) return "0s";
  const U m = n < 0 ? U{0} - static_cast<U>(n) : static_cast<U>(n);
  for (const Unit& u : kUnits) {
    if (m % u.ns != 0) continue;
    return fmt::format("{}{}{}", n < 0 ? "-" : "", m / u.ns, u.suffix);
  }
  return {};  // unreachable: every value divides by 1ns
}

std::string formatDuration(std::chrono::nanoseconds d) {
  char text[kMaxDurationText];
  return std::string(text, formatDurationTo(d, text));
}

}  // namespace wheelbeat::core
