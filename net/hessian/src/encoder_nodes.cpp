// The encoder's nodes: lists, maps, objects and the refs between them (encoder.cpp has the
// scalars and the public calls).
#include "encoder_impl.h"
#include "wire.h"

#include <fmt/format.h>

namespace wheelbeat::hessian {

void Encoder::Impl::writeValue(const Value& v, std::size_t depth) {
  switch (v.type()) {
    case Type::Null: return put(wire::kNull);
    case Type::Bool: return put(v.asBool() ? wire::kTrue : wire::kFalse);
    case Type::Int: return writeInt(v.asInt());
    case Type::Long: return writeLong(v.asLong());
    case Type::Double: return writeDouble(v.asDouble());
    case Type::String: return writeString(v.asString());
    case Type::Bytes: return writeBytes(v.asBytes().data(), v.asBytes().size());
    case Type::Date: return writeDate(v.asDate());
    case Type::List: return writeList(v.asList(), depth);
    case Type::Map: return writeMap(v.asMap(), depth);
    case Type::Object: return writeObject(v.asObject(), depth);
    case Type::BackRef: {
      const Value target = v.asBackRef().lock();
      if (target.isNull()) {
        throw EncodeError("hessian: encode: a BackRef whose target no longer exists");
      }
      return writeValue(target, depth);
    }
  }
}

// A node met before is written as a ref to its number; a new one gets the next number.
bool Encoder::Impl::writeRefIfSeen(const std::shared_ptr<const void>& node) {
  const auto [it, added] = refs.try_emplace(node.get(), static_cast<std::uint32_t>(held.size()));
  if (added) {
    held.push_back(node);
    return false;
  }
  put(wire::kRef);
  writeInt(static_cast<std::int32_t>(it->second));
  return true;
}

namespace {

void checkDepth(std::size_t depth, std::size_t maxDepth) {
  if (depth >= maxDepth) {
    throw EncodeError(fmt::format(
        "hessian: encode: lists, maps and objects nested deeper than maxDepth = {}", maxDepth));
  }
}

}  // namespace

void Encoder::Impl::writeList(const ListPtr& list, std::size_t depth) {
  if (writeRefIfSeen(list)) return;
  checkDepth(depth, limits.maxDepth);
  const auto n = static_cast<std::uint32_t>(list->items.size());
  if (list->type.empty()) {
    if (n <= wire::kListDirectMax) {
      put(static_cast<std::uint8_t>(wire::kListDirectUntyped + n));
    } else {
      put(wire::kListFixedUntyped);
      writeInt(static_cast<std::int32_t>(n));
    }
  } else if (n <= wire::kListDirectMax) {
    put(static_cast<std::uint8_t>(wire::kListDirectTyped + n));
    writeType(list->type);
  } else {
    put(wire::kListFixedTyped);
    writeType(list->type);
    writeInt(static_cast<std::int32_t>(n));
  }
  for (const Value& item : list->items) writeValue(item, depth + 1);
}

void Encoder::Impl::writeMap(const MapPtr& map, std::size_t depth) {
  if (writeRefIfSeen(map)) return;
  checkDepth(depth, limits.maxDepth);
  if (map->type.empty()) {
    put(wire::kMapUntyped);
  } else {
    put(wire::kMapTyped);
    writeType(map->type);
  }
  for (const auto& [key, value] : map->entries) {
    writeValue(key, depth + 1);
    writeValue(value, depth + 1);
  }
  put(wire::kEnd);
}

// The number of def's class definition, written first ('C') when the class is new. A class is
// the same when its name and fields are (Java keys them by class).
std::uint32_t Encoder::Impl::classIndex(const std::shared_ptr<const ClassDef>& def) {
  if (auto it = classByAddress.find(def.get()); it != classByAddress.end()) return it->second;
  auto [first, last] = classByName.equal_range(def->name);
  for (auto it = first; it != last; ++it) {
    if (classes[it->second]->fields == def->fields) return it->second;
  }
  const auto index = static_cast<std::uint32_t>(classes.size());
  put(wire::kClassDef);
  writeString(def->name);
  writeInt(static_cast<std::int32_t>(def->fields.size()));
  for (const std::string& field : def->fields) writeString(field);
  classes.push_back(def);
  classByAddress.emplace(def.get(), index);
  classByName.emplace(def->name, index);
  return index;
}

void Encoder::Impl::writeObject(const ObjectPtr& object, std::size_t depth) {
  if (!object->def) throw EncodeError("hessian: encode: an Object without a class definition");
  if (object->values.size() != object->def->fields.size()) {
    throw EncodeError(fmt::format(
        "hessian: encode: an Object of class '{}' has {} values (expected {}, one per field)",
        object->def->name, object->values.size(), object->def->fields.size()));
  }
  if (writeRefIfSeen(object)) return;
  checkDepth(depth, limits.maxDepth);
  const std::uint32_t index = classIndex(object->def);
  if (index <= wire::kObjectDirectMax) {
    put(static_cast<std::uint8_t>(wire::kObjectDirect + index));
  } else {
    put(wire::kObject);
    writeInt(static_cast<std::int32_t>(index));
  }
  for (const Value& value : object->values) writeValue(value, depth + 1);
}

}  // namespace wheelbeat::hessian
