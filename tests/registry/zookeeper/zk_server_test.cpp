// The test ZooKeeper itself: it serves, stops, restarts on the same port with or without its
// data, and leaves nothing behind.
#include "zk_server.h"

#include <doctest/doctest.h>

#include <filesystem>

TEST_SUITE("zookeeper") {

TEST_CASE("the test server starts stops restarts and cleans up") {
  std::string dir;
  {
    wbzk::ZkServer server;
    dir = server.dir();
    MESSAGE("ZooKeeper start: " << server.lastStartTime().count() << " ms on port "
                                << server.port());
    CHECK(server.fourLetter("ruok") == "imok");
    CHECK(server.fourLetter("srvr").find("Mode: standalone") != std::string::npos);
    CHECK(std::filesystem::exists(std::filesystem::path(dir) / "zoo.cfg"));

    server.stop();
    CHECK_FALSE(server.running());
    CHECK(server.fourLetter("ruok").empty());

    REQUIRE(server.restart(false));
    CHECK(server.fourLetter("ruok") == "imok");
    MESSAGE("restart keeping data: " << server.lastStartTime().count() << " ms");
    REQUIRE(server.restart(true));
    CHECK(server.fourLetter("ruok") == "imok");
    MESSAGE("restart wiping data: " << server.lastStartTime().count() << " ms");
    CHECK(server.hosts() == "127.0.0.1:" + std::to_string(server.port()));
  }
  CHECK_FALSE(std::filesystem::exists(dir));
}

}  // TEST_SUITE("zookeeper")
