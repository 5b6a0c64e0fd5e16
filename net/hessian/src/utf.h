// UTF-8 (the C++ side) <-> CESU-8 with UTF-16 unit counts (the wire): a character outside the
// Basic Multilingual Plane is two units on the wire, each surrogate written as 3 bytes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace wheelbeat::hessian::utf {

/// The outcome of scanning UTF-8: the UTF-16 units it makes, or where and why it is invalid.
struct Scan {
  std::size_t units = 0;
  std::size_t badOffset = 0;  // valid only when why != nullptr
  const char* why = nullptr;  // nullptr: valid UTF-8
};

/// Validates `s` as UTF-8 (no overlong forms, no encoded surrogates, nothing above U+10FFFF,
/// nothing truncated) and counts its UTF-16 units.
Scan scanUtf8(std::string_view s);

/// What appendCesu8 wrote.
struct Piece {
  std::size_t bytesRead = 0;
  std::size_t units = 0;
};

/// Appends to `out` the CESU-8 form of valid UTF-8 `s` from byte `from`, at most `maxUnits`
/// UTF-16 units, never splitting a surrogate pair (so it may write maxUnits - 1).
Piece appendCesu8(std::string& out, std::string_view s, std::size_t from, std::size_t maxUnits);

/// Decodes `units` UTF-16 units of CESU-8 from [p, end) into UTF-8 appended to `out`, advancing
/// p. `pendingHigh` carries a high surrogate across chunks (0: none). Returns nullptr, or why the
/// bytes are refused (then p points at the offending sequence).
const char* decodeCesu8(const std::uint8_t*& p, const std::uint8_t* end, std::size_t units,
                        std::string& out, std::uint32_t& pendingHigh);

}  // namespace wheelbeat::hessian::utf
