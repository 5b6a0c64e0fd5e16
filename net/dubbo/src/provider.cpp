#include "provider_impl.h"

#include <wheelbeat/core/log.h>
#include <wheelbeat/dubbo/descriptor.h>

#include <fmt/format.h>

#include <algorithm>
#include <optional>
#include <stdexcept>

namespace wheelbeat::dubbo {

namespace {

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

}  // namespace

std::string_view normalVersion(std::string_view version) {
  return version == "0.0.0" ? std::string_view() : version;
}

std::string serviceKey(std::string_view group, std::string_view path, std::string_view version) {
  std::string key = group.empty() ? std::string(path) : fmt::format("{}/{}", group, path);
  if (!version.empty()) key += fmt::format(":{}", version);
  return key;
}

void Provider::Impl::add(const ServiceId& service, std::string method, std::string descriptor,
                         AsyncHandler handler, InPlaceHandler inPlace) {
  if (service.interface.empty()) {
    throw std::invalid_argument(
        "dubbo: Provider::add: ServiceId.interface = \"\" (expected a name)");
  }
  if (method.empty()) {
    throw std::invalid_argument(fmt::format(
        "dubbo: Provider::add: method of {} = \"\" (expected a name)", service.interface));
  }
  if (!handler && !inPlace) throw std::invalid_argument("dubbo: Provider::add: empty handler");
  if (descriptor != kAnyMethod) (void)splitDescriptor(descriptor);  // throws naming it
  const std::string version(normalVersion(service.version));
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
  it->methods.push_back(
      {std::move(method), std::move(descriptor), std::move(handler), std::move(inPlace)});
  id = nextId();  // the matches threads remember were made without this method
}

std::uint64_t Provider::Impl::nextId() {
  static std::atomic<std::uint64_t> next{1};
  return next.fetch_add(1, std::memory_order_relaxed);
}

Provider::Provider(BodyLimits limits) : impl_(std::make_shared<Impl>()) {
  limits.validate();
  impl_->limits = limits;
}

Provider::~Provider() = default;

void Provider::add(const ServiceId& service, std::string method, std::string descriptor,
                   Handler handler) {
  if (!handler) throw std::invalid_argument("dubbo: Provider::add: empty handler");
  impl_->add(service, std::move(method), std::move(descriptor), wrap(std::move(handler)), {});
}

void Provider::addAsync(const ServiceId& service, std::string method, std::string descriptor,
                        AsyncHandler handler) {
  if (!handler) throw std::invalid_argument("dubbo: Provider::addAsync: empty handler");
  impl_->add(service, std::move(method), std::move(descriptor), std::move(handler), {});
}

void Provider::addInPlace(const ServiceId& service, std::string method, std::string descriptor,
                          InPlaceHandler handler) {
  if (!handler) throw std::invalid_argument("dubbo: Provider::addInPlace: empty handler");
  impl_->add(service, std::move(method), std::move(descriptor), {}, std::move(handler));
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

std::vector<std::string> Provider::methods(const ServiceId& service) const {
  std::vector<std::string> out;
  const std::string_view version = normalVersion(service.version);
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
  using C = detail::Counters;
  return {c.sum(C::kRequests), c.sum(C::kValues), c.sum(C::kExceptions), c.sum(C::kErrors)};
}

}  // namespace wheelbeat::dubbo
