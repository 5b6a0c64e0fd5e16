// wheelbeat-config defaults, schema and explain, in-process (cli::run).
#include "cli.h"
#include "cli_run.h"
#include "helpers.h"
#include "sections.h"

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace cli = wheelbeat::config::cli;
namespace fs = std::filesystem;
using wheelbeat::config::Config;

namespace {

using Run = wbtest::CliRun;
Run run(const std::vector<std::string>& args) { return wbtest::runCli(args); }

std::string fileText(const fs::path& path) {
  std::ifstream in(path);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

const std::string kUsage =
    "usage: wheelbeat-config validate FILE...\n"
    "       wheelbeat-config defaults | schema\n"
    "       wheelbeat-config explain KEY\n"
    "       wheelbeat-config [COMMAND] --help | --version\n";

}  // namespace

TEST_SUITE("config") {

TEST_CASE("cli defaults: every section of the default configuration with its durations in units") {
  const Run r = run({"defaults"});
  CHECK(r.status == cli::kValid);
  CHECK(r.err.empty());
  CHECK(r.out == wheelbeat::config::toJson(Config{}));
  const auto j = nlohmann::json::parse(r.out);
  std::vector<std::string> sections;
  for (const auto& [key, value] : j.items()) sections.push_back(key);  // parse() sorts them
  // service and metrics are absent by default: without them there is no service, no endpoint.
  CHECK(sections == std::vector<std::string>{"client", "cluster", "failback", "heartbeat",
                                             "log_level", "loop", "registry", "retry",
                                             "retry_budget", "server", "wheel"});
  CHECK(j["wheel"]["tick"] == "100ms");
  CHECK(j["heartbeat"]["interval"] == "1m");
  CHECK(j["heartbeat"]["idle_timeout"] == "0s");
  CHECK(j["heartbeat"]["reconnect"]["deadline"] == "0s");
  CHECK(wheelbeat::config::loadString(r.out) == Config{});
}

TEST_CASE("cli defaults: what it prints is what validate accepts") {
  const fs::path dir =
      fs::temp_directory_path() / ("wheelbeat_cli_defaults_" + std::to_string(getpid()));
  fs::create_directories(dir);
  std::ofstream(dir / "defaults.json") << run({"defaults"}).out;
  const Run v = run({"validate", (dir / "defaults.json").string()});
  fs::remove_all(dir);
  CHECK(v.status == cli::kValid);
  CHECK(v.err.empty());
  CHECK(v.out == wheelbeat::config::toJson(wheelbeat::config::resolved(Config{})));
}

TEST_CASE("cli schema: the checked-in schema from the key tables") {
  const Run r = run({"schema"});
  CHECK(r.status == cli::kValid);
  CHECK(r.err.empty());
  CHECK(r.out == wheelbeat::config::detail::schemaText());
  CHECK(r.out == fileText(wbtest::sourceDir() / "config" / "wheelbeat.schema.json"));
}

TEST_CASE("cli explain: a key's type and unit and default and range and description and rules") {
  const std::string expected =
      "key:         heartbeat.interval (/heartbeat/interval)\n"
      "type:        duration\n"
      "unit:        a string with a unit: h, m, s, ms, us or ns, or several in that order "
      "(\"30s\", \"1m30s\", \"250us\"); a bare number is an error\n"
      "default:     \"1m\"\n"
      "accepted:    a duration\n"
      "description: Heartbeat interval, at least 2 wheel ticks (2 * wheel.tick; Dubbo: 60s).\n"
      "rules of heartbeat: idle_timeout is 0 or >= 2 * interval; interval, and idle_timeout and "
      "close_timeout when not 0, are at least 2 wheel ticks (2 * wheel.tick)\n";
  for (const std::string key : {"heartbeat.interval", "/heartbeat/interval"}) {
    CAPTURE(key);
    const Run r = run({"explain", key});
    CHECK(r.status == cli::kValid);
    CHECK(r.err.empty());
    CHECK(r.out == expected);
  }
  CHECK(run({"explain", "loop.io_threads"}).out ==
        "key:         loop.io_threads (/loop/io_threads)\n"
        "type:        integer\n"
        "default:     0\n"
        "accepted:    an integer in 0..1024 (0 = one per core)\n"
        "description: Event loops (threads) of a net::EventLoopGroup built from this section; a "
        "single net::EventLoop ignores it. 0 = one per core "
        "(std::thread::hardware_concurrency()).\n");
}

TEST_CASE("cli explain: objects list keys and map entries match any name and required is said") {
  const Run wheel = run({"explain", "wheel"});
  CHECK(wheel.status == cli::kValid);
  CHECK(
      wheel.out.starts_with("key:         wheel (/wheel)\ntype:        object\n"
                            "default:     {\"tick\":\"100ms\",\"ticks_per_wheel\":512,"
                            "\"max_pending\":0}\n"));
  CHECK(wheel.out.find("\nkeys:        tick, ticks_per_wheel, max_pending\n") != std::string::npos);
  const Run entry = run({"explain", "/retry/payments/initial_delay"});
  CHECK(entry.status == cli::kValid);
  CHECK(entry.out.starts_with("key:         retry.*.initial_delay (/retry/*/initial_delay)\n"));
  CHECK(entry.out.ends_with("rules of retry.*: max_delay >= initial_delay\n"));
  CHECK(run({"explain", "service.interface"}).out.find("\ndefault:     none: required\n") !=
        std::string::npos);
  CHECK(run({"explain", "metrics"}).out.find("\ndefault:     none (the section is absent") !=
        std::string::npos);
}

TEST_CASE("cli explain: an unknown key exits 2 naming the nearest known key") {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"heartbeat.intervall", "heartbeat.interval"},
      {"/wheel/tic", "/wheel/tick"},
      {"heartbeat.idleTimeout", "heartbeat.idle_timeout"},
      {"/heartbeat/interval/", "/heartbeat/interval"},
      {"cluster..mode", "cluster.mode"},
  };
  for (const auto& [key, nearest] : cases) {
    CAPTURE(key);
    const Run r = run({"explain", key});
    CHECK(r.status == cli::kBadUsage);
    CHECK(r.out.empty());
    CHECK(r.err == "wheelbeat-config: explain: no key \"" + key + "\" (did you mean " + nearest +
                       "?)\n" + kUsage + "Run wheelbeat-config --help for every option.\n");
  }
  const Run none = run({"explain"});
  CHECK(none.status == cli::kBadUsage);
  CHECK(none.err.starts_with("wheelbeat-config: explain: KEY is required\n"));
}

TEST_CASE("cli: each command's --help exits 0 with the usage and what it does") {
  const std::vector<std::pair<std::string, std::string>> commands = {
      {"validate", "check FILE..., print each effective one"},
      {"defaults", "print the default configuration"},
      {"schema", "print the JSON Schema of the format"},
      {"explain", "print KEY's type, default, accepted values"},
  };
  for (const auto& [command, what] : commands) {
    CAPTURE(command);
    const Run r = run({command, "--help"});
    CHECK(r.status == cli::kValid);
    CHECK(r.err.empty());
    CHECK(r.out.starts_with(kUsage + "\n" + what + "\n"));
  }
  const Run top = run({"--help"});
  for (const auto& [command, what] : commands) {
    CHECK(top.out.find("  " + command) != std::string::npos);
  }
}

}  // TEST_SUITE("config")
