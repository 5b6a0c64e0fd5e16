#include <wheelbeat/dubbo/consumer.h>
#include <wheelbeat/dubbo/descriptor.h>
#include <wheelbeat/dubbo/exception.h>
#include <wheelbeat/tasks/error_names.h>

#include <fmt/format.h>

#include <stdexcept>

namespace wheelbeat::dubbo {

namespace {

// One encoder per thread, its buffer's capacity kept from call to call.
hessian::Encoder& threadEncoder() {
  thread_local hessian::Encoder encoder;
  encoder.reset();
  return encoder;
}

void setUnlessGiven(Attachments& a, const Attachments& given, std::string_view key,
                    std::string value) {
  if (given.find(key) == nullptr) a.set(key, hessian::Value::string(std::move(value)));
}

Outcome errorOutcome(std::string error, std::uint8_t status, std::string message) {
  Outcome out;
  out.error = std::move(error);
  out.status = status;
  out.message = std::move(message);
  return out;
}

Outcome fromResult(Result result, std::uint8_t statusByte) {
  Outcome out;
  out.status = statusByte;
  out.attachments = std::move(result.attachments);
  if (result.kind == ResultKind::Exception) {
    const ApplicationException e = describeThrowable(result.value);
    out.kind = OutcomeKind::Exception;
    out.exceptionClass = e.className();
    out.message = e.message();
  } else {
    out.kind = OutcomeKind::Value;
  }
  out.value = std::move(result.value);
  return out;
}

}  // namespace

std::string_view outcomeKindName(OutcomeKind kind) noexcept {
  switch (kind) {
    case OutcomeKind::Value: return "value";
    case OutcomeKind::Exception: return "exception";
    case OutcomeKind::Error: return "error";
  }
  return "?";
}

Call genericCall(Call service, std::string method, std::vector<std::string> types,
                 std::vector<hessian::Value> args) {
  if (types.size() != args.size()) {
    throw std::invalid_argument(fmt::format("dubbo: genericCall {}: {} types for {} args", method,
                                            types.size(), args.size()));
  }
  for (const auto& t : types) (void)descriptorOf(t);  // names a bad type now, not remotely
  std::vector<hessian::Value> typeValues;
  typeValues.reserve(types.size());
  for (auto& t : types) typeValues.push_back(hessian::Value::string(std::move(t)));
  service.method = "$invoke";
  service.descriptor = "Ljava/lang/String;[Ljava/lang/String;[Ljava/lang/Object;";
  service.args = {hessian::Value::string(std::move(method)),
                  hessian::Value::list(hessian::makeList("[string", std::move(typeValues))),
                  hessian::Value::list(hessian::makeList("[object", std::move(args)))};
  service.attachments.set("generic", hessian::Value::string("true"));
  return service;
}

Request makeRequest(const Call& call) {
  if (call.interface.empty() || call.method.empty()) {
    throw std::invalid_argument(
        fmt::format("dubbo: Call: interface = \"{}\", method = \"{}\" (expected both non-empty)",
                    call.interface, call.method));
  }
  if (call.timeout.count() <= 0) {
    throw std::invalid_argument(
        fmt::format("dubbo: Call.timeout = {}ms (expected > 0)", call.timeout.count()));
  }
  Request r;
  r.path = call.interface;
  if (!call.version.empty()) r.version = call.version;
  r.method = call.method;
  r.descriptor = call.descriptor;
  r.args = call.args;
  r.attachments = call.attachments;
  const Attachments& given = call.attachments;
  setUnlessGiven(r.attachments, given, "path", call.interface);
  setUnlessGiven(r.attachments, given, "interface", call.interface);
  if (!call.version.empty()) setUnlessGiven(r.attachments, given, "version", call.version);
  if (!call.group.empty()) setUnlessGiven(r.attachments, given, "group", call.group);
  setUnlessGiven(r.attachments, given, "timeout", std::to_string(call.timeout.count()));
  if (!call.application.empty()) {
    setUnlessGiven(r.attachments, given, "application", call.application);
  }
  return r;
}

Outcome interpret(const net::CallResult& result, const BodyLimits& limits) {
  if (result.status != net::CallStatus::Ok) {
    return errorOutcome(std::string(net::errorName(result)), 0, result.error);
  }
  if (result.frameStatus != status::kOk) {
    std::string message;
    try {
      message = decodeErrorMessage(result.body, limits);
    } catch (const BodyError& e) {
      message = e.what();
    }
    return errorOutcome(std::string(net::errorName(result)), result.frameStatus,
                        fmt::format("status {} ({}): {}", result.frameStatus,
                                    statusName(result.frameStatus), message));
  }
  try {
    return fromResult(decodeResult(result.body, limits), result.frameStatus);
  } catch (const BodyError& e) {
    return errorOutcome(std::string(tasks::errors::kRejected), status::kBadResponse, e.what());
  }
}

void invoke(net::Channel& channel, const Call& call, OutcomeCallback done,
            const BodyLimits& limits) {
  hessian::Encoder& enc = threadEncoder();
  encodeRequest(makeRequest(call), enc);
  const net::RequestResult sent = channel.request(
      enc.buffer(), call.timeout,
      [done, limits](const net::CallResult& result) { done(interpret(result, limits)); });
  if (sent.sent != net::SendResult::Queued) {
    done(errorOutcome(std::string(net::errorName(sent.sent)), 0,
                      fmt::format("request not sent: {}", net::sendResultName(sent.sent))));
  }
}

void invoke(cluster::ServiceClient& client, const Call& call, OutcomeCallback done,
            cluster::CallOptions options, const BodyLimits& limits) {
  std::string body = encodeRequest(makeRequest(call));
  client.call(std::move(body), std::move(options),
              [done = std::move(done), limits](const cluster::CallOutcome& o) {
                Outcome out;
                const bool answered =
                    o.response.status == net::CallStatus::Ok && o.response.frameStatus != 0;
                if (o.failsafe || o.failback) {  // Dubbo's empty result; `error` says why
                  out.kind = OutcomeKind::Value;
                  out.message = o.error;
                } else if (o.ok || answered) {
                  out = interpret(o.response, limits);
                } else {
                  out = errorOutcome(o.error, 0,
                                     fmt::format("{} after {} attempt(s)", o.error, o.attempts));
                }
                out.provider = o.provider;
                out.attempts = o.attempts;
                out.hedgeWon = o.hedgeWon;
                out.latency = o.latency;
                done(out);
              });
}

}  // namespace wheelbeat::dubbo
