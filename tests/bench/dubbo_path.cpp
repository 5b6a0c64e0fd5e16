// wheelbeat_dubbo_path: the server CPU of one R1 request (tests/bench/net/r1.h) without the
// transport — what the hessian2 bodies add to a raw echo, free of the machine's load.
//
//   raw       the R1 raw server's handler: reply(frame, frame.body) on a channel that copies the
//             body into its buffer (as the transport's write buffer would);
//   hessian2  dubbo::Provider::onFrame on R1's hessian2 request (echo(String), 64 characters,
//             the attachments a wheelbeat consumer sends): decode, dispatch, the handler, encode,
//             the same copying channel;
//   inplace   the same request served by Provider::addInPlace: the handler reads the argument as
//             a view of the frame and answers it with Answer::string();
//   scan      the least work any decoder must do on that request: one pass over its Hessian
//             values (tags, lengths, the strings' bytes checked for ASCII), building nothing.
//
//   wheelbeat_dubbo_path [--mode time|count] [--only raw|hessian2|inplace|scan] [--requests N]
//
// time (default): each mode's requests in rounds, the best round's ns per request, and the
// ratio hessian2 / raw. count: runs N requests of the one mode --only names inside
// runRequests() and nothing else, for instruction counts under callgrind:
//   valgrind --tool=callgrind --collect-atstart=no --toggle-collect='*runRequests*'
//       build/bin/wheelbeat_dubbo_path --mode count --only hessian2 --requests 10000
// (the instructions collected / N = instructions per request). Every mode first checks one
// answer (the exact response body a Java provider would send); exit 1 if it differs.
#include "../dubbo/last_frame_channel.h"
#include "command_line.h"

#include <wheelbeat/dubbo/body.h>
#include <wheelbeat/dubbo/consumer.h>
#include <wheelbeat/dubbo/provider.h>
#include <wheelbeat/net/channel.h>
#include <wheelbeat/net/codec.h>

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <functional>
#include <string>
#include <string_view>

namespace {

using namespace wheelbeat;

constexpr std::size_t kBodyBytes = 64;  // R1's payload (r1.h kR1BodyBytes)
constexpr std::string_view kService = "org.wheelbeat.bench.Echo";

// The transport's share that is the same for both modes, a copy of each answer into one reused
// buffer (its syscalls are what R1 measures, not this tool): LastFrameChannel.
using CopyingChannel = wbdubbo::LastFrameChannel;

hessian::Value payload() { return hessian::Value::string(std::string(kBodyBytes, 'r')); }

std::string hessianRequest() {
  dubbo::Call call{.interface = std::string(kService),
                   .method = "echo",
                   .descriptor = "Ljava/lang/String;",
                   .args = {payload()}};
  return dubbo::encodeRequest(dubbo::makeRequest(call));
}

enum class Mode { Raw, Hessian2, InPlace, Scan };

// One server: the frame it is sent, and what it does with it.
struct Server {
  Mode mode;
  std::string body;
  net::FrameView frame;
  CopyingChannel channel;
  dubbo::Provider provider;
  net::ChannelHandler handler;
  std::uint64_t scanned = 0;

  explicit Server(Mode m)
      : mode(m), body(m == Mode::Raw ? std::string(kBodyBytes, 'r') : hessianRequest()) {
    frame.flags = net::flag::kRequest | net::flag::kTwoWay | net::kHessian2;
    frame.id = 7;
    frame.body = body;
    const dubbo::ServiceId service{.interface = std::string(kService)};
    if (m == Mode::InPlace) {
      provider.addInPlace(service, "echo", "Ljava/lang/String;",
                          [](const dubbo::CallView& call, dubbo::Answer& answer) {
                            answer.string(call.stringArg(0).value_or(""));
                          });
    } else {
      provider.add(service, "echo", "Ljava/lang/String;",
                   [](const dubbo::Request& request) { return request.args[0]; });
    }
    handler = provider.channelHandler();
    handler.onConnected(channel);
  }
  void serve() {
    if (mode == Mode::Raw) {
      (void)channel.reply(frame, frame.body);
    } else if (mode == Mode::Hessian2 || mode == Mode::InPlace) {
      provider.onFrame(channel, frame);
    } else {
      scanned += scanValues(frame.body);
    }
  }
  static std::size_t scanValues(std::string_view body);
};

// A walk of R1's request as any decoder must make it: each value's tag and length, each string's
// bytes checked for ASCII (8 at a time), maps and lists entered; nothing built. Only the forms
// R1's request holds (compact and medium strings, 'N', 'H' ... 'Z'); returns the values seen.
std::size_t Server::scanValues(std::string_view body) {
  const auto* p = reinterpret_cast<const std::uint8_t*>(body.data());
  const auto* end = p + body.size();
  std::size_t values = 0;
  std::uint64_t high = 0;
  while (p < end) {
    const std::uint8_t tag = *p++;
    std::size_t len = 0;
    if (tag < 0x20) {
      len = tag;
    } else if (tag >= 0x30 && tag <= 0x33) {
      len = (static_cast<std::size_t>(tag - 0x30) << 8) | *p++;
    } else {
      values += tag != 'Z' ? 1 : 0;  // 'N', 'H', 'Z'
      continue;
    }
    const auto* stop = p + len;
    for (; p + 8 <= stop; p += 8) {
      std::uint64_t w = 0;
      std::memcpy(&w, p, 8);
      high |= w;
    }
    for (; p < stop; ++p) high |= *p;
    ++values;
  }
  return (high & 0x8080808080808080ULL) != 0 ? 0 : values;
}

// Outside the timed loops: the answer each mode gives is the one expected.
bool checkAnswer(Server& s) {
  s.serve();
  if (s.mode == Mode::Scan)
    return s.scanned == 15;  // 5 header values, 1 argument, the map and its 4 entries
  const std::string expected =
      s.mode == Mode::Raw
          ? s.body
          : dubbo::encodeResult(dubbo::Result::ofValue(payload()), dubbo::kDubboVersion);
  return s.channel.status == dubbo::status::kOk && s.channel.body == expected;
}

[[gnu::noinline]] void runRequests(Server& s, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) s.serve();
}

double bestNsPerRequest(Server& s, std::size_t n, int rounds) {
  double best = 1e18;
  for (int r = 0; r < rounds; ++r) {
    const auto t0 = std::chrono::steady_clock::now();
    runRequests(s, n);
    const auto t1 = std::chrono::steady_clock::now();
    best = std::min(
        best, std::chrono::duration<double, std::nano>(t1 - t0).count() / static_cast<double>(n));
  }
  return best;
}

const char* modeName(Mode m) {
  switch (m) {
    case Mode::Raw: return "raw";
    case Mode::Hessian2: return "hessian2";
    case Mode::InPlace: return "inplace";
    case Mode::Scan: break;
  }
  return "scan";
}

}  // namespace

int main(int argc, char** argv) {
  std::string mode = "time";
  std::string only;
  std::size_t requests = 200000;
  wheelbeat::cli::CommandLine cmd(
      "wheelbeat_dubbo_path",
      "usage: wheelbeat_dubbo_path [--mode time|count] [--only raw|hessian2|inplace|scan] "
      "[--requests N]",
      "The server CPU of one R1 request without the transport: a raw echo, the hessian2 path "
      "(decode, dispatch, handler, encode), the same served in place (Provider::addInPlace) and "
      "a scan-only walk of the request.",
      "  wheelbeat_dubbo_path\n"
      "  valgrind --tool=callgrind --collect-atstart=no --toggle-collect='*runRequests*' \\\n"
      "      wheelbeat_dubbo_path --mode count --only hessian2 --requests 10000\n");
  cmd.app()
      .add_option("--mode", mode, "time: ns per request of each mode; count: run --only's N")
      ->type_name("MODE")
      ->check(wheelbeat::cli::oneOf({"time", "count"}))
      ->capture_default_str();
  cmd.app()
      .add_option("--only", only, "one mode (count needs it)")
      ->type_name("MODE")
      ->check(wheelbeat::cli::oneOf({"raw", "hessian2", "inplace", "scan"}))
      ->default_str("every mode");
  cmd.app()
      .add_option("--requests", requests, "requests per round")
      ->type_name("N")
      ->check(wheelbeat::cli::range(1, 1000000000).description(""))
      ->capture_default_str();
  if (const auto status = cmd.parse(argc, argv)) return *status;
  if (mode == "count" && only.empty()) return cmd.fail("--mode count needs --only");
  double ns[4] = {0, 0, 0, 0};
  for (const Mode m : {Mode::Raw, Mode::Hessian2, Mode::InPlace, Mode::Scan}) {
    if (!only.empty() && only != modeName(m)) continue;
    Server server(m);
    if (!checkAnswer(server)) {
      fmt::print(stderr, "wheelbeat_dubbo_path: {}: unexpected answer\n", modeName(m));
      return 1;
    }
    if (mode == "count") {
      runRequests(server, requests);
      continue;
    }
    runRequests(server, requests / 10);  // warm-up: caches, allocator
    ns[static_cast<int>(m)] = bestNsPerRequest(server, requests, 7);
    fmt::print("{:<9} {:8.1f} ns/request (best of 7 x {}; request body {} bytes, answer {})\n",
               modeName(m), ns[static_cast<int>(m)], requests, server.body.size(),
               m == Mode::Scan ? 0 : server.channel.body.size());
  }
  if (mode == "time" && only.empty()) {
    fmt::print(
        "hessian2 / raw = {:.2f}x, hessian2 - raw = {:.1f} ns, inplace - raw = {:.1f} ns, "
        "scan = {:.1f} ns\n",
        ns[1] / ns[0], ns[1] - ns[0], ns[2] - ns[0], ns[3]);
  }
  return 0;
}
