// Shared by the dubbo tests: bytes spelled as Hessian writes them, and the error text of a
// refused body.
#pragma once

#include <wheelbeat/dubbo/body.h>
#include <wheelbeat/dubbo/descriptor.h>
#include <wheelbeat/dubbo/exception.h>

#include <fmt/format.h>

#include <string>
#include <string_view>

namespace wbdubbo {

using namespace wheelbeat::dubbo;
namespace h = wheelbeat::hessian;

// A Hessian compact string (0..31 ASCII characters): its length byte, then its bytes.
inline std::string str(std::string_view s) {
  return std::string(1, static_cast<char>(s.size())) + std::string(s);
}

inline std::string hex(std::string_view bytes) {
  std::string out;
  for (const unsigned char c : bytes) out += fmt::format("{:02x}", c);
  return out;
}

// The message of the BodyError `f` throws, or "no error".
template <typename F>
std::string refusal(F&& f) {
  try {
    f();
  } catch (const BodyError& e) {
    return e.what();
  }
  return "no error";
}

}  // namespace wbdubbo
