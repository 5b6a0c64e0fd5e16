// The φ-accrual detector (contract in failure_detector.h). The history is a ring of inter-arrival
// times with exact integer running sums, so the mean and the variance cost O(1) per frame and per
// check, whatever the window.
#include <wheelbeat/core/duration_format.h>
#include <wheelbeat/core/option_error.h>
#include <wheelbeat/tasks/failure_detector.h>

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

namespace wheelbeat::tasks {
namespace {

using std::chrono::nanoseconds;

constexpr std::size_t kMaxWindow = 100000;

[[noreturn]] void reject(std::string field, std::string value, std::string expected) {
  throw core::OptionError("PhiOptions", std::move(field), std::move(value), std::move(expected));
}

double toMicros(nanoseconds d) noexcept { return static_cast<double>(d.count()) / 1000.0; }

// -log10 of the probability that a normal variable (mean, sigma) exceeds x, with the logistic
// approximation of the normal CDF that Akka uses: P(X > x) ~ 1 / (1 + exp(y (1.5976 + 0.070566
// y^2))), y = (x - mean) / sigma. Written with logarithms so that it never overflows to infinity.
double phiOf(double x, double mean, double sigma) noexcept {
  const double y = (x - mean) / sigma;
  const double exponent = y * (1.5976 + 0.070566 * y * y);
  // P = 1 / (1 + e^exponent); -log10 P = log10(1 + e^exponent) = softplus(exponent) / ln 10.
  const double softplus =
      exponent > 0 ? exponent + std::log1p(std::exp(-exponent)) : std::log1p(std::exp(exponent));
  return softplus / std::log(10.0);
}

}  // namespace

std::string_view detectorKindName(DetectorKind kind) noexcept {
  switch (kind) {
    case DetectorKind::Fixed: return "fixed";
    case DetectorKind::Phi: return "phi";
  }
  return "unknown";
}

void validate(const PhiOptions& o) {
  if (!(o.threshold > 0) || !std::isfinite(o.threshold)) {
    reject("threshold", fmt::format("{}", o.threshold), "> 0, finite");
  }
  if (o.minStdDeviation <= nanoseconds(0)) {
    reject("minStdDeviation", core::formatDurationExact(o.minStdDeviation), "> 0");
  }
  if (o.acceptablePause < nanoseconds(0)) {
    reject("acceptablePause", core::formatDurationExact(o.acceptablePause), ">= 0");
  }
  if (o.window < 1 || o.window > kMaxWindow) {
    reject("window", fmt::format("{}", o.window), fmt::format("1 .. {}", kMaxWindow));
  }
}

PhiAccrualDetector::PhiAccrualDetector(const PhiOptions& options, nanoseconds expectedInterval)
    : options_((validate(options), options)), expectedMicros_(toMicros(expectedInterval)) {
  if (expectedInterval <= nanoseconds(0)) {
    throw std::invalid_argument(
        fmt::format("PhiAccrualDetector: expectedInterval = {} (expected: > 0)",
                    core::formatDurationExact(expectedInterval)));
  }
  samples_.resize(options_.window);
}

void PhiAccrualDetector::heartbeat(nanoseconds now) noexcept {
  std::lock_guard lock(mutex_);
  if (last_ >= 0 && now.count() >= last_) {
    const std::int64_t micros = (now.count() - last_) / 1000;
    addSample(static_cast<std::uint32_t>(
        std::min<std::int64_t>(micros, std::numeric_limits<std::uint32_t>::max())));
  }
  last_ = now.count();
}

void PhiAccrualDetector::addSample(std::uint32_t micros) noexcept {
  if (count_ == samples_.size()) {  // full: the oldest leaves the sums
    const std::uint32_t old = samples_[next_];
    sum_ -= old;
    const std::uint64_t oldSquare = static_cast<std::uint64_t>(old) * old;  // exact in 64 bits
    sumSquares_ -= oldSquare;
  } else {
    ++count_;
  }
  samples_[next_] = micros;
  next_ = (next_ + 1) % samples_.size();
  sum_ += micros;
  const std::uint64_t square = static_cast<std::uint64_t>(micros) * micros;  // exact in 64 bits
  sumSquares_ += square;
}

void PhiAccrualDetector::reset() noexcept {
  std::lock_guard lock(mutex_);
  next_ = count_ = 0;
  sum_ = 0;
  sumSquares_ = 0;
  last_ = -1;
}

PhiAccrualDetector::Stats PhiAccrualDetector::stats() const noexcept {
  std::lock_guard lock(mutex_);
  if (count_ == 0) return {};
  const auto n = static_cast<double>(count_);
  const double mean = static_cast<double>(sum_) / n;
  const double variance = std::max(0.0, static_cast<double>(sumSquares_) / n - mean * mean);
  const auto ns = [](double micros) { return nanoseconds(std::llround(micros * 1000.0)); };
  return {count_, ns(mean), ns(std::sqrt(variance))};
}

double PhiAccrualDetector::phi(nanoseconds now) const noexcept {
  std::int64_t last = 0;
  {
    std::lock_guard lock(mutex_);
    last = last_;
  }
  if (last < 0) return 0.0;
  const Stats s = stats();
  // Fewer than two intervals say nothing of the spread: Akka's first estimate instead.
  double mean = expectedMicros_;
  double sigma = expectedMicros_ / 4;
  if (s.samples >= 2) {
    mean = std::max(toMicros(s.mean), expectedMicros_);
    sigma = toMicros(s.stdDev);
  }
  mean += toMicros(options_.acceptablePause);
  sigma = std::max(sigma, toMicros(options_.minStdDeviation));
  const double silence = static_cast<double>(now.count() - last) / 1000.0;
  return phiOf(silence, mean, sigma);
}

}  // namespace wheelbeat::tasks
