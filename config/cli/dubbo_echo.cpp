// wheelbeat-dubbo echo-server: a Provider answering every method of --service with its first
// argument, and the interop service org.wheelbeat.interop.Echo:
//   echo(Object)                  its argument, whatever its type
//   echoString(String) echoInt(int) echoLong(long) echoDouble(double) echoBoolean(boolean)
//   echoBytes(byte[]) echoList(java.util.List) echoMap(java.util.Map)   typed echoes
//   fail(String)                  throws java.lang.RuntimeException with that message
//   sleep(int ms)                 answers null after ms, from a wheel timeout (the loop never
//                                 blocks)
#include "dubbo_cli.h"

#include <wheelbeat/core/hashed_wheel_timer.h>
#include <wheelbeat/dubbo/provider.h>
#include <wheelbeat/net/net.h>
#include <wheelbeat/registry/registry.h>

#include <fmt/format.h>

#include <csignal>
#include <cstdio>
#include <memory>
#include <utility>

namespace wheelbeat::config::dubbo_cli {

namespace {

namespace h = hessian;

h::Value first(const dubbo::Request& r) { return r.args.empty() ? h::Value() : r.args[0]; }

void addInterop(dubbo::Provider& provider, core::HashedWheelTimer& timer) {
  const dubbo::ServiceId echo{.interface = kInteropService};
  const std::pair<const char*, const char*> typed[] = {{"echo", "Ljava/lang/Object;"},
                                                       {"echoString", "Ljava/lang/String;"},
                                                       {"echoInt", "I"},
                                                       {"echoLong", "J"},
                                                       {"echoDouble", "D"},
                                                       {"echoBoolean", "Z"},
                                                       {"echoBytes", "[B"},
                                                       {"echoList", "Ljava/util/List;"},
                                                       {"echoMap", "Ljava/util/Map;"}};
  for (const auto& [name, descriptor] : typed) provider.add(echo, name, descriptor, first);
  provider.add(echo, "fail", "Ljava/lang/String;", [](const dubbo::Request& r) -> h::Value {
    const h::Value message = first(r);
    throw dubbo::ApplicationException(
        "", message.type() == h::Type::String ? message.asString() : "fail");
  });
  provider.addAsync(echo, "sleep", "I", [&timer](const dubbo::Request& r, dubbo::Reply reply) {
    const std::int32_t ms = r.args.at(0).type() == h::Type::Int ? r.args[0].asInt() : 0;
    if (ms < 0) {
      reply.exception("java.lang.IllegalArgumentException", fmt::format("sleep({}): ms < 0", ms));
      return;
    }
    auto shared = std::make_shared<dubbo::Reply>(std::move(reply));
    (void)timer.newTimeout([shared] { shared->value(h::Value()); }, std::chrono::milliseconds(ms));
  });
}

std::vector<std::string> register_(registry::Registry& reg, const dubbo::Provider& provider,
                                   const EchoFlags& flags, std::uint16_t port) {
  std::vector<std::string> urls;
  for (const std::string& service : {std::string(kInteropService), flags.service}) {
    if (service.empty()) continue;
    registry::ServiceOptions options;
    options.interface = service;
    options.methods = {};
    urls.push_back(provider.providerUrl(options, {flags.host, port}, std::chrono::seconds(60)));
    reg.registerUrl(urls.back(), [url = urls.back()](const tasks::CallResult& r) {
      if (!r.ok)
        std::fprintf(stderr, "wheelbeat-dubbo: register %s: %s\n", url.c_str(), r.message.c_str());
    });
  }
  return urls;
}

}  // namespace

int echoServer(const EchoFlags& flags) {
  net::ShutdownSignal shutdown;  // SIGINT / SIGTERM, waited for by this thread
  core::WheelOptions wheel;
  wheel.tickDuration = std::chrono::milliseconds(5);  // sleep(ms) within a few ms
  core::HashedWheelTimer timer{wheel};
  net::EventLoop loop{"wheelbeat-dubbo"};
  dubbo::Provider provider;
  addInterop(provider, timer);
  if (!flags.service.empty()) {
    const dubbo::ServiceId service{.interface = flags.service};
    for (const auto& m : flags.methods)
      provider.add(service, m, std::string(dubbo::kAnyMethod), first);
    provider.add(service, std::string(dubbo::kAnyMethod), std::string(dubbo::kAnyMethod), first);
  }
  net::ServerOptions options;
  options.listen = {flags.host, flags.port};
  net::TcpServer server(loop, timer, options, provider.channelHandler());
  const std::uint16_t port = server.listen();
  std::unique_ptr<registry::Registry> reg;
  if (!flags.registry.empty()) {
    reg = registry::makeRegistry(loop, timer, flags.registry);
    reg->start();
    for (const auto& url : register_(*reg, provider, flags, port)) {
      std::fprintf(stderr, "wheelbeat-dubbo: registering %s\n", url.c_str());
    }
  }
  std::printf("wheelbeat-dubbo: listening on %s:%u\n", flags.host.c_str(), unsigned{port});
  std::fflush(stdout);
  while (!shutdown.wait(std::chrono::milliseconds(-1))) {
  }
  const int signal = shutdown.signal();
  if (reg) reg->close();
  (void)server.shutdown(std::chrono::seconds(1));
  const auto s = provider.stats();
  std::fprintf(
      stderr, "wheelbeat-dubbo: %s; requests %llu, values %llu, exceptions %llu, errors %llu\n",
      signal == SIGINT ? "SIGINT" : "SIGTERM", static_cast<unsigned long long>(s.requests),
      static_cast<unsigned long long>(s.values), static_cast<unsigned long long>(s.exceptions),
      static_cast<unsigned long long>(s.errors));
  (void)loop.stop();
  return kOk;
}

}  // namespace wheelbeat::config::dubbo_cli
