/// \file
/// A declaration for the API reference only (docs/Doxyfile reads it; nothing compiles it): fmt's
/// formatter, so that the reference can show the fmt::formatter specialisations wheelbeat's
/// headers declare for their printable types (durations, errors, close reasons).
namespace fmt {
/// fmt's formatter (fmt/format.h), specialised by wheelbeat for its printable types.
template <typename T, typename Char = char, typename Enable = void>
struct formatter {};
}  // namespace fmt
