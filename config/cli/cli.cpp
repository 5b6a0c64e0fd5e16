#include "cli.h"

#include "command_line.h"
#include "explain.h"

#include <wheelbeat/config/config.h>

#include <string>
#include <vector>

namespace wheelbeat::config::cli {
namespace {

constexpr const char* kSynopsis =
    "usage: wheelbeat-config validate FILE...\n"
    "       wheelbeat-config defaults | schema\n"
    "       wheelbeat-config explain KEY\n"
    "       wheelbeat-config [COMMAND] --help | --version";

constexpr const char* kDescription =
    "Checks wheelbeat configuration files (JSON; format: share/wheelbeat/wheelbeat.schema.json).\n"
    "Every error of every file goes to stderr as FILE: /pointer: value (expected: ...).\n"
    "When all files are valid, each file's effective configuration (every key, defaults filled\n"
    "in, derived values resolved: idle_timeout = 3 x interval when 0, close_timeout =\n"
    "idle_timeout when 0) goes to stdout, one JSON document per file, in argument order.\n"
    "defaults prints the default configuration (every key; \"service\" and \"metrics\" are\n"
    "absent by default), schema the JSON Schema of the format, explain KEY one key's type,\n"
    "default, accepted values and description (KEY: /heartbeat/interval or heartbeat.interval).\n"
    "\n"
    "Exit status: 0 all files valid (or printed), 1 a file unreadable or invalid, 2 bad usage\n"
    "(an unknown KEY among them, with the nearest known key).";

constexpr const char* kExamples =
    "  wheelbeat-config validate samples/configs/server.json\n"
    "  wheelbeat-config validate client.json server.json > effective.json\n"
    "  wheelbeat-config defaults > wheelbeat.json\n"
    "  wheelbeat-config explain heartbeat.interval\n";

int validate(const std::vector<std::string>& files, std::ostream& out, std::ostream& err) {
  std::vector<std::string> documents;
  bool valid = true;
  for (const std::string& file : files) {
    const LoadResult result = tryLoad(file);
    for (const ConfigError& e : result.errors()) err << file << ": " << e.toString() << '\n';
    if (result) documents.push_back(toJson(resolved(result.config())));
    valid = valid && result.ok();
  }
  if (!valid) return kInvalid;
  for (const std::string& document : documents) out << document;
  return kValid;
}

int explain(const ::wheelbeat::cli::CommandLine& cmd, const std::string& key, std::ostream& out,
            std::ostream& err) {
  if (const auto text = explainText(key)) {
    out << *text;
    return kValid;
  }
  return cmd.fail("explain: no key \"" + key + "\" (" + missingKeyHint(key) + ")", err);
}

}  // namespace

int run(std::span<const std::string_view> args, std::ostream& out, std::ostream& err) {
  ::wheelbeat::cli::CommandLine cmd("wheelbeat-config", kSynopsis, kDescription, kExamples, true,
                                    kBadUsage);
  ::wheelbeat::cli::App* check =
      cmd.app().add_subcommand("validate", "check FILE..., print each effective one");
  std::vector<std::string> files;
  // An argument that starts with '-' is an option to CLI11: a typo, never taken for a file name.
  check->add_option("FILE", files, "a configuration file (JSON)")->type_name("");
  ::wheelbeat::cli::App* defaults =
      cmd.app().add_subcommand("defaults", "print the default configuration");
  ::wheelbeat::cli::App* schema =
      cmd.app().add_subcommand("schema", "print the JSON Schema of the format");
  ::wheelbeat::cli::App* explainKey =
      cmd.app().add_subcommand("explain", "print KEY's type, default, accepted values");
  std::string key;
  explainKey->add_option("KEY", key, "/heartbeat/interval or heartbeat.interval")->type_name("");
  if (const auto status = cmd.parse(std::vector<std::string>(args.begin(), args.end()), out, err)) {
    return *status;
  }
  // Checked here, not by CLI11's require_subcommand() / required(): CLI11 would report them
  // before an unknown option.
  if (defaults->parsed()) return (out << toJson(Config{}), kValid);
  if (schema->parsed()) return (out << schemaText(), kValid);
  if (explainKey->parsed()) {
    if (key.empty()) return cmd.fail("explain: KEY is required", err);
    return explain(cmd, key, out, err);
  }
  if (!check->parsed()) {
    return cmd.fail("a command is required (expected: validate, defaults, schema, explain)", err);
  }
  if (files.empty()) return cmd.fail("validate: FILE... is required", err);
  return validate(files, out, err);
}

}  // namespace wheelbeat::config::cli
