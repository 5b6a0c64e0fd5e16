// Real time (Drive::Thread, steady clock): FailbackRegistry used from several threads while a
// backend thread completes calls (every third one failing) and the wheel thread runs retries.
// Per key, the last call wins: once the backend is healthy, nothing is pending and the backend
// holds exactly the wanted registrations.
#include "fake_backend.h"

#include <doctest/doctest.h>

#include <atomic>
#include <condition_variable>
#include <deque>
#include <thread>

using namespace wbtest;

namespace {

// Completes calls in order on its own thread; while `flaky`, every third call fails.
class ThreadedBackend final : public RegistryBackend {
public:
  ThreadedBackend() : worker_([this] { loop(); }) {}
  ~ThreadedBackend() override {
    {
      std::lock_guard lock(mutex_);
      quit_ = true;
    }
    cv_.notify_one();
    worker_.join();
  }
  void doRegister(const std::string& url, Completion done) override {
    push([this, url] { urls_.insert(url); }, std::move(done));
  }
  void doUnregister(const std::string& url, Completion done) override {
    push([this, url] { urls_.erase(url); }, std::move(done));
  }
  void doSubscribe(const std::string&, std::shared_ptr<NotifyListener>, Completion done) override {
    push([] {}, std::move(done));
  }
  void doUnsubscribe(const std::string&, std::shared_ptr<NotifyListener>,
                     Completion done) override {
    push([] {}, std::move(done));
  }
  // Waits until every queued call has completed. The registry shares ownership of the backend
  // and a completion in flight holds the registry's state, so without this the last reference
  // could be dropped on the worker thread, whose destructor would then join itself.
  void drain() {
    std::unique_lock lock(mutex_);
    idle_.wait(lock, [this] { return jobs_.empty() && !busy_; });
  }
  std::atomic<bool> flaky{true};
  std::set<std::string> urls() {
    std::lock_guard lock(mutex_);
    return urls_;
  }

private:
  struct Job {
    std::function<void()> apply;
    Completion done;
  };
  void push(std::function<void()> apply, Completion done) {
    {
      std::lock_guard lock(mutex_);
      jobs_.push_back({std::move(apply), std::move(done)});
    }
    cv_.notify_one();
  }
  void loop() {
    std::unique_lock lock(mutex_);
    for (;;) {
      cv_.wait(lock, [this] { return quit_ || !jobs_.empty(); });
      if (jobs_.empty()) return;
      Job job = std::move(jobs_.front());
      jobs_.pop_front();
      const bool fail = flaky.load() && (++n_ % 3 == 0);
      if (!fail) job.apply();
      busy_ = true;
      lock.unlock();
      job.done(fail ? down() : CallResult::success());
      job = Job{};  // drop the completion (and the registry state it holds) before reporting idle
      lock.lock();
      busy_ = false;
      if (jobs_.empty()) idle_.notify_all();
    }
  }

  std::mutex mutex_;
  std::condition_variable cv_;
  std::condition_variable idle_;
  std::deque<Job> jobs_;
  bool busy_ = false;
  std::set<std::string> urls_;
  std::uint64_t n_ = 0;
  bool quit_ = false;
  std::thread worker_;
};

template <typename Pred>
bool eventually(Pred done) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (!done()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return true;
}

}  // namespace

TEST_SUITE("registry") {

TEST_CASE("failback registry: concurrent callers and a flaky threaded backend converge") {
  WheelOptions wheel;
  wheel.tickDuration = std::chrono::milliseconds(1);
  wheel.ticksPerWheel = 64;
  HashedWheelTimer timer(wheel);
  auto backend = std::make_shared<ThreadedBackend>();
  FailbackOptions o;
  o.check = false;
  o.registryRetry.initialDelay = std::chrono::milliseconds(2);
  o.registryRetry.maxDelay = std::chrono::milliseconds(2);
  FailbackRegistry registry(timer, backend, o, nullptr, nullptr, nullptr, 1);
  constexpr int kThreads = 4;
  constexpr int kRounds = 300;
  std::vector<std::thread> callers;
  for (int t = 0; t < kThreads; ++t) {
    callers.emplace_back([&registry, t] {
      const std::string mine = fmt::format("k{}", t);
      for (int i = 0; i < kRounds; ++i) {
        registry.unregisterUrl(mine);
        registry.registerUrl(mine);  // each thread ends on register
        if (i % 50 == 0) registry.recover();
      }
    });
  }
  for (auto& c : callers) c.join();
  backend->flaky.store(false);
  REQUIRE(eventually([&] { return registry.pendingRetryCount() == 0; }));
  // The wanted state and the backend agree once the last retries landed.
  REQUIRE(eventually([&] { return backend->urls().size() == kThreads; }));
  CHECK(backend->urls() == std::set<std::string>{"k0", "k1", "k2", "k3"});
  CHECK(registry.registered() == std::vector<std::string>{"k0", "k1", "k2", "k3"});
  registry.stop();
  timer.stop();      // no retry can hand the backend a call any more
  backend->drain();  // and none is in flight: the registry's state dies on this thread
}

}  // TEST_SUITE("registry")
