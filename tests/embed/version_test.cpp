// wheelbeat/version.h and wheelbeat::version(): the generated macros and the linked library both
// say the project's version (WHEELBEAT_EXPECTED_VERSION: PROJECT_VERSION, from tests/embed/).
#include <wheelbeat/version.h>

#include <doctest/doctest.h>

#include <string>

TEST_SUITE("version") {

TEST_CASE("version() is the project version") {
  CHECK(wheelbeat::version() == WHEELBEAT_EXPECTED_VERSION);
  CHECK(std::string(WHEELBEAT_VERSION_STRING) == WHEELBEAT_EXPECTED_VERSION);
}

TEST_CASE("the version macros agree with the string") {
  const std::string parts = std::to_string(WHEELBEAT_VERSION_MAJOR) + "." +
                            std::to_string(WHEELBEAT_VERSION_MINOR) + "." +
                            std::to_string(WHEELBEAT_VERSION_PATCH);
  CHECK(parts == WHEELBEAT_VERSION_STRING);
  CHECK(WHEELBEAT_VERSION ==
        WHEELBEAT_VERSION_MAJOR * 10000 + WHEELBEAT_VERSION_MINOR * 100 + WHEELBEAT_VERSION_PATCH);
}

}  // TEST_SUITE("version")
