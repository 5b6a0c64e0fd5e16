// Tiny command-line reader for the samples: "--name value" pairs and "--flag" switches.
// Unknown or malformed options throw std::invalid_argument with the option named, so a typo
// never silently runs a sample with its defaults.
#pragma once

#include <fmt/format.h>

#include <charconv>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <string_view>

namespace samples {

// "--help" or "-h" anywhere among the arguments: the sample prints its usage and exits 0.
inline bool helpRequested(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    const std::string_view a = argv[i];
    if (a == "--help" || a == "-h") return true;
  }
  return false;
}

class Cli {
public:
  // `valued`: options that take a value ("--port"); `flags`: switches ("--plain").
  Cli(int argc, char** argv, const std::set<std::string>& valued,
      const std::set<std::string>& flags = {}) {
    for (int i = 1; i < argc; ++i) {
      const std::string name = argv[i];
      if (flags.count(name) != 0) {
        values_[name] = "";
      } else if (valued.count(name) != 0 && i + 1 < argc) {
        values_[name] = argv[++i];
      } else {
        throw std::invalid_argument(fmt::format("unknown option or missing value: {}", name));
      }
    }
  }

  [[nodiscard]] bool has(const std::string& name) const { return values_.count(name) != 0; }
  [[nodiscard]] std::optional<std::string> get(const std::string& name) const {
    const auto it = values_.find(name);
    if (it == values_.end()) return std::nullopt;
    return it->second;
  }
  // The value as an integer in [lo, hi], or nullopt when absent.
  [[nodiscard]] std::optional<std::int64_t> number(const std::string& name, std::int64_t lo,
                                                   std::int64_t hi) const {
    const auto text = get(name);
    if (!text) return std::nullopt;
    std::int64_t v = 0;
    const auto [end, ec] = std::from_chars(text->data(), text->data() + text->size(), v);
    if (ec != std::errc() || end != text->data() + text->size() || v < lo || v > hi) {
      throw std::invalid_argument(
          fmt::format("{} {} (expected: an integer in {} .. {})", name, *text, lo, hi));
    }
    return v;
  }

private:
  std::map<std::string, std::string> values_;
};

}  // namespace samples
