// The embedded registry's wire text: exact bodies, round trips, and every malformed input
// refused with a message naming the text and the expectation.
#include "embedded/registry_protocol.h"

#include <doctest/doctest.h>

#include <string>
#include <vector>

using wheelbeat::registry::decodeRegistryMessage;
using wheelbeat::registry::encodeRegistryMessage;
using wheelbeat::registry::RegistryCommand;
using wheelbeat::registry::RegistryMessage;
using wheelbeat::registry::RegistryProtocolError;
using wheelbeat::registry::serviceOfUrl;

namespace {

std::string errorOf(std::string_view body) {
  try {
    (void)decodeRegistryMessage(body);
  } catch (const RegistryProtocolError& e) {
    return e.what();
  }
  return "(accepted)";
}

}  // namespace

TEST_SUITE("registry") {

TEST_CASE("registry protocol: exact bodies of every command") {
  const std::string url = "wheelbeat://10.0.0.7:20880/greeter?weight=100";
  CHECK(encodeRegistryMessage({RegistryCommand::Register, url, {}}) == "register " + url);
  CHECK(encodeRegistryMessage({RegistryCommand::Unregister, url, {}}) == "unregister " + url);
  CHECK(encodeRegistryMessage({RegistryCommand::Subscribe, "greeter", {}}) == "subscribe greeter");
  CHECK(encodeRegistryMessage({RegistryCommand::Unsubscribe, "greeter", {}}) ==
        "unsubscribe greeter");
  CHECK(encodeRegistryMessage({RegistryCommand::Notify,
                               "greeter",
                               {"wheelbeat://a:1/greeter", "wheelbeat://b:2/greeter?x=1"}}) ==
        "notify greeter\nwheelbeat://a:1/greeter\nwheelbeat://b:2/greeter?x=1");
  CHECK(encodeRegistryMessage({RegistryCommand::Notify, "greeter", {}}) == "notify greeter");
}

TEST_CASE("registry protocol: decode reverses encode") {
  const std::vector<RegistryMessage> messages{
      {RegistryCommand::Register, "wheelbeat://h:1/s", {}},
      {RegistryCommand::Unregister, "redis://h:1/s?a=b", {}},
      {RegistryCommand::Subscribe, "s", {}},
      {RegistryCommand::Unsubscribe, "s.v2", {}},
      {RegistryCommand::Notify, "s", {}},
      {RegistryCommand::Notify, "s", {"wheelbeat://h:1/s", "wheelbeat://h:2/s"}},
  };
  for (const auto& m : messages) CHECK(decodeRegistryMessage(encodeRegistryMessage(m)) == m);
}

TEST_CASE("registry protocol: the service of a url") {
  CHECK(serviceOfUrl("wheelbeat://10.0.0.7:20880/greeter?weight=100") == "greeter");
  CHECK(serviceOfUrl("wheelbeat://[::1]:20880/greeter") == "greeter");
  CHECK(serviceOfUrl("x://h/s?") == "s");
}

TEST_CASE("registry protocol: malformed bodies are refused with a clear message") {
  const std::string exp = "(expected: scheme://host:port/service[?query], no whitespace)";
  CHECK(errorOf("") == "registry: message \"\" (expected: \"<command> <subject>\")");
  CHECK(errorOf("register") ==
        "registry: message \"register\" (expected: \"<command> <subject>\")");
  CHECK(errorOf("publish greeter") ==
        "registry: command \"publish\" (expected: register, unregister, subscribe, unsubscribe or "
        "notify)");
  CHECK(errorOf("register greeter") == "registry: url \"greeter\" " + exp);
  CHECK(errorOf("register ://h:1/s") == "registry: url \"://h:1/s\" " + exp);
  CHECK(errorOf("register wheelbeat://h:1") == "registry: url \"wheelbeat://h:1\" " + exp);
  CHECK(errorOf("register wheelbeat:///s") == "registry: url \"wheelbeat:///s\" " + exp);
  CHECK(errorOf("register wheelbeat://h:1/?x") == "registry: url \"wheelbeat://h:1/?x\" " + exp);
  CHECK(errorOf("register wheelbeat://h:1/a/b") == "registry: url \"wheelbeat://h:1/a/b\" " + exp);
  CHECK(errorOf("register wheelbeat://h:1/s x") == "registry: url \"wheelbeat://h:1/s x\" " + exp);
  CHECK(errorOf("subscribe ") ==
        "registry: service \"\" (expected: a non-empty name without whitespace, '/' or '?')");
  CHECK(errorOf("subscribe a/b") ==
        "registry: service \"a/b\" (expected: a non-empty name without whitespace, '/' or '?')");
  CHECK(errorOf("subscribe s\nwheelbeat://h:1/s") ==
        "registry: providers on \"subscribe s\" (expected: providers only on notify)");
  CHECK(errorOf("notify s\nwheelbeat://h:1/t") ==
        "registry: provider \"wheelbeat://h:1/t\" (expected: a url of service s)");
  CHECK(errorOf("notify s\n") == "(accepted)");  // a trailing newline ends the list
}

TEST_CASE("registry protocol: encode refuses what decode would refuse") {
  CHECK_THROWS_AS((void)encodeRegistryMessage({RegistryCommand::Register, "nope", {}}),
                  RegistryProtocolError);
  CHECK_THROWS_AS(
      (void)encodeRegistryMessage({RegistryCommand::Subscribe, "s", {"wheelbeat://h:1/s"}}),
      RegistryProtocolError);
  CHECK_THROWS_AS((void)encodeRegistryMessage({RegistryCommand::Notify, "s", {"x://h:1/t"}}),
                  RegistryProtocolError);
}

}  // TEST_SUITE("registry")
