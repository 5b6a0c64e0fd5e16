// dubbo_url: exact strings of Dubbo's encoding, paths and URLs, parsing of real and odd child
// names, and Dubbo's consumer/provider matching rules.
#include "dubbo_url.h"

#include <doctest/doctest.h>

#include <string>
#include <vector>

namespace {

using namespace wheelbeat::registry::dubbo;

std::string decoded(std::string_view s) {
  std::string out;
  REQUIRE(decode(s, out));
  return out;
}

ProviderOptions greeterProvider() {
  ProviderOptions o;
  o.host = "10.0.0.5";
  o.port = 20880;
  o.interface = "com.acme.Greeter";
  o.application = "greeter-app";
  o.version = "1.0.0";
  o.methods = {"sayHello", "sayBye"};
  o.pid = 4242;
  o.timestampMs = 1700000000000;
  o.timeoutMs = 3000;
  o.heartbeatMs = 60000;
  return o;
}

DubboUrl parsed(const std::string& url) {
  const ParsedUrl r = parseUrl(url);
  REQUIRE_MESSAGE(r.ok, r.error);
  return r.url;
}

// A provider as Dubbo 2.7.8 registers it (ZookeeperRegistry: URL.encode(url.toFullString())).
constexpr const char* kRealDubboChild =
    "dubbo%3A%2F%2F192.168.0.102%3A20880%2Forg.apache.dubbo.demo.DemoService%3Fanyhost%3Dtrue%26"
    "application%3Ddemo-provider%26deprecated%3Dfalse%26dubbo%3D2.0.2%26dynamic%3Dtrue%26generic%"
    "3Dfalse%26interface%3Dorg.apache.dubbo.demo.DemoService%26methods%3DsayHello%2CsayHelloAsync%"
    "26pid%3D13436%26release%3D2.7.8%26side%3Dprovider%26timestamp%3D1600249463960";

}  // namespace

TEST_SUITE("dubbo_url") {

TEST_CASE("encode is java.net.URLEncoder in UTF-8") {
  CHECK(encode("AZaz09.-*_") == "AZaz09.-*_");
  CHECK(encode("a b") == "a+b");
  CHECK(encode("a+b/c:d?e=f&g,h~") == "a%2Bb%2Fc%3Ad%3Fe%3Df%26g%2Ch%7E");
  CHECK(encode("\xC3\xA9") == "%C3%A9");  // é in UTF-8
  CHECK(encode("%") == "%25");
  CHECK(encode("") == "");
}

TEST_CASE("decode is java.net.URLDecoder and refuses broken escapes") {
  CHECK(decoded("a+b%2Bc%2fd") == "a b+c/d");  // either case of hex digits
  CHECK(decoded("%C3%A9") == "\xC3\xA9");
  CHECK(decoded("plain") == "plain");
  std::string out;
  CHECK_FALSE(decode("%", out));
  CHECK_FALSE(decode("%4", out));
  CHECK_FALSE(decode("%G1", out));
  CHECK_FALSE(decode("abc%2", out));
  // Round trip of every byte.
  std::string all;
  for (int c = 0; c < 256; ++c) all += static_cast<char>(c);
  CHECK(decoded(encode(all)) == all);
}

TEST_CASE("paths follow Dubbo's ZooKeeper layout") {
  CHECK(rootPath("") == "/dubbo");
  CHECK(rootPath("dubbo") == "/dubbo");
  CHECK(rootPath("/custom") == "/custom");
  CHECK(servicePath("", "org.apache.dubbo.demo.DemoService") ==
        "/dubbo/org.apache.dubbo.demo.DemoService");
  CHECK(categoryPath("", "com.acme.Greeter", Category::Providers) ==
        "/dubbo/com.acme.Greeter/providers");
  CHECK(categoryPath("team", "com.acme.Greeter", Category::Consumers) ==
        "/team/com.acme.Greeter/consumers");
  CHECK(categoryPath("", "com.acme.Greeter", Category::Configurators) ==
        "/dubbo/com.acme.Greeter/configurators");
  CHECK(categoryPath("", "com.acme.Greeter", Category::Routers) ==
        "/dubbo/com.acme.Greeter/routers");
  // An interface name with characters outside the unreserved set is encoded in the path.
  CHECK(servicePath("", "a/b c") == "/dubbo/a%2Fb+c");
}

TEST_CASE("a provider URL has Dubbo's parameters sorted by key") {
  const DubboUrl url = providerUrl(greeterProvider());
  CHECK(url.toFullString() ==
        "dubbo://10.0.0.5:20880/com.acme.Greeter?anyhost=true&application=greeter-app"
        "&category=providers&default.timeout=3000&dubbo=2.0.2&heartbeat=60000"
        "&interface=com.acme.Greeter&methods=sayHello,sayBye&pid=4242&side=provider"
        "&timestamp=1700000000000&version=1.0.0");
  CHECK(nodeName(url) ==
        "dubbo%3A%2F%2F10.0.0.5%3A20880%2Fcom.acme.Greeter%3Fanyhost%3Dtrue%26application%3D"
        "greeter-app%26category%3Dproviders%26default.timeout%3D3000%26dubbo%3D2.0.2%26heartbeat"
        "%3D60000%26interface%3Dcom.acme.Greeter%26methods%3DsayHello%2CsayBye%26pid%3D4242%26"
        "side%3Dprovider%26timestamp%3D1700000000000%26version%3D1.0.0");
  CHECK(nodePath("", url, Category::Providers) ==
        "/dubbo/com.acme.Greeter/providers/" + nodeName(url));
}

TEST_CASE("unset version and group are left out and a set group is written") {
  ProviderOptions o = greeterProvider();
  o.version.clear();
  o.timeoutMs = 0;
  o.heartbeatMs = 0;
  CHECK(providerUrl(o).toFullString() ==
        "dubbo://10.0.0.5:20880/com.acme.Greeter?anyhost=true&application=greeter-app"
        "&category=providers&dubbo=2.0.2&interface=com.acme.Greeter&methods=sayHello,sayBye"
        "&pid=4242&side=provider&timestamp=1700000000000");
  o.group = "blue";
  CHECK(providerUrl(o).param("group") == "blue");
  CHECK(providerUrl(o).toFullString().find("&group=blue&interface=") != std::string::npos);
}

TEST_CASE("a consumer URL has category consumers and check false") {
  ConsumerOptions o;
  o.host = "10.0.0.9";
  o.interface = "com.acme.Greeter";
  o.application = "web";
  o.version = "1.0.0";
  o.methods = {"sayHello"};
  o.pid = 77;
  o.timestampMs = 1700000000001;
  const DubboUrl url = consumerUrl(o);
  CHECK(url.toFullString() ==
        "consumer://10.0.0.9/com.acme.Greeter?application=web&category=consumers&check=false"
        "&dubbo=2.0.2&interface=com.acme.Greeter&methods=sayHello&pid=77&side=consumer"
        "&timestamp=1700000000001&version=1.0.0");
  CHECK(nodePath("", url, Category::Consumers)
            .rfind("/dubbo/com.acme.Greeter/consumers/consumer%3A", 0) == 0);
}

TEST_CASE("values that would break the query are escaped and read back") {
  ProviderOptions o = greeterProvider();
  o.application = "a&b=c %d";
  const DubboUrl url = providerUrl(o);
  CHECK(url.toFullString().find("application=a%26b%3Dc%20%25d&") != std::string::npos);
  const ParsedUrl back = parseNodeName(nodeName(url));
  REQUIRE(back.ok);
  CHECK(back.url.param("application") == "a&b=c %d");
}

TEST_CASE("a real Dubbo provider child name round-trips") {
  const ParsedUrl r = parseNodeName(kRealDubboChild);
  REQUIRE_MESSAGE(r.ok, r.error);
  CHECK(r.url.protocol == "dubbo");
  CHECK(r.url.host == "192.168.0.102");
  CHECK(r.url.port == 20880);
  CHECK(r.url.path == "org.apache.dubbo.demo.DemoService");
  CHECK(r.url.serviceInterface() == "org.apache.dubbo.demo.DemoService");
  CHECK(r.url.params.size() == 12);
  CHECK(r.url.param("methods") == "sayHello,sayHelloAsync");
  CHECK(r.url.param("application") == "demo-provider");
  CHECK(r.url.param("release") == "2.7.8");  // unknown to us: kept
  CHECK(r.url.param("side") == "provider");
  CHECK_FALSE(r.url.has("version"));
  CHECK(nodeName(r.url) == kRealDubboChild);
}

TEST_CASE("parameters parse in any order") {
  const DubboUrl a = parsed("dubbo://h:1/I?version=2&interface=I&application=x");
  const DubboUrl b = parsed("dubbo://h:1/I?application=x&interface=I&version=2");
  CHECK(a.params == b.params);
  CHECK(a.toFullString() == "dubbo://h:1/I?application=x&interface=I&version=2");
  // A bare key counts as key=key (Dubbo's URL.valueOf), an empty value as unset.
  const DubboUrl c = parsed("dubbo://h/I?anyhost&version=");
  CHECK(c.param("anyhost") == "anyhost");
  CHECK_FALSE(c.has("version"));
  CHECK(c.port == 0);
  CHECK(parsed("dubbo://[::1]:20880/I").host == "[::1]");
  CHECK(parsed("dubbo://[::1]:20880/I").port == 20880);
}

TEST_CASE("double-encoded values are decoded twice") {
  // dubbo-go style: each value encoded, then the whole URL encoded again.
  const std::string name =
      "dubbo%3A%2F%2F10.0.0.1%3A20000%2Fcom.acme.User%3Fapplication%3Dgo%26methods%3DGetUser%252C"
      "GetUser1%26name%3Dfoo%2520bar%26plus%3Da%252Bb";
  const ParsedUrl r = parseNodeName(name);
  REQUIRE_MESSAGE(r.ok, r.error);
  CHECK(r.url.param("methods") == "GetUser,GetUser1");
  CHECK(r.url.param("name") == "foo bar");
  CHECK(r.url.param("plus") == "a+b");
  CHECK(r.url.param("application") == "go");
  // Single-encoded: a '+' left after the one decode is a literal '+'.
  const ParsedUrl single = parseNodeName(encode("dubbo://h:1/I?k=a+b&m=x,y"));
  REQUIRE(single.ok);
  CHECK(single.url.param("k") == "a+b");
  CHECK(single.url.param("m") == "x,y");
}

TEST_CASE("malformed child names give an error and never throw") {
  const std::vector<std::string> bad = {
      "",                                    // nothing
      "%",                                   // broken escape
      "dubbo%3A%2F%2Fh%3A1%2FI%3Fk%3D%ZZ",   // broken escape in the name
      "no-protocol-here",                    // no "://"
      "%3A%2F%2Fhost%2FI",                   // empty protocol
      "dubbo%3A%2F%2Fhost%3Aabc%2FI",        // port not a number
      "dubbo%3A%2F%2Fhost%3A70000%2FI",      // port out of range
      "dubbo%3A%2F%2Fhost%3A%2FI",           // empty port
      "dubbo%3A%2F%2Fh%2FI%3F%3Dv",          // empty parameter name
      "dubbo%3A%2F%2Fh%2FI%3Fk%3D%2541%25",  // second decode of a value fails
  };
  for (const auto& name : bad) {
    CAPTURE(name);
    ParsedUrl r;
    CHECK_NOTHROW(r = parseNodeName(name));
    CHECK_FALSE(r.ok);
    CHECK_FALSE(r.error.empty());
  }
}

TEST_CASE("a provider list skips empty entries and malformed names") {
  CHECK(parseProviders({}).providers.empty());
  CHECK(parseProviders({encode("empty://0.0.0.0/com.acme.Greeter?category=providers")})
            .providers.empty());
  const std::string good = nodeName(providerUrl(greeterProvider()));
  const ProviderList list =
      parseProviders({encode("empty://0.0.0.0/com.acme.Greeter?category=providers"), good, "%zz"});
  REQUIRE(list.providers.size() == 1);
  CHECK(list.providers[0].host == "10.0.0.5");
  REQUIRE(list.skipped.size() == 1);
  CHECK(list.skipped[0].rfind("%zz: ", 0) == 0);
}

TEST_CASE("matching compares interface version and group as Dubbo does") {
  const DubboUrl p = parsed("dubbo://h:1/I?interface=I&version=1.0.0&group=g1");
  CHECK(isMatch(parsed("consumer://c/I?interface=I&version=1.0.0&group=g1"), p));
  CHECK_FALSE(isMatch(parsed("consumer://c/J?interface=J&version=1.0.0&group=g1"), p));
  // version: equal or '*'; unset matches only unset (never "0.0.0").
  CHECK_FALSE(isMatch(parsed("consumer://c/I?interface=I&version=2.0.0&group=g1"), p));
  CHECK(isMatch(parsed("consumer://c/I?interface=I&version=*&group=g1"), p));
  CHECK_FALSE(isMatch(parsed("consumer://c/I?interface=I&group=g1"), p));
  CHECK(isMatch(parsed("consumer://c/I?interface=I"), parsed("dubbo://h:1/I?interface=I")));
  CHECK_FALSE(isMatch(parsed("consumer://c/I?interface=I"),
                      parsed("dubbo://h:1/I?interface=I&version=0.0.0")));
  CHECK(isMatch(parsed("consumer://c/I?interface=I&version="),  // empty = unset
                parsed("dubbo://h:1/I?interface=I")));
  // group: equal, '*', or a member of the consumer's list.
  CHECK(isMatch(parsed("consumer://c/I?interface=I&version=1.0.0&group=*"), p));
  CHECK(isMatch(parsed("consumer://c/I?interface=I&version=1.0.0&group=g0,g1"), p));
  CHECK(isMatch(parsed("consumer://c/I?interface=I&version=1.0.0&group=g0, g1"), p));
  CHECK_FALSE(isMatch(parsed("consumer://c/I?interface=I&version=1.0.0&group=g0,g2"), p));
  CHECK_FALSE(isMatch(parsed("consumer://c/I?interface=I&version=1.0.0"), p));
  CHECK_FALSE(isMatch(parsed("consumer://c/I?interface=I&version=1.0.0&group=g1"),
                      parsed("dubbo://h:1/I?interface=I&version=1.0.0")));
  // interface '*' on either side; the path stands in for a missing interface parameter.
  CHECK(isMatch(parsed("consumer://c/*?interface=*&version=1.0.0&group=g1"), p));
  CHECK(isMatch(parsed("consumer://c/I?version=1.0.0&group=g1"), p));
  // A disabled provider matches only a consumer asking enabled=*.
  const DubboUrl off = parsed("dubbo://h:1/I?interface=I&enabled=false");
  CHECK_FALSE(isMatch(parsed("consumer://c/I?interface=I"), off));
  CHECK(isMatch(parsed("consumer://c/I?interface=I&enabled=*"), off));
  // classifier: consumer unset or '*' matches any; otherwise equal.
  CHECK(isMatch(parsed("consumer://c/I?interface=I&classifier=x"),
                parsed("dubbo://h:1/I?interface=I&classifier=x")));
  CHECK_FALSE(isMatch(parsed("consumer://c/I?interface=I&classifier=x"),
                      parsed("dubbo://h:1/I?interface=I")));
}

TEST_CASE("the builders and the parser agree") {
  const DubboUrl built = providerUrl(greeterProvider());
  const ParsedUrl back = parseNodeName(nodeName(built));
  REQUIRE(back.ok);
  CHECK(back.url.protocol == built.protocol);
  CHECK(back.url.host == built.host);
  CHECK(back.url.port == built.port);
  CHECK(back.url.path == built.path);
  CHECK(back.url.params == built.params);
  ConsumerOptions c;
  c.host = "10.0.0.9";
  c.interface = "com.acme.Greeter";
  c.version = "1.0.0";
  CHECK(isMatch(consumerUrl(c), built));
  c.version = "2.0.0";
  CHECK_FALSE(isMatch(consumerUrl(c), built));
}

}  // TEST_SUITE("dubbo_url")
