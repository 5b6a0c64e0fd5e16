// The provider role: a gRPC server (callback API) on 127.0.0.1, port chosen by the kernel.
// Protocol with the driver, over this process's stdin / stdout: it prints "ready PORT" once it
// serves, and "done CALLS MEASURED RETRIED" after its stdin closes (the driver's signal to stop).
#include "echo.grpc.pb.h"
#include "grpc_bench.h"

#include <fmt/format.h>
#include <grpcpp/grpcpp.h>
#include <signal.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <cmath>
#include <condition_variable>
#include <cstdio>
#include <memory>
#include <mutex>
#include <thread>

namespace wheelbeat::bench::grpcbench {
namespace {

// Finishes reactors at a later time, from its own thread, so a slow answer blocks nothing: the
// server's threads go on with other calls meanwhile.
class Delayer {
public:
  Delayer() : thread_([this] { run(); }) {}
  ~Delayer() { stop(); }
  Delayer(const Delayer&) = delete;
  Delayer& operator=(const Delayer&) = delete;

  // Thread: any (the server's). After stop(), the reactor is finished at once.
  void finishAt(Clock::time_point when, grpc::ServerUnaryReactor* reactor) {
    {
      std::lock_guard lock(mutex_);
      if (!stopping_) {
        due_.emplace(when, reactor);
        cv_.notify_one();
        return;
      }
    }
    reactor->Finish(grpc::Status::OK);
  }

  // Finishes whatever waits, now, and joins the thread. Idempotent.
  void stop() {
    {
      std::lock_guard lock(mutex_);
      stopping_ = true;
      cv_.notify_one();
    }
    if (thread_.joinable()) thread_.join();
  }

private:
  void run() {
    std::unique_lock lock(mutex_);
    while (true) {
      if (!due_.empty() && (stopping_ || due_.begin()->first <= Clock::now())) {
        grpc::ServerUnaryReactor* reactor = due_.begin()->second;
        due_.erase(due_.begin());
        lock.unlock();
        reactor->Finish(grpc::Status::OK);
        lock.lock();
      } else if (stopping_) {
        return;
      } else if (due_.empty()) {
        cv_.wait(lock);
      } else {
        cv_.wait_until(lock, due_.begin()->first);
      }
    }
  }

  std::mutex mutex_;
  std::condition_variable cv_;
  std::multimap<Clock::time_point, grpc::ServerUnaryReactor*> due_;
  bool stopping_ = false;
  std::thread thread_;  // last: starts once the rest is built
};

class EchoProvider final : public EchoService::CallbackService {
public:
  explicit EchoProvider(const ProviderOptions& o) : options_(o) {}

  grpc::ServerUnaryReactor* Echo(grpc::CallbackServerContext* context, const EchoMessage* request,
                                 EchoMessage* response) override {
    const std::uint64_t i = calls_.fetch_add(1, std::memory_order_relaxed);
    if (request->measured()) {
      measured_.fetch_add(1, std::memory_order_relaxed);
      // gRPC's retry filter sends this header on every attempt after the first.
      if (context->client_metadata().count("grpc-previous-rpc-attempts") > 0) {
        retried_.fetch_add(1, std::memory_order_relaxed);
      }
    }
    grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
    if (failsCall(i)) {
      reactor->Finish(grpc::Status(grpc::StatusCode::UNAVAILABLE, "injected failure"));
      return reactor;
    }
    response->set_payload(request->payload());
    const int every = options_.slowEvery;
    if (every > 0 && (i + 1) % static_cast<std::uint64_t>(every) == 0) {
      delayer_.finishAt(Clock::now() + std::chrono::milliseconds(options_.slowMs), reactor);
      return reactor;
    }
    reactor->Finish(grpc::Status::OK);
    return reactor;
  }

  void stop() { delayer_.stop(); }
  [[nodiscard]] ProviderCounts counts() const {
    return {calls_.load(), measured_.load(), retried_.load()};
  }

private:
  // Call i fails iff floor((i+1)F) > floor(iF): exactly floor(nF) of the first n calls, spread
  // evenly, the same on every run.
  [[nodiscard]] bool failsCall(std::uint64_t i) const {
    const double f = options_.errorFraction;
    if (f <= 0) return false;
    return std::floor(static_cast<double>(i + 1) * f) > std::floor(static_cast<double>(i) * f);
  }

  ProviderOptions options_;
  std::atomic<std::uint64_t> calls_{0};
  std::atomic<std::uint64_t> measured_{0};
  std::atomic<std::uint64_t> retried_{0};
  Delayer delayer_;
};

// Blocks until stdin reaches EOF (or fails): the driver closed it, or died.
void waitForStdinEof() {
  char buf[256];
  while (true) {
    const ssize_t n = ::read(STDIN_FILENO, buf, sizeof buf);
    if (n == 0 || (n < 0 && errno != EINTR)) return;
  }
}

}  // namespace

int providerMain(const ProviderOptions& options) {
  // Never outlive the driver: killed with it, and gone at once if it is already gone.
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (::getppid() != static_cast<pid_t>(options.parentPid)) return 1;
  // Ctrl-C reaches the whole process group: the driver decides when a provider stops.
  ::signal(SIGINT, SIG_IGN);

  EchoProvider service(options);
  int port = 0;
  grpc::ServerBuilder builder;
  builder.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(), &port);
  builder.RegisterService(&service);
  std::unique_ptr<grpc::Server> server = builder.BuildAndStart();
  if (!server || port == 0) {
    fmt::print(stderr, "wheelbeat_grpc_bench: provider {}: cannot serve on 127.0.0.1\n",
               options.index);
    return 1;
  }
  fmt::print("ready {}\n", port);
  std::fflush(stdout);
  waitForStdinEof();
  service.stop();  // slow answers still waiting go now: nothing is left for Shutdown to cancel
  server->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(1));
  server->Wait();
  const ProviderCounts c = service.counts();
  fmt::print("done {} {} {}\n", c.calls, c.measured, c.retried);
  std::fflush(stdout);
  return 0;
}

}  // namespace wheelbeat::bench::grpcbench
