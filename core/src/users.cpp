#include <wheelbeat/core/log.h>
#include <wheelbeat/core/users.h>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cstdio>
#include <cstdlib>
#include <map>
#include <mutex>
#include <utility>

namespace wheelbeat::core {

struct Users::State {
  mutable std::mutex mutex;
  std::uint64_t nextId = 1;
  std::map<std::uint64_t, std::string> names;  // by id: the order they came
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
    const std::lock_guard lock(state->mutex);
    state->names.erase(id_);
  }
  state_.reset();
  id_ = 0;
}

Users::Users() : state_(std::make_shared<State>()) {}
Users::~Users() = default;

Users::Use Users::add(std::string name) {
  const std::lock_guard lock(state_->mutex);
  const std::uint64_t id = state_->nextId++;
  state_->names.emplace(id, std::move(name));
  return Use(state_, id);
}

std::vector<std::string> Users::names() const {
  const std::lock_guard lock(state_->mutex);
  std::vector<std::string> out;
  for (const auto& [id, name] : state_->names) out.push_back(name);
  return out;
}

void Users::checkNoneLeft(std::string_view resource) const noexcept {
  const std::vector<std::string> alive = names();
  if (alive.empty()) return;
  try {
    const std::string message = fmt::format(
        "{} destroyed while still used by: {} (destroy them first: clients, servers and "
        "directories before the timer and the loop)",
        resource, fmt::join(alive, ", "));
    // stderr directly: a log sink may buffer, and the process ends now.
    std::fprintf(stderr, "wheelbeat: %s\n", message.c_str());
    std::fflush(stderr);
    log(LogLevel::Error, "{}", message);
  } catch (...) {  // NOLINT(bugprone-empty-catch): no memory for the message: abort anyway
  }
  std::abort();
}

}  // namespace wheelbeat::core
