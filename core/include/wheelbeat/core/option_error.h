// OptionError: what every layer's validate() throws for a bad option. An std::invalid_argument
// whose what() is "WheelOptions.tickDuration = 0s (expected: > 0)", with its parts kept apart so
// a caller that names options its own way (config/: JSON pointers) can say the same in its terms.
#pragma once

#include <stdexcept>
#include <string>
#include <string_view>

namespace wheelbeat::core {

class OptionError : public std::invalid_argument {
public:
  // `options`: the struct ("HeartbeatOptions"); `field`: the member, dotted below it
  // ("codec.maxBody"); `value`: as the message shows it; `expected`: what would be accepted.
  // A rule between two members also names the `other` one and the rule worded from its side
  // (`otherExpected`), so a caller can blame whichever of the two was set.
  OptionError(std::string options, std::string field, std::string value, std::string expected,
              std::string other = {}, std::string otherExpected = {});

  [[nodiscard]] const std::string& options() const noexcept { return options_; }
  [[nodiscard]] const std::string& field() const noexcept { return field_; }
  [[nodiscard]] const std::string& value() const noexcept { return value_; }
  [[nodiscard]] const std::string& expected() const noexcept { return expected_; }
  [[nodiscard]] const std::string& other() const noexcept { return other_; }  // "" if none
  [[nodiscard]] const std::string& otherExpected() const noexcept { return otherExpected_; }

  // The same error seen from an enclosing struct: `options` with the members under `member`
  // ("reconnect"): "HeartbeatOptions.reconnect.maxDelay = ...".
  [[nodiscard]] OptionError within(std::string options, std::string_view member) const;

private:
  std::string options_;
  std::string field_;
  std::string value_;
  std::string expected_;
  std::string other_;
  std::string otherExpected_;
};

}  // namespace wheelbeat::core
