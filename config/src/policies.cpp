// Retry policies: the "retry" map of named policies, inline policy objects, references by name.
#include "sections.h"

#include <fmt/format.h>

#include <array>
#include <limits>
#include <stdexcept>

namespace wheelbeat::config::detail {
namespace {

using tasks::Backoff;
using tasks::Jitter;
using R = tasks::RetryOptions;

constexpr EnumCodec<Backoff, 2> kBackoff{{"fixed", "exponential"},
                                         {Backoff::Fixed, Backoff::Exponential}};
constexpr EnumCodec<Jitter, 5> kJitter{
    {"none", "full", "equal", "decorrelated", "proportional"},
    {Jitter::None, Jitter::Full, Jitter::Equal, Jitter::Decorrelated, Jitter::Proportional}};

constexpr Field<R> kPolicyFields[] = {
    field<R, &R::backoff, kBackoff>("backoff", "backoff",
                                    "fixed: initial_delay each time; exponential: initial_delay "
                                    "* multiplier^(n-1), capped at max_delay."),
    field<R, &R::initialDelay, kDuration>("initial_delay", "initialDelay",
                                          "Delay before the first retry, > 0."),
    field<R, &R::multiplier, kNumber>("multiplier", "multiplier",
                                      "Growth per retry (exponential backoff), >= 1."),
    field<R, &R::maxDelay, kDuration>("max_delay", "maxDelay",
                                      "Cap of every delay, >= initial_delay."),
    field<R, &R::jitter, kJitter>("jitter", "jitter",
                                  "Randomization of each delay (AWS 'Exponential Backoff and "
                                  "Jitter'; proportional: gRPC's +-jitter_ratio)."),
    field<R, &R::jitterRatio, kNumber>(
        "jitter_ratio", "jitterRatio",
        "Proportional jitter: delay * U[1 - ratio, 1 + ratio]; 0..1."),
    field<R, &R::maxAttempts, kInt64>("max_attempts", "maxAttempts",
                                      "Retries allowed: -1 forever, 0 none, n > 0 at most n."),
    field<R, &R::deadline, kDuration>("deadline", "deadline",
                                      "Overall time budget from the operation's start; 0 = none."),
    field<R, &R::retryOn, kErrorNames>(
        "retry_on", "retryOn",
        "Error names retried (exact match); empty = every error not in ignore."),
    field<R, &R::ignore, kErrorNames>("ignore", "ignore",
                                      "Error names never retried; wins over retry_on."),
};

}  // namespace

constexpr Section<R> kPolicySection{kPolicyFields, [](const R& o) { tasks::validate(o); },
                                    "max_delay >= initial_delay"};

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
      R policy;
      if (name.empty()) errors.add(at, item, "a non-empty policy name");
      kPolicySection.read(errors, item, at, policy, Context{});
      policies.byName.emplace(name, std::move(policy));
    }
  }
  policies.errors = errors.take();
  return policies;
}

bool PolicyCodec::read(Errors& e, const Json& v, const std::string& p, R& out,
                       const Context& c) const {
  if (v.is_object()) return kPolicySection.read(e, v, p, out, c);
  if (!v.is_string()) {
    e.add(p, v, "a retry policy object or the name of an entry of /retry");
    return false;
  }
  static const Policies kNone;
  const Policies& policies = c.policies != nullptr ? *c.policies : kNone;
  const auto it = policies.byName.find(v.get_ref<const std::string&>());
  if (it == policies.byName.end()) {
    e.add(p, v, knownNamesText(policies.byName));
    return false;
  }
  out = it->second;
  return true;
}

Json PolicyCodec::write(const R& v) const { return kPolicySection.write(v); }

bool PolicyCodec::same(const R& a, const R& b) const { return kPolicySection.same(a, b); }

void PolicyCodec::describe(KeyNode& node, const R& defaults) const {
  kPolicySection.describe(node, defaults);
  node.kind = KeyNode::Kind::Policy;
  node.type = "retry policy";
  node.rule =
      "a retry policy object (an inline object starts from the default shown) or the "
      "name of an entry of /retry";
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
