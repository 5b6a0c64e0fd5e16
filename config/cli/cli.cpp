#include "cli.h"

#include <wheelbeat/config/config.h>

#include <string>
#include <vector>

namespace wheelbeat::config::cli {
namespace {

constexpr std::string_view kUsage =
    "usage: wheelbeat-config validate FILE...\n"
    "       wheelbeat-config --help\n"
    "\n"
    "Checks wheelbeat configuration files (JSON; format: share/wheelbeat/wheelbeat.schema.json).\n"
    "Every error of every file goes to stderr as FILE: /pointer: value (expected: ...).\n"
    "When all files are valid, each file's effective configuration (every key, defaults filled\n"
    "in, derived values resolved: idle_timeout = 3 x interval when 0, close_timeout =\n"
    "idle_timeout when 0) goes to stdout, one JSON document per file, in argument order.\n"
    "\n"
    "Exit status: 0 all files valid, 1 a file unreadable or invalid, 2 bad usage.\n";

int validate(std::span<const std::string_view> files, std::ostream& out, std::ostream& err) {
  std::vector<std::string> documents;
  bool valid = true;
  for (std::string_view file : files) {
    const LoadResult result = tryLoad(std::string(file));
    for (const ConfigError& e : result.errors()) err << file << ": " << e.toString() << '\n';
    if (result) documents.push_back(toJson(resolved(result.config())));
    valid = valid && result.ok();
  }
  if (!valid) return kInvalid;
  for (const std::string& document : documents) out << document;
  return kValid;
}

}  // namespace

int run(std::span<const std::string_view> args, std::ostream& out, std::ostream& err) {
  if (args.size() == 1 && (args[0] == "--help" || args[0] == "-h")) {
    out << kUsage;
    return kValid;
  }
  if (args.size() < 2 || args[0] != "validate") {
    err << kUsage;
    return kBadUsage;
  }
  const auto files = args.subspan(1);
  for (std::string_view file : files) {
    if (file.starts_with('-')) {  // no options yet: a typo, not a file name
      err << "wheelbeat-config: unknown option " << file << "\n" << kUsage;
      return kBadUsage;
    }
  }
  return validate(files, out, err);
}

}  // namespace wheelbeat::config::cli
