// The Directory's thread contract (directory.h): its events run on its own loop thread even when
// the registry it follows lives on another loop (a runtime with several io threads puts the
// registry and a service's directory on different loops), so what an event touches needs no lock.
#include "directory_rig.h"

#include <wheelbeat/registry/directory.h>

#include <atomic>
#include <string>

using namespace wbdir;

TEST_SUITE("registry") {

TEST_CASE("directory: a registry on another loop - every event on the directory's loop thread") {
  Env env;
  EventLoop registryLoop("wb-registry-loop");
  RegistryServer registry(env.loop, env.timer, serverOptions());
  const auto port = registry.start();
  TcpServer provider(env.loop, env.timer, serverOptions(), ChannelHandler{});
  const auto providerPort = provider.listen();
  auto providerReg = embedded(env, port);
  auto consumerReg = makeRegistry(registryLoop, env.timer, setupAt(port));
  consumerReg->start();

  DirectoryOptions options = fastDirectory();
  options.emptyProtection = false;  // the provider's leaving is applied at once
  std::atomic<int> lists{0};
  std::atomic<int> connects{0};
  std::atomic<int> offLoop{0};
  auto onLoop = [&] { offLoop += env.loop.isLoopThread() ? 0 : 1; };
  Directory directory(env.loop, env.timer, *consumerReg, kService, options, {},
                      DirectoryEvents{.onList =
                                          [&](const std::vector<std::string>&) {
                                            onLoop();
                                            ++lists;
                                          },
                                      .onConnected =
                                          [&](const std::string&, Channel&) {
                                            onLoop();
                                            ++connects;
                                          }});
  directory.start();
  providerReg->registerUrl(providerUrl(providerPort));
  REQUIRE(waitFor([&] { return connects == 1; }, 5s));
  providerReg->unregisterUrl(providerUrl(providerPort));
  REQUIRE(waitFor([&] { return lists == 2; }, 5s));
  CHECK(offLoop == 0);
  CHECK(directory.providers().empty());
  CHECK(directory.stats().notifications >= 2);

  directory.close();
  provider.stop();
  providerReg->close();
  consumerReg->close();
  registry.stop();
  CHECK(registryLoop.stop() == 0);
}
}  // TEST_SUITE("registry")
