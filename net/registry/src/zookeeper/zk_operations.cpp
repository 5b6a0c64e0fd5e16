// ZkSession's requests (zk_session.h): create (with its parents), remove, getChildren, exists
// and get, each tracked as an Op until the C client completes it, and the C client's completion
// callbacks, which only record the answer for dispatch() to deliver.
#include "zk_session.h"
#include "zk_session_records.h"

#include <fmt/format.h>
#include <zookeeper/zookeeper.h>

#include <cstddef>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace wheelbeat::registry::zk {
namespace {

// The C client's completions get back the `data` pointer we gave: our Op, owned by the session
// until the C client can no longer call back with it (see closeHandle()).
ZkSession::Op* opOf(const void* data) noexcept {
  // NOLINTNEXTLINE(cppcoreguidelines-pro-type-const-cast): the C API types it const; it is ours.
  return static_cast<ZkSession::Op*>(const_cast<void*>(data));
}

NodeStat toStat(const Stat& s) noexcept {
  NodeStat out;
  out.czxid = s.czxid;
  out.mzxid = s.mzxid;
  out.ephemeralOwner = s.ephemeralOwner;
  out.version = s.version;
  out.dataLength = s.dataLength;
  out.numChildren = s.numChildren;
  return out;
}

void onStringDone(int rc, const char* value, const void* data) {
  ZkSession::Reply r;
  if (rc == ZOK && value != nullptr) r.value = value;
  opOf(data)->self->record(opOf(data), rc, std::move(r));
}

void onVoidDone(int rc, const void* data) { opOf(data)->self->record(opOf(data), rc, {}); }

void onStatDone(int rc, const Stat* stat, const void* data) {
  ZkSession::Reply r;
  if (rc == ZOK && stat != nullptr) r.stat = toStat(*stat);
  opOf(data)->self->record(opOf(data), rc, std::move(r));
}

void onDataDone(int rc, const char* value, int len, const Stat* stat, const void* data) {
  ZkSession::Reply r;
  if (rc == ZOK && value != nullptr && len > 0)
    r.value.assign(value, static_cast<std::size_t>(len));
  if (rc == ZOK && stat != nullptr) r.stat = toStat(*stat);
  opOf(data)->self->record(opOf(data), rc, std::move(r));
}

void onStringsDone(int rc, const String_vector* strings, const void* data) {
  ZkSession::Reply r;
  if (rc == ZOK && strings != nullptr) {
    for (int i = 0; i < strings->count; ++i) r.children.emplace_back(strings->data[i]);
  }
  opOf(data)->self->record(opOf(data), rc, std::move(r));
}

// Path watches also receive every session event (the C client copies them to all watchers);
// only the global watcher acts on those.
void onWatchEvent(zhandle_t* /*zh*/, int type, int /*state*/, const char* /*path*/, void* ctx) {
  if (type == ZOO_SESSION_EVENT || ctx == nullptr) return;
  auto* w = static_cast<ZkSession::Watch*>(ctx);
  w->self->recordWatch(w, type);
}

// Every ancestor of `path`, outermost first: "/a/b/c" → "/a", "/a/b".
std::vector<std::string> ancestors(const std::string& path) {
  std::vector<std::string> out;
  for (std::size_t pos = path.find('/', 1); pos != std::string::npos;
       pos = path.find('/', pos + 1)) {
    out.push_back(path.substr(0, pos));
  }
  return out;
}

}  // namespace

// --- operations --------------------------------------------------------------------------------

ZkResult ZkSession::result(int rc, std::string_view verb, const std::string& path) const {
  ZkResult r;
  r.code = rc;
  if (rc != ZOK) {
    r.error = zerror(rc);
    r.message = fmt::format("{} {}: {} (zookeeper {})", verb, path, r.error, options_.hosts);
  }
  return r;
}

ZkSession::Op* ZkSession::track(OpDone done) {
  auto op = std::make_unique<Op>();
  op->self = this;
  op->id = nextId_++;
  op->done = std::move(done);
  Op* raw = op.get();
  ops_.emplace(raw->id, std::move(op));
  return raw;
}

ZkSession::Watch* ZkSession::trackWatch(const std::string& path, WatchCallback cb) {
  auto w = std::make_unique<Watch>();
  w->self = this;
  w->id = nextId_++;
  w->path = path;
  w->callback = std::move(cb);
  Watch* raw = w.get();
  watches_.emplace(raw->id, std::move(w));
  return raw;
}

void ZkSession::submit(Op* op, int rc) {
  if (rc == ZOK) return rearm();  // the request may wait for the socket to be writable
  const auto it = ops_.find(op->id);
  if (it == ops_.end()) return;
  std::unique_ptr<Op> owned = std::move(it->second);
  ops_.erase(it);
  if (owned->watchId != 0) watches_.erase(owned->watchId);
  owned->done(rc, {});
}

int ZkSession::unavailable() const noexcept { return closed_ ? ZCLOSING : ZINVALIDSTATE; }

void ZkSession::create(const std::string& path, const std::string& data, CreateOptions options,
                       const CreateDone& done) {
  requireLoopThread("create");
  createNode(path, data, options, false, done);
}

void ZkSession::createNode(const std::string& path, const std::string& data, CreateOptions options,
                           bool parentsDone, const CreateDone& done) {
  Op* op = track([this, path, data, options, parentsDone, done](int rc, Reply&& reply) {
    if (rc == ZNONODE && options.createParents && !parentsDone) {
      ensureParents(path, [this, path, data, options, done](const ZkResult& parents) {
        if (!parents.ok()) return done(parents, {});
        createNode(path, data, options, true, done);
      });
      return;
    }
    if (rc == ZNODEEXISTS && options.existingIsOk) return done(ZkResult{}, path);
    done(result(rc, "create", path), rc == ZOK ? reply.value : std::string{});
  });
  const int rc = zh_ == nullptr ? unavailable()
                                : zoo_acreate(zh_, path.c_str(), data.data(),
                                              static_cast<int>(data.size()), &ZOO_OPEN_ACL_UNSAFE,
                                              options.ephemeral ? ZOO_EPHEMERAL : ZOO_PERSISTENT,
                                              &onStringDone, op);
  submit(op, rc);
}

void ZkSession::ensureParents(const std::string& path, Done done) {
  createChain(ancestors(path), 0, std::move(done));
}

void ZkSession::createChain(std::vector<std::string> paths, std::size_t next, Done done) {
  if (next >= paths.size()) return done(ZkResult{});
  const std::string path = paths[next];
  Op* op = track([this, paths = std::move(paths), next, done](int rc, Reply&&) mutable {
    if (rc != ZOK && rc != ZNODEEXISTS) return done(result(rc, "create", paths[next]));
    createChain(std::move(paths), next + 1, std::move(done));
  });
  const int rc = zh_ == nullptr ? unavailable()
                                : zoo_acreate(zh_, path.c_str(), "", 0, &ZOO_OPEN_ACL_UNSAFE,
                                              ZOO_PERSISTENT, &onStringDone, op);
  submit(op, rc);
}

void ZkSession::remove(const std::string& path, Done done) {
  requireLoopThread("remove");
  Op* op = track(
      [this, path, done = std::move(done)](int rc, Reply&&) { done(result(rc, "delete", path)); });
  submit(op, zh_ == nullptr ? unavailable() : zoo_adelete(zh_, path.c_str(), -1, &onVoidDone, op));
}

void ZkSession::getChildren(const std::string& path, WatchCallback watch, ChildrenDone done) {
  requireLoopThread("getChildren");
  Op* op = track([this, path, done = std::move(done)](int rc, Reply&& reply) {
    done(result(rc, "getChildren", path), reply.children);
  });
  Watch* w = nullptr;
  if (watch) {
    w = trackWatch(path, std::move(watch));
    op->watchId = w->id;
  }
  const int rc = zh_ == nullptr ? unavailable()
                                : zoo_awget_children(zh_, path.c_str(), w ? &onWatchEvent : nullptr,
                                                     w, &onStringsDone, op);
  submit(op, rc);
}

void ZkSession::exists(const std::string& path, WatchCallback watch, ExistsDone done) {
  requireLoopThread("exists");
  Op* op = track([this, path, done = std::move(done)](int rc, Reply&& reply) {
    if (rc == ZNONODE) return done(ZkResult{}, std::nullopt);  // an answer, not an error
    done(result(rc, "exists", path), reply.stat);
  });
  op->existsWatch = true;
  Watch* w = nullptr;
  if (watch) {
    w = trackWatch(path, std::move(watch));
    op->watchId = w->id;
  }
  const int rc = zh_ == nullptr ? unavailable()
                                : zoo_awexists(zh_, path.c_str(), w ? &onWatchEvent : nullptr, w,
                                               &onStatDone, op);
  submit(op, rc);
}

void ZkSession::get(const std::string& path, GetDone done) {
  requireLoopThread("get");
  Op* op = track([this, path, done = std::move(done)](int rc, Reply&& reply) {
    done(result(rc, "get", path), reply.value, reply.stat.value_or(NodeStat{}));
  });
  submit(op, zh_ == nullptr ? unavailable() : zoo_aget(zh_, path.c_str(), 0, &onDataDone, op));
}

}  // namespace wheelbeat::registry::zk
