// The one file that compiles CLI11 for every program (see command_line.h).
#include "command_line_cli11.h"

#include <algorithm>
#include <cstdint>
#include <iostream>
#include <ostream>
#include <utility>

#ifndef WHEELBEAT_CLI_VERSION
#error "WHEELBEAT_CLI_VERSION (the project version) comes with the wheelbeat_command_line target"
#endif

namespace wheelbeat::cli {
namespace {

// `text` broken at spaces into lines of at most `width` characters (a longer word stays whole).
std::string wrapped(const std::string& text, std::size_t width) {
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
    // (its default string may be a marker).
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

// One of CLI11's validators as ours, keeping its messages and help text.
Validator fromCli11(CLI::Validator v) {
  std::string description = v.get_description();
  return Validator([v = std::move(v)](std::string& value) { return v(value); },
                   std::move(description));
}

// " (did you mean --port?)" for the first "--flag" in `args` (in order) that names no option of
// `app` but is within two edits of one; "" when there is none.
std::string nearMiss(const CLI::App& app, const std::vector<std::string>& args) {
  for (const std::string& arg : args) {
    if (arg.size() < 3 || arg.compare(0, 2, "--") != 0) continue;
    const std::string flag = arg.substr(2, arg.find('=') - 2);
    std::string best;
    std::size_t bestDistance = 3;
    for (const CLI::Option* opt : app.get_options()) {
      for (const std::string& name : opt->get_lnames()) {
        if (name == flag) continue;
        const std::size_t d = CommandLine::editDistance(flag, name);
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

}  // namespace

std::string versionText(std::string_view program) {
  return std::string(program) + " " + WHEELBEAT_CLI_VERSION;
}

std::string listText(const std::vector<std::string>& values) {
  std::string out;
  for (std::size_t i = 0; i < values.size(); ++i) {
    if (i > 0) out += i + 1 == values.size() ? " or " : ", ";
    out += values[i];
  }
  return out;
}

Validator oneOf(const std::vector<std::string>& allowed) {
  std::string shown = "{";
  for (const auto& a : allowed) shown += (shown.size() > 1 ? "|" : "") + a;
  shown += "}";
  return Validator(
      [allowed](std::string& value) -> std::string {
        for (const auto& a : allowed) {
          if (value == a) return {};
        }
        return "\"" + value + "\" (expected: " + listText(allowed) + ")";
      },
      shown);
}

Validator integerRange(long long lo, long long hi) { return fromCli11(CLI::Range(lo, hi)); }
Validator realRange(double lo, double hi) { return fromCli11(CLI::Range(lo, hi)); }
Validator positiveNumber() { return fromCli11(CLI::PositiveNumber); }

CLI::Validator cli11(const Validator& validator) {
  return CLI::Validator(validator.check(), validator.description());
}

// --- Option -----------------------------------------------------------------------------------

Option* Option::type_name(const std::string& name) {
  option_->type_name(name);
  return this;
}
Option* Option::option_text(const std::string& text) {
  option_->option_text(text);
  return this;
}
Option* Option::default_str(const std::string& text) {
  option_->default_str(text);
  return this;
}
Option* Option::capture_default_str() {
  option_->capture_default_str();
  return this;
}
Option* Option::default_val(long long value) {
  option_->default_val(value);
  return this;
}
Option* Option::check(const Validator& validator) {
  option_->check(cli11(validator));
  return this;
}
Option* Option::delimiter(char separator) {
  option_->delimiter(separator);
  return this;
}
Option* Option::group(const std::string& name) {
  option_->group(name);
  return this;
}

// --- App --------------------------------------------------------------------------------------

Option* App::keep(CLI::Option* option) {
  options_.push_back(std::make_unique<Option>(option));
  return options_.back().get();
}

template <class T>
Option* App::add_option(const std::string& names, T& variable, const std::string& description) {
  return keep(app_->add_option(names, variable, description));
}

Option* App::add_flag(const std::string& names, bool& variable, const std::string& description) {
  return keep(app_->add_flag(names, variable, description));
}

App* App::add_subcommand(const std::string& name, const std::string& description) {
  subcommands_.push_back(std::make_unique<App>(app_->add_subcommand(name, description)));
  return subcommands_.back().get();
}

bool App::parsed() const { return app_->parsed(); }

// The variable types the programs bind; add one here when a program needs it.
#define WHEELBEAT_CLI_OPTION_TYPE(T) \
  template Option* App::add_option<T>(const std::string&, T&, const std::string&);
#define WHEELBEAT_CLI_OPTION_TYPES(T) \
  WHEELBEAT_CLI_OPTION_TYPE(T)        \
  WHEELBEAT_CLI_OPTION_TYPE(std::optional<T>)
WHEELBEAT_CLI_OPTION_TYPES(std::string)
WHEELBEAT_CLI_OPTION_TYPES(int)
WHEELBEAT_CLI_OPTION_TYPES(unsigned)
WHEELBEAT_CLI_OPTION_TYPES(long)
WHEELBEAT_CLI_OPTION_TYPES(unsigned long)
WHEELBEAT_CLI_OPTION_TYPES(long long)
WHEELBEAT_CLI_OPTION_TYPES(unsigned long long)
WHEELBEAT_CLI_OPTION_TYPES(std::uint16_t)
WHEELBEAT_CLI_OPTION_TYPES(double)
WHEELBEAT_CLI_OPTION_TYPE(std::vector<std::string>)
#undef WHEELBEAT_CLI_OPTION_TYPES
#undef WHEELBEAT_CLI_OPTION_TYPE

// --- CommandLine ------------------------------------------------------------------------------

struct CommandLine::Impl {
  CLI::App cli11;
  App app{&cli11};
};

CLI::App& cli11App(CommandLine& cmd) { return cmd.app().cli11(); }

CommandLine::CommandLine(std::string name, std::string synopsis, const std::string& description,
                         const std::string& examples, bool versionFlag, int badUsage)
    : name_(std::move(name)),
      synopsis_(std::move(synopsis)),
      badUsage_(badUsage),
      impl_(std::make_unique<Impl>()) {
  CLI::App& app = impl_->cli11;
  app.name(name_);
  app.description(description);
  app.footer("Examples:\n" + examples);
  app.formatter(std::make_shared<HelpFormatter>(synopsis_));
  app.set_help_flag("-h,--help", "print this help and exit");
  if (versionFlag) {
    app.set_version_flag("--version", versionText(name_),
                         "print \"" + versionText(name_) + "\" and exit");
  }
}

CommandLine::~CommandLine() = default;

App& CommandLine::app() noexcept { return impl_->app; }

std::optional<int> CommandLine::parse(int argc, const char* const* argv) {
  std::vector<std::string> args;
  for (int i = 1; i < argc; ++i) args.emplace_back(argv[i]);
  return parse(args, std::cout, std::cerr);
}

std::optional<int> CommandLine::parse(const std::vector<std::string>& args, std::ostream& out,
                                      std::ostream& err) {
  CLI::App& app = impl_->cli11;
  std::vector<std::string> reversed(args.rbegin(), args.rend());  // CLI11 wants them reversed
  try {
    app.parse(reversed);
    return std::nullopt;
  } catch (const CLI::CallForHelp&) {
    out << app.help();
    return 0;
  } catch (const CLI::CallForVersion& e) {
    out << e.what() << "\n";
    return 0;
  } catch (const CLI::ExtrasError& e) {
    return fail(std::string(e.what()) + nearMiss(app, args), err);
  } catch (const CLI::ParseError& e) {
    return fail(e.what(), err);
  }
}

int CommandLine::fail(std::string_view what) const { return fail(what, std::cerr); }

int CommandLine::fail(std::string_view what, std::ostream& err) const {
  err << name_ << ": " << what << "\n"
      << synopsis_ << "\nRun " << name_ << " --help for every option.\n";
  return badUsage_;
}

std::size_t CommandLine::editDistance(std::string_view a, std::string_view b) {
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

}  // namespace wheelbeat::cli
