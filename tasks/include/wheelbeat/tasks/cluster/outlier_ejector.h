// OutlierEjector: which providers of a service a call should not go to now, decided from the
// outcomes of the calls sent to them (gRPC's outlier detection and Envoy's, with a true cap).
//
//   OutlierEjector ejector(options);
//   ejector.add(7, now);                       // a provider joined (any id the caller chooses)
//   ejector.onFailure(7, now);                 // an attempt to it failed (timeouts count)
//   ejector.onSuccess(7, now);                 // an attempt to it answered
//   ejector.onOutstanding(7, age, typical, now);  // a call to it still waits (may make it suspect)
//   ejector.evaluate(now);                     // every `interval`: percentages, returns, decay
//   if (ejector.available(7, now)) ...         // neither ejected nor suspect
//
// Three ways out of the rotation:
// - consecutive failures: the k-th failure in a row ejects (k = consecutiveFailures), at once;
// - failure percentage: at evaluate(), a provider with at least minimumVolume outcomes in the
//   interval and failures >= failurePercent % of them is ejected;
// - suspicion: a call to the provider has waited far beyond the provider's own latency
//   (age >= max(suspectFloor, suspectFactor x typical)): new calls avoid it before any deadline
//   expires. Its next answer clears the suspicion, a failure while suspect ejects it, and it
//   lapses after baseEjectionTime without either (the waiting call may have been abandoned).
// An ejection lasts baseEjectionTime x (the provider's ejections not yet decayed, the multiplier),
// at most maxEjectionTime; the multiplier decays by one at each evaluate() that finds the provider
// in and past its probation. A provider whose ejection ended is on probation for one
// baseEjectionTime: its first failure ejects it again. Outcomes of calls sent before an ejection
// that arrive during it count in the failure share but not in the streak.
//
// The cap is a true one: ejected + suspect providers never exceed floor(N x maxEjectionPercent /
// 100) of the N known, nor N - 1 unless allowEjectAll. A provider that would cross it stays in
// (and is counted in refusedByCap()); it is ejected at a later failure once there is room.
//
// Thread: not thread-safe; one owner calls it (the cluster client, on its loop). Times are the
// caller's clock (ns), non-decreasing. Ids are the caller's; unknown ids are ignored by the
// outcome calls and are not available().
#pragma once

#include <wheelbeat/core/cxx20.h>

#include <array>
#include <chrono>
#include <cstdint>
#include <string_view>
#include <unordered_map>

namespace wheelbeat::tasks::cluster {

// Plain options (config/ parses JSON into this struct). A threshold of 0 turns that way off.
struct OutlierOptions {
  // Failures in a row that eject (timeouts count). 0 = off; else 1..1000.
  std::uint32_t consecutiveFailures = 5;
  // Failure share (%) over an interval that ejects. 0 = off; else 1..100.
  std::uint32_t failurePercent = 0;
  // Outcomes an interval needs before its failure share counts. >= 1.
  std::uint32_t minimumVolume = 20;
  // How often evaluate() should run (the failure share's window). >= 1ms.
  std::chrono::nanoseconds interval = std::chrono::seconds(10);
  // First ejection's length; >= 1ms. Repeats multiply it, up to maxEjectionTime (>= base).
  std::chrono::nanoseconds baseEjectionTime = std::chrono::seconds(30);
  std::chrono::nanoseconds maxEjectionTime = std::chrono::seconds(300);
  // At most floor(N x maxEjectionPercent / 100) of N providers out at once. 0..100. Small
  // clusters are the common case here, hence 50 rather than gRPC's 10 (at 10 %, a service of
  // fewer than 10 providers could never eject one).
  std::uint32_t maxEjectionPercent = 50;
  // Whether the cap may take the last provider too (default: one always stays).
  bool allowEjectAll = false;
  // Suspicion: a call older than max(suspectFloor, suspectFactor x typical latency). 0 = off;
  // else 1..10^6. suspectFloor >= 0.
  double suspectFactor = 10;
  std::chrono::nanoseconds suspectFloor = std::chrono::milliseconds(20);
};

// Throws std::invalid_argument naming the field, its value and the expectation, e.g.
// "OutlierOptions.failurePercent = 101 (expected: 0 (off) or 1..100)".
void validate(const OutlierOptions& options);

enum class EjectReason : std::uint8_t { Consecutive, Percentage, Suspect };
// "consecutive", "percentage", "suspect" (the metrics' label values).
[[nodiscard]] std::string_view ejectReasonName(EjectReason reason) noexcept;

class OutlierEjector {
public:
  // Throws std::invalid_argument for invalid options (see validate()).
  explicit OutlierEjector(OutlierOptions options = {});

  // A provider joins (healthy) / leaves (its state is forgotten). add() of a known id changes
  // nothing.
  void add(std::uint64_t id, std::chrono::nanoseconds now);
  void remove(std::uint64_t id);

  // An attempt's outcome. A success clears suspicion and the failure streak.
  void onSuccess(std::uint64_t id, std::chrono::nanoseconds now);
  void onFailure(std::uint64_t id, std::chrono::nanoseconds now);
  // The oldest call to `id` has waited `age`; `typical` is the provider's latency estimate (0:
  // none yet, then only suspectFloor counts). Returns true if this made the provider suspect.
  bool onOutstanding(std::uint64_t id, std::chrono::nanoseconds age,
                     std::chrono::nanoseconds typical, std::chrono::nanoseconds now);
  // The interval's work: ends the ejections due, ejects by failure share, decays multipliers,
  // starts a new interval.
  void evaluate(std::chrono::nanoseconds now);

  // Known, not ejected at `now`, not suspect.
  [[nodiscard]] bool available(std::uint64_t id, std::chrono::nanoseconds now) const;
  [[nodiscard]] bool ejected(std::uint64_t id, std::chrono::nanoseconds now) const;
  [[nodiscard]] bool suspect(std::uint64_t id, std::chrono::nanoseconds now) const;
  // Providers out now (ejected at `now` or suspect), and the cap for the providers known now.
  [[nodiscard]] std::size_t outCount(std::chrono::nanoseconds now) const;
  [[nodiscard]] std::size_t cap() const noexcept;
  [[nodiscard]] std::size_t size() const noexcept { return providers_.size(); }

  // Since construction.
  [[nodiscard]] std::uint64_t ejections(EjectReason reason) const noexcept {
    return ejections_[static_cast<std::size_t>(reason)];
  }
  [[nodiscard]] std::uint64_t refusedByCap() const noexcept { return refusedByCap_; }
  [[nodiscard]] const OutlierOptions& options() const noexcept { return options_; }

private:
  struct Provider {
    std::uint32_t streak = 0;                    // failures in a row
    std::uint32_t calls = 0;                     // outcomes in the current interval
    std::uint32_t failures = 0;                  // failures among them
    std::uint32_t multiplier = 0;                // ejections not yet decayed
    std::chrono::nanoseconds suspectUntil{0};    // > now: suspect
    std::chrono::nanoseconds ejectedUntil{0};    // > now: ejected
    std::chrono::nanoseconds probationUntil{0};  // ejectedUntil + baseEjectionTime

    [[nodiscard]] bool out(std::chrono::nanoseconds now) const noexcept {
      return suspectUntil > now || ejectedUntil > now;
    }
  };

  // Ejects `p` if the cap allows (a suspect holds its place already); true if it did.
  bool eject(Provider& p, EjectReason reason, std::chrono::nanoseconds now);
  [[nodiscard]] bool roomForOneMore(std::chrono::nanoseconds now) const;

  OutlierOptions options_;
  std::unordered_map<std::uint64_t, Provider> providers_;
  std::array<std::uint64_t, 3> ejections_{};
  std::uint64_t refusedByCap_ = 0;
};

}  // namespace wheelbeat::tasks::cluster
