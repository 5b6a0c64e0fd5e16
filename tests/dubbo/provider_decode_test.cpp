// The provider's own request decoding (an in-place path for ASCII bodies, a Request reused from
// call to call) gives each handler exactly what decodeRequest() returns, and refuses exactly what
// it refuses, with its words; state kept by a handler is never overwritten by the next call.
#include "provider_rig.h"
#include "support.h"

#include <wheelbeat/dubbo/provider.h>
#include <wheelbeat/net/channel.h>

#include <doctest/doctest.h>

#include <any>
#include <optional>
#include <vector>

using namespace wbdubbo;
namespace net = wheelbeat::net;

namespace {

// A provider serving every method of service "p" with a handler that copies what it is given.
struct Rig : ProviderRig {
  explicit Rig(BodyLimits limits = {}) : ProviderRig(limits) {
    provider.add({.interface = "p"}, std::string(kAnyMethod), std::string(kAnyMethod),
                 [this](const Request& r) {
                   seen.push_back(r);
                   return h::Value::null();
                 });
  }
  std::vector<Request> seen;
};

// Both requests field by field (arguments and attachment values deeply).
bool same(const Request& a, const Request& b) {
  if (a.dubboVersion != b.dubboVersion || a.path != b.path || a.version != b.version ||
      a.method != b.method || a.descriptor != b.descriptor || a.args.size() != b.args.size() ||
      a.attachments.size() != b.attachments.size()) {
    return false;
  }
  for (std::size_t i = 0; i < a.args.size(); ++i) {
    if (!h::deepEqual(a.args[i], b.args[i])) return false;
  }
  const h::MapPtr mapA = a.attachments.map();  // a new node when empty: held here
  const h::MapPtr mapB = b.attachments.map();
  const auto& x = mapA->entries;
  const auto& y = mapB->entries;
  for (std::size_t i = 0; i < x.size(); ++i) {
    if (!h::deepEqual(x[i].first, y[i].first) || !h::deepEqual(x[i].second, y[i].second)) {
      return false;
    }
  }
  return mapA->type == mapB->type;
}

std::string head(std::string_view method, std::string_view descriptor) {
  return str("2.0.2") + str("p") + "N" + str(method) + str(descriptor);
}

// A medium-form ASCII string (0x30-0x33 + 1 length byte): 32 to 1023 characters.
std::string medium(std::string_view s) {
  return std::string{static_cast<char>(0x30 + (s.size() >> 8)),
                     static_cast<char>(s.size() & 0xff)} +
         std::string(s);
}

}  // namespace

TEST_SUITE("dubbo") {
TEST_CASE("dubbo provider decoding: each handler gets what decodeRequest returns") {
  const std::string a = str("a");
  const std::vector<std::string> bodies = {
      // The in-place forms: compact and medium ASCII strings, null or string version, with,
      // without and with empty attachments.
      head("echo", "Ljava/lang/String;") + medium(std::string(64, 'r')) + "H" + str("path") +
          str("p") + str("timeout") + str("3000") + "Z",
      str("2.0.2") + str("p") + str("0.0.0") + str("two") +
          medium("Ljava/lang/String;Ljava/lang/String;") + a + str("") + "HZ",
      head("none", "") + "H" + str("k") + str("g") + "Z",
      head("none", ""),
      // Other forms, through the general decoder: a non-ASCII string, an int and a list argument,
      // a null argument, a typed map, an attachment value that is an int, a chunked string.
      head("echo", "Ljava/lang/String;") + "\x02\xc3\xa9z" + "H" + str("k") + str("v") + "Z",
      head("add", "II") + "\x91\x92" + "H" + str("k") + str("v") + "Z",
      head("list", "Ljava/util/List;") + "\x7a\x91\x92" + "HZ",
      head("echo", "Ljava/lang/String;") + "N" + "HZ",
      head("none", "") + "M" + str("java.util.HashMap") + str("k") + str("v") + "Z",
      head("none", "") + "H" + str("timeout") + "\x91" + "Z",
      head("echo", "Ljava/lang/String;") + "R" + std::string("\x00\x01", 2) + "x" + a + "HZ",
      // The descriptor the reused decoder saw last, then another with as many parameters.
      head("echo", "Ljava/lang/String;") + a,
      head("echo", "I") + "\x91",
  };
  Rig rig;
  for (const auto& body : bodies) {
    CAPTURE(hex(body));
    const Request expected = decodeRequest(body);
    rig.call(body);
    REQUIRE(!rig.seen.empty());
    CHECK(rig.channel.status == status::kOk);
    CHECK(same(rig.seen.back(), expected));
  }
  CHECK(rig.seen.size() == bodies.size());
}

TEST_CASE("dubbo provider decoding: refusals are decodeRequest's, within the provider's limits") {
  const BodyLimits limits{
      .hessian = {.maxStringUnits = 40}, .maxArguments = 2, .maxAttachments = 2};
  const std::string a = str("a");
  const std::vector<std::string> bodies = {
      head("echo", "Ljava/lang/String;") + medium(std::string(41, 'r')),  // maxStringUnits
      head("echo", "III") + "\x91\x91\x91",                               // maxArguments
      head("none", "") + "H" + str("a") + a + str("b") + a + str("c") + a + "Z",
      head("none", "") + "H" + str("k") + str("v") + str("k") + str("w") + "Z",  // a repeat
      head("none", "") + "H" + str("k") + str("v") + "Z" + "N",                  // bytes after
      head("none", "") + "H" + str("k") + str("v"),                              // no 'Z'
      head("echo", "Ljava/lang/String") + str("x"),                              // descriptor
      head("echo", "Ljava/lang/String;") + "\x05" + "ab",                        // bytes missing
      head("echo", "Ljava/lang/String;") + "\x02\xc3",  // cut in a character
      head("two", "II") + "\x91",                       // an argument short
      str("2.0.2") + str("p") + "T",                    // the version
  };
  Rig rig(limits);
  for (const auto& body : bodies) {
    CAPTURE(hex(body));
    rig.call(body);
    CHECK(rig.channel.status == status::kBadRequest);
    CHECK(decodeErrorMessage(rig.channel.body) ==
          "Fail to decode request due to: " + refusal([&] { (void)decodeRequest(body, limits); }));
  }
  CHECK(rig.channel.sent == bodies.size());
  CHECK(rig.seen.empty());
}

TEST_CASE("dubbo provider decoding: what a handler keeps is not reused by the next call") {
  Rig rig;
  std::optional<h::MapPtr> kept;
  rig.provider.add({.interface = "p"}, "keep", "", [&](const Request& r) {
    kept = r.attachments.map();
    return h::Value::null();
  });
  rig.call(head("keep", "") + "H" + str("first") + str("1") + "Z");
  rig.call(head("other", "") + "H" + str("second") + str("2") + str("third") + str("3") + "Z");
  REQUIRE(kept.has_value());
  REQUIRE((*kept)->entries.size() == 1);
  CHECK((*kept)->entries[0].first.asString() == "first");
  CHECK((*kept)->entries[0].second.asString() == "1");
  REQUIRE(rig.seen.size() == 1);
  CHECK(rig.seen[0].attachments.stringOr("third", "") == "3");
  CHECK(rig.seen[0].attachments.size() == 2);
}
}  // TEST_SUITE("dubbo")

TEST_SUITE("dubbo") {
TEST_CASE("dubbo provider decoding: what a wide provider read is refused by a narrow one") {
  // One thread keeps the last header and attachments it read (a call repeats them): a provider
  // with narrower limits must still refuse what they exceed, with decodeRequest's words.
  const BodyLimits narrow{
      .hessian = {.maxStringUnits = 40}, .maxArguments = 2, .maxAttachments = 2};
  const std::string longMethod = head(std::string(41, 'm'), "") + "HZ";
  const std::string threeAttachments = head("none", "") + "H" + str("a") + str("1") + str("b") +
                                       str("2") + str("c") + str("3") + "Z";
  const std::string threeArgs = head("three", "III") + "\x91\x92\x93";
  Rig wide;
  Rig tight(narrow);
  for (const auto& body : {longMethod, threeAttachments, threeArgs}) {
    CAPTURE(hex(body));
    wide.call(body);
    wide.call(body);  // read twice: the second from what the first kept
    tight.call(body);
    CHECK(tight.channel.status == status::kBadRequest);
    CHECK(decodeErrorMessage(tight.channel.body) ==
          "Fail to decode request due to: " + refusal([&] { (void)decodeRequest(body, narrow); }));
  }
  CHECK(tight.seen.empty());
  REQUIRE(wide.seen.size() == 4);  // the long method is not served: the others twice each
  CHECK(same(wide.seen[0], decodeRequest(threeAttachments)));
  CHECK(same(wide.seen[1], decodeRequest(threeAttachments)));
  CHECK(same(wide.seen[3], decodeRequest(threeArgs)));
}

TEST_CASE("dubbo provider decoding: a repeated header with new arguments and attachments") {
  Rig rig;
  const std::vector<std::string> bodies = {
      head("echo", "Ljava/lang/String;") + str("one") + "H" + str("k") + str("v") + "Z",
      head("echo", "Ljava/lang/String;") + str("two") + "H" + str("k") + str("v") + "Z",
      head("echo", "Ljava/lang/String;") + str("three") + "H" + str("k") + str("w") + "Z",
      head("echo", "Ljava/lang/String;") + str("four"),
      head("echo", "Ljava/lang/String;") + str("five") + "HZ",
      head("echo", "Ljava/lang/String;") + str("six") + "H" + str("k") + str("w") + "Z",
      head("echo", "Ljava/lang/String;") + str("seven") + "H" + str("k") + str("w"),  // no 'Z'
      head("echo", "Ljava/lang/String;"),  // the argument missing
  };
  for (const auto& body : bodies) {
    CAPTURE(hex(body));
    rig.call(body);
  }
  REQUIRE(rig.seen.size() == 6);
  for (std::size_t i = 0; i < 6; ++i) CHECK(same(rig.seen[i], decodeRequest(bodies[i])));
  CHECK(rig.channel.status == status::kBadRequest);  // the last two refused
  CHECK(rig.channel.sent == bodies.size());
}
}  // TEST_SUITE("dubbo")
