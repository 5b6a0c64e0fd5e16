// wheelbeat-config: validates configuration files and prints their effective configuration.
// The logic is in cli.cpp, where the tests reach it in-process.
#include "cli.h"

#include <iostream>
#include <string_view>
#include <vector>

int main(int argc, char** argv) {
  const std::vector<std::string_view> args(argv + 1, argv + argc);
  return wheelbeat::config::cli::run(args, std::cout, std::cerr);
}
