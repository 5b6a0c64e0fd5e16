// The wheelbeat-dubbo command line (private to config/: not installed). Thread: main's.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace wheelbeat::config::dubbo_cli {

// The service every echo-server serves (dubbo_echo.cpp lists its methods).
inline constexpr const char* kInteropService = "org.wheelbeat.interop.Echo";

// Exit statuses.
inline constexpr int kOk = 0;
inline constexpr int kApplicationException = 1;
inline constexpr int kBadUsage = 2;
inline constexpr int kCallFailed = 3;  // transport, timeout, a status other than 20

int run(int argc, const char* const* argv);

struct EchoFlags {
  std::string host = "127.0.0.1";
  std::uint16_t port = 20880;
  std::string service;               // "" = only kInteropService
  std::vector<std::string> methods;  // advertised for `service` (any method is answered)
  std::string registry;              // "" = none
};
// Serves until SIGINT or SIGTERM; prints "wheelbeat-dubbo: listening on HOST:PORT" on stdout.
int echoServer(const EchoFlags& flags);

}  // namespace wheelbeat::config::dubbo_cli
