// The command-line conventions of every wheelbeat program (samples, wheelbeat-config, benchmarks,
// soak), on CLI11 (Debian's libcli11-dev, header-only). Not part of any library: only programs
// link the `wheelbeat_command_line` target.
//
//   wheelbeat::cli::CommandLine cmd("echo_server", "usage: echo_server [--port PORT] ...",
//                                   "Answers every request with its own body.",
//                                   "  echo_server --port 20880\n");
//   std::optional<std::uint16_t> port;
//   cmd.app().add_option("--port", port, "the listen port")->default_str("20880");
//   cmd.app().add_option("--kind", kind, "...")->check(wheelbeat::cli::oneOf({"a", "b"}));
//   if (const auto status = cmd.parse(argc, argv)) return *status;
//
// What every program gets:
//   --help, -h   the synopsis, the description, every option with its default, the examples,
//                on stdout; exit 0.
//   --version    "<program> <project version>" on stdout; exit 0 (unless the program gives
//                --version another meaning, as the echo tools' service version).
//   --flag=value and --flag value alike; a switch takes no value ("--plain=1" is accepted by
//                CLI11 as "true").
//   a bad option "<program>: <what is wrong, naming the option>", the synopsis and a hint on
//                stderr; exit kBadUsage (2; a program may choose another, as the soak's 64).
//   enumerated values (oneOf) are matched case-sensitively; a wrong one is named with the list
//                of the allowed ones.
// Required options and subcommands are checked after parse(), with fail(): CLI11 checks its own
// requirements before unknown arguments, so "--typo" would be reported as "--x is required".
// Thread: a CommandLine is used by one thread (main's), like the CLI11 App it holds.
#pragma once

// GCC 12 at -O2 sees a "potential null pointer dereference" in std::string code it inlines into
// CLI11's detail::split (a false positive; it depends on inlining, so on the file). The project
// builds with -Wnull-dereference -Werror: the warning is turned off for CLI11's code only (GCC 12
// honours a pragma at an inlined function's site).
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wnull-dereference"
#include <CLI/CLI.hpp>
#pragma GCC diagnostic pop

#include <algorithm>
#include <cstddef>
#include <iostream>
#include <memory>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#ifndef WHEELBEAT_CLI_VERSION
#error "WHEELBEAT_CLI_VERSION (the project version) comes with the wheelbeat_command_line target"
#endif

namespace wheelbeat::cli {

inline constexpr int kBadUsage = 2;

// "<program> <project version>", what --version prints.
inline std::string versionText(std::string_view program) {
  return std::string(program) + " " + WHEELBEAT_CLI_VERSION;
}

// "a, b or c".
inline std::string listText(const std::vector<std::string>& values) {
  std::string out;
  for (std::size_t i = 0; i < values.size(); ++i) {
    if (i > 0) out += i + 1 == values.size() ? " or " : ", ";
    out += values[i];
  }
  return out;
}

// An enumerated flag: the value must be one of `allowed`, exactly (case-sensitive). The help
// shows {a|b|c}; a wrong value fails with `--flag: "x" (expected: a, b or c)`.
inline CLI::Validator oneOf(const std::vector<std::string>& allowed) {
  std::string shown = "{";
  for (const auto& a : allowed) shown += (shown.size() > 1 ? "|" : "") + a;
  shown += "}";
  return CLI::Validator(
      [allowed](std::string& value) -> std::string {
        for (const auto& a : allowed) {
          if (value == a) return {};
        }
        return "\"" + value + "\" (expected: " + listText(allowed) + ")";
      },
      shown);
}

// `text` broken at spaces into lines of at most `width` characters (a longer word stays whole).
inline std::string wrapped(const std::string& text, std::size_t width) {
  std::string out;
  std::size_t lineLength = 0;
  std::size_t start = 0;
  while (start < text.size()) {
    const std::size_t end = std::min(text.find(' ', start), text.size());
    const std::size_t word = end - start;
    if (lineLength > 0 && lineLength + 1 + word > width) {
      out += '\n';
      lineLength = 0;
    } else if (lineLength > 0) {
      out += ' ';
      ++lineLength;
    }
    out.append(text, start, word);
    lineLength += word;
    start = end + 1;
  }
  return out;
}

// The help layout: synopsis first (so "usage: ..." opens the text), then the description, the
// options with "(default: X)" after their description, and the examples.
class HelpFormatter : public CLI::Formatter {
public:
  explicit HelpFormatter(std::string synopsis) : synopsis_(std::move(synopsis)) {
    column_width(kColumn);
  }
  std::string make_help(const CLI::App* app, std::string /*name*/,
                        CLI::AppFormatMode mode) const override {
    std::string out = synopsis_ + "\n";
    const std::string description = make_description(app);
    if (!description.empty()) out += "\n" + description;
    return out + make_positionals(app) + make_groups(app, mode) + make_subcommands(app, mode) +
           "\n" + make_footer(app);
  }
  std::string make_option_opts(const CLI::Option* opt) const override {
    if (!opt->get_option_text().empty()) return " " + opt->get_option_text();
    if (opt->get_type_size() == 0) return {};  // a switch
    std::string out = opt->get_type_name().empty() ? "" : " " + opt->get_type_name();
    if (opt->get_expected_max() == CLI::detail::expected_max_vector_size) out += " ...";
    return out + (opt->get_required() ? " (required)" : "");
  }
  std::string make_option_desc(const CLI::Option* opt) const override {
    // A switch has none; an option with its own text (option_text) says it in its description
    // (its default string may be a marker, as the echo tools' --version).
    const std::string& d = opt->get_default_str();
    const bool shown = opt->get_type_size() != 0 && !d.empty() && opt->get_option_text().empty();
    // CLI11 indents the lines after the first to the column.
    return wrapped(opt->get_description() + (shown ? " (default: " + d + ")" : ""),
                   kLineWidth - kColumn);
  }

private:
  static constexpr std::size_t kColumn = 30;  // options, then their descriptions
  static constexpr std::size_t kLineWidth = 100;
  std::string synopsis_;
};

// One program's command line: a CLI11 App with --help / -h, --version (unless the program
// declines it), the help layout above, and parse() that turns CLI11's outcomes into the
// conventions of the file comment.
class CommandLine {
public:
  // `synopsis`: "usage: NAME ..." lines (no final newline); `examples`: indented command lines.
  CommandLine(std::string name, std::string synopsis, const std::string& description,
              const std::string& examples, bool versionFlag = true, int badUsage = kBadUsage)
      : name_(std::move(name)), synopsis_(std::move(synopsis)), badUsage_(badUsage) {
    app_.name(name_);
    app_.description(description);
    app_.footer("Examples:\n" + examples);
    app_.formatter(std::make_shared<HelpFormatter>(synopsis_));
    app_.set_help_flag("-h,--help", "print this help and exit");
    if (versionFlag) {
      app_.set_version_flag("--version", versionText(name_),
                            "print \"" + versionText(name_) + "\" and exit");
    }
  }

  [[nodiscard]] CLI::App& app() noexcept { return app_; }
  [[nodiscard]] const std::string& name() const noexcept { return name_; }

  // nullopt: go on with the parsed values. Otherwise the program returns this status now: 0
  // after --help / --version (printed on `out`), badUsage after an error (printed on `err`).
  std::optional<int> parse(int argc, const char* const* argv) {
    std::vector<std::string> args;
    for (int i = argc - 1; i > 0; --i) args.emplace_back(argv[i]);  // CLI11 wants them reversed
    return parseReversed(std::move(args), std::cout, std::cerr);
  }
  // The same for arguments without the program name, in order (an in-process caller's).
  std::optional<int> parse(const std::vector<std::string>& args, std::ostream& out,
                           std::ostream& err) {
    return parseReversed({args.rbegin(), args.rend()}, out, err);
  }

  // A rule checked after parsing (one flag needs another, a value no validator knows): the
  // message, the synopsis and the hint on `err`; returns the bad-usage status.
  int fail(std::string_view what, std::ostream& err = std::cerr) const {
    err << name_ << ": " << what << "\n"
        << synopsis_ << "\nRun " << name_ << " --help for every option.\n";
    return badUsage_;
  }

private:
  std::optional<int> parseReversed(std::vector<std::string> args, std::ostream& out,
                                   std::ostream& err) {
    try {
      app_.parse(args);
      return std::nullopt;
    } catch (const CLI::CallForHelp&) {
      out << app_.help();
      return 0;
    } catch (const CLI::CallForVersion& e) {
      out << e.what() << "\n";
      return 0;
    } catch (const CLI::ExtrasError& e) {
      return fail(std::string(e.what()) + nearMiss(args), err);
    } catch (const CLI::ParseError& e) {
      return fail(e.what(), err);
    }
  }

  // " (did you mean --port?)" for the first "--flag" in `args` that names no option but is
  // within two edits of one; "" when there is none.
  [[nodiscard]] std::string nearMiss(const std::vector<std::string>& args) const {
    for (auto it = args.rbegin(); it != args.rend(); ++it) {
      if (it->size() < 3 || it->compare(0, 2, "--") != 0) continue;
      const std::string flag = it->substr(2, it->find('=') - 2);
      std::string best;
      std::size_t bestDistance = 3;
      for (const CLI::Option* opt : app_.get_options()) {
        for (const std::string& name : opt->get_lnames()) {
          if (name == flag) continue;
          const std::size_t d = editDistance(flag, name);
          if (d < bestDistance) {
            bestDistance = d;
            best = name;
          }
        }
      }
      if (!best.empty()) return " (did you mean --" + best + "?)";
    }
    return {};
  }

public:
  // Levenshtein distance (insertions, deletions, substitutions), one row at a time.
  static std::size_t editDistance(std::string_view a, std::string_view b) {
    std::vector<std::size_t> row(b.size() + 1);
    for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
    for (std::size_t i = 1; i <= a.size(); ++i) {
      std::size_t diagonal = row[0];
      row[0] = i;
      for (std::size_t j = 1; j <= b.size(); ++j) {
        const std::size_t up = row[j];
        row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
        diagonal = up;
      }
    }
    return row[b.size()];
  }

private:
  std::string name_;
  std::string synopsis_;
  int badUsage_;
  CLI::App app_;
};

}  // namespace wheelbeat::cli
