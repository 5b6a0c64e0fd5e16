// T0's floor: the consumer with no library at all. One TCP connection per provider (plain
// sockets, TCP_NODELAY), requests encoded and written by the pacing thread itself (no hand-off
// to another thread), round robin; one epoll thread reads the answers and ends each call. No
// timer, no deadline, no retry, no metrics: what any open-loop consumer of this machine must
// spend per call (the pacing thread's wake-up, a write, the reader's wake-up, a read) and
// nothing else. It runs in T0 only (it has no failover for T1's faults).
//
// Threads: the constructor and destructor on the driver's thread; call() on the pacing thread
// (one at a time); `done` on the reader thread.
#pragma once

#include "raw_io.h"
#include "t1_load.h"

#include <wheelbeat/net/codec.h>

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

namespace wheelbeat::bench::netbench {

class RawConsumer : public Caller {
public:
  // Connects to 127.0.0.1:port for each port (blocking, at most 10 s each); throws naming the
  // port that failed.
  explicit RawConsumer(const std::vector<std::uint16_t>& ports);
  // Stops the reader; calls still out end as "disconnected".
  ~RawConsumer() override;
  RawConsumer(const RawConsumer&) = delete;
  RawConsumer& operator=(const RawConsumer&) = delete;

  // Writes the request on the next connection; a short write ends the call as "disconnected".
  void call(const std::string& body, const cluster::CallOptions& options,
            cluster::CallDone done) override;

private:
  struct Conn;
  void read();  // the reader thread
  void answer(const net::FrameView& frame);
  void failAll();

  std::vector<std::unique_ptr<Conn>> conns_;
  raw::Epoll epoll_;
  raw::UniqueFd stop_;  // eventfd: the destructor's word to the reader
  std::mutex mutex_;    // guards pending_
  std::unordered_map<std::uint64_t, cluster::CallDone> pending_;
  // The pacing thread's:
  std::uint64_t nextId_ = 1;
  std::size_t next_ = 0;
  std::string out_;
  std::thread reader_;
};

}  // namespace wheelbeat::bench::netbench
