// Users: what still uses a shared resource (the wheel, an event loop), by name, so that
// destroying the resource under a live user ends the process with a message that names the
// user, instead of a use-after-free later:
//
//   wheelbeat: HashedWheelTimer destroyed while still used by: TcpClient 127.0.0.1:20880
//   (destroy them first: clients, servers, registries and directories before the timer and the
//   loop)
//
// A user takes a Use token when it starts relying on the resource and drops it (destroys the
// token) when it no longer does; the resource's destructor calls checkNoneLeft().
//
// Stopping the resource under live users (e.g. timer.stop() while clients still count on their
// heartbeats) is not silent either: stopEach() logs a Warn naming them and runs each user's
// `onStop` (a client closes itself with a reason), so nothing is left "connected" with its tasks
// off.
//
// Threads: every member, any thread (one mutex). A Use may outlive its Users: it is then inert.
// Destroying a Use waits while its `onStop` runs on another thread, so a user may be destroyed
// concurrently with a stopEach() that is calling it.
#pragma once

#include <wheelbeat/core/cxx20.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace wheelbeat::core {

class Users {
  struct State;

public:
  class Use {
  public:
    Use() = default;
    ~Use() { reset(); }
    Use(Use&& other) noexcept;
    Use& operator=(Use&& other) noexcept;
    Use(const Use&) = delete;
    Use& operator=(const Use&) = delete;
    // No longer a user (idempotent).
    void reset() noexcept;
    // Still a user until destroyed (the resource must outlive it), but no longer relying on the
    // resource running: closed, stopped. stopEach() skips it (idempotent).
    void quiet() noexcept;
    [[nodiscard]] explicit operator bool() const noexcept { return id_ != 0; }

  private:
    friend class Users;
    Use(std::weak_ptr<State> state, std::uint64_t id) noexcept
        : state_(std::move(state)), id_(id) {}
    std::weak_ptr<State> state_;
    std::uint64_t id_ = 0;
  };

  Users();
  ~Users();
  Users(const Users&) = delete;
  Users& operator=(const Users&) = delete;

  // A token naming the user ("TcpClient 127.0.0.1:20880"), held while it uses the resource.
  // `onStop` (optional) is what the user does when the resource stops under it (stopEach()).
  [[nodiscard]] Use add(std::string name, std::function<void()> onStop = {});
  // The users alive now, in the order they came.
  [[nodiscard]] std::vector<std::string> names() const;
  // If a user is still alive: writes the message of the file comment (naming `resource`) to
  // stderr and the log at Error, then std::abort(). Otherwise returns.
  void checkNoneLeft(std::string_view resource) const noexcept;
  // The resource is stopping: if users are alive and not quiet, logs at Warn "`resource` stopped
  // while still used by: ... (each is closed)" and runs each one's onStop (in the order they came,
  // with no lock held; an exception it throws is logged and dropped). Returns how many users were
  // alive.
  std::size_t stopEach(std::string_view resource);

private:
  std::shared_ptr<State> state_;
};

}  // namespace wheelbeat::core
