// The value codecs of the key tables (private to config/): for one C++ type and its JSON form,
// how to read a value (one error at the pointer, `out` unchanged on error), write it (toJson()),
// compare it (operator==) and describe it (the schema and the reference). A table line picks one
// with its parameters, e.g. field<W, &W::ticksPerWheel, kTicks>("ticks_per_wheel", "...").
#pragma once

#include "fields.h"
#include "values.h"

#include <array>
#include <chrono>
#include <cstdint>
#include <limits>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

namespace wheelbeat::config::detail {

// A duration (values.h) >= `min`, or > 0 when `positive`.
struct DurationCodec {
  nanoseconds min{0};
  bool positive = false;
  bool read(Errors& e, const Json& v, const std::string& p, nanoseconds& out,
            const Context& c) const;
  [[nodiscard]] Json write(nanoseconds d) const { return durationJson(d); }
  [[nodiscard]] bool same(nanoseconds a, nanoseconds b) const { return a == b; }
  void describe(KeyNode& node, nanoseconds defaults) const;
};

// A duration in whole milliseconds; `wholeExpected` says why a finer one is refused.
struct MillisCodec {
  std::string_view wholeExpected;
  bool read(Errors& e, const Json& v, const std::string& p, std::chrono::milliseconds& out,
            const Context& c) const;
  [[nodiscard]] Json write(std::chrono::milliseconds d) const { return durationJson(d); }
  [[nodiscard]] bool same(std::chrono::milliseconds a, std::chrono::milliseconds b) const {
    return a == b;
  }
  void describe(KeyNode& node, std::chrono::milliseconds defaults) const;
};

// An integer in [lo, hi] stored in T; `expected` says the range as an error does.
template <typename T>
struct IntCodec {
  std::int64_t lo;
  std::uint64_t hi;
  std::string_view expected;

  bool read(Errors& e, const Json& v, const std::string& p, T& out, const Context& /*c*/) const {
    if (lo < 0 || hi <= static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) {
      std::int64_t x = 0;
      if (!readInt(e, v, p, x, lo, static_cast<std::int64_t>(hi), expected)) return false;
      out = static_cast<T>(x);
      return true;
    }
    std::uint64_t x = 0;
    if (!readUnsigned(e, v, p, x, static_cast<std::uint64_t>(lo), hi, expected)) return false;
    out = static_cast<T>(x);
    return true;
  }
  [[nodiscard]] Json write(T value) const { return Json(value); }
  [[nodiscard]] bool same(T a, T b) const { return a == b; }
  void describe(KeyNode& node, T defaults) const {
    node.schema = {{"type", "integer"}};
    if (!std::is_signed_v<T> || lo != std::numeric_limits<T>::min()) node.schema["minimum"] = lo;
    if (hi < static_cast<std::uint64_t>(std::numeric_limits<T>::max())) node.schema["maximum"] = hi;
    node.type = "integer";
    node.rule = expected;
    node.defaultValue = Json(defaults);
  }
};

// A finite number in [lo, hi], or in (0, hi] when `positive`.
struct NumberCodec {
  double lo;
  double hi;
  bool positive;
  std::string_view expected;
  bool read(Errors& e, const Json& v, const std::string& p, double& out, const Context& c) const;
  [[nodiscard]] Json write(double d) const { return Json(d); }
  [[nodiscard]] bool same(double a, double b) const { return a == b; }  // exact, as toJson keeps
  void describe(KeyNode& node, double defaults) const;
};

struct BoolCodec {
  bool read(Errors& e, const Json& v, const std::string& p, bool& out, const Context& c) const;
  [[nodiscard]] Json write(bool b) const { return Json(b); }
  [[nodiscard]] bool same(bool a, bool b) const { return a == b; }
  void describe(KeyNode& node, bool defaults) const;
};

// One of `names` (exact, lower case), for the enumerator at the same index of `values`.
template <typename E, std::size_t N>
struct EnumCodec {
  std::array<std::string_view, N> names;
  std::array<E, N> values;

  bool read(Errors& e, const Json& v, const std::string& p, E& out, const Context& /*c*/) const {
    std::size_t i = 0;
    if (!readEnum(e, v, p, i, names)) return false;
    out = values.at(i);
    return true;
  }
  [[nodiscard]] Json write(E value) const {
    for (std::size_t i = 0; i < N; ++i) {
      if (values.at(i) == value) return Json(names.at(i));
    }
    return Json("?");  // not a valid enumerator: the loader never produces one
  }
  [[nodiscard]] bool same(E a, E b) const { return a == b; }
  void describe(KeyNode& node, E defaults) const {
    node.schema = {{"enum", names}};
    node.type = "string";
    node.rule = enumExpected(names);
    node.defaultValue = write(defaults);
  }
};

// "host:port" (net::parseEndpoint), any port: which ports a key takes is its layer's rule.
struct EndpointCodec {
  bool read(Errors& e, const Json& v, const std::string& p, net::Endpoint& out,
            const Context& c) const;
  [[nodiscard]] Json write(const net::Endpoint& v) const { return Json(formatEndpoint(v)); }
  [[nodiscard]] bool same(const net::Endpoint& a, const net::Endpoint& b) const { return a == b; }
  void describe(KeyNode& node, const net::Endpoint& defaults) const;
};

// An endpoint kept as text, in the canonical form formatEndpoint() writes.
struct EndpointTextCodec {
  std::uint16_t minPort;
  bool read(Errors& e, const Json& v, const std::string& p, std::string& out,
            const Context& c) const;
  [[nodiscard]] Json write(const std::string& v) const { return Json(v); }
  [[nodiscard]] bool same(const std::string& a, const std::string& b) const { return a == b; }
  void describe(KeyNode& node, const std::string& defaults) const;
};

// A name: never whitespace, none of `forbidden`, empty only if `emptyOk`.
struct NameCodec {
  bool emptyOk;
  std::string_view forbidden;
  std::string_view expected;
  [[nodiscard]] bool fits(const Json& v) const;
  bool read(Errors& e, const Json& v, const std::string& p, std::string& out,
            const Context& c) const;
  [[nodiscard]] Json write(const std::string& v) const { return Json(v); }
  [[nodiscard]] bool same(const std::string& a, const std::string& b) const { return a == b; }
  void describe(KeyNode& node, const std::string& defaults) const;
};

// Any string.
struct StringCodec {
  bool read(Errors& e, const Json& v, const std::string& p, std::string& out,
            const Context& c) const;
  [[nodiscard]] Json write(const std::string& v) const { return Json(v); }
  [[nodiscard]] bool same(const std::string& a, const std::string& b) const { return a == b; }
  void describe(KeyNode& node, const std::string& defaults) const;
};

// How a list of strings is written and compared (the list codecs below share it).
struct StringListForm {
  [[nodiscard]] Json write(const std::vector<std::string>& v) const { return Json(v); }
  [[nodiscard]] bool same(const std::vector<std::string>& a,
                          const std::vector<std::string>& b) const {
    return a == b;
  }
};

// An array of names, each as `item` says (every bad one reported at its index).
struct NameListCodec : StringListForm {
  NameCodec item;
  std::string_view arrayExpected;
  bool read(Errors& e, const Json& v, const std::string& p, std::vector<std::string>& out,
            const Context& c) const;
  void describe(KeyNode& node, const std::vector<std::string>& defaults) const;
};

// An array of the shared error names (tasks/error_names.h).
struct ErrorNamesCodec : StringListForm {
  bool read(Errors& e, const Json& v, const std::string& p, std::vector<std::string>& out,
            const Context& c) const;
  void describe(KeyNode& node, const std::vector<std::string>& defaults) const;
};

// A retry policy: an inline object on top of the field's default, or the name of an entry of
// "retry" (policies.cpp).
struct PolicyCodec {
  bool read(Errors& e, const Json& v, const std::string& p, tasks::RetryOptions& out,
            const Context& c) const;
  [[nodiscard]] Json write(const tasks::RetryOptions& v) const;
  [[nodiscard]] bool same(const tasks::RetryOptions& a, const tasks::RetryOptions& b) const;
  void describe(KeyNode& node, const tasks::RetryOptions& defaults) const;
};

inline constexpr DurationCodec kDuration{};
inline constexpr BoolCodec kBool{};
inline constexpr PolicyCodec kPolicy{};
inline constexpr ErrorNamesCodec kErrorNames{};
inline constexpr std::uint64_t kMaxSize = std::numeric_limits<std::size_t>::max();
inline constexpr std::int64_t kMaxInt = std::numeric_limits<std::int64_t>::max();

// Type only: any value the member can hold. The key's rules are its layer's validate()'s.
inline constexpr IntCodec<std::int64_t> kInt64{std::numeric_limits<std::int64_t>::min(),
                                               static_cast<std::uint64_t>(kMaxInt), "an integer"};
inline constexpr IntCodec<int> kInt{std::numeric_limits<int>::min(),
                                    std::numeric_limits<int>::max(), "an integer"};
inline constexpr IntCodec<std::size_t> kSize{0, kMaxSize, "an integer >= 0"};
inline constexpr NumberCodec kNumber{std::numeric_limits<double>::lowest(),
                                     std::numeric_limits<double>::max(), false, "a number"};
inline constexpr EndpointCodec kEndpoint{};
inline constexpr StringCodec kString{};

}  // namespace wheelbeat::config::detail
