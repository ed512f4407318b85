// ArenaMessageAllocator: gives each RPC's request and response one protobuf
// arena, so that a MultiGet of 1000 keys makes a few block allocations
// instead of one per key string and one per result message, and frees them
// all at once.
//
// Example:
//   ArenaMessageAllocator<MultiGetRequest, MultiGetResponse> allocator;
//   service.SetMessageAllocatorFor_MultiGet(&allocator);  // before serving
#ifndef ROOST_SERVER_ARENA_ALLOCATOR_H_
#define ROOST_SERVER_ARENA_ALLOCATOR_H_

#include <google/protobuf/arena.h>
#include <grpcpp/support/message_allocator.h>

#include <cstddef>

namespace roost {

template <typename Request, typename Response>
class ArenaMessageAllocator final
    : public grpc::MessageAllocator<Request, Response> {
 public:
  grpc::MessageHolder<Request, Response>* AllocateMessages() override {
    return new Holder();
  }

 private:
  // The holder carries the arena's first block, so a small RPC costs one
  // allocation in all.
  class Holder final : public grpc::MessageHolder<Request, Response> {
   public:
    Holder() : arena_(Options(first_block_)) {
      this->set_request(
          google::protobuf::Arena::CreateMessage<Request>(&arena_));
      this->set_response(
          google::protobuf::Arena::CreateMessage<Response>(&arena_));
    }
    void Release() override { delete this; }

   private:
    static constexpr size_t kFirstBlock = 2048;
    static google::protobuf::ArenaOptions Options(char* first_block) {
      google::protobuf::ArenaOptions options;
      options.initial_block = first_block;
      options.initial_block_size = kFirstBlock;
      options.max_block_size = 256 << 10;
      return options;
    }
    alignas(16) char first_block_[kFirstBlock];
    google::protobuf::Arena arena_;
  };
};

}  // namespace roost

#endif  // ROOST_SERVER_ARENA_ALLOCATOR_H_
