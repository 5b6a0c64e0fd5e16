// The memory a connection costs (the target: <= 4 KB RSS per idle connection at 5 000
// connections). Reads private net/ headers for sizeof; prints the numbers in the test output.
#include "client_channel.h"
#include "server_core.h"
#include "stream.h"
#include "support.h"

namespace wbnet {

TEST_SUITE("net") {

TEST_CASE("a server connection object stays small") {
  using wheelbeat::net::detail::ClientChannel;
  using wheelbeat::net::detail::ServerChannel;
  using wheelbeat::net::detail::Stream;
  const std::size_t server =
      sizeof(ServerChannel) + sizeof(Stream) + sizeof(wheelbeat::tasks::CloseTimerTask);
  MESSAGE("sizeof ServerChannel=", sizeof(ServerChannel), " Stream=", sizeof(Stream),
          " uv_tcp_t=", sizeof(uv_tcp_t), " FrameDecoder=", sizeof(FrameDecoder),
          " CloseTimerTask=", sizeof(wheelbeat::tasks::CloseTimerTask),
          " ClientChannel=", sizeof(ClientChannel), " server total=", server);
  CHECK(server <= 1536);  // plus three make_shared control blocks and one wheel entry
}

TEST_CASE("a client connection object and its tasks") {
  using wheelbeat::net::detail::ClientChannel;
  using wheelbeat::net::detail::Stream;
  using wheelbeat::tasks::HeartbeatTimerTask;
  using wheelbeat::tasks::ReconnectTimerTask;
  // ReconnectTimerTask carries its own RetryState (options and a seeded random engine): most of a
  // client's footprint; the tasks/ layer owns it.
  MESSAGE("sizeof ClientChannel=", sizeof(ClientChannel), " Stream=", sizeof(Stream),
          " HeartbeatTimerTask=", sizeof(HeartbeatTimerTask),
          " ReconnectTimerTask=", sizeof(ReconnectTimerTask));
  CHECK(sizeof(ClientChannel) + sizeof(Stream) <= 1536);
}

}  // TEST_SUITE("net")

}  // namespace wbnet
