#include <wheelbeat/core/log.h>
#include <wheelbeat/core/users.h>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <map>
#include <mutex>
#include <thread>
#include <utility>

namespace wheelbeat::core {

struct Users::State {
  struct Entry {
    std::string name;
    std::function<void()> onStop;
    bool quiet = false;  // closed: stopEach() leaves it alone
  };
  mutable std::mutex mutex;
  std::condition_variable done;  // an onStop returned
  std::uint64_t nextId = 1;
  std::map<std::uint64_t, Entry> users;               // by id: the order they came
  std::map<std::uint64_t, std::thread::id> stopping;  // onStop running now, on which thread
};

Users::Use::Use(Use&& other) noexcept
    : state_(std::move(other.state_)), id_(std::exchange(other.id_, 0)) {}

Users::Use& Users::Use::operator=(Use&& other) noexcept {
  if (this != &other) {
    reset();
    state_ = std::move(other.state_);
    id_ = std::exchange(other.id_, 0);
  }
  return *this;
}

void Users::Use::reset() noexcept {
  if (const auto state = state_.lock()) {
    std::unique_lock lock(state->mutex);
    // Not while its onStop runs elsewhere: the user it calls is being destroyed. (From inside
    // its own onStop there is nothing to wait for.)
    state->done.wait(lock, [&] {
      const auto it = state->stopping.find(id_);
      return it == state->stopping.end() || it->second == std::this_thread::get_id();
    });
    state->users.erase(id_);
  }
  state_.reset();
  id_ = 0;
}

void Users::Use::quiet() noexcept {
  if (const auto state = state_.lock()) {
    const std::lock_guard lock(state->mutex);
    const auto it = state->users.find(id_);
    if (it != state->users.end()) it->second.quiet = true;
  }
}

Users::Users() : state_(std::make_shared<State>()) {}
Users::~Users() = default;

Users::Use Users::add(std::string name, std::function<void()> onStop) {
  const std::lock_guard lock(state_->mutex);
  const std::uint64_t id = state_->nextId++;
  state_->users.emplace(id, State::Entry{std::move(name), std::move(onStop)});
  return Use(state_, id);
}

std::vector<std::string> Users::names() const {
  const std::lock_guard lock(state_->mutex);
  std::vector<std::string> out;
  for (const auto& [id, entry] : state_->users) out.push_back(entry.name);
  return out;
}

void Users::checkNoneLeft(std::string_view resource) const noexcept {
  const std::vector<std::string> alive = names();
  if (alive.empty()) return;
  try {
    const std::string message = fmt::format(
        "{} destroyed while still used by: {} (destroy them first: clients, servers, registries "
        "and directories before the timer and the loop)",
        resource, fmt::join(alive, ", "));
    // stderr directly: a log sink may buffer, and the process ends now.
    std::fprintf(stderr, "wheelbeat: %s\n", message.c_str());
    std::fflush(stderr);
    log(LogLevel::Error, "{}", message);
  } catch (...) {  // NOLINT(bugprone-empty-catch): no memory for the message: abort anyway
  }
  std::abort();
}

std::size_t Users::stopEach(std::string_view resource) {
  std::vector<std::uint64_t> ids;
  std::vector<std::string> alive;
  {
    const std::lock_guard lock(state_->mutex);
    for (const auto& [id, entry] : state_->users) {
      if (entry.quiet) continue;
      ids.push_back(id);
      alive.push_back(entry.name);
    }
  }
  if (alive.empty()) return 0;
  log(LogLevel::Warn, "{} stopped while still used by: {} (each is closed)", resource,
      fmt::join(alive, ", "));
  for (const std::uint64_t id : ids) {
    std::function<void()> onStop;
    {
      const std::lock_guard lock(state_->mutex);
      const auto it = state_->users.find(id);
      if (it == state_->users.end() || !it->second.onStop) continue;  // gone meanwhile
      onStop = it->second.onStop;
      state_->stopping.emplace(id, std::this_thread::get_id());
    }
    try {
      onStop();
    } catch (const std::exception& e) {
      log(LogLevel::Error, "{}: a user's stop handler threw: {}", resource, e.what());
    } catch (...) {
      log(LogLevel::Error, "{}: a user's stop handler threw", resource);
    }
    {
      const std::lock_guard lock(state_->mutex);
      state_->stopping.erase(id);
    }
    state_->done.notify_all();
  }
  return alive.size();
}

}  // namespace wheelbeat::core
