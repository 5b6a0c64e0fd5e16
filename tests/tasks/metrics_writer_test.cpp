// The tasks layer's metrics: TaskMetrics and RetryBudget written into a core::MetricsWriter with
// exact values (the names README's Metrics table lists).
#include "support.h"

#include <wheelbeat/core/metrics.h>
#include <wheelbeat/tasks/retry_budget.h>
#include <wheelbeat/tasks/task_listener.h>

#include <doctest/doctest.h>

using namespace wbtest;
using wheelbeat::core::MetricsWriter;

TEST_SUITE("tasks") {

TEST_CASE("task metrics are written under their catalogue names") {
  wheelbeat::tasks::TaskMetrics m;
  m.heartbeatsSent = 7;
  m.reconnectsStarted = 3;
  m.giveUps = 1;
  m.closes = 2;
  m.idleDeferred = 4;
  m.taskErrors = 5;
  m.runs = 30;
  MetricsWriter out;
  writeMetrics(m, out);
  CHECK(out.value("wheelbeat_tasks_heartbeats_sent_total") == 7);
  CHECK(out.value("wheelbeat_tasks_reconnects_total") == 3);
  CHECK(out.value("wheelbeat_tasks_give_ups_total") == 1);
  CHECK(out.value("wheelbeat_tasks_idle_closes_total") == 2);
  CHECK(out.value("wheelbeat_tasks_idle_deferred_total") == 4);
  CHECK(out.value("wheelbeat_tasks_errors_total") == 5);
  CHECK(out.value("wheelbeat_tasks_runs_total") == 30);
}

TEST_CASE("a retry budget reports its whole tokens and counts each refusal") {
  RetryBudget budget({.ratio = 0.5, .minRetriesPerSecond = 1});
  const ns now = 1s;
  for (int i = 0; i < 5; ++i) budget.onRequest(now);  // 2.5 earned + 1 reserve
  MetricsWriter before;
  budget.writeMetrics(before, now);
  CHECK(before.value("wheelbeat_retry_budget_tokens") == 3);
  CHECK(before.value("wheelbeat_retry_budget_refusals_total") == 0);
  int granted = 0;
  for (int i = 0; i < 5; ++i) granted += budget.tryWithdraw(now) ? 1 : 0;
  CHECK(granted == 3);
  CHECK(budget.refusals() == 2);
  MetricsWriter after;
  budget.writeMetrics(after, now);
  CHECK(after.value("wheelbeat_retry_budget_tokens") == 0);
  CHECK(after.value("wheelbeat_retry_budget_refusals_total") == 2);
}

}  // TEST_SUITE("tasks")
