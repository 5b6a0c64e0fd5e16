#include <wheelbeat/core/duration_format.h>
#include <wheelbeat/core/option_error.h>
#include <wheelbeat/tasks/retry_budget.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>
#include <stdexcept>

namespace wheelbeat::tasks {
namespace {

// One token in fixed-point units: 10^-9 token resolution keeps ratio × requests exact for any
// ratio with up to 9 decimals, and the largest reserve (10^9 tokens) still fits in int64.
constexpr std::int64_t kUnit = 1'000'000'000;
constexpr std::int64_t kMaxMinRetriesPerSecond = 1'000'000'000;
constexpr double kMaxRatio = 1000.0;

std::int64_t saturatingAdd(std::int64_t a, std::int64_t b) noexcept {
  std::int64_t sum = 0;
  if (__builtin_add_overflow(a, b, &sum)) return std::numeric_limits<std::int64_t>::max();
  return sum;
}

std::int64_t floorDiv(std::int64_t a, std::int64_t b) noexcept {
  const std::int64_t q = a / b;
  return (a % b != 0 && a < 0) ? q - 1 : q;
}

// The ring entry of a slice (slices may be negative on a clock with a negative epoch).
std::size_t ringIndex(std::int64_t slice) noexcept {
  return static_cast<std::size_t>(slice -
                                  floorDiv(slice, RetryBudget::kSlices) * RetryBudget::kSlices);
}

}  // namespace

void validate(const RetryBudgetOptions& o) {
  if (!(o.ratio >= 0.0 && o.ratio <= kMaxRatio)) {  // also rejects NaN
    throw core::OptionError("RetryBudgetOptions", "ratio", fmt::format("{}", o.ratio),
                            fmt::format("0 <= ratio <= {}", kMaxRatio));
  }
  if (o.minRetriesPerSecond < 0 || o.minRetriesPerSecond > kMaxMinRetriesPerSecond) {
    throw core::OptionError("RetryBudgetOptions", "minRetriesPerSecond",
                            std::to_string(o.minRetriesPerSecond),
                            fmt::format("0..{}", kMaxMinRetriesPerSecond));
  }
  if (o.window < std::chrono::milliseconds(1)) {
    throw core::OptionError("RetryBudgetOptions", "window", core::formatDurationExact(o.window),
                            ">= 1ms");
  }
}

namespace {
const RetryBudgetOptions& validated(const RetryBudgetOptions& o) {
  validate(o);
  return o;
}
}  // namespace

RetryBudget::RetryBudget(RetryBudgetOptions options)
    : options_(validated(options)),
      deposit_(std::llround(options_.ratio * static_cast<double>(kUnit))),
      reserveCap_(options_.minRetriesPerSecond * kUnit),
      sliceLength_(options_.window.count() / kSlices) {}

void RetryBudget::advanceLocked(std::chrono::nanoseconds now) {
  if (!started_) {
    started_ = true;
    last_ = now;
    currentSlice_ = floorDiv(now.count(), sliceLength_);
    reserve_ = reserveCap_;
    return;
  }
  if (now <= last_) return;  // backwards or no time: nothing refills, nothing expires

  // Refill the reserve. Beyond one second it is full whatever the rate, and below one second
  // elapsed × rate <= 10^9 × 10^9 fits in int64: no overflow either way.
  const std::int64_t elapsed = (now - last_).count();
  if (elapsed >= kUnit) {
    reserve_ = reserveCap_;
  } else {
    reserve_ = std::min(reserveCap_, reserve_ + elapsed * options_.minRetriesPerSecond);
  }
  last_ = now;

  // Expire the slices that left the window (their ring entries are reused by the new slices).
  const std::int64_t slice = floorDiv(now.count(), sliceLength_);
  const std::int64_t expired = std::min<std::int64_t>(slice - currentSlice_, kSlices);
  for (std::int64_t i = 1; i <= expired; ++i) {
    earned_[ringIndex(currentSlice_ + i)] = 0;
  }
  currentSlice_ = slice;
}

void RetryBudget::onRequest(std::chrono::nanoseconds now) {
  const std::lock_guard lock(mutex_);
  advanceLocked(now);
  auto& slot = earned_[ringIndex(currentSlice_)];
  slot = saturatingAdd(slot, deposit_);
}

bool RetryBudget::tryWithdraw(std::chrono::nanoseconds now) {
  const std::lock_guard lock(mutex_);
  advanceLocked(now);
  std::int64_t earned = 0;
  for (const auto units : earned_) earned = saturatingAdd(earned, units);
  if (saturatingAdd(earned, reserve_) < kUnit) {
    ++refusals_;
    return false;
  }

  // Oldest earned tokens first (they expire first), then the reserve.
  std::int64_t owed = kUnit;
  for (std::int64_t age = kSlices - 1; age >= 0 && owed > 0; --age) {
    auto& slot = earned_[ringIndex(currentSlice_ - age)];
    const std::int64_t take = std::min(slot, owed);
    slot -= take;
    owed -= take;
  }
  reserve_ -= owed;
  return true;
}

std::uint64_t RetryBudget::refusals() const {
  const std::lock_guard lock(mutex_);
  return refusals_;
}

void RetryBudget::writeMetrics(core::MetricsWriter& out, std::chrono::nanoseconds now) {
  out.gauge("wheelbeat_retry_budget_tokens", static_cast<double>(available(now)));
  out.counter("wheelbeat_retry_budget_refusals_total", static_cast<double>(refusals()));
}

std::int64_t RetryBudget::available(std::chrono::nanoseconds now) {
  const std::lock_guard lock(mutex_);
  advanceLocked(now);
  std::int64_t units = reserve_;
  for (const auto slot : earned_) units = saturatingAdd(units, slot);
  return units / kUnit;
}

}  // namespace wheelbeat::tasks
