// wheelbeat::config — JSON (nlohmann/json, used in this layer only) into the plain option
// structs each layer owns, with errors naming the JSON pointer, the value and the expectation.
// Not implemented yet: this header only reserves the namespace so the layer's target exists.
#pragma once

#include <wheelbeat/core/hashed_wheel_timer.h>

namespace wheelbeat::config {}
