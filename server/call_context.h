// CallContext and CallContexts: the server context of every call on the
// lookup port, made by roost (CallContexts is that server's gRPC
// ContextAllocator) to carry what roost keeps per call: the client it counts
// against (ClientLimits), and since when its unary response has waited to
// be sent.
//
// A unary response that its client does not take stays in flight: HTTP/2's
// flow control holds it when the client never opens its window, and a
// client that answers keepalive pings is never cut off for it. The response
// keeps its memory and its call slot meanwhile. StreamWatch cancels streams
// whose client stopped reading; CallContexts does the same for unary calls:
// it knows every call open, and CancelUnsent(), once a second, cancels
// those whose response was handed to gRPC (SendStarted) longer ago than
// --send-timeout and is not sent yet. gRPC then frees the response, and
// with it the memory and the slot.
//
// A call's context comes from NewCallbackServerContext when the call
// arrives and goes back through Release after its reactor's OnDone, on
// whichever gRPC thread ends the call: no thread hop. The contexts open
// are kept in 16 lists, each under its own lock, chosen by address.
//
// Thread-safe.
//
// Example:
//   ClientLimits clients({.memory = 256 << 20, .calls = 5000});
//   CallContexts contexts(&clients);
//   builder.SetContextAllocator(contexts.Allocator());
//   ... in a unary handler:
//   CallContext* call = CallContext::Of(context);   // null on another server
//   ClientLimits::Share* client = call ? call->client() : nullptr;
//   if (call) call->SendStarted();
//   reactor->Finish(status);
//   ... once a second:
//   contexts.CancelUnsent(send_timeout, "...");
#ifndef ROOST_SERVER_CALL_CONTEXT_H_
#define ROOST_SERVER_CALL_CONTEXT_H_

#include <grpcpp/server_context.h>
#include <time.h>

#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>

#include "server/client_limits.h"

namespace roost {

class CallContexts;

class CallContext final : public grpc::CallbackServerContext {
 public:
  // The CallContext of `context`; null when it is not one (a server built
  // without CallContexts).
  static CallContext* Of(grpc::CallbackServerContext* context) {
    return dynamic_cast<CallContext*>(context);
  }
  ~CallContext() override;

  // The client this call counts against, found on first use (on the
  // call's handler thread, before other uses); null when gRPC names no
  // connection for it. Valid while the context lives.
  ClientLimits::Share* client();

  // The handler is handing its unary response to gRPC now: from here the
  // call counts as waiting for its client to take the response.
  void SendStarted() { send_started_.store(Now(), std::memory_order_release); }

 private:
  friend class CallContexts;
  explicit CallContext(CallContexts* owner) : owner_(owner) {}
  // Nanoseconds on CLOCK_MONOTONIC_COARSE: a send deadline of seconds
  // needs no finer clock, and the coarse one is a load from the vDSO page
  // where CLOCK_MONOTONIC reads the TSC (every unary call reads it once).
  static int64_t Now() {
    timespec t;
    clock_gettime(CLOCK_MONOTONIC_COARSE, &t);
    return int64_t{t.tv_sec} * 1'000'000'000 + t.tv_nsec;
  }

  CallContexts* const owner_;
  ClientLimits::Share* client_ = nullptr;  // referenced
  bool client_looked_up_ = false;
  std::atomic<int64_t> send_started_{0};  // 0: not yet
  // In its list, under the list's lock.
  CallContext* prev_ = nullptr;
  CallContext* next_ = nullptr;
  bool cancelled_ = false;
};

class CallContexts {
 public:
  // Calls' clients are found in `clients` (which must outlive this).
  explicit CallContexts(ClientLimits* clients) : clients_(clients) {}
  // Deletes the contexts gRPC never gave back (a call that arrived as the
  // server shut down). REQUIRES: the server that used Allocator() is gone.
  ~CallContexts();
  CallContexts(const CallContexts&) = delete;
  CallContexts& operator=(const CallContexts&) = delete;

  // The allocator for one grpc::ServerBuilder (SetContextAllocator). Its
  // server must be destroyed before this.
  std::unique_ptr<grpc::ContextAllocator> Allocator();

  // Cancels (CANCELLED, with `message`) each unary call whose response has
  // waited longer than `timeout` for its client to take it; returns how
  // many it cancelled now.
  int CancelUnsent(std::chrono::steady_clock::duration timeout,
                   const std::string& message);

  // Calls cancelled so far; calls open now.
  uint64_t cancelled() const {
    return cancelled_.load(std::memory_order_relaxed);
  }
  size_t open() const;

 private:
  class ContextAllocator;
  friend class CallContext;
  static constexpr size_t kLists = 16;
  struct List {
    mutable std::mutex mu;
    CallContext* head = nullptr;
    size_t size = 0;
  };
  List& ListOf(const CallContext* context) {
    return lists_[(reinterpret_cast<uintptr_t>(context) >> 6) % kLists];
  }
  CallContext* New();
  void Release(CallContext* context);

  ClientLimits* const clients_;
  std::array<List, kLists> lists_;
  std::atomic<uint64_t> cancelled_{0};
};

}  // namespace roost

#endif  // ROOST_SERVER_CALL_CONTEXT_H_
