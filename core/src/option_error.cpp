#include <wheelbeat/core/option_error.h>

#include <fmt/format.h>

#include <utility>

namespace wheelbeat::core {

OptionError::OptionError(std::string options, std::string field, std::string value,
                         std::string expected, std::string other, std::string otherExpected)
    : std::invalid_argument(
          fmt::format("{}.{} = {} (expected: {})", options, field, value, expected)),
      options_(std::move(options)),
      field_(std::move(field)),
      value_(std::move(value)),
      expected_(std::move(expected)),
      other_(std::move(other)),
      otherExpected_(std::move(otherExpected)) {}

OptionError OptionError::within(std::string options, std::string_view member) const {
  return OptionError(std::move(options), fmt::format("{}.{}", member, field_), value_, expected_,
                     other_.empty() ? other_ : fmt::format("{}.{}", member, other_),
                     otherExpected_);
}

}  // namespace wheelbeat::core
