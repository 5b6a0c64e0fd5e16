// The command-line conventions of every wheelbeat program (samples, wheelbeat-config,
// wheelbeat-dubbo, benchmarks, soak), on CLI11 (Debian's libcli11-dev, header-only). Not part of
// any library: only programs link the `wheelbeat_command_line` target.
//
//   wheelbeat::cli::CommandLine cmd("echo_server", "usage: echo_server [--port PORT] ...",
//                                   "Answers every request with its own body.",
//                                   "  echo_server --port 20880\n");
//   std::optional<std::uint16_t> port;
//   cmd.app().add_option("--port", port, "the listen port")->default_str("20880");
//   cmd.app().add_option("--kind", kind, "...")->check(wheelbeat::cli::oneOf({"a", "b"}));
//   if (const auto status = cmd.parse(argc, argv)) return *status;
//
// This header does not include CLI11: App and Option below mirror the part of CLI11's API the
// programs use (same names, same chaining through pointers), and CLI11 itself is compiled once, in
// command_line.cpp. Its headers define validators with dynamic initialisers and every function
// inline, so each file including them cost 4-8 s of code generation (more under a sanitizer). A
// program that needs more of CLI11 includes command_line_cli11.h (cli11App()).
//
// What every program gets:
//   --help, -h   the synopsis, the description, every option with its default, the examples,
//                on stdout; exit 0.
//   --version    "<program> <project version>" on stdout; exit 0 (unless the program declines
//                it with versionFlag = false).
//   --flag=value and --flag value alike; a switch takes no value ("--plain=1" is accepted by
//                CLI11 as "true").
//   a bad option "<program>: <what is wrong, naming the option>", the synopsis and a hint on
//                stderr; exit kBadUsage (2; a program may choose another, as the soak's 64). An
//                unknown "--flag" within two edits of a known one is named: "(did you mean
//                --port?)".
//   enumerated values (oneOf) are matched case-sensitively; a wrong one is named with the list
//                of the allowed ones.
// Required options and subcommands are checked after parse(), with fail(): CLI11 checks its own
// requirements before unknown arguments, so "--typo" would be reported as "--x is required".
// Thread: a CommandLine, its App and Options are used by one thread (main's).
#pragma once

#include <cstddef>
#include <functional>
#include <iosfwd>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

namespace CLI {
class App;
class Option;
}  // namespace CLI

namespace wheelbeat::cli {

inline constexpr int kBadUsage = 2;

// "<program> <project version>", what --version prints.
[[nodiscard]] std::string versionText(std::string_view program);

// "a, b or c".
[[nodiscard]] std::string listText(const std::vector<std::string>& values);

// A check of an option's value, run by parse(): "" when the value is good, otherwise what is
// wrong with it (parse() prefixes the option's name). The check may rewrite the value. The
// description is what --help shows after the option's type ("" shows nothing).
class Validator {
public:
  using Check = std::function<std::string(std::string& value)>;
  Validator(Check check, std::string description)
      : check_(std::move(check)), description_(std::move(description)) {}

  // The same check with another help text (CLI11's Validator::description).
  Validator& description(std::string text) & {
    description_ = std::move(text);
    return *this;
  }
  Validator&& description(std::string text) && { return std::move(description(std::move(text))); }

  [[nodiscard]] const Check& check() const noexcept { return check_; }
  [[nodiscard]] const std::string& description() const noexcept { return description_; }

private:
  Check check_;
  std::string description_;
};

// An enumerated flag: the value must be one of `allowed`, exactly (case-sensitive). The help
// shows {a|b|c}; a wrong value fails with `--flag: "x" (expected: a, b or c)`.
[[nodiscard]] Validator oneOf(const std::vector<std::string>& allowed);
// CLI11's Range and PositiveNumber: the value, read as a number, within [lo, hi] / above 0.
[[nodiscard]] Validator integerRange(long long lo, long long hi);
[[nodiscard]] Validator realRange(double lo, double hi);
template <class T, class U>
  requires std::is_arithmetic_v<T> && std::is_arithmetic_v<U>
[[nodiscard]] Validator range(T lo, U hi) {
  if constexpr (std::is_floating_point_v<T> || std::is_floating_point_v<U>) {
    return realRange(static_cast<double>(lo), static_cast<double>(hi));
  } else {
    return integerRange(static_cast<long long>(lo), static_cast<long long>(hi));
  }
}
[[nodiscard]] Validator positiveNumber();

// One option of an App (CLI11's Option): its setters return the option, for chaining.
class Option {
public:
  explicit Option(CLI::Option* option) noexcept : option_(option) {}

  Option* type_name(const std::string& name);    // "PORT" in "--port PORT" ("": none)
  Option* option_text(const std::string& text);  // the whole text after the flag
  Option* default_str(const std::string& text);  // "(default: text)" in the help
  Option* capture_default_str();                 // the bound variable's value, as text
  Option* default_val(long long value);          // sets the variable and the help's default
  Option* check(const Validator& validator);     // run on each value by parse()
  Option* delimiter(char separator);             // "a,b" gives two values
  Option* group(const std::string& name);        // a heading of the help

private:
  CLI::Option* option_;
};

// A command or subcommand (CLI11's App). add_option binds a variable of one of the types
// instantiated in command_line.cpp (std::string, bool, the integer types, double, std::optional
// of those, std::vector<std::string>); another type is a link error naming it.
class App {
public:
  explicit App(CLI::App* app) noexcept : app_(app) {}

  template <class T>
  Option* add_option(const std::string& names, T& variable, const std::string& description);
  Option* add_flag(const std::string& names, bool& variable, const std::string& description);
  App* add_subcommand(const std::string& name, const std::string& description);
  // True once parse() met this subcommand on the command line.
  [[nodiscard]] bool parsed() const;

  [[nodiscard]] CLI::App& cli11() noexcept { return *app_; }

private:
  Option* keep(CLI::Option* option);

  CLI::App* app_;
  // Stable addresses: add_option and add_subcommand hand out pointers.
  std::vector<std::unique_ptr<Option>> options_;
  std::vector<std::unique_ptr<App>> subcommands_;
};

// One program's command line: an App with --help / -h, --version (unless the program declines
// it), the help layout of the file comment, and parse() that turns CLI11's outcomes into the
// conventions above.
class CommandLine {
public:
  // `synopsis`: "usage: NAME ..." lines (no final newline); `examples`: indented command lines.
  CommandLine(std::string name, std::string synopsis, const std::string& description,
              const std::string& examples, bool versionFlag = true, int badUsage = kBadUsage);
  ~CommandLine();
  CommandLine(const CommandLine&) = delete;
  CommandLine& operator=(const CommandLine&) = delete;

  [[nodiscard]] App& app() noexcept;
  [[nodiscard]] const std::string& name() const noexcept { return name_; }

  // nullopt: go on with the parsed values. Otherwise the program returns this status now: 0
  // after --help / --version (printed on stdout), badUsage after an error (printed on stderr).
  std::optional<int> parse(int argc, const char* const* argv);
  // The same for arguments without the program name, in order (an in-process caller's), printed
  // on `out` / `err`.
  std::optional<int> parse(const std::vector<std::string>& args, std::ostream& out,
                           std::ostream& err);

  // A rule checked after parsing (one flag needs another, a value no validator knows): the
  // message, the synopsis and the hint on `err` (stderr by default); returns the bad-usage status.
  int fail(std::string_view what) const;
  int fail(std::string_view what, std::ostream& err) const;

  // Levenshtein distance (insertions, deletions, substitutions).
  [[nodiscard]] static std::size_t editDistance(std::string_view a, std::string_view b);

private:
  struct Impl;
  std::string name_;
  std::string synopsis_;
  int badUsage_;
  std::unique_ptr<Impl> impl_;
};

}  // namespace wheelbeat::cli
