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

#include <wheelbeat/dubbo/body.h>

#include <cstddef>
#include <string>
#include <string_view>

namespace wheelbeat::dubbo::detail {

class RequestDecoder {
public:
  /// Decodes `body` into `out` (what decodeRequest(body, limits) returns, reusing out's storage).
  /// `limits` must be valid (validated by the caller once). Throws what decodeRequest() throws;
  /// `out` is then unspecified (assign it before reading it again).
  void decode(std::string_view body, const BodyLimits& limits, Request& out);

private:
  bool tryFast(std::string_view body, const BodyLimits& limits, Request& out);
  bool readAttachments(const std::uint8_t* p, const std::uint8_t* end, const BodyLimits& limits,
                       Request& out);
  std::size_t paramCount(std::string_view descriptor);

  // The last descriptor that split without error and its parameter count (calls repeat it).
  std::string lastDescriptor_;
  std::size_t lastParams_ = 0;
  bool haveLast_ = false;
  // The attachments map node of the last fast decode (shared with that Request): reused when
  // nothing else holds it any more.
  hessian::MapPtr node_;
};

}  // namespace wheelbeat::dubbo::detail
