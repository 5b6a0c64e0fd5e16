// The object whose compile builds the precompiled header every test target reuses
// (wheelbeat_test_pch, tests/CMakeLists.txt). Nothing of its own.
