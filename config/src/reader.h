// The loader's shared machinery (private to config/): the JSON type, JSON pointers, the error
// collector, and the bookkeeping of one object's keys (fields.h reads objects from key tables).
#pragma once

#include <wheelbeat/config/config.h>

#include <nlohmann/json.hpp>

#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace wheelbeat::config::detail {

// ordered_json keeps the document's key order, so errors come out in document order.
using Json = nlohmann::ordered_json;

// `parent` + "/" + `key`, with `key` escaped as RFC 6901 says ("~" → "~0", "/" → "~1").
[[nodiscard]] std::string childPointer(std::string_view parent, std::string_view key);
[[nodiscard]] std::string childPointer(std::string_view parent, std::size_t index);

// Parses a whole document as Json::parse() does (and throws its parse_error), and reports each
// key written more than once in the same object in `duplicates`: its pointer (once per key and
// object), the value that the parser kept (the last one) and the expectation.
[[nodiscard]] Json parseDocument(std::string_view text, std::vector<ConfigError>& duplicates);

// The value as written: compact JSON.
[[nodiscard]] std::string dumped(const Json& value);

// Collects every error of one document, in the order they are found.
class Errors {
public:
  void add(std::string pointer, const Json& value, std::string expected) {
    list_.push_back({std::move(pointer), dumped(value), std::move(expected)});
  }
  void append(std::vector<ConfigError> more) {
    for (auto& e : more) list_.push_back(std::move(e));
  }
  [[nodiscard]] std::size_t size() const noexcept { return list_.size(); }
  [[nodiscard]] std::vector<ConfigError> take() { return std::move(list_); }

private:
  std::vector<ConfigError> list_;
};

// Where the keys of one object stand after reading it: the value of each key read without error,
// and the keys that had one. Cross-field rules only look at keys that are missing (default) or ok,
// so a bad value is reported once, not again by every rule it takes part in.
class Seen {
public:
  void ok(std::string_view key, const Json* value) { ok_.emplace_back(key, value); }
  void bad(std::string_view key) { bad_.push_back(key); }
  // The value as written, or nullptr if the key is missing or bad.
  [[nodiscard]] const Json* written(std::string_view key) const;
  // Missing or read without error.
  [[nodiscard]] bool usable(std::string_view key) const;

private:
  std::vector<std::pair<std::string_view, const Json*>> ok_;
  std::vector<std::string_view> bad_;
};

// One side of a broken cross-field rule: the key and the expectation worded from its side.
struct Blame {
  std::string_view key;
  std::string expected;
};

// Reports a broken rule between `dependent` and `other` on the key the document wrote: dependent
// if it was written, else other (whose expectation then names dependent's default). Nothing when
// either key is bad (already reported).
void blame(Errors& errors, std::string_view pointer, const Seen& seen, Blame dependent,
           Blame other);

}  // namespace wheelbeat::config::detail
