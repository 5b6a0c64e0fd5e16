// CallView and Answer (call_view.h): a call's views over its scanned body or its decoded Request,
// and the answer written through the call's reply state.
#include "provider_impl.h"
#include "request_decoder.h"

#include <wheelbeat/dubbo/call_view.h>

#include <fmt/format.h>

#include <stdexcept>

namespace wheelbeat::dubbo {

namespace detail {

CallView CallViewAccess::of(const ScannedCall& call, std::string_view body,
                            const BodyLimits& limits) {
  CallView v;
  v.dubboVersion_ = call.dubboVersion;
  v.path_ = call.path;
  if (!call.nullVersion) v.version_ = call.version;
  v.method_ = call.method;
  v.descriptor_ = call.descriptor;
  v.scanned_ = &call;
  v.body_ = body;
  v.limits_ = &limits;
  return v;
}

CallView CallViewAccess::of(const Request& request) {
  CallView v;
  v.dubboVersion_ = request.dubboVersion;
  v.path_ = request.path;
  if (request.version) v.version_ = *request.version;
  v.method_ = request.method;
  v.descriptor_ = request.descriptor;
  v.request_ = &request;
  return v;
}

}  // namespace detail

std::size_t CallView::argCount() const {
  return scanned_ != nullptr ? scanned_->args.size() : request_->args.size();
}

std::optional<std::string_view> CallView::stringArg(std::size_t i) const {
  if (i >= argCount()) {
    throw std::out_of_range(
        fmt::format("dubbo: CallView: argument {} of a call with {}", i, argCount()));
  }
  if (scanned_ != nullptr) return scanned_->args[i];  // the fast path's arguments are strings
  const hessian::Value& v = request_->args[i];
  if (v.type() != hessian::Type::String) return std::nullopt;
  return std::string_view(v.asString());
}

hessian::Value CallView::arg(std::size_t i) const {
  if (scanned_ != nullptr) return hessian::Value::string(std::string(*stringArg(i)));
  (void)stringArg(i);  // throws for i out of range
  return request_->args[i];
}

std::string_view CallView::attachment(std::string_view key, std::string_view fallback) const {
  if (scanned_ == nullptr) return request_->attachments.stringOr(key, fallback);
  for (const auto& [k, v] : scanned_->attachments) {
    if (k == key) return v;
  }
  return fallback;
}

const Request& CallView::request() const {
  if (request_ != nullptr) return *request_;
  if (!decoded_) decoded_ = std::make_unique<Request>(decodeRequest(body_, *limits_));
  return *decoded_;
}

bool Answer::string(std::string_view s) { return detail::sendString(state_, s); }

bool Answer::value(const hessian::Value& value) {
  return detail::sendResult(state_, Result::ofValue(value));
}

bool Answer::exception(std::string_view className, std::string_view message) {
  Result result;
  result.kind = ResultKind::Exception;
  result.value = makeThrowable(className, message);
  return detail::sendResult(state_, result);
}

bool Answer::error(std::uint8_t status, std::string_view message) {
  return detail::sendError(state_, status, message);
}

bool Answer::answered() const { return !state_.twoWay || state_.answered.load(); }

}  // namespace wheelbeat::dubbo
