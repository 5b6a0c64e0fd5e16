// wheelbeat-config run in-process (cli::run) for the config tests: its status and both streams.
#pragma once

#include "cli.h"

#include <sstream>
#include <string>
#include <string_view>
#include <vector>

namespace wbtest {

struct CliRun {
  int status;
  std::string out;
  std::string err;
};

inline CliRun runCli(const std::vector<std::string>& args) {
  const std::vector<std::string_view> views(args.begin(), args.end());
  std::ostringstream out;
  std::ostringstream err;
  const int status = wheelbeat::config::cli::run(views, out, err);
  return {status, out.str(), err.str()};
}

}  // namespace wbtest
