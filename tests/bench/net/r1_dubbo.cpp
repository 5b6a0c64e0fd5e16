// R1's bodies (r1.h): the hessian2 Dubbo request the client sends and the response it expects
// (the server side is dubbo::Provider itself, r1_roles.cpp), and each body mode's bytes.
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

std::string r1RequestBody(R1Bodies bodies) {
  switch (bodies) {
    case R1Bodies::Hessian2:
    case R1Bodies::Hessian2InPlace: return r1HessianRequest();
    case R1Bodies::RawSized: return std::string(r1HessianRequest().size(), 'r');
    case R1Bodies::Raw: break;
  }
  return std::string(kR1BodyBytes, 'r');
}

std::string r1ResponseBody(R1Bodies bodies) {
  switch (bodies) {
    case R1Bodies::Hessian2:
    case R1Bodies::Hessian2InPlace: return r1HessianResponse();
    case R1Bodies::RawSized: return std::string(r1HessianResponse().size(), 'r');
    case R1Bodies::Raw: break;
  }
  return std::string(kR1BodyBytes, 'r');
}

const char* r1BodiesName(R1Bodies bodies) {
  switch (bodies) {
    case R1Bodies::Hessian2: return "hessian2";
    case R1Bodies::Hessian2InPlace: return "hessian2-inplace";
    case R1Bodies::RawSized: return "raw-sized";
    case R1Bodies::Raw: break;
  }
  return "raw";
}

}  // namespace wheelbeat::bench::netbench
