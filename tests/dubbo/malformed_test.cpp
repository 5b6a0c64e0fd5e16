// Every malformed body is refused with a BodyError naming the body, the byte offset and the field.
#include "support.h"

#include <doctest/doctest.h>

using namespace wbdubbo;

namespace {

// The fields before the arguments: version, path, null version, method, then `descriptor`.
std::string head(std::string_view descriptor) {
  return str("2.0.2") + str("p") + "N" + str("m") + str(descriptor);
}

// The message without its first words, which must name the body.
std::string after(std::string_view prefix, const std::string& message) {
  if (message.compare(0, prefix.size(), prefix) != 0)
    return "(not \"" + std::string(prefix) + "\") " + message;
  return message.substr(prefix.size());
}

std::string request(const std::string& body, const BodyLimits& limits = {}) {
  return after("dubbo request body: ", refusal([&] { (void)decodeRequest(body, limits); }));
}

std::string response(const std::string& body, const BodyLimits& limits = {}) {
  return after("dubbo response body: ", refusal([&] { (void)decodeResult(body, limits); }));
}

}  // namespace

TEST_SUITE("dubbo") {
TEST_CASE("dubbo malformed request: each field of the wrong type or missing") {
  CHECK(request("") == "at byte 0: dubbo version: the body ends here (expected a value)");
  CHECK(request("\x91") == "at byte 0: dubbo version: expected a string, got int");
  CHECK(request(str("2.0.2") + "N") == "at byte 6: service path: expected a string, got null");
  CHECK(request(str("2.0.2") + str("p") + "T") ==
        "at byte 8: service version: expected a string or null, got bool");
  CHECK(request(str("2.0.2") + str("p") + "N" + "HZ") ==
        "at byte 9: method name: expected a string, got map");
  CHECK(request(str("2.0.2") + str("p") + "N" + str("m")) ==
        "at byte 11: parameter descriptor: the body ends here (expected a value)");
}

TEST_CASE("dubbo malformed request: the descriptor and the arguments") {
  CHECK(request(head("Ljava/lang/String")) ==
        "at byte 11: parameter descriptor: dubbo: descriptor \"Ljava/lang/String\" at char 0: "
        "class name without its closing ';'");
  CHECK(request(head("IIII"), BodyLimits{.maxArguments = 3}) ==
        "at byte 11: parameter descriptor: 4 parameters exceed maxArguments = 3");
  CHECK(request(head("IJ") + "\x91") ==
        "at byte 15: argument 2 of 2 (J): the body ends here (expected a value)");
  // A string announcing 5 characters with 2 present: the Hessian decoder's own words, inside.
  CHECK(request(head("Ljava/lang/String;") + "\x05" + "ab") ==
        "at byte 30: argument 1 of 1 (Ljava/lang/String;): hessian: at byte 33: "
        "string: input ends before its last character");
}

TEST_CASE("dubbo malformed request: the attachments") {
  CHECK(request(head("") + str("x")) == "at byte 12: attachments: expected a map, got string");
  CHECK(request(head("") + "H\x91" + str("v") + "Z") ==
        "at byte 12: attachments: key of entry 0 is int (expected a string)");
  CHECK(request(head("") + "H" + str("k") + str("v") + str("k") + str("w") + "Z") ==
        "at byte 12: attachments: key \"k\" of entry 1 repeats entry 0");
  CHECK(
      request(head("") + "H" + str("a") + "N" + str("b") + "NZ", BodyLimits{.maxAttachments = 1}) ==
      "at byte 12: attachments: 2 entries exceed maxAttachments = 1");
  CHECK(request(head("") + "HZ" + "N") ==
        "at byte 14: attachments: bytes after the end of the body");
}

TEST_CASE("dubbo malformed request: limits") {
  BodyLimits small;
  small.hessian.maxTotalBytes = 8;
  CHECK(request(head(""), small) ==
        "hessian: at byte 0: input of 12 bytes exceeds maxTotalBytes = 8");
  BodyLimits bad;
  bad.maxArguments = 0;
  CHECK(request(head(""), bad) == "dubbo: BodyLimits.maxArguments = 0 (expected >= 1)");
}

TEST_CASE("dubbo malformed response: flag, value, exception, attachments, trailing bytes") {
  CHECK(response("") == "at byte 0: result flag: the body ends here (expected a value)");
  CHECK(response(str("x")) == "at byte 0: result flag: expected an int, got string");
  CHECK(response("\x96") ==
        "at byte 0: result flag: 6 (expected 0..5: exception, value, null; +3 with attachments)");
  CHECK(response("\x8f") ==
        "at byte 0: result flag: -1 (expected 0..5: exception, value, "
        "null; +3 with attachments)");
  CHECK(response("\x91") == "at byte 1: value: the body ends here (expected a value)");
  CHECK(response("\x90N") == "at byte 1: exception: null (expected the Throwable)");
  CHECK(response("\x94" + str("v")) ==
        "at byte 3: attachments: the body ends here (expected a value)");
  CHECK(response("\x94" + str("v") + "N") == "at byte 3: attachments: expected a map, got null");
  CHECK(response("\x91" + str("v") + "N") == "at byte 3: value: bytes after the end of the body");
  CHECK(response("\x92\x91") == "at byte 1: null: bytes after the end of the body");
}

TEST_CASE("dubbo malformed error body") {
  CHECK(refusal([] { (void)decodeErrorMessage("\x91"); }) ==
        "dubbo error body: at byte 0: error message: expected a string or null, got int");
  CHECK(refusal([] { (void)decodeErrorMessage(str("a") + "N"); }) ==
        "dubbo error body: at byte 2: error message: bytes after the end of the body");
  CHECK(refusal([] { (void)decodeErrorMessage(""); }) ==
        "dubbo error body: at byte 0: error message: the body ends here (expected a value)");
}

TEST_CASE("dubbo malformed: the offset of the error is the field's") {
  try {
    (void)decodeRequest(head("IJ") + "\x91");
    FAIL("accepted");
  } catch (const BodyError& e) {
    CHECK(e.offset() == 15);
  }
}
}  // TEST_SUITE("dubbo")
