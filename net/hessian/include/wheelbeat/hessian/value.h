// Hessian 2.0 values: what the encoder writes and the decoder returns (serialization only; the
// transport carries the bytes). The model follows the wire's types one to one:
//
//   null, bool, int (32 bits), long (64 bits), double, string (UTF-8 here; the wire's CESU-8 and
//   UTF-16 lengths are the codec's business), bytes, Date (milliseconds since the epoch), and
//   three kinds of node: List, Map and Object.
//
// Nodes and sharing. A List, Map or Object lives in a std::shared_ptr; a Value holding one owns
// it. The same node may appear several times in a graph (shared structure): the encoder writes it
// once and refers to it afterwards (Hessian's ref, 'Q'), as Java does for an object met twice.
//
// Cycles. A node must never own itself, directly or not (a cycle of shared_ptr would leak). A
// cycle is expressed with a BackRef: a non-owning (weak) edge to a node. The encoder treats a
// BackRef exactly like the node it points to; the decoder returns a ref to a node that is still
// being read (an enclosing node: the only way a graph can be cyclic) as a BackRef, and a ref to a
// node already complete as another owning Value (shared structure, which cannot form a cycle:
// owning edges only ever point to nodes completed earlier). So a decoded graph is owned by the
// Value returned, every node is reachable from it through owning edges, and dropping that Value
// frees the whole graph, cycles included. A BackRef is only valid while its target is owned by
// something else: lock() returns a null Value once the target is gone, and the encoder rejects it.
//
// Threads: values are plain data. Reading one graph from several threads at once is safe; any
// change needs the caller's own synchronisation.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

namespace wheelbeat::hessian {

// Declared before the types it names (GCC would see its enumerators as shadowing them).
/// The kinds of value, in the order of Value::Storage's alternatives.
enum class Type : std::uint8_t {
  Null,
  Bool,
  Int,
  Long,
  Double,
  String,
  Bytes,
  Date,
  List,
  Map,
  Object,
  BackRef
};

/// "null", "bool", "int", "long", "double", "string", "bytes", "date", "list", "map", "object",
/// "backref".
const char* typeName(Type type);

class Value;
struct List;
struct Map;
struct Object;
using ListPtr = std::shared_ptr<List>;
using MapPtr = std::shared_ptr<Map>;
using ObjectPtr = std::shared_ptr<Object>;

/// Binary data (Hessian's `binary`).
using Bytes = std::vector<std::uint8_t>;

/// A point in time: milliseconds since 1970-01-01T00:00:00Z (Java's java.util.Date).
struct Date {
  std::int64_t millis = 0;
  bool operator==(const Date&) const = default;
};

/// A non-owning edge to a List, Map or Object (how a cycle is expressed: see above).
class BackRef {
public:
  BackRef() = default;
  explicit BackRef(const ListPtr& node) : target_(std::weak_ptr<List>(node)) {}
  explicit BackRef(const MapPtr& node) : target_(std::weak_ptr<Map>(node)) {}
  explicit BackRef(const ObjectPtr& node) : target_(std::weak_ptr<Object>(node)) {}
  /// The target as an owning Value, or a null Value if it no longer exists.
  Value lock() const;
  /// True once the target is destroyed (or for a default-constructed BackRef).
  bool expired() const;

private:
  std::variant<std::weak_ptr<List>, std::weak_ptr<Map>, std::weak_ptr<Object>> target_;
};

/// One Hessian value. Built with the named factories (no implicit conversions: Hessian's int and
/// long are different types on the wire, as are a string and bytes). Cheap to copy: a copy of a
/// node Value shares the node.
class Value {
public:
  using Storage = std::variant<std::monostate, bool, std::int32_t, std::int64_t, double,
                               std::string, Bytes, Date, ListPtr, MapPtr, ObjectPtr, BackRef>;

  Value() = default;  ///< null
  static Value null() { return Value(); }
  static Value boolean(bool b) { return Value(Storage(b)); }
  static Value int32(std::int32_t i) { return Value(Storage(i)); }
  static Value int64(std::int64_t l) { return Value(Storage(l)); }
  static Value float64(double d) { return Value(Storage(d)); }
  /// UTF-8 text. Not checked here: the encoder rejects text that is not valid UTF-8.
  static Value string(std::string s) { return Value(Storage(std::move(s))); }
  static Value bytes(Bytes b) { return Value(Storage(std::move(b))); }
  static Value date(Date d) { return Value(Storage(d)); }
  /// A node (an empty pointer is a null Value).
  static Value list(ListPtr node);
  static Value map(MapPtr node);
  static Value object(ObjectPtr node);
  static Value backRef(BackRef ref) { return Value(Storage(std::move(ref))); }

  Type type() const { return static_cast<Type>(v_.index()); }
  bool isNull() const { return v_.index() == 0; }

  /// Checked accessors: each throws std::logic_error naming both types when the value is of
  /// another type ("hessian: value is a long, not an int").
  bool asBool() const;
  std::int32_t asInt() const;
  std::int64_t asLong() const;
  double asDouble() const;
  const std::string& asString() const;
  const Bytes& asBytes() const;
  Date asDate() const;
  const ListPtr& asList() const;
  const MapPtr& asMap() const;
  const ObjectPtr& asObject() const;
  const BackRef& asBackRef() const;

  /// The variant itself, for std::visit.
  const Storage& storage() const { return v_; }

private:
  explicit Value(Storage v) : v_(std::move(v)) {}
  Storage v_;
};

/// A list: Java's ArrayList when untyped (empty `type`), an array or another collection class
/// when typed ("[int", "[string", "[object", "java.util.LinkedList", ...). An empty type name is
/// untyped: the wire's typed list with an empty name decodes as untyped.
struct List {
  std::string type;
  std::vector<Value> items;
};

/// A map: Java's HashMap when untyped (empty `type`), another class when typed. Keys are any
/// value; entries stay in insertion order (the wire's order), duplicates as given.
struct Map {
  std::string type;
  std::vector<std::pair<Value, Value>> entries;
};

/// A class definition: the class name and its field names, in wire order. Shared by every
/// Object of the class (the decoder gives all instances of one definition the same pointer).
struct ClassDef {
  std::string name;
  std::vector<std::string> fields;
};

/// An object: a class definition and one value per field, in the definition's order. The
/// encoder rejects an Object whose value count differs from its definition's field count.
struct Object {
  std::shared_ptr<const ClassDef> def;
  std::vector<Value> values;
  /// The value of the field `name`, or nullptr if the class has no such field.
  const Value* field(std::string_view name) const;
};

/// Builders (any thread).
ListPtr makeList(std::string type = {}, std::vector<Value> items = {});
MapPtr makeMap(std::string type = {}, std::vector<std::pair<Value, Value>> entries = {});
std::shared_ptr<const ClassDef> makeClassDef(std::string name, std::vector<std::string> fields);
/// Throws std::invalid_argument when `values` has another size than def's fields (or def is
/// empty), naming both counts.
ObjectPtr makeObject(std::shared_ptr<const ClassDef> def, std::vector<Value> values);
/// A Java enum constant as Hessian writes it: an object of class `className` with one field,
/// `name`.
Value makeEnum(std::string className, std::string constant);

/// Deep equality of two graphs: same types and contents, and the same shape of sharing — a node
/// met again on one side must pair with the node it was first paired with on the other (so a
/// self-reference equals a self-reference, not an infinite unrolling). A BackRef compares as its
/// target; an expired one equals only another expired one. Doubles compare by bits (NaN equals
/// NaN, -0.0 differs from 0.0). Any thread; cost linear in the graphs' sizes.
bool deepEqual(const Value& a, const Value& b);

}  // namespace wheelbeat::hessian
