// ResponseMemory and ResponseBuffer: the bytes of lookup responses, bounded
// as a whole and per client.
//
// Every Get, MultiGet and StreamMultiGet response is written into one
// ResponseBuffer of exactly its encoded size, which gRPC then sends without
// copying it again. The buffer's bytes count against one process-wide
// ResponseMemory budget (--max-response-memory), and against its client's
// share of it (ClientLimits, --max-client-response-memory), from the moment
// they are reserved until gRPC frees them, after the last byte is sent or
// the call is dropped, so that responses waiting on slow or stalled clients
// can never hold more than the budget, nor one client more than its share.
// A response that would pass the per-message limit (--max-message-size), or
// that the budget or the client's share cannot hold right now, is refused
// before a byte of it is copied.
//
// Thread-safe: Reserve() and the buffer's release are one atomic add each
// (a few more with a client).
//
// Example:
//   ResponseMemory memory(1 << 30);
//   auto buffer = ResponseBuffer::Create(&memory, client, size,
//                                        max_message_size);
//   if (!buffer.ok()) return buffer.status();   // RESOURCE_EXHAUSTED
//   char* end = Write(..., buffer->data());
//   *response = std::move(*buffer).Release();   // a grpc::ByteBuffer
#ifndef ROOST_SERVER_RESPONSE_BUFFER_H_
#define ROOST_SERVER_RESPONSE_BUFFER_H_

#include <grpcpp/support/byte_buffer.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "prometheus/metric_family.h"
#include "server/client_limits.h"

namespace roost {

class CallGate;

class ResponseMemory {
 public:
  explicit ResponseMemory(uint64_t limit) : limit_(limit) {}
  ResponseMemory(const ResponseMemory&) = delete;
  ResponseMemory& operator=(const ResponseMemory&) = delete;

  // Takes `n` bytes of the budget; false (taking nothing) when that would
  // pass the limit.
  bool Reserve(uint64_t n) {
    const uint64_t before = used_.fetch_add(n, std::memory_order_relaxed);
    if (before + n <= limit_) return true;
    used_.fetch_sub(n, std::memory_order_relaxed);
    refused_.fetch_add(1, std::memory_order_relaxed);
    return false;
  }
  void Release(uint64_t n) { used_.fetch_sub(n, std::memory_order_relaxed); }

  uint64_t used() const { return used_.load(std::memory_order_relaxed); }
  uint64_t limit() const { return limit_; }
  // Responses refused because the budget was full.
  uint64_t refused() const { return refused_.load(std::memory_order_relaxed); }
  // roost_response_memory_bytes and roost_responses_refused_total.
  void CollectMetrics(std::vector<prometheus::MetricFamily>* out) const;

 private:
  const uint64_t limit_;
  std::atomic<uint64_t> used_{0};
  std::atomic<uint64_t> refused_{0};
};

class ResponseBuffer {
 public:
  // A buffer of exactly `size` bytes, counted against `memory` and
  // `client`'s share (null: no client's). ResourceExhausted when `size` is
  // over `max_message_size`, or the budget or the share cannot hold it now;
  // the message says which. `client` must stay referenced until Release().
  static absl::StatusOr<ResponseBuffer> Create(ResponseMemory* memory,
                                               ClientLimits::Share* client,
                                               size_t size,
                                               size_t max_message_size);
  // The budget a response of `size` bytes takes (its bytes and a header).
  static uint64_t BytesFor(size_t size);

  ResponseBuffer(ResponseBuffer&& other) noexcept;
  ResponseBuffer& operator=(ResponseBuffer&&) = delete;
  ~ResponseBuffer();

  char* data() { return data_; }
  size_t size() const { return size_; }
  // Sends only the first `n` bytes, for a response written into room
  // reserved before its size was known (a Scan message); the budget still
  // holds all the bytes created until gRPC frees them.
  // REQUIRES: n <= size().
  void Shrink(size_t n) { size_ = n; }

  // Hands the bytes to gRPC: they stay counted until gRPC frees them. With
  // `slot`, the response also holds its call's slot in that CallGate and in
  // its client's share (both taken with Enter()) and leaves them then, so
  // that a call whose client does not take its response stays in flight;
  // an empty response too.
  grpc::ByteBuffer Release(CallGate* slot = nullptr) &&;

 private:
  ResponseBuffer(ResponseMemory* memory, ClientLimits::Share* client,
                 char* data, size_t size)
      : memory_(memory), client_(client), data_(data), size_(size) {}

  ResponseMemory* memory_;
  ClientLimits::Share* client_;
  char* data_;
  size_t size_;
};

}  // namespace roost

#endif  // ROOST_SERVER_RESPONSE_BUFFER_H_
