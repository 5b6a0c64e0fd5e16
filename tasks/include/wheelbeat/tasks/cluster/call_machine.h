// CallMachine: the fate of one call over a set of providers — Dubbo's cluster modes, attempts
// within one deadline, hedging — as a state machine with no socket and no clock of its own.
//
// The owner (the cluster client) feeds it events and carries out the Step each returns:
//
//   CallMachine call(policy);
//   Step s = call.start(context, now);          // sends the first attempt(s)
//   ... for each s.sends: send attempt a.index to a.provider with timeout a.timeout ...
//   ... arm a wake-up at s.wakeAt (if set), call onWake() then ...
//   s = call.onAnswer(context, attemptIndex, outcome, now);   // an attempt's answer
//   s = call.onWake(context, now);                            // the wake-up came
//   if (s.result) ... the call is over: s.result is its one outcome ...
//
// Modes (Dubbo's names and meaning):
//   failover   the default: an attempt that fails with a retryable error (retryable() below:
//              timeout, disconnected, read-idle, overloaded, no-endpoint) is retried on another
//              provider, up to `retries` times; an application's error is never retried.
//   failfast   one attempt; its outcome is the call's.
//   failsafe   one attempt; a failure completes the call as an empty success (result.failsafe).
//   failback   one attempt; a failure completes the call as an empty success handed to failback
//              (result.failback: the owner gives it to a FailbackInvoker).
//   forking    `forks` attempts at once on distinct providers; the first success wins; failed
//              when all failed.
//   broadcast  one attempt on every provider; ok when all succeeded, else the first failure.
// Hedging (failover and failfast): when the call has waited the context's hedgeDelay() with no
// answer, one more attempt goes to a provider not tried yet; the first success wins. Retries and
// hedges are extra attempts: each needs the context's allowExtra() (the shared budget and the
// load cap); without it, it is not sent.
//
// Suspicion (failover): when the provider of the call's only attempt in flight becomes suspect
// (its calls wait far longer than its latency: a hung or stopped process), onSuspect() sends a
// retry to another provider at once, without waiting for a deadline or a hedge delay. The
// suspected attempt stays in flight: the first success of the two wins. The retry counts
// against `retries` and needs allowExtra(Retry), like any retry.
//
// Time: `deadline` bounds the whole call: at it, the call ends with "timeout" whatever is in
// flight. Each attempt carries the time left, at most `attemptTimeout` (0: the time left). When
// the call ends, attempts still in flight are *dropped*: their answers, if they come, are late
// (Step::late) and change nothing. The call's result is given exactly once.
//
// Thread: one owner at a time (the cluster client's loop). Not thread-safe.
#pragma once

#include <wheelbeat/core/cxx20.h>

#include <chrono>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace wheelbeat::tasks::cluster {

enum class Mode : std::uint8_t { Failover, Failfast, Failsafe, Failback, Forking, Broadcast };
// "failover", "failfast", "failsafe", "failback", "forking", "broadcast" (Dubbo's words).
[[nodiscard]] std::string_view modeName(Mode mode) noexcept;

enum class AttemptKind : std::uint8_t { First, Retry, Hedge };
// "first", "retry", "hedge" (the metrics' label values).
[[nodiscard]] std::string_view attemptKindName(AttemptKind kind) noexcept;

// Whether failover retries an error name (tasks/error_names.h): timeout, disconnected,
// read-idle, overloaded, no-endpoint.
[[nodiscard]] bool retryable(std::string_view error) noexcept;

// What one call does (the cluster client derives it from its options and the call's own).
struct CallPolicy {
  Mode mode = Mode::Failover;
  std::uint32_t retries = 2;  // failover: extra attempts after the first (Dubbo's retries=2)
  std::uint32_t forks = 2;    // forking: attempts at once, >= 1
  std::chrono::nanoseconds deadline = std::chrono::seconds(1);  // the whole call, > 0
  std::chrono::nanoseconds attemptTimeout{0};                   // 0: the time left
  bool hedge = false;                                           // failover and failfast only
};

// Throws std::invalid_argument naming the field, its value and the expectation.
void validate(const CallPolicy& policy);

// What the machine needs from its owner, asked during start(), onAnswer() and onWake().
class CallContext {
public:
  virtual ~CallContext() = default;
  // A provider for the next attempt, not in `exclude` if any other is available; nullopt when
  // there is none at all.
  virtual std::optional<std::uint64_t> pick(std::span<const std::uint64_t> exclude,
                                            std::chrono::nanoseconds now) = 0;
  // Every provider a broadcast or fork may use now (distinct ids).
  virtual std::vector<std::uint64_t> everyone(std::chrono::nanoseconds now) = 0;
  // May one more attempt of this kind (Retry or Hedge) go now? True spends it (budget, cap).
  virtual bool allowExtra(AttemptKind kind, std::chrono::nanoseconds now) = 0;
  // How long a call waits for an answer before it is hedged; nullopt: not now.
  virtual std::optional<std::chrono::nanoseconds> hedgeDelay(std::chrono::nanoseconds now) = 0;
};

// An attempt to send: index (0, 1, ... in the order sent), provider, timeout (> 0), kind.
struct Attempt {
  std::uint32_t index = 0;
  std::uint64_t provider = 0;
  std::chrono::nanoseconds timeout{0};
  AttemptKind kind = AttemptKind::First;
};

// An attempt's answer: ok, or the error's name (error_names.h).
struct AttemptOutcome {
  bool ok = false;
  std::string error;  // empty when ok
};

// The call's one outcome.
struct CallResult {
  bool ok = false;
  std::string error;                      // empty when ok
  std::optional<std::uint64_t> provider;  // whose answer decided it (none: no attempt decided)
  std::optional<std::uint32_t> attempt;   // that answer's attempt index
  std::uint32_t attempts = 0;             // attempts sent
  bool hedgeWon = false;                  // the deciding answer came from a hedge
  bool failsafe = false;                  // failsafe: a failure turned into an empty success
  bool failback = false;                  // failback: a failure handed to the failback invoker
  std::chrono::nanoseconds latency{0};    // start to outcome
};

struct Step {
  std::vector<Attempt> sends;
  std::optional<CallResult> result;                // set once, in the step that ends the call
  std::optional<std::chrono::nanoseconds> wakeAt;  // call onWake() then (replaces the last one)
  std::vector<std::uint32_t> dropped;              // attempts in flight when the call ended
  bool late = false;  // onAnswer() for an attempt already dropped or done
};

class CallMachine {
public:
  // Throws std::invalid_argument for an invalid policy (see validate()).
  explicit CallMachine(CallPolicy policy);

  // Sends the first attempt(s) (none available: ends at once with "no-endpoint"). Once only
  // (std::logic_error otherwise).
  Step start(CallContext& context, std::chrono::nanoseconds now);
  // Attempt `index`'s answer. An index never sent throws std::invalid_argument; a second answer
  // for the same attempt, or one after the call ended, is late.
  Step onAnswer(CallContext& context, std::uint32_t index, const AttemptOutcome& outcome,
                std::chrono::nanoseconds now);
  // The wake-up the last step asked for (an earlier or extra call does no harm).
  Step onWake(CallContext& context, std::chrono::nanoseconds now);
  // Attempt `index`'s provider became suspect (see Suspicion above). Sends nothing unless the mode
  // is failover, the attempt is in flight and alone, was not suspected before, and a retry is
  // left and allowed; then one Retry to a provider not tried yet. An index never sent throws
  // std::invalid_argument.
  Step onSuspect(CallContext& context, std::uint32_t index, std::chrono::nanoseconds now);

  [[nodiscard]] bool finished() const noexcept { return finished_; }
  [[nodiscard]] const CallPolicy& policy() const noexcept { return policy_; }
  [[nodiscard]] std::size_t inFlight() const noexcept;

private:
  enum class State : std::uint8_t { InFlight, Answered, Dropped };
  struct Sent {
    std::uint64_t provider = 0;
    AttemptKind kind = AttemptKind::First;
    State state = State::InFlight;
    bool suspected = false;  // onSuspect() acted on it once already
  };

  std::optional<Attempt> newAttempt(CallContext& context, AttemptKind kind,
                                    std::chrono::nanoseconds now, bool suspectRetry = false);
  Attempt record(std::uint64_t provider, AttemptKind kind, std::chrono::nanoseconds now);
  void finish(Step& step, CallResult result, std::chrono::nanoseconds now);
  CallResult decided(std::uint32_t index, bool ok, std::string error) const;
  void afterFailure(CallContext& context, Step& step, std::uint32_t index,
                    const AttemptOutcome& outcome, std::chrono::nanoseconds now);
  // Ends the call after a failure (index: the deciding attempt, if one): failed, or an empty
  // success in failsafe / failback.
  void endFailed(Step& step, std::optional<std::uint32_t> index, const std::string& error,
                 std::chrono::nanoseconds now);
  void setWake(Step& step, CallContext& context, std::chrono::nanoseconds now);
  [[nodiscard]] std::vector<std::uint64_t> tried() const;

  CallPolicy policy_;
  std::vector<Sent> sent_;
  std::chrono::nanoseconds started_{0};
  std::chrono::nanoseconds lastSendAt_{
      0};  // the newest attempt's send (hedge delays count from it)
  std::uint32_t retries_ = 0;
  bool hedged_ = false;  // one hedge per call
  bool begun_ = false;
  bool finished_ = false;
  std::optional<std::pair<std::uint32_t, std::string>> firstFailure_;  // broadcast
};

}  // namespace wheelbeat::tasks::cluster
