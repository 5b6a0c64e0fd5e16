// CLI11 itself under a CommandLine (command_line.h), for the programs that use more of CLI11 than
// App and Option mirror (the benchmarks). Each file including this pays CLI11's compile time.
// Thread: main's, as CommandLine.
#pragma once

#include "command_line.h"

// GCC 12 at -O2 sees a "potential null pointer dereference" in std::string code it inlines into
// CLI11's detail::split (a false positive; it depends on inlining, so on the file). The project
// builds with -Wnull-dereference -Werror: the warning is turned off for CLI11's code only (GCC 12
// honours a pragma at an inlined function's site).
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wnull-dereference"
#include <CLI/CLI.hpp>
#pragma GCC diagnostic pop

namespace wheelbeat::cli {

// The CLI11 App under `cmd`: its options and subcommands are cmd's (help, parse, fail).
[[nodiscard]] CLI::App& cli11App(CommandLine& cmd);
// One of our validators as CLI11's (for an option added through cli11App()).
[[nodiscard]] CLI::Validator cli11(const Validator& validator);

}  // namespace wheelbeat::cli
