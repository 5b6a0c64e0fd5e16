#include "body_reader.h"

#include <fmt/format.h>

#include <stdexcept>

namespace wheelbeat::dubbo::detail {

namespace {

hessian::Decoder makeDecoder(std::string_view bytes, const BodyLimits& limits,
                             std::string_view body) {
  try {
    limits.validate();
    return hessian::Decoder(bytes, limits.hessian);
  } catch (const hessian::DecodeError& e) {
    throw BodyError(0, fmt::format("{}: {}", body, e.what()));
  } catch (const std::invalid_argument& e) {
    throw BodyError(0, fmt::format("{}: {}", body, e.what()));
  }
}

}  // namespace

BodyReader::BodyReader(std::string_view bytes, const BodyLimits& limits, std::string_view body)
    : limits_(limits), body_(body), decoder_(makeDecoder(bytes, limits, body)) {}

void BodyReader::fail(std::size_t at, std::string_view field, std::string_view what) const {
  throw BodyError(at, fmt::format("{}: at byte {}: {}: {}", body_, at, field, what));
}

hessian::Value BodyReader::read(std::string_view field) {
  const std::size_t at = decoder_.offset();
  if (decoder_.atEnd()) fail(at, field, "the body ends here (expected a value)");
  try {
    return decoder_.read();
  } catch (const hessian::DecodeError& e) {
    fail(at, field, e.what());
  }
}

hessian::Value BodyReader::readArgument(std::size_t i, std::size_t n, std::string_view param) {
  const std::size_t at = decoder_.offset();
  if (!decoder_.atEnd()) {
    try {
      return decoder_.read();
    } catch (const hessian::DecodeError& e) {
      fail(at, fmt::format("argument {} of {} ({})", i + 1, n, param), e.what());
    }
  }
  fail(at, fmt::format("argument {} of {} ({})", i + 1, n, param),
       "the body ends here (expected a value)");
}

std::string BodyReader::readString(std::string_view field) {
  const std::size_t at = decoder_.offset();
  hessian::Value v = read(field);
  if (v.type() != hessian::Type::String) {
    fail(at, field, fmt::format("expected a string, got {}", hessian::typeName(v.type())));
  }
  // The local Value owns its string: moved out rather than copied (a body's strings are most of
  // its bytes). The object is not const, so casting the accessor's constness away is sound.
  return std::move(std::get<std::string>(const_cast<hessian::Value::Storage&>(v.storage())));
}

std::optional<std::string> BodyReader::readOptionalString(std::string_view field) {
  const std::size_t at = decoder_.offset();
  hessian::Value v = read(field);
  if (v.isNull()) return std::nullopt;
  if (v.type() != hessian::Type::String) {
    fail(at, field, fmt::format("expected a string or null, got {}", hessian::typeName(v.type())));
  }
  return v.asString();
}

std::int32_t BodyReader::readInt(std::string_view field) {
  const std::size_t at = decoder_.offset();
  const hessian::Value v = read(field);
  if (v.type() != hessian::Type::Int) {
    fail(at, field, fmt::format("expected an int, got {}", hessian::typeName(v.type())));
  }
  return v.asInt();
}

Attachments BodyReader::readAttachments() {
  const std::size_t at = decoder_.offset();
  hessian::Value v = read("attachments");
  if (v.type() != hessian::Type::Map) {
    fail(at, "attachments", fmt::format("expected a map, got {}", hessian::typeName(v.type())));
  }
  const hessian::MapPtr& map = v.asMap();
  if (map->entries.size() > limits_.maxAttachments) {
    fail(at, "attachments",
         fmt::format("{} entries exceed maxAttachments = {}", map->entries.size(),
                     limits_.maxAttachments));
  }
  try {
    return Attachments::adopt(map, at);
  } catch (const BodyError& e) {
    fail(at, "attachments", e.what());
  }
}

void BodyReader::expectEnd(std::string_view after) {
  if (!decoder_.atEnd()) {
    fail(decoder_.offset(), after, "bytes after the end of the body");
  }
}

}  // namespace wheelbeat::dubbo::detail
