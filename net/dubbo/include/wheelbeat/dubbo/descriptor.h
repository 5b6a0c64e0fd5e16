// JVM parameter descriptors: how a Dubbo 2 request names its method's parameter types, e.g.
// `Ljava/lang/String;I[B` for (String, int, byte[]). Java type names (as a Java programmer writes
// them, or as Class.getName() prints them) become descriptors and back:
//
//   descriptorOf("java.lang.String")   -> "Ljava/lang/String;"
//   descriptorOf("int")                -> "I"         (boolean Z, byte B, char C, short S, long J,
//                                                       float F, double D)
//   descriptorOf("byte[]") / ("[B")    -> "[B"        (also "java.lang.String[]",
//   "[Ljava.lang.String;") descriptorOf({"java.lang.String", "int"}) -> "Ljava/lang/String;I"
//   splitDescriptor("Ljava/lang/String;I[B") -> {"Ljava/lang/String;", "I", "[B"}
//   javaTypeOf("[Ljava/lang/String;")  -> "java.lang.String[]"
//
// Errors: std::invalid_argument naming the input, the position and what was expected, e.g.
// `dubbo: descriptor "Ljava/lang/String" at char 0: class name without its closing ';'`.
// Pure functions; thread: any.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace wheelbeat::dubbo {

/// The descriptor of one Java type name: a primitive ("int"), a class ("java.util.List",
/// nested classes with '$'), an array as "T[]" (any depth) or in Class.getName()'s form ("[I",
/// "[Ljava.lang.String;"). Throws std::invalid_argument for an empty or malformed name.
std::string descriptorOf(std::string_view javaType);
/// The descriptors of several types, concatenated (an empty list gives "", a method without
/// parameters).
std::string descriptorOf(const std::vector<std::string>& javaTypes);

/// The parameter descriptors of a method descriptor, in order (views into `descriptor`).
/// "" gives none. Throws std::invalid_argument for a malformed descriptor (an unknown letter, a
/// class without ';', an array without its element, 'V' as a parameter).
std::vector<std::string_view> splitDescriptor(std::string_view descriptor);

/// The Java type name of one field descriptor ("I" -> "int", "[B" -> "byte[]",
/// "Ljava/util/Map;" -> "java.util.Map"). Throws std::invalid_argument when `field` is not
/// exactly one descriptor.
std::string javaTypeOf(std::string_view field);

}  // namespace wheelbeat::dubbo
