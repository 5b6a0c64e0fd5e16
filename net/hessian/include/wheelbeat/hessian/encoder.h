// Hessian 2.0 encoder: values to bytes, in the forms Java's Hessian 4.0 (Hessian2Output) writes,
// so that a Java peer reading them sees what it would have written itself.
//
//   Encoder enc;                        // or Encoder enc(limits)
//   enc.write(Value::string("hello"));  // appended to enc.buffer()
//   enc.write(value);                   // refs, types and classes carry over between writes
//   send(enc.buffer());
//
// Forms (each the shortest Java uses): int 0x80-0xbf / 0xc0-0xcf / 0xd0-0xd7 / 'I'; long
// 0xd8-0xef / 0xf0-0xff / 0x38-0x3f / 0x59 / 'L' (a long never takes an int form); double 0x5b,
// 0x5c, 0x5d, 0x5e for whole numbers in int16 range, 0x5f (int32 milliseconds) when value * 1000
// is a whole number in int32 range that gives the value back exactly, else 'D' — except -0.0,
// which Java writes as 0x5b (losing the sign) and this encoder as 'D'; string: UTF-16 lengths,
// CESU-8 bytes, chunks of 0x8000 units never splitting a surrogate pair, the last chunk in its
// shortest form; bytes: chunks of 0x8000; Date 0x4b (whole minutes in int32) or 0x4a; list:
// fixed length only (0x78-0x7f / 'X' untyped, 0x70-0x77 / 'V' typed: hessian.js reads no
// variable-length list); map 'H' untyped, 'M' typed; object: a 'C' definition the first time a
// class is met, then 0x60-0x6f or 'O'. Type names and class definitions are written once and
// referred to by number afterwards; a node met again is written as a ref ('Q').
//
// Errors: write() throws EncodeError (invalid UTF-8 in a string, an Object whose value count
// differs from its class's field count, a BackRef whose target is gone, nesting deeper than
// EncoderLimits::maxDepth), and a rejected write changes nothing: the buffer and the tables are
// as before the call.
//
// Threads: an Encoder is used by one thread at a time (any thread).
#pragma once

#include <wheelbeat/hessian/value.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>

namespace wheelbeat::hessian {

/// What write() refuses to do.
struct EncoderLimits {
  /// Deepest nesting of lists, maps and objects (protects the stack: encoding is recursive).
  std::size_t maxDepth = 1024;
  /// Throws std::invalid_argument naming the field when maxDepth is 0.
  void validate() const;
};

/// A value the encoder cannot write; what() says which and why ("hessian: encode: ...").
class EncodeError : public std::invalid_argument {
public:
  using std::invalid_argument::invalid_argument;
};

class Encoder {
public:
  /// Throws std::invalid_argument when `limits` is invalid.
  explicit Encoder(EncoderLimits limits = {});
  ~Encoder();
  Encoder(Encoder&&) noexcept;
  Encoder& operator=(Encoder&&) noexcept;

  /// Appends `value` (and everything it reaches) to buffer(). Throws EncodeError; on error
  /// nothing changed.
  void write(const Value& value);

  /// The scalars, written directly (no Value built).
  void writeNull();
  void writeBool(bool b);
  void writeInt(std::int32_t i);
  void writeLong(std::int64_t l);
  void writeDouble(double d);
  /// Throws EncodeError on invalid UTF-8 (naming the byte offset within `utf8`).
  void writeString(std::string_view utf8);
  void writeBytes(std::string_view bytes);
  void writeDate(Date d);

  /// The bytes written so far. The caller may take them (std::move) or clear them; the tables
  /// (refs, types, classes) stay until reset.
  std::string& buffer();

  /// Forgets the nodes written (later writes of them are written in full, not as refs), as
  /// Java's resetReferences(); types and class definitions stay.
  void resetReferences();
  /// Forgets everything: refs, types, class definitions; clears the buffer.
  void reset();

private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

/// One value, with fresh tables. Throws EncodeError.
std::string encode(const Value& value, const EncoderLimits& limits = {});

}  // namespace wheelbeat::hessian
