// Shared by the hessian tests: hex text, and the matrix of values (matrix.cpp) that the round
// trips and the Java oracle both use. Each case's name is also its recipe: the Java oracle
// (java/HessianOracle.java) builds the same value from the same name.
#pragma once

#include <wheelbeat/hessian/decoder.h>
#include <wheelbeat/hessian/encoder.h>
#include <wheelbeat/hessian/value.h>

#include <string>
#include <string_view>
#include <vector>

namespace wbhessian {

using namespace wheelbeat::hessian;

std::string hex(std::string_view bytes);
std::string unhex(std::string_view text);

struct Case {
  std::string name;
  Value value;
  // Java's bytes are canonical: they do not depend on where the value lands in Java's output
  // buffer (binary chunks above 8189 bytes do), and Java keeps what the value says (it writes
  // -0.0 as 0.0).
  bool javaCanonical = true;
};

/// Every case; built fresh on each call.
std::vector<Case> matrix();
/// The value a case name describes (the scalar recipes: "int:-17", "string:1024:pair", ...).
Value scalarFromName(const std::string& name);
/// A string of `units` UTF-16 units cycling through `kind`'s characters (ascii, two, three,
/// pair, mixed), completed with 'a' when a pair would not fit; as the Java oracle builds it.
std::string patternString(std::size_t units, std::string_view kind);

}  // namespace wbhessian
