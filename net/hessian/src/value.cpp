#include <wheelbeat/hessian/value.h>

#include <fmt/format.h>

#include <bit>
#include <stdexcept>
#include <unordered_map>

namespace wheelbeat::hessian {

const char* typeName(Type type) {
  switch (type) {
    case Type::Null: return "null";
    case Type::Bool: return "bool";
    case Type::Int: return "int";
    case Type::Long: return "long";
    case Type::Double: return "double";
    case Type::String: return "string";
    case Type::Bytes: return "bytes";
    case Type::Date: return "date";
    case Type::List: return "list";
    case Type::Map: return "map";
    case Type::Object: return "object";
    case Type::BackRef: return "backref";
  }
  return "?";
}

Value BackRef::lock() const {
  return std::visit(
      [](const auto& weak) -> Value {
        using T = typename std::decay_t<decltype(weak)>::element_type;
        auto strong = weak.lock();
        if constexpr (std::is_same_v<T, List>) return Value::list(std::move(strong));
        if constexpr (std::is_same_v<T, Map>) return Value::map(std::move(strong));
        if constexpr (std::is_same_v<T, Object>) return Value::object(std::move(strong));
      },
      target_);
}

bool BackRef::expired() const {
  return std::visit([](const auto& weak) { return weak.expired(); }, target_);
}

Value Value::list(ListPtr node) { return node ? Value(Storage(std::move(node))) : Value(); }
Value Value::map(MapPtr node) { return node ? Value(Storage(std::move(node))) : Value(); }
Value Value::object(ObjectPtr node) { return node ? Value(Storage(std::move(node))) : Value(); }

namespace {

template <typename T>
const T& checked(const Value::Storage& v, Type wanted) {
  if (const T* p = std::get_if<T>(&v)) return *p;
  throw std::logic_error(fmt::format("hessian: value is a {}, not a {}",
                                     typeName(static_cast<Type>(v.index())), typeName(wanted)));
}

}  // namespace

bool Value::asBool() const { return checked<bool>(v_, Type::Bool); }
std::int32_t Value::asInt() const { return checked<std::int32_t>(v_, Type::Int); }
std::int64_t Value::asLong() const { return checked<std::int64_t>(v_, Type::Long); }
double Value::asDouble() const { return checked<double>(v_, Type::Double); }
const std::string& Value::asString() const { return checked<std::string>(v_, Type::String); }
const Bytes& Value::asBytes() const { return checked<Bytes>(v_, Type::Bytes); }
Date Value::asDate() const { return checked<Date>(v_, Type::Date); }
const ListPtr& Value::asList() const { return checked<ListPtr>(v_, Type::List); }
const MapPtr& Value::asMap() const { return checked<MapPtr>(v_, Type::Map); }
const ObjectPtr& Value::asObject() const { return checked<ObjectPtr>(v_, Type::Object); }
const BackRef& Value::asBackRef() const { return checked<BackRef>(v_, Type::BackRef); }

const Value* Object::field(std::string_view name) const {
  if (!def) return nullptr;
  for (std::size_t i = 0; i < def->fields.size() && i < values.size(); ++i) {
    if (def->fields[i] == name) return &values[i];
  }
  return nullptr;
}

ListPtr makeList(std::string type, std::vector<Value> items) {
  return std::make_shared<List>(List{std::move(type), std::move(items)});
}

MapPtr makeMap(std::string type, std::vector<std::pair<Value, Value>> entries) {
  return std::make_shared<Map>(Map{std::move(type), std::move(entries)});
}

std::shared_ptr<const ClassDef> makeClassDef(std::string name, std::vector<std::string> fields) {
  return std::make_shared<const ClassDef>(ClassDef{std::move(name), std::move(fields)});
}

ObjectPtr makeObject(std::shared_ptr<const ClassDef> def, std::vector<Value> values) {
  if (!def) throw std::invalid_argument("hessian: makeObject: def is empty (expected a class)");
  if (values.size() != def->fields.size()) {
    throw std::invalid_argument(
        fmt::format("hessian: makeObject: {} values for class '{}' (expected {}, one per field)",
                    values.size(), def->name, def->fields.size()));
  }
  return std::make_shared<Object>(Object{std::move(def), std::move(values)});
}

Value makeEnum(std::string className, std::string constant) {
  return Value::object(makeObject(makeClassDef(std::move(className), {"name"}),
                                  {Value::string(std::move(constant))}));
}

namespace {

// Compares two graphs, pairing nodes as they are met (a node of `a` seen again must pair with
// the same node of `b`, and the reverse).
class Comparer {
public:
  bool same(const Value& a, const Value& b) {
    const Value x = resolve(a);
    const Value y = resolve(b);
    if (x.type() != y.type()) return false;
    switch (x.type()) {
      case Type::Double:
        return std::bit_cast<std::uint64_t>(x.asDouble()) ==
               std::bit_cast<std::uint64_t>(y.asDouble());
      case Type::List: return node(x.asList(), y.asList());
      case Type::Map: return node(x.asMap(), y.asMap());
      case Type::Object: return node(x.asObject(), y.asObject());
      case Type::BackRef: return true;  // both expired
      case Type::Null: return true;
      case Type::Bool: return x.asBool() == y.asBool();
      case Type::Int: return x.asInt() == y.asInt();
      case Type::Long: return x.asLong() == y.asLong();
      case Type::String: return x.asString() == y.asString();
      case Type::Bytes: return x.asBytes() == y.asBytes();
      case Type::Date: return x.asDate() == y.asDate();
    }
    return false;
  }

private:
  static Value resolve(const Value& v) {
    if (v.type() != Type::BackRef || v.asBackRef().expired()) return v;
    return v.asBackRef().lock();
  }

  template <typename T>
  bool node(const std::shared_ptr<T>& a, const std::shared_ptr<T>& b) {
    const auto [ita, newA] = aToB_.try_emplace(a.get(), b.get());
    const auto [itb, newB] = bToA_.try_emplace(b.get(), a.get());
    if (!newA || !newB) return ita->second == b.get() && itb->second == a.get();
    return contents(*a, *b);
  }

  bool contents(const List& a, const List& b) {
    if (a.type != b.type || a.items.size() != b.items.size()) return false;
    for (std::size_t i = 0; i < a.items.size(); ++i) {
      if (!same(a.items[i], b.items[i])) return false;
    }
    return true;
  }
  bool contents(const Map& a, const Map& b) {
    if (a.type != b.type || a.entries.size() != b.entries.size()) return false;
    for (std::size_t i = 0; i < a.entries.size(); ++i) {
      if (!same(a.entries[i].first, b.entries[i].first)) return false;
      if (!same(a.entries[i].second, b.entries[i].second)) return false;
    }
    return true;
  }
  bool contents(const Object& a, const Object& b) {
    if (!a.def || !b.def) return a.def == b.def;
    if (a.def->name != b.def->name || a.def->fields != b.def->fields) return false;
    if (a.values.size() != b.values.size()) return false;
    for (std::size_t i = 0; i < a.values.size(); ++i) {
      if (!same(a.values[i], b.values[i])) return false;
    }
    return true;
  }

  std::unordered_map<const void*, const void*> aToB_;
  std::unordered_map<const void*, const void*> bToA_;
};

}  // namespace

bool deepEqual(const Value& a, const Value& b) { return Comparer().same(a, b); }

}  // namespace wheelbeat::hessian
