// Users: what still uses a shared resource (the wheel, an event loop), by name, so that
// destroying the resource under a live user ends the process with a message that names the
// user, instead of a use-after-free later:
//
//   wheelbeat: HashedWheelTimer destroyed while still used by: TcpClient 127.0.0.1:20880
//   (destroy them first: clients, servers and directories before the timer and the loop)
//
// A user takes a Use token when it starts relying on the resource and drops it (destroys the
// token) when it no longer does; the resource's destructor calls checkNoneLeft().
//
// Threads: every member, any thread (one mutex). A Use may outlive its Users: it is then inert.
#pragma once

#include <wheelbeat/core/cxx20.h>

#include <cstdint>
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
  [[nodiscard]] Use add(std::string name);
  // The users alive now, in the order they came.
  [[nodiscard]] std::vector<std::string> names() const;
  // If a user is still alive: writes the message of the file comment (naming `resource`) to
  // stderr and the log at Error, then std::abort(). Otherwise returns.
  void checkNoneLeft(std::string_view resource) const noexcept;

private:
  std::shared_ptr<State> state_;
};

}  // namespace wheelbeat::core
