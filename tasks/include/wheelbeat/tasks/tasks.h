// wheelbeat::tasks — self-re-arming timer tasks (heartbeat, reconnect, close-idle), retry
// policies and failback, built on wheelbeat::core. Not implemented yet: this header only
// reserves the namespace so the layer's target and include path exist.
#pragma once

#include <wheelbeat/core/hashed_wheel_timer.h>

namespace wheelbeat::tasks {}
