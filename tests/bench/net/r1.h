// R1: request / response throughput over loopback TCP, wheelbeat against a raw-epoll floor.
//
// One server process and one client process per case (this binary again, --role, as H1/H2),
// driven over the same pipe protocol (proto.h). The client holds `conns` connections and keeps
// `depth` requests in flight on each: every answer sends the next request on its connection.
// Frames are Dubbo 2's (codec.h): a two-way hessian2 request (flags 0xC2) with a 64-byte body,
// answered by a response (flags 0x02, status 20, same id) echoing that body: 80 bytes each way.
// With --bodies hessian2 ("bodies":"hessian2": the wheelbeat and wheelbeat-server pairs, the
// floor has no Dubbo decoder), the bodies are real Dubbo ones: the request calls
// kR1Service.echo(String) with a 64-character string (the same payload), the server decodes it
// with dubbo::Provider and answers that String as a hessian2 result; the line adds its server CPU
// per request against the raw-bodies line of the same pair and case
// ("server_cpu_per_request_vs_raw_bodies": what the Dubbo bodies cost the server).
//
//   wheelbeat  client: `conns` TcpClients on one EventLoop and one wheel, each request through
//              Channel::request() with its wheel timeout (--request-timeout-ms, 5 s); server: a
//              TcpServer whose handler replies with Channel::reply() (R1Server in r1_roles.cpp:
//              a net::EventLoopGroup of `loops` event loops).
//   wheelbeat-server  (with --impl both) wheelbeat's server, asked by the raw-epoll client below:
//              the server's own cost per request, with the wheelbeat client's pace taken out.
//   raw-epoll  the floor: the same bytes and the same pipelining on plain sockets, one thread
//              and one level-triggered epoll per process (the server: one per loop, the
//              connections spread as the group spreads them); each read's answers (or next
//              requests) leave in one write(). No timer, no timeouts, no allocation per request.
//
// Children's replies (proto.h "tag key=value"):
//   server: "ready port0=P cpu_ns= ..." once listening, then per "stats":
//           "stats conns= handled= errors= cpu_ns= rss= heap="
//   client: "ready cpu_ns= ...", "connected n=N" once all are connected (requests start then),
//           per "stats": "stats connected= sent= answered= timeouts= closed= errors= cpu_ns= ...",
//           per "rtt": the send -> answer histogram (rtt_histogram.h, ns), per "drain": stops
//           sending, waits for every request out to end (bounded), then "drained" + the stats.
#pragma once

#include "net_bench.h"
#include "proto.h"

#include <wheelbeat/net/codec.h>

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace wheelbeat::bench::netbench {

inline constexpr std::size_t kR1BodyBytes = 64;
// One R1 frame on the wire (header + body: 80 bytes), and a request's flags; both raw roles
// build and cut exactly these.
inline constexpr std::size_t kR1FrameBytes = net::kHeaderSize + kR1BodyBytes;
inline constexpr std::uint8_t kR1RequestFlags =
    net::flag::kRequest | net::flag::kTwoWay | net::kHessian2;

// "64x16,1000x1" -> {{64, 16}, {1000, 1}}; "1,2" -> {1, 2}; "raw,hessian2,raw-sized" ->
// {Raw, Hessian2, RawSized}.
// Throw std::invalid_argument naming the flag, the value and what was expected.
std::vector<R1Case> parseR1Cases(std::string_view text);
std::vector<int> parseR1Loops(std::string_view text);
std::vector<R1Bodies> parseR1Bodies(std::string_view text);
// "raw", "hessian2", "raw-sized" (the line's "bodies" and the children's --bodies).
const char* r1BodiesName(R1Bodies bodies);

// Hessian2 bodies (r1_dubbo.cpp): the interface served, the request every call sends, and the
// exact response body the server answers it with (a Dubbo 2.0.2 client's form: flag 4, the
// String, the attachments map).
inline constexpr std::string_view kR1Service = "org.wheelbeat.bench.Echo";
std::string r1HessianRequest();
std::string r1HessianResponse();
// The bodies of a body mode: raw, 64 bytes each way; hessian2, the two above; raw-sized, raw
// bytes of the hessian2 bodies' lengths (the transport's share of their extra bytes, without
// any decoding: the floor under hessian2), answered as they are by an echo of that length.
std::string r1RequestBody(R1Bodies bodies);
std::string r1ResponseBody(R1Bodies bodies);

// Who serves and who asks, the line's "impl": the floor ("raw-epoll": both processes raw),
// wheelbeat ("wheelbeat": both wheelbeat), or wheelbeat's server asked by the floor's client
// ("wheelbeat-server"): the server's own cost, with the client's pace taken out of it (a slower
// client leaves a server more idle wake-ups per request).
enum class R1Pair { Raw, Wheelbeat, WheelbeatServer };
const char* r1PairName(R1Pair pair);

// One case's window, from the driver's snapshots.
struct R1Measurement {
  BenchConfig config;  // the driver's
  R1Pair pair = R1Pair::Wheelbeat;
  R1Bodies bodies = R1Bodies::Raw;
  int loops = 1;
  R1Case c;
  double windowS = 0;
  double requestsPerS = 0;
  double serverCpuUsPerRequest = 0;
  double clientCpuUsPerRequest = 0;
  double p50Us = 0;
  double p99Us = 0;
  double p999Us = 0;
  std::uint64_t rttSamples = 0;
  // The whole run, after the client drained: every request sent was answered, or why not.
  std::int64_t sent = 0;
  std::int64_t answered = 0;
  std::int64_t timeouts = 0;
  std::int64_t closed = 0;
  std::int64_t errors = 0;   // client: refused sends, bad answers; server: refused replies
  std::int64_t handled = 0;  // requests the server answered
  double loadStart = 0;
  double loadEnd = 0;
  // Set for a wheelbeat or wheelbeat-server line: the floor's line with the same loops, conns
  // and depth. For loops > 1 (any pair): the same pair's 1-loop line.
  const R1Measurement* raw = nullptr;
  const R1Measurement* oneLoop = nullptr;
  // Set for a hessian2 line: the raw-bodies line of the same pair, loops, conns and depth.
  const R1Measurement* rawBodies = nullptr;
  // With rounds (config.rounds > 1): the server CPU per request of every round, in run order
  // (this measurement is the median one), and on a line with a floor each round's ratio to the
  // floor's round with the same number.
  std::vector<double> roundsServerCpuUsPerRequest;
  std::vector<double> roundsServerCpuVsRaw;
};

std::string r1Line(const R1Measurement& m);
// Problems with the line (every field, in order) and the run (requests_per_s > 0, sent ==
// answered == handled, no timeout, close or error, samples). Empty: all good.
std::vector<std::string> r1SelfCheck(const std::string& line, const R1Measurement& m);

int r1DriverMain(const BenchConfig& config);
int r1ServerMain(const BenchConfig& config);
int r1ClientMain(const BenchConfig& config);
int r1RawServerMain(const BenchConfig& config);
int r1RawClientMain(const BenchConfig& config);

}  // namespace wheelbeat::bench::netbench
