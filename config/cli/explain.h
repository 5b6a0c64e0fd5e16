// `wheelbeat-config explain KEY`, `defaults` and `schema`: the configuration reference from the
// loader's key tables, the ones docs/configuration.md and the JSON Schema are generated from (no
// file is read: the program is relocatable). Private to config/cli. Thread: reentrant; each
// writes only to the streams it is given.
#pragma once

#include <optional>
#include <ostream>
#include <string>
#include <string_view>

namespace wheelbeat::config::cli {

// The text `explain KEY` prints for KEY — a JSON pointer ("/heartbeat/interval") or dotted
// ("heartbeat.interval"); any name of a map ("retry") matches its entries ("/retry/fast/backoff")
// — as lines "name: value": key (both spellings), type, default, accepted values (unit or range),
// description, the keys of an object, and the rules across keys of the object it is in. nullopt
// when KEY names no key.
[[nodiscard]] std::optional<std::string> explainText(std::string_view key);

// The known key nearest to KEY (fewest edits), spelt as KEY is (pointer or dotted).
[[nodiscard]] std::string nearestKey(std::string_view key);

// Why KEY, which names no key, names none: "did you mean <nearestKey(KEY)>?", or, when its
// section is one this build left out (without the registry: registry, service, cluster), that
// the section was left out and why.
[[nodiscard]] std::string missingKeyHint(std::string_view key);

// The JSON Schema of the format: config/wheelbeat.schema.json's content.
[[nodiscard]] std::string schemaText();

}  // namespace wheelbeat::config::cli
