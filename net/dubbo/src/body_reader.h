// Reads the Hessian values of one Dubbo body in order, turning every refusal into a BodyError
// that names the body, the field and its byte offset. Internal to net/dubbo.
#pragma once

#include <wheelbeat/dubbo/body.h>
#include <wheelbeat/hessian/decoder.h>

#include <cstddef>
#include <string>
#include <string_view>

namespace wheelbeat::dubbo::detail {

class BodyReader {
public:
  // `body` names the body in errors ("dubbo request body"). Throws BodyError for invalid
  // limits or a body above limits.hessian.maxTotalBytes.
  BodyReader(std::string_view bytes, const BodyLimits& limits, std::string_view body);

  // The next value, as field `field`.
  hessian::Value read(std::string_view field);
  // Argument i (from 0) of n, of parameter descriptor `param` (its field name is only formatted
  // on a refusal: arguments are read on every call).
  hessian::Value readArgument(std::size_t i, std::size_t n, std::string_view param);
  std::string readString(std::string_view field);
  // A string, or nullopt for Hessian null.
  std::optional<std::string> readOptionalString(std::string_view field);
  // An int (Dubbo's writeByte is Hessian's writeInt).
  std::int32_t readInt(std::string_view field);
  // The attachments map (string keys, at most maxAttachments entries).
  Attachments readAttachments();
  // Fails unless every byte was read.
  void expectEnd(std::string_view after);

  bool atEnd() const { return decoder_.atEnd(); }
  std::size_t offset() const { return decoder_.offset(); }
  const BodyLimits& limits() const { return limits_; }
  [[noreturn]] void fail(std::size_t at, std::string_view field, std::string_view what) const;

private:
  const BodyLimits& limits_;
  std::string_view body_;
  hessian::Decoder decoder_;
};

}  // namespace wheelbeat::dubbo::detail
