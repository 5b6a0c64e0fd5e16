// The decoder's nodes: lists, maps and objects, the refs between them, type names and class
// definitions (decoder.cpp has the dispatch and the scalars).
#include "decoder_impl.h"
#include "wire.h"

#include <algorithm>

namespace wheelbeat::hessian {

// A type name (a string, numbered in order) or the number of one read before.
std::string Decoder::Impl::readType() {
  const std::uint8_t* start = p;
  if (p == end) fail(start, "input ends where a type (a string or a type ref) was expected");
  const std::uint8_t tag = *p++;
  const Tag t = tagOf(tag);
  if (t == Tag::StringShort || t == Tag::StringMedium || t == Tag::StringChunk) {
    if (types.size() >= limits.maxTypes) {
      fail(start, "more than maxTypes = {} type names", limits.maxTypes);
    }
    types.push_back(readString(tag, start));
    return types.back();
  }
  if (t != Tag::IntOne && t != Tag::IntTwo && t != Tag::IntThree && t != Tag::Int) {
    fail(start, "code 0x{:02x} where a type (a string or a type ref) was expected", tag);
  }
  const std::int32_t ref = readIntTail(tag, start);
  if (ref < 0 || static_cast<std::size_t>(ref) >= types.size()) {
    fail(start, "type ref {} to nothing ({} type names so far)", ref, types.size());
  }
  return types[static_cast<std::size_t>(ref)];
}

// 'C' name count field-name*: numbered in order, for 'O' / 0x60-0x6f to name.
void Decoder::Impl::readClassDef(const std::uint8_t* start) {
  if (classes.size() >= limits.maxClassDefs) {
    fail(start, "more than maxClassDefs = {} class definitions", limits.maxClassDefs);
  }
  std::string name = readStringField("a class name");
  const std::size_t count = elementCount(start, "class field count");
  std::vector<std::string> fields;
  fields.reserve(std::min(count, remaining()));
  for (std::size_t i = 0; i < count; ++i) fields.push_back(readStringField("a field name"));
  classes.push_back(makeClassDef(std::move(name), std::move(fields)));
}

// A length or count (an int): 0 .. maxElements.
std::size_t Decoder::Impl::elementCount(const std::uint8_t* start, const char* what) {
  const std::int32_t n = readInt(what);
  if (n < 0) fail(start, "{} {} (expected >= 0)", what, n);
  if (static_cast<std::size_t>(n) > limits.maxElements) {
    fail(start, "{} {} exceeds maxElements = {}", what, n, limits.maxElements);
  }
  return static_cast<std::size_t>(n);
}

std::size_t Decoder::Impl::openSlot(const std::uint8_t* start,
                                    std::variant<ListPtr, MapPtr, ObjectPtr> node) {
  if (refs.size() >= limits.maxRefs) {
    fail(start, "more than maxRefs = {} lists, maps and objects", limits.maxRefs);
  }
  refs.push_back(Slot{std::move(node), true, 0});
  return refs.size() - 1;
}

void Decoder::Impl::closeSlot(std::size_t slot, std::size_t height, const std::uint8_t* start) {
  if (height > limits.maxDepth) {
    fail(start, "nodes own each other through refs {} deep (more than maxDepth = {})", height,
         limits.maxDepth);
  }
  refs[slot].open = false;
  refs[slot].height = height;
}

void Decoder::Impl::checkDepth(const std::uint8_t* start, std::size_t depth) {
  if (depth >= limits.maxDepth) {
    fail(start, "lists, maps and objects nested deeper than maxDepth = {}", limits.maxDepth);
  }
}

// 0x70-0x77 type value*, 'V' type int value*, 0x55 type value* 'Z', and the untyped forms
// 0x78-0x7f, 'X' int value*, 0x57 value* 'Z'.
Value Decoder::Impl::readList(std::uint8_t tag, const std::uint8_t* start, std::size_t depth,
                              std::size_t& height) {
  checkDepth(start, depth);
  const bool typed = tag == wire::kListVarTyped || tag == wire::kListFixedTyped ||
                     (tag >= wire::kListDirectTyped && tag < wire::kListDirectUntyped);
  const bool variable = tag == wire::kListVarTyped || tag == wire::kListVarUntyped;
  ListPtr list = makeList(typed ? readType() : std::string());
  std::size_t n = 0;
  if (tag >= wire::kListDirectUntyped) {
    n = tag - wire::kListDirectUntyped;
  } else if (tag >= wire::kListDirectTyped) {
    n = tag - wire::kListDirectTyped;
  } else if (!variable) {
    n = elementCount(start, "list length");
  }
  if (n > limits.maxElements) {
    fail(start, "list length {} exceeds maxElements = {}", n, limits.maxElements);
  }
  const std::size_t slot = openSlot(start, list);
  list->items.reserve(std::min(n, remaining()));  // each element takes at least a byte
  std::size_t childHeight = 0;
  for (std::size_t i = 0; variable || i < n; ++i) {
    if (variable) {
      if (p == end) fail(start, "input ends inside a list (expected a value or 'Z')");
      if (*p == wire::kEnd) {
        ++p;
        break;
      }
      if (i >= limits.maxElements) {
        fail(start, "list longer than maxElements = {}", limits.maxElements);
      }
    }
    list->items.push_back(readValue(depth + 1, childHeight));
    height = std::max(height, childHeight);
  }
  closeSlot(slot, ++height, start);
  return Value::list(std::move(list));
}

// 'H' (key value)* 'Z', 'M' type (key value)* 'Z'.
Value Decoder::Impl::readMap(std::uint8_t tag, const std::uint8_t* start, std::size_t depth,
                             std::size_t& height) {
  checkDepth(start, depth);
  MapPtr map = makeMap(tag == wire::kMapTyped ? readType() : std::string());
  const std::size_t slot = openSlot(start, map);
  std::size_t childHeight = 0;
  for (;;) {
    if (p == end) fail(start, "input ends inside a map (expected a key or 'Z')");
    if (*p == wire::kEnd) {
      ++p;
      break;
    }
    if (map->entries.size() >= limits.maxElements) {
      fail(start, "map larger than maxElements = {} entries", limits.maxElements);
    }
    Value key = readValue(depth + 1, childHeight);
    height = std::max(height, childHeight);
    Value value = readValue(depth + 1, childHeight);
    height = std::max(height, childHeight);
    // A top-level map (a Dubbo body's attachments: 4 to 8 entries) gets room for 4 at the first,
    // without regrowing from 1 and 2; nested maps grow as they come, so that a body of many tiny
    // maps does not cost more memory per input byte.
    if (depth == 0 && map->entries.empty()) map->entries.reserve(4);
    map->entries.emplace_back(std::move(key), std::move(value));
  }
  closeSlot(slot, ++height, start);
  return Value::map(std::move(map));
}

// 0x60-0x6f (class definitions 0-15) or 'O' int, then one value per field.
Value Decoder::Impl::readObject(std::uint8_t tag, const std::uint8_t* start, std::size_t depth,
                                std::size_t& height) {
  checkDepth(start, depth);
  const std::int32_t index = tag == wire::kObject
                                 ? readInt("a class definition ref")
                                 : static_cast<std::int32_t>(tag - wire::kObjectDirect);
  if (index < 0 || static_cast<std::size_t>(index) >= classes.size()) {
    fail(start, "object of class definition {}, but {} are defined", index, classes.size());
  }
  // A copy: a definition inside a field's value may grow (and move) `classes`.
  const std::shared_ptr<const ClassDef> def = classes[static_cast<std::size_t>(index)];
  auto object = std::make_shared<Object>(Object{def, {}});
  const std::size_t slot = openSlot(start, object);
  object->values.reserve(std::min(def->fields.size(), remaining()));
  std::size_t childHeight = 0;
  for (std::size_t i = 0; i < def->fields.size(); ++i) {
    object->values.push_back(readValue(depth + 1, childHeight));
    height = std::max(height, childHeight);
  }
  closeSlot(slot, ++height, start);
  return Value::object(std::move(object));
}

// A node still being read is an enclosing one (a cycle): a BackRef; a complete one is shared.
Value Decoder::Impl::readRef(const std::uint8_t* start, std::size_t& height) {
  const std::int32_t index = readInt("a ref");
  if (index < 0 || static_cast<std::size_t>(index) >= refs.size()) {
    fail(start, "ref {} to nothing ({} lists, maps and objects so far)", index, refs.size());
  }
  const Slot& slot = refs[static_cast<std::size_t>(index)];
  height = slot.open ? 0 : slot.height;
  if (const auto* list = std::get_if<ListPtr>(&slot.node)) {
    return slot.open ? Value::backRef(BackRef(*list)) : Value::list(*list);
  }
  if (const auto* map = std::get_if<MapPtr>(&slot.node)) {
    return slot.open ? Value::backRef(BackRef(*map)) : Value::map(*map);
  }
  const auto& object = std::get<ObjectPtr>(slot.node);
  return slot.open ? Value::backRef(BackRef(object)) : Value::object(object);
}

}  // namespace wheelbeat::hessian
