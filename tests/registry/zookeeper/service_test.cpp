// ServiceOptions: the provider url Dubbo consumers accept (exact parameters, sorted; pid and
// timestamp this process's), the consumer url, validation naming the field, and Dubbo's matching
// of a consumer's version and group against providers.
#include <wheelbeat/registry/service.h>

#include <doctest/doctest.h>
#include <unistd.h>

#include <stdexcept>
#include <string>

using namespace std::chrono_literals;
using wheelbeat::registry::ServiceOptions;
namespace registry = wheelbeat::registry;

namespace {

ServiceOptions greeter() {
  ServiceOptions o;
  o.interface = "org.example.Greeter";
  o.application = "shop";
  o.version = "1.0.0";
  o.methods = {"sayHello", "sayBye"};
  return o;
}

std::string errorOf(const ServiceOptions& o, bool provider) {
  try {
    registry::validate(o, provider);
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "accepted";
}

}  // namespace

TEST_SUITE("dubbo_url") {

TEST_CASE("service: the provider url has Dubbo's parameters in Dubbo's order") {
  const std::string url = registry::providerUrl(greeter(), {"10.0.0.5", 20880}, 60s);
  const std::string pid = fmt::format("&pid={}&", ::getpid());
  CHECK(
      url.starts_with("dubbo://10.0.0.5:20880/org.example.Greeter?anyhost=true&application=shop&"
                      "category=providers&default.timeout=1000&dubbo=2.0.2&heartbeat=60000&"
                      "interface=org.example.Greeter&methods=sayHello,sayBye" +
                      pid + "side=provider&timestamp="));
  CHECK(url.ends_with("&version=1.0.0"));
  ServiceOptions unversioned = greeter();
  unversioned.version.clear();
  unversioned.group = "blue";
  const std::string u2 = registry::providerUrl(unversioned, {"10.0.0.5", 20880}, 5s);
  CHECK(u2.find("version=") == std::string::npos);  // never "0.0.0": see service.h
  CHECK(u2.find("&group=blue&") != std::string::npos);
  CHECK(u2.find("&heartbeat=5000&") != std::string::npos);
}

TEST_CASE("service: the consumer url") {
  const std::string url = registry::consumerUrl(greeter(), "10.0.0.6");
  CHECK(url.starts_with(
      "consumer://10.0.0.6/org.example.Greeter?application=shop&category=consumers&check=false&"
      "dubbo=2.0.2&interface=org.example.Greeter&methods=sayHello,sayBye&pid="));
  CHECK(url.find("&side=consumer&timestamp=") != std::string::npos);
  CHECK(url.ends_with("&version=1.0.0"));
}

TEST_CASE("service: bad options name the field, the value and the expectation") {
  ServiceOptions o = greeter();
  o.interface = "";
  CHECK(
      errorOf(o, true) ==
      R"(ServiceOptions.interface = "" (expected: a non-empty name without whitespace, '/' or '?'))");
  o = greeter();
  o.application = "";
  CHECK(errorOf(o, true) ==
        R"(ServiceOptions.application = "" (expected: a non-empty name without whitespace))");
  o = greeter();
  o.methods.clear();
  CHECK(errorOf(o, true) ==
        "ServiceOptions.methods = \"\" (expected: at least one method name "
        "(Dubbo consumers refuse a provider without))");
  CHECK(errorOf(o, false) == "accepted");  // a consumer may name none
  o = greeter();
  o.methods = {"say,Hello"};
  CHECK(errorOf(o, true) ==
        R"(ServiceOptions.methods = "say,Hello" (expected: names without whitespace or ','))");
  o = greeter();
  o.timeout = 0ms;
  CHECK(errorOf(o, true) == R"(ServiceOptions.timeout = "0ms" (expected: > 0))");
  CHECK_THROWS_AS((void)registry::providerUrl(o, {"h", 1}, 1s), std::invalid_argument);
}

TEST_CASE("service: a consumer matches providers as Dubbo does") {
  const auto provider = [](std::string_view version, std::string_view group) {
    ServiceOptions p = greeter();
    p.version = std::string(version);
    p.group = std::string(group);
    return registry::providerUrl(p, {"10.0.0.5", 20880}, 60s);
  };
  ServiceOptions consumer = greeter();
  CHECK(registry::matches(consumer, provider("1.0.0", "")));
  CHECK_FALSE(registry::matches(consumer, provider("2.0.0", "")));
  CHECK_FALSE(registry::matches(consumer, provider("", "")));  // none is not "1.0.0"
  consumer.version = "*";
  CHECK(registry::matches(consumer, provider("2.0.0", "")));
  consumer.version.clear();
  CHECK(registry::matches(consumer, provider("", "")));
  CHECK_FALSE(registry::matches(consumer, provider("0.0.0", "")));
  consumer.group = "a,b";
  CHECK(registry::matches(consumer, provider("", "b")));
  CHECK_FALSE(registry::matches(consumer, provider("", "c")));
  CHECK_FALSE(registry::matches(consumer, provider("", "")));  // a group was asked for
  consumer.interface = "org.example.Other";
  consumer.group.clear();
  CHECK_FALSE(registry::matches(consumer, provider("", "")));
  CHECK_FALSE(registry::matches(consumer, "not a url"));
  consumer = greeter();
  CHECK_FALSE(registry::matches(consumer, registry::consumerUrl(greeter(), "10.0.0.6")));
}

}  // TEST_SUITE("dubbo_url")
