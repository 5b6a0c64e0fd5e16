// The generated files: config/wheelbeat.schema.json and docs/configuration.md must be what the
// key tables print (`cmake --build build --target config_reference` rewrites both), and the
// reference must name every key the loader knows.
#include "helpers.h"
#include "sections.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <fstream>
#include <sstream>

namespace {

std::string fileText(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  REQUIRE(in.good());
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// The first line where `a` and `b` differ (1-based), 0 when they are equal.
std::size_t firstDifferentLine(const std::string& a, const std::string& b) {
  std::istringstream x(a);
  std::istringstream y(b);
  std::string la;
  std::string lb;
  for (std::size_t line = 1;; ++line) {
    const bool moreA = static_cast<bool>(std::getline(x, la));
    const bool moreB = static_cast<bool>(std::getline(y, lb));
    if (!moreA && !moreB) return a == b ? 0 : line;
    if (moreA != moreB || la != lb) return line;
  }
}

}  // namespace

TEST_SUITE("config") {

TEST_CASE("generated: the checked-in schema is what the key tables print") {
  const std::string generated = wheelbeat::config::detail::schemaText();
  const std::string checkedIn = fileText(wbtest::schemaPath());
  INFO("run: cmake --build build --target config_reference");
  CHECK(firstDifferentLine(checkedIn, generated) == 0);
}

TEST_CASE("generated: the checked-in docs/configuration.md is what the key tables print") {
  const std::string generated = wheelbeat::config::detail::referenceMarkdown();
  const std::string checkedIn = fileText(wbtest::sourceDir() / "docs" / "configuration.md");
  INFO("run: cmake --build build --target config_reference");
  CHECK(firstDifferentLine(checkedIn, generated) == 0);
}

TEST_CASE("generated: the reference has a row for every key the loader knows") {
  const std::string reference = wheelbeat::config::detail::referenceMarkdown();
  int rows = 0;
  for (std::string path : wheelbeat::config::knownKeyPaths()) {
    // Keys inside policies are those of a "retry" entry, listed once as retry.*.<key>.
    if (path.find("reconnect/") != std::string::npos || path.find("_retry/") != std::string::npos) {
      continue;
    }
    std::ranges::replace(path, '/', '.');
    CAPTURE(path);
    // A section is a heading; a key in it (and log_level) a row of its table.
    const bool row = reference.find("| `" + path.substr(1) + "` |") != std::string::npos;
    const bool heading = reference.find("\n## `" + path.substr(1) + "`\n") != std::string::npos;
    CHECK((row || heading));
    ++rows;
  }
  CHECK(rows >= 72);  // a floor: a new key needs no edit here
}

TEST_CASE("generated: a schema that differs by one default is caught") {
  // The comparison itself can fail: a changed default shows on its line.
  std::string schema = wheelbeat::config::detail::schemaText();
  const std::size_t at = schema.find("\"default\": \"100ms\"");
  REQUIRE(at != std::string::npos);
  schema.replace(at, 18, "\"default\": \"200ms\"");
  CHECK(firstDifferentLine(schema, wheelbeat::config::detail::schemaText()) > 1);
}

}  // TEST_SUITE("config")
