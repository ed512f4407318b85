// ClientLimits (server/client_limits.h): each client's share of the
// response memory and the call slots, by connection and by certificate
// identity, and what Sweep() forgets.

#include "server/client_limits.h"

#include <gtest/gtest.h>

#include <atomic>
#include <thread>
#include <vector>

namespace roost::testing {
namespace {

// Keys standing for connections: any addresses, distinct.
const char kConnections[3] = {};
const void* const kConnectionA = &kConnections[0];
const void* const kConnectionB = &kConnections[1];
const void* const kConnectionC = &kConnections[2];

TEST(ClientLimitsTest, AConnectionHoldsAtMostItsShare) {
  ClientLimits limits({.memory = 100, .calls = 2});
  ClientLimits::Share* a = limits.Of(kConnectionA, "");
  ClientLimits::Share* b = limits.Of(kConnectionB, "");
  ASSERT_NE(a, b);
  EXPECT_TRUE(a->Reserve(60));
  EXPECT_TRUE(a->Reserve(40));
  EXPECT_FALSE(a->Reserve(1));  // the share is full
  EXPECT_EQ(a->bytes(), 100u);
  EXPECT_TRUE(b->Reserve(100));  // another connection's is not
  a->Release(40);
  EXPECT_TRUE(a->Reserve(40));
  EXPECT_TRUE(a->Enter());
  EXPECT_TRUE(a->Enter());
  EXPECT_FALSE(a->Enter());
  EXPECT_TRUE(b->Enter());
  a->Leave();
  EXPECT_TRUE(a->Enter());
  EXPECT_EQ(limits.memory_refused(), 1u);
  EXPECT_EQ(limits.calls_refused(), 1u);
  a->Release(100);
  b->Release(100);
  a->Leave();
  a->Leave();
  b->Leave();
  a->Unref();
  b->Unref();
}

TEST(ClientLimitsTest, TheConnectionsOfOneIdentityShareOneShare) {
  ClientLimits limits({.memory = 100, .calls = 3});
  ClientLimits::Share* a = limits.Of(kConnectionA, "client-a");
  ClientLimits::Share* b = limits.Of(kConnectionB, "client-a");
  ClientLimits::Share* c = limits.Of(kConnectionC, "client-c");
  EXPECT_EQ(limits.identities(), 2u);
  EXPECT_TRUE(a->Reserve(70));
  EXPECT_FALSE(b->Reserve(31));  // its connection's share is free, its
                                 // identity's is not
  EXPECT_EQ(b->bytes(), 0u);     // and a refusal takes nothing
  EXPECT_TRUE(b->Reserve(30));
  EXPECT_TRUE(c->Reserve(100));
  EXPECT_TRUE(a->Enter());
  EXPECT_TRUE(b->Enter());
  EXPECT_TRUE(b->Enter());
  EXPECT_FALSE(a->Enter());
  EXPECT_EQ(a->calls(), 1u);
  a->Release(70);
  EXPECT_TRUE(b->Reserve(70));
  b->Release(100);
  c->Release(100);
  a->Leave();
  b->Leave();
  b->Leave();
  for (ClientLimits::Share* s : {a, b, c}) s->Unref();
}

TEST(ClientLimitsTest, SweepForgetsWhatNothingReferences) {
  ClientLimits limits({.memory = 100, .calls = 2});
  ClientLimits::Share* a = limits.Of(kConnectionA, "client-a");
  // The same connection is the same share while it is known.
  ClientLimits::Share* again = limits.Of(kConnectionA, "client-a");
  EXPECT_EQ(again, a);
  again->Unref();
  ClientLimits::Share* b = limits.Of(kConnectionB, "client-a");
  EXPECT_TRUE(a->Reserve(50));
  EXPECT_EQ(limits.connections(), 2u);
  b->Unref();
  limits.Sweep();
  EXPECT_EQ(limits.connections(), 1u);
  EXPECT_EQ(limits.identities(), 1u);  // a's connection still holds it
  a->Release(50);
  a->Unref();
  limits.Sweep();
  EXPECT_EQ(limits.connections(), 0u);
  EXPECT_EQ(limits.identities(), 0u);
  // Known again afresh, with nothing held.
  ClientLimits::Share* fresh = limits.Of(kConnectionA, "client-a");
  EXPECT_EQ(fresh->bytes(), 0u);
  EXPECT_TRUE(fresh->Reserve(100));
  fresh->Release(100);
  fresh->Unref();
}

// Many threads taking and giving back one identity's share never hold more
// than it between them.
TEST(ClientLimitsTest, ConcurrentReservationsStayWithinTheShare) {
  ClientLimits limits({.memory = 1000, .calls = 1000});
  std::atomic<uint64_t> held{0};
  std::atomic<uint64_t> most{0};
  std::vector<std::thread> threads;
  static const int kKeys[4] = {};
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 20000; ++i) {
        ClientLimits::Share* s = limits.Of(&kKeys[t], "one");
        if (s->Reserve(300)) {
          const uint64_t now = held.fetch_add(300) + 300;
          uint64_t seen = most.load();
          while (now > seen && !most.compare_exchange_weak(seen, now)) {
          }
          held.fetch_sub(300);
          s->Release(300);
        }
        s->Unref();
        if (i % 1000 == 0) limits.Sweep();
      }
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_LE(most.load(), 900u);
  limits.Sweep();
  EXPECT_EQ(limits.connections(), 0u);
  EXPECT_EQ(limits.identities(), 0u);
}

}  // namespace
}  // namespace roost::testing
