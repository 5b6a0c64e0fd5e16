// wheelbeat::net — libuv event loop, TCP channels, the Dubbo-2 exchange codec and registry
// clients; the only layer that includes <uv.h>. Not implemented yet: this header only reserves
// the namespace so the layer's target and include path exist.
#pragma once

#include <wheelbeat/tasks/tasks.h>

namespace wheelbeat::net {}
