#include "server/call_context.h"

#include <grpc/grpc.h>

#include <vector>

namespace roost {

// gRPC's side: a context per call, given back after the call's OnDone.
class CallContexts::ContextAllocator final : public grpc::ContextAllocator {
 public:
  explicit ContextAllocator(CallContexts* owner) : owner_(owner) {}
  grpc::CallbackServerContext* NewCallbackServerContext() override {
    return owner_->New();
  }
  void Release(grpc::CallbackServerContext* context) override {
    // Every callback context of this server is one of ours: New() never
    // declines.
    owner_->Release(static_cast<CallContext*>(context));
  }
  // Generic calls (none here; gRPC's own for unknown methods) keep gRPC's
  // contexts: NewGenericCallbackServerContext declines, Release of one
  // does nothing.

 private:
  CallContexts* const owner_;
};

CallContext::~CallContext() {
  if (client_ != nullptr) client_->Unref();
}

ClientLimits::Share* CallContext::client() {
  if (!client_looked_up_) {
    client_looked_up_ = true;
    client_ = owner_->clients_->Of(this);
  }
  return client_;
}

CallContexts::~CallContexts() {
  for (List& list : lists_) {
    while (list.head != nullptr) {
      CallContext* context = list.head;
      list.head = context->next_;
      delete context;
    }
  }
}

std::unique_ptr<grpc::ContextAllocator> CallContexts::Allocator() {
  return std::make_unique<ContextAllocator>(this);
}

CallContext* CallContexts::New() {
  auto* context = new CallContext(this);
  List& list = ListOf(context);
  std::lock_guard lock(list.mu);
  context->next_ = list.head;
  if (list.head != nullptr) list.head->prev_ = context;
  list.head = context;
  ++list.size;
  return context;
}

void CallContexts::Release(CallContext* context) {
  {
    List& list = ListOf(context);
    std::lock_guard lock(list.mu);
    if (context->prev_ != nullptr) {
      context->prev_->next_ = context->next_;
    } else {
      list.head = context->next_;
    }
    if (context->next_ != nullptr) context->next_->prev_ = context->prev_;
    --list.size;
  }
  delete context;
}

int CallContexts::CancelUnsent(std::chrono::steady_clock::duration timeout,
                               const std::string& message) {
  const int64_t limit =
      CallContext::Now() -
      std::chrono::duration_cast<std::chrono::nanoseconds>(timeout).count();
  // The calls are cancelled after the lists' locks are let go: gRPC may end
  // a call inside the cancel, and give its context back (Release) there.
  // A reference to each keeps it meanwhile.
  std::vector<grpc_call*> late;
  for (List& list : lists_) {
    std::lock_guard lock(list.mu);
    for (CallContext* c = list.head; c != nullptr; c = c->next_) {
      const int64_t since = c->send_started_.load(std::memory_order_acquire);
      if (since == 0 || since > limit || c->cancelled_) continue;
      c->cancelled_ = true;
      grpc_call_ref(c->c_call());
      late.push_back(c->c_call());
    }
  }
  // Counted before they are cancelled: a cancel can free a call's memory
  // at once, and whoever sees the memory back must see the count too
  // (OverloadTest.AConnectionThatTakesNoResponseHoldsItsShareForAWhile
  // once scraped 0 cancelled with the memory already free).
  cancelled_.fetch_add(late.size());
  for (grpc_call* call : late) {
    grpc_call_cancel_with_status(call, GRPC_STATUS_CANCELLED, message.c_str(),
                                 nullptr);
    grpc_call_unref(call);
  }
  return static_cast<int>(late.size());
}

size_t CallContexts::open() const {
  size_t n = 0;
  for (const List& list : lists_) {
    std::lock_guard lock(list.mu);
    n += list.size;
  }
  return n;
}

}  // namespace roost
