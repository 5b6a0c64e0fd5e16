// Option validation: the exact message (field, value, expectation) for each bad option set, from
// validate() and from the constructors, and the valid edge values.
#include "support.h"

#include <doctest/doctest.h>

#include <cmath>
#include <functional>
#include <limits>
#include <stdexcept>
#include <string>

using namespace wbtest;

namespace {

std::string retryError(const std::function<void(RetryOptions&)>& change) {
  RetryOptions o;
  change(o);
  const std::string fromValidate = errorOf([&o] { wheelbeat::tasks::validate(o); });
  // The constructor validates the same way.
  CHECK(errorOf([&o] { RetryState state(o, kStart, 1); }) == fromValidate);
  return fromValidate;
}

std::string budgetError(const std::function<void(RetryBudgetOptions&)>& change) {
  RetryBudgetOptions o;
  change(o);
  const std::string fromValidate = errorOf([&o] { wheelbeat::tasks::validate(o); });
  CHECK(errorOf([&o] { RetryBudget budget(o); }) == fromValidate);
  return fromValidate;
}

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

}  // namespace

TEST_SUITE("tasks") {

TEST_CASE("initialDelay must be positive") {
  CHECK(retryError([](RetryOptions& o) { o.initialDelay = 0ns; }) ==
        "RetryOptions.initialDelay = 0s (expected: > 0)");
  CHECK(retryError([](RetryOptions& o) { o.initialDelay = -5ms; }) ==
        "RetryOptions.initialDelay = -5ms (expected: > 0)");
}

TEST_CASE("multiplier must be finite and at least 1") {
  CHECK(retryError([](RetryOptions& o) { o.multiplier = 0.5; }) ==
        "RetryOptions.multiplier = 0.5 (expected: >= 1)");
  CHECK(retryError([](RetryOptions& o) { o.multiplier = kNaN; }) ==
        "RetryOptions.multiplier = nan (expected: >= 1)");
  CHECK(retryError([](RetryOptions& o) { o.multiplier = kInf; }) ==
        "RetryOptions.multiplier = inf (expected: finite)");
}

TEST_CASE("maxDelay must not be below initialDelay") {
  CHECK(retryError([](RetryOptions& o) { o.maxDelay = 500ms; }) ==
        "RetryOptions.maxDelay = 500ms (expected: >= initialDelay = 1s)");
  CHECK(retryError([](RetryOptions& o) {
          o.initialDelay = 3min;
          o.maxDelay = 90s;
        }) == "RetryOptions.maxDelay = 90s (expected: >= initialDelay = 3m)");
  CHECK(retryError([](RetryOptions& o) {
          o.initialDelay = 2ms;
          o.maxDelay = 1500us;
        }) == "RetryOptions.maxDelay = 1500us (expected: >= initialDelay = 2ms)");
  CHECK(retryError([](RetryOptions& o) {
          o.initialDelay = 2h;
          o.maxDelay = 1999ns;
        }) == "RetryOptions.maxDelay = 1999ns (expected: >= initialDelay = 2h)");
}

TEST_CASE("jitterRatio must be within 0 and 1") {
  CHECK(retryError([](RetryOptions& o) { o.jitterRatio = 1.5; }) ==
        "RetryOptions.jitterRatio = 1.5 (expected: 0 <= jitterRatio <= 1)");
  CHECK(retryError([](RetryOptions& o) { o.jitterRatio = -0.1; }) ==
        "RetryOptions.jitterRatio = -0.1 (expected: 0 <= jitterRatio <= 1)");
  CHECK(retryError([](RetryOptions& o) { o.jitterRatio = kNaN; }) ==
        "RetryOptions.jitterRatio = nan (expected: 0 <= jitterRatio <= 1)");
}

TEST_CASE("maxAttempts must be -1 or more") {
  CHECK(retryError([](RetryOptions& o) { o.maxAttempts = -2; }) ==
        "RetryOptions.maxAttempts = -2 (expected: -1 (forever), 0 (none) or > 0)");
}

TEST_CASE("deadline must not be negative") {
  CHECK(retryError([](RetryOptions& o) { o.deadline = -1s; }) ==
        "RetryOptions.deadline = -1s (expected: 0 (none) or > 0)");
}

TEST_CASE("enumerators out of range are rejected") {
  CHECK(retryError([](RetryOptions& o) { o.backoff = static_cast<Backoff>(7); }) ==
        "RetryOptions.backoff = 7 (expected: Fixed or Exponential)");
  CHECK(retryError([](RetryOptions& o) { o.jitter = static_cast<Jitter>(9); }) ==
        "RetryOptions.jitter = 9 (expected: None, Full, Equal, Decorrelated or Proportional)");
}

TEST_CASE("error names must not be empty") {
  CHECK(retryError([](RetryOptions& o) {
          o.retryOn = {"timeout", ""};
        }) == "RetryOptions.retryOn[1] = \"\" (expected: a non-empty error name)");
  CHECK(retryError([](RetryOptions& o) { o.ignore = {""}; }) ==
        "RetryOptions.ignore[0] = \"\" (expected: a non-empty error name)");
}

TEST_CASE("valid edge values are accepted") {
  RetryOptions o;
  o.multiplier = 1.0;
  o.maxDelay = o.initialDelay;
  o.jitterRatio = 0.0;
  o.maxAttempts = -1;
  o.deadline = 0ns;
  o.retryOn = {"a"};
  o.ignore = {"a"};  // the same name in both lists is allowed: ignore wins
  CHECK_NOTHROW(wheelbeat::tasks::validate(o));
  o.jitterRatio = 1.0;
  o.maxAttempts = 0;
  o.deadline = 1ns;
  o.initialDelay = 1ns;
  o.maxDelay = ns::max();
  CHECK_NOTHROW(wheelbeat::tasks::validate(o));
  CHECK_NOTHROW(wheelbeat::tasks::validate(RetryOptions{}));
}

TEST_CASE("budget ratio must be within 0 and 1000") {
  CHECK(budgetError([](RetryBudgetOptions& o) { o.ratio = -0.5; }) ==
        "RetryBudgetOptions.ratio = -0.5 (expected: 0 <= ratio <= 1000)");
  CHECK(budgetError([](RetryBudgetOptions& o) { o.ratio = 1000.5; }) ==
        "RetryBudgetOptions.ratio = 1000.5 (expected: 0 <= ratio <= 1000)");
  CHECK(budgetError([](RetryBudgetOptions& o) { o.ratio = kNaN; }) ==
        "RetryBudgetOptions.ratio = nan (expected: 0 <= ratio <= 1000)");
}

TEST_CASE("budget minRetriesPerSecond must be within 0 and 10^9") {
  CHECK(budgetError([](RetryBudgetOptions& o) { o.minRetriesPerSecond = -1; }) ==
        "RetryBudgetOptions.minRetriesPerSecond = -1 (expected: 0..1000000000)");
  CHECK(budgetError([](RetryBudgetOptions& o) { o.minRetriesPerSecond = 1'000'000'001; }) ==
        "RetryBudgetOptions.minRetriesPerSecond = 1000000001 (expected: 0..1000000000)");
}

TEST_CASE("budget window must be at least 1ms") {
  CHECK(budgetError([](RetryBudgetOptions& o) { o.window = 0ns; }) ==
        "RetryBudgetOptions.window = 0s (expected: >= 1ms)");
  CHECK(budgetError([](RetryBudgetOptions& o) { o.window = 999us; }) ==
        "RetryBudgetOptions.window = 999us (expected: >= 1ms)");
}

TEST_CASE("budget edge values are accepted") {
  CHECK_NOTHROW(wheelbeat::tasks::validate(budgetOptions(0.0, 0, 1ms)));
  CHECK_NOTHROW(wheelbeat::tasks::validate(budgetOptions(1000.0, 1'000'000'000, ns::max())));
  CHECK_NOTHROW(wheelbeat::tasks::validate(RetryBudgetOptions{}));
}

}  // TEST_SUITE("tasks")
