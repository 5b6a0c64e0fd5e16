// One table entry per key (private to config/): a Field names a key, describes it, and reads,
// writes, compares and documents its value through a codec (codecs.h). The loader, toJson(),
// operator==, knownKeyPaths(), the JSON Schema and docs/configuration.md all walk these tables,
// so a new key is one line in its section's table.
#pragma once

#include "reader.h"

#include <wheelbeat/core/option_error.h>

#include <algorithm>
#include <functional>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace wheelbeat::config::detail {

struct Policies;  // sections.h

// What a reader may consult besides its value: the named policies of "retry".
struct Context {
  const Policies* policies = nullptr;
};

// A key as the schema and the reference describe it.
struct KeyNode {
  enum class Kind { Leaf, Object, Policy, Map };
  std::string name;
  std::string description;
  Kind kind = Kind::Leaf;
  Json schema = Json::object();  // the value's type part (type, $ref, bounds, enum)
  std::string type;              // the reference's "type" column
  std::string rule;              // what is accepted, as an error message says it
  std::optional<Json> defaultValue;
  std::vector<KeyNode> children;  // Object / Policy: its keys; Map: the one entry "*"
  std::vector<std::string> required;
  std::string rules;  // rules across the keys of an object
};

// One key of the object S. read() reports its own errors and returns false when it reported one;
// write() returns null for a key toJson() leaves out.
template <typename S>
struct Field {
  std::string_view name;
  std::string_view member;  // the C++ member, as the layer's validate() names it ("codec.maxBody")
  std::string_view description;
  bool (*read)(Errors& errors, const Json& value, const std::string& pointer, S& target,
               const Context& context);
  Json (*write)(const S& source);
  bool (*same)(const S& a, const S& b);
  void (*describe)(KeyNode& node, const S& defaults);
  void (*assign)(S& to, const S& from);  // copies this key's member
  // An object key over several members of S itself (spanField()): the key inside it that stands
  // for a member, where a rule broken by that member is reported. Null for any other key.
  std::string_view (*keyOf)(std::string_view member) = nullptr;
};

// The table line of the member (or accessor) `Get` of S, with the codec C.
template <typename S, auto Get, const auto& C>
constexpr Field<S> field(std::string_view name, std::string_view member,
                         std::string_view description) {
  return Field<S>{
      name,
      member,
      description,
      [](Errors& e, const Json& v, const std::string& p, S& s, const Context& c) {
        return C.read(e, v, p, std::invoke(Get, s), c);
      },
      [](const S& s) { return C.write(std::invoke(Get, s)); },
      [](const S& a, const S& b) { return C.same(std::invoke(Get, a), std::invoke(Get, b)); },
      [](KeyNode& n, const S& d) { C.describe(n, std::invoke(Get, d)); },
      [](S& to, const S& from) { std::invoke(Get, to) = std::invoke(Get, from); },
      nullptr};
}

// "a known key: a, b, c".
[[nodiscard]] std::string knownKeysText(std::span<const std::string_view> names);
// What the unknown key `key` of the object at `pointer` was expected to be: knownKeysText(names),
// or for a top-level section this build left out (document.cpp), that it was left out and why.
[[nodiscard]] std::string unknownKeyExpected(std::string_view pointer, std::string_view key,
                                             std::span<const std::string_view> names);

// Reads the object `value` key by key, in document order: a known key through its Field, an
// unknown key is an error. Returns false (after reporting) when `value` is not an object.
template <typename S>
bool readObject(Errors& errors, const Json& value, const std::string& pointer,
                std::span<const Field<S>> fields, S& target, const Context& context, Seen& seen) {
  if (!value.is_object()) {
    errors.add(pointer, value, "an object");
    return false;
  }
  for (const auto& [key, item] : value.items()) {
    const std::string at = childPointer(pointer, key);
    const Field<S>* field = nullptr;
    for (const auto& f : fields) field = (f.name == key) ? &f : field;
    if (field == nullptr) {
      std::vector<std::string_view> names;
      for (const auto& f : fields) names.push_back(f.name);
      errors.add(at, item, unknownKeyExpected(pointer, key, names));
    } else if (field->read(errors, item, at, target, context)) {
      seen.ok(field->name, &item);
    } else {
      seen.bad(field->name);
    }
  }
  return true;
}

// Every key of `fields`, described with the defaults `defaults`.
template <typename S>
std::vector<KeyNode> describeFields(std::span<const Field<S>> fields, const S& defaults) {
  std::vector<KeyNode> nodes;
  for (const auto& f : fields) {
    KeyNode node;
    node.name = f.name;
    node.description = f.description;
    f.describe(node, defaults);
    nodes.push_back(std::move(node));
  }
  return nodes;
}

// What validate() threw, said in the document's terms: member names replaced by key names.
std::string inKeyTerms(std::string text, std::span<const std::string_view> members,
                       std::span<const std::string_view> names);

// A rule of a layer whose validate() throws a plain std::invalid_argument worded as an OptionError
// ("Options.member = value (expected: text)", e.g. tasks/cluster/): the same as a
// core::OptionError. A rule between two members ("expected: >= other = v") names the other one
// too, worded from its side ("<= member = value"). Another text gives an error of no member
// (reported at the object as the layer's rule).
[[nodiscard]] core::OptionError optionErrorOf(std::string_view what);

// Runs check() (a layer's validate()), its plain std::invalid_argument rethrown as
// optionErrorOf() reads it.
template <typename Check>
void plainRules(Check check) {
  try {
    check();
  } catch (const core::OptionError&) {
    throw;
  } catch (const std::invalid_argument& e) {
    throw optionErrorOf(e.what());
  }
}

// An object of keys (a section, or an object inside one). Its rules are the owning layer's:
// `validate` (the layer's validate(), throwing core::OptionError) runs once its keys are read, and
// each error is reported at the key of the member it names — the key the document wrote when the
// rule is between two — after which that key goes back to its value before the document and
// validate() runs again, so every broken rule is reported once. `rules` says the rules across
// keys for the reference. A `required` key has no default: a missing one is reported as
// `requiredExpected (required)`.
template <typename T>
struct Section {
  std::span<const Field<T>> fields;
  void (*validate)(const T& options) = nullptr;
  std::string_view rules = {};
  std::string_view required = {};
  std::string_view requiredExpected = {};

  bool read(Errors& errors, const Json& value, const std::string& pointer, T& out,
            const Context& context) const {
    const std::size_t before = errors.size();
    const T base = out;
    Seen seen;
    if (!readObject<T>(errors, value, pointer, fields, out, context, seen)) return false;
    if (!required.empty() && seen.usable(required) && seen.written(required) == nullptr) {
      errors.add(childPointer(pointer, required), Json(nullptr),
                 std::string(requiredExpected) + " (required)");
      seen.bad(required);
    }
    if (validate != nullptr) applyRules(errors, pointer, seen, out, base);
    return errors.size() == before;
  }
  [[nodiscard]] Json write(const T& o) const {
    Json out = Json::object();
    for (const auto& f : fields) {
      Json v = f.write(o);
      if (!v.is_null()) out[std::string(f.name)] = std::move(v);
    }
    return out;
  }
  [[nodiscard]] bool same(const T& a, const T& b) const {
    for (const auto& f : fields) {
      if (!f.same(a, b)) return false;
    }
    return true;
  }
  void describe(KeyNode& node, const T& defaults) const {
    node.kind = KeyNode::Kind::Object;
    node.type = "object";
    node.children = describeFields<T>(fields, defaults);
    node.rules = rules;
    if (!required.empty()) node.required.emplace_back(required);
    for (auto& child : node.children) {
      if (child.name == required) child.defaultValue.reset();
    }
    node.defaultValue = write(defaults);
  }

private:
  // The key of the member `path` names: itself or the one it is inside ("reconnect.maxDelay").
  [[nodiscard]] const Field<T>* owner(std::string_view path) const {
    for (const auto& f : fields) {
      if (path == f.member || (path.starts_with(f.member) && path.size() > f.member.size() &&
                               (path[f.member.size()] == '.' || path[f.member.size()] == '['))) {
        return &f;
      }
    }
    return nullptr;
  }
  [[nodiscard]] std::string keyTerms(std::string text) const {
    std::vector<std::string_view> members;
    std::vector<std::string_view> names;
    for (const auto& f : fields) {
      members.push_back(f.member);
      names.push_back(f.name);
    }
    return inKeyTerms(std::move(text), members, names);
  }
  // The value written for `member` inside `f`'s object when `f` spans members of T, else null.
  [[nodiscard]] static const Json* spannedKey(const Field<T>& f, std::string_view member,
                                              const Json& written) {
    if (f.keyOf == nullptr || !written.is_object()) return nullptr;
    const std::string_view key = f.keyOf(member);
    const auto it = key.empty() ? written.end() : written.find(std::string(key));
    return it == written.end() ? nullptr : &*it;
  }
  // Reports the rule broken at `f` (and `other`, when the rule is between two): at the key the
  // document wrote, `f`'s first; nothing when either key is bad (already reported).
  void report(Errors& errors, const std::string& pointer, const Seen& seen, const Field<T>& f,
              const Field<T>* other, const core::OptionError& e) const {
    if (!seen.usable(f.name) || (other != nullptr && !seen.usable(other->name))) return;
    if (const Json* v = seen.written(f.name)) {
      if (const Json* inner = spannedKey(f, e.field(), *v)) {
        errors.add(childPointer(childPointer(pointer, f.name), f.keyOf(e.field())), *inner,
                   keyTerms(e.expected()));
        return;
      }
      // A part of the key's value ("address.port"): named, as the value is the whole key's.
      const std::string_view part =
          std::string_view(e.field()).substr(std::min(e.field().size(), f.member.size() + 1));
      errors.add(
          childPointer(pointer, f.name), *v,
          part.empty() ? keyTerms(e.expected()) : std::string(part) + " " + keyTerms(e.expected()));
    } else if (const Json* w = other != nullptr ? seen.written(other->name) : nullptr) {
      errors.add(childPointer(pointer, other->name), *w, keyTerms(e.otherExpected()));
    } else {
      // Nothing written: the defaults themselves break the rule (a base policy the caller chose).
      errors.add(childPointer(pointer, f.name), Json(nullptr), keyTerms(e.expected()));
    }
  }
  void applyRules(Errors& errors, const std::string& pointer, Seen& seen, T& out,
                  const T& base) const {
    for (std::size_t round = 0; round <= fields.size(); ++round) {
      try {
        validate(out);
        return;
      } catch (const core::OptionError& e) {
        const Field<T>* f = owner(e.field());
        const Field<T>* other = e.other().empty() ? nullptr : owner(e.other());
        if (f == nullptr) {  // a member without a key: the layer's rule, not the document's
          errors.add(pointer, Json(e.what()), "options the layer accepts");
          return;
        }
        report(errors, pointer, seen, *f, other, e);
        seen.bad(f->name);
        f->assign(out, base);
        if (other != nullptr) other->assign(out, base);
      }
    }
  }
};

// The table line of an object key whose keys are members of S itself (`Inner`, a Section<S>):
// e.g. "hedging" over ClusterOptions' hedge, hedgeDelay and maxExtraPercent. It reads, writes,
// compares and resets those members only; `member` is the one whose rules across keys (checked by
// the enclosing section) are reported at its key inside the object.
template <typename S, const auto& Inner>
constexpr Field<S> spanField(std::string_view name, std::string_view member,
                             std::string_view description) {
  return Field<S>{name,
                  member,
                  description,
                  [](Errors& e, const Json& v, const std::string& p, S& s, const Context& c) {
                    return Inner.read(e, v, p, s, c);
                  },
                  [](const S& s) { return Inner.write(s); },
                  [](const S& a, const S& b) { return Inner.same(a, b); },
                  [](KeyNode& n, const S& d) { Inner.describe(n, d); },
                  [](S& to, const S& from) {
                    for (const auto& f : Inner.fields) f.assign(to, from);
                  },
                  [](std::string_view m) {
                    for (const auto& f : Inner.fields) {
                      if (f.member == m) return f.name;
                    }
                    return std::string_view{};
                  }};
}

}  // namespace wheelbeat::config::detail
