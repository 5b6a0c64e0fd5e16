// The typed JSON form of Hessian values: how wheelbeat-dubbo reads arguments and prints results,
// so that every Hessian type can be written by hand and survives a round trip.
//
//   JSON null, true/false, "text"      null, bool, string
//   an integer                         int if it fits 32 bits, else long
//   a number with a fraction/exponent  double
//   {"$int": "5"}  {"$long": "5"}      exact int / long (the number as a string, or a number)
//   {"$double": "NaN"}                 exact double ("NaN", "Infinity", "-Infinity", "0.5", 0.5)
//   {"$bytes": "BASE64"}               binary (base64)
//   {"$date": MS}                      java.util.Date, MS milliseconds since the epoch
//   {"$class": "com.example.Point", "x": 1, "y": 2}   an object, fields in order
//   [1, 2]                             an untyped list (ArrayList)
//   {"$list": [1, 2], "$type": "[int"} a typed list (a Java array, a collection class)
//   {"a": 1}                           an untyped map with string keys (HashMap)
//   {"$map": [[1, "one"]], "$type": "java.util.TreeMap"}  a map with keys of any type ($type
//                                      optional)
// Printing always spells long, double, bytes and date explicitly ({"$long": "5"}, {"$double":
// "0.5"}); a map whose keys are not all strings, or one that starts with '$', is printed in the
// $map form; a ref back to an enclosing node (a cycle) prints as {"$backref": "<its type>"}, which
// does not read back.
//
// Errors: std::invalid_argument naming the JSON pointer, the value and what was expected, e.g.
// `typed JSON /0/$int: "x" (expected an integer in -2147483648..2147483647)`.
// Pure functions; thread: any.
#pragma once

#include <wheelbeat/hessian/value.h>

#include <string>
#include <string_view>
#include <vector>

namespace wheelbeat::config {

/// One value from typed JSON text.
hessian::Value valueFromTypedJson(std::string_view json);
/// A JSON array of values (the arguments of a call); "" gives none.
std::vector<hessian::Value> valuesFromTypedJson(std::string_view jsonArray);
/// The typed JSON text of `value`, on one line.
std::string toTypedJson(const hessian::Value& value);

}  // namespace wheelbeat::config
