// Shared by the config tests: a document's error messages, and the repository's paths.
#pragma once

#include <wheelbeat/config/config.h>

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

namespace wbtest {

// Every error of `json` as toString() lines; empty when the document is valid.
inline std::vector<std::string> messagesOf(std::string_view json) {
  std::vector<std::string> out;
  const auto result = wheelbeat::config::tryLoadString(json);
  for (const auto& e : result.errors()) out.push_back(e.toString());
  return out;
}

inline std::filesystem::path sourceDir() { return WHEELBEAT_SOURCE_DIR; }
inline std::filesystem::path samplesDir() { return sourceDir() / "samples" / "configs"; }
inline std::filesystem::path schemaPath() {
  return sourceDir() / "config" / "wheelbeat.schema.json";
}

}  // namespace wbtest
