// Provider (provider.h): one call, from its frame to its answer. A body of the fast path's shape
// (request_decoder.h) is matched against the services while still in place, and filled into the
// thread's reused Request only when the method's handler takes one; any other body is decoded
// into a Request first. Both ways answer alike: same matching, same errors.
#include "provider_impl.h"
#include "request_decoder.h"

#include <wheelbeat/dubbo/descriptor.h>

#include <fmt/format.h>

#include <optional>
#include <stdexcept>

namespace wheelbeat::dubbo {

namespace {

constexpr std::string_view kEcho = "$echo";
constexpr std::string_view kInvoke = "$invoke";
constexpr std::string_view kInvokeDescriptor =
    "Ljava/lang/String;[Ljava/lang/String;[Ljava/lang/Object;";
constexpr std::string_view kDecodeFailure = "Fail to decode request due to: ";
constexpr std::string_view kNoAnswer = "the provider's handler returned without an answer";

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

// One thread's call storage for onFrame: the scan's views and the Request a handler gets.
struct ThreadCall {
  detail::ScannedCall scanned;
  Request request;
  bool busy = false;
  struct Use {
    explicit Use(ThreadCall& d) : d_(d) { d_.busy = true; }
    ~Use() { d_.busy = false; }
    Use(const Use&) = delete;
    Use& operator=(const Use&) = delete;

  private:
    ThreadCall& d_;
  };
};

// The service version and group a scanned call asks for: its "version" attachment, else the
// header's, and its "group" attachment ("" none). One pass over the attachments.
std::pair<std::string_view, std::string_view> versionAndGroup(const detail::ScannedCall& call) {
  std::string_view version = call.version;
  std::string_view group;
  for (const auto& [k, v] : call.attachments) {
    if (detail::sameText(k, "version")) {
      version = v;
    } else if (detail::sameText(k, "group")) {
      group = v;
    }
  }
  return {version, group};
}

// Runs an in-place handler: its exceptions answer as a Handler's do; no answer at all is an error.
void runInPlace(const InPlaceHandler& handler, const CallView& view, detail::ReplyState& state) {
  Answer answer = detail::CallViewAccess::answer(state);
  try {
    handler(view, answer);
  } catch (const ApplicationException& e) {
    answer.exception(e.className(), e.message());
  } catch (const std::exception& e) {
    answer.exception(kRuntimeException, e.what());
  }
  if (!answer.answered()) (void)detail::sendError(state, status::kServiceError, kNoAnswer);
}

// A thread's last match (calls repeat: one service, one method, one caller's attachments): the
// key as it was matched and what serves it, for the provider of that id (renewed by each add()).
struct LastMatch {
  std::uint64_t provider = 0;  // 0: none
  std::string path, method, descriptor, version, group;
  bool echo = false;
  const void* served = nullptr;  // the Method, or nullptr for an echo

  bool matches(std::uint64_t id, const Provider::Impl::Key& k) const {
    return provider == id && echo == k.echo && detail::sameText(method, k.method) &&
           detail::sameText(path, k.path) && detail::sameText(descriptor, k.descriptor) &&
           detail::sameText(version, k.version) && detail::sameText(group, k.group);
  }
  void remember(std::uint64_t id, const Provider::Impl::Key& k, const void* servedBy) {
    provider = id;
    path.assign(k.path);
    method.assign(k.method);
    descriptor.assign(k.descriptor);
    version.assign(k.version);
    group.assign(k.group);
    echo = k.echo;
    served = servedBy;
  }
};

}  // namespace

std::optional<const Provider::Impl::Method*> Provider::Impl::dispatch(
    const Key& key, detail::ReplyState& state) const {
  thread_local LastMatch last;
  if (last.matches(id, key)) return static_cast<const Method*>(last.served);
  const auto found = match(key, state);
  if (found) last.remember(id, key, *found);
  return found;
}

std::optional<const Provider::Impl::Method*> Provider::Impl::match(
    const Key& key, detail::ReplyState& state) const {
  const auto findMethod = [&](const Service& s) -> const Method* {
    const Method* byName = nullptr;
    const Method* any = nullptr;
    for (const auto& m : s.methods) {
      const bool sameName = detail::sameText(m.name, key.method);
      if (sameName && detail::sameText(m.descriptor, key.descriptor)) return &m;
      if (sameName && m.descriptor == kAnyMethod) byName = &m;
      if (m.name == kAnyMethod) any = &m;
    }
    return byName != nullptr ? byName : any;
  };
  bool pathServed = false;
  bool methodServed = key.echo;
  const Service* matched = nullptr;
  for (const auto& s : services) {
    if (!detail::sameText(s.id.interface, key.path)) continue;
    pathServed = true;
    methodServed = methodServed || findMethod(s) != nullptr;
    if (detail::sameText(s.id.version, key.version) && detail::sameText(s.id.group, key.group)) {
      matched = &s;
    }
  }
  if (!pathServed || !methodServed) {
    (void)detail::sendError(
        state, status::kBadRequest,
        fmt::format(
            "{}java.lang.IllegalArgumentException: Service not found:{}, {} ({})", kDecodeFailure,
            key.path, key.method,
            pathServed ? fmt::format("no method {}({}) in {}", key.method, key.descriptor, key.path)
                       : fmt::format("no service {} here", key.path)));
    return std::nullopt;
  }
  if (matched == nullptr) {
    std::vector<std::string> keys;
    for (const auto& s : services)
      keys.push_back(serviceKey(s.id.group, s.id.interface, s.id.version));
    (void)detail::sendError(
        state, status::kServiceError,
        fmt::format("Not found exported service: {} in [{}], may be version or group mismatch",
                    serviceKey(key.group, key.path, key.version), fmt::join(keys, ", ")));
    return std::nullopt;
  }
  if (key.echo) return nullptr;
  const Method* method = findMethod(*matched);
  if (method == nullptr) {
    (void)detail::sendError(
        state, status::kBadRequest,
        fmt::format("{}java.lang.IllegalArgumentException: Service not "
                    "found:{}, {} (no method {}({}) in {})",
                    kDecodeFailure, key.path, key.method, key.method, key.descriptor,
                    serviceKey(key.group, key.path, key.version)));
    return std::nullopt;
  }
  return method;
}

void Provider::Impl::runHandler(const AsyncHandler& handler, const Request& request,
                                const detail::ReplyState& state, net::Channel& channel) {
  const auto held = detail::share(state, channels);
  const detail::InlineScope inlineReply(*held, channel);  // an answer during the call: inline
  try {
    handler(request, Reply(held));
  } catch (const std::exception& e) {
    Reply(held).exception(kRuntimeException, e.what());
  }
}

void Provider::Impl::serveScanned(const detail::ScannedCall& call, std::string_view body,
                                  Request& reused, detail::ReplyState& state,
                                  net::Channel& channel) {
  state.dubboVersion = call.dubboVersion;
  const auto [version, group] = versionAndGroup(call);
  const Key key{.path = call.path,
                .method = call.method,
                .descriptor = call.descriptor,
                .version = normalVersion(version),
                .group = group,
                .echo = call.method == kEcho && call.args.size() == 1};
  const auto method = dispatch(key, state);
  if (!method) return;
  if (*method == nullptr) {  // $echo
    (void)detail::sendString(state, call.args[0]);
    return;
  }
  if ((*method)->inPlace) {
    runInPlace((*method)->inPlace, detail::CallViewAccess::of(call, body, limits), state);
    return;
  }
  detail::threadDecoder().fill(call, reused);
  runHandler((*method)->handler, reused, state, channel);
}

void Provider::Impl::serveDecoded(Request& request, detail::ReplyState& state,
                                  net::Channel& channel) {
  state.dubboVersion = request.dubboVersion;
  if (request.method == kInvoke && request.descriptor == kInvokeDescriptor) {
    const std::string why = ungeneric(request);
    if (!why.empty()) {
      (void)detail::sendError(state, status::kBadRequest, fmt::format("{}{}", kDecodeFailure, why));
      return;
    }
  }
  const std::string_view headerVersion =
      request.version ? std::string_view(*request.version) : std::string_view();
  const Key key{.path = request.path,
                .method = request.method,
                .descriptor = request.descriptor,
                .version = normalVersion(request.attachments.stringOr("version", headerVersion)),
                .group = request.attachments.stringOr("group", ""),
                .echo = request.method == kEcho && request.args.size() == 1};
  const auto method = dispatch(key, state);
  if (!method) return;
  if (*method == nullptr) {  // $echo
    (void)detail::sendResult(state, Result::ofValue(request.args[0]));
    return;
  }
  if ((*method)->inPlace) {
    runInPlace((*method)->inPlace, detail::CallViewAccess::of(request), state);
    return;
  }
  runHandler((*method)->handler, request, state, channel);
}

void Provider::onFrame(net::Channel& channel, const net::FrameView& frame) {
  if (!frame.isRequest() || frame.isEvent()) return;
  impl_->counters->add(detail::Counters::kRequests);
  // The call's state while onFrame runs: every answer given meanwhile goes inline to `channel`. A
  // Handler's Reply, which may answer later, gets a shared copy (runHandler()).
  detail::ReplyState state;
  state.local = true;
  state.counters = impl_->counters.get();
  state.channelId = channel.id();
  state.requestId = frame.id;
  state.serialization = frame.serialization();
  state.twoWay = frame.isTwoWay();
  const detail::InlineScope inlineReply(state, channel);
  if (frame.serialization() != net::kHessian2) {
    (void)detail::sendError(state, status::kBadRequest,
                            fmt::format("{}serialization id {} (expected 2, hessian2)",
                                        kDecodeFailure, frame.serialization()));
    return;
  }
  // The loop thread's call storage, reused from call to call (its vectors and strings keep their
  // capacity); a fresh one when a handler's work reaches another onFrame on this thread while
  // the first is still in use.
  thread_local ThreadCall reused;
  std::optional<ThreadCall> fresh;
  ThreadCall& d = reused.busy ? fresh.emplace() : reused;
  const ThreadCall::Use use(d);
  if (detail::threadDecoder().scan(frame.body, impl_->limits, d.scanned)) {
    impl_->serveScanned(d.scanned, frame.body, d.request, state, channel);
    return;
  }
  try {
    d.request = decodeRequest(frame.body, impl_->limits);
  } catch (const BodyError& e) {
    (void)detail::sendError(state, status::kBadRequest,
                            fmt::format("{}{}", kDecodeFailure, e.what()));
    return;
  }
  impl_->serveDecoded(d.request, state, channel);
}

}  // namespace wheelbeat::dubbo
