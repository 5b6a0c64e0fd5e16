// Short-text helpers of the provider's hot path (request_decoder.cpp, provider_call.cpp,
// result.cpp): hessian's ASCII check, and a comparison for a call's short strings, where libc's
// memcmp costs a call and its dispatch.
// Internal to net/dubbo.
#pragma once

#include <wheelbeat/hessian/ascii.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string_view>

namespace wheelbeat::dubbo::detail {

using hessian::isAscii;

// a == b, inline: a call's strings are short, and libc's memcmp costs a call and its dispatch.
inline bool sameText(std::string_view a, std::string_view b) {
  const std::size_t n = a.size();
  if (n != b.size()) return false;
  const char* x = a.data();
  const char* y = b.data();
  const auto word = [](const char* p) {
    std::uint64_t w = 0;
    std::memcpy(&w, p, 8);
    return w;
  };
  if (n < 8) {
    for (std::size_t i = 0; i < n; ++i) {
      if (x[i] != y[i]) return false;
    }
    return true;
  }
  for (std::size_t i = 0; i + 8 < n; i += 8) {
    if (word(x + i) != word(y + i)) return false;
  }
  return word(x + n - 8) == word(y + n - 8);  // the last 8 bytes (overlapping the loop's)
}

}  // namespace wheelbeat::dubbo::detail
