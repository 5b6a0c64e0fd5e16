// Compiled with -std=c++17 by the embed_cxx17 test: the first error must be wheelbeat's own.
#include <wheelbeat/core/metrics.h>

int main() { return 0; }
