// The doctest runner of every test executable. Its implementation is the costliest translation
// unit of the suite (15-30 s per build tree), so it is compiled once, into
// wheelbeat_test_main, instead of once per executable.
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>
