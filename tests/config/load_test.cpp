// Files and strings in: load vs tryLoad, unreadable files, JSON syntax errors.
#include "helpers.h"

#include <doctest/doctest.h>
#include <unistd.h>

#include <chrono>
#include <fstream>

using namespace std::chrono_literals;
namespace fs = std::filesystem;
using wheelbeat::config::ConfigError;
using wheelbeat::config::ConfigErrors;

namespace {

// A scratch directory of this process, removed at the end of the test.
struct ScratchDir {
  fs::path path = fs::temp_directory_path() / ("wheelbeat_config_test_" + std::to_string(getpid()));
  ScratchDir() { fs::create_directories(path); }
  ~ScratchDir() { fs::remove_all(path); }
  fs::path write(const std::string& name, const std::string& text) const {
    std::ofstream(path / name) << text;
    return path / name;
  }
};

}  // namespace

TEST_SUITE("config") {

TEST_CASE("files: load reads a file") {
  ScratchDir dir;
  const auto file = dir.write("c.json", R"({"heartbeat":{"interval":"15s"}})");
  CHECK(wheelbeat::config::load(file).heartbeat.interval == 15s);
  CHECK(wheelbeat::config::tryLoad(file).config().client.heartbeat.interval == 15s);
}

TEST_CASE("files: a missing file is one error naming the path and the errno text") {
  const fs::path missing = "/nonexistent/wheelbeat.json";
  const auto result = wheelbeat::config::tryLoad(missing);
  CHECK(result.errors() ==
        std::vector<ConfigError>{
            {"", R"(cannot read "/nonexistent/wheelbeat.json": No such file or directory)",
             "a readable file"}});
  CHECK_THROWS_WITH_AS(
      (void)wheelbeat::config::load(missing),
      R"(cannot read "/nonexistent/wheelbeat.json": No such file or directory (expected: a readable file))",
      ConfigErrors);
}

TEST_CASE("files: a directory is unreadable") {
  ScratchDir dir;
  CHECK(wheelbeat::config::tryLoad(dir.path).errors() ==
        std::vector<ConfigError>{
            {"", "cannot read \"" + dir.path.string() + "\": Is a directory", "a readable file"}});
}

TEST_CASE("syntax errors: one error with pointer empty and nlohmann's position") {
  CHECK(wbtest::messagesOf("{\n  \"wheel\": {\"tick\": }\n}") ==
        std::vector<std::string>{
            "parse error at line 2, column 21: syntax error while parsing value - unexpected '}'; "
            "expected '[', '{', or a literal (expected: valid JSON)"});
  CHECK(wbtest::messagesOf("") ==
        std::vector<std::string>{"parse error at line 1, column 1: syntax error while parsing "
                                 "value - unexpected end of input; expected '[', '{', or a "
                                 "literal (expected: valid JSON)"});
  const auto result = wheelbeat::config::tryLoadString(R"({"a":1} x)");
  REQUIRE(result.errors().size() == 1);
  CHECK(result.errors()[0].pointer.empty());
}

TEST_CASE("syntax errors: a file with a syntax error") {
  ScratchDir dir;
  const auto file = dir.write("bad.json", "{\"log_level\": \"info\",}");
  const auto result = wheelbeat::config::tryLoad(file);
  CHECK(result.errors() ==
        std::vector<ConfigError>{{"",
                                  "parse error at line 1, column 22: syntax error while parsing "
                                  "object key - unexpected '}'; expected string literal",
                                  "valid JSON"}});
}

TEST_CASE("tryLoad vs load: the same errors and the same config") {
  const std::string bad = R"({"wheel":{"tick":"0s"},"log_level":"no"})";
  const auto result = wheelbeat::config::tryLoadString(bad);
  REQUIRE_FALSE(result);
  try {
    (void)wheelbeat::config::loadString(bad);
    FAIL("loadString accepted a bad document");
  } catch (const ConfigErrors& e) {
    CHECK(e.errors() == result.errors());
    CHECK(std::string(e.what()) ==
          result.errors()[0].toString() + "\n" + result.errors()[1].toString());
  }
  const std::string good = R"({"wheel":{"tick":"10ms"}})";
  CHECK(wheelbeat::config::tryLoadString(good).config() == wheelbeat::config::loadString(good));
  CHECK(wheelbeat::config::tryLoadString(good).errors().empty());
}

TEST_CASE("tryLoad vs load: a result holds a config or errors never both") {
  CHECK_THROWS_AS(wheelbeat::config::LoadResult(std::vector<ConfigError>{}), std::invalid_argument);
  const wheelbeat::config::LoadResult ok{wheelbeat::config::Config{}};
  CHECK(ok.ok());
  CHECK(ok.errors().empty());
  const wheelbeat::config::LoadResult bad{std::vector<ConfigError>{{"/a", "1", "x"}}};
  CHECK_FALSE(bad.ok());
  CHECK_THROWS_AS((void)bad.config(), std::logic_error);
}

TEST_CASE("errors: toString formats pointer value and expectation") {
  CHECK(
      ConfigError{"/retry/payments/max_delay", R"("500ms")", ">= initial_delay = 1s"}.toString() ==
      R"(/retry/payments/max_delay: "500ms" (expected: >= initial_delay = 1s))");
  CHECK(ConfigError{"", "[]", "an object at the top level"}.toString() ==
        "[] (expected: an object at the top level)");
}

}  // TEST_SUITE("config")
