// What the session and the C client's callbacks share about one request (Op) and one armed watch
// (Watch): the C client carries a pointer to either as its `data` / watcher context, and the
// session owns both until the C client can no longer call back with them (closeHandle()).
// Private to the ZooKeeper engine: zk_session.cpp (the session's life) and zk_operations.cpp (the
// requests) both need them.
#pragma once

#include "zk_session.h"

#include <cstdint>
#include <string>

namespace wheelbeat::registry::zk {

struct ZkSession::Op {
  ZkSession* self = nullptr;
  std::uint64_t id = 0;
  OpDone done;
  std::uint64_t watchId = 0;  // the watch this request arms (0 = none)
  bool existsWatch = false;   // exists() arms its watch on a missing node too
};

struct ZkSession::Watch {
  ZkSession* self = nullptr;
  std::uint64_t id = 0;
  std::string path;
  WatchCallback callback;
};

}  // namespace wheelbeat::registry::zk
