// wheelbeat::tasks — the layer above the shared wheel (wheelbeat::core). Built so far: the retry
// policy (RetryOptions, RetryState: backoff, jitter, attempts, deadline, per-error rules) and the
// shared RetryBudget. The self-re-arming timer tasks (heartbeat, reconnect, close-idle) and
// failback are not implemented yet.
#pragma once

#include <wheelbeat/core/hashed_wheel_timer.h>
#include <wheelbeat/tasks/retry_budget.h>
#include <wheelbeat/tasks/retry_policy.h>

namespace wheelbeat::tasks {}
