// wheelbeat-config, in-process (cli::run); tests/config/run_cli.cmake runs the real binary.
#include "cli.h"

#include "cli_run.h"
#include "helpers.h"

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace cli = wheelbeat::config::cli;

namespace {

using Run = wbtest::CliRun;
Run run(const std::vector<std::string>& args) { return wbtest::runCli(args); }

std::string sample(const char* name) { return (wbtest::samplesDir() / name).string(); }
std::string data(const char* name) {
  return (wbtest::sourceDir() / "tests" / "config" / "data" / name).string();
}

std::string fileText(const std::string& path) {
  std::ifstream in(path);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace

TEST_SUITE("config") {

TEST_CASE("cli: a valid file prints its effective configuration and exits 0") {
  const Run r = run({"validate", sample("server.json")});
  CHECK(r.status == cli::kValid);
  CHECK(r.err.empty());
  CHECK(r.out == wheelbeat::config::toJson(
                     wheelbeat::config::resolved(wheelbeat::config::load(sample("server.json")))));
}

TEST_CASE("cli: the effective configuration shows the resolved heartbeat timeouts") {
  const Run r = run({"validate", sample("minimal.json")});
  CHECK(r.status == cli::kValid);
  const auto heartbeat = nlohmann::json::parse(r.out)["heartbeat"];
  CHECK(heartbeat["interval"] == "1m");
  CHECK(heartbeat["idle_timeout"] == "3m");   // 0 in the defaults: 3 × interval
  CHECK(heartbeat["close_timeout"] == "3m");  // 0 in the defaults: idle_timeout
  CHECK(heartbeat["seed"] == 0);              // 0 = a random seed per task: stays a rule
  const Run client = run({"validate", sample("client.json")});
  const auto hb = nlohmann::json::parse(client.out)["heartbeat"];
  CHECK(hb["idle_timeout"] == "90s");  // written: kept
  CHECK(hb["close_timeout"] == "90s");
}

TEST_CASE("cli: the effective configuration fills in the loop and server limits") {
  const Run r = run({"validate", sample("minimal.json")});
  CHECK(r.status == cli::kValid);
  const auto j = nlohmann::json::parse(r.out);
  CHECK(j["loop"] == nlohmann::json{{"max_partial_bytes", 33554432}, {"io_threads", 0}});
  CHECK(j["server"]["max_connections"] == 0);
}

TEST_CASE("cli: the effective configuration shows the heartbeat's failure detector") {
  const Run r = run({"validate", sample("minimal.json")});
  CHECK(r.status == cli::kValid);
  const auto heartbeat = nlohmann::json::parse(r.out)["heartbeat"];
  CHECK(heartbeat["detector"] == "fixed");
  CHECK(heartbeat["phi"] == nlohmann::json{{"threshold", 8.0},
                                           {"min_std_deviation", "100ms"},
                                           {"acceptable_pause", "1s"},
                                           {"window", 1000}});
}

TEST_CASE("cli: the effective configuration shows the service only when there is one") {
  const Run full = run({"validate", sample("full.json")});
  CHECK(full.status == cli::kValid);
  const auto service = nlohmann::json::parse(full.out)["service"];
  CHECK(service["interface"] == "org.example.Greeter");
  CHECK(service["timeout"] == "1s");
  CHECK(service["methods"] == nlohmann::json{"sayHello", "sayGoodbye"});
  const Run minimal = run({"validate", sample("minimal.json")});
  CHECK_FALSE(nlohmann::json::parse(minimal.out).contains("service"));
}

TEST_CASE("cli: several valid files print one document each in order") {
  const Run r = run({"validate", sample("minimal.json"), sample("client.json")});
  CHECK(r.status == cli::kValid);
  using wheelbeat::config::resolved;
  CHECK(r.out ==
        wheelbeat::config::toJson(resolved({})) +
            wheelbeat::config::toJson(resolved(wheelbeat::config::load(sample("client.json")))));
}

TEST_CASE("cli: a bad file prints every error with its file name and exits 1") {
  const Run r = run({"validate", data("bad.json")});
  CHECK(r.status == cli::kInvalid);
  CHECK(r.out.empty());
  std::string expected = fileText(data("bad.stderr"));
  std::string prefixed;
  std::istringstream lines(expected);
  for (std::string line; std::getline(lines, line);) {
    prefixed += data("") + line + "\n";  // the file as named on the command line
  }
  CHECK(r.err == prefixed);
}

TEST_CASE("cli: one bad file among good ones prints no configuration") {
  const Run r = run({"validate", sample("full.json"), "/nonexistent.json"});
  CHECK(r.status == cli::kInvalid);
  CHECK(r.out.empty());
  CHECK(r.err ==
        "/nonexistent.json: cannot read \"/nonexistent.json\": No such file or directory "
        "(expected: a readable file)\n");
}

TEST_CASE("cli: help exits 0 and bad usage exits 2 with the usage") {
  const Run help = run({"--help"});
  CHECK(help.status == cli::kValid);
  CHECK(help.out.starts_with("usage: wheelbeat-config validate FILE...\n"));
  CHECK(help.err.empty());
  for (const auto& args : std::vector<std::vector<std::string>>{
           {}, {"validate"}, {"check", "a.json"}, {"validate", "--strict", "a.json"}, {"-x"}}) {
    CAPTURE(args.size());
    const Run r = run(args);
    CHECK(r.status == cli::kBadUsage);
    CHECK(r.out.empty());
    CHECK(r.err.find("usage: wheelbeat-config validate FILE...") != std::string::npos);
  }
}

}  // TEST_SUITE("config")
