// ZkSession: one ZooKeeper session over the single-threaded C client (libzookeeper_st), driven by
// a wheelbeat EventLoop's libuv loop: one uv_poll_t on the client's socket (a new one whenever
// the client changes sockets) and one uv_timer_t for the client's own deadlines (pings, connect
// and receive timeouts). No thread of its own. Private to the library (includes <uv.h>);
// EventLoop::stop() closes a session still open (net::LoopHandle).
//
// Threads
//   Construct anywhere. Every other call — and every callback — runs on the loop thread (a call
//   from another thread throws std::logic_error). Destroy on the loop thread, or on any thread
//   once the EventLoop has stopped (stop() closes a session still open). Never destroy the
//   session inside one of its own callbacks (post the destruction to the loop instead): results
//   still queued behind that callback would run on a dead object.
//
// Callbacks are never run inside the C client: its completions and watchers only record what
// happened; the session delivers it once zookeeper_process() has returned. So any callback may
// call any method, close() included. An operation's callback runs exactly once: with the
// server's answer, or with a final error (ZCONNECTIONLOSS when the connection drops with the
// request in flight, ZSESSIONEXPIRED, ZCLOSING after close()); possibly synchronously when the
// session is closed or the C client refuses the request. There is no per-request timeout: the C
// client fails what is in flight when it declares the connection lost (no answer for 2/3 of the
// session timeout).
//
// States (StateCallback, only on a change)
//   connect() → Connecting → Connected(id, newSession=true). The connection drops → Connecting;
//   back within the session timeout → Connected(same id, newSession=false): ephemeral nodes and
//   watches survived (the C client re-registers watches). The server says the session expired
//   → Expired(old id): every pending operation fails with ZSESSIONEXPIRED, every armed watch
//   fires Lost, the old handle is closed — and the session opens a NEW handle by itself
//   (Options::reopenOnExpiry, default on) → Connecting → Connected(new id, newSession=true). On
//   newSession the OWNER re-creates its ephemeral nodes and re-arms its watches. close() →
//   Closed (the final state; the callback runs inside close()).
//   The C client learns of an expiry only when it reaches a server again. So, as Curator does, a
//   session Connecting for longer than the negotiated session timeout is taken as expired here:
//   Expired(old id), a new handle, Connecting... The server has expired it by then anyway, and
//   a server restarted without its data would refuse the old handle forever (the client has
//   seen a newer transaction than the server's last).
//
// Watches fire at most once (ZooKeeper's one-shot watches): WatchEvent for the change, or Lost
// when the session expires or is closed before the change. The caller re-arms (getChildren /
// exists again). A connection loss alone does not fire a watch.
//
// Errors: ZkResult carries the C client's code, zerror()'s name and a message with the
// operation, the path and the server list.
//
// Logging: the C client's log lines go to core::log at Debug (never to stderr); its level is set
// to WARN process-wide on the first connect().
#pragma once

#include "uv_handle.h"

#include <wheelbeat/net/event_loop.h>
#include <wheelbeat/net/loop_handle.h>

#include <array>
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

typedef struct _zhandle zhandle_t;  // NOLINT: the C client's opaque handle

namespace wheelbeat::registry::zk {

enum class SessionState { Idle, Connecting, Connected, Expired, Closed };
[[nodiscard]] std::string_view stateName(SessionState s) noexcept;

struct StateEvent {
  SessionState state = SessionState::Idle;
  // Connected: the session's id. Expired: the id that expired. Connecting / Closed: the last
  // connected id (0 if none yet).
  std::int64_t sessionId = 0;
  // Connected only: true when the id differs from the previous Connected one (the first session,
  // or the one opened after an expiry): ephemeral nodes and watches must be created again.
  bool newSession = false;
};

// What a second handle needs to take over (or kill) a session.
struct Credentials {
  std::int64_t sessionId = 0;
  std::array<char, 16> password{};
};

struct ZkResult {
  int code = 0;         // 0 (ZOK) or a ZooKeeper error code: ZNONODE, ZNODEEXISTS, ZCLOSING...
  std::string error;    // zerror(code): "node exists", "connection loss"...; empty when ok
  std::string message;  // "create /a/b: node exists (zookeeper 127.0.0.1:2181)"
  [[nodiscard]] bool ok() const noexcept { return code == 0; }
};

struct NodeStat {
  std::int64_t czxid = 0;
  std::int64_t mzxid = 0;
  std::int64_t ephemeralOwner = 0;  // the owning session's id; 0 = persistent node
  std::int32_t version = 0;
  std::int32_t dataLength = 0;
  std::int32_t numChildren = 0;
};

enum class WatchEvent { Created, Deleted, DataChanged, ChildrenChanged, Lost };
[[nodiscard]] std::string_view watchEventName(WatchEvent e) noexcept;

struct CreateOptions {
  bool ephemeral = false;
  // Missing ancestors are created as persistent empty nodes (one exists already: fine).
  bool createParents = true;
  // The node itself exists already: success (code 0) instead of ZNODEEXISTS.
  bool existingIsOk = false;
};

class ZkSession final : public net::LoopHandle {
public:
  struct Options {
    std::string hosts;                                // "h:p[,h:p]"
    std::chrono::milliseconds sessionTimeout{10000};  // asked of the server (it clamps it)
    std::optional<Credentials> resume;                // take over this session instead of a new one
    // See "States". false: after Expired the session stays without a handle (every operation
    // fails with ZINVALIDSTATE) until close().
    bool reopenOnExpiry = true;
  };
  using StateCallback = std::function<void(const StateEvent&)>;
  using WatchCallback = std::function<void(WatchEvent, const std::string& path)>;
  using Done = std::function<void(const ZkResult&)>;
  using CreateDone = std::function<void(const ZkResult&, const std::string& createdPath)>;
  using ChildrenDone = std::function<void(const ZkResult&, const std::vector<std::string>&)>;
  // stat is empty when the node does not exist (result ok, no error: a missing node is an answer).
  using ExistsDone = std::function<void(const ZkResult&, const std::optional<NodeStat>&)>;
  using GetDone = std::function<void(const ZkResult&, const std::string& data, const NodeStat&)>;

  ZkSession(net::EventLoop& loop, Options options, StateCallback onState);
  ~ZkSession() override;
  ZkSession(const ZkSession&) = delete;
  ZkSession& operator=(const ZkSession&) = delete;

  // Opens the handle (Idle → Connecting). False if the C client refuses at once (bad host list):
  // the reason is in lastError(). Once only.
  bool connect();

  void create(const std::string& path, const std::string& data, CreateOptions options,
              const CreateDone& done);
  void remove(const std::string& path, Done done);  // any version
  // Children names (unsorted, as the server sends them). `watch` (may be empty = no watch) fires
  // once for the next change of the child list, or Deleted, or Lost.
  void getChildren(const std::string& path, WatchCallback watch, ChildrenDone done);
  // `watch` (may be empty) fires once: Created for a missing node, DataChanged / Deleted for an
  // existing one, or Lost.
  void exists(const std::string& path, WatchCallback watch, ExistsDone done);
  void get(const std::string& path, GetDone done);

  // Closes the handle (zookeeper_close: the server drops the session and its ephemeral nodes at
  // once; this blocks the loop until the server acknowledges, a few ms on a LAN, at most ~4.5 s).
  // Pending operations fail with ZCLOSING, armed watches fire Lost, then state Closed. Idempotent.
  void close();

  [[nodiscard]] SessionState state() const noexcept { return state_; }
  // The current session's id (0 until the first Connected).
  [[nodiscard]] std::int64_t sessionId() const noexcept { return sessionId_; }
  // Valid once Connected.
  [[nodiscard]] Credentials credentials() const noexcept { return credentials_; }
  [[nodiscard]] const std::string& lastError() const noexcept { return lastError_; }
  // Operations and watches waiting for the server (tests: nothing leaks).
  [[nodiscard]] std::size_t pendingOperations() const noexcept { return ops_.size(); }
  [[nodiscard]] std::size_t armedWatches() const noexcept { return watches_.size(); }

  void closeForShutdown() noexcept override;

  // What the C client hands back to us (public for its C callbacks; not for callers).
  struct Reply {
    std::string value;  // create: the created path; get: the data
    std::vector<std::string> children;
    std::optional<NodeStat> stat;
  };
  struct Op;
  struct Watch;
  struct PollBox;
  void record(Op* op, int rc, Reply reply);
  void recordWatch(Watch* w, int type);
  void recordSession(int zstate);
  void drive(int zkEvents);

private:
  using OpDone = std::function<void(int rc, Reply&&)>;

  void requireLoopThread(const char* what) const;
  bool openHandle(const Credentials* resume);
  void closeHandle(int rc);
  void rearm();
  void updatePoll(int fd, int interest, bool reset);
  void dispatch();
  void onSession(std::uint64_t generation, int zstate, const Credentials& creds);
  void expire();
  // Connecting for longer than the negotiated session timeout: see "States".
  [[nodiscard]] bool givenUp() const noexcept;
  void setState(SessionState s, std::int64_t id, bool newSession = false);

  Op* track(OpDone done);
  Watch* trackWatch(const std::string& path, WatchCallback cb);
  // rc of the C client's call: ZOK → wait for its completion; else fail the op at once.
  void submit(Op* op, int rc);
  // The code an operation gets when there is no handle: ZCLOSING once closed, else ZINVALIDSTATE.
  [[nodiscard]] int unavailable() const noexcept;
  ZkResult result(int rc, std::string_view verb, const std::string& path) const;

  void createNode(const std::string& path, const std::string& data, CreateOptions options,
                  bool parentsDone, const CreateDone& done);
  void ensureParents(const std::string& path, Done done);
  void createChain(std::vector<std::string> paths, std::size_t next, Done done);

  net::EventLoop& loop_;
  const Options options_;
  StateCallback onState_;

  zhandle_t* zh_ = nullptr;
  std::uint64_t generation_ = 0;  // one per handle: queued session events of an older one drop
  bool started_ = false;
  bool closed_ = false;
  bool expiryQueued_ = false;
  bool registered_ = false;
  SessionState state_ = SessionState::Idle;
  std::int64_t sessionId_ = 0;
  Credentials credentials_;
  std::string lastError_;

  uv_timer_t* timer_ = nullptr;
  PollBox* poll_ = nullptr;
  int pollFd_ = -1;
  int lastZState_ = 0;
  bool socketSuspect_ = false;    // the C client reported a socket error: poll a fresh handle
  bool handleConnected_ = false;  // this handle reached Connected at least once
  std::int64_t negotiatedTimeoutMs_ = 0;  // the server's session timeout for us
  std::uint64_t disconnectedAtMs_ = 0;    // uv_now() when Connected last turned Connecting

  std::uint64_t nextId_ = 1;
  std::map<std::uint64_t, std::unique_ptr<Op>> ops_;
  std::map<std::uint64_t, std::unique_ptr<Watch>> watches_;
  std::vector<std::function<void()>> queue_;  // recorded inside the C client, run after it
};

}  // namespace wheelbeat::registry::zk
