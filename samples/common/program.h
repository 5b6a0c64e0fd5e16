// The command line of a sample that takes no options: it still answers like every wheelbeat
// program (config/cli/command_line.h) — --help prints what it shows, --version its version, and
// any other argument exits 2 with the usage before the sample does anything.
//
//   int main(int argc, char** argv) {
//     if (const auto status = samples::noOptions(argc, argv, "wheel_tour", "What it shows."))
//       return *status;
//     ...
//
// Thread: main's, before anything else starts.
#pragma once

#include <command_line.h>

#include <optional>
#include <string>

namespace samples {

// nullopt: run the sample. Otherwise main returns the value now (0 after --help / --version, 2
// after anything else on the command line).
inline std::optional<int> noOptions(int argc, const char* const* argv, const std::string& name,
                                    const std::string& description) {
  wheelbeat::cli::CommandLine cmd(name,
                                  "usage: " + name + "\n       " + name + " --help | --version",
                                  description, "  " + name + "\n");
  return cmd.parse(argc, argv);
}

}  // namespace samples
