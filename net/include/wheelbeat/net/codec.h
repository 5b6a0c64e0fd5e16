// The exchange codec: Dubbo 2's 16-byte frame header, so wheelbeat peers and Dubbo 2 peers
// understand each other's heartbeats, and any RPC framework can carry its own bodies.
//
// Frame (big-endian):
//
//     offset 0  magic        0xDA 0xBB
//            2  flags        0x80 request (else response), 0x40 two-way, 0x20 event,
//                            low 5 bits: serialization id (hessian2 = 2)
//            3  status       responses: 20 = OK (Dubbo's codes); requests: 0
//            4  request id   8 bytes, any value (0 included); a response echoes its request's id
//           12  body length  4 bytes, 0 .. maxBody
//           16  body
//     Heartbeat request  DA BB E2 00 <id> 00 00 00 01 4E   (request | two-way | event | hessian2,
//                                                           body = hessian2 null 'N')
//     Heartbeat response DA BB 22 14 <same id> 00 00 00 01 4E (event | hessian2, status OK)
//     READONLY event      DA BB A2 00 <id> 00 00 00 02 01 52  (request | event | hessian2, one-way;
//                                                           body = hessian2 string "R": Dubbo's
//                                                           Request.READONLY_EVENT)
//
// Any frame with the event flag and the body "N" is a heartbeat (Dubbo's rule); an event request
// with the body 01 52 is READONLY: the server is shutting down gracefully, send it no new calls.
// Other frames are application frames and reach the embedding application untouched.
//
// Threads: a FrameDecoder belongs to one channel and is used by one thread at a time (its loop).
// The free functions are thread-safe.
#pragma once

#include <wheelbeat/net/options.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

namespace wheelbeat::net {

inline constexpr std::uint16_t kMagic = 0xDABB;
inline constexpr std::size_t kHeaderSize = 16;

namespace flag {
inline constexpr std::uint8_t kRequest = 0x80;
inline constexpr std::uint8_t kTwoWay = 0x40;
inline constexpr std::uint8_t kEvent = 0x20;
inline constexpr std::uint8_t kSerializationMask = 0x1f;
}  // namespace flag

inline constexpr std::uint8_t kHessian2 = 2;  // serialization id
inline constexpr std::uint8_t kStatusOk = 20;
inline constexpr char kHessianNull = 'N';  // the heartbeat body
// The READONLY event's body: hessian2's compact string of length 1, "R".
inline constexpr std::string_view kReadOnlyBody{"\x01R", 2};
inline constexpr std::size_t kReadOnlyFrameBytes = kHeaderSize + kReadOnlyBody.size();

// A decoded frame. `body` points into the decoder's input or its own buffer: valid only during
// the FrameSink::onFrame call that receives it (copy what you keep).
struct FrameView {
  std::uint8_t flags = 0;
  std::uint8_t status = 0;
  std::uint64_t id = 0;
  std::string_view body;

  [[nodiscard]] bool isRequest() const noexcept { return (flags & flag::kRequest) != 0; }
  [[nodiscard]] bool isTwoWay() const noexcept { return (flags & flag::kTwoWay) != 0; }
  [[nodiscard]] bool isEvent() const noexcept { return (flags & flag::kEvent) != 0; }
  [[nodiscard]] std::uint8_t serialization() const noexcept {
    return flags & flag::kSerializationMask;
  }
  // Event flag and body "N" (a request or a response).
  [[nodiscard]] bool isHeartbeat() const noexcept {
    return isEvent() && body.size() == 1 && body[0] == kHessianNull;
  }
  // An event request whose body is hessian2's "R" (two-way or not: Dubbo sends it one-way).
  [[nodiscard]] bool isReadOnlyEvent() const noexcept {
    return isEvent() && isRequest() && body == kReadOnlyBody;
  }
};

// Appends one whole frame (header + body) to `out`. Throws std::invalid_argument if the body is
// longer than maxBody or 2^31 - 1 (message names the size and the limit, e.g.
// "encodeFrame: body length 9000000 (expected: <= 8388608)"); `out` is then unchanged.
// `flags` and `status` are written as given (a response's flags have no kRequest bit).
void encodeFrame(std::string& out, std::uint8_t flags, std::uint8_t status, std::uint64_t id,
                 std::string_view body, std::size_t maxBody = CodecOptions{}.maxBody);

// The 17-byte heartbeat frames (see the file comment), appended to `out`.
void encodeHeartbeatRequest(std::string& out, std::uint64_t id);
// The same frames in a fixed array: a heartbeat (or its answer) written alone needs no buffer.
inline constexpr std::size_t kHeartbeatFrameSize = kHeaderSize + 1;
[[nodiscard]] std::array<char, kHeartbeatFrameSize> heartbeatRequestFrame(
    std::uint64_t id) noexcept;
[[nodiscard]] std::array<char, kHeartbeatFrameSize> heartbeatResponseFrame(
    std::uint64_t id) noexcept;
void encodeHeartbeatResponse(std::string& out, std::uint64_t id);
// The 18-byte READONLY event (see the file comment), appended to `out`.
void encodeReadOnlyEvent(std::string& out, std::uint64_t id);

// Why a stream was refused. The decoder stops at the first error: the channel must be closed.
enum class DecodeError {
  None,
  BadMagic,        // the first two bytes of a header are not DA BB
  BodyTooLarge,    // the header announces a body above maxBody
  TruncatedAtEof,  // finish(): the stream ended inside a frame
  BudgetExceeded,  // buffering a split frame would exceed its PartialFrameBudget
  OutOfMemory,     // the buffer of a split frame could not be allocated (std::bad_alloc)
};

// "none", "bad-magic", "body-too-large", "truncated-at-eof", "partial-frame-budget",
// "out-of-memory".
[[nodiscard]] std::string_view decodeErrorName(DecodeError error) noexcept;
// BudgetExceeded and OutOfMemory: the peer's bytes were well-formed, this process ran short.
[[nodiscard]] bool isResourceError(DecodeError error) noexcept;

// Bytes of split frames buffered by every decoder of one event loop, against a limit: a peer
// that announces a large body and trickles it (or many peers at once) can hold at most `limit`
// bytes of this process's memory, whatever maxBody allows per frame. A decoder charges the
// capacity of its buffer above kFreePartialBytes (small split frames, the common case of a read
// boundary falling inside a frame, are never refused) and gives it back once the frame is
// delivered, on an error, and when it is destroyed.
// Threads: not thread-safe; shared only by decoders used on one thread (an event loop's).
class PartialFrameBudget {
public:
  // Per decoder, this much buffer is never charged (bounded by the number of channels).
  static constexpr std::size_t kFreePartialBytes = std::size_t{16} << 10;

  // 0 = unlimited (charges are still counted).
  explicit PartialFrameBudget(std::size_t limit) noexcept : limit_(limit) {}
  PartialFrameBudget(const PartialFrameBudget&) = delete;
  PartialFrameBudget& operator=(const PartialFrameBudget&) = delete;

  // Adds `bytes` if the total stays within the limit; false (nothing added, refusal counted)
  // otherwise.
  [[nodiscard]] bool tryCharge(std::size_t bytes) noexcept;
  // Gives back bytes charged before (at most what is in use).
  void release(std::size_t bytes) noexcept;

  [[nodiscard]] std::size_t limit() const noexcept { return limit_; }
  [[nodiscard]] std::size_t used() const noexcept { return used_; }
  [[nodiscard]] std::size_t peak() const noexcept { return peak_; }
  [[nodiscard]] std::uint64_t refusals() const noexcept { return refusals_; }

private:
  std::size_t limit_;
  std::size_t used_ = 0;
  std::size_t peak_ = 0;
  std::uint64_t refusals_ = 0;
};

// Receives decoded frames. Return false to stop decoding (e.g. the handler closed the channel):
// the rest of the input is dropped and the decoder refuses further input (see stopped()).
// onFrame must not call feed() or finish() of the decoder that calls it (std::logic_error). An
// exception thrown by onFrame leaves feed() and stops the decoder as if onFrame returned false.
class FrameSink {
public:
  virtual ~FrameSink() = default;
  virtual bool onFrame(const FrameView& frame) = 0;
};

// Incremental decoder for one byte stream: frames may arrive split or merged in any way.
// Complete frames inside one feed() are delivered without copying; only a frame split across
// feeds is assembled in an internal buffer (at most one header + one body, never more). The
// buffer grows with the bytes actually received (doubling, capped by the announced frame size),
// never with what a header merely announces: a peer that announces 8 MiB and sends 100 bytes
// costs about 100 bytes. A capacity above PartialFrameBudget::kFreePartialBytes is given back
// once its frame is delivered, so one big frame does not pin memory for the life of a channel.
//
// Errors are found as early as the bytes allow: bad magic once the first two bytes of a header
// are in, a body length above the limit once the header is complete (the body is never
// buffered). The limit is min(maxBody, 2^31 - 1): Dubbo's length field is a signed int.
// A buffer that cannot grow (the budget refuses, or the allocation throws std::bad_alloc) ends
// the stream with BudgetExceeded or OutOfMemory: the process goes on, this stream stops.
class FrameDecoder {
public:
  // `budget` (optional) must outlive the decoder and be used on the decoder's thread only.
  explicit FrameDecoder(CodecOptions options = {}, PartialFrameBudget* budget = nullptr);
  ~FrameDecoder();  // gives back what it charged
  FrameDecoder(const FrameDecoder&) = delete;
  FrameDecoder& operator=(const FrameDecoder&) = delete;

  // Decodes `data`, calling sink.onFrame() for each complete frame in order. Returns None, or
  // the error that ended the stream (error() and reason() then describe it; every later feed()
  // returns it again without reading). Frames before the error in the same input are delivered.
  // After a sink returned false, feed() returns None without reading anything (stopped() tells
  // the two apart): a handler that stopped the stream owns its outcome.
  DecodeError feed(std::string_view data, FrameSink& sink);

  // The stream ended (EOF): TruncatedAtEof if a partial frame is buffered, else the current
  // error (None when clean, and None after a sink stop: the dropped rest is not a truncation).
  // A clean finish() changes nothing; a TruncatedAtEof is kept like any other error.
  DecodeError finish();

  // A sink returned false (or threw): the decoder reads nothing more.
  [[nodiscard]] bool stopped() const noexcept { return stopped_; }
  // Capacity of the internal buffer (for memory accounting and tests of the release rule).
  [[nodiscard]] std::size_t bufferCapacity() const noexcept { return capacity_; }

  [[nodiscard]] DecodeError error() const noexcept { return error_; }
  // Human-readable cause, naming the value and the expectation, e.g.
  // "bad magic 0x4745 (expected: 0xdabb)", "body length 9000000 (expected: <= 8388608)",
  // "stream ended after 5 bytes of a 16-byte header". Empty when error() is None.
  [[nodiscard]] const std::string& reason() const noexcept { return reason_; }
  // Frames delivered so far.
  [[nodiscard]] std::uint64_t frames() const noexcept { return frames_; }
  // Bytes buffered of a partial frame.
  [[nodiscard]] std::size_t buffered() const noexcept { return size_; }
  // Bytes of the buffer charged to the budget now.
  [[nodiscard]] std::size_t charged() const noexcept { return charged_; }

private:
  struct Header;
  std::string_view continuePartial(std::string_view data, FrameSink& sink);
  std::string_view decodeWhole(std::string_view data, FrameSink& sink);
  void startPartial(std::string_view rest);
  [[nodiscard]] std::string_view partial() const noexcept { return {buffer_.get(), size_}; }
  bool append(std::string_view bytes, std::size_t frameSize);
  bool grow(std::size_t capacity, std::size_t frameSize);
  bool checkMagic(std::string_view bytes);
  bool checkHeader(std::string_view bytes, Header& header);
  bool deliver(const FrameView& frame, FrameSink& sink);
  bool deliverPartial(const Header& header, FrameSink& sink);
  void releasePartial() noexcept;
  DecodeError fail(DecodeError error, std::string reason);

  CodecOptions options_;
  std::size_t maxBody_;         // min(options_.maxBody, 2^31 - 1)
  PartialFrameBudget* budget_;  // may be null
  // A frame split across feeds: its bytes so far. Managed by hand, not a std::string, so that
  // the capacity (what the budget is charged) is exactly what was allocated.
  std::unique_ptr<char[]> buffer_;
  std::size_t size_ = 0;
  std::size_t capacity_ = 0;
  std::size_t charged_ = 0;  // charged to budget_ for capacity_
  DecodeError error_ = DecodeError::None;
  bool stopped_ = false;  // a sink returned false or threw
  bool inFeed_ = false;   // re-entrance guard: onFrame calling back into its decoder
  std::string reason_;
  std::uint64_t frames_ = 0;
};

}  // namespace wheelbeat::net
