// decodeRequest(body, out, limits): decodeRequest()'s result at a fraction of its cost for the
// bodies nearly every call sends, into a Request reused from call to call. Internal to net/dubbo.
//
// Fast path: the five header values, the arguments and the attachments' keys and values are all
// short ASCII strings (compact or medium forms: no chunk, no byte >= 0x80, so UTF-16 units ==
// bytes and the bytes are the UTF-8), the service version may be null, the attachments are an
// untyped map ('H') or absent. Those are read in place (no Value tree, no hessian::Decoder) and
// assigned into the reused Request's strings, argument Values and attachments map node (their
// capacity kept: no allocation per call once warm). Any other body — another form, a limit
// reached, anything malformed — goes through decodeRequest() itself, so results, limits and
// every error message are exactly decodeRequest()'s.
//
// Threads: one RequestDecoder per thread (decodeRequest(body, out, limits) keeps one per
// thread).
#pragma once

#include "text.h"

#include <wheelbeat/dubbo/body.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace wheelbeat::dubbo::detail {

// A request body read in place by scan(): views of the body's bytes, valid while it is. Its
// vectors keep their capacity from call to call.
struct ScannedCall {
  std::string_view dubboVersion, path, version, method, descriptor;
  bool nullVersion = false;
  std::vector<std::string_view> args;  // every argument a short ASCII string
  std::vector<std::pair<std::string_view, std::string_view>> attachments;  // keys unique
  bool attachmentsMap = false;  // the body has a map (perhaps empty), not just no attachments
};

class RequestDecoder {
public:
  /// Decodes `body` into `out` (what decodeRequest(body, limits) returns, reusing out's storage).
  /// `limits` must be valid (validated by the caller once). Throws what decodeRequest() throws;
  /// `out` is then unspecified (assign it before reading it again).
  void decode(std::string_view body, const BodyLimits& limits, Request& out);
  /// Reads a body of the fast path's shape (the file comment) into `call`; false for any other
  /// body (nothing thrown: decodeRequest() then decodes it, or names its fault).
  bool scan(std::string_view body, const BodyLimits& limits, ScannedCall& call);
  /// `out` becomes the Request `call` describes, reusing its storage.
  void fill(const ScannedCall& call, Request& out);

  // Where a string lies in a kept region of bytes.
  struct Span {
    std::uint32_t at = 0, len = 0;
  };

private:
  // A call nearly always repeats the last one's header (dubbo version .. descriptor) and its
  // attachments byte for byte (one client, one service): the bytes of each, with where their
  // strings lie, are kept, and a body that starts with the same header or ends with the same
  // attachments has them read by one comparison, only its arguments scanned. Valid for limits
  // at least as wide as the kept strings' lengths and counts (checked at each use).
  struct HeaderKept {
    std::string bytes;
    Span dubboVersion, path, version, method, descriptor;
    bool nullVersion = false;
    std::size_t params = 0;
    std::size_t longest = 0;  // the longest string's length
    bool valid = false;
  };
  struct TailKept {
    std::string bytes;
    std::vector<std::pair<Span, Span>> entries;
    bool map = false;
    std::size_t longest = 0;
    bool valid = false;
  };

  bool scanHeader(const std::uint8_t*& p, const std::uint8_t* end, const BodyLimits& limits,
                  bool& ascii, ScannedCall& call);
  void keepTail(const std::uint8_t* p, const std::uint8_t* end, const ScannedCall& call);
  bool scanAttachments(const std::uint8_t* p, const std::uint8_t* end, const BodyLimits& limits,
                       bool ascii, ScannedCall& call);
  std::size_t paramCount(std::string_view descriptor);

  // The last descriptor that split without error and its parameter count (calls repeat it).
  std::string lastDescriptor_;
  std::size_t lastParams_ = 0;
  bool haveLast_ = false;
  HeaderKept header_;
  TailKept tail_;
  ScannedCall scanned_;  // decode()'s
  // The attachments map node of the last fill (shared with that Request): reused when nothing
  // else holds it any more.
  hessian::MapPtr node_;
};

// This thread's decoder (one per thread: it keeps state from call to call).
RequestDecoder& threadDecoder();

}  // namespace wheelbeat::dubbo::detail
