// SmallRng: xoshiro256** (Blackman & Vigna, 2018) seeded through splitmix64 — 32 bytes of state
// where std::mt19937_64 takes 2 504. A RetryState lives in every client's reconnect task, so at
// 5 000 connections the generator alone was half of a client's memory per connection. Its output
// is fully specified (the same on every platform and standard library) and its quality is ample
// for jitter. Not for cryptography. Thread: one owner.
#pragma once

#include <wheelbeat/core/cxx20.h>

#include <array>
#include <cstdint>

namespace wheelbeat::tasks {

class SmallRng {
public:
  using result_type = std::uint64_t;

  explicit SmallRng(std::uint64_t seed) noexcept {
    // splitmix64 spreads any seed (0 included) over the four words; they are never all zero.
    for (auto& word : s_) {
      seed += 0x9e3779b97f4a7c15ULL;
      std::uint64_t z = seed;
      z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
      z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
      word = z ^ (z >> 31);
    }
  }

  static constexpr result_type min() noexcept { return 0; }
  static constexpr result_type max() noexcept { return ~result_type{0}; }

  result_type operator()() noexcept {
    const std::uint64_t result = rotl(s_[1] * 5, 7) * 9;
    const std::uint64_t t = s_[1] << 17;
    s_[2] ^= s_[0];
    s_[3] ^= s_[1];
    s_[1] ^= s_[2];
    s_[0] ^= s_[3];
    s_[2] ^= t;
    s_[3] = rotl(s_[3], 45);
    return result;
  }

private:
  static constexpr std::uint64_t rotl(std::uint64_t x, int k) noexcept {
    return (x << k) | (x >> (64 - k));
  }

  std::array<std::uint64_t, 4> s_{};
};

}  // namespace wheelbeat::tasks
