// The Java oracle (java/HessianOracle.java on Debian's Hessian 4.0.38): for every value of the
// matrix, wheelbeat's bytes equal Java's wherever Java's are canonical, Java decodes wheelbeat's
// bytes to the value it builds itself, and wheelbeat decodes Java's bytes to the same value.
// Built only when a JDK and hessian.jar were found (tests/hessian/CMakeLists.txt).
#include "support.h"

#include <doctest/doctest.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

using namespace wbhessian;

namespace {

struct JavaLine {
  std::string hex;
  std::string verdict;
};

// Runs the oracle on wheelbeat's encodings; returns its answer by case name.
std::map<std::string, JavaLine> askJava(const std::vector<Case>& cases) {
  const auto dir = std::filesystem::temp_directory_path() /
                   fmt::format("wheelbeat_hessian_oracle_{}", ::getpid());
  std::filesystem::create_directories(dir);
  {
    std::ofstream in(dir / "wheelbeat.txt");
    for (const Case& c : cases) in << c.name << ' ' << hex(encode(c.value)) << '\n';
  }
  const std::string command = fmt::format(
      "'{}' --add-opens java.base/java.lang=ALL-UNNAMED -cp '{}' HessianOracle '{}' > '{}'",
      WHEELBEAT_JAVA, WHEELBEAT_ORACLE_CLASSPATH, (dir / "wheelbeat.txt").string(),
      (dir / "java.txt").string());
  const int status = std::system(command.c_str());
  REQUIRE_MESSAGE(status == 0, command);
  std::map<std::string, JavaLine> answers;
  std::ifstream out(dir / "java.txt");
  for (std::string line; std::getline(out, line);) {
    std::istringstream fields(line);
    std::string name;
    JavaLine answer;
    fields >> name >> answer.hex;
    std::getline(fields >> std::ws, answer.verdict);
    answers[name] = answer;
  }
  std::filesystem::remove_all(dir);
  return answers;
}

}  // namespace

TEST_SUITE("hessian") {
TEST_CASE("hessian java oracle: Java's bytes and Java reading wheelbeat's") {
  const std::vector<Case> cases = matrix();
  const std::map<std::string, JavaLine> java = askJava(cases);
  REQUIRE(java.size() == cases.size());
  std::size_t sameBytes = 0;
  for (const Case& c : cases) {
    CAPTURE(c.name);
    const auto it = java.find(c.name);
    REQUIRE(it != java.end());
    CHECK(it->second.verdict == "OK");
    const std::string ours = hex(encode(c.value));
    if (c.javaCanonical) {
      CHECK(it->second.hex == ours);
      sameBytes += it->second.hex == ours ? 1 : 0;
    }
    const Value fromJava = decode(unhex(it->second.hex));
    if (c.name == "double:-0.0") {
      CHECK_FALSE(std::signbit(fromJava.asDouble()));  // Java writes 0.0 (0x5b)
    } else {
      CHECK(deepEqual(fromJava, c.value));
    }
  }
  CHECK(sameBytes == cases.size() - 2);  // all but -0.0 and the 70000 bytes
}
}  // TEST_SUITE("hessian")
