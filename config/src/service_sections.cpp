// The section owned by net/registry/'s service urls: "service" (registry::ServiceOptions). The
// rules are ServiceOptions' validate() for a consumer (methods may be empty); a provider's url
// needs at least one method, which providerUrl() checks when the url is built.
#include "sections.h"
#include "values.h"

#include <fmt/format.h>

#include <array>
#include <chrono>

namespace wheelbeat::config::detail {
namespace {

using registry::ServiceOptions;

// What one name of the section may be: never whitespace (ServiceOptions' set), nor `forbidden`.
struct NameRule {
  bool emptyOk;
  std::string_view forbidden;
  std::string_view expected;
};

constexpr std::string_view kSpace = " \t\r\n\v\f";
constexpr NameRule kInterface{false, "/?", "a non-empty name without whitespace, '/' or '?'"};
constexpr NameRule kApplication{false, "", "a non-empty name without whitespace"};
constexpr NameRule kVersion{true, "", "a string without whitespace (\"\" = unversioned)"};
constexpr NameRule kGroup{true, "", "a string without whitespace (\"\" = none)"};
constexpr NameRule kMethod{false, ",", "a non-empty method name without whitespace or ','"};
// Stricter than validate() (no whitespace either): the scheme of a url.
constexpr NameRule kProtocol{false, ":/?",
                             "a non-empty url scheme without whitespace, ':', '/' or '?'"};

bool fits(const Json& value, const NameRule& rule) {
  if (!value.is_string()) return false;
  const auto& s = value.get_ref<const std::string&>();
  return (rule.emptyOk || !s.empty()) && s.find_first_of(kSpace) == std::string::npos &&
         s.find_first_of(rule.forbidden) == std::string::npos;
}

bool readName(Errors& errors, const Json& value, const std::string& pointer, std::string& out,
              const NameRule& rule) {
  if (!fits(value, rule)) {
    errors.add(pointer, value, std::string(rule.expected));
    return false;
  }
  out = value.get<std::string>();
  return true;
}

bool readMethods(Errors& errors, const Json& value, const std::string& pointer,
                 std::vector<std::string>& out) {
  if (!value.is_array()) {
    errors.add(pointer, value, "an array of method names");
    return false;
  }
  std::vector<std::string> names(value.size());
  bool ok = true;
  for (std::size_t i = 0; i < value.size(); ++i) {
    ok = readName(errors, value[i], childPointer(pointer, i), names[i], kMethod) && ok;
  }
  if (ok) out = std::move(names);
  return ok;
}

// > 0, in whole milliseconds: the url carries it as default.timeout in ms.
bool readTimeout(Errors& errors, const Json& value, const std::string& pointer,
                 std::chrono::milliseconds& out) {
  nanoseconds d{0};
  if (!readPositiveDuration(errors, value, pointer, d)) return false;
  if (d % std::chrono::milliseconds(1) != nanoseconds(0)) {
    errors.add(pointer, value, "a whole number of milliseconds (the url's default.timeout)");
    return false;
  }
  out = std::chrono::duration_cast<std::chrono::milliseconds>(d);
  return true;
}

using ServiceField = Field<ServiceOptions>;
constexpr std::array<ServiceField, 7> kServiceFields{{
    {"interface", [](Errors& e, const Json& v, const std::string& p,
                     ServiceOptions& o) { return readName(e, v, p, o.interface, kInterface); }},
    {"application",
     [](Errors& e, const Json& v, const std::string& p, ServiceOptions& o) {
       return readName(e, v, p, o.application, kApplication);
     }},
    {"version", [](Errors& e, const Json& v, const std::string& p,
                   ServiceOptions& o) { return readName(e, v, p, o.version, kVersion); }},
    {"group", [](Errors& e, const Json& v, const std::string& p,
                 ServiceOptions& o) { return readName(e, v, p, o.group, kGroup); }},
    {"methods", [](Errors& e, const Json& v, const std::string& p,
                   ServiceOptions& o) { return readMethods(e, v, p, o.methods); }},
    {"timeout", [](Errors& e, const Json& v, const std::string& p,
                   ServiceOptions& o) { return readTimeout(e, v, p, o.timeout); }},
    {"protocol", [](Errors& e, const Json& v, const std::string& p,
                    ServiceOptions& o) { return readName(e, v, p, o.protocol, kProtocol); }},
}};

}  // namespace

bool readService(Errors& errors, const Json& value, const std::string& pointer,
                 registry::ServiceOptions& out) {
  const std::size_t before = errors.size();
  Seen seen;
  if (!readObject<ServiceOptions>(errors, value, pointer, kServiceFields, out, seen)) return false;
  // The service's name has no default: a section without it names no service.
  if (seen.usable("interface") && seen.written("interface") == nullptr) {
    errors.add(childPointer(pointer, "interface"), Json(nullptr),
               fmt::format("{} (required)", kInterface.expected));
  }
  return errors.size() == before;
}

std::vector<KeyInfo> serviceKeys() { return keyInfos<ServiceOptions>(kServiceFields); }

}  // namespace wheelbeat::config::detail
