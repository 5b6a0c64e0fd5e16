#include "provider_impl.h"

#include <wheelbeat/core/log.h>
#include <wheelbeat/dubbo/descriptor.h>

#include <fmt/format.h>

#include <algorithm>
#include <optional>
#include <stdexcept>

namespace wheelbeat::dubbo {

namespace {

constexpr std::string_view kEcho = "$echo";
constexpr std::string_view kInvoke = "$invoke";
constexpr std::string_view kInvokeDescriptor =
    "Ljava/lang/String;[Ljava/lang/String;[Ljava/lang/Object;";
constexpr std::string_view kDecodeFailure = "Fail to decode request due to: ";

AsyncHandler wrap(Handler handler) {
  return [handler = std::move(handler)](const Request& request, Reply reply) {
    try {
      reply.value(handler(request));
    } catch (const ApplicationException& e) {
      reply.exception(e.className(), e.message());
    } catch (const std::exception& e) {
      reply.exception(kRuntimeException, e.what());
    }
  };
}

std::string serviceKey(std::string_view group, std::string_view path, std::string_view version) {
  std::string key = group.empty() ? std::string(path) : fmt::format("{}/{}", group, path);
  if (!version.empty()) key += fmt::format(":{}", version);
  return key;
}

// Generic invocation ($invoke: method, Java type names, args) as the call it names. Returns an
// error message, or "" when `request` was rewritten.
std::string ungeneric(Request& request) {
  if (request.args.size() != 3 || request.args[0].type() != hessian::Type::String) {
    return "$invoke expects (String method, String[] types, Object[] args)";
  }
  const auto listOf = [](const hessian::Value& v) -> const hessian::List* {
    return v.type() == hessian::Type::List ? v.asList().get() : nullptr;
  };
  const hessian::List* types = listOf(request.args[1]);
  const hessian::List* args = listOf(request.args[2]);
  std::vector<std::string> names;
  for (const auto& t : types != nullptr ? types->items : std::vector<hessian::Value>{}) {
    if (t.type() != hessian::Type::String) return "$invoke: a parameter type is not a string";
    names.push_back(t.asString());
  }
  const std::size_t count = args != nullptr ? args->items.size() : 0;
  if (names.size() != count) {
    return fmt::format("$invoke: {} types for {} args", names.size(), count);
  }
  try {
    request.descriptor = descriptorOf(names);
  } catch (const std::invalid_argument& e) {
    return fmt::format("$invoke: {}", e.what());
  }
  request.method = request.args[0].asString();
  std::vector<hessian::Value> values =
      args != nullptr ? args->items : std::vector<hessian::Value>{};
  request.args = std::move(values);
  return {};
}

// One thread's Request for onFrame (see there).
struct ThreadRequest {
  Request request;
  bool busy = false;
  struct Use {
    explicit Use(ThreadRequest& d) : d_(d) { d_.busy = true; }
    ~Use() { d_.busy = false; }
    Use(const Use&) = delete;
    Use& operator=(const Use&) = delete;

  private:
    ThreadRequest& d_;
  };
};

}  // namespace

std::string normalVersion(std::string_view version) {
  return version == "0.0.0" ? std::string() : std::string(version);
}

void Provider::Impl::add(const ServiceId& service, std::string method, std::string descriptor,
                         AsyncHandler handler) {
  if (service.interface.empty()) {
    throw std::invalid_argument(
        "dubbo: Provider::add: ServiceId.interface = \"\" (expected a name)");
  }
  if (method.empty()) {
    throw std::invalid_argument(fmt::format(
        "dubbo: Provider::add: method of {} = \"\" (expected a name)", service.interface));
  }
  if (!handler) throw std::invalid_argument("dubbo: Provider::add: empty handler");
  if (descriptor != kAnyMethod) (void)splitDescriptor(descriptor);  // throws naming it
  const std::string version = normalVersion(service.version);
  auto it = std::find_if(services.begin(), services.end(), [&](const Service& s) {
    return s.id.interface == service.interface && s.id.version == version &&
           s.id.group == service.group;
  });
  if (it == services.end()) {
    services.push_back({{service.interface, version, service.group}, {}});
    it = std::prev(services.end());
  }
  for (const auto& m : it->methods) {
    if (m.name == method && m.descriptor == descriptor) {
      throw std::invalid_argument(fmt::format("dubbo: Provider::add: {}.{}({}) is served already",
                                              service.interface, method, descriptor));
    }
  }
  it->methods.push_back({std::move(method), std::move(descriptor), std::move(handler)});
}

void Provider::Impl::dispatch(Request& request, const std::shared_ptr<detail::ReplyState>& state) {
  const auto findMethod = [&](const Service& s) -> const Method* {
    const Method* byName = nullptr;
    const Method* any = nullptr;
    for (const auto& m : s.methods) {
      if (m.name == request.method && m.descriptor == request.descriptor) return &m;
      if (m.name == request.method && m.descriptor == kAnyMethod) byName = &m;
      if (m.name == kAnyMethod) any = &m;
    }
    return byName != nullptr ? byName : any;
  };
  const bool echo = request.method == kEcho && request.args.size() == 1;
  bool pathServed = false;
  bool methodServed = echo;
  const Service* match = nullptr;
  const std::string version = normalVersion(request.attachments.stringOr(
      "version", request.version ? std::string_view(*request.version) : std::string_view()));
  const std::string_view group = request.attachments.stringOr("group", "");
  for (const auto& s : services) {
    if (s.id.interface != request.path) continue;
    pathServed = true;
    methodServed = methodServed || findMethod(s) != nullptr;
    if (s.id.version == version && s.id.group == group) match = &s;
  }
  if (!pathServed || !methodServed) {
    (void)detail::sendError(
        *state, status::kBadRequest,
        fmt::format("{}java.lang.IllegalArgumentException: Service not found:{}, {} ({})",
                    kDecodeFailure, request.path, request.method,
                    pathServed ? fmt::format("no method {}({}) in {}", request.method,
                                             request.descriptor, request.path)
                               : fmt::format("no service {} here", request.path)));
    return;
  }
  if (match == nullptr) {
    std::vector<std::string> keys;
    for (const auto& s : services)
      keys.push_back(serviceKey(s.id.group, s.id.interface, s.id.version));
    (void)detail::sendError(
        *state, status::kServiceError,
        fmt::format("Not found exported service: {} in [{}], may be version or group mismatch",
                    serviceKey(group, request.path, version), fmt::join(keys, ", ")));
    return;
  }
  if (echo) {
    (void)detail::sendResult(*state, Result::ofValue(request.args[0]));
    return;
  }
  const Method* method = findMethod(*match);
  if (method == nullptr) {
    (void)detail::sendError(
        *state, status::kBadRequest,
        fmt::format("{}java.lang.IllegalArgumentException: Service not "
                    "found:{}, {} (no method {}({}) in {})",
                    kDecodeFailure, request.path, request.method, request.method,
                    request.descriptor, serviceKey(group, request.path, version)));
    return;
  }
  try {
    method->handler(request, Reply(state));
  } catch (const std::exception& e) {
    Reply(state).exception(kRuntimeException, e.what());
  }
}

Provider::Provider(BodyLimits limits) : impl_(std::make_shared<Impl>()) {
  limits.validate();
  impl_->limits = limits;
}

Provider::~Provider() = default;

void Provider::add(const ServiceId& service, std::string method, std::string descriptor,
                   Handler handler) {
  if (!handler) throw std::invalid_argument("dubbo: Provider::add: empty handler");
  impl_->add(service, std::move(method), std::move(descriptor), wrap(std::move(handler)));
}

void Provider::addAsync(const ServiceId& service, std::string method, std::string descriptor,
                        AsyncHandler handler) {
  impl_->add(service, std::move(method), std::move(descriptor), std::move(handler));
}

net::ChannelHandler Provider::channelHandler() {
  return net::ChannelHandler{
      .onConnected =
          [channels = impl_->channels](net::Channel& ch) {
            const std::lock_guard lock(channels->mutex);
            channels->byId[ch.id()] = &ch;
          },
      .onFrame = [this](net::Channel& ch, const net::FrameView& frame) { onFrame(ch, frame); },
      .onClosed =
          [channels = impl_->channels](net::Channel& ch, const net::CloseReason&) {
            const std::lock_guard lock(channels->mutex);
            channels->byId.erase(ch.id());
          }};
}

void Provider::onFrame(net::Channel& channel, const net::FrameView& frame) {
  if (!frame.isRequest() || frame.isEvent()) return;
  impl_->counters->requests.fetch_add(1, std::memory_order_relaxed);
  auto state =
      std::allocate_shared<detail::ReplyState>(detail::RecyclingAllocator<detail::ReplyState>{});
  state->channels = impl_->channels;
  state->counters = impl_->counters.get();
  state->channelId = channel.id();
  state->requestId = frame.id;
  state->serialization = frame.serialization();
  state->twoWay = frame.isTwoWay();
  const detail::InlineScope inlineReply(*state, channel);
  if (frame.serialization() != net::kHessian2) {
    (void)detail::sendError(*state, status::kBadRequest,
                            fmt::format("{}serialization id {} (expected 2, hessian2)",
                                        kDecodeFailure, frame.serialization()));
    return;
  }
  // The loop thread's Request, reused from call to call (its strings, argument values and
  // attachments node keep their capacity); a fresh one when a handler's work reaches another
  // onFrame on this thread while the first is still in use.
  thread_local ThreadRequest reused;
  std::optional<ThreadRequest> fresh;
  ThreadRequest& d = reused.busy ? fresh.emplace() : reused;
  const ThreadRequest::Use use(d);
  Request& request = d.request;
  try {
    decodeRequest(frame.body, request, impl_->limits);
  } catch (const BodyError& e) {
    (void)detail::sendError(*state, status::kBadRequest,
                            fmt::format("{}{}", kDecodeFailure, e.what()));
    return;
  }
  state->dubboVersion = request.dubboVersion;
  if (request.method == kInvoke && request.descriptor == kInvokeDescriptor) {
    const std::string why = ungeneric(request);
    if (!why.empty()) {
      (void)detail::sendError(*state, status::kBadRequest,
                              fmt::format("{}{}", kDecodeFailure, why));
      return;
    }
  }
  impl_->dispatch(request, state);
}

std::vector<std::string> Provider::methods(const ServiceId& service) const {
  std::vector<std::string> out;
  const std::string version = normalVersion(service.version);
  for (const auto& s : impl_->services) {
    if (s.id.interface != service.interface || s.id.version != version ||
        s.id.group != service.group) {
      continue;
    }
    for (const auto& m : s.methods) {
      if (m.name != kAnyMethod) out.push_back(m.name);
    }
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

std::string Provider::providerUrl(registry::ServiceOptions options, const net::Endpoint& advertised,
                                  std::chrono::nanoseconds heartbeat) const {
  options.methods = methods({options.interface, options.version, options.group});
  if (options.methods.empty()) {
    throw std::invalid_argument(
        fmt::format("dubbo: Provider::providerUrl: no method served for {} (expected add() first)",
                    serviceKey(options.group, options.interface, normalVersion(options.version))));
  }
  return registry::providerUrl(options, advertised, heartbeat);
}

Provider::Stats Provider::stats() const {
  const auto& c = *impl_->counters;
  return {c.requests.load(), c.values.load(), c.exceptions.load(), c.errors.load()};
}

}  // namespace wheelbeat::dubbo
