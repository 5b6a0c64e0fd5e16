// R1's hessian2 bodies (r1.h): the Dubbo request the client sends, the response it expects, and
// nothing else — the server side is dubbo::Provider itself (r1_roles.cpp).
#include "r1.h"

#include <wheelbeat/dubbo/body.h>
#include <wheelbeat/dubbo/consumer.h>

namespace wheelbeat::bench::netbench {

namespace {
// The argument: as many characters as the raw mode's body has bytes.
hessian::Value payload() { return hessian::Value::string(std::string(kR1BodyBytes, 'r')); }
}  // namespace

std::string r1HessianRequest() {
  dubbo::Call call{.interface = std::string(kR1Service),
                   .method = "echo",
                   .descriptor = "Ljava/lang/String;",
                   .args = {payload()}};
  return dubbo::encodeRequest(dubbo::makeRequest(call));
}

std::string r1HessianResponse() {
  return dubbo::encodeResult(dubbo::Result::ofValue(payload()), dubbo::kDubboVersion);
}

const char* r1BodiesName(R1Bodies bodies) {
  return bodies == R1Bodies::Hessian2 ? "hessian2" : "raw";
}

}  // namespace wheelbeat::bench::netbench
