#include "body_reader.h"

#include <wheelbeat/dubbo/body.h>
#include <wheelbeat/dubbo/descriptor.h>

#include <fmt/format.h>

#include <stdexcept>
#include <variant>

namespace wheelbeat::dubbo {

namespace {

// An attachment's key (a string: adopt() and set() see to it), without the checked accessor's
// call: find() runs for every call's version and group.
std::string_view keyOf(const hessian::Value& key) {
  const auto* s = std::get_if<std::string>(&key.storage());
  return s != nullptr ? std::string_view(*s) : std::string_view();
}

}  // namespace

std::string_view statusName(std::uint8_t code) noexcept {
  switch (code) {
    case status::kOk: return "ok";
    case status::kClientTimeout: return "client-timeout";
    case status::kServerTimeout: return "server-timeout";
    case status::kChannelInactive: return "channel-inactive";
    case status::kBadRequest: return "bad-request";
    case status::kBadResponse: return "bad-response";
    case status::kServiceNotFound: return "service-not-found";
    case status::kServiceError: return "service-error";
    case status::kServerError: return "server-error";
    case status::kClientError: return "client-error";
    case status::kThreadPoolExhausted: return "thread-pool-exhausted";
    default: return "unknown";
  }
}

BodyError::BodyError(std::size_t offset, const std::string& what)
    : std::runtime_error(what), offset_(offset) {}

void BodyLimits::validate() const {
  hessian.validate();
  if (maxArguments == 0) {
    throw std::invalid_argument("dubbo: BodyLimits.maxArguments = 0 (expected >= 1)");
  }
  if (maxAttachments == 0) {
    throw std::invalid_argument("dubbo: BodyLimits.maxAttachments = 0 (expected >= 1)");
  }
}

Attachments::Attachments(const Attachments& other)
    : map_(other.empty() ? nullptr : hessian::makeMap(other.map_->type, other.map_->entries)) {}

Attachments& Attachments::operator=(const Attachments& other) {
  if (this != &other) {
    map_ = other.empty() ? nullptr : hessian::makeMap(other.map_->type, other.map_->entries);
  }
  return *this;
}

hessian::MapPtr Attachments::map() const { return map_ ? map_ : hessian::makeMap(); }

void Attachments::set(std::string_view key, hessian::Value value) {
  if (!map_) map_ = hessian::makeMap();
  for (auto& [k, v] : map_->entries) {
    if (keyOf(k) == key) {
      v = std::move(value);
      return;
    }
  }
  map_->entries.emplace_back(hessian::Value::string(std::string(key)), std::move(value));
}

const hessian::Value* Attachments::find(std::string_view key) const {
  if (!map_) return nullptr;
  for (const auto& [k, v] : map_->entries) {
    if (keyOf(k) == key) return &v;
  }
  return nullptr;
}

std::string_view Attachments::stringOr(std::string_view key, std::string_view fallback) const {
  const hessian::Value* v = find(key);
  return v != nullptr && v->type() == hessian::Type::String ? std::string_view(v->asString())
                                                            : fallback;
}

Attachments Attachments::adopt(hessian::MapPtr map, std::size_t offset) {
  if (!map) return {};
  const auto& entries = map->entries;
  for (std::size_t i = 0; i < entries.size(); ++i) {
    const hessian::Value& key = entries[i].first;
    if (key.type() != hessian::Type::String) {
      throw BodyError(offset, fmt::format("key of entry {} is {} (expected a string)", i,
                                          hessian::typeName(key.type())));
    }
    for (std::size_t j = 0; j < i; ++j) {
      if (keyOf(entries[j].first) == keyOf(key)) {
        throw BodyError(
            offset, fmt::format("key \"{}\" of entry {} repeats entry {}", key.asString(), i, j));
      }
    }
  }
  Attachments out;
  map->type.clear();  // a typed map (java.util.HashMap) is written back untyped, as Java does
  out.map_ = std::move(map);
  return out;
}

void encodeRequest(const Request& request, hessian::Encoder& enc) {
  const std::size_t params = splitDescriptor(request.descriptor).size();
  if (params != request.args.size()) {
    throw std::invalid_argument(
        fmt::format("dubbo: request {}.{}: {} args for descriptor \"{}\" ({} parameters)",
                    request.path, request.method, request.args.size(), request.descriptor, params));
  }
  enc.writeString(request.dubboVersion);
  enc.writeString(request.path);
  if (request.version) {
    enc.writeString(*request.version);
  } else {
    enc.writeNull();
  }
  enc.writeString(request.method);
  enc.writeString(request.descriptor);
  for (const auto& arg : request.args) enc.write(arg);
  enc.write(hessian::Value::map(request.attachments.map()));
}

std::string encodeRequest(const Request& request) {
  hessian::Encoder enc;
  encodeRequest(request, enc);
  return std::move(enc.buffer());
}

Request decodeRequest(std::string_view body, const BodyLimits& limits) {
  detail::BodyReader in(body, limits, "dubbo request body");
  Request out;
  out.dubboVersion = in.readString("dubbo version");
  out.path = in.readString("service path");
  out.version = in.readOptionalString("service version");
  out.method = in.readString("method name");
  const std::size_t descriptorAt = in.offset();
  out.descriptor = in.readString("parameter descriptor");
  std::vector<std::string_view> params;
  try {
    params = splitDescriptor(out.descriptor);
  } catch (const std::invalid_argument& e) {
    in.fail(descriptorAt, "parameter descriptor", e.what());
  }
  if (params.size() > limits.maxArguments) {
    in.fail(
        descriptorAt, "parameter descriptor",
        fmt::format("{} parameters exceed maxArguments = {}", params.size(), limits.maxArguments));
  }
  out.args.reserve(params.size());
  for (std::size_t i = 0; i < params.size(); ++i) {
    out.args.push_back(in.readArgument(i, params.size(), params[i]));
  }
  if (in.atEnd()) return out;
  out.attachments = in.readAttachments();
  in.expectEnd("attachments");
  return out;
}

}  // namespace wheelbeat::dubbo
