// NftFault: network faults on loopback through nftables, for D1. One table of its own,
// "inet wheelbeat_d1_<pid>", with one input chain (loopback packets cross the input hook once, so
// a rule there drops each packet once, and the sender never learns of it: a silent network, not
// an error). Its rules match TCP on `lo` to or from the given ports only. The destructor deletes
// the table (also after an exception or an interrupt that unwinds); a driver killed outright
// leaves it behind, and the next one removes every wheelbeat_d1_<pid> table whose pid is gone.
#pragma once

#include <string>
#include <vector>

namespace wheelbeat::bench::netbench {

// Empty if this process can use nftables (root, `nft` runs and lists tables); else why not.
std::string nftUnavailableReason();

class NftFault {
public:
  // Removes stale tables of dead drivers, then creates this one (empty chain). Throws
  // std::runtime_error with nft's message.
  explicit NftFault(std::vector<int> ports);
  ~NftFault();
  NftFault(const NftFault&) = delete;
  NftFault& operator=(const NftFault&) = delete;

  // Every packet to or from the ports is dropped.
  void dropAll();
  // Each packet to or from the ports is dropped with probability pct / 100 (numgen random).
  void dropRandom(int pct);
  // No rule: traffic flows again.
  void clear();

  [[nodiscard]] const std::string& table() const noexcept { return table_; }

private:
  void addRules(const std::string& verdictPrefix);

  std::string table_;
  std::string portSet_;  // "{ 41234, 41235 }"
  bool created_ = false;
};

}  // namespace wheelbeat::bench::netbench
