#include "server/response_buffer.h"

#include <cstdlib>

#include "server/call_gate.h"
#include "server/metrics.h"
#include "util/str_cat.h"

namespace roost {
namespace {

// What gRPC calls when it is done with a buffer's slice. The header in
// front of the bytes says which budget they count against (none for the
// header alone of an empty response), which client's share (referenced),
// and which call's slot they hold.
struct Header {
  ResponseMemory* memory;
  size_t size;
  CallGate* slot;
  ClientLimits::Share* client;
};
constexpr size_t kHeaderSize = (sizeof(Header) + 15) / 16 * 16;

void Free(void* user_data) {
  auto* header = static_cast<Header*>(user_data);
  ClientLimits::Share* client = header->client;
  if (header->memory != nullptr) {
    header->memory->Release(kHeaderSize + header->size);
    if (client != nullptr) client->Release(kHeaderSize + header->size);
  }
  if (header->slot != nullptr) {
    header->slot->Leave();
    if (client != nullptr) client->Leave();
  }
  if (client != nullptr) client->Unref();
  std::free(header);
}

}  // namespace

absl::StatusOr<ResponseBuffer> ResponseBuffer::Create(
    ResponseMemory* memory, ClientLimits::Share* client, size_t size,
    size_t max_message_size) {
  if (size == 0) return ResponseBuffer(memory, client, nullptr, 0);
  if (size > max_message_size) {
    return absl::ResourceExhaustedError(
        StrCat("the response would be larger than --max-message-size (",
               max_message_size, " bytes)"));
  }
  const size_t bytes = kHeaderSize + size;
  if (!memory->Reserve(bytes)) {
    return absl::ResourceExhaustedError(StrCat(
        "the server is out of response memory (--max-response-memory ",
        memory->limit(), " bytes, all held by responses in flight); retry"));
  }
  if (client != nullptr && !client->Reserve(bytes)) {
    memory->Release(bytes);
    return absl::ResourceExhaustedError(
        StrCat("this client's responses in flight hold all of its share of "
               "response memory (--max-client-response-memory ",
               client->options().memory, " bytes); retry"));
  }
  auto* block = static_cast<char*>(std::malloc(bytes));
  if (block == nullptr) {
    memory->Release(bytes);
    if (client != nullptr) client->Release(bytes);
    return absl::ResourceExhaustedError("the server is out of memory; retry");
  }
  if (client != nullptr) client->Ref();
  new (block) Header{memory, size, nullptr, client};
  return ResponseBuffer(memory, client, block + kHeaderSize, size);
}

uint64_t ResponseBuffer::BytesFor(size_t size) { return kHeaderSize + size; }

ResponseBuffer::ResponseBuffer(ResponseBuffer&& other) noexcept
    : memory_(other.memory_),
      client_(other.client_),
      data_(other.data_),
      size_(other.size_) {
  other.data_ = nullptr;
}

ResponseBuffer::~ResponseBuffer() {
  if (data_ != nullptr) Free(data_ - kHeaderSize);
}

grpc::ByteBuffer ResponseBuffer::Release(CallGate* slot) && {
  char* block;
  if (data_ != nullptr) {
    block = data_ - kHeaderSize;
    data_ = nullptr;
    reinterpret_cast<Header*>(block)->slot = slot;
  } else if (slot != nullptr) {
    // An empty response holds no budget, but its call holds the slot all
    // the same: a header alone carries it to Free.
    block = static_cast<char*>(std::malloc(kHeaderSize));
    if (block == nullptr) {  // nothing to carry it: the call leaves now
      slot->Leave();
      if (client_ != nullptr) client_->Leave();
      grpc::Slice empty;
      return grpc::ByteBuffer(&empty, 1);
    }
    if (client_ != nullptr) client_->Ref();
    new (block) Header{nullptr, 0, slot, client_};
  } else {  // an empty response: nothing to hold
    grpc::Slice empty;
    return grpc::ByteBuffer(&empty, 1);
  }
  grpc::Slice slice(block + kHeaderSize, size_, Free, block);
  return grpc::ByteBuffer(&slice, 1);
}

void ResponseMemory::CollectMetrics(
    std::vector<prometheus::MetricFamily>* out) const {
  AddScalar(out, "roost_response_memory_bytes",
            "Bytes held by responses in flight (at most "
            "--max-response-memory).",
            prometheus::MetricType::Gauge, static_cast<double>(used()));
  AddScalar(out, "roost_responses_refused_total",
            "Responses refused because --max-response-memory was held "
            "by others.",
            prometheus::MetricType::Counter, static_cast<double>(refused()));
}

}  // namespace roost
