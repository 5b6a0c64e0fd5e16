// The pipe protocol between the driver and its children, and the process facts each child
// reports about itself.
//
// A reply is one line: a tag and key=value pairs of integers, e.g.
//   stats conns=5000 cpu_ns=81234000 rss=31457280
// Integers only (nanoseconds, bytes, counts): no locale or float formatting to get wrong.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>

namespace wheelbeat::bench::netbench {

using Kv = std::map<std::string, std::int64_t, std::less<>>;

// "tag k1=v1 k2=v2".
std::string formatKv(std::string_view tag, const Kv& values);
// Parses a line made by formatKv. Throws std::runtime_error if the tag differs or a pair is bad.
Kv parseKv(std::string_view line, std::string_view tag);
// values[key]; throws std::runtime_error naming the key when absent.
std::int64_t kvAt(const Kv& values, std::string_view key);

// Writes `line` and a newline to stdout and flushes (the driver is waiting for it).
void reply(const std::string& line);

// Raises RLIMIT_NOFILE's soft limit to the hard limit. Throws std::runtime_error with a clear
// message if the hard limit is below `needed`. Returns the new soft limit.
std::int64_t raiseNofile(std::int64_t needed);
// File descriptors open in this process now (entries of /proc/self/fd).
std::int64_t openFds();

// Descriptors a server process needs beside its sockets (stdio, pipes, epoll, eventfd, the
// listeners, /proc reads) with room to spare: accept() must never meet EMFILE inside the capacity.
inline constexpr std::int64_t kServerReservedFds = 32;
// Connections a server process can hold (its "ready ... capacity=C"): `nofileLimit` (what
// raiseNofile() returned) minus the descriptors open now and the reserve. Call once listening.
std::int64_t serverCapacity(std::int64_t nofileLimit);
// TCP sockets (IPv4) in TIME_WAIT on this machine (/proc/net/tcp), or -1.
std::int64_t timeWaitSockets();
// The 1-minute load average (/proc/loadavg), or -1.
double loadAverage1m();

// This process's CPU (getrusage, user + system), VmRSS and malloc'd bytes in use, as "cpu_ns",
// "rss" and "heap".
Kv selfUsage();

}  // namespace wheelbeat::bench::netbench
