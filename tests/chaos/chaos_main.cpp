// The chaos suite's runner: doctest's, behind three guards.
//   - Prerequisites (root, `ip netns`, nft in a namespace): when one is missing the suite prints
//     why and exits 77, which CMake declares as SKIP_RETURN_CODE: ctest reports the test as
//     skipped, visibly, never as a silent pass. Listing the tests (test discovery) needs none.
//   - A start-up sweep of namespaces an earlier, killed run left behind.
//   - SIGINT / SIGTERM / SIGHUP set a flag that every wait of the lab polls: the running test
//     throws, its guards remove what it created, and the process then dies of that signal.
#define DOCTEST_CONFIG_IMPLEMENT
// doctest would take SIGINT / SIGTERM as a crash and report the test mid-way: ours only set a flag.
#define DOCTEST_CONFIG_NO_POSIX_SIGNALS
#include "chaos_lab.h"

#include <doctest/doctest.h>
#include <fmt/format.h>

#include <csignal>
#include <cstdio>
#include <string_view>

namespace {

// Runs that only list or describe the tests (CMake's test discovery among them).
bool onlyListing(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    if (arg.starts_with("--list") || arg.starts_with("-l") || arg.starts_with("-dt-list") ||
        arg == "--help" || arg == "-h" || arg == "-?" || arg == "--version" || arg == "-v") {
      return true;
    }
  }
  return false;
}

}  // namespace

int main(int argc, char** argv) {
  if (!onlyListing(argc, argv)) {
    if (const auto why = chaos::unavailable()) {
      fmt::print("chaos: SKIPPED: {}\n", *why);
      return 77;
    }
    chaos::sweepLeftovers();
    chaos::installInterruptHandlers();
  }
  doctest::Context context(argc, argv);
  const int status = context.run();
  if (const int sig = chaos::gInterrupted.load(); sig != 0) {
    fmt::print("chaos: interrupted by signal {}; namespaces and processes removed\n", sig);
    std::fflush(stdout);
    std::signal(sig, SIG_DFL);
    std::raise(sig);
  }
  return status;
}
