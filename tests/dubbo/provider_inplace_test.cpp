// Provider::addInPlace (call_view.h): the view of a call is what decodeRequest() reads from its
// body, whether the body was read in place or decoded first; the answers are byte for byte what a
// Handler's would be; a handler that throws, or returns without answering, is answered for.
#include "provider_rig.h"
#include "support.h"

#include <wheelbeat/dubbo/provider.h>
#include <wheelbeat/net/channel.h>

#include <doctest/doctest.h>

#include <stdexcept>
#include <string>
#include <vector>

using namespace wbdubbo;
namespace net = wheelbeat::net;

namespace {

using Rig = ProviderRig;

// A medium-form ASCII string (0x30-0x33 + 1 length byte): 32 to 1023 characters.
std::string medium(std::string_view s) {
  return std::string{static_cast<char>(0x30 + (s.size() >> 8)),
                     static_cast<char>(s.size() & 0xff)} +
         std::string(s);
}

std::string head(std::string_view method, std::string_view descriptor) {
  return str("2.0.2") + str("p") + "N" + str(method) + str(descriptor);
}

// What the view showed, in the Request's terms.
struct Seen {
  std::string dubboVersion{}, path{}, method{}, descriptor{};
  std::optional<std::string> version{};
  std::vector<h::Value> args{};
  std::vector<std::optional<std::string>> stringArgs{};
  std::string timeout{};
  bool requestMatches = false;
};

}  // namespace

TEST_SUITE("dubbo") {
TEST_CASE("in-place provider: the view of each body is what decodeRequest reads") {
  const std::vector<std::string> bodies = {
      // Read in place: ASCII strings, null or string version, with and without attachments.
      head("echo", "Ljava/lang/String;") + str("hi") + "H" + str("timeout") + str("3000") + "Z",
      str("2.0.2") + str("p") + str("1.0") + str("two") + str("LA;LB;") + str("x") + str("") + "HZ",
      head("none", ""),
      // Decoded first: a non-ASCII string, int arguments, a typed map, a null argument.
      head("echo", "Ljava/lang/String;") + "\x02\xc3\xa9z" + "H" + str("timeout") + str("9") + "Z",
      head("add", "II") + "\x91\x92",
      head("none", "") + "M" + str("java.util.HashMap") + str("timeout") + str("7") + "Z",
      head("echo", "Ljava/lang/String;") + "N",
  };
  Rig rig;
  std::vector<Seen> seen;
  rig.provider.addInPlace({.interface = "p", .version = "1.0"}, "two", "LA;LB;",
                          [&](const CallView& call, Answer& answer) {
                            seen.push_back({.method = std::string(call.method())});
                            answer.string("two");
                          });
  rig.provider.addInPlace(
      {.interface = "p"}, std::string(kAnyMethod), std::string(kAnyMethod),
      [&](const CallView& call, Answer& answer) {
        Seen s{.dubboVersion = std::string(call.dubboVersion()),
               .path = std::string(call.path()),
               .method = std::string(call.method()),
               .descriptor = std::string(call.descriptor())};
        if (call.version()) s.version = std::string(*call.version());
        for (std::size_t i = 0; i < call.argCount(); ++i) {
          s.args.push_back(call.arg(i));
          const auto text = call.stringArg(i);
          s.stringArgs.push_back(text ? std::optional<std::string>(*text) : std::nullopt);
        }
        s.timeout = std::string(call.attachment("timeout", "none"));
        const Request& r = call.request();
        s.requestMatches = r.method == call.method() && r.args.size() == call.argCount();
        seen.push_back(std::move(s));
        answer.value(h::Value::null());
      });
  for (const auto& body : bodies) {
    CAPTURE(hex(body));
    const Request expected = decodeRequest(body);
    const std::size_t before = seen.size();
    rig.call(body);
    REQUIRE(seen.size() == before + 1);
    CHECK(rig.channel.status == status::kOk);
    const Seen& s = seen.back();
    if (expected.method == "two") {
      CHECK(s.method == "two");  // the versioned service's own handler
      continue;
    }
    CHECK(s.dubboVersion == expected.dubboVersion);
    CHECK(s.path == expected.path);
    CHECK(s.version == expected.version);
    CHECK(s.method == expected.method);
    CHECK(s.descriptor == expected.descriptor);
    REQUIRE(s.args.size() == expected.args.size());
    for (std::size_t i = 0; i < s.args.size(); ++i) {
      CHECK(h::deepEqual(s.args[i], expected.args[i]));
      const bool isString = expected.args[i].type() == h::Type::String;
      CHECK(s.stringArgs[i].has_value() == isString);
      if (isString) CHECK(*s.stringArgs[i] == expected.args[i].asString());
    }
    CHECK(s.timeout == expected.attachments.stringOr("timeout", "none"));
    CHECK(s.requestMatches);
  }
  CHECK(seen.size() == bodies.size());
  CHECK(rig.provider.stats().values == bodies.size());
}

TEST_CASE("in-place provider: each answer is the bytes a Handler's would be") {
  struct Case {
    const char* method;
    std::string want;  // the Handler provider's answer body
    std::uint8_t status;
  };
  Rig inPlace;
  Rig classic;
  const ServiceId p{.interface = "p"};
  inPlace.provider.addInPlace(p, "str", "Ljava/lang/String;", [](const CallView& c, Answer& a) {
    CHECK(a.string(*c.stringArg(0)));
    CHECK_FALSE(a.string("twice"));  // the first answer only
    CHECK(a.answered());
  });
  classic.provider.add(p, "str", "Ljava/lang/String;", [](const Request& r) { return r.args[0]; });
  inPlace.provider.addInPlace(p, "val", "",
                              [](const CallView&, Answer& a) { a.value(h::Value::int32(7)); });
  classic.provider.add(p, "val", "", [](const Request&) { return h::Value::int32(7); });
  inPlace.provider.addInPlace(p, "app", "", [](const CallView&, Answer&) {
    throw ApplicationException("org.example.Oops", "no");
  });
  classic.provider.add(p, "app", "", [](const Request&) -> h::Value {
    throw ApplicationException("org.example.Oops", "no");
  });
  inPlace.provider.addInPlace(p, "std", "",
                              [](const CallView&, Answer&) { throw std::runtime_error("broken"); });
  classic.provider.add(p, "std", "",
                       [](const Request&) -> h::Value { throw std::runtime_error("broken"); });
  inPlace.provider.addInPlace(
      p, "err", "", [](const CallView&, Answer& a) { a.error(status::kServerError, "busy"); });
  const std::vector<std::pair<std::string, std::string>> calls = {
      {"str", head("str", "Ljava/lang/String;") + str("hello") + "HZ"},
      {"str", head("str", "Ljava/lang/String;") + "\x02\xc3\xa9z"},  // decoded first
      {"str", head("str", "Ljava/lang/String;") + medium(std::string(40, 'm'))},
      {"str", head("str", "Ljava/lang/String;") + medium(std::string(1023, 'M'))},
      {"val", head("val", "")},
      {"app", head("app", "")},
      {"std", head("std", "")},
      {"$echo", head("$echo", "Ljava/lang/Object;") + str("back")},
  };
  for (const auto& [name, body] : calls) {
    CAPTURE(name);
    inPlace.call(body);
    classic.call(body);
    CHECK(inPlace.channel.status == status::kOk);
    CHECK(inPlace.channel.status == classic.channel.status);
    CHECK(hex(inPlace.channel.body) == hex(classic.channel.body));
  }
  CHECK(inPlace.channel.body ==
        encodeResult(Result::ofValue(h::Value::string("back")), kDubboVersion));  // the $echo
  inPlace.call(head("err", ""));
  CHECK(inPlace.channel.status == status::kServerError);
  CHECK(decodeErrorMessage(inPlace.channel.body) == "busy");
  CHECK(inPlace.channel.sent == calls.size() + 1);
}

TEST_CASE("in-place provider: no answer, a one-way call, an argument out of range") {
  Rig rig;
  int calls = 0;
  rig.provider.addInPlace(
      {.interface = "p"}, "mute", "Ljava/lang/String;", [&](const CallView& c, Answer& a) {
        ++calls;
        CHECK_THROWS_WITH_AS((void)c.stringArg(1), "dubbo: CallView: argument 1 of a call with 1",
                             std::out_of_range);
        CHECK_THROWS_AS((void)c.arg(3), std::out_of_range);
        CHECK(a.answered() == !(c.attachment("twoWay") == "1"));
      });
  rig.call(head("mute", "Ljava/lang/String;") + str("x") + "H" + str("twoWay") + str("1") + "Z");
  CHECK(rig.channel.status == status::kServiceError);
  CHECK(decodeErrorMessage(rig.channel.body) ==
        "the provider's handler returned without an answer");
  rig.call(head("mute", "Ljava/lang/String;") + str("x"), false);  // one-way: nothing due
  CHECK(calls == 2);
  CHECK(rig.channel.sent == 1);
  CHECK(rig.provider.stats().errors == 1);
  CHECK_THROWS_WITH_AS(rig.provider.addInPlace({.interface = "p"}, "m", "", nullptr),
                       "dubbo: Provider::addInPlace: empty handler", std::invalid_argument);
  CHECK_THROWS_WITH_AS(rig.provider.addInPlace({.interface = "p"}, "mute", "Ljava/lang/String;",
                                               [](const CallView&, Answer&) {}),
                       "dubbo: Provider::add: p.mute(Ljava/lang/String;) is served already",
                       std::invalid_argument);
}
}  // TEST_SUITE("dubbo")
