#include <wheelbeat/core/duration_format.h>
#include <wheelbeat/core/option_error.h>
#include <wheelbeat/tasks/retry_policy.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <utility>

namespace wheelbeat::tasks {
namespace {

using std::chrono::nanoseconds;
constexpr std::int64_t kMaxNs = std::numeric_limits<std::int64_t>::max();

[[noreturn]] void reject(std::string field, std::string value, std::string expected,
                         std::string other = {}, std::string otherExpected = {}) {
  throw core::OptionError("RetryOptions", std::move(field), std::move(value), std::move(expected),
                          std::move(other), std::move(otherExpected));
}

void validateNames(std::string_view field, const std::vector<std::string>& names) {
  for (std::size_t i = 0; i < names.size(); ++i) {
    if (names[i].empty()) {
      reject(fmt::format("{}[{}]", field, i), "\"\"", "a non-empty error name");
    }
  }
}

nanoseconds saturatingAdd(nanoseconds a, nanoseconds b) noexcept {
  std::int64_t sum = 0;
  if (__builtin_add_overflow(a.count(), b.count(), &sum)) {
    return nanoseconds(b.count() > 0 ? kMaxNs : std::numeric_limits<std::int64_t>::min());
  }
  return nanoseconds(sum);
}

// Uniform integer in [lo, hi] (lo <= hi) from 64-bit draws, by rejection: no modulo bias, and
// unlike std::uniform_int_distribution the same on every standard library.
std::int64_t uniformInt(SmallRng& rng, std::int64_t lo, std::int64_t hi) {
  const std::uint64_t span = static_cast<std::uint64_t>(hi) - static_cast<std::uint64_t>(lo);
  if (span == std::numeric_limits<std::uint64_t>::max()) {
    return static_cast<std::int64_t>(rng());
  }
  const std::uint64_t range = span + 1;
  // The largest multiple of `range` that fits: draws at or above it would favour small values.
  const std::uint64_t limit =
      std::numeric_limits<std::uint64_t>::max() - std::numeric_limits<std::uint64_t>::max() % range;
  std::uint64_t x = rng();
  while (x >= limit) x = rng();
  return static_cast<std::int64_t>(static_cast<std::uint64_t>(lo) + x % range);
}

// Uniform double in [0, 1) with 53 random bits.
double uniformUnit(SmallRng& rng) { return static_cast<double>(rng() >> 11) * 0x1.0p-53; }

// Rounds a non-negative double of nanoseconds to [0, cap].
nanoseconds clampNs(double ns, nanoseconds cap) noexcept {
  if (!(ns > 0.0)) return nanoseconds(0);
  if (ns >= static_cast<double>(cap.count())) return cap;
  return std::min(cap, nanoseconds(std::llround(ns)));
}

}  // namespace

void validate(const RetryOptions& o) {
  using core::formatDurationExact;
  if (o.backoff != Backoff::Fixed && o.backoff != Backoff::Exponential) {
    reject("backoff", fmt::format("{}", static_cast<int>(o.backoff)), "Fixed or Exponential");
  }
  if (o.initialDelay <= nanoseconds(0)) {
    reject("initialDelay", formatDurationExact(o.initialDelay), "> 0");
  }
  if (!(o.multiplier >= 1.0)) reject("multiplier", fmt::format("{}", o.multiplier), ">= 1");
  if (!std::isfinite(o.multiplier)) {
    reject("multiplier", fmt::format("{}", o.multiplier), "finite");
  }
  if (o.maxDelay < o.initialDelay) {
    reject("maxDelay", formatDurationExact(o.maxDelay),
           fmt::format(">= initialDelay = {}", formatDurationExact(o.initialDelay)), "initialDelay",
           fmt::format("<= maxDelay = {}", formatDurationExact(o.maxDelay)));
  }
  switch (o.jitter) {
    case Jitter::None:
    case Jitter::Full:
    case Jitter::Equal:
    case Jitter::Decorrelated:
    case Jitter::Proportional: break;
    default:
      reject("jitter", fmt::format("{}", static_cast<int>(o.jitter)),
             "None, Full, Equal, Decorrelated or Proportional");
  }
  if (!(o.jitterRatio >= 0.0 && o.jitterRatio <= 1.0)) {
    reject("jitterRatio", fmt::format("{}", o.jitterRatio), "0 <= jitterRatio <= 1");
  }
  if (o.maxAttempts < -1) {
    reject("maxAttempts", fmt::format("{}", o.maxAttempts), "-1 (forever), 0 (none) or > 0");
  }
  if (o.deadline < nanoseconds(0)) {
    reject("deadline", formatDurationExact(o.deadline), "0 (none) or > 0");
  }
  validateNames("retryOn", o.retryOn);
  validateNames("ignore", o.ignore);
}

nanoseconds cappedBackoff(const RetryOptions& o, std::int64_t attempt) noexcept {
  if (o.backoff == Backoff::Fixed || attempt <= 1) return std::min(o.initialDelay, o.maxDelay);
  // pow() of a huge exponent is +inf (or stays 1 for multiplier 1); clampNs caps either.
  const double factor = std::pow(o.multiplier, static_cast<double>(attempt - 1));
  return clampNs(static_cast<double>(o.initialDelay.count()) * factor, o.maxDelay);
}

std::string_view giveUpName(GiveUp reason) noexcept {
  switch (reason) {
    case GiveUp::None: return "none";
    case GiveUp::NotRetryable: return "not-retryable";
    case GiveUp::MaxAttempts: return "max-attempts";
    case GiveUp::Deadline: return "deadline";
    case GiveUp::BudgetExhausted: return "budget-exhausted";
  }
  return "unknown";
}

namespace {
const RetryOptions& validated(const RetryOptions& o) {
  validate(o);
  return o;
}
}  // namespace

RetryState::RetryState(const RetryOptions& options, nanoseconds start, std::uint64_t seed,
                       std::shared_ptr<RetryBudget> budget)
    : options_(validated(options)),
      budget_(std::move(budget)),
      rng_(seed),
      start_(start),
      prev_(options_.initialDelay) {}

bool RetryState::retryable(std::string_view errorName) const {
  const auto names = [errorName](const std::vector<std::string>& list) {
    return std::find(list.begin(), list.end(), errorName) != list.end();
  };
  if (names(options_.ignore)) return false;
  return options_.retryOn.empty() || names(options_.retryOn);
}

nanoseconds RetryState::drawDelay(std::int64_t attempt) {
  const nanoseconds cap = options_.maxDelay;
  const nanoseconds b = cappedBackoff(options_, attempt);
  switch (options_.jitter) {
    case Jitter::None: return b;
    case Jitter::Full: return nanoseconds(uniformInt(rng_, 0, b.count()));
    case Jitter::Equal: {
      const std::int64_t half = b.count() / 2;
      return nanoseconds(half + uniformInt(rng_, 0, b.count() - half));
    }
    case Jitter::Decorrelated: {
      const std::int64_t hi = prev_.count() > kMaxNs / 3 ? kMaxNs : prev_.count() * 3;
      return std::min(cap, nanoseconds(uniformInt(rng_, options_.initialDelay.count(), hi)));
    }
    case Jitter::Proportional: {
      const double r = options_.jitterRatio;
      const double factor = 1.0 - r + 2.0 * r * uniformUnit(rng_);
      return clampNs(static_cast<double>(b.count()) * factor, cap);
    }
  }
  return b;
}

Decision RetryState::next(nanoseconds now, std::string_view errorName) {
  // Saturates rather than wrapping; at INT64_MAX granted retries every later one is numbered
  // INT64_MAX (unreachable in practice: ~292 years of 1 ns retries).
  const std::int64_t attempt = attempts_ == kMaxNs ? kMaxNs : attempts_ + 1;
  Decision refused{false, nanoseconds(0), attempt, GiveUp::None};
  if (!retryable(errorName)) {
    refused.reason = GiveUp::NotRetryable;
    return refused;
  }
  if (options_.maxAttempts >= 0 && attempt > options_.maxAttempts) {
    refused.reason = GiveUp::MaxAttempts;
    return refused;
  }
  const nanoseconds delay = drawDelay(attempt);
  if (options_.deadline > nanoseconds(0) &&
      saturatingAdd(now, delay) > saturatingAdd(start_, options_.deadline)) {
    refused.reason = GiveUp::Deadline;
    return refused;
  }
  if (budget_ && !budget_->tryWithdraw(now)) {
    refused.reason = GiveUp::BudgetExhausted;
    return refused;
  }
  attempts_ = attempt;
  prev_ = delay;
  return Decision{true, delay, attempt, GiveUp::None};
}

void RetryState::reset(nanoseconds now) {
  attempts_ = 0;
  start_ = now;
  prev_ = options_.initialDelay;
}

}  // namespace wheelbeat::tasks
