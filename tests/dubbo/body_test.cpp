// Dubbo 2 bodies: exact bytes of known requests and responses (spelled by hand from Dubbo's
// DubboCodec and the Hessian 2.0 rules), the version rule of response attachments, round trips.
#include "support.h"

#include <doctest/doctest.h>

using namespace wbdubbo;

namespace {

const std::string kGreeter = "org.example.Greeter";

Request sayHello() {
  Request r;
  r.path = kGreeter;
  r.method = "sayHello";
  r.descriptor = "Ljava/lang/String;";
  r.args.push_back(h::Value::string("world"));
  r.attachments.set("path", h::Value::string(kGreeter));
  return r;
}

}  // namespace

TEST_SUITE("dubbo") {
TEST_CASE("dubbo body: the request's exact bytes") {
  // dubbo version, path, version (null: 'N'), method, descriptor, the argument, then the
  // attachments as an untyped map 'H' ... 'Z'.
  const std::string expected = str("2.0.2") + str(kGreeter) + "N" + str("sayHello") +
                               str("Ljava/lang/String;") + str("world") + "H" + str("path") +
                               str(kGreeter) + "Z";
  CHECK(hex(encodeRequest(sayHello())) == hex(expected));

  Request versioned = sayHello();
  versioned.version = "1.0.0";
  const std::string withVersion = str("2.0.2") + str(kGreeter) + str("1.0.0") + str("sayHello") +
                                  str("Ljava/lang/String;") + str("world") + "H" + str("path") +
                                  str(kGreeter) + "Z";
  CHECK(hex(encodeRequest(versioned)) == hex(withVersion));

  const Request back = decodeRequest(expected);
  CHECK(back.dubboVersion == "2.0.2");
  CHECK(back.path == kGreeter);
  CHECK_FALSE(back.version.has_value());
  CHECK(back.method == "sayHello");
  CHECK(back.descriptor == "Ljava/lang/String;");
  REQUIRE(back.args.size() == 1);
  CHECK(back.args[0].asString() == "world");
  CHECK(back.attachments.size() == 1);
  CHECK(back.attachments.stringOr("path", "") == kGreeter);
  CHECK(decodeRequest(withVersion).version == std::optional<std::string>("1.0.0"));
}

TEST_CASE("dubbo body: a request of several typed parameters, and one without any") {
  Request r;
  r.path = "p";
  r.method = "m";
  r.descriptor = "I[BJ";
  r.args = {h::Value::int32(1), h::Value::bytes({0xca, 0xfe}), h::Value::int64(5)};
  // int 1 = 91, binary of 2 bytes = 22 ca fe, long 5 = e5 (0xe0 + 5), empty map H Z.
  CHECK(hex(encodeRequest(r)) ==
        hex(str("2.0.2") + str("p") + "N" + str("m") + str("I[BJ") + "\x91\x22\xca\xfe\xe5HZ"));
  r.descriptor = "";
  r.args.clear();
  CHECK(hex(encodeRequest(r)) == hex(str("2.0.2") + str("p") + "N" + str("m") + str("") + "HZ"));
  r.args.push_back(h::Value::int32(1));
  CHECK_THROWS_WITH_AS((void)encodeRequest(r),
                       "dubbo: request p.m: 1 args for descriptor \"\" (0 parameters)",
                       std::invalid_argument);
}

TEST_CASE("dubbo body: a body without attachments (older peers) is a request without any") {
  const std::string body =
      str("2.0.2") + str("p") + "N" + str("m") + str("Ljava/lang/String;") + str("x");
  const Request r = decodeRequest(body);
  CHECK(r.args.size() == 1);
  CHECK(r.attachments.empty());
}

TEST_CASE("dubbo body: which clients read response attachments (Dubbo's version rule)") {
  CHECK(intVersion("2.0.2") == 2000200);
  CHECK(intVersion("2.6.2") == 2060200);
  CHECK(intVersion("2.6.2.1") == 2060201);
  CHECK(intVersion("2.7.8") == 2070800);
  CHECK(intVersion("2.0.10") == 2001000);
  CHECK(intVersion("2.0.2-SNAPSHOT") == 2000200);
  CHECK(intVersion("99999999999.0.0") == 2009900);
  CHECK(supportsResponseAttachments("2.0.2"));
  CHECK(supportsResponseAttachments("2.0.9"));
  CHECK_FALSE(supportsResponseAttachments("2.0.10"));
  CHECK_FALSE(supportsResponseAttachments("2.5.3"));
  CHECK_FALSE(supportsResponseAttachments("2.6.2"));
  CHECK(supportsResponseAttachments("2.6.3"));
  CHECK(supportsResponseAttachments("2.7.8"));
  CHECK(supportsResponseAttachments("3.2.0"));
  CHECK_FALSE(supportsResponseAttachments("2.0.1"));
  CHECK_FALSE(supportsResponseAttachments("1.0.0"));
  CHECK_FALSE(supportsResponseAttachments(""));
}

TEST_CASE("dubbo body: the response's exact bytes in both forms") {
  const Result hello = Result::ofValue(h::Value::string("hello"));
  // Flag 4 (value with attachments: int 0x94), the value, {"dubbo": "2.0.2"}.
  CHECK(hex(encodeResult(hello, "2.0.2")) ==
        hex("\x94" + str("hello") + "H" + str("dubbo") + str("2.0.2") + "Z"));
  // Flag 1 for a client of 2.6.2.
  CHECK(hex(encodeResult(hello, "2.6.2")) == hex("\x91" + str("hello")));
  // Null: flag 5 / 2 and no value.
  CHECK(hex(encodeResult(Result::ofValue({}), "2.0.2")) ==
        hex("\x95H" + str("dubbo") + str("2.0.2") + "Z"));
  CHECK(hex(encodeResult(Result::ofValue({}), "2.5.3")) == "92");
  // The caller's own attachments come first, "dubbo" last unless set.
  Result tagged = hello;
  tagged.attachments.set("k", h::Value::string("v"));
  CHECK(hex(encodeResult(tagged, "2.7.0")) ==
        hex("\x94" + str("hello") + "H" + str("k") + str("v") + str("dubbo") + str("2.0.2") + "Z"));

  const Result back = decodeResult("\x94" + str("hello") + "H" + str("dubbo") + str("2.0.2") + "Z");
  CHECK(back.kind == ResultKind::Value);
  CHECK(back.value.asString() == "hello");
  CHECK(back.attachments.stringOr("dubbo", "") == "2.0.2");
  const Result old = decodeResult("\x91" + str("hello"));
  CHECK(old.kind == ResultKind::Value);
  CHECK(old.attachments.empty());
  CHECK(decodeResult("\x92").kind == ResultKind::Null);
}

TEST_CASE("dubbo body: an application exception as Java writes it") {
  Result boom;
  boom.kind = ResultKind::Exception;
  boom.value = makeThrowable("", "boom");
  // Flag 0, the class definition 'C' (name, 4 fields), the object 0x60 (definition 0): the
  // message, the cause as a ref to the object itself (Q 0 = 51 90), an empty typed array of
  // StackTraceElement (0x70: typed fixed list of length 0, then its type), an empty list (0x78).
  const std::string expected =
      "\x90"
      "C" +
      str("java.lang.RuntimeException") + "\x94" + str("detailMessage") + str("cause") +
      str("stackTrace") + str("suppressedExceptions") + "\x60" + str("boom") + "\x51\x90" + "\x70" +
      str("[java.lang.StackTraceElement") + "\x78";
  CHECK(hex(encodeResult(boom, "2.5.3")) == hex(expected));

  const Result back = decodeResult(expected);
  CHECK(back.kind == ResultKind::Exception);
  const ApplicationException e = describeThrowable(back.value);
  CHECK(e.className() == "java.lang.RuntimeException");
  CHECK(e.message() == "boom");
  // The decoded cause is a back edge to the exception itself.
  const auto& object = *back.value.asObject();
  REQUIRE(object.field("cause") != nullptr);
  CHECK(object.field("cause")->type() == h::Type::BackRef);
  CHECK(object.field("cause")->asBackRef().lock().asObject() == back.value.asObject());

  const ApplicationException custom =
      describeThrowable(makeThrowable("org.example.NotFound", "no such user"));
  CHECK(custom.className() == "org.example.NotFound");
  CHECK(custom.message() == "no such user");
  CHECK(std::string(custom.what()) == "org.example.NotFound: no such user");
  CHECK(describeThrowable(h::Value::string("x")).className() == "string");
}

TEST_CASE("dubbo body: the error message of a non-OK status") {
  CHECK(hex(encodeErrorMessage("Not found")) == hex(str("Not found")));
  CHECK(decodeErrorMessage(str("Not found")) == "Not found");
  CHECK(decodeErrorMessage("N").empty());
  CHECK(statusName(status::kServiceNotFound) == "service-not-found");
  CHECK(statusName(status::kThreadPoolExhausted) == "thread-pool-exhausted");
  CHECK(statusName(7) == "unknown");
}

TEST_CASE("dubbo body: round trips of every kind of argument and result") {
  auto point = h::makeObject(h::makeClassDef("org.example.Point", {"x", "y"}),
                             {h::Value::int32(1), h::Value::int32(2)});
  const std::vector<h::Value> values = {
      h::Value::null(),
      h::Value::boolean(true),
      h::Value::int32(-5),
      h::Value::int64(1LL << 40),
      h::Value::float64(0.5),
      h::Value::string("héllo 世界"),
      h::Value::bytes({0, 1, 2, 255}),
      h::Value::date({1700000000000}),
      h::Value::list(h::makeList("[int", {h::Value::int32(1), h::Value::int32(2)})),
      h::Value::map(h::makeMap({}, {{h::Value::int32(1), h::Value::string("one")}})),
      h::Value::object(point),
      h::Value::list(h::makeList({}, {h::Value::object(point), h::Value::object(point)})),
  };
  Request r;
  r.path = "org.example.All";
  r.version = "2.1";
  r.method = "all";
  r.descriptor.clear();
  for (std::size_t i = 0; i < values.size(); ++i) r.descriptor += "Ljava/lang/Object;";
  r.args = values;
  r.attachments.set("group", h::Value::string("g"));
  r.attachments.set("timeout", h::Value::string("3000"));
  const Request back = decodeRequest(encodeRequest(r));
  REQUIRE(back.args.size() == values.size());
  for (std::size_t i = 0; i < values.size(); ++i) {
    CAPTURE(i);
    CHECK(h::deepEqual(back.args[i], values[i]));
  }
  CHECK(back.attachments.stringOr("group", "") == "g");
  CHECK(back.attachments.stringOr("timeout", "") == "3000");
  for (const auto& v : values) {
    for (const char* version : {"2.0.2", "2.6.0"}) {
      const Result res = decodeResult(encodeResult(Result::ofValue(v), version));
      CHECK(h::deepEqual(res.value, v));
    }
  }
}

TEST_CASE("dubbo body: one encoder reused for many bodies gives the same bytes") {
  h::Encoder enc;
  const std::string once = encodeRequest(sayHello());
  for (int i = 0; i < 3; ++i) {
    enc.reset();
    encodeRequest(sayHello(), enc);
    CHECK(enc.buffer() == once);
  }
}
}  // TEST_SUITE("dubbo")
