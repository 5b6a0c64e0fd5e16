#include "registry_book.h"
#include "registry_protocol.h"

#include <wheelbeat/core/log.h>
#include <wheelbeat/net/channel.h>
#include <wheelbeat/net/tcp_server.h>
#include <wheelbeat/registry/registry_server.h>

#include <map>
#include <optional>

namespace wheelbeat::registry {

// The transport this node serves on.
using net::Channel;
using net::ChannelHandler;
using net::CloseReason;
using net::EventLoop;
using net::FrameView;
using net::kStatusOk;
using net::SendResult;
using net::ServerOptions;
using net::TcpServer;
namespace flag = net::flag;

// Loop thread only, except `book` reads through EventLoop::call.
struct RegistryServer::State {
  RegistryBook book;
  std::map<SessionId, Channel*> channels;  // valid from onConnected until onClosed
  std::uint64_t nextNotifyId = 1;
  bool stopping = false;
  std::optional<TcpServer> server;

  void onFrame(Channel& ch, const FrameView& frame);
  void apply(Channel& ch, const RegistryMessage& m);
  void notify(const RegistryChange& change);
  void notifyOne(SessionId session, const std::string& service,
                 const std::vector<std::string>& providers);
  void onClosed(Channel& ch);
};

void RegistryServer::State::onFrame(Channel& ch, const FrameView& frame) {
  if (frame.serialization() != kRegistrySerialization || !frame.isRequest()) return;
  const bool reply = frame.isTwoWay();
  try {
    const RegistryMessage m = decodeRegistryMessage(frame.body);
    if (m.command == RegistryCommand::Notify) {
      throw RegistryProtocolError("registry: notify is sent by the registry, not to it");
    }
    if (reply) (void)ch.send(kRegistrySerialization, kStatusOk, frame.id, {});
    apply(ch, m);
  } catch (const RegistryProtocolError& e) {
    core::log(core::LogLevel::Warn, "registry: refused a request from {}:{}: {}", ch.remote().host,
              ch.remote().port, e.what());
    if (reply) (void)ch.send(kRegistrySerialization, kStatusBadRequest, frame.id, e.what());
  }
}

void RegistryServer::State::apply(Channel& ch, const RegistryMessage& m) {
  const SessionId session = ch.id();
  switch (m.command) {
    case RegistryCommand::Register:
      if (auto change = book.registerUrl(session, m.subject)) notify(*change);
      break;
    case RegistryCommand::Unregister:
      if (auto change = book.unregisterUrl(session, m.subject)) notify(*change);
      break;
    case RegistryCommand::Subscribe:
      notifyOne(session, m.subject, book.subscribe(session, m.subject));
      break;
    case RegistryCommand::Unsubscribe: book.unsubscribe(session, m.subject); break;
    case RegistryCommand::Notify: break;
  }
}

void RegistryServer::State::notify(const RegistryChange& change) {
  for (const SessionId s : change.subscribers) notifyOne(s, change.service, change.providers);
}

void RegistryServer::State::notifyOne(SessionId session, const std::string& service,
                                      const std::vector<std::string>& providers) {
  const auto it = channels.find(session);
  if (it == channels.end() || stopping) return;
  const std::string body = encodeRegistryMessage({RegistryCommand::Notify, service, providers});
  const SendResult sent =
      it->second->send(flag::kRequest | kRegistrySerialization, 0, nextNotifyId++, body);
  if (sent != SendResult::Queued) {
    core::log(core::LogLevel::Warn, "registry: notify {} to session {} not sent: {}", service,
              session, sendResultName(sent));
  }
}

void RegistryServer::State::onClosed(Channel& ch) {
  channels.erase(ch.id());
  for (const auto& change : book.dropSession(ch.id())) notify(change);
}

RegistryServer::RegistryServer(EventLoop& loop, core::HashedWheelTimer& timer,
                               ServerOptions options)
    : loop_(loop), state_(std::make_shared<State>()) {
  std::weak_ptr<State> weak = state_;
  ChannelHandler handler{.onConnected =
                             [weak](Channel& ch) {
                               if (auto s = weak.lock()) s->channels[ch.id()] = &ch;
                             },
                         .onFrame =
                             [weak](Channel& ch, const FrameView& f) {
                               if (auto s = weak.lock()) s->onFrame(ch, f);
                             },
                         .onClosed =
                             [weak](Channel& ch, const CloseReason& /*why*/) {
                               if (auto s = weak.lock()) s->onClosed(ch);
                             }};
  state_->server.emplace(loop, timer, std::move(options), std::move(handler));
}

RegistryServer::~RegistryServer() { stop(); }

std::uint16_t RegistryServer::start() { return state_->server->listen(); }

void RegistryServer::stop() {
  loop_.call([s = state_] { s->stopping = true; });
  state_->server->stop();
}

std::uint16_t RegistryServer::port() const noexcept { return state_->server->port(); }

std::vector<std::string> RegistryServer::providers(const std::string& service) const {
  std::vector<std::string> out;
  loop_.call([&] { out = state_->book.providers(service); });
  return out;
}

std::size_t RegistryServer::sessions() const {
  std::size_t n = 0;
  loop_.call([&] { n = state_->channels.size(); });
  return n;
}

}  // namespace wheelbeat::registry
