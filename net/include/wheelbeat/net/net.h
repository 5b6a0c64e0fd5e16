// wheelbeat::net — the libuv layer: an event loop on its own thread (EventLoop), TCP channels
// (Channel) driven by the heartbeat / reconnect / close-idle tasks on the shared wheel, a server
// (TcpServer), a self-healing client (TcpClient), request/response correlation
// (Channel::request), and the Dubbo-2 exchange codec. Only net/'s sources include <uv.h>: these
// headers do not, so users need no libuv headers.
#pragma once

#include <wheelbeat/net/channel.h>
#include <wheelbeat/net/channel_metrics.h>
#include <wheelbeat/net/codec.h>
#include <wheelbeat/net/error.h>
#include <wheelbeat/net/event_loop.h>
#include <wheelbeat/net/event_loop_group.h>
#include <wheelbeat/net/options.h>
#include <wheelbeat/net/shutdown_signal.h>
#include <wheelbeat/net/tcp_client.h>
#include <wheelbeat/net/tcp_server.h>
#include <wheelbeat/tasks/tasks.h>
