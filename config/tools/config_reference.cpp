// wheelbeat-config-reference: prints (or writes) the files generated from the loader's key
// tables — the JSON Schema and the configuration reference. The build's config_reference target
// runs it to rewrite config/wheelbeat.schema.json and docs/configuration.md; tests/config fails
// when the checked-in files differ from what it prints.
#include "sections.h"

#include <cstdio>
#include <fstream>
#include <iostream>
#include <string_view>

int main(int argc, char** argv) {
  const std::string_view what = argc > 1 ? argv[1] : "";
  if (argc > 3 || (what != "schema" && what != "markdown")) {
    std::cerr << "usage: wheelbeat-config-reference schema|markdown [OUTPUT]\n";
    return 2;
  }
  const std::string text = what == "schema" ? wheelbeat::config::detail::schemaText()
                                            : wheelbeat::config::detail::referenceMarkdown();
  if (argc == 2) {
    std::cout << text;
    return std::cout.good() ? 0 : 1;
  }
  std::ofstream out(argv[2], std::ios::binary);
  out << text;
  out.close();
  if (!out) {
    std::cerr << "wheelbeat-config-reference: cannot write " << argv[2] << "\n";
    return 1;
  }
  return 0;
}
