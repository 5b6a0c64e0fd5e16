// hessian::isAscii: whether every byte of a string is below 0x80. Such a string is its own UTF-8
// and its UTF-16 units are its bytes (Hessian counts a string's length in units), so encoders and
// decoders take it without converting anything. Eight bytes at a time; inline, for hot paths.
// Thread: any.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string_view>

namespace wheelbeat::hessian {

[[gnu::always_inline]] inline bool isAscii(const std::uint8_t* p, std::size_t n) noexcept {
  std::uint64_t any = 0;
  std::size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    std::uint64_t word = 0;
    std::memcpy(&word, p + i, 8);
    any |= word;
  }
  for (; i < n; ++i) any |= p[i];
  return (any & 0x8080808080808080ULL) == 0;
}

inline bool isAscii(std::string_view s) noexcept {
  return isAscii(reinterpret_cast<const std::uint8_t*>(s.data()), s.size());
}

}  // namespace wheelbeat::hessian
