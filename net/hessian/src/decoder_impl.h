// The decoder's state, shared by decoder.cpp (dispatch, scalars, strings, bytes) and
// decoder_nodes.cpp (lists, maps, objects, refs, types, class definitions).
#pragma once

#include <wheelbeat/hessian/decoder.h>

#include <fmt/format.h>

#include <cstdint>
#include <string>
#include <variant>
#include <vector>

namespace wheelbeat::hessian {

struct Decoder::Impl {
  const std::uint8_t* begin = nullptr;
  const std::uint8_t* p = nullptr;
  const std::uint8_t* end = nullptr;
  DecoderLimits limits;

  // One ref slot per list, map and object, in the order they start. `open` while the node is
  // being read: a ref to it then is a cycle, returned as a BackRef. `height`: the longest chain
  // of owning edges below the node (bounded by maxDepth, so that destroying, encoding or
  // comparing a decoded graph never recurses deeper than that).
  struct Slot {
    std::variant<ListPtr, MapPtr, ObjectPtr> node;
    bool open = true;
    std::size_t height = 0;
  };
  std::vector<Slot> refs;
  std::vector<std::string> types;
  std::vector<std::shared_ptr<const ClassDef>> classes;

  std::size_t offset(const std::uint8_t* at) const { return static_cast<std::size_t>(at - begin); }
  std::size_t remaining() const { return static_cast<std::size_t>(end - p); }
  template <typename... Args>
  [[noreturn]] void fail(const std::uint8_t* at, fmt::format_string<Args...> f, Args&&... args) {
    throw DecodeError(offset(at), fmt::format(f, std::forward<Args>(args)...));
  }
  // Fails (at `start`, naming `what`) unless n more bytes are present.
  void need(std::size_t n, const std::uint8_t* start, const char* what) {
    if (remaining() < n)
      fail(start, "input ends inside {} ({} more bytes needed, {} left)", what, n, remaining());
  }
  std::uint64_t big(int bytes) {
    std::uint64_t v = 0;
    for (int i = 0; i < bytes; ++i) v = (v << 8) | *p++;
    return v;
  }

  // `height` receives the value's owning-chain height (0 for a scalar or a BackRef).
  Value readValue(std::size_t depth, std::size_t& height);
  Value readScalar(std::uint8_t tag, const std::uint8_t* start);
  std::int32_t readIntTail(std::uint8_t tag, const std::uint8_t* start);
  std::int32_t readInt(const char* what);
  double readDouble(std::uint8_t tag, const std::uint8_t* start);
  std::string readString(std::uint8_t tag, const std::uint8_t* start);
  std::string readStringField(const char* what);
  Bytes readBytes(std::uint8_t tag, const std::uint8_t* start);
  std::string readType();
  void readClassDef(const std::uint8_t* start);
  std::size_t openSlot(const std::uint8_t* start, std::variant<ListPtr, MapPtr, ObjectPtr> node);
  void closeSlot(std::size_t slot, std::size_t height, const std::uint8_t* start);
  void checkDepth(const std::uint8_t* start, std::size_t depth);
  std::size_t elementCount(const std::uint8_t* start, const char* what);
  Value readList(std::uint8_t tag, const std::uint8_t* start, std::size_t depth,
                 std::size_t& height);
  Value readMap(std::uint8_t tag, const std::uint8_t* start, std::size_t depth,
                std::size_t& height);
  Value readObject(std::uint8_t tag, const std::uint8_t* start, std::size_t depth,
                   std::size_t& height);
  Value readRef(const std::uint8_t* start, std::size_t& height);
};

// What a tag byte starts (a table: no chain of comparisons per value).
enum class Tag : std::uint8_t {
  Invalid,
  Null,
  True,
  False,
  IntOne,
  IntTwo,
  IntThree,
  Int,
  LongOne,
  LongTwo,
  LongThree,
  LongInt,
  Long,
  DoubleZero,
  DoubleOne,
  DoubleByte,
  DoubleShort,
  DoubleMill,
  Double,
  StringShort,
  StringMedium,
  StringChunk,
  BytesShort,
  BytesMedium,
  BytesChunk,
  DateMillis,
  DateMinutes,
  ClassDef,
  Object,
  Ref,
  Map,
  List,
  End
};
Tag tagOf(std::uint8_t byte);

}  // namespace wheelbeat::hessian
