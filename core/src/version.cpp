// wheelbeat::version(): the version this library was built as (wheelbeat/version.h is generated
// from the project's version by core/CMakeLists.txt).
#include <wheelbeat/version.h>

namespace wheelbeat {

std::string_view version() noexcept { return WHEELBEAT_VERSION_STRING; }

}  // namespace wheelbeat
