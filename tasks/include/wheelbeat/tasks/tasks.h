// wheelbeat::tasks — the layer above the shared wheel (wheelbeat::core): the retry policy
// (RetryOptions, RetryState: backoff, jitter, attempts, deadline, per-error rules), the shared
// RetryBudget, the RetryRunner (an asynchronous operation under a policy on the wheel) and the
// shared error-name vocabulary (error_names.h), the self-re-arming timer tasks (TimerChain) over
// the Channel interface (AbstractTimerTask, HeartbeatTimerTask, ReconnectTimerTask, CloseTimerTask;
// HeartbeatOptions) or any owner (PeriodicTask), observed through TaskListener and TaskMetrics, and
// failback (FailbackOptions, CallResult; FailbackInvoker) observed through FailbackListener and
// FailbackMetrics. The registry's failback (FailbackRegistry) is the registry layer's.
#pragma once

#include <wheelbeat/core/hashed_wheel_timer.h>
#include <wheelbeat/tasks/abstract_timer_task.h>
#include <wheelbeat/tasks/channel.h>
#include <wheelbeat/tasks/error_names.h>
#include <wheelbeat/tasks/failback.h>
#include <wheelbeat/tasks/failback_invoker.h>
#include <wheelbeat/tasks/heartbeat_tasks.h>
#include <wheelbeat/tasks/periodic_task.h>
#include <wheelbeat/tasks/retry_budget.h>
#include <wheelbeat/tasks/retry_policy.h>
#include <wheelbeat/tasks/retry_runner.h>
#include <wheelbeat/tasks/task_listener.h>
#include <wheelbeat/tasks/timer_chain.h>

namespace wheelbeat::tasks {}
