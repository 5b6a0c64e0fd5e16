// wheelbeat-dubbo's command line and its `call` command (the echo server: dubbo_echo.cpp).
#include "dubbo_cli.h"

#include "command_line.h"

#include <wheelbeat/cluster/service_client.h>
#include <wheelbeat/config/typed_json.h>
#include <wheelbeat/core/hashed_wheel_timer.h>
#include <wheelbeat/dubbo/consumer.h>
#include <wheelbeat/dubbo/descriptor.h>
#include <wheelbeat/net/net.h>
#include <wheelbeat/registry/registry.h>
#include <wheelbeat/registry/service.h>

#include <fmt/format.h>

#include <future>
#include <iostream>
#include <thread>

namespace wheelbeat::config::dubbo_cli {

namespace {

using namespace std::chrono_literals;

constexpr const char* kSynopsis =
    "usage: wheelbeat-dubbo call dubbo://HOST:PORT/INTERFACE METHOD [--types T,...] [--args JSON]\n"
    "       wheelbeat-dubbo call INTERFACE METHOD --registry URL [...]\n"
    "       wheelbeat-dubbo echo-server [--host H] [--port P] [--service IFACE] [--methods a,b]\n"
    "                                   [--registry URL]\n"
    "       wheelbeat-dubbo --help | --version";

constexpr const char* kDescription =
    "Calls Dubbo 2 services (hessian2) and serves an echo service, in the spirit of grpcurl.\n"
    "call: one call; stdout carries exactly its result as one JSON value (an application\n"
    "exception as {\"exception\": CLASS, \"message\": TEXT}); diagnostics go to stderr.\n"
    "echo-server: answers every method of --service with its first argument, and serves\n"
    "org.wheelbeat.interop.Echo: echo(Object), echoString, echoInt, echoLong, echoDouble,\n"
    "echoBoolean, echoBytes, echoList, echoMap, fail(String) (throws), sleep(int ms).\n"
    "\n"
    "Typed JSON (arguments and results): null, true, \"text\" as themselves; an integer is an int\n"
    "if it fits 32 bits, else a long; a number with a fraction or exponent is a double;\n"
    "{\"$int\": \"5\"}, {\"$long\": \"5\"}, {\"$double\": \"NaN\"}, {\"$bytes\": \"<base64>\"},\n"
    "{\"$date\": MS} for exact types; {\"$class\": \"com.example.Point\", \"x\": 1} an object\n"
    "(fields in order); [..] an untyped list, {\"$list\": [..], \"$type\": \"[int\"} a typed one;\n"
    "{..} a map with string keys, {\"$map\": [[k, v], ..]} one with keys of any type. Results\n"
    "always spell long, double, bytes and date explicitly ({\"$long\": \"5\"}).\n"
    "\n"
    "Exit status: 0 ok, 1 application exception, 2 bad usage, 3 transport, timeout or an error\n"
    "status (unknown service or method, ...).";

constexpr const char* kExamples =
    "  wheelbeat-dubbo call dubbo://127.0.0.1:20880/org.example.Greeter sayHello \\\n"
    "      --types java.lang.String --args '[\"world\"]'\n"
    "  wheelbeat-dubbo call org.example.Greeter sayHello --registry zookeeper://127.0.0.1:2181 \\\n"
    "      --types java.lang.String --args '[\"world\"]'\n"
    "  wheelbeat-dubbo echo-server --port 20880 --service org.example.Greeter --methods sayHello\n";

struct CallFlags {
  std::string target;
  std::string method;
  std::vector<std::string> types;
  std::string args;
  std::string serviceVersion;
  std::string group;
  std::int64_t timeoutMs = 3000;
  std::vector<std::string> attachments;
  std::string registry;
  bool generic = false;
};

// "dubbo://HOST:PORT/INTERFACE" -> endpoint and interface; without --registry it is required.
bool parseTarget(const std::string& target, net::Endpoint& endpoint, std::string& interface) {
  constexpr std::string_view scheme = "dubbo://";
  if (target.rfind(scheme, 0) != 0) return false;
  const std::string rest = target.substr(scheme.size());
  const std::size_t slash = rest.find('/');
  if (slash == std::string::npos || slash + 1 == rest.size()) return false;
  const auto parsed = net::parseEndpoint(rest.substr(0, slash));
  if (!parsed || parsed->port == 0) return false;
  endpoint = *parsed;
  interface = rest.substr(slash + 1, rest.find('?', slash) - slash - 1);
  return true;
}

int report(const dubbo::Outcome& o) {
  switch (o.kind) {
    case dubbo::OutcomeKind::Value: std::cout << toTypedJson(o.value) << "\n"; return kOk;
    case dubbo::OutcomeKind::Exception:
      std::cout << fmt::format(R"({{"exception": {}, "message": {}}})",
                               toTypedJson(hessian::Value::string(o.exceptionClass)),
                               toTypedJson(hessian::Value::string(o.message)))
                << "\n";
      return kApplicationException;
    case dubbo::OutcomeKind::Error: break;
  }
  std::cerr << "wheelbeat-dubbo: call failed (" << o.error << "): " << o.message << "\n";
  return kCallFailed;
}

dubbo::Outcome waitOutcome(std::future<dubbo::Outcome>& future, std::chrono::milliseconds limit) {
  if (future.wait_for(limit + 2s) != std::future_status::ready) {
    dubbo::Outcome late;
    late.error = "timeout";
    late.message = "no outcome in time";
    return late;
  }
  return future.get();
}

// Waits (bounded) until `ready` holds; false if it never did.
bool waitUntil(const std::function<bool()>& ready, std::chrono::milliseconds limit) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  while (!ready()) {
    if (std::chrono::steady_clock::now() >= deadline) return false;
    std::this_thread::sleep_for(2ms);
  }
  return true;
}

dubbo::Outcome callDirect(const dubbo::Call& call, const net::Endpoint& endpoint) {
  core::HashedWheelTimer timer{core::WheelOptions{}};
  net::EventLoop loop{"wheelbeat-dubbo"};
  net::ClientOptions options;
  options.server = endpoint;
  options.connectTimeout = call.timeout;
  net::TcpClient client(loop, timer, options);
  client.start();
  dubbo::Outcome out;
  if (!waitUntil([&] { return client.state() == net::ClientState::Connected; }, call.timeout)) {
    out.error = "disconnected";
    out.message = fmt::format("no connection to {}:{} within {}ms", endpoint.host, endpoint.port,
                              call.timeout.count());
  } else {
    auto promise = std::make_shared<std::promise<dubbo::Outcome>>();
    auto future = promise->get_future();
    dubbo::invoke(client.channel(), call,
                  [promise](const dubbo::Outcome& o) { promise->set_value(o); });
    out = waitOutcome(future, call.timeout);
  }
  client.close();
  (void)loop.stop();
  return out;
}

dubbo::Outcome callRegistry(const dubbo::Call& call, const std::string& url) {
  core::HashedWheelTimer timer{core::WheelOptions{}};
  net::EventLoop loop{"wheelbeat-dubbo"};
  auto reg = registry::makeRegistry(loop, timer, url);
  reg->start();
  registry::ServiceOptions service;
  service.interface = call.interface;
  service.version = call.version;
  service.group = call.group;
  cluster::ClusterOptions options;
  options.deadline = call.timeout;
  options.directory.accept = [service](std::string_view u) {
    return registry::matches(service, u);
  };
  dubbo::Outcome out;
  {
    cluster::ServiceClient client(loop, timer, *reg, call.interface, options);
    client.start();
    if (!waitUntil([&] { return client.available() > 0; }, call.timeout)) {
      out.error = "no-endpoint";
      out.message = fmt::format("no provider of {} in {} within {}ms", call.interface, url,
                                call.timeout.count());
    } else {
      auto promise = std::make_shared<std::promise<dubbo::Outcome>>();
      auto future = promise->get_future();
      dubbo::invoke(client, call, [promise](const dubbo::Outcome& o) { promise->set_value(o); });
      out = waitOutcome(future, call.timeout);
    }
    client.close();
  }
  reg->close();
  (void)loop.stop();
  return out;
}

int callCommand(const CallFlags& f, const ::wheelbeat::cli::CommandLine& cmd) {
  dubbo::Call call;
  net::Endpoint endpoint;
  if (f.registry.empty()) {
    if (!parseTarget(f.target, endpoint, call.interface)) {
      return cmd.fail(
          fmt::format("call: TARGET \"{}\" (expected dubbo://HOST:PORT/INTERFACE, or "
                      "an interface with --registry)",
                      f.target));
    }
  } else {
    net::Endpoint unused;
    if (!parseTarget(f.target, unused, call.interface)) call.interface = f.target;
  }
  try {
    std::vector<hessian::Value> args = valuesFromTypedJson(f.args);
    if (f.types.size() != args.size()) {
      return cmd.fail(fmt::format("call: --types names {} parameters for {} --args values",
                                  f.types.size(), args.size()));
    }
    call.method = f.method;
    call.descriptor = dubbo::descriptorOf(f.types);
    call.args = std::move(args);
  } catch (const std::invalid_argument& e) {
    return cmd.fail(fmt::format("call: {}", e.what()));
  }
  call.version = f.serviceVersion;
  call.group = f.group;
  call.timeout = std::chrono::milliseconds(f.timeoutMs);
  for (const auto& a : f.attachments) {
    const std::size_t eq = a.find('=');
    if (eq == std::string::npos || eq == 0) {
      return cmd.fail(fmt::format("--attachment \"{}\" (expected KEY=VALUE)", a));
    }
    call.attachments.set(a.substr(0, eq), hessian::Value::string(a.substr(eq + 1)));
  }
  if (f.generic) call = dubbo::genericCall(call, call.method, f.types, call.args);
  try {
    return report(f.registry.empty() ? callDirect(call, endpoint) : callRegistry(call, f.registry));
  } catch (const std::exception& e) {
    std::cerr << "wheelbeat-dubbo: " << e.what() << "\n";
    return kCallFailed;
  }
}

}  // namespace

int run(int argc, const char* const* argv) {
  ::wheelbeat::cli::CommandLine cmd("wheelbeat-dubbo", kSynopsis, kDescription, kExamples, true,
                                    kBadUsage);
  CallFlags c;
  ::wheelbeat::cli::App* call =
      cmd.app().add_subcommand("call", "one call; its result as typed JSON on stdout");
  call->add_option("TARGET", c.target, "dubbo://HOST:PORT/INTERFACE (or INTERFACE with --registry)")
      ->type_name("");
  call->add_option("METHOD", c.method, "the method's name")->type_name("");
  call->add_option("--types", c.types, "the parameters' Java types (java.lang.String,int,byte[])")
      ->delimiter(',');
  call->add_option("--args", c.args, "the arguments: a typed JSON array");
  call->add_option("--service-version", c.serviceVersion, "the service's version")
      ->default_str("none");
  call->add_option("--group", c.group, "the service's group")->default_str("none");
  call->add_option("--timeout-ms", c.timeoutMs, "the call's timeout")
      ->default_val(3000)
      ->check(::wheelbeat::cli::range(1, 3600000));
  call->add_option("--attachment", c.attachments, "an attachment KEY=VALUE (repeatable)");
  call->add_option("--registry", c.registry,
                   "find the provider in this registry (embedded://, redis://, zookeeper://)");
  call->add_flag("--generic", c.generic, "call through Dubbo's generic $invoke");
  EchoFlags e;
  std::uint32_t port = 20880;
  ::wheelbeat::cli::App* echo =
      cmd.app().add_subcommand("echo-server", "serve the echo services until SIGINT / SIGTERM");
  echo->add_option("--host", e.host, "the listen address")->default_str("127.0.0.1");
  echo->add_option("--port", port, "the listen port (0: any free one)")
      ->default_val(20880)
      ->check(::wheelbeat::cli::range(0, 65535));
  echo->add_option("--service", e.service, "also answer every method of this interface")
      ->default_str("none");
  echo->add_option("--methods", e.methods, "its methods, as the registry lists them")
      ->delimiter(',');
  echo->add_option("--registry", e.registry, "register the services in this registry");
  if (const auto status = cmd.parse(argc, argv)) return *status;
  if (call->parsed()) {
    if (c.target.empty() || c.method.empty())
      return cmd.fail("call: TARGET and METHOD are required");
    return callCommand(c, cmd);
  }
  if (echo->parsed()) {
    if (!e.methods.empty() && e.service.empty())
      return cmd.fail("echo-server: --methods needs --service");
    e.port = static_cast<std::uint16_t>(port);
    try {
      return echoServer(e);
    } catch (const std::exception& ex) {
      std::cerr << "wheelbeat-dubbo: " << ex.what() << "\n";
      return kCallFailed;
    }
  }
  return cmd.fail("a command is required (expected: call or echo-server)");
}

}  // namespace wheelbeat::config::dubbo_cli
