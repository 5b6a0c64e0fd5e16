// Retry policies: the "retry" map of named policies, inline policy objects, references by name.
#include "sections.h"
#include "values.h"

#include <wheelbeat/tasks/error_names.h>

#include <fmt/format.h>

#include <array>
#include <limits>
#include <stdexcept>

namespace wheelbeat::config::detail {
namespace {

using tasks::Backoff;
using tasks::Jitter;
using tasks::RetryOptions;

// The shared vocabulary (tasks/error_names.h): a name outside it would never match anything.
std::string knownErrorNamesText() {
  std::vector<std::string> quoted;
  quoted.reserve(tasks::errors::kAll.size());
  for (std::string_view name : tasks::errors::kAll) quoted.push_back(dumped(Json(name)));
  return fmt::format("an error name: one of {}", fmt::join(quoted, ", "));
}

bool readNames(Errors& errors, const Json& value, const std::string& pointer,
               std::vector<std::string>& out) {
  if (!value.is_array()) {
    errors.add(pointer, value, "an array of error names");
    return false;
  }
  std::vector<std::string> names;
  bool ok = true;
  for (std::size_t i = 0; i < value.size(); ++i) {
    const Json& item = value[i];
    if (!item.is_string() || !tasks::errors::isKnown(item.get_ref<const std::string&>())) {
      errors.add(childPointer(pointer, i), item, knownErrorNamesText());
      ok = false;
    } else {
      names.push_back(item.get<std::string>());
    }
  }
  if (ok) out = std::move(names);
  return ok;
}

bool readBackoff(Errors& errors, const Json& value, const std::string& pointer, RetryOptions& o) {
  std::size_t i = 0;
  if (!readEnum(errors, value, pointer, i, {"fixed", "exponential"})) return false;
  o.backoff = i == 0 ? Backoff::Fixed : Backoff::Exponential;
  return true;
}

bool readJitter(Errors& errors, const Json& value, const std::string& pointer, RetryOptions& o) {
  std::size_t i = 0;
  if (!readEnum(errors, value, pointer, i,
                {"none", "full", "equal", "decorrelated", "proportional"})) {
    return false;
  }
  constexpr std::array kJitters{Jitter::None, Jitter::Full, Jitter::Equal, Jitter::Decorrelated,
                                Jitter::Proportional};
  o.jitter = kJitters.at(i);
  return true;
}

constexpr double kMaxDouble = std::numeric_limits<double>::max();
constexpr std::int64_t kMaxInt = std::numeric_limits<std::int64_t>::max();

using F = Field<RetryOptions>;
constexpr std::array<F, 10> kPolicyFields{{
    {"backoff", &readBackoff},
    {"initial_delay",
     [](Errors& e, const Json& v, const std::string& p, RetryOptions& o) {
       return readPositiveDuration(e, v, p, o.initialDelay);
     }},
    {"multiplier",
     [](Errors& e, const Json& v, const std::string& p, RetryOptions& o) {
       return readNumber(e, v, p, o.multiplier, 1.0, kMaxDouble, "a number >= 1");
     }},
    {"max_delay", [](Errors& e, const Json& v, const std::string& p,
                     RetryOptions& o) { return readDuration(e, v, p, o.maxDelay); }},
    {"jitter", &readJitter},
    {"jitter_ratio",
     [](Errors& e, const Json& v, const std::string& p, RetryOptions& o) {
       return readNumber(e, v, p, o.jitterRatio, 0.0, 1.0, "a number in 0..1");
     }},
    {"max_attempts",
     [](Errors& e, const Json& v, const std::string& p, RetryOptions& o) {
       return readInt(e, v, p, o.maxAttempts, -1, kMaxInt,
                      "an integer: -1 (forever), 0 (no retry) or a maximum > 0");
     }},
    {"deadline", [](Errors& e, const Json& v, const std::string& p,
                    RetryOptions& o) { return readDuration(e, v, p, o.deadline); }},
    {"retry_on", [](Errors& e, const Json& v, const std::string& p,
                    RetryOptions& o) { return readNames(e, v, p, o.retryOn); }},
    {"ignore", [](Errors& e, const Json& v, const std::string& p,
                  RetryOptions& o) { return readNames(e, v, p, o.ignore); }},
}};

// An inline policy object on top of `out`.
bool readPolicyObject(Errors& errors, const Json& value, const std::string& pointer,
                      RetryOptions& out) {
  const std::size_t before = errors.size();
  Seen seen;
  if (!readObject<RetryOptions>(errors, value, pointer, kPolicyFields, out, seen)) return false;
  if (out.maxDelay < out.initialDelay) {
    blame(errors, pointer, seen,
          {"max_delay", fmt::format(">= initial_delay = {}", formatDuration(out.initialDelay))},
          {"initial_delay", fmt::format("<= max_delay = {}", formatDuration(out.maxDelay))});
  }
  return errors.size() == before;
}

}  // namespace

std::string knownNamesText(const RetryPolicies& policies) {
  if (policies.empty()) return "the name of an entry of /retry (there is none)";
  std::vector<std::string> names;
  for (const auto& [name, policy] : policies) names.push_back(dumped(Json(name)));
  return fmt::format("the name of an entry of /retry: {}", fmt::join(names, ", "));
}

Policies readPolicies(const Json& section, const std::string& pointer) {
  Policies policies;
  Errors errors;
  if (!section.is_object()) {
    errors.add(pointer, section, "an object of named retry policies");
  } else {
    for (const auto& [name, item] : section.items()) {
      const std::string at = childPointer(pointer, name);
      RetryOptions policy;
      if (name.empty()) errors.add(at, item, "a non-empty policy name");
      readPolicyObject(errors, item, at, policy);
      policies.byName.emplace(name, std::move(policy));
    }
  }
  policies.errors = errors.take();
  return policies;
}

bool readPolicyValue(Errors& errors, const Json& value, const std::string& pointer,
                     const Policies& policies, RetryOptions& out) {
  if (value.is_object()) return readPolicyObject(errors, value, pointer, out);
  if (!value.is_string()) {
    errors.add(pointer, value, "a retry policy object or the name of an entry of /retry");
    return false;
  }
  const auto it = policies.byName.find(value.get_ref<const std::string&>());
  if (it == policies.byName.end()) {
    errors.add(pointer, value, knownNamesText(policies.byName));
    return false;
  }
  out = it->second;
  return true;
}

}  // namespace wheelbeat::config::detail

namespace wheelbeat::config {

const tasks::RetryOptions& RetryPolicies::operator()(std::string_view name) const {
  const auto it = find(std::string(name));
  if (it == end()) {
    throw std::out_of_range(fmt::format("retry policy {} not found (expected: {})",
                                        detail::dumped(detail::Json(name)),
                                        detail::knownNamesText(*this)));
  }
  return it->second;
}

}  // namespace wheelbeat::config

namespace wheelbeat::config::detail {

std::vector<KeyInfo> policyKeys() { return keyInfos<RetryOptions>(kPolicyFields); }

std::vector<KeyInfo> retryMapKeys() { return {{"*", &policyKeys}}; }

}  // namespace wheelbeat::config::detail
