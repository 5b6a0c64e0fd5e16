// libuv for the registry's engines (the only room besides net/ that includes <uv.h>): the header
// and a cast from any handle type to uv_handle_t*. Private to net/registry/.
#pragma once

#include <uv.h>

namespace wheelbeat::registry::detail {

// uv_handle_t* of any libuv handle type, without a C-style cast.
template <typename H>
[[nodiscard]] uv_handle_t* asHandle(H* h) noexcept {
  return reinterpret_cast<uv_handle_t*>(h);
}

}  // namespace wheelbeat::registry::detail
