// Sections owned by net/registry/ (the discovery part: compiled only with the registry):
// "registry" (registry::RegistryOptions), and "service" (registry::ServiceOptions) for its
// service urls. The rules of "service" are ServiceOptions' validate() for a consumer (methods
// may be empty); a provider's url needs at least one method, which providerUrl() checks when the
// url is built.
#include "sections.h"

#include <array>

namespace wheelbeat::config::detail {
namespace {

using G = registry::RegistryOptions;
using V = registry::ServiceOptions;

constexpr EnumCodec<registry::RegistryKind, 3> kKind{
    {"embedded", "redis", "zookeeper"},
    {registry::RegistryKind::Embedded, registry::RegistryKind::Redis,
     registry::RegistryKind::ZooKeeper}};

constexpr Field<G> kRegistryFields[] = {
    field<G, &G::kind, kKind>("kind", "kind", "The registry engine."),
    field<G, &G::address, kEndpoint>(
        "address", "address",
        "The registry node (embedded), redis-server or a ZooKeeper server, port 1..65535."),
    field<G, &G::group, kString>(
        "group", "group", "Namespace of every key (Dubbo's group): non-empty, no whitespace."),
    field<G, &G::session, kDuration>(
        "session", "session",
        "A registration not renewed within this time expires (renewed every session / 2), >= "
        "1s."),
};

constexpr NameCodec kInterface{false, "/?", "a non-empty name without whitespace, '/' or '?'"};
constexpr NameCodec kApplication{false, "", "a non-empty name without whitespace"};
constexpr NameCodec kVersion{true, "", "a string without whitespace (\"\" = unversioned)"};
constexpr NameCodec kGroup{true, "", "a string without whitespace (\"\" = none)"};
constexpr NameListCodec kMethods{{},
                                 {false, ",", "a non-empty method name without whitespace or ','"},
                                 "an array of method names"};
// > 0, in whole milliseconds: the url carries it as default.timeout in ms.
constexpr MillisCodec kTimeout{"a whole number of milliseconds (the url's default.timeout)"};
// Stricter than validate() (no whitespace either): the scheme of a url.
constexpr NameCodec kProtocol{false, ":/?",
                              "a non-empty url scheme without whitespace, ':', '/' or '?'"};

constexpr Field<V> kServiceFields[] = {
    field<V, &V::interface, kInterface>(
        "interface", "interface",
        "The service's name, Dubbo's interface (e.g. \"org.example.Greeter\"): the provider "
        "url's path and its interface parameter. Required: non-empty, no whitespace, '/' or '?'."),
    field<V, &V::application, kApplication>(
        "application", "application",
        "Dubbo's application.name (the url's application): non-empty, no whitespace."),
    field<V, &V::version, kVersion>(
        "version", "version",
        "The url's version, no whitespace. \"\" = unversioned: left out of the url, never "
        "written as \"0.0.0\" (Dubbo consumers match versions exactly). A consumer may ask "
        "\"*\" for any."),
    field<V, &V::group, kGroup>("group", "group",
                                "The url's group, no whitespace. \"\" = none: left out of the "
                                "url. A consumer may ask \"*\" for any, or \"a,b\" for either."),
    field<V, &V::methods, kMethods>(
        "methods", "methods",
        "The methods a provider serves (the url's methods, joined by ','): non-empty names "
        "without whitespace or ','. Dubbo consumers refuse a provider without any, so a provider "
        "needs at least one (checked when its url is built)."),
    field<V, &V::timeout, kTimeout>(
        "timeout", "timeout",
        "The call timeout the provider advises (the url's default.timeout, in ms), > 0, a whole "
        "number of milliseconds (Dubbo: 1000ms)."),
    field<V, &V::protocol, kProtocol>(
        "protocol", "protocol",
        "The provider url's scheme: non-empty, no whitespace, ':', '/' or '?'. Dubbo consumers "
        "speak \"dubbo\"."),
};

}  // namespace

constexpr Section<G> kRegistrySection{kRegistryFields, [](const G& o) { registry::validate(o); }};
// The service's name has no default: a section without it names no service.
constexpr Section<V> kServiceSection{kServiceFields,
                                     [](const V& o) { registry::validate(o, false); },
                                     {},
                                     "interface",
                                     kInterface.expected};

}  // namespace wheelbeat::config::detail
