// JVM parameter descriptors from Java type names and back, and every malformed one named.
#include "support.h"

#include <doctest/doctest.h>

#include <stdexcept>

using namespace wbdubbo;

namespace {

std::string refusedType(std::string_view type) {
  try {
    (void)descriptorOf(type);
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "no error";
}

std::string refusedDescriptor(std::string_view descriptor) {
  try {
    (void)splitDescriptor(descriptor);
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "no error";
}

}  // namespace

TEST_SUITE("dubbo") {
TEST_CASE("dubbo descriptor: Java type names become JVM descriptors") {
  CHECK(descriptorOf("java.lang.String") == "Ljava/lang/String;");
  CHECK(descriptorOf("int") == "I");
  CHECK(descriptorOf("long") == "J");
  CHECK(descriptorOf("double") == "D");
  CHECK(descriptorOf("boolean") == "Z");
  CHECK(descriptorOf("byte") == "B");
  CHECK(descriptorOf("char") == "C");
  CHECK(descriptorOf("short") == "S");
  CHECK(descriptorOf("float") == "F");
  CHECK(descriptorOf("byte[]") == "[B");
  CHECK(descriptorOf("[B") == "[B");
  CHECK(descriptorOf("int[][]") == "[[I");
  CHECK(descriptorOf("java.lang.String[]") == "[Ljava/lang/String;");
  CHECK(descriptorOf("[Ljava.lang.String;") == "[Ljava/lang/String;");
  CHECK(descriptorOf("java.util.Map$Entry") == "Ljava/util/Map$Entry;");
  CHECK(descriptorOf(std::vector<std::string>{"java.lang.String", "int", "byte[]"}) ==
        "Ljava/lang/String;I[B");
  CHECK(descriptorOf(
            std::vector<std::string>{"java.util.List", "java.util.Map", "java.lang.Object"}) ==
        "Ljava/util/List;Ljava/util/Map;Ljava/lang/Object;");
  CHECK(descriptorOf(std::vector<std::string>{}).empty());
}

TEST_CASE("dubbo descriptor: a bad Java type name is named with the reason") {
  CHECK(refusedType("") == "dubbo: Java type \"\": empty (expected e.g. int or java.lang.String)");
  CHECK(refusedType("java..String") ==
        "dubbo: Java type \"java..String\": empty part in the class name");
  CHECK(refusedType("java.lang.") == "dubbo: Java type \"java.lang.\": class name ends with '.'");
  CHECK(refusedType("a b") == "dubbo: Java type \"a b\": character ' ' in a class name");
  CHECK(refusedType("[]") ==
        "dubbo: Java type \"[]\": array name without a primitive letter or Lclass; element");
  CHECK(refusedType("[X") ==
        "dubbo: Java type \"[X\": array name without a primitive letter or Lclass; element");
  CHECK(refusedType("int[") == "dubbo: Java type \"int[\": character '[' in a class name");
}

TEST_CASE("dubbo descriptor: split into parameters, and back to Java names") {
  const auto parts = splitDescriptor("Ljava/lang/String;I[B[[Ljava/util/Map;J");
  REQUIRE(parts.size() == 5);
  CHECK(parts[0] == "Ljava/lang/String;");
  CHECK(parts[1] == "I");
  CHECK(parts[2] == "[B");
  CHECK(parts[3] == "[[Ljava/util/Map;");
  CHECK(parts[4] == "J");
  CHECK(splitDescriptor("").empty());
  CHECK(javaTypeOf("I") == "int");
  CHECK(javaTypeOf("[B") == "byte[]");
  CHECK(javaTypeOf("[[Ljava/lang/String;") == "java.lang.String[][]");
  CHECK(javaTypeOf("Ljava/util/Map$Entry;") == "java.util.Map$Entry");
  CHECK_THROWS_AS((void)javaTypeOf("II"), std::invalid_argument);
  CHECK_THROWS_AS((void)javaTypeOf(""), std::invalid_argument);
}

TEST_CASE("dubbo descriptor: every malformed descriptor is named at its position") {
  CHECK(refusedDescriptor("Ljava/lang/String") ==
        "dubbo: descriptor \"Ljava/lang/String\" at char 0: class name without its closing ';'");
  CHECK(refusedDescriptor("IL;") == "dubbo: descriptor \"IL;\" at char 1: empty class name");
  CHECK(refusedDescriptor("I[") ==
        "dubbo: descriptor \"I[\" at char 1: array without its element type");
  CHECK(refusedDescriptor("IV") ==
        "dubbo: descriptor \"IV\" at char 1: 'V' (expected one of ZBCSIJFD, L or [)");
  CHECK(refusedDescriptor("La b;") ==
        "dubbo: descriptor \"La b;\" at char 2: character ' ' in a class name");
}
}  // TEST_SUITE("dubbo")
