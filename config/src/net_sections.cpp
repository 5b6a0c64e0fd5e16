// Sections owned by net/ ("loop", "server", "client") and net/registry/ ("registry").
#include "sections.h"
#include "values.h"

#include <fmt/format.h>

#include <array>
#include <cctype>
#include <limits>

namespace wheelbeat::config::detail {
namespace {

// Dubbo's header carries the body length as a signed 32-bit integer.
constexpr std::uint64_t kMaxBody = 0x7fffffff;
constexpr std::uint64_t kMaxSize = std::numeric_limits<std::size_t>::max();
// A frame's header: a largest body plus its header must fit an empty send queue.
constexpr std::uint64_t kHeaderBytes = 16;

bool readGroup(Errors& errors, const Json& value, const std::string& pointer, std::string& out) {
  bool ok = value.is_string() && !value.get_ref<const std::string&>().empty();
  if (ok) {
    for (char c : value.get_ref<const std::string&>()) {
      ok = ok && std::isspace(static_cast<unsigned char>(c)) == 0;
    }
  }
  if (!ok) {
    errors.add(pointer, value, "a non-empty string without whitespace");
    return false;
  }
  out = value.get<std::string>();
  return true;
}

bool readKind(Errors& errors, const Json& value, const std::string& pointer,
              registry::RegistryOptions& o) {
  std::size_t i = 0;
  if (!readEnum(errors, value, pointer, i, {"embedded", "redis", "zookeeper"})) return false;
  constexpr std::array kKinds{registry::RegistryKind::Embedded, registry::RegistryKind::Redis,
                              registry::RegistryKind::ZooKeeper};
  o.kind = kKinds.at(i);
  return true;
}

using LoopField = Field<net::LoopOptions>;
constexpr std::array<LoopField, 2> kLoopFields{{
    {"max_partial_bytes",
     [](Errors& e, const Json& v, const std::string& p, net::LoopOptions& o) {
       return readSize(e, v, p, o.maxPartialBytes, 0, kMaxSize,
                       "an integer >= 0 (bytes; 0 = unlimited)");
     }},
    {"io_threads",
     [](Errors& e, const Json& v, const std::string& p, net::LoopOptions& o) {
       return readSize(e, v, p, o.ioThreads, 0, net::kMaxIoThreads,
                       "an integer in 0..1024 (0 = one per core)");
     }},
}};

using RegistryField = Field<registry::RegistryOptions>;
constexpr std::array<RegistryField, 4> kRegistryFields{{
    {"kind", &readKind},
    {"address", [](Errors& e, const Json& v, const std::string& p,
                   registry::RegistryOptions& o) { return readEndpoint(e, v, p, o.address, 1); }},
    {"group", [](Errors& e, const Json& v, const std::string& p,
                 registry::RegistryOptions& o) { return readGroup(e, v, p, o.group); }},
    {"session",
     [](Errors& e, const Json& v, const std::string& p, registry::RegistryOptions& o) {
       return readDuration(e, v, p, o.session, std::chrono::seconds(1));
     }},
}};

// max_body and max_send_queue, shared by server and client.
template <typename O>
bool readMaxBody(Errors& e, const Json& v, const std::string& p, O& o) {
  return readSize(e, v, p, o.codec.maxBody, 1, kMaxBody, "an integer in 1..2147483647");
}
template <typename O>
bool readMaxSendQueue(Errors& e, const Json& v, const std::string& p, O& o) {
  return readSize(e, v, p, o.maxSendQueue, 1, kMaxSize, "an integer >= 1 (bytes)");
}

using ServerField = Field<net::ServerOptions>;
constexpr std::array<ServerField, 6> kServerFields{{
    {"listen", [](Errors& e, const Json& v, const std::string& p,
                  net::ServerOptions& o) { return readEndpoint(e, v, p, o.listen, 0); }},
    {"backlog",
     [](Errors& e, const Json& v, const std::string& p, net::ServerOptions& o) {
       std::int64_t backlog = 0;
       if (!readInt(e, v, p, backlog, 1, 65535, "an integer in 1..65535")) return false;
       o.backlog = static_cast<int>(backlog);
       return true;
     }},
    {"max_connections",
     [](Errors& e, const Json& v, const std::string& p, net::ServerOptions& o) {
       return readSize(e, v, p, o.maxConnections, 0, kMaxSize, "an integer >= 0 (0 = unlimited)");
     }},
    {"shutdown_grace",
     [](Errors& e, const Json& v, const std::string& p, net::ServerOptions& o) {
       return readDuration(e, v, p, o.shutdownGrace);
     }},
    {"max_body", &readMaxBody<net::ServerOptions>},
    {"max_send_queue", &readMaxSendQueue<net::ServerOptions>},
}};

using ClientField = Field<net::ClientOptions>;
constexpr std::array<ClientField, 4> kClientFields{{
    {"server", [](Errors& e, const Json& v, const std::string& p,
                  net::ClientOptions& o) { return readEndpoint(e, v, p, o.server, 1); }},
    {"connect_timeout",
     [](Errors& e, const Json& v, const std::string& p, net::ClientOptions& o) {
       return readPositiveDuration(e, v, p, o.connectTimeout);
     }},
    {"max_body", &readMaxBody<net::ClientOptions>},
    {"max_send_queue", &readMaxSendQueue<net::ClientOptions>},
}};

// One largest frame (body + header) must fit an empty send queue.
template <typename O>
void checkSendQueue(Errors& errors, const std::string& pointer, const Seen& seen, const O& o) {
  if (o.maxSendQueue >= o.codec.maxBody + kHeaderBytes) return;
  blame(
      errors, pointer, seen,
      {"max_send_queue", fmt::format(">= max_body + 16 = {}", o.codec.maxBody + kHeaderBytes)},
      {"max_body", fmt::format("<= max_send_queue - 16 = {}",
                               o.maxSendQueue < kHeaderBytes ? 0 : o.maxSendQueue - kHeaderBytes)});
}

template <typename O>
bool readTransportSection(Errors& errors, const Json& value, const std::string& pointer,
                          std::span<const Field<O>> fields, O& out) {
  const std::size_t before = errors.size();
  Seen seen;
  if (!readObject<O>(errors, value, pointer, fields, out, seen)) return false;
  checkSendQueue(errors, pointer, seen, out);
  return errors.size() == before;
}

}  // namespace

bool readLoop(Errors& errors, const Json& value, const std::string& pointer,
              net::LoopOptions& out) {
  const std::size_t before = errors.size();
  Seen seen;
  readObject<net::LoopOptions>(errors, value, pointer, kLoopFields, out, seen);
  return errors.size() == before;
}

bool readRegistry(Errors& errors, const Json& value, const std::string& pointer,
                  registry::RegistryOptions& out) {
  const std::size_t before = errors.size();
  Seen seen;
  readObject<registry::RegistryOptions>(errors, value, pointer, kRegistryFields, out, seen);
  return errors.size() == before;
}

bool readServer(Errors& errors, const Json& value, const std::string& pointer,
                net::ServerOptions& out) {
  return readTransportSection<net::ServerOptions>(errors, value, pointer, kServerFields, out);
}

bool readClient(Errors& errors, const Json& value, const std::string& pointer,
                net::ClientOptions& out) {
  return readTransportSection<net::ClientOptions>(errors, value, pointer, kClientFields, out);
}

std::vector<KeyInfo> loopKeys() { return keyInfos<net::LoopOptions>(kLoopFields); }
std::vector<KeyInfo> registryKeys() { return keyInfos<registry::RegistryOptions>(kRegistryFields); }
std::vector<KeyInfo> serverKeys() { return keyInfos<net::ServerOptions>(kServerFields); }
std::vector<KeyInfo> clientKeys() { return keyInfos<net::ClientOptions>(kClientFields); }

}  // namespace wheelbeat::config::detail
