// Dubbo's ZooKeeper layout and URLs: pure functions, no ZooKeeper and no I/O. Private to the
// library (namespace wheelbeat::registry::dubbo); every function is thread-safe (no shared state).
//
// Layout (Dubbo's ZookeeperRegistry)
//   /{root}/{encoded interface}/{providers|consumers|configurators|routers}/{encoded URL}
//   {root} is the *registry's* group (the `group` parameter of Dubbo's registry address), default
//   "dubbo"; a service's own group travels as the `group` parameter inside its URL, not in the
//   path. Each child's name is the service URL percent-encoded once as a whole (URL.encode).
//
// Encoding (Dubbo's URL.encode = java.net.URLEncoder with UTF-8)
//   A-Z a-z 0-9 . - * _ stay, a space becomes '+', every other byte becomes %XX (upper-case hex).
//   decode() is URLDecoder: '+' → space, %XX → the byte; a '%' not followed by two hex digits is
//   an error (URLDecoder throws there too).
//
// URLs
//   toFullString(): protocol://host[:port]/path?k=v&k=v with the parameters sorted by key (Dubbo
//   sorts them the same way), values written as they are except the few characters that would
//   break the query ('%', '&', '=', '#', '?', space, controls), which are %-encoded — a Java Dubbo
//   reads those back still encoded, our parseNodeName() decodes them.
//   An unset version is left out (no `version` parameter), exactly as Java Dubbo does: its
//   consumers compare versions with equals(), and a consumer without a version (null) matches
//   only providers without one, never "0.0.0". Likewise group: only written when set.
//
// Parsing a child's name (parseNodeName)
//   Decode once, split protocol / host / port / path / query, then decode each value a second time
//   when it still contains a %XX sequence: some clients (dubbo-go among them) encode each value
//   before encoding the whole. Parameters come in any order; unknown ones are kept. A '+' left
//   after the first decode is taken literally (a single-encoded '+' was %2B), unless the value is
//   decoded a second time. Malformed input gives ok == false and a reason: never an exception.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace wheelbeat::registry::dubbo {

inline constexpr std::string_view kDefaultRoot = "dubbo";
inline constexpr std::string_view kDubboProtocolVersion = "2.0.2";

enum class Category { Providers, Consumers, Configurators, Routers };
[[nodiscard]] std::string_view categoryName(Category c) noexcept;

// URL.encode / URL.decode (see the header comment). decode() returns false on a bad '%' sequence
// (out is then unspecified).
[[nodiscard]] std::string encode(std::string_view raw);
[[nodiscard]] bool decode(std::string_view encoded, std::string& out);

// "/{root}" (root "" → "dubbo"; a leading '/' in root is accepted).
[[nodiscard]] std::string rootPath(std::string_view root);
// "/{root}/{encode(interface)}".
[[nodiscard]] std::string servicePath(std::string_view root, std::string_view interface);
// "/{root}/{encode(interface)}/{category}".
[[nodiscard]] std::string categoryPath(std::string_view root, std::string_view interface,
                                       Category category);

// A parsed (or built) Dubbo URL. port 0 = none. Parameters sorted by key.
struct DubboUrl {
  std::string protocol;
  std::string host;
  std::uint16_t port = 0;
  std::string path;  // without the leading '/': the interface for service URLs
  std::map<std::string, std::string> params;

  // The value of `key`, or `fallback` if absent or empty (Dubbo treats an empty value as unset).
  [[nodiscard]] std::string param(const std::string& key, const std::string& fallback = {}) const;
  [[nodiscard]] bool has(const std::string& key) const;
  // params["interface"], else path (Dubbo's getServiceInterface()).
  [[nodiscard]] std::string serviceInterface() const;
  [[nodiscard]] std::string toFullString() const;
};

// What a provider publishes. Empty strings / zero durations are left out of the URL.
struct ProviderOptions {
  std::string host;  // the address consumers connect to
  std::uint16_t port = 0;
  std::string interface;
  std::string application;
  std::string version;  // "" = unversioned (see the header comment)
  std::string group;    // the service's group ("" = none)
  std::vector<std::string> methods;
  std::int64_t pid = 0;
  std::int64_t timestampMs = 0;  // registration time, ms since the epoch
  std::int64_t timeoutMs = 0;    // written as default.timeout (0 = left out)
  std::int64_t heartbeatMs = 0;  // written as heartbeat (0 = left out)
  std::string protocol = "dubbo";
};

// What a consumer publishes (category=consumers, check=false, side=consumer).
struct ConsumerOptions {
  std::string host;
  std::string interface;
  std::string application;
  std::string version;  // "" = unversioned; "*" = any
  std::string group;    // "" = none; "*" = any; "a,b" = either
  std::vector<std::string> methods;
  std::int64_t pid = 0;
  std::int64_t timestampMs = 0;
};

[[nodiscard]] DubboUrl providerUrl(const ProviderOptions& o);
[[nodiscard]] DubboUrl consumerUrl(const ConsumerOptions& o);

// The znode name of a URL: encode(url.toFullString()).
[[nodiscard]] std::string nodeName(const DubboUrl& url);
// categoryPath(root, url.serviceInterface(), category) + "/" + nodeName(url).
[[nodiscard]] std::string nodePath(std::string_view root, const DubboUrl& url, Category category);

struct ParsedUrl {
  bool ok = false;
  DubboUrl url;
  std::string error;  // why, when !ok
};
[[nodiscard]] ParsedUrl parseNodeName(std::string_view name) noexcept;
// Parses an already decoded URL string (values still decoded a second time when encoded).
[[nodiscard]] ParsedUrl parseUrl(std::string_view text) noexcept;

// The children of a providers node → provider URLs: malformed names are skipped (each one
// reported in `skipped`), `empty://` entries dropped; no children or only empty:// = empty list.
struct ProviderList {
  std::vector<DubboUrl> providers;
  std::vector<std::string> skipped;  // "name: reason"
};
[[nodiscard]] ProviderList parseProviders(const std::vector<std::string>& children);

// Dubbo's UrlUtils.isMatch for a consumer and a provider of the same category: interface equal
// (or '*' on either side), the provider not `enabled=false` (unless the consumer asks enabled=*),
// group: consumer '*', equal, or a member of the consumer's comma list "a,b"; version: consumer
// '*' or equal (absent on both sides is equal; absent ≠ "0.0.0"); classifier: consumer absent or
// '*' or equal. Empty values count as absent.
[[nodiscard]] bool isMatch(const DubboUrl& consumer, const DubboUrl& provider);

}  // namespace wheelbeat::registry::dubbo
