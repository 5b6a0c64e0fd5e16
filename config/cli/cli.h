// The wheelbeat-config command line, as a function the tests call in-process (private to
// config/: not installed). Thread: run() is reentrant; it writes only to the streams it is given.
#pragma once

#include <ostream>
#include <span>
#include <string_view>

namespace wheelbeat::config::cli {

// Exit status of run().
inline constexpr int kValid = 0;     // every file is valid (or --help)
inline constexpr int kInvalid = 1;   // some file is unreadable or invalid
inline constexpr int kBadUsage = 2;  // unknown command or option, no file

// `args` excludes the program name. `validate FILE...`: every error of every file on `err` as
// "FILE: /pointer: value (expected: ...)", or, when all files are valid, each file's effective
// configuration (toJson(resolved(config))) on `out`, in argument order, one JSON document after
// another.
// `--help` / `-h`: the usage, every option and examples on `out`; `--version`: "wheelbeat-config
// VERSION" on `out`. Anything else: what is wrong and the usage on `err`, kBadUsage.
int run(std::span<const std::string_view> args, std::ostream& out, std::ostream& err);

}  // namespace wheelbeat::config::cli
