// The consumer: one channel over every provider, calls scheduled at fixed intervals (open loop),
// each sent with the callback API so that nothing waits for an answer before the next call.
#include "echo.grpc.pb.h"
#include "grpc_bench.h"

#include <fmt/format.h>
#include <grpcpp/grpcpp.h>
#include <sys/resource.h>
#include <time.h>

#include <algorithm>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <thread>

namespace wheelbeat::bench::grpcbench {
namespace {

std::int64_t processCpuUs() {
  rusage u{};
  ::getrusage(RUSAGE_SELF, &u);
  return (u.ru_utime.tv_sec + u.ru_stime.tv_sec) * 1'000'000LL + u.ru_utime.tv_usec +
         u.ru_stime.tv_usec;
}

const char* statusName(grpc::StatusCode code) {
  switch (code) {
    case grpc::StatusCode::OK: return "OK";
    case grpc::StatusCode::CANCELLED: return "CANCELLED";
    case grpc::StatusCode::UNKNOWN: return "UNKNOWN";
    case grpc::StatusCode::INVALID_ARGUMENT: return "INVALID_ARGUMENT";
    case grpc::StatusCode::DEADLINE_EXCEEDED: return "DEADLINE_EXCEEDED";
    case grpc::StatusCode::NOT_FOUND: return "NOT_FOUND";
    case grpc::StatusCode::ALREADY_EXISTS: return "ALREADY_EXISTS";
    case grpc::StatusCode::PERMISSION_DENIED: return "PERMISSION_DENIED";
    case grpc::StatusCode::RESOURCE_EXHAUSTED: return "RESOURCE_EXHAUSTED";
    case grpc::StatusCode::FAILED_PRECONDITION: return "FAILED_PRECONDITION";
    case grpc::StatusCode::ABORTED: return "ABORTED";
    case grpc::StatusCode::OUT_OF_RANGE: return "OUT_OF_RANGE";
    case grpc::StatusCode::UNIMPLEMENTED: return "UNIMPLEMENTED";
    case grpc::StatusCode::INTERNAL: return "INTERNAL";
    case grpc::StatusCode::UNAVAILABLE: return "UNAVAILABLE";
    case grpc::StatusCode::DATA_LOSS: return "DATA_LOSS";
    case grpc::StatusCode::UNAUTHENTICATED: return "UNAUTHENTICATED";
    default: return "UNKNOWN";
  }
}

// Every call's outcome, written by gRPC's threads (each call its own slot) and read by the main
// thread once `ended` reached the total (the mutex orders the two).
class Outcomes {
public:
  explicit Outcomes(std::uint64_t total) : latencyUs_(total), code_(total) {}

  // Thread: gRPC's callback threads.
  void record(std::uint64_t index, std::int64_t latencyUs, grpc::StatusCode code) {
    latencyUs_[index] = latencyUs;
    code_[index] = code;
    std::lock_guard lock(mutex_);
    if (++ended_ == latencyUs_.size()) cv_.notify_all();
  }

  // Waits until the `count` calls sent have all ended (a call that was never sent leaves its slot
  // empty: the wait polls rather than relying on the last record's notification).
  void awaitEnded(std::uint64_t count, Clock::time_point limit) {
    std::unique_lock lock(mutex_);
    while (ended_ < count) {
      if (Clock::now() >= limit) {
        throw std::runtime_error(
            fmt::format("{} of {} calls still open past their deadline", count - ended_, count));
      }
      cv_.wait_for(lock, std::chrono::milliseconds(50));
    }
  }

  const std::vector<std::int64_t>& latencyUs() const { return latencyUs_; }
  const std::vector<grpc::StatusCode>& codes() const { return code_; }

private:
  std::vector<std::int64_t> latencyUs_;
  std::vector<grpc::StatusCode> code_;
  std::mutex mutex_;
  std::condition_variable cv_;
  std::uint64_t ended_ = 0;
};

// One call in flight: what gRPC needs alive until its callback.
struct Call {
  grpc::ClientContext context;
  EchoMessage request;
  EchoMessage response;
};

std::shared_ptr<grpc::Channel> connect(const ConsumerPlan& plan) {
  grpc::ChannelArguments args;
  args.SetServiceConfigJSON(plan.serviceConfig);
  // perAttemptRecvTimeout is parsed only with this argument set (gRPC 1.51's retry filter).
  if (plan.enableHedgingArg) args.SetInt(GRPC_ARG_EXPERIMENTAL_ENABLE_HEDGING, 1);
  auto channel = grpc::CreateCustomChannel(plan.target, grpc::InsecureChannelCredentials(), args);
  const auto limit = Clock::now() + std::chrono::seconds(10);
  while (!channel->WaitForConnected(std::chrono::system_clock::now() +
                                    std::chrono::milliseconds(100))) {
    if (interrupted()) throw std::runtime_error("interrupted");
    if (Clock::now() >= limit) {
      throw std::runtime_error(
          fmt::format("the channel to {} did not connect within 10 s (state {})", plan.target,
                      static_cast<int>(channel->GetState(false))));
    }
  }
  return channel;
}

// Sleeps until `t` (absolute, CLOCK_MONOTONIC, which steady_clock reads on Linux), in steps of at
// most 100 ms so that a signal caught by another thread is noticed soon.
void sleepUntil(Clock::time_point t) {
  while (!interrupted()) {
    const auto now = Clock::now();
    if (now >= t) return;
    const auto ns = std::min(t, now + std::chrono::milliseconds(100)).time_since_epoch().count();
    timespec ts{static_cast<time_t>(ns / 1'000'000'000), static_cast<long>(ns % 1'000'000'000)};
    ::clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, nullptr);
  }
}

ConsumerResult summarise(const ConsumerPlan& plan, const Outcomes& outcomes, std::int64_t cpuUs) {
  ConsumerResult r;
  r.cpuUs = cpuUs;
  r.latencyUs.reserve(plan.measuredCalls);
  for (std::uint64_t i = plan.warmupCalls; i < plan.warmupCalls + plan.measuredCalls; ++i) {
    r.latencyUs.push_back(outcomes.latencyUs()[i]);
    const grpc::StatusCode code = outcomes.codes()[i];
    if (code == grpc::StatusCode::OK) {
      ++r.ok;
    } else {
      ++r.failedBy[statusName(code)];
    }
  }
  return r;
}

}  // namespace

ConsumerResult runConsumer(const ConsumerPlan& plan,
                           const std::function<void(Clock::time_point)>& onStart) {
  const auto channel = connect(plan);
  const auto start = Clock::now() + std::chrono::milliseconds(20);
  onStart(start);
  auto stub = EchoService::NewStub(channel);
  const std::uint64_t total = plan.warmupCalls + plan.measuredCalls;
  Outcomes outcomes(total);
  const std::string payload(static_cast<std::size_t>(plan.payload), 'x');
  const auto interval = std::chrono::duration<double>(1.0 / plan.rate);
  const auto deadline = std::chrono::milliseconds(plan.deadlineMs);
  std::int64_t cpuAtWindow = 0;
  std::uint64_t sent = 0;
  for (; sent < total && !interrupted(); ++sent) {
    const auto due = start + std::chrono::duration_cast<Clock::duration>(interval * sent);
    sleepUntil(due);
    if (sent == plan.warmupCalls) cpuAtWindow = processCpuUs();
    auto* call = new Call;
    call->request.set_payload(payload);
    call->request.set_measured(sent >= plan.warmupCalls);
    call->context.set_deadline(std::chrono::system_clock::now() + deadline);
    stub->async()->Echo(
        &call->context, &call->request, &call->response,
        [call, due, sent, &outcomes](grpc::Status status) {
          const auto latency = Clock::now() - due;
          delete call;
          outcomes.record(sent,
                          std::chrono::duration_cast<std::chrono::microseconds>(latency).count(),
                          status.error_code());
        });
  }
  // Every call sent ends by its deadline (plus the client's own lag): wait for them all before
  // the channel and `outcomes` go.
  outcomes.awaitEnded(sent, Clock::now() + deadline + std::chrono::seconds(30));
  if (sent < total) throw std::runtime_error("interrupted");
  return summarise(plan, outcomes, processCpuUs() - cpuAtWindow);
}

}  // namespace wheelbeat::bench::grpcbench
