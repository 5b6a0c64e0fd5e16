// wheelbeat_soak: churn for a long time and show that nothing grows (`make soak`, not in CI).
//
//   wheelbeat_soak [--minutes M] [--connections N] [--warmup-minutes W] [--sample-seconds S]
//                  [--tolerance F]
//
// One process holds a TcpServer, N TcpClients to it (heartbeat 1 s), an embedded RegistryServer
// with a provider Registry (20 urls) and a consumer Registry (subscribed), all on one wheel and two
// event loops. Every 1-4 s (random, seeded) one fault strikes:
//   churn         5 % of the clients closed and replaced by new ones
//   server        the TcpServer stopped and started again on the same port (every client
//                 reconnects with backoff)
//   registry      the RegistryServer destroyed and recreated on the same port (failback and
//                 recover() bring every registration and subscription back)
//   garbage       a raw peer sends bytes that are not a frame (closed: protocol)
//   partial       a raw peer announces 8 MiB, sends 200 KiB and goes away (budget charged,
//   released) stall         the server's loop is held busy for 300 ms (the idle checks must not
//   misfire)
// Every sample period the faults pause, the process waits until every client is connected and the
// consumer sees every url again (bounded: 30 s), then prints one JSON line:
//   {"minute":…,"rss_kib":…,"fds":…,"pending_timeouts":…,"connected":…,"registry_urls":…,
//    "faults":{…}}
// After the run: every sample after the warm-up must lie within ±5 % (--tolerance) of the first one
// after it
// (RSS, fds, pending timeouts); a last line {"result":"flat"|"grew",…}; exit status 0 / 1 (3: a
// sample could not reach the quiet state, 2: bad arguments, as every wheelbeat program).
#include "command_line.h"

#include <wheelbeat/core/hashed_wheel_timer.h>
#include <wheelbeat/net/net.h>
#include <wheelbeat/registry/registry.h>
#include <wheelbeat/registry/registry_server.h>

#include <arpa/inet.h>
#include <fmt/format.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <thread>
#include <vector>

using namespace wheelbeat;
using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

namespace {

struct Args {
  double minutes = 60;
  int connections = 2000;
  double warmupMinutes = 2;
  double sampleSeconds = 60;
  double tolerance = 0.05;  // allowed drift after the warm-up, as a fraction of the first sample
};

constexpr const char* kSynopsis =
    "usage: wheelbeat_soak [--minutes M] [--connections N] [--warmup-minutes W]\n"
    "                      [--sample-seconds S] [--tolerance F]\n"
    "       wheelbeat_soak --help | --version";

constexpr const char* kDescription =
    "Churn, faults and flat resource figures: N clients, a server and an embedded registry on\n"
    "one wheel, a random fault every 1-4 s, one JSON line per sample period, a verdict line.\n"
    "Exit status: 0 flat, 1 grew, 3 a sample could not reach the quiet state, 2 bad usage.";

constexpr const char* kExamples =
    "  wheelbeat_soak --minutes 60 --connections 2000\n"
    "  wheelbeat_soak --minutes=0.67 --connections 100 --warmup-minutes 0.15 --sample-seconds 10 "
    "--tolerance 0.5\n";

// Bad arguments exit 2, as every wheelbeat program's; "no quiet state" is 3.
constexpr int kBadUsage = wheelbeat::cli::kBadUsage;
constexpr int kNoQuietState = 3;

void addOptions(wheelbeat::cli::App& app, Args& a) {
  app.add_option("--minutes", a.minutes, "how long to churn")
      ->type_name("M")
      ->check(wheelbeat::cli::positiveNumber().description(""))
      ->capture_default_str();
  app.add_option("--connections", a.connections, "clients (two descriptors each: at most 8000)")
      ->type_name("N")
      ->check(wheelbeat::cli::range(1, 8000).description(""))
      ->capture_default_str();
  app.add_option("--warmup-minutes", a.warmupMinutes, "samples before this are not judged")
      ->type_name("W")
      ->check(wheelbeat::cli::positiveNumber().description(""))
      ->capture_default_str();
  app.add_option("--sample-seconds", a.sampleSeconds, "one sample line per period")
      ->type_name("S")
      ->check(wheelbeat::cli::positiveNumber().description(""))
      ->capture_default_str();
  app.add_option("--tolerance", a.tolerance,
                 "allowed drift after the warm-up, a fraction of the first judged sample")
      ->type_name("F")
      ->check(wheelbeat::cli::positiveNumber().description(""))
      ->capture_default_str();
}

std::size_t rssKib() {
  std::ifstream statm("/proc/self/statm");
  std::size_t pages = 0;
  std::size_t resident = 0;
  statm >> pages >> resident;
  return resident * static_cast<std::size_t>(sysconf(_SC_PAGESIZE)) / 1024;
}

std::size_t openFds() {
  std::size_t n = 0;
  for ([[maybe_unused]] const auto& e : std::filesystem::directory_iterator("/proc/self/fd")) ++n;
  return n;
}

net::ClientOptions clientOptions(std::uint16_t port) {
  net::ClientOptions o;
  o.server = {"127.0.0.1", port};
  o.connectTimeout = 1s;
  o.heartbeat.interval = 1s;
  o.heartbeat.reconnect.initialDelay = 100ms;
  o.heartbeat.reconnect.maxDelay = 1s;
  return o;
}

// A raw loopback peer that sends `bytes` and closes.
void rawPeer(std::uint16_t port, const std::string& bytes) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(port);
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd, reinterpret_cast<const sockaddr*>(&a), sizeof a) == 0) {
    (void)::send(fd, bytes.data(), bytes.size(), MSG_NOSIGNAL);
  }
  ::close(fd);
}

std::string partialFrame() {
  std::string f;
  net::encodeFrame(f, net::flag::kRequest | net::flag::kTwoWay | net::kHessian2, 0, 1,
                   std::string(200 << 10, 'p'));
  f[12] = 0;
  f[13] = static_cast<char>(0x80);  // announce 8 MiB (0x00800000) instead of 200 KiB
  f[14] = 0;
  f[15] = 0;
  return f;
}

struct Counter final : registry::NotifyListener {
  void notify(const std::string&, const std::vector<std::string>& urls) override {
    count.store(urls.size());
  }
  std::atomic<std::size_t> count{0};
};

class Soak {
public:
  explicit Soak(const Args& args) : args_(args), rng_(20261123) {}

  int run() {
    startServer(0);
    startRegistry(0);
    for (int i = 0; i < args_.connections; ++i) addClient();
    const Clock::time_point end =
        Clock::now() + std::chrono::duration_cast<Clock::duration>(
                           std::chrono::duration<double, std::ratio<60>>(args_.minutes));
    const auto period = std::chrono::duration<double>(args_.sampleSeconds);
    std::vector<Sample> samples;
    int minute = 0;
    while (Clock::now() < end) {
      const auto sampleAt = std::min<Clock::time_point>(
          Clock::now() + std::chrono::duration_cast<Clock::duration>(period), end);
      while (Clock::now() < sampleAt) strikeAndWait(sampleAt);
      if (!quiet()) {
        fmt::print("{{\"result\":\"error\",\"why\":\"not quiet within 30 s after the faults\"}}\n");
        return kNoQuietState;
      }
      samples.push_back(sample(++minute));
    }
    return verdict(samples);
  }

  ~Soak() {
    for (auto& c : clients_) c->close();
    clients_.clear();
    if (consumer_) consumer_->close();
    if (provider_) provider_->close();
    if (registryServer_) registryServer_->stop();
    if (server_) server_->stop();
  }

private:
  struct Sample {
    double minute;
    std::size_t rss, fds, pending;
  };

  void startServer(std::uint16_t port) {
    net::ServerOptions so;
    so.listen = {"127.0.0.1", port};
    so.heartbeat.interval = 1s;
    server_ = std::make_unique<net::TcpServer>(serverLoop_, timer_, so, net::ChannelHandler{});
    port_ = server_->listen();
  }

  void startRegistry(std::uint16_t port) {
    net::ServerOptions ro;
    ro.listen = {"127.0.0.1", port};
    ro.heartbeat.interval = 1s;
    registryServer_ = std::make_unique<registry::RegistryServer>(serverLoop_, timer_, ro);
    registryPort_ = registryServer_->start();
    if (provider_) return;  // restarted: the registries reconnect and recover by themselves
    registry::RegistrySetup setup;
    setup.registry.address = {"127.0.0.1", registryPort_};
    setup.client = clientOptions(registryPort_);
    setup.failback.check = false;
    setup.failback.registryRetry.initialDelay = 200ms;
    setup.failback.registryRetry.maxDelay = 200ms;
    provider_ = registry::makeRegistry(clientLoop_, timer_, setup);
    consumer_ = registry::makeRegistry(clientLoop_, timer_, setup);
    provider_->start();
    consumer_->start();
    for (int i = 0; i < kUrls; ++i) {
      provider_->registerUrl(fmt::format("wheelbeat://127.0.0.1:{}/soak", 30000 + i));
    }
    consumer_->subscribe("soak", counter_);
  }

  void addClient() {
    auto c = std::make_unique<net::TcpClient>(clientLoop_, timer_, clientOptions(port_),
                                              net::ChannelHandler{});
    c->start();
    clients_.push_back(std::move(c));
  }

  void strikeAndWait(Clock::time_point until) {
    const int kind = std::uniform_int_distribution<int>(0, 5)(rng_);
    switch (kind) {
      case 0: churn(); break;
      case 1:
        server_->stop();
        server_.reset();
        startServer(port_);
        break;
      case 2:
        registryServer_->stop();
        registryServer_.reset();
        startRegistry(registryPort_);
        break;
      case 3: rawPeer(port_, "GET / HTTP/1.1\r\nHost: soak\r\n\r\n"); break;
      case 4: rawPeer(port_, partialFrame()); break;
      default:
        serverLoop_.post([] { std::this_thread::sleep_for(300ms); });  // a deliberate stall
        break;
    }
    ++faults_[kNames[kind]];
    const auto pause =
        std::chrono::milliseconds(std::uniform_int_distribution<int>(1000, 4000)(rng_));
    std::this_thread::sleep_for(std::min<Clock::duration>(pause, until - Clock::now()));
  }

  void churn() {
    const std::size_t n = std::max<std::size_t>(1, clients_.size() / 20);
    for (std::size_t i = 0; i < n; ++i) {
      const std::size_t at =
          std::uniform_int_distribution<std::size_t>(0, clients_.size() - 1)(rng_);
      clients_[at]->close();
      clients_.erase(clients_.begin() + static_cast<std::ptrdiff_t>(at));
      addClient();
    }
  }

  // Every client connected, the server holding exactly those channels, the consumer seeing every
  // url: the state every sample is taken in, so that samples compare like with like.
  bool quiet() {
    const auto deadline = Clock::now() + 30s;
    while (Clock::now() < deadline) {
      const auto up = connected();
      if (up == clients_.size() && server_->connections() == clients_.size() &&
          counter_->count.load() == static_cast<std::size_t>(kUrls) && provider_->isConnected() &&
          consumer_->isConnected() && registryServer_->sessions() == 2 &&
          provider_->failback().pendingRetryCount() == 0 &&
          consumer_->failback().pendingRetryCount() == 0) {
        return true;
      }
      std::this_thread::sleep_for(50ms);  // polling a condition, bounded by the deadline
    }
    return false;
  }

  std::size_t connected() const {
    return static_cast<std::size_t>(
        std::count_if(clients_.begin(), clients_.end(),
                      [](const auto& c) { return c->state() == net::ClientState::Connected; }));
  }

  Sample sample(int minute) {
    (void)minute;
    const double elapsed =
        std::chrono::duration<double, std::ratio<60>>(Clock::now() - start_).count();
    const Sample s{elapsed, rssKib(), openFds(), timer_.pendingTimeouts()};
    std::string faults;
    for (const auto& [name, n] : faults_) {
      faults += fmt::format("{}\"{}\":{}", faults.empty() ? "" : ",", name, n);
    }
    fmt::print(
        "{{\"minute\":{:.2f},\"rss_kib\":{},\"fds\":{},\"pending_timeouts\":{},\"connected\":{},"
        "\"registry_urls\":{},\"faults\":{{{}}}}}\n",
        s.minute, s.rss, s.fds, s.pending, connected(), counter_->count.load(), faults);
    std::fflush(stdout);
    return s;
  }

  int verdict(const std::vector<Sample>& samples) const {
    std::vector<Sample> after;
    for (const auto& s : samples) {
      if (s.minute > args_.warmupMinutes) after.push_back(s);
    }
    if (after.size() < 2) {
      fmt::print("{{\"result\":\"too-short\",\"samples_after_warmup\":{}}}\n", after.size());
      return 1;
    }
    double worst = 0;
    const auto drift = [&](std::size_t base, std::size_t v) {
      const double d = std::abs(static_cast<double>(v) - static_cast<double>(base)) /
                       static_cast<double>(std::max<std::size_t>(base, 1));
      worst = std::max(worst, d);
    };
    for (const auto& s : after) {
      drift(after.front().rss, s.rss);
      drift(after.front().fds, s.fds);
      drift(after.front().pending, s.pending);
    }
    const bool flat = worst <= args_.tolerance;
    fmt::print(
        "{{\"result\":\"{}\",\"worst_drift\":{:.4f},\"rss_kib\":[{},{}],\"fds\":[{},{}],"
        "\"pending_timeouts\":[{},{}]}}\n",
        flat ? "flat" : "grew", worst, after.front().rss, after.back().rss, after.front().fds,
        after.back().fds, after.front().pending, after.back().pending);
    return flat ? 0 : 1;
  }

  static constexpr int kUrls = 20;
  static constexpr std::array<const char*, 6> kNames{"churn",   "server",  "registry",
                                                     "garbage", "partial", "stall"};

  const Args args_;
  std::mt19937_64 rng_;
  core::HashedWheelTimer timer_;
  net::EventLoop serverLoop_{"soak-server"};
  net::EventLoop clientLoop_{"soak-clients"};
  std::unique_ptr<net::TcpServer> server_;
  std::unique_ptr<registry::RegistryServer> registryServer_;
  std::unique_ptr<registry::Registry> provider_;
  std::unique_ptr<registry::Registry> consumer_;
  std::shared_ptr<Counter> counter_ = std::make_shared<Counter>();
  std::vector<std::unique_ptr<net::TcpClient>> clients_;
  std::uint16_t port_ = 0;
  std::uint16_t registryPort_ = 0;
  std::map<std::string, std::uint64_t> faults_;
  const Clock::time_point start_ = Clock::now();
};

}  // namespace

int main(int argc, char** argv) {
  wheelbeat::cli::CommandLine cmd("wheelbeat_soak", kSynopsis, kDescription, kExamples, true,
                                  kBadUsage);
  Args args;
  addOptions(cmd.app(), args);
  if (const auto status = cmd.parse(argc, argv)) return *status;
  Soak soak(args);
  return soak.run();
}
