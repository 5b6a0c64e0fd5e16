// What the process costs, read from the kernel: resident memory, CPU time of the process and of
// the calling thread; and a way to run this binary again in a fresh process (for S4, whose RSS
// readings would be polluted by memory earlier scenarios freed but the allocator kept).
#pragma once

#include <time.h>

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

namespace wheelbeat::bench {

// VmRSS of /proc/self/status, in bytes. Throws std::runtime_error if it cannot be read.
std::int64_t vmRssBytes();
// User + system CPU time of the whole process (getrusage(RUSAGE_SELF); microsecond resolution).
std::chrono::nanoseconds processCpu();
// CPU time of the calling thread (clock_gettime(CLOCK_THREAD_CPUTIME_ID)).
std::chrono::nanoseconds threadCpu();
// The CPU-time clock of the calling thread (pthread_getcpuclockid), for another thread to read
// with cpuOfClock() while this one lives.
clockid_t threadCpuClock();
std::chrono::nanoseconds cpuOfClock(clockid_t clock);

// Runs /proc/self/exe with `args` in a child process (its stderr goes to ours), waits for it and
// returns its stdout. Throws std::runtime_error if it cannot start or exits non-zero.
std::string runSelf(const std::vector<std::string>& args);

}  // namespace wheelbeat::bench
