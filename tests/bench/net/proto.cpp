#include "proto.h"

#include "../proc_stats.h"

#include <fmt/format.h>
#include <malloc.h>
#include <sys/resource.h>

#include <cerrno>
#include <charconv>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <stdexcept>

namespace wheelbeat::bench::netbench {

std::string formatKv(std::string_view tag, const Kv& values) {
  std::string out(tag);
  for (const auto& [k, v] : values) out += fmt::format(" {}={}", k, v);
  return out;
}

Kv parseKv(std::string_view line, std::string_view tag) {
  std::string_view rest = line;
  auto next = [&rest]() {
    const auto start = std::min(rest.find_first_not_of(' '), rest.size());
    rest = rest.substr(start);
    const auto end = std::min(rest.find(' '), rest.size());
    const std::string_view word = rest.substr(0, end);
    rest = rest.substr(end);
    return word;
  };
  if (next() != tag)
    throw std::runtime_error(fmt::format("expected a '{}' line, got '{}'", tag, line));
  Kv out;
  for (std::string_view pair = next(); !pair.empty(); pair = next()) {
    const auto eq = pair.find('=');
    std::int64_t v = 0;
    const char* last = pair.data() + pair.size();
    const auto [ptr, ec] = eq == std::string_view::npos
                               ? std::from_chars_result{pair.data(), std::errc::invalid_argument}
                               : std::from_chars(pair.data() + eq + 1, last, v);
    if (ec != std::errc{} || ptr != last) {
      throw std::runtime_error(fmt::format("bad pair '{}' in '{}'", pair, line));
    }
    out.emplace(std::string(pair.substr(0, eq)), v);
  }
  return out;
}

std::int64_t kvAt(const Kv& values, std::string_view key) {
  const auto it = values.find(key);
  if (it == values.end()) throw std::runtime_error(fmt::format("reply lacks '{}'", key));
  return it->second;
}

void reply(const std::string& line) {
  std::fputs(line.c_str(), stdout);
  std::fputc('\n', stdout);
  std::fflush(stdout);
}

std::int64_t raiseNofile(std::int64_t needed) {
  rlimit lim{};
  if (getrlimit(RLIMIT_NOFILE, &lim) != 0) {
    throw std::runtime_error(fmt::format("getrlimit(RLIMIT_NOFILE): {}", std::strerror(errno)));
  }
  if (lim.rlim_max != RLIM_INFINITY && static_cast<std::int64_t>(lim.rlim_max) < needed) {
    throw std::runtime_error(fmt::format(
        "RLIMIT_NOFILE hard limit is {}, {} file descriptors are needed: raise it (ulimit -Hn, "
        "/etc/security/limits.conf) or use fewer --conns / more --client-procs",
        lim.rlim_max, needed));
  }
  lim.rlim_cur = lim.rlim_max;
  if (setrlimit(RLIMIT_NOFILE, &lim) != 0) {
    throw std::runtime_error(fmt::format("setrlimit(RLIMIT_NOFILE): {}", std::strerror(errno)));
  }
  return lim.rlim_cur == RLIM_INFINITY ? INT64_MAX : static_cast<std::int64_t>(lim.rlim_cur);
}

std::int64_t openFds() {
  std::int64_t n = 0;
  for ([[maybe_unused]] const auto& e : std::filesystem::directory_iterator("/proc/self/fd")) ++n;
  return n - 1;  // the iterator's own descriptor
}

std::int64_t serverCapacity(std::int64_t nofileLimit) {
  return nofileLimit - openFds() - kServerReservedFds;
}

std::int64_t timeWaitSockets() {
  std::ifstream in("/proc/net/tcp");
  if (!in) return -1;
  std::string line;
  std::getline(in, line);  // the header
  std::int64_t n = 0;
  // "  sl  local_address rem_address   st ...": st (the 4th field) 06 is TIME_WAIT.
  std::string sl, local, remote, st;
  while (in >> sl >> local >> remote >> st) {
    if (st == "06") ++n;
    in.ignore(1 << 12, '\n');
  }
  return n;
}

double loadAverage1m() {
  std::ifstream in("/proc/loadavg");
  double v = -1;
  in >> v;
  return in ? v : -1;
}

Kv selfUsage() {
  // Heap bytes in use (glibc's arenas, all threads): the part of the RSS the library's objects
  // account for, without the allocator's free lists, stacks and kernel-shared pages.
  const auto heap = static_cast<std::int64_t>(mallinfo2().uordblks);
  return Kv{{"cpu_ns", processCpu().count()}, {"rss", vmRssBytes()}, {"heap", heap}};
}

}  // namespace wheelbeat::bench::netbench
