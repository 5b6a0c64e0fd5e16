// What this machine itself costs, measured in the same run so the scenario figures can be read
// against it: the price of one clock read (newTimeout() pays one) and how late a thread wakes
// from a 1 ms sleep (a floor under S5's lateness that no timer can go below).
#pragma once

#include <string>

namespace wheelbeat::bench {

// A JSON object, e.g. {"clock_read_ns":29.1,"wakeup_overshoot_us":{"p50":61,"p99":214,"max":2602}}.
// Takes about 2.5 s (quick: 0.3 s).
std::string measurePlatform(bool quick);

}  // namespace wheelbeat::bench
