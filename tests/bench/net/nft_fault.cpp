#include "nft_fault.h"

#include <fmt/format.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <regex>
#include <stdexcept>

namespace wheelbeat::bench::netbench {
namespace {

constexpr const char* kPrefix = "wheelbeat_d1_";

struct Result {
  int status = -1;
  std::string output;  // stdout and stderr
};

// Runs `nft -f -` with `script` on its stdin (or `nft ARGS` when script is empty), output
// captured through a temporary file (popen is one-way).
Result runNft(const std::string& args, const std::string& script) {
  char path[] = "/tmp/wheelbeat_d1_nft_XXXXXX";
  const int fd = ::mkstemp(path);
  if (fd < 0) throw std::runtime_error("mkstemp failed");
  ::close(fd);
  const std::string cmd = fmt::format("nft {} >{} 2>&1", args, path);
  Result r;
  if (FILE* p = ::popen(cmd.c_str(), "w")) {
    if (!script.empty()) std::fputs(script.c_str(), p);
    r.status = ::pclose(p);
  }
  if (FILE* f = std::fopen(path, "r")) {
    char buf[4096];
    std::size_t n = 0;
    while ((n = std::fread(buf, 1, sizeof buf, f)) > 0) r.output.append(buf, n);
    std::fclose(f);
  }
  ::unlink(path);
  while (!r.output.empty() && (r.output.back() == '\n' || r.output.back() == ' ')) {
    r.output.pop_back();
  }
  return r;
}

bool ok(const Result& r) {
  return r.status != -1 && WIFEXITED(r.status) && WEXITSTATUS(r.status) == 0;
}

void runOrThrow(const std::string& args, const std::string& script) {
  const Result r = runNft(args, script);
  if (!ok(r)) {
    throw std::runtime_error(
        fmt::format("nft {} failed: {}{}", args, r.output,
                    script.empty() ? "" : fmt::format(" (script: {})", script)));
  }
}

// Tables a killed driver left: wheelbeat_d1_<pid> with no such process.
void removeStaleTables() {
  const Result r = runNft("list tables", "");
  if (!ok(r)) return;
  static const std::regex kLine(R"(table inet (wheelbeat_d1_(\d+)))");
  for (std::sregex_iterator it(r.output.begin(), r.output.end(), kLine), end; it != end; ++it) {
    const pid_t pid = static_cast<pid_t>(std::stol((*it)[2].str()));
    if (pid == ::getpid() || ::kill(pid, 0) == 0 || errno != ESRCH) continue;
    const Result del = runNft(fmt::format("delete table inet {}", (*it)[1].str()), "");
    fmt::print(stderr, "wheelbeat_net_bench: removed the stale nft table {} ({})\n", (*it)[1].str(),
               ok(del) ? "ok" : del.output);
  }
}

}  // namespace

std::string nftUnavailableReason() {
  if (::geteuid() != 0) return "not root (nftables needs CAP_NET_ADMIN)";
  const Result r = runNft("list tables", "");
  if (!ok(r)) return fmt::format("`nft list tables` failed: {}", r.output);
  return {};
}

NftFault::NftFault(std::vector<int> ports) : table_(fmt::format("{}{}", kPrefix, ::getpid())) {
  if (ports.empty()) throw std::invalid_argument("NftFault: no ports");
  portSet_ = "{ ";
  for (std::size_t i = 0; i < ports.size(); ++i) {
    portSet_ += fmt::format("{}{}", i == 0 ? "" : ", ", ports[i]);
  }
  portSet_ += " }";
  removeStaleTables();
  runOrThrow("-f -", fmt::format("add table inet {0}\n"
                                 "add chain inet {0} input {{ type filter hook input priority "
                                 "-10; policy accept; }}\n",
                                 table_));
  created_ = true;
}

NftFault::~NftFault() {
  if (!created_) return;
  const Result r = runNft(fmt::format("delete table inet {}", table_), "");
  if (!ok(r)) {
    fmt::print(stderr,
               "wheelbeat_net_bench: could not delete nft table {}: {} (run: nft delete "
               "table inet {})\n",
               table_, r.output, table_);
  }
}

void NftFault::addRules(const std::string& verdict) {
  runOrThrow("-f -", fmt::format("flush chain inet {0} input\n"
                                 "add rule inet {0} input iifname \"lo\" tcp dport {1} {2}\n"
                                 "add rule inet {0} input iifname \"lo\" tcp sport {1} {2}\n",
                                 table_, portSet_, verdict));
}

void NftFault::dropAll() { addRules("drop"); }

void NftFault::dropRandom(int pct) {
  if (pct <= 0 || pct > 100) throw std::invalid_argument(fmt::format("loss {} %", pct));
  addRules(fmt::format("numgen random mod 100 < {} drop", pct));
}

void NftFault::clear() { runOrThrow("-f -", fmt::format("flush chain inet {} input\n", table_)); }

}  // namespace wheelbeat::bench::netbench
