// wheelbeat's public headers need C++20 (concepts, std::span, defaulted comparisons). Included
// first by every header that includes no other wheelbeat header, so that a consumer compiling
// below C++20 reads this line before any error from deep inside a header.
#pragma once

#if defined(_MSVC_LANG) ? _MSVC_LANG < 202002L : __cplusplus < 202002L
#error \
    "wheelbeat needs C++20: compile with -std=c++20 or later (CMake targets wheelbeat::* ask for it; with pkg-config, add -std=c++20)"
#endif
