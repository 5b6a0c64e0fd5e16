// Table: bad documents and the exact, complete list of messages each must produce.
#include "helpers.h"

#include <doctest/doctest.h>

#include <string>
#include <vector>

namespace {

struct Bad {
  std::string json;
  std::vector<std::string> messages;
};

const std::string kDuration =
    "a duration: a non-negative number with a unit h, m, s, ms, us or ns, or several in that "
    "order (e.g. \"60s\", \"1.5s\", \"1m30s\", \"250us\")";
const std::string kNoUnit = "a duration with a unit, e.g. \"30s\"";
const std::string kNegative = "a non-negative duration";
const std::string kErrorName =
    "an error name: one of \"timeout\", \"disconnected\", \"read-idle\", \"overloaded\", "
    "\"rejected\", \"bad-request\", \"no-endpoint\", \"exception\", \"failback-rejected\"";
const std::string kPolicyKeys =
    "a known key: backoff, initial_delay, multiplier, max_delay, jitter, jitter_ratio, "
    "max_attempts, deadline, retry_on, ignore";
const std::string kInterface = "a non-empty name without whitespace, '/' or '?'";
const std::string kMethod = "a non-empty method name without whitespace or ','";
const std::string kScheme = "a non-empty url scheme without whitespace, ':', '/' or '?'";
const std::string kMetricsListen =
    "\"host:port\" (IPv6: \"[::1]:20880\") with a port in 0..65535, 0 = any free port";
const std::string kEndpoint = "\"host:port\" (IPv6: \"[::1]:20880\") with a port in 0..65535";

std::string e(const std::string& pointerAndValue, const std::string& expected) {
  return pointerAndValue + " (expected: " + expected + ")";
}

const std::vector<Bad> kBad = {
    // document and top level
    {R"([])", {e("[]", "an object at the top level")}},
    {R"({"foo":1})",
     {e("/foo: 1",
        "a known key: log_level, wheel, heartbeat, retry, retry_budget, failback, loop, "
        "registry, server, client, service, metrics, cluster")}},
    {R"({"log_level":"verbose"})",
     {e(R"(/log_level: "verbose")", R"(one of "debug", "info", "warn", "error", "off")")}},
    {R"({"log_level":"INFO"})",
     {e(R"(/log_level: "INFO")", R"(one of "debug", "info", "warn", "error", "off")")}},
    // wheel
    {R"({"wheel":5})", {e("/wheel: 5", "an object")}},
    {R"({"wheel":{"tik":"1s"}})",
     {e(R"(/wheel/tik: "1s")", "a known key: tick, ticks_per_wheel, max_pending")}},
    {R"({"wheel":{"tick":"0ms"}})", {e(R"(/wheel/tick: "0ms")", "> 0")}},
    {R"({"wheel":{"tick":"1.5x"}})", {e(R"(/wheel/tick: "1.5x")", kDuration)}},
    {R"({"wheel":{"ticks_per_wheel":0}})",
     {e("/wheel/ticks_per_wheel: 0", "1..1073741824 (rounded up to a power of two)")}},
    {R"({"wheel":{"ticks_per_wheel":1073741825}})",
     {e("/wheel/ticks_per_wheel: 1073741825", "1..1073741824 (rounded up to a power of two)")}},
    {R"({"wheel":{"ticks_per_wheel":512.0}})", {e("/wheel/ticks_per_wheel: 512.0", "an integer")}},
    {R"({"wheel":{"max_pending":-1}})",
     {e("/wheel/max_pending: -1", "an integer >= 0 (0: unlimited)")}},
    {R"({"wheel":{"tick":"1000000h","ticks_per_wheel":1024}})",
     {e(R"(/wheel/tick: "1000000h")", "< 9007199254740991ns for 1024 ticks per wheel")}},
    {R"({"wheel":{"tick":"3000000h"}})",
     {e(R"(/wheel/tick: "3000000h")",
        "a duration of at most 9223372036854775807ns (about 292 years)")}},
    // heartbeat
    {R"({"heartbeat":{"interval":"60s","idle_timeout":"90s"}})",
     {e(R"(/heartbeat/idle_timeout: "90s")", ">= 2 * interval = 2m")}},
    {R"({"heartbeat":{"idle_timeout":"1m"}})",
     {e(R"(/heartbeat/idle_timeout: "1m")", ">= 2 * interval = 2m")}},
    {R"({"heartbeat":{"interval":"0s"}})", {e(R"(/heartbeat/interval: "0s")", "> 0")}},
    {R"({"heartbeat":{"interval":30}})", {e("/heartbeat/interval: 30", kNoUnit)}},
    {R"({"heartbeat":{"interval":0}})", {e("/heartbeat/interval: 0", kNoUnit)}},
    {R"({"heartbeat":{"interval":-5}})", {e("/heartbeat/interval: -5", kNoUnit)}},
    {R"({"heartbeat":{"interval":"-5s"}})", {e(R"(/heartbeat/interval: "-5s")", kNegative)}},
    // heartbeat periods against the wheel's tick: at least 2 ticks, naming both keys
    {R"({"wheel":{"tick":"100ms"},"heartbeat":{"interval":"50ms"}})",
     {e(R"(/heartbeat/interval: "50ms")",
        R"(at least 2 wheel ticks = 200ms; /wheel/tick is "100ms")")}},
    {R"({"heartbeat":{"interval":"199ms"}})",
     {e(R"(/heartbeat/interval: "199ms")",
        R"(at least 2 wheel ticks = 200ms; /wheel/tick is "100ms")")}},
    {R"({"wheel":{"tick":"1m"}})",
     {e(R"(/heartbeat/interval: "1m")", R"(at least 2 wheel ticks = 2m; /wheel/tick is "1m")")}},
    {R"({"wheel":{"tick":"1s"},"heartbeat":{"interval":"500ms","idle_timeout":"1s",
        "close_timeout":"1500ms"}})",
     {e(R"(/heartbeat/interval: "500ms")", R"(at least 2 wheel ticks = 2s; /wheel/tick is "1s")"),
      e(R"(/heartbeat/idle_timeout: "1s")", R"(at least 2 wheel ticks = 2s; /wheel/tick is "1s")"),
      e(R"(/heartbeat/close_timeout: "1500ms")",
        R"(at least 2 wheel ticks = 2s; /wheel/tick is "1s")")}},
    {R"({"wheel":{"tick":"0.5ms"},"heartbeat":{"interval":"1ms"}})",  // the timer runs 1ms
     {e(R"(/heartbeat/interval: "1ms")",
        R"(at least 2 wheel ticks = 2ms; /wheel/tick is "0.5ms")")}},
    {R"({"heartbeat":{"interval":"60"}})", {e(R"(/heartbeat/interval: "60")", kDuration)}},
    {R"({"heartbeat":{"interval":"60 s"}})", {e(R"(/heartbeat/interval: "60 s")", kDuration)}},
    {R"({"heartbeat":{"interval":"60sec"}})", {e(R"(/heartbeat/interval: "60sec")", kDuration)}},
    {R"({"heartbeat":{"seed":-1}})",
     {e("/heartbeat/seed: -1",
        "an integer in 0..18446744073709551615 (0: a random seed per task)")}},
    {R"({"heartbeat":{"reconnect":"fast"}})",
     {e(R"(/heartbeat/reconnect: "fast")", "the name of an entry of /retry (there is none)")}},
    {R"({"retry":{"a":{},"c":{}},"heartbeat":{"reconnect":"b"}})",
     {e(R"(/heartbeat/reconnect: "b")", R"(the name of an entry of /retry: "a", "c")")}},
    {R"({"heartbeat":{"reconnect":5}})",
     {e("/heartbeat/reconnect: 5", "a retry policy object or the name of an entry of /retry")}},
    {R"({"heartbeat":{"reconnect":{"jitterRatio":0.1}}})",
     {e("/heartbeat/reconnect/jitterRatio: 0.1", kPolicyKeys)}},
    // heartbeat: the failure detector
    {R"({"heartbeat":{"detector":"Phi"}})",
     {e(R"(/heartbeat/detector: "Phi")", R"(one of "fixed", "phi")")}},
    {R"({"heartbeat":{"detector":1}})", {e("/heartbeat/detector: 1", R"(one of "fixed", "phi")")}},
    {R"({"heartbeat":{"detector":""}})",
     {e(R"(/heartbeat/detector: "")", R"(one of "fixed", "phi")")}},
    {R"({"heartbeat":{"phi":0}})", {e("/heartbeat/phi: 0", "an object")}},
    {R"({"heartbeat":{"phi":{"threshold":0}}})", {e("/heartbeat/phi/threshold: 0", "> 0, finite")}},
    {R"({"heartbeat":{"phi":{"threshold":-1}}})",
     {e("/heartbeat/phi/threshold: -1", "> 0, finite")}},
    {R"({"heartbeat":{"phi":{"threshold":"8"}}})",
     {e(R"(/heartbeat/phi/threshold: "8")", "a number")}},
    {R"({"heartbeat":{"phi":{"min_std_deviation":"0ms"}}})",
     {e(R"(/heartbeat/phi/min_std_deviation: "0ms")", "> 0")}},
    {R"({"heartbeat":{"phi":{"acceptable_pause":"-1s"}}})",
     {e(R"(/heartbeat/phi/acceptable_pause: "-1s")", kNegative)}},
    {R"({"heartbeat":{"phi":{"window":0}}})", {e("/heartbeat/phi/window: 0", "1 .. 100000")}},
    {R"({"heartbeat":{"phi":{"window":100001}}})",
     {e("/heartbeat/phi/window: 100001", "1 .. 100000")}},
    {R"({"heartbeat":{"phi":{"window":1.5}}})",
     {e("/heartbeat/phi/window: 1.5", "an integer >= 0")}},
    {R"({"heartbeat":{"phi":{"minStdDeviation":"1s"}}})",
     {e(R"(/heartbeat/phi/minStdDeviation: "1s")",
        "a known key: threshold, min_std_deviation, acceptable_pause, window")}},
    {R"({"heartbeat":{"phi":{"threshold":0,"window":0},"detector":"PHI","interval":"0s"}})",
     {e("/heartbeat/phi/threshold: 0", "> 0, finite"), e("/heartbeat/phi/window: 0", "1 .. 100000"),
      e(R"(/heartbeat/detector: "PHI")", R"(one of "fixed", "phi")"),
      e(R"(/heartbeat/interval: "0s")", "> 0")}},
    // retry policies
    {R"({"retry":{"payments":{"max_delay":"500ms"}}})",
     {e(R"(/retry/payments/max_delay: "500ms")", ">= initial_delay = 1s")}},
    {R"({"retry":{"p":{"initial_delay":"5m"}}})",
     {e(R"(/retry/p/initial_delay: "5m")", "<= max_delay = 2m")}},
    {R"({"retry":{"p":{"backoff":"linear"}}})",
     {e(R"(/retry/p/backoff: "linear")", R"(one of "fixed", "exponential")")}},
    {R"({"retry":{"p":{"jitter":"random"}}})",
     {e(R"(/retry/p/jitter: "random")",
        R"(one of "none", "full", "equal", "decorrelated", "proportional")")}},
    {R"({"retry":{"p":{"multiplier":0.5}}})", {e("/retry/p/multiplier: 0.5", ">= 1")}},
    {R"({"retry":{"p":{"jitter_ratio":1.5}}})",
     {e("/retry/p/jitter_ratio: 1.5", "0 <= jitter_ratio <= 1")}},
    {R"({"retry":{"p":{"max_attempts":-2}}})",
     {e("/retry/p/max_attempts: -2", "-1 (forever), 0 (none) or > 0")}},
    {R"({"retry":{"p":{"retry_on":"timeout"}}})",
     {e(R"(/retry/p/retry_on: "timeout")", "an array of error names")}},
    {R"({"retry":{"p":{"ignore":["timeout","",7]}}})",
     {e(R"(/retry/p/ignore/1: "")", kErrorName), e("/retry/p/ignore/2: 7", kErrorName)}},
    {R"({"retry":{"p":{"retry_on":["disconnected","closed","Timeout"]}}})",
     {e(R"(/retry/p/retry_on/1: "closed")", kErrorName),
      e(R"(/retry/p/retry_on/2: "Timeout")", kErrorName)}},
    {R"({"retry":{"p":{"initial_delay":"0s"}}})", {e(R"(/retry/p/initial_delay: "0s")", "> 0")}},
    {R"({"retry":{"p":{"initial_delay":1000}}})", {e("/retry/p/initial_delay: 1000", kNoUnit)}},
    {R"({"retry":{"p":{"deadline":"-1s"}}})", {e(R"(/retry/p/deadline: "-1s")", kNegative)}},
    {R"({"retry":[]})", {e("/retry: []", "an object of named retry policies")}},
    {R"({"retry":{"p":5}})", {e("/retry/p: 5", "an object")}},
    {R"({"retry":{"a/b~":{"foo":1}}})", {e("/retry/a~1b~0/foo: 1", kPolicyKeys)}},
    {R"({"retry":{"":{}}})", {e("/retry/: {}", "a non-empty policy name")}},
    // retry budget
    {R"({"retry_budget":{"ratio":-0.5}})", {e("/retry_budget/ratio: -0.5", "0 <= ratio <= 1000")}},
    {R"({"retry_budget":{"min_retries_per_second":1000000001}})",
     {e("/retry_budget/min_retries_per_second: 1000000001", "0..1000000000")}},
    {R"({"retry_budget":{"window":"999us"}})", {e(R"(/retry_budget/window: "999us")", ">= 1ms")}},
    // failback
    {R"({"failback":{"check":"yes"}})", {e(R"(/failback/check: "yes")", "true or false")}},
    {R"({"failback":{"max_pending_retries":0}})", {e("/failback/max_pending_retries: 0", ">= 1")}},
    {R"({"failback":{"registry_retry":{"initial_delay":"10s"}}})",
     {e(R"(/failback/registry_retry/initial_delay: "10s")", "<= max_delay = 5s")}},
    // loop
    {R"({"loop":5})", {e("/loop: 5", "an object")}},
    {R"({"loop":{"io_threads":-1}})",
     {e("/loop/io_threads: -1", "an integer in 0..1024 (0 = one per core)")}},
    {R"({"loop":{"io_threads":1025}})",
     {e("/loop/io_threads: 1025", "an integer in 0..1024 (0 = one per core)")}},
    {R"({"loop":{"io_threads":"4"}})",
     {e(R"(/loop/io_threads: "4")", "an integer in 0..1024 (0 = one per core)")}},
    {R"({"loop":{"io_threads":2.5}})",
     {e("/loop/io_threads: 2.5", "an integer in 0..1024 (0 = one per core)")}},
    {R"({"loop":{"max_partial_bytes":-1}})",
     {e("/loop/max_partial_bytes: -1", "an integer >= 0 (bytes; 0 = unlimited)")}},
    {R"({"loop":{"max_partial_bytes":"32MiB"}})",
     {e(R"(/loop/max_partial_bytes: "32MiB")", "an integer >= 0 (bytes; 0 = unlimited)")}},
    {R"({"loop":{"max_partial_bytes":1.5}})",
     {e("/loop/max_partial_bytes: 1.5", "an integer >= 0 (bytes; 0 = unlimited)")}},
    {R"({"loop":{"max_partial_bytes":1024.0}})",
     {e("/loop/max_partial_bytes: 1024.0", "an integer >= 0 (bytes; 0 = unlimited)")}},
    {R"({"loop":{"max_partial_bytes":18446744073709551616}})",
     {e("/loop/max_partial_bytes: 1.8446744073709552e+19",
        "an integer >= 0 (bytes; 0 = unlimited)")}},
    {R"({"loop":{"maxPartialBytes":0}})",
     {e("/loop/maxPartialBytes: 0", "a known key: max_partial_bytes, io_threads")}},
    // registry
    {R"({"registry":{"kind":"etcd"}})",
     {e(R"(/registry/kind: "etcd")", R"(one of "embedded", "redis", "zookeeper")")}},
    {R"({"registry":{"kind":"ZooKeeper"}})",
     {e(R"(/registry/kind: "ZooKeeper")", R"(one of "embedded", "redis", "zookeeper")")}},
    {R"({"registry":{"address":"localhost"}})",
     {e(R"(/registry/address: "localhost")", kEndpoint)}},
    {R"({"registry":{"address":"localhost:0"}})",
     {e(R"(/registry/address: "localhost:0")", "port 1 .. 65535")}},
    {R"({"registry":{"address":"::1:9090"}})", {e(R"(/registry/address: "::1:9090")", kEndpoint)}},
    {R"({"registry":{"address":":9090"}})", {e(R"(/registry/address: ":9090")", kEndpoint)}},
    {R"({"registry":{"group":"my group"}})",
     {e(R"(/registry/group: "my group")", "non-empty, no whitespace")}},
    {R"({"registry":{"session":"500ms"}})", {e(R"(/registry/session: "500ms")", ">= 1s")}},
    // server
    {R"({"server":{"listen":"0.0.0.0:65536"}})",
     {e(R"(/server/listen: "0.0.0.0:65536")", kEndpoint)}},
    {R"({"server":{"backlog":0}})", {e("/server/backlog: 0", "1 .. 65535")}},
    {R"({"server":{"max_connections":-1}})",
     {e("/server/max_connections: -1", "an integer >= 0 (0 = unlimited)")}},
    {R"({"server":{"max_connections":"100"}})",
     {e(R"(/server/max_connections: "100")", "an integer >= 0 (0 = unlimited)")}},
    {R"({"server":{"max_connections":10.5}})",
     {e("/server/max_connections: 10.5", "an integer >= 0 (0 = unlimited)")}},
    {R"({"server":{"max_connections":true}})",
     {e("/server/max_connections: true", "an integer >= 0 (0 = unlimited)")}},
    {R"({"server":{"max_body":0}})", {e("/server/max_body: 0", "1 .. 2147483647")}},
    {R"({"server":{"max_body":16777216}})",
     {e("/server/max_body: 16777216", "<= max_send_queue - 16 = 16777200")}},
    {R"({"server":{"max_body":1024,"max_send_queue":1000}})",
     {e("/server/max_send_queue: 1000", ">= max_body + 16 = 1040")}},
    // client
    {R"({"client":{"server":"127.0.0.1:0"}})",
     {e(R"(/client/server: "127.0.0.1:0")", "port 1 .. 65535")}},
    {R"({"client":{"server":"[::1]20880"}})", {e(R"(/client/server: "[::1]20880")", kEndpoint)}},
    {R"({"client":{"connect_timeout":"0s"}})", {e(R"(/client/connect_timeout: "0s")", "> 0")}},
    {R"({"client":{"max_send_queue":"16MiB"}})",
     {e(R"(/client/max_send_queue: "16MiB")", "an integer >= 0")}},
    {R"({"client":{"max_body":2147483648}})",
     {e("/client/max_body: 2147483648", "1 .. 2147483647")}},
    // service: the section names a service, so interface is required; empty names are errors
    {R"({"service":{}})", {e("/service/interface: null", kInterface + " (required)")}},
    {R"({"service":{"application":"shop","version":"1.0.0"}})",
     {e("/service/interface: null", kInterface + " (required)")}},
    {R"({"service":5})", {e("/service: 5", "an object")}},
    {R"({"service":{"interface":""}})", {e(R"(/service/interface: "")", kInterface)}},
    {R"({"service":{"interface":"org.example Greeter"}})",
     {e(R"(/service/interface: "org.example Greeter")", kInterface)}},
    {R"({"service":{"interface":"org/example/Greeter"}})",
     {e(R"(/service/interface: "org/example/Greeter")", kInterface)}},
    {R"({"service":{"interface":"Greeter?v=1"}})",
     {e(R"(/service/interface: "Greeter?v=1")", kInterface)}},
    {R"({"service":{"interface":"Greeter\t"}})",
     {e(R"(/service/interface: "Greeter\t")", kInterface)}},
    {R"({"service":{"interface":"i","application":""}})",
     {e(R"(/service/application: "")", "a non-empty name without whitespace")}},
    {R"({"service":{"interface":"i","application":"my shop"}})",
     {e(R"(/service/application: "my shop")", "a non-empty name without whitespace")}},
    {R"({"service":{"interface":"i","version":"1.0 beta"}})",
     {e(R"(/service/version: "1.0 beta")", R"(a string without whitespace ("" = unversioned))")}},
    {R"({"service":{"interface":"i","group":"a b"}})",
     {e(R"(/service/group: "a b")", R"(a string without whitespace ("" = none))")}},
    {R"({"service":{"interface":"i","methods":["ok","a b"]}})",
     {e(R"(/service/methods/1: "a b")", kMethod)}},
    {R"({"service":{"interface":"i","methods":["",",","a,b","x\n",7]}})",
     {e(R"(/service/methods/0: "")", kMethod), e(R"(/service/methods/1: ",")", kMethod),
      e(R"(/service/methods/2: "a,b")", kMethod), e(R"(/service/methods/3: "x\n")", kMethod),
      e("/service/methods/4: 7", kMethod)}},
    {R"({"service":{"interface":"i","methods":"sayHello"}})",
     {e(R"(/service/methods: "sayHello")", "an array of method names")}},
    {R"({"service":{"interface":"i","timeout":1000}})", {e("/service/timeout: 1000", kNoUnit)}},
    {R"({"service":{"interface":"i","timeout":"0ms"}})", {e(R"(/service/timeout: "0ms")", "> 0")}},
    {R"({"service":{"interface":"i","timeout":"-1s"}})",
     {e(R"(/service/timeout: "-1s")", kNegative)}},
    {R"({"service":{"interface":"i","timeout":"1500us"}})",
     {e(R"(/service/timeout: "1500us")",
        "a whole number of milliseconds (the url's default.timeout)")}},
    {R"({"service":{"interface":"i","timeout":"999999ns"}})",
     {e(R"(/service/timeout: "999999ns")",
        "a whole number of milliseconds (the url's default.timeout)")}},
    {R"({"service":{"interface":"i","protocol":""}})", {e(R"(/service/protocol: "")", kScheme)}},
    {R"({"service":{"interface":"i","protocol":"dubbo://"}})",
     {e(R"(/service/protocol: "dubbo://")", kScheme)}},
    {R"({"service":{"interface":"i","protocol":"tri ple"}})",
     {e(R"(/service/protocol: "tri ple")", kScheme)}},
    {R"({"service":{"Interface":"i"}})",
     {e(R"(/service/Interface: "i")",
        "a known key: interface, application, version, group, methods, timeout, protocol"),
      e("/service/interface: null", kInterface + " (required)")}},
    {R"({"service":{"methods":["a b"],"application":"","timeout":"1us"}})",
     {e(R"(/service/methods/0: "a b")", kMethod),
      e(R"(/service/application: "")", "a non-empty name without whitespace"),
      e(R"(/service/timeout: "1us")", "a whole number of milliseconds (the url's default.timeout)"),
      e("/service/interface: null", kInterface + " (required)")}},
    // metrics: the section means an endpoint to serve, so listen is required
    {R"({"metrics":{}})", {e("/metrics/listen: null", kMetricsListen + " (required)")}},
    {R"({"metrics":{"max_connections":8}})",
     {e("/metrics/listen: null", kMetricsListen + " (required)")}},
    {R"({"metrics":"127.0.0.1:9464"})", {e(R"(/metrics: "127.0.0.1:9464")", "an object")}},
    {R"({"metrics":{"listen":"9464"}})", {e(R"(/metrics/listen: "9464")", kMetricsListen)}},
    {R"({"metrics":{"listen":"::1:9464"}})", {e(R"(/metrics/listen: "::1:9464")", kMetricsListen)}},
    {R"({"metrics":{"listen":"127.0.0.1:65536"}})",
     {e(R"(/metrics/listen: "127.0.0.1:65536")", kMetricsListen)}},
    {R"({"metrics":{"listen":9464}})", {e("/metrics/listen: 9464", kMetricsListen)}},
    {R"({"metrics":{"listen":"127.0.0.1:9464","max_header_bytes":255}})",
     {e("/metrics/max_header_bytes: 255", ">= 256")}},
    {R"({"metrics":{"listen":"127.0.0.1:9464","max_header_bytes":"8k"}})",
     {e(R"(/metrics/max_header_bytes: "8k")", "an integer >= 0")}},
    {R"({"metrics":{"listen":"127.0.0.1:9464","request_timeout":0}})",
     {e("/metrics/request_timeout: 0", kNoUnit)}},
    {R"({"metrics":{"listen":"127.0.0.1:9464","request_timeout":"0s"}})",
     {e(R"(/metrics/request_timeout: "0s")", "> 0")}},
    {R"({"metrics":{"listen":"127.0.0.1:9464","request_timeout":"-5s"}})",
     {e(R"(/metrics/request_timeout: "-5s")", kNegative)}},
    {R"({"metrics":{"listen":"127.0.0.1:9464","request_timeout":"1500us"}})",
     {e(R"(/metrics/request_timeout: "1500us")", "a whole number of milliseconds")}},
    {R"({"metrics":{"listen":"127.0.0.1:9464","max_connections":0}})",
     {e("/metrics/max_connections: 0", ">= 1")}},
    {R"({"metrics":{"Listen":"127.0.0.1:9464"}})",
     {e(R"(/metrics/Listen: "127.0.0.1:9464")",
        "a known key: listen, max_header_bytes, request_timeout, max_connections"),
      e("/metrics/listen: null", kMetricsListen + " (required)")}},
    // every bad key of the section at once, values that are no value of the key's type first,
    // then the layer's rules; a bad listen is not reported again as missing
    {R"({"metrics":{"max_connections":0,"listen":"host","request_timeout":"5x"}})",
     {e(R"(/metrics/listen: "host")", kMetricsListen),
      e(R"(/metrics/request_timeout: "5x")", kDuration), e("/metrics/max_connections: 0", ">= 1")}},
    // several errors, in document order; a section's cross-field rules after its fields
    {R"({"wheel":{"tick":"1x"},"log_level":3})",
     {e(R"(/wheel/tick: "1x")", kDuration),
      e("/log_level: 3", R"(one of "debug", "info", "warn", "error", "off")")}},
    {R"({"heartbeat":{"interval":"2m","idle_timeout":"3m","close_timeout":"-1s"}})",
     {e(R"(/heartbeat/close_timeout: "-1s")", kNegative),
      e(R"(/heartbeat/idle_timeout: "3m")", ">= 2 * interval = 4m")}},
    {R"({"log_level":"x","retry":{"p":{"multiplier":0}},"wheel":{"max_pending":"1"}})",
     {e(R"(/log_level: "x")", R"(one of "debug", "info", "warn", "error", "off")"),
      e("/retry/p/multiplier: 0", ">= 1"),
      e(R"(/wheel/max_pending: "1")", "an integer >= 0 (0: unlimited)")}},
};

}  // namespace

TEST_SUITE("config") {

TEST_CASE("bad documents: each gives exactly its expected messages") {
  CHECK(kBad.size() >= 40);
  for (const Bad& bad : kBad) {
    CAPTURE(bad.json);
    CHECK(wbtest::messagesOf(bad.json) == bad.messages);
  }
}

TEST_CASE("bad documents: load throws ConfigErrors whose what() is every message") {
  for (const Bad& bad : kBad) {
    CAPTURE(bad.json);
    std::string joined;
    for (const auto& m : bad.messages) joined += (joined.empty() ? "" : "\n") + m;
    CHECK_THROWS_WITH_AS((void)wheelbeat::config::loadString(bad.json), joined.c_str(),
                         wheelbeat::config::ConfigErrors);
  }
}

}  // TEST_SUITE("config")
