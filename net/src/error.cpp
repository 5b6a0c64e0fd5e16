#include <wheelbeat/net/error.h>
#include <wheelbeat/tasks/error_names.h>

#include <uv.h>

#include <utility>

namespace wheelbeat::net {

std::string_view NetError::name() const noexcept {
  return code_ == 0 ? std::string_view("OK") : std::string_view(uv_err_name(code_));
}

std::string_view NetError::message() const noexcept {
  return code_ == 0 ? std::string_view("success") : std::string_view(uv_strerror(code_));
}

NetException::NetException(NetError error, const std::string& context)
    : std::runtime_error(fmt::format("{}: {}", context, error)), error_(error) {}

std::string_view errorName(NetError error) noexcept {
  namespace errors = tasks::errors;
  switch (error.code()) {
    case 0: return {};
    case UV_ETIMEDOUT: return errors::kTimeout;
    case UV_ENOMEM:
    case UV_ENOBUFS:
    case UV_EMFILE:
    case UV_ENFILE:
    case UV_EAGAIN: return errors::kOverloaded;
    default: return errors::kDisconnected;
  }
}

std::string_view closeKindName(CloseKind kind) noexcept {
  switch (kind) {
    case CloseKind::Refused: return "refused";
    case CloseKind::Resolve: return "resolve";
    case CloseKind::ConnectTimeout: return "connect-timeout";
    case CloseKind::Reset: return "reset";
    case CloseKind::Eof: return "eof";
    case CloseKind::Protocol: return "protocol";
    case CloseKind::IoError: return "io-error";
    case CloseKind::ClosedByOwner: return "closed-by-owner";
    case CloseKind::Idle: return "idle";
    case CloseKind::Reconnect: return "reconnect";
    case CloseKind::LoopStopped: return "loop-stopped";
    case CloseKind::Resource: return "resource";
  }
  return "unknown";
}

bool closeErrorShown(const CloseReason& reason) noexcept {
  const int code = reason.error.code();
  switch (reason.kind) {
    case CloseKind::Refused: return code != 0 && code != UV_ECONNREFUSED;
    case CloseKind::ConnectTimeout: return code != 0 && code != UV_ETIMEDOUT;
    case CloseKind::Eof:
    case CloseKind::Protocol: return code != 0 && code != UV_EOF;
    default: return code != 0;
  }
}

namespace {
// libuv's getaddrinfo() errors: the name, not the connection, failed.
bool isResolveError(int code) noexcept {
  switch (code) {
    case UV_EAI_ADDRFAMILY:
    case UV_EAI_AGAIN:
    case UV_EAI_BADFLAGS:
    case UV_EAI_BADHINTS:
    case UV_EAI_CANCELED:
    case UV_EAI_FAIL:
    case UV_EAI_FAMILY:
    case UV_EAI_MEMORY:
    case UV_EAI_NODATA:
    case UV_EAI_NONAME:
    case UV_EAI_OVERFLOW:
    case UV_EAI_PROTOCOL:
    case UV_EAI_SERVICE:
    case UV_EAI_SOCKTYPE: return true;
    default: return false;
  }
}
}  // namespace

CloseReason reasonFromError(NetError error, bool connecting, std::string context) {
  CloseKind kind = connecting ? CloseKind::Refused : CloseKind::IoError;
  if (isResolveError(error.code())) kind = CloseKind::Resolve;
  switch (error.code()) {
    case UV_ECONNREFUSED: kind = CloseKind::Refused; break;
    case UV_ETIMEDOUT: kind = connecting ? CloseKind::ConnectTimeout : CloseKind::Reset; break;
    case UV_ECONNRESET:
    case UV_EPIPE:
    case UV_ECONNABORTED: kind = connecting ? CloseKind::Refused : CloseKind::Reset; break;
    case UV_EOF: kind = CloseKind::Eof; break;
    default: break;
  }
  return CloseReason{kind, error, std::move(context)};
}

}  // namespace wheelbeat::net
