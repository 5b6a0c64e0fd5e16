// Sections owned by tasks/: "heartbeat" (heartbeat, idle, close, reconnect, failure detector) and
// "failback".
#include "sections.h"
#include "values.h"

#include <fmt/format.h>

#include <array>
#include <limits>

namespace wheelbeat::config::detail {
namespace {

using tasks::DetectorKind;
using tasks::FailbackOptions;
using tasks::HeartbeatOptions;
using tasks::PhiOptions;

// tasks/ accepts any finite threshold > 0 (JSON has no NaN or infinity).
constexpr double kMinThreshold = std::numeric_limits<double>::denorm_min();
constexpr double kMaxDouble = std::numeric_limits<double>::max();
constexpr std::uint64_t kMaxWindow = 100000;  // PhiOptions::window's limit (failure_detector.cpp)

using PhiField = Field<PhiOptions>;
constexpr std::array<PhiField, 4> kPhiFields{{
    {"threshold",
     [](Errors& e, const Json& v, const std::string& p, PhiOptions& o) {
       return readNumber(e, v, p, o.threshold, kMinThreshold, kMaxDouble, "a number > 0");
     }},
    {"min_std_deviation",
     [](Errors& e, const Json& v, const std::string& p, PhiOptions& o) {
       return readPositiveDuration(e, v, p, o.minStdDeviation);
     }},
    {"acceptable_pause", [](Errors& e, const Json& v, const std::string& p,
                            PhiOptions& o) { return readDuration(e, v, p, o.acceptablePause); }},
    {"window",
     [](Errors& e, const Json& v, const std::string& p, PhiOptions& o) {
       return readSize(e, v, p, o.window, 1, kMaxWindow, "an integer in 1..100000");
     }},
}};

std::vector<KeyInfo> phiKeys() { return keyInfos<PhiOptions>(kPhiFields); }

bool readPhi(Errors& errors, const Json& value, const std::string& pointer, PhiOptions& out) {
  const std::size_t before = errors.size();
  Seen seen;
  readObject<PhiOptions>(errors, value, pointer, kPhiFields, out, seen);
  return errors.size() == before;
}

bool readDetector(Errors& errors, const Json& value, const std::string& pointer,
                  DetectorKind& out) {
  std::size_t i = 0;
  if (!readEnum(errors, value, pointer, i, {"fixed", "phi"})) return false;
  out = i == 0 ? DetectorKind::Fixed : DetectorKind::Phi;
  return true;
}

using HeartbeatField = Field<In<HeartbeatOptions>>;
constexpr std::array<HeartbeatField, 8> kHeartbeatFields{{
    {"interval",
     [](Errors& e, const Json& v, const std::string& p, In<HeartbeatOptions>& t) {
       return readPositiveDuration(e, v, p, t.out.interval);
     }},
    {"idle_timeout",
     [](Errors& e, const Json& v, const std::string& p, In<HeartbeatOptions>& t) {
       return readDuration(e, v, p, t.out.idleTimeout);
     }},
    {"close_timeout",
     [](Errors& e, const Json& v, const std::string& p, In<HeartbeatOptions>& t) {
       return readDuration(e, v, p, t.out.closeTimeout);
     }},
    {"reconnect",
     [](Errors& e, const Json& v, const std::string& p, In<HeartbeatOptions>& t) {
       return readPolicyValue(e, v, p, t.policies, t.out.reconnect);
     },
     &policyKeys},
    {"seed",
     [](Errors& e, const Json& v, const std::string& p, In<HeartbeatOptions>& t) {
       return readUnsigned(e, v, p, t.out.seed, 0, std::numeric_limits<std::uint64_t>::max(),
                           "an integer in 0..18446744073709551615 (0: a random seed per task)");
     }},
    {"detector", [](Errors& e, const Json& v, const std::string& p,
                    In<HeartbeatOptions>& t) { return readDetector(e, v, p, t.out.detector); }},
    {"phi",
     [](Errors& e, const Json& v, const std::string& p, In<HeartbeatOptions>& t) {
       return readPhi(e, v, p, t.out.phi);
     },
     &phiKeys},
    {"spread_first", [](Errors& e, const Json& v, const std::string& p,
                        In<HeartbeatOptions>& t) { return readBool(e, v, p, t.out.spreadFirst); }},
}};

// 2 × d, saturating (as tasks::validate() computes it).
nanoseconds twice(nanoseconds d) {
  std::int64_t out = 0;
  if (__builtin_mul_overflow(d.count(), 2, &out)) return nanoseconds::max();
  return nanoseconds(out);
}

using FailbackField = Field<In<FailbackOptions>>;
constexpr std::array<FailbackField, 4> kFailbackFields{{
    {"check", [](Errors& e, const Json& v, const std::string& p,
                 In<FailbackOptions>& t) { return readBool(e, v, p, t.out.check); }},
    {"registry_retry",
     [](Errors& e, const Json& v, const std::string& p, In<FailbackOptions>& t) {
       return readPolicyValue(e, v, p, t.policies, t.out.registryRetry);
     },
     &policyKeys},
    {"invocation_retry",
     [](Errors& e, const Json& v, const std::string& p, In<FailbackOptions>& t) {
       return readPolicyValue(e, v, p, t.policies, t.out.invocationRetry);
     },
     &policyKeys},
    {"max_pending_retries",
     [](Errors& e, const Json& v, const std::string& p, In<FailbackOptions>& t) {
       return readInt(e, v, p, t.out.maxPendingRetries, 1, std::numeric_limits<std::int64_t>::max(),
                      "an integer >= 1");
     }},
}};

}  // namespace

bool readHeartbeat(Errors& errors, const Json& value, const std::string& pointer,
                   In<HeartbeatOptions> in) {
  const std::size_t before = errors.size();
  Seen seen;
  if (!readObject<In<HeartbeatOptions>>(errors, value, pointer, kHeartbeatFields, in, seen)) {
    return false;
  }
  const HeartbeatOptions& o = in.out;
  // 0 means 3 × interval; otherwise one heartbeat and its answer must fit in before it.
  if (o.idleTimeout != nanoseconds(0) && o.idleTimeout < twice(o.interval)) {
    blame(errors, pointer, seen,
          {"idle_timeout",
           fmt::format("0 or >= 2 * interval = {}", formatDuration(twice(o.interval)))},
          {"interval", fmt::format("<= idle_timeout / 2 = {}", formatDuration(o.idleTimeout / 2))});
  }
  return errors.size() == before;
}

bool readFailback(Errors& errors, const Json& value, const std::string& pointer,
                  In<FailbackOptions> in) {
  const std::size_t before = errors.size();
  Seen seen;
  readObject<In<FailbackOptions>>(errors, value, pointer, kFailbackFields, in, seen);
  return errors.size() == before;
}

std::vector<KeyInfo> heartbeatKeys() { return keyInfos<In<HeartbeatOptions>>(kHeartbeatFields); }
std::vector<KeyInfo> failbackKeys() { return keyInfos<In<FailbackOptions>>(kFailbackFields); }

}  // namespace wheelbeat::config::detail
