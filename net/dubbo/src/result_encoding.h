// What a provider's in-place answer encodes without a Result (call_view.h). Internal to net/dubbo.
#pragma once

#include <wheelbeat/hessian/encoder.h>

#include <string_view>

namespace wheelbeat::dubbo::detail {

// Appends the body of a result that is the string `value`, as encodeResult() writes
// Result::ofValue(Value::string(value)) for a request of `dubboVersion`. Throws
// hessian::EncodeError for invalid UTF-8 (the buffer may then hold a partial body).
void encodeStringResult(std::string_view value, std::string_view dubboVersion,
                        hessian::Encoder& enc);

}  // namespace wheelbeat::dubbo::detail
