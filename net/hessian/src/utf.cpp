#include "utf.h"

#include <cstring>

namespace wheelbeat::hessian::utf {
namespace {

bool isContinuation(std::uint8_t b) { return (b & 0xc0) == 0x80; }

// Length of the UTF-8 sequence led by `lead` (0: not a valid lead byte: a continuation byte,
// 0xc0 / 0xc1 (always overlong) or 0xf5 and above).
std::size_t sequenceLength(std::uint8_t lead) {
  if (lead < 0x80) return 1;
  if (lead < 0xc2) return 0;
  if (lead < 0xe0) return 2;
  if (lead < 0xf0) return 3;
  if (lead < 0xf5) return 4;
  return 0;
}

void appendThree(std::string& out, std::uint32_t cp) {
  out.push_back(static_cast<char>(0xe0 | (cp >> 12)));
  out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3f)));
  out.push_back(static_cast<char>(0x80 | (cp & 0x3f)));
}

}  // namespace

Scan scanUtf8(std::string_view s) {
  Scan scan;
  const auto* bytes = reinterpret_cast<const std::uint8_t*>(s.data());
  std::size_t i = 0;
  while (i < s.size()) {
    if (s.size() - i >= 8) {  // the common case, eight ASCII bytes at a time
      std::uint64_t word = 0;
      std::memcpy(&word, bytes + i, 8);
      if ((word & 0x8080808080808080ULL) == 0) {
        i += 8;
        scan.units += 8;
        continue;
      }
    }
    const std::uint8_t lead = bytes[i];
    if (lead < 0x80) {  // ASCII runs
      ++i;
      ++scan.units;
      continue;
    }
    const std::size_t n = sequenceLength(lead);
    if (n == 0) return Scan{0, i, "invalid UTF-8 lead byte"};
    if (i + n > s.size()) return Scan{0, i, "truncated UTF-8 sequence"};
    for (std::size_t k = 1; k < n; ++k) {
      if (!isContinuation(bytes[i + k])) return Scan{0, i, "invalid UTF-8 continuation byte"};
    }
    const std::uint8_t second = bytes[i + 1];
    if (n == 3 && lead == 0xe0 && second < 0xa0) return Scan{0, i, "overlong UTF-8 sequence"};
    if (n == 3 && lead == 0xed && second >= 0xa0) return Scan{0, i, "UTF-8 encoded surrogate"};
    if (n == 4 && lead == 0xf0 && second < 0x90) return Scan{0, i, "overlong UTF-8 sequence"};
    if (n == 4 && lead == 0xf4 && second >= 0x90) return Scan{0, i, "code point above U+10FFFF"};
    scan.units += n == 4 ? 2 : 1;
    i += n;
  }
  return scan;
}

Piece appendCesu8(std::string& out, std::string_view s, std::size_t from, std::size_t maxUnits) {
  const auto* bytes = reinterpret_cast<const std::uint8_t*>(s.data());
  std::size_t i = from;
  std::size_t units = 0;
  while (i < s.size() && units < maxUnits) {
    // Copy a run of characters of 1-3 bytes at once: they are the same in UTF-8 and CESU-8.
    const std::size_t runStart = i;
    while (i < s.size() && units < maxUnits && bytes[i] < 0xf0) {
      i += sequenceLength(bytes[i]);
      ++units;
    }
    out.append(s.data() + runStart, i - runStart);
    if (i >= s.size() || units >= maxUnits) break;
    if (units + 2 > maxUnits) break;  // a pair never straddles two chunks
    const std::uint32_t cp = ((bytes[i] & 0x07u) << 18) | ((bytes[i + 1] & 0x3fu) << 12) |
                             ((bytes[i + 2] & 0x3fu) << 6) | (bytes[i + 3] & 0x3fu);
    const std::uint32_t v = cp - 0x10000;
    appendThree(out, 0xd800 | (v >> 10));
    appendThree(out, 0xdc00 | (v & 0x3ff));
    units += 2;
    i += 4;
  }
  return Piece{i - from, units};
}

const char* decodeCesu8(const std::uint8_t*& p, const std::uint8_t* end, std::size_t units,
                        std::string& out, std::uint32_t& pendingHigh) {
  while (units > 0) {
    if (pendingHigh == 0) {  // a run of ASCII, appended at once
      const std::uint8_t* run = p;
      // Eight bytes at a time while none has its high bit set (one unit per ASCII byte).
      while (units >= 8 && end - run >= 8) {
        std::uint64_t word = 0;
        std::memcpy(&word, run, 8);
        if ((word & 0x8080808080808080ULL) != 0) break;
        run += 8;
        units -= 8;
      }
      while (run < end && units > 0 && *run < 0x80) {
        ++run;
        --units;
      }
      out.append(reinterpret_cast<const char*>(p), static_cast<std::size_t>(run - p));
      p = run;
      if (units == 0) break;
    }
    if (p >= end) return "input ends before its last character";
    const std::uint8_t lead = *p;
    const std::size_t n = sequenceLength(lead);
    if (pendingHigh != 0 && n != 3) return "unpaired high surrogate";
    if (n == 4) {
      return "4-byte UTF-8 sequence (expected CESU-8: a character outside the BMP as two 3-byte "
             "surrogates)";
    }
    if (n == 0) return "invalid UTF-8 lead byte";
    if (static_cast<std::size_t>(end - p) < n) return "input ends before its last character";
    for (std::size_t k = 1; k < n; ++k) {
      if (!isContinuation(p[k])) return "invalid UTF-8 continuation byte";
    }
    if (n == 2) {
      out.append(reinterpret_cast<const char*>(p), 2);
    } else {
      const std::uint32_t cp = ((lead & 0x0fu) << 12) | ((p[1] & 0x3fu) << 6) | (p[2] & 0x3fu);
      if (cp < 0x800) return "overlong UTF-8 sequence";
      const bool high = cp >= 0xd800 && cp <= 0xdbff;
      const bool low = cp >= 0xdc00 && cp <= 0xdfff;
      if (pendingHigh != 0 && !low) return "unpaired high surrogate";
      if (high) {
        pendingHigh = cp;
      } else if (low) {
        if (pendingHigh == 0) return "unpaired low surrogate";
        const std::uint32_t full = 0x10000 + ((pendingHigh - 0xd800) << 10) + (cp - 0xdc00);
        pendingHigh = 0;
        out.push_back(static_cast<char>(0xf0 | (full >> 18)));
        out.push_back(static_cast<char>(0x80 | ((full >> 12) & 0x3f)));
        out.push_back(static_cast<char>(0x80 | ((full >> 6) & 0x3f)));
        out.push_back(static_cast<char>(0x80 | (full & 0x3f)));
      } else {
        out.append(reinterpret_cast<const char*>(p), 3);
      }
    }
    p += n;
    --units;
  }
  return nullptr;
}

}  // namespace wheelbeat::hessian::utf
