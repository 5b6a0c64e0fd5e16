// The φ-accrual failure detector (Hayashibara et al., "The φ Accrual Failure Detector", 2004), with
// Akka's defaults: instead of one fixed rule ("no frame for idleTimeout = dead"), a suspicion level
// φ that grows with the silence since the last inbound frame, measured against the distribution of
// the channel's own inter-arrival times (normal, with Akka's logistic approximation of its CDF):
//
//   φ(now) = -log10(P(the next frame arrives later than now))
//
// φ = 1 means a 10 % chance that a frame is still coming, φ = 8 (the threshold) 1e-8. A peer whose
// frames came every second with little jitter is suspected soon after a few seconds of silence; one
// whose timing always varied is given more time. Two guards keep it from suspecting a live peer:
//   - the mean is never below `expectedInterval` (the heartbeat interval: a peer that was busy,
//     with frames every millisecond, falls back to heartbeats when it goes quiet — that gap is the
//     protocol, not a failure), and `acceptablePause` is added to it (GC pauses, a loaded host);
//   - the standard deviation is never below `minStdDeviation`.
// Until the first frame the distribution is Akka's first estimate: mean = expectedInterval,
// σ = expectedInterval / 4.
//
// Threads: heartbeat() on one thread at a time (a channel's event loop), phi() / suspects() from
// any thread (the wheel's): a mutex guards the history (uncontended but for the rare check that
// meets a read).
#pragma once

#include <wheelbeat/core/cxx20.h>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <string_view>
#include <vector>

namespace wheelbeat::tasks {

// Which rule decides that a silent connection is dead (HeartbeatOptions::detector).
enum class DetectorKind {
  Fixed,  // Dubbo's: read idle >= idleTimeout (3 × heartbeat)
  Phi,    // φ-accrual: φ >= PhiOptions::threshold (idleTimeout stays a hard upper bound)
};

// "fixed" / "phi".
[[nodiscard]] std::string_view detectorKindName(DetectorKind kind) noexcept;

// Plain options (config/ parses JSON into this struct). Akka's defaults but for the pause: Akka's
// cluster allows 3 s at a 1 s heartbeat; 1 s is what benchmark D1 found to keep paused peers of
// up to 2.5 s alive at a 1 s heartbeat while still finding dead ones sooner than the fixed rule
// (with Akka's 0, φ closes paused peers many times as often: docs/performance.md, D1).
struct PhiOptions {
  double threshold = 8.0;  // > 0: suspect at φ >= threshold
  std::chrono::nanoseconds minStdDeviation = std::chrono::milliseconds(100);  // > 0
  std::chrono::nanoseconds acceptablePause = std::chrono::seconds(1);         // >= 0
  std::size_t window = 1000;  // inter-arrival samples kept, 1 .. 100000
};

// Throws std::invalid_argument naming the field, its value and the expectation, e.g.
// "PhiOptions.threshold = 0 (expected: > 0)".
void validate(const PhiOptions& options);

class PhiAccrualDetector {
public:
  // `expectedInterval` (> 0): the heartbeat interval. Throws std::invalid_argument for invalid
  // options. The history is reserved here (4 bytes a sample): no allocation per frame.
  PhiAccrualDetector(const PhiOptions& options, std::chrono::nanoseconds expectedInterval);

  // A frame arrived at `now` (the timer's clock). The first call only sets the start.
  void heartbeat(std::chrono::nanoseconds now) noexcept;
  // Forgets the history (a new connection): the next heartbeat() starts over.
  void reset() noexcept;

  // The suspicion level at `now`; 0 before the first heartbeat(). Saturates (no infinity).
  [[nodiscard]] double phi(std::chrono::nanoseconds now) const noexcept;
  [[nodiscard]] bool suspects(std::chrono::nanoseconds now) const noexcept {
    return phi(now) >= options_.threshold;
  }
  [[nodiscard]] const PhiOptions& options() const noexcept { return options_; }

  struct Stats {
    std::size_t samples = 0;
    std::chrono::nanoseconds mean{0};    // of the samples (before the guards)
    std::chrono::nanoseconds stdDev{0};  // of the samples (before the guards)
  };
  [[nodiscard]] Stats stats() const noexcept;

private:
  void addSample(std::uint32_t micros) noexcept;

  const PhiOptions options_;
  const double expectedMicros_;
  mutable std::mutex mutex_;
  std::vector<std::uint32_t> samples_;  // ring of inter-arrival times, µs (saturated at 71 min)
  std::size_t next_ = 0;                // ring position
  std::size_t count_ = 0;               // samples held (<= window)
  std::uint64_t sum_ = 0;               // of the samples held, µs
  __extension__ unsigned __int128 sumSquares_ = 0;  // µs², exact: no drift over years
  std::int64_t last_ = -1;                          // ns of the last heartbeat(); -1 = none yet
};

}  // namespace wheelbeat::tasks
