// Helpers of the cluster decision tests.
#pragma once

#include <stdexcept>
#include <string>

namespace cluster_test {

// validate(options)'s message, or "" when it accepts them.
template <typename Options>
std::string validationError(const Options& options) {
  try {
    validate(options);  // found by argument-dependent lookup in the options' namespace
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "";
}

}  // namespace cluster_test
