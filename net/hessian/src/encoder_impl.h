// The encoder's state, shared by encoder.cpp (scalars, public calls) and encoder_nodes.cpp.
#pragma once

#include <wheelbeat/hessian/encoder.h>

#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

namespace wheelbeat::hessian {

struct Encoder::Impl {
  EncoderLimits limits;
  std::string out;
  // Nodes written, by address; `held` keeps each alive so that an address is never reused by
  // another node while the table refers to it.
  std::unordered_map<const void*, std::uint32_t> refs;
  std::vector<std::shared_ptr<const void>> held;
  std::unordered_map<std::string, std::uint32_t> types;
  std::vector<const std::string*> typeOrder;  // keys of `types`, by number
  std::vector<std::shared_ptr<const ClassDef>> classes;
  std::unordered_map<const ClassDef*, std::uint32_t> classByAddress;
  std::unordered_multimap<std::string, std::uint32_t> classByName;

  struct Mark {
    std::size_t out, refs, types, classes;
  };
  Mark mark() const { return Mark{out.size(), held.size(), typeOrder.size(), classes.size()}; }
  void rollback(const Mark& m);

  void put(std::uint8_t b) { out.push_back(static_cast<char>(b)); }
  void putBig(std::uint64_t v, int bytes) {
    for (int shift = (bytes - 1) * 8; shift >= 0; shift -= 8)
      put(static_cast<std::uint8_t>(v >> shift));
  }
  void writeInt(std::int32_t v);
  void writeLong(std::int64_t v);
  void writeDouble(double v);
  void writeDate(Date d);
  void writeString(std::string_view s);
  void putStringHeader(std::uint32_t units);  // the final chunk's tag and length
  void writeBytes(const std::uint8_t* data, std::size_t size);
  void writeType(const std::string& type);
  void writeValue(const Value& v, std::size_t depth);
  bool writeRefIfSeen(const std::shared_ptr<const void>& node);
  void writeList(const ListPtr& list, std::size_t depth);
  void writeMap(const MapPtr& map, std::size_t depth);
  void writeObject(const ObjectPtr& object, std::size_t depth);
  std::uint32_t classIndex(const std::shared_ptr<const ClassDef>& def);
};

}  // namespace wheelbeat::hessian
