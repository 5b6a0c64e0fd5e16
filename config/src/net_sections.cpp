// Sections owned by net/: "loop", "server", "client".
#include "sections.h"

#include <array>

namespace wheelbeat::config::detail {
namespace {

using L = net::LoopOptions;
using S = net::ServerOptions;
using C = net::ClientOptions;

constexpr IntCodec<std::size_t> kPartialBytes{0, kMaxSize,
                                              "an integer >= 0 (bytes; 0 = unlimited)"};
constexpr IntCodec<std::size_t> kIoThreads{0, net::kMaxIoThreads,
                                           "an integer in 0..1024 (0 = one per core)"};

constexpr Field<L> kLoopFields[] = {
    field<L, &L::maxPartialBytes, kPartialBytes>(
        "max_partial_bytes", "maxPartialBytes",
        "Bytes of split frames (bodies still arriving) all channels of one loop may buffer at "
        "once; a channel beyond it is closed. Up to 16 KiB per channel are never charged. 0 = "
        "unlimited."),
    field<L, &L::ioThreads, kIoThreads>(
        "io_threads", "ioThreads",
        "Event loops (threads) of a net::EventLoopGroup built from this section; a single "
        "net::EventLoop ignores it. 0 = one per core (std::thread::hardware_concurrency())."),
};

constexpr IntCodec<std::size_t> kMaxConnections{0, kMaxSize, "an integer >= 0 (0 = unlimited)"};
constexpr auto kBody = [](auto& o) -> auto& { return o.codec.maxBody; };
constexpr std::string_view kBodyText =
    "Largest frame body accepted or sent, in bytes (Dubbo's payload), 1..2147483647.";
constexpr std::string_view kQueueText =
    "Bytes queued per channel but not yet written, at most; >= max_body + 16.";

constexpr Field<S> kServerFields[] = {
    field<S, &S::listen, kEndpoint>("listen", "listen",
                                    "Address to listen on; port 0..65535, 0 = any free port."),
    field<S, &S::backlog, kInt>("backlog", "backlog", "listen(2) backlog, 1..65535."),
    field<S, &S::maxConnections, kMaxConnections>(
        "max_connections", "maxConnections",
        "Connections open at once; one beyond it is accepted and closed at once (Dubbo's "
        "accepts). 0 = unlimited."),
    field<S, &S::shutdownGrace, kDuration>(
        "shutdown_grace", "shutdownGrace",
        "Graceful shutdown: how long requests in flight are waited for after READONLY was sent, "
        ">= 0 (Dubbo: shutdown.wait, 10s)."),
    field<S, kBody, kSize>("max_body", "codec.maxBody", kBodyText),
    field<S, &S::maxSendQueue, kSize>("max_send_queue", "maxSendQueue", kQueueText),
};

constexpr Field<C> kClientFields[] = {
    field<C, &C::server, kEndpoint>("server", "server", "The server to connect to, port 1..65535."),
    field<C, &C::connectTimeout, kDuration>(
        "connect_timeout", "connectTimeout",
        "A connect attempt not completed by then fails with \"timeout\", > 0 (Dubbo: 3s)."),
    field<C, kBody, kSize>("max_body", "codec.maxBody", kBodyText),
    field<C, &C::maxSendQueue, kSize>("max_send_queue", "maxSendQueue", kQueueText),
};

constexpr std::string_view kQueueRule = "max_send_queue >= max_body + 16";

}  // namespace

constexpr Section<L> kLoopSection{kLoopFields};
constexpr Section<S> kServerSection{kServerFields, [](const S& o) { net::validate(o); },
                                    kQueueRule};
constexpr Section<C> kClientSection{kClientFields, [](const C& o) { net::validate(o); },
                                    kQueueRule};

}  // namespace wheelbeat::config::detail
