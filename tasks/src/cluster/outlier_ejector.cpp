#include <wheelbeat/core/duration_format.h>
#include <wheelbeat/tasks/cluster/outlier_ejector.h>

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace wheelbeat::tasks::cluster {
namespace {

using std::chrono::nanoseconds;

void require(bool ok, std::string_view field, const std::string& value, std::string_view expected) {
  if (!ok) {
    throw std::invalid_argument(
        fmt::format("OutlierOptions.{} = {} (expected: {})", field, value, expected));
  }
}

std::string text(nanoseconds d) { return core::formatDurationExact(d); }

}  // namespace

void validate(const OutlierOptions& o) {
  require(o.consecutiveFailures <= 1000, "consecutiveFailures",
          std::to_string(o.consecutiveFailures), "0 (off) or 1..1000");
  require(o.failurePercent <= 100, "failurePercent", std::to_string(o.failurePercent),
          "0 (off) or 1..100");
  require(o.minimumVolume >= 1, "minimumVolume", std::to_string(o.minimumVolume), ">= 1");
  require(o.interval >= std::chrono::milliseconds(1), "interval", text(o.interval), ">= 1ms");
  require(o.baseEjectionTime >= std::chrono::milliseconds(1), "baseEjectionTime",
          text(o.baseEjectionTime), ">= 1ms");
  require(o.maxEjectionTime >= o.baseEjectionTime, "maxEjectionTime", text(o.maxEjectionTime),
          fmt::format(">= baseEjectionTime = {}", text(o.baseEjectionTime)));
  require(o.maxEjectionPercent <= 100, "maxEjectionPercent", std::to_string(o.maxEjectionPercent),
          "0..100");
  require(o.suspectFactor == 0 || (o.suspectFactor >= 1 && o.suspectFactor <= 1e6), "suspectFactor",
          fmt::format("{}", o.suspectFactor), "0 (off) or 1..1000000");
  require(o.suspectFloor >= nanoseconds(0), "suspectFloor", text(o.suspectFloor), ">= 0");
}

std::string_view ejectReasonName(EjectReason reason) noexcept {
  switch (reason) {
    case EjectReason::Consecutive: return "consecutive";
    case EjectReason::Percentage: return "percentage";
    case EjectReason::Suspect: return "suspect";
  }
  return "unknown";
}

OutlierEjector::OutlierEjector(OutlierOptions options) : options_(options) { validate(options_); }

void OutlierEjector::add(std::uint64_t id, nanoseconds /*now*/) { providers_.try_emplace(id); }

void OutlierEjector::remove(std::uint64_t id) { providers_.erase(id); }

void OutlierEjector::onSuccess(std::uint64_t id, nanoseconds /*now*/) {
  const auto it = providers_.find(id);
  if (it == providers_.end()) return;
  Provider& p = it->second;
  p.streak = 0;
  p.suspectUntil = nanoseconds(0);
  ++p.calls;
}

void OutlierEjector::onFailure(std::uint64_t id, nanoseconds now) {
  const auto it = providers_.find(id);
  if (it == providers_.end()) return;
  Provider& p = it->second;
  ++p.calls;
  ++p.failures;
  if (p.ejectedUntil > now) return;  // a call sent before the ejection
  ++p.streak;
  const bool streakDone =
      options_.consecutiveFailures > 0 && p.streak >= options_.consecutiveFailures;
  if (streakDone || now < p.probationUntil) {
    (void)eject(p, EjectReason::Consecutive, now);
  } else if (p.suspectUntil > now) {
    (void)eject(p, EjectReason::Suspect, now);
  }
}

bool OutlierEjector::onOutstanding(std::uint64_t id, nanoseconds age, nanoseconds typical,
                                   nanoseconds now) {
  if (options_.suspectFactor == 0) return false;
  const auto it = providers_.find(id);
  if (it == providers_.end() || it->second.out(now)) return false;
  const double scaled =
      std::min(static_cast<double>(typical.count()) * options_.suspectFactor, 9e18);
  if (age < std::max(options_.suspectFloor, nanoseconds(static_cast<std::int64_t>(scaled)))) {
    return false;
  }
  if (!roomForOneMore(now)) {
    ++refusedByCap_;
    return false;
  }
  it->second.suspectUntil = now + options_.baseEjectionTime;
  ++ejections_[static_cast<std::size_t>(EjectReason::Suspect)];
  return true;
}

void OutlierEjector::evaluate(nanoseconds now) {
  for (auto& [id, p] : providers_) {
    if (!p.out(now) && now >= p.probationUntil && p.multiplier > 0) --p.multiplier;
  }
  if (options_.failurePercent > 0) {
    for (auto& [id, p] : providers_) {
      if (p.ejectedUntil > now || p.calls < options_.minimumVolume) continue;
      if (std::uint64_t{p.failures} * 100 >= std::uint64_t{options_.failurePercent} * p.calls) {
        (void)eject(p, EjectReason::Percentage, now);
      }
    }
  }
  for (auto& [id, p] : providers_) p.calls = p.failures = 0;
}

bool OutlierEjector::eject(Provider& p, EjectReason reason, nanoseconds now) {
  const bool holdsPlace = p.suspectUntil > now;  // counted when it became suspect
  if (!holdsPlace && !roomForOneMore(now)) {
    ++refusedByCap_;
    return false;
  }
  ++p.multiplier;
  const double length = static_cast<double>(options_.baseEjectionTime.count()) * p.multiplier;
  p.ejectedUntil = now + std::min(options_.maxEjectionTime,
                                  nanoseconds(static_cast<std::int64_t>(std::min(length, 9e18))));
  p.probationUntil = p.ejectedUntil + options_.baseEjectionTime;
  p.suspectUntil = nanoseconds(0);
  p.streak = 0;
  if (!holdsPlace) ++ejections_[static_cast<std::size_t>(reason)];
  return true;
}

std::size_t OutlierEjector::cap() const noexcept {
  const std::size_t n = providers_.size();
  const std::size_t byPercent = n * options_.maxEjectionPercent / 100;
  return options_.allowEjectAll || n == 0 ? byPercent : std::min(byPercent, n - 1);
}

bool OutlierEjector::roomForOneMore(nanoseconds now) const { return outCount(now) < cap(); }

std::size_t OutlierEjector::outCount(nanoseconds now) const {
  return static_cast<std::size_t>(std::count_if(providers_.begin(), providers_.end(),
                                                [&](const auto& e) { return e.second.out(now); }));
}

bool OutlierEjector::available(std::uint64_t id, nanoseconds now) const {
  const auto it = providers_.find(id);
  return it != providers_.end() && !it->second.out(now);
}

bool OutlierEjector::ejected(std::uint64_t id, nanoseconds now) const {
  const auto it = providers_.find(id);
  return it != providers_.end() && it->second.ejectedUntil > now;
}

bool OutlierEjector::suspect(std::uint64_t id, nanoseconds now) const {
  const auto it = providers_.find(id);
  return it != providers_.end() && it->second.suspectUntil > now;
}

}  // namespace wheelbeat::tasks::cluster
