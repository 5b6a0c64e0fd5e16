// RegistryBook: the embedded registry's state — which sessions (connections) provide which urls
// and which sessions subscribe to which services. No I/O: the registry server feeds it the
// requests of its channels and sends the notifications it returns.
//
// Ownership: a url stays registered while at least one session owns it. A provider that
// reconnects registers again from its new session before the old session is dropped (idle
// close): the url never disappears in between, and dropping the old session changes nothing.
//
// Thread: not thread-safe; one owner (the registry server's loop thread).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace wheelbeat::registry {

using SessionId = std::uint64_t;

// A service whose provider list changed, with its new list and the sessions to notify.
struct RegistryChange {
  std::string service;
  std::vector<std::string> providers;  // sorted
  std::vector<SessionId> subscribers;  // sorted

  friend bool operator==(const RegistryChange&, const RegistryChange&) = default;
};

class RegistryBook {
public:
  // `url` must be valid (serviceOfUrl() does not throw); a change only when the url was not
  // registered by anyone before.
  std::optional<RegistryChange> registerUrl(SessionId session, const std::string& url);
  // A change only when the last owner let go. A session that does not own the url changes
  // nothing (a provider may only unregister what it registered).
  std::optional<RegistryChange> unregisterUrl(SessionId session, const std::string& url);
  // Returns the current providers (sorted) for the initial notification.
  std::vector<std::string> subscribe(SessionId session, const std::string& service);
  void unsubscribe(SessionId session, const std::string& service);
  // The session is gone: its registrations and subscriptions end. Returns the changed services
  // (sorted by service), whose subscribers exclude `session`.
  std::vector<RegistryChange> dropSession(SessionId session);

  [[nodiscard]] std::vector<std::string> providers(const std::string& service) const;
  [[nodiscard]] std::vector<SessionId> subscribers(const std::string& service) const;
  [[nodiscard]] std::size_t urlCount() const noexcept { return owners_.size(); }

private:
  RegistryChange changeOf(const std::string& service) const;

  std::map<std::string, std::set<SessionId>> owners_;           // url → owning sessions
  std::map<std::string, std::set<std::string>> byService_;      // service → urls
  std::map<std::string, std::set<SessionId>> subscribers_;      // service → sessions
  std::map<SessionId, std::set<std::string>> sessionUrls_;      // session → urls it owns
  std::map<SessionId, std::set<std::string>> sessionServices_;  // session → subscriptions
};

}  // namespace wheelbeat::registry
