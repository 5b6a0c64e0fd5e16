// The Hessian 2.0 type codes and compact-form ranges, shared by the encoder and the decoder.
#pragma once

#include <cstdint>

namespace wheelbeat::hessian::wire {

// int: one byte -16..47, two bytes -2048..2047, three bytes -262144..262143, else 'I' + 4.
inline constexpr std::uint8_t kIntOne = 0x90;    // value 0 (range 0x80..0xbf)
inline constexpr std::uint8_t kIntTwo = 0xc8;    // high byte 0 (range 0xc0..0xcf)
inline constexpr std::uint8_t kIntThree = 0xd4;  // high byte 0 (range 0xd0..0xd7)
inline constexpr std::uint8_t kInt = 'I';
// long: one byte -8..15, two bytes -2048..2047, three bytes -262144..262143, int32, 'L' + 8.
inline constexpr std::uint8_t kLongOne = 0xe0;    // value 0 (range 0xd8..0xef)
inline constexpr std::uint8_t kLongTwo = 0xf8;    // high byte 0 (range 0xf0..0xff)
inline constexpr std::uint8_t kLongThree = 0x3c;  // high byte 0 (range 0x38..0x3f)
inline constexpr std::uint8_t kLongInt = 0x59;
inline constexpr std::uint8_t kLong = 'L';
// double.
inline constexpr std::uint8_t kDoubleZero = 0x5b;
inline constexpr std::uint8_t kDoubleOne = 0x5c;
inline constexpr std::uint8_t kDoubleByte = 0x5d;
inline constexpr std::uint8_t kDoubleShort = 0x5e;
inline constexpr std::uint8_t kDoubleMill = 0x5f;
inline constexpr std::uint8_t kDouble = 'D';
// string: 0x00..0x1f (length 0..31), 0x30..0x33 + 1 byte (0..1023), chunks 'R' / 'S' + u16.
inline constexpr std::uint8_t kStringShortMax = 0x1f;
inline constexpr std::uint8_t kStringMedium = 0x30;
inline constexpr std::uint8_t kStringChunk = 'R';
inline constexpr std::uint8_t kStringFinal = 'S';
// binary: 0x20..0x2f (0..15), 0x34..0x37 + 1 byte (0..1023), chunks 'A' / 'B' + u16.
inline constexpr std::uint8_t kBytesShort = 0x20;
inline constexpr std::uint8_t kBytesMedium = 0x34;
inline constexpr std::uint8_t kBytesChunk = 'A';
inline constexpr std::uint8_t kBytesFinal = 'B';
// The largest compact lengths and the chunk size both sides use.
inline constexpr std::uint32_t kShortMax = 31;
inline constexpr std::uint32_t kBytesShortMax = 15;
inline constexpr std::uint32_t kMediumMax = 1023;
inline constexpr std::uint32_t kChunk = 0x8000;
// others.
inline constexpr std::uint8_t kNull = 'N';
inline constexpr std::uint8_t kTrue = 'T';
inline constexpr std::uint8_t kFalse = 'F';
inline constexpr std::uint8_t kDateMillis = 0x4a;
inline constexpr std::uint8_t kDateMinutes = 0x4b;
inline constexpr std::uint8_t kClassDef = 'C';
inline constexpr std::uint8_t kObject = 'O';
inline constexpr std::uint8_t kObjectDirect = 0x60;  // 0x60..0x6f: class definitions 0..15
inline constexpr std::uint8_t kRef = 'Q';
inline constexpr std::uint8_t kMapUntyped = 'H';
inline constexpr std::uint8_t kMapTyped = 'M';
inline constexpr std::uint8_t kEnd = 'Z';
inline constexpr std::uint8_t kListVarTyped = 0x55;
inline constexpr std::uint8_t kListFixedTyped = 'V';
inline constexpr std::uint8_t kListVarUntyped = 0x57;
inline constexpr std::uint8_t kListFixedUntyped = 'X';
inline constexpr std::uint8_t kListDirectTyped = 0x70;    // 0x70..0x77: length 0..7
inline constexpr std::uint8_t kListDirectUntyped = 0x78;  // 0x78..0x7f: length 0..7
inline constexpr std::uint32_t kListDirectMax = 7;
inline constexpr std::uint32_t kObjectDirectMax = 15;

}  // namespace wheelbeat::hessian::wire
