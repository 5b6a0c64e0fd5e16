#include "fields.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <utility>

namespace wheelbeat::config::detail {

std::string childPointer(std::string_view parent, std::string_view key) {
  std::string out(parent);
  out += '/';
  for (char c : key) {
    if (c == '~') {
      out += "~0";
    } else if (c == '/') {
      out += "~1";
    } else {
      out += c;
    }
  }
  return out;
}

std::string childPointer(std::string_view parent, std::size_t index) {
  return fmt::format("{}/{}", parent, index);
}

std::string dumped(const Json& value) {
  // The parser only lets valid UTF-8 in; `replace` keeps dump() from throwing regardless.
  return value.dump(-1, ' ', false, Json::error_handler_t::replace);
}

const Json* Seen::written(std::string_view key) const {
  for (const auto& [name, value] : ok_) {
    if (name == key) return value;
  }
  return nullptr;
}

bool Seen::usable(std::string_view key) const {
  return std::ranges::none_of(bad_, [key](std::string_view name) { return name == key; });
}

void blame(Errors& errors, std::string_view pointer, const Seen& seen, Blame dependent,
           Blame other) {
  if (!seen.usable(dependent.key) || !seen.usable(other.key)) return;
  if (const Json* v = seen.written(dependent.key)) {
    errors.add(childPointer(pointer, dependent.key), *v, std::move(dependent.expected));
  } else if (const Json* w = seen.written(other.key)) {
    errors.add(childPointer(pointer, other.key), *w, std::move(other.expected));
  } else {
    // Both defaulted: the defaults themselves break the rule (a base policy the caller chose).
    errors.add(childPointer(pointer, dependent.key), Json(nullptr), std::move(dependent.expected));
  }
}

std::string inKeyTerms(std::string text, std::span<const std::string_view> members,
                       std::span<const std::string_view> names) {
  auto isWord = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_'; };
  for (std::size_t i = 0; i < members.size(); ++i) {
    const std::string_view member = members[i];
    if (member == names[i]) continue;
    for (std::size_t at = text.find(member); at != std::string::npos;
         at = text.find(member, at + 1)) {
      const std::size_t end = at + member.size();
      const bool whole = (at == 0 || (!isWord(text[at - 1]) && text[at - 1] != '.')) &&
                         (end == text.size() || !isWord(text[end]));
      if (whole) text.replace(at, member.size(), names[i]);
    }
  }
  return text;
}

namespace {

// "<op> member = value" (a rule between two members) as "member", "<flipped op>"; empty when
// `expected` is not of that form.
std::pair<std::string, std::string_view> otherSide(std::string_view expected) {
  static constexpr std::pair<std::string_view, std::string_view> kFlips[] = {
      {">= ", "<="}, {"<= ", ">="}, {"> ", "<"}, {"< ", ">"}};
  for (const auto& [op, flipped] : kFlips) {
    if (!expected.starts_with(op)) continue;
    const std::string_view rest = expected.substr(op.size());
    const std::size_t eq = rest.find(" = ");
    const std::string_view member = rest.substr(0, eq);
    const bool word =
        eq != std::string_view::npos && !member.empty() && std::ranges::all_of(member, [](char c) {
          return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '.';
        });
    if (word) return {std::string(member), flipped};
    break;
  }
  return {};
}

}  // namespace

core::OptionError optionErrorOf(std::string_view what) {
  constexpr std::string_view kIs = " = ";
  constexpr std::string_view kExpected = " (expected: ";
  const std::size_t dot = what.find('.');
  const std::size_t is = what.find(kIs);
  const std::size_t expected = what.find(kExpected);
  if (dot == std::string_view::npos || is == std::string_view::npos ||
      expected == std::string_view::npos || !(dot < is && is < expected) || !what.ends_with(')')) {
    return core::OptionError("", "", std::string(what), "");
  }
  const std::string field(what.substr(dot + 1, is - dot - 1));
  const std::string value(what.substr(is + kIs.size(), expected - is - kIs.size()));
  const std::size_t from = expected + kExpected.size();
  const std::string_view rule = what.substr(from, what.size() - from - 1);
  auto [other, flipped] = otherSide(rule);
  std::string otherExpected =
      other.empty() ? std::string() : fmt::format("{} {} = {}", flipped, field, value);
  return core::OptionError(std::string(what.substr(0, dot)), field, value, std::string(rule),
                           std::move(other), std::move(otherExpected));
}

std::string knownKeysText(std::span<const std::string_view> names) {
  return fmt::format("a known key: {}", fmt::join(names, ", "));
}

}  // namespace wheelbeat::config::detail
