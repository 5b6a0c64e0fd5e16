#include "dubbo_url.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <utility>

namespace wheelbeat::registry::dubbo {

namespace {

constexpr char kHex[] = "0123456789ABCDEF";

bool isUnreserved(unsigned char c) noexcept {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '.' ||
         c == '-' || c == '*' || c == '_';
}

int hexValue(char c) noexcept {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return -1;
}

void appendPercent(std::string& out, unsigned char c) {
  out += '%';
  out += kHex[c >> 4];
  out += kHex[c & 0x0F];
}

// Characters a raw query value cannot hold without changing the query's structure.
bool breaksQuery(unsigned char c) noexcept {
  return c == '%' || c == '&' || c == '=' || c == '#' || c == '?' || c == ' ' || c < 0x20 ||
         c == 0x7F;
}

std::string escapeValue(std::string_view v) {
  std::string out;
  out.reserve(v.size());
  for (const char ch : v) {
    const auto c = static_cast<unsigned char>(ch);
    if (breaksQuery(c)) {
      appendPercent(out, c);
    } else {
      out += ch;
    }
  }
  return out;
}

// True if `v` holds a %XX sequence: a value its writer encoded once more.
bool looksEncoded(std::string_view v) noexcept {
  for (std::size_t i = 0; i + 2 < v.size(); ++i) {
    if (v[i] == '%' && hexValue(v[i + 1]) >= 0 && hexValue(v[i + 2]) >= 0) return true;
  }
  return false;
}

std::string joinMethods(const std::vector<std::string>& methods) {
  return fmt::format("{}", fmt::join(methods, ","));
}

void putIf(std::map<std::string, std::string>& params, const std::string& key,
           const std::string& value) {
  if (!value.empty()) params[key] = value;
}

void putIf(std::map<std::string, std::string>& params, const std::string& key, std::int64_t value) {
  if (value != 0) params[key] = std::to_string(value);
}

ParsedUrl failure(std::string why) {
  ParsedUrl r;
  r.error = std::move(why);
  return r;
}

// "host[:port]" → host and port; false on a bad port.
bool splitAuthority(std::string_view authority, DubboUrl& url) {
  // Dubbo allows user:password@ in front; the registry URLs we read never carry it, so drop it.
  if (const auto at = authority.rfind('@'); at != std::string_view::npos) {
    authority.remove_prefix(at + 1);
  }
  const auto colon = authority.rfind(':');
  const auto bracket = authority.rfind(']');  // [v6]:port
  if (colon == std::string_view::npos || (bracket != std::string_view::npos && colon < bracket)) {
    url.host = std::string(authority);
    return true;
  }
  url.host = std::string(authority.substr(0, colon));
  const std::string_view port = authority.substr(colon + 1);
  unsigned value = 0;
  const auto [end, ec] = std::from_chars(port.data(), port.data() + port.size(), value);
  if (port.empty() || ec != std::errc{} || end != port.data() + port.size() || value > 65535) {
    return false;
  }
  url.port = static_cast<std::uint16_t>(value);
  return true;
}

// "k=v&k2=v2" into params; values decoded once more when they still look encoded.
bool parseQuery(std::string_view query, DubboUrl& url, std::string& error) {
  while (!query.empty()) {
    const auto amp = query.find('&');
    const std::string_view part = query.substr(0, amp);
    query = amp == std::string_view::npos ? std::string_view{} : query.substr(amp + 1);
    if (part.empty()) continue;
    const auto eq = part.find('=');
    // Dubbo keeps a bare "key" as key=key.
    const std::string key(part.substr(0, eq));
    std::string value(eq == std::string_view::npos ? part : part.substr(eq + 1));
    if (key.empty()) {
      error = fmt::format("empty parameter name in '{}'", part);
      return false;
    }
    if (looksEncoded(value)) {
      std::string decoded;
      if (!decode(value, decoded)) {
        error = fmt::format("parameter '{}': bad percent-encoding in '{}'", key, value);
        return false;
      }
      value = std::move(decoded);
    }
    url.params[key] = std::move(value);
  }
  return true;
}

bool listContains(std::string_view list, std::string_view value) {
  // Dubbo splits on commas with any blanks around them.
  while (!list.empty()) {
    const auto comma = list.find(',');
    std::string_view item = list.substr(0, comma);
    list = comma == std::string_view::npos ? std::string_view{} : list.substr(comma + 1);
    while (!item.empty() && item.front() == ' ') item.remove_prefix(1);
    while (!item.empty() && item.back() == ' ') item.remove_suffix(1);
    if (!item.empty() && item == value) return true;
  }
  return false;
}

}  // namespace

std::string_view categoryName(Category c) noexcept {
  switch (c) {
    case Category::Providers: return "providers";
    case Category::Consumers: return "consumers";
    case Category::Configurators: return "configurators";
    case Category::Routers: return "routers";
  }
  return "providers";
}

std::string encode(std::string_view raw) {
  std::string out;
  out.reserve(raw.size() * 3 / 2);
  for (const char ch : raw) {
    const auto c = static_cast<unsigned char>(ch);
    if (isUnreserved(c)) {
      out += ch;
    } else if (c == ' ') {
      out += '+';
    } else {
      appendPercent(out, c);
    }
  }
  return out;
}

bool decode(std::string_view encoded, std::string& out) {
  out.clear();
  out.reserve(encoded.size());
  for (std::size_t i = 0; i < encoded.size(); ++i) {
    const char c = encoded[i];
    if (c == '+') {
      out += ' ';
    } else if (c != '%') {
      out += c;
    } else {
      if (i + 2 >= encoded.size()) return false;
      const int hi = hexValue(encoded[i + 1]);
      const int lo = hexValue(encoded[i + 2]);
      if (hi < 0 || lo < 0) return false;
      out += static_cast<char>((hi << 4) | lo);
      i += 2;
    }
  }
  return true;
}

std::string rootPath(std::string_view root) {
  while (!root.empty() && root.front() == '/') root.remove_prefix(1);
  return fmt::format("/{}", root.empty() ? kDefaultRoot : root);
}

std::string servicePath(std::string_view root, std::string_view interface) {
  return fmt::format("{}/{}", rootPath(root), encode(interface));
}

std::string categoryPath(std::string_view root, std::string_view interface, Category category) {
  return fmt::format("{}/{}", servicePath(root, interface), categoryName(category));
}

std::string DubboUrl::param(const std::string& key, const std::string& fallback) const {
  const auto it = params.find(key);
  return it == params.end() || it->second.empty() ? fallback : it->second;
}

bool DubboUrl::has(const std::string& key) const { return !param(key).empty(); }

std::string DubboUrl::serviceInterface() const { return param("interface", path); }

std::string DubboUrl::toFullString() const {
  std::string out = fmt::format("{}://{}", protocol, host);
  if (port != 0) out += fmt::format(":{}", port);
  out += '/';
  out += path;
  char sep = '?';
  for (const auto& [key, value] : params) {  // std::map: sorted by key, as Dubbo writes them
    out += sep;
    out += escapeValue(key);
    out += '=';
    out += escapeValue(value);
    sep = '&';
  }
  return out;
}

DubboUrl providerUrl(const ProviderOptions& o) {
  DubboUrl url;
  url.protocol = o.protocol;
  url.host = o.host;
  url.port = o.port;
  url.path = o.interface;
  auto& p = url.params;
  p["anyhost"] = "true";
  p["category"] = std::string(categoryName(Category::Providers));
  p["dubbo"] = std::string(kDubboProtocolVersion);
  p["side"] = "provider";
  putIf(p, "interface", o.interface);
  putIf(p, "application", o.application);
  putIf(p, "version", o.version);
  putIf(p, "group", o.group);
  putIf(p, "methods", joinMethods(o.methods));
  putIf(p, "pid", o.pid);
  putIf(p, "timestamp", o.timestampMs);
  putIf(p, "default.timeout", o.timeoutMs);
  putIf(p, "heartbeat", o.heartbeatMs);
  return url;
}

DubboUrl consumerUrl(const ConsumerOptions& o) {
  DubboUrl url;
  url.protocol = "consumer";
  url.host = o.host;
  url.path = o.interface;
  auto& p = url.params;
  p["category"] = std::string(categoryName(Category::Consumers));
  p["check"] = "false";
  p["dubbo"] = std::string(kDubboProtocolVersion);
  p["side"] = "consumer";
  putIf(p, "interface", o.interface);
  putIf(p, "application", o.application);
  putIf(p, "version", o.version);
  putIf(p, "group", o.group);
  putIf(p, "methods", joinMethods(o.methods));
  putIf(p, "pid", o.pid);
  putIf(p, "timestamp", o.timestampMs);
  return url;
}

std::string nodeName(const DubboUrl& url) { return encode(url.toFullString()); }

std::string nodePath(std::string_view root, const DubboUrl& url, Category category) {
  return fmt::format("{}/{}", categoryPath(root, url.serviceInterface(), category), nodeName(url));
}

ParsedUrl parseUrl(std::string_view text) noexcept {
  try {
    const auto scheme = text.find("://");
    if (scheme == std::string_view::npos || scheme == 0) {
      return failure(fmt::format("no protocol in '{}'", text));
    }
    ParsedUrl r;
    r.url.protocol = std::string(text.substr(0, scheme));
    std::string_view rest = text.substr(scheme + 3);
    const auto question = rest.find('?');
    const std::string_view query =
        question == std::string_view::npos ? std::string_view{} : rest.substr(question + 1);
    rest = rest.substr(0, question);
    const auto slash = rest.find('/');
    const std::string_view authority = rest.substr(0, slash);
    if (slash != std::string_view::npos) r.url.path = std::string(rest.substr(slash + 1));
    if (!splitAuthority(authority, r.url)) {
      return failure(fmt::format("bad port in '{}'", authority));
    }
    if (!parseQuery(query, r.url, r.error)) return failure(r.error);
    r.ok = true;
    return r;
  } catch (const std::exception& e) {  // allocation failure: still an error value
    return failure(e.what());
  }
}

ParsedUrl parseNodeName(std::string_view name) noexcept {
  try {
    std::string decoded;
    if (!decode(name, decoded)) return failure(fmt::format("bad percent-encoding in '{}'", name));
    return parseUrl(decoded);
  } catch (const std::exception& e) {
    return failure(e.what());
  }
}

ProviderList parseProviders(const std::vector<std::string>& children) {
  ProviderList out;
  for (const auto& child : children) {
    ParsedUrl r = parseNodeName(child);
    if (!r.ok) {
      out.skipped.push_back(fmt::format("{}: {}", child, r.error));
    } else if (r.url.protocol != "empty") {
      out.providers.push_back(std::move(r.url));
    }
  }
  return out;
}

bool isMatch(const DubboUrl& consumer, const DubboUrl& provider) {
  const std::string ci = consumer.serviceInterface();
  const std::string pi = provider.serviceInterface();
  if (ci != "*" && pi != "*" && ci != pi) return false;
  if (provider.param("enabled", "true") == "false" && consumer.param("enabled") != "*") {
    return false;
  }
  const std::string cg = consumer.param("group");
  const std::string pg = provider.param("group");
  const bool groupOk = cg == "*" || cg == pg || (!cg.empty() && listContains(cg, pg));
  const std::string cv = consumer.param("version");
  const bool versionOk = cv == "*" || cv == provider.param("version");
  const std::string cc = consumer.param("classifier", "*");
  const bool classifierOk = cc == "*" || cc == provider.param("classifier", "*");
  return groupOk && versionOk && classifierOk;
}

}  // namespace wheelbeat::registry::dubbo
