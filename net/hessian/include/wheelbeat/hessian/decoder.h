// Hessian 2.0 decoder: bytes to values. Reads every form of the Hessian 2.0 grammar (also those
// Java never writes: variable-length lists 0x55 / 0x57, chunked strings and bytes with any mix of
// compact final chunks), within DecoderLimits, from a complete input (a whole RPC body: the
// decoder does not resume across partial input).
//
//   Decoder dec(body);            // DecoderLimits{} by default
//   while (!dec.atEnd()) use(dec.read());
//   Value v = decode(bytes);      // exactly one value, nothing after it
//
// Hostile input is refused with a DecodeError naming the byte offset and what was expected, e.g.
// "hessian: at byte 17: string length 1048577 exceeds maxStringUnits = 1048576". The decoder never
// allocates from a length before the bytes it announces are present (a 2 GiB length on a short
// input costs nothing), recurses at most maxDepth levels, and rejects: a 4-byte UTF-8 sequence
// (the wire is CESU-8, as Java and hessian.js require), an unpaired surrogate, an overlong or
// truncated sequence, a ref to a node not yet started, a class or type ref never defined,
// reserved codes, and input ending anywhere inside a value.
//
// Refs ('Q') number lists, maps and objects in the order they start, across every read() of one
// Decoder (until resetReferences()); see value.h for how refs become shared or back edges.
//
// Threads: a Decoder is used by one thread at a time (any thread). The input must stay alive and
// unchanged while the Decoder reads it; values returned own their data.
#pragma once

#include <wheelbeat/hessian/value.h>

#include <cstddef>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>

namespace wheelbeat::hessian {

/// Bounds on what one Decoder accepts. Every field must be at least 1 (validate()).
struct DecoderLimits {
  /// Deepest nesting of lists, maps and objects.
  std::size_t maxDepth = 256;
  /// Size of the whole input, in bytes.
  std::size_t maxTotalBytes = 8 * 1024 * 1024;
  /// Length of one string, in UTF-16 units (as the wire counts), all chunks together.
  std::size_t maxStringUnits = 1024 * 1024;
  /// Length of one binary value, in bytes, all chunks together.
  std::size_t maxBytesLength = 8 * 1024 * 1024;
  /// Class definitions ('C') in the input.
  std::size_t maxClassDefs = 4096;
  /// Distinct type names of lists and maps in the input.
  std::size_t maxTypes = 4096;
  /// Lists, maps and objects in the input (each is a ref slot).
  std::size_t maxRefs = 1024 * 1024;
  /// Elements of one list, entries of one map, fields of one class.
  std::size_t maxElements = 1024 * 1024;

  /// Throws std::invalid_argument naming the field, its value and the rule
  /// ("hessian: DecoderLimits.maxDepth = 0 (expected >= 1)").
  void validate() const;
};

/// Input the decoder refuses; what() starts "hessian: at byte N: ".
class DecodeError : public std::runtime_error {
public:
  DecodeError(std::size_t offset, const std::string& what);
  /// The byte offset (from the start of the input) where the refused item starts.
  std::size_t offset() const { return offset_; }

private:
  std::size_t offset_;
};

class Decoder {
public:
  /// Throws std::invalid_argument when `limits` is invalid, DecodeError (at byte 0) when the
  /// input is larger than maxTotalBytes.
  explicit Decoder(std::string_view input, DecoderLimits limits = {});
  ~Decoder();
  Decoder(Decoder&&) noexcept;
  Decoder& operator=(Decoder&&) noexcept;

  /// The next value. Throws DecodeError; a refused read changes nothing (offset, refs, types and
  /// class definitions are as before it), so every later read() fails the same way.
  Value read();
  /// True when every byte has been read.
  bool atEnd() const;
  /// Bytes read so far.
  std::size_t offset() const;
  /// Forgets the ref slots (the next node read is ref 0 again), as Java's resetReferences().
  void resetReferences();

private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

/// Exactly one value: DecodeError if the input holds less, or bytes after it.
Value decode(std::string_view input, const DecoderLimits& limits = {});

}  // namespace wheelbeat::hessian
