#include "server/response_buffer.h"

#include <cstdlib>

#include "server/call_gate.h"
#include "util/str_cat.h"

namespace roost {
namespace {

// What gRPC calls when it is done with a buffer's slice. The header in
// front of the bytes says which budget they count against (none for the
// header alone of an empty response) and which call's slot they hold.
struct Header {
  ResponseMemory* memory;
  size_t size;
  CallGate* slot;
};
constexpr size_t kHeaderSize = (sizeof(Header) + 15) / 16 * 16;

void Free(void* user_data) {
  auto* header = static_cast<Header*>(user_data);
  if (header->memory != nullptr) {
    header->memory->Release(kHeaderSize + header->size);
  }
  if (header->slot != nullptr) header->slot->Leave();
  std::free(header);
}

}  // namespace

absl::StatusOr<ResponseBuffer> ResponseBuffer::Create(ResponseMemory* memory,
                                                      size_t size,
                                                      size_t max_message_size) {
  if (size == 0) return ResponseBuffer(memory, nullptr, 0);
  if (size > max_message_size) {
    return absl::ResourceExhaustedError(
        StrCat("the response would be larger than --max-message-size (",
               max_message_size, " bytes)"));
  }
  if (!memory->Reserve(kHeaderSize + size)) {
    return absl::ResourceExhaustedError(StrCat(
        "the server is out of response memory (--max-response-memory ",
        memory->limit(), " bytes, all held by responses in flight); retry"));
  }
  auto* block = static_cast<char*>(std::malloc(kHeaderSize + size));
  if (block == nullptr) {
    memory->Release(kHeaderSize + size);
    return absl::ResourceExhaustedError("the server is out of memory; retry");
  }
  new (block) Header{memory, size, nullptr};
  return ResponseBuffer(memory, block + kHeaderSize, size);
}

ResponseBuffer::ResponseBuffer(ResponseBuffer&& other) noexcept
    : memory_(other.memory_), data_(other.data_), size_(other.size_) {
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
      grpc::Slice empty;
      return grpc::ByteBuffer(&empty, 1);
    }
    new (block) Header{nullptr, 0, slot};
  } else {  // an empty response: nothing to hold
    grpc::Slice empty;
    return grpc::ByteBuffer(&empty, 1);
  }
  grpc::Slice slice(block + kHeaderSize, size_, Free, block);
  return grpc::ByteBuffer(&slice, 1);
}

}  // namespace roost
