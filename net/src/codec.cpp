// The Dubbo-2 exchange codec (contract in codec.h). The decoder's fast path delivers every whole
// frame of an input as a view into it; only a frame cut by the end of an input is copied into
// the decoder's own buffer, which is then completed from the next inputs before the fast path
// resumes.
#include <wheelbeat/net/codec.h>

#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <cstring>
#include <new>
#include <stdexcept>
#include <utility>

namespace wheelbeat::net {
namespace {

// Dubbo reads the body length as a signed 32-bit int: nothing above can be valid on the wire.
constexpr std::size_t kMaxWireBody = 0x7fffffff;

std::uint16_t byteSwap(std::uint16_t v) noexcept { return __builtin_bswap16(v); }
std::uint32_t byteSwap(std::uint32_t v) noexcept { return __builtin_bswap32(v); }
std::uint64_t byteSwap(std::uint64_t v) noexcept { return __builtin_bswap64(v); }

std::uint8_t byteAt(std::string_view bytes, std::size_t i) noexcept {
  return static_cast<std::uint8_t>(bytes[i]);
}

// Big-endian fields of 2, 4 or 8 bytes, by one load or store and a byte swap: the byte loops
// they replace were most of checkHeader()'s cost per frame.
template <typename UInt>
UInt loadBig(std::string_view bytes, std::size_t offset) noexcept {
  UInt value = 0;
  std::memcpy(&value, bytes.data() + offset, sizeof value);
  return std::endian::native == std::endian::big ? value : byteSwap(value);
}

template <typename UInt>
void storeBig(char* out, UInt value) noexcept {
  if constexpr (std::endian::native == std::endian::little) value = byteSwap(value);
  std::memcpy(out, &value, sizeof value);
}

std::size_t effectiveLimit(std::size_t maxBody) noexcept { return std::min(maxBody, kMaxWireBody); }

}  // namespace

void encodeFrame(std::string& out, std::uint8_t flags, std::uint8_t status, std::uint64_t id,
                 std::string_view body, std::size_t maxBody) {
  const std::size_t limit = effectiveLimit(maxBody);
  if (body.size() > limit) {
    throw std::invalid_argument(
        fmt::format("encodeFrame: body length {} (expected: <= {})", body.size(), limit));
  }
  char header[kHeaderSize];
  storeBig<std::uint16_t>(header, kMagic);
  header[2] = static_cast<char>(flags);
  header[3] = static_cast<char>(status);
  storeBig<std::uint64_t>(header + 4, id);
  storeBig(header + 12, static_cast<std::uint32_t>(body.size()));
  // Grow geometrically ourselves: an exact reserve per frame would make a loop of appends
  // quadratic on standard libraries that honour the request literally.
  const std::size_t needed = out.size() + kHeaderSize + body.size();
  if (needed > out.capacity()) out.reserve(std::max(needed, out.capacity() * 2));
  out.append(header, kHeaderSize);
  out.append(body);
}

namespace {

// The two heartbeat frames differ only in their flags and status; the body is Hessian null.
std::array<char, kHeartbeatFrameSize> heartbeatFrame(std::uint8_t flags, std::uint8_t status,
                                                     std::uint64_t id) noexcept {
  std::array<char, kHeartbeatFrameSize> frame{};
  storeBig<std::uint16_t>(frame.data(), kMagic);
  frame[2] = static_cast<char>(flags);
  frame[3] = static_cast<char>(status);
  storeBig<std::uint64_t>(frame.data() + 4, id);
  storeBig<std::uint32_t>(frame.data() + 12, 1);
  frame[kHeaderSize] = kHessianNull;
  return frame;
}

}  // namespace

std::array<char, kHeartbeatFrameSize> heartbeatRequestFrame(std::uint64_t id) noexcept {
  return heartbeatFrame(flag::kRequest | flag::kTwoWay | flag::kEvent | kHessian2, 0, id);
}

std::array<char, kHeartbeatFrameSize> heartbeatResponseFrame(std::uint64_t id) noexcept {
  return heartbeatFrame(flag::kEvent | kHessian2, kStatusOk, id);
}

void encodeHeartbeatRequest(std::string& out, std::uint64_t id) {
  const auto frame = heartbeatRequestFrame(id);
  out.append(frame.data(), frame.size());
}

void encodeHeartbeatResponse(std::string& out, std::uint64_t id) {
  const auto frame = heartbeatResponseFrame(id);
  out.append(frame.data(), frame.size());
}

void encodeReadOnlyEvent(std::string& out, std::uint64_t id) {
  constexpr std::uint8_t kFlags = flag::kRequest | flag::kEvent | kHessian2;
  encodeFrame(out, kFlags, 0, id, kReadOnlyBody);
}

std::string_view decodeErrorName(DecodeError error) noexcept {
  switch (error) {
    case DecodeError::None: return "none";
    case DecodeError::BadMagic: return "bad-magic";
    case DecodeError::BodyTooLarge: return "body-too-large";
    case DecodeError::TruncatedAtEof: return "truncated-at-eof";
    case DecodeError::BudgetExceeded: return "partial-frame-budget";
    case DecodeError::OutOfMemory: return "out-of-memory";
  }
  return "unknown";
}

bool isResourceError(DecodeError error) noexcept {
  return error == DecodeError::BudgetExceeded || error == DecodeError::OutOfMemory;
}

bool PartialFrameBudget::tryCharge(std::size_t bytes) noexcept {
  if (limit_ != 0 && bytes > limit_ - std::min(used_, limit_)) {
    ++refusals_;
    return false;
  }
  used_ += bytes;
  peak_ = std::max(peak_, used_);
  return true;
}

void PartialFrameBudget::release(std::size_t bytes) noexcept { used_ -= std::min(bytes, used_); }

struct FrameDecoder::Header {
  std::uint8_t flags = 0;
  std::uint8_t status = 0;
  std::uint64_t id = 0;
  std::size_t bodyLength = 0;

  [[nodiscard]] std::size_t frameSize() const noexcept { return kHeaderSize + bodyLength; }
  [[nodiscard]] FrameView view(std::string_view frame) const noexcept {
    return FrameView{flags, status, id, frame.substr(kHeaderSize, bodyLength)};
  }
};

FrameDecoder::FrameDecoder(CodecOptions options, PartialFrameBudget* budget)
    : options_(options), maxBody_(effectiveLimit(options.maxBody)), budget_(budget) {}

FrameDecoder::~FrameDecoder() {
  if (budget_ != nullptr) budget_->release(charged_);
}

DecodeError FrameDecoder::feed(std::string_view data, FrameSink& sink) {
  // Checked first: while a sink runs, stopped_ is provisionally true.
  if (inFeed_) throw std::logic_error("FrameDecoder::feed() called from its own FrameSink");
  if (error_ != DecodeError::None || stopped_) return error_;
  inFeed_ = true;
  struct Leave {
    bool& flag;
    ~Leave() { flag = false; }
  } leave{inFeed_};

  if (size_ != 0) data = continuePartial(data, sink);
  // A partial frame still incomplete has consumed the whole input.
  if (size_ != 0 || error_ != DecodeError::None || stopped_) return error_;
  data = decodeWhole(data, sink);
  if (!data.empty() && error_ == DecodeError::None && !stopped_) startPartial(data);
  return error_;
}

DecodeError FrameDecoder::finish() {
  if (inFeed_) throw std::logic_error("FrameDecoder::finish() called from its own FrameSink");
  if (error_ != DecodeError::None || stopped_ || size_ == 0) return error_;
  if (size_ < kHeaderSize) {
    return fail(DecodeError::TruncatedAtEof,
                fmt::format("stream ended after {} bytes of a {}-byte header", size_, kHeaderSize));
  }
  Header header;
  checkHeader(partial(), header);  // already accepted when the header completed
  return fail(DecodeError::TruncatedAtEof,
              fmt::format("stream ended after {} of {} bytes of a frame (id {})", size_,
                          header.frameSize(), header.id));
}

// Completes the buffered frame from `data`; returns what follows it, or nothing while the frame
// is still incomplete (or an error or a stop ended decoding).
std::string_view FrameDecoder::continuePartial(std::string_view data, FrameSink& sink) {
  Header header;
  if (size_ < kHeaderSize) {
    const std::size_t take = std::min(kHeaderSize - size_, data.size());
    if (!append(data.substr(0, take), kHeaderSize)) return {};
    data.remove_prefix(take);
    if (!checkMagic(partial()) || size_ < kHeaderSize) return {};
    if (!checkHeader(partial(), header)) return {};
  } else {
    checkHeader(partial(), header);
  }
  const std::size_t take = std::min(header.frameSize() - size_, data.size());
  if (!append(data.substr(0, take), header.frameSize())) return {};
  data.remove_prefix(take);
  if (size_ < header.frameSize()) return {};
  if (!deliverPartial(header, sink)) return {};
  return data;
}

// The fast path: delivers every whole frame of `data` in place; returns the incomplete rest.
std::string_view FrameDecoder::decodeWhole(std::string_view data, FrameSink& sink) {
  while (data.size() >= 2) {
    if (!checkMagic(data)) return {};
    if (data.size() < kHeaderSize) break;
    Header header;
    if (!checkHeader(data, header)) return {};
    if (data.size() < header.frameSize()) break;
    if (!deliver(header.view(data), sink)) return {};
    data.remove_prefix(header.frameSize());
  }
  return data;
}

// Buffers the incomplete tail of an input. Its magic and (if complete) its header were checked.
void FrameDecoder::startPartial(std::string_view rest) {
  std::size_t frameSize = kHeaderSize;
  if (rest.size() >= kHeaderSize) {
    Header header;
    checkHeader(rest, header);
    frameSize = header.frameSize();
  }
  (void)append(rest, frameSize);
}

// Appends `bytes` of a frame of `frameSize` bytes, growing the buffer first if it is too small:
// at least doubling (amortised O(1) per byte), never beyond the frame. False (and the error)
// when it cannot grow.
bool FrameDecoder::append(std::string_view bytes, std::size_t frameSize) {
  const std::size_t needed = size_ + bytes.size();
  if (needed > capacity_ &&
      !grow(std::min(frameSize, std::max({needed, capacity_ * 2, std::size_t{64}})), frameSize)) {
    return false;
  }
  if (!bytes.empty()) std::memcpy(buffer_.get() + size_, bytes.data(), bytes.size());
  size_ = needed;
  return true;
}

bool FrameDecoder::grow(std::size_t capacity, std::size_t frameSize) {
  const std::size_t free = PartialFrameBudget::kFreePartialBytes;
  const std::size_t charge = capacity > free ? capacity - free : 0;
  if (charge > charged_ && budget_ != nullptr && !budget_->tryCharge(charge - charged_)) {
    const std::size_t used = budget_->used();
    const std::size_t limit = budget_->limit();
    fail(DecodeError::BudgetExceeded,
         fmt::format("partial-frame budget: {} more bytes for a {}-byte frame would exceed the "
                     "loop's max_partial_bytes ({} of {} in use)",
                     charge - charged_, frameSize, used, limit));
    return false;
  }
  std::unique_ptr<char[]> bigger(new (std::nothrow) char[capacity]);
  if (!bigger) {
    if (budget_ != nullptr && charge > charged_) budget_->release(charge - charged_);
    releasePartial();  // frees what it can before the message is formatted
    fail(DecodeError::OutOfMemory,
         fmt::format("out of memory growing the buffer of a {}-byte frame to {} bytes", frameSize,
                     capacity));
    return false;
  }
  if (size_ != 0) std::memcpy(bigger.get(), buffer_.get(), size_);
  buffer_ = std::move(bigger);
  capacity_ = capacity;
  charged_ = std::max(charged_, charge);
  return true;
}

bool FrameDecoder::checkMagic(std::string_view bytes) {
  if (bytes.size() < 2) return true;
  const auto magic = loadBig<std::uint16_t>(bytes, 0);
  if (magic == kMagic) return true;
  fail(DecodeError::BadMagic, fmt::format("bad magic {:#06x} (expected: {:#06x})", magic, kMagic));
  return false;
}

// Parses a complete header whose magic was checked; false (and the error) if its body is too long.
bool FrameDecoder::checkHeader(std::string_view bytes, Header& header) {
  header.flags = byteAt(bytes, 2);
  header.status = byteAt(bytes, 3);
  header.id = loadBig<std::uint64_t>(bytes, 4);
  header.bodyLength = loadBig<std::uint32_t>(bytes, 12);
  if (header.bodyLength <= maxBody_) return true;
  fail(DecodeError::BodyTooLarge,
       fmt::format("body length {} (expected: <= {})", header.bodyLength, maxBody_));
  return false;
}

bool FrameDecoder::deliver(const FrameView& frame, FrameSink& sink) {
  ++frames_;
  // Stopped until the sink says otherwise: a throwing sink leaves the decoder stopped.
  stopped_ = true;
  stopped_ = !sink.onFrame(frame);
  if (stopped_) releasePartial();
  return !stopped_;
}

bool FrameDecoder::deliverPartial(const Header& header, FrameSink& sink) {
  // The buffer is released even when the sink throws: the frame is consumed either way.
  struct Release {
    FrameDecoder& decoder;
    ~Release() { decoder.releasePartial(); }
  } release{*this};
  return deliver(header.view(partial()), sink);
}

// Empties the buffer; a capacity above the free allowance is given back (memory and budget).
void FrameDecoder::releasePartial() noexcept {
  size_ = 0;
  if (capacity_ <= PartialFrameBudget::kFreePartialBytes) return;
  buffer_.reset();
  capacity_ = 0;
  if (budget_ != nullptr) budget_->release(charged_);
  charged_ = 0;
}

// Records the first error. The reason is moved in, so a failure to allocate it happened before.
DecodeError FrameDecoder::fail(DecodeError error, std::string reason) {
  error_ = error;
  reason_ = std::move(reason);
  releasePartial();
  return error_;
}

}  // namespace wheelbeat::net
