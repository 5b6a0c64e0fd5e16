// The public entry points: files and strings in, a Config or every error out.
#include "sections.h"

#include <fmt/format.h>

#include <array>
#include <cerrno>
#include <cstdio>
#include <memory>
#include <system_error>

namespace wheelbeat::config {
namespace {

std::string joined(const std::vector<ConfigError>& errors) {
  std::string out;
  for (const auto& e : errors) {
    if (!out.empty()) out += '\n';
    out += e.toString();
  }
  return out;
}

// nlohmann's message without its "[json.exception.parse_error.101] " tag.
std::string parseErrorText(const detail::Json::parse_error& e) {
  std::string_view text = e.what();
  const std::size_t tag = text.find("] ");
  if (text.starts_with('[') && tag != std::string_view::npos) text.remove_prefix(tag + 2);
  return std::string(text);
}

ConfigError fileError(const std::filesystem::path& path, int error) {
  return {"",
          fmt::format("cannot read \"{}\": {}", path.string(),
                      std::error_code(error, std::generic_category()).message()),
          "a readable file"};
}

// The whole file, or the errno of the failure.
std::variant<std::string, int> readFile(const std::filesystem::path& path) {
  const std::unique_ptr<std::FILE, int (*)(std::FILE*)> file(std::fopen(path.c_str(), "rb"),
                                                             &std::fclose);
  if (!file) return errno;
  std::string text;
  std::array<char, 1 << 14> buffer{};
  std::size_t n = 0;
  while ((n = std::fread(buffer.data(), 1, buffer.size(), file.get())) > 0) {
    text.append(buffer.data(), n);
  }
  if (std::ferror(file.get()) != 0) return errno != 0 ? errno : EIO;  // e.g. EISDIR
  return text;
}

}  // namespace

std::string ConfigError::toString() const {
  if (pointer.empty()) return fmt::format("{} (expected: {})", value, expected);
  return fmt::format("{}: {} (expected: {})", pointer, value, expected);
}

ConfigErrors::ConfigErrors(std::vector<ConfigError> errors)
    : std::runtime_error(joined(errors)), errors_(std::move(errors)) {}

LoadResult::LoadResult(std::vector<ConfigError> errors) {
  if (errors.empty()) throw std::invalid_argument("LoadResult: an error list must not be empty");
  value_ = std::move(errors);
}

const Config& LoadResult::config() const {
  if (!ok())
    throw std::logic_error("LoadResult::config(): the document had errors:\n" + joined(errors()));
  return std::get<Config>(value_);
}

const std::vector<ConfigError>& LoadResult::errors() const noexcept {
  static const std::vector<ConfigError> kNone;
  // get_if, not get: get could throw (bad_variant_access) and this is noexcept.
  const auto* errors = std::get_if<std::vector<ConfigError>>(&value_);
  return errors != nullptr ? *errors : kNone;
}

LoadResult tryLoadString(std::string_view json) {
  detail::Json document;
  std::vector<ConfigError> duplicates;
  try {
    document = detail::parseDocument(json, duplicates);
  } catch (const detail::Json::parse_error& e) {
    return LoadResult(std::vector<ConfigError>{{"", parseErrorText(e), "valid JSON"}});
  }
  LoadResult read = detail::readDocument(document);
  if (duplicates.empty()) return read;
  // A duplicate is reported first (it may explain a later error), then the rest as usual.
  for (const ConfigError& e : read.errors()) duplicates.push_back(e);
  return LoadResult(std::move(duplicates));
}

LoadResult tryLoad(const std::filesystem::path& path) {
  errno = 0;
  auto text = readFile(path);
  if (const int* error = std::get_if<int>(&text)) {
    return LoadResult(std::vector<ConfigError>{fileError(path, *error)});
  }
  return tryLoadString(std::get<std::string>(text));
}

Config loadString(std::string_view json) {
  LoadResult result = tryLoadString(json);
  if (!result) throw ConfigErrors(result.errors());
  return result.config();
}

Config load(const std::filesystem::path& path) {
  LoadResult result = tryLoad(path);
  if (!result) throw ConfigErrors(result.errors());
  return result.config();
}

std::vector<std::string> knownKeyPaths() {
  std::vector<std::string> paths;
  auto walk = [&paths](auto& self, const std::string& prefix,
                       const std::vector<detail::KeyNode>& keys) -> void {
    for (const auto& key : keys) {
      // "*" stands for any name, so it is written as is (not escaped).
      const std::string path = prefix + "/" + key.name;
      paths.push_back(path);
      self(self, path, key.children);
    }
  };
  walk(walk, "", detail::documentKeys());
  return paths;
}

}  // namespace wheelbeat::config
