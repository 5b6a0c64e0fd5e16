// libFuzzer target for the Dubbo 2 body decoders (net/dubbo/). The input is one control byte,
// then the body:
//   byte 0   bits 0-1: which decoder (0 request, 1 result, 2 error message, 3 all three);
//            bits 2-7: maxArguments and maxAttachments (1 .. 64)
//   rest     the body bytes, decoded within small limits
// Invariants: a refusal is a BodyError whose offset lies within the body; a body accepted
// encodes again (a request with its version rule, a result for both forms of response) and the
// new bytes decode to a deep-equal request or result; decoding a request into a Request reused
// from input to input (a provider's way) gives the same request or the same refusal.
#include <wheelbeat/dubbo/body.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

namespace {

using namespace wheelbeat::dubbo;
namespace h = wheelbeat::hessian;

void require(bool ok, const char* what) {
  if (ok) return;
  std::fprintf(stderr, "dubbo_body_fuzz: invariant violated: %s\n", what);
  std::abort();
}

BodyLimits limitsFrom(std::uint8_t control) {
  BodyLimits limits;
  limits.maxArguments = 1 + (control >> 2);
  limits.maxAttachments = 1 + (control >> 2);
  limits.hessian.maxDepth = 12;
  limits.hessian.maxStringUnits = 300;
  limits.hessian.maxBytesLength = 300;
  limits.hessian.maxClassDefs = 8;
  limits.hessian.maxTypes = 8;
  limits.hessian.maxRefs = 64;
  limits.hessian.maxElements = 64;
  return limits;
}

bool sameAttachments(const Attachments& a, const Attachments& b) {
  return h::deepEqual(h::Value::map(a.map()), h::Value::map(b.map()));
}

bool sameRequest(const Request& a, const Request& b) {
  if (a.dubboVersion != b.dubboVersion || a.path != b.path || a.version != b.version ||
      a.method != b.method || a.descriptor != b.descriptor || a.args.size() != b.args.size()) {
    return false;
  }
  for (std::size_t i = 0; i < a.args.size(); ++i) {
    if (!h::deepEqual(a.args[i], b.args[i])) return false;
  }
  return sameAttachments(a.attachments, b.attachments);
}

// decodeRequest into a Request reused across inputs (as a provider's) gives what decodeRequest
// returns, or refuses with the same words.
void checkReused(std::string_view body, const BodyLimits& limits, const Request* expected,
                 const std::string& refusal) {
  static Request reused;
  try {
    decodeRequest(body, reused, limits);
  } catch (const BodyError& e) {
    require(expected == nullptr && refusal == e.what(),
            "decoding into a reused request refuses what decodeRequest accepts, or otherwise");
    reused = Request();
    return;
  }
  require(expected != nullptr, "decoding into a reused request accepts what decodeRequest refuses");
  require(sameRequest(reused, *expected), "decoding into a reused request gives another request");
}

void checkRequest(std::string_view body, const BodyLimits& limits) {
  Request r;
  try {
    r = decodeRequest(body, limits);
  } catch (const BodyError& e) {
    require(e.offset() <= body.size(), "a request refusal's offset lies beyond the body");
    checkReused(body, limits, nullptr, e.what());
    return;
  }
  checkReused(body, limits, &r, {});
  std::string again;
  try {
    again = encodeRequest(r);
  } catch (const std::exception&) {
    require(false, "a decoded request does not encode");
  }
  BodyLimits open;
  open.hessian.maxDepth = limits.hessian.maxDepth;
  const Request back = decodeRequest(again, open);
  require(back.dubboVersion == r.dubboVersion && back.path == r.path && back.version == r.version &&
              back.method == r.method && back.descriptor == r.descriptor &&
              back.args.size() == r.args.size(),
          "a re-encoded request decodes to other fields");
  for (std::size_t i = 0; i < r.args.size(); ++i) {
    require(h::deepEqual(back.args[i], r.args[i]), "a re-encoded argument differs");
  }
  require(sameAttachments(back.attachments, r.attachments), "re-encoded attachments differ");
}

void checkResult(std::string_view body, const BodyLimits& limits) {
  Result r;
  try {
    r = decodeResult(body, limits);
  } catch (const BodyError& e) {
    require(e.offset() <= body.size(), "a result refusal's offset lies beyond the body");
    return;
  }
  BodyLimits open;
  open.hessian.maxDepth = limits.hessian.maxDepth;
  for (const char* version : {"2.0.2", "2.6.2"}) {
    std::string again;
    try {
      again = encodeResult(r, version);
    } catch (const std::exception&) {
      require(false, "a decoded result does not encode");
    }
    const Result back = decodeResult(again, open);
    // A value flag with a null value is written back as the null flag (as Java answers null).
    const ResultKind kind =
        r.kind == ResultKind::Value && r.value.isNull() ? ResultKind::Null : r.kind;
    require(back.kind == kind, "a re-encoded result has another kind");
    require(h::deepEqual(back.value, r.value), "a re-encoded result has another value");
  }
}

void checkError(std::string_view body, const BodyLimits& limits) {
  try {
    const std::string message = decodeErrorMessage(body, limits);
    require(decodeErrorMessage(encodeErrorMessage(message)) == message,
            "an error message does not survive a round trip");
  } catch (const BodyError& e) {
    require(e.offset() <= body.size(), "an error-body refusal's offset lies beyond the body");
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const std::uint8_t control = data[0];
  const std::string_view body(reinterpret_cast<const char*>(data + 1), size - 1);
  const BodyLimits limits = limitsFrom(control);
  const unsigned which = control & 3U;
  if (which == 0 || which == 3) checkRequest(body, limits);
  if (which == 1 || which == 3) checkResult(body, limits);
  if (which == 2 || which == 3) checkError(body, limits);
  return 0;
}
