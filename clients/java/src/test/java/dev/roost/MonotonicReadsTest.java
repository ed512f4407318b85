package dev.roost;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import org.junit.jupiter.api.Test;

/**
 * The rules of monotonic reads (client/README.md, "Monotonic reads") alone, no server: the state of
 * {@link MonotonicReads} and the target {@link VersionConsensus} settles on with it.
 */
class MonotonicReadsTest {
  // The consensus of one call with monotonic reads over `state`, part i
  // going to shard shards[i].
  private static VersionConsensus call(MonotonicReads.Table state, int... shards) {
    return VersionConsensus.forCall(shards, state, null);
  }

  @Test
  void theStateIsPerTableAndSharedByTheClientsCalls() {
    MonotonicReads m = new MonotonicReads(3);
    assertSame(m.table("users"), m.table("users"));
    m.table("users").answered(0, "v000004", "");
    assertEquals(4, m.table("users").newest(0));
    assertEquals(-1, m.table("items").newest(0), "another table has a state of its own");
    assertEquals(-1, m.table("users").floor(), "no call agreed yet");
  }

  @Test
  void aRolloutIsSeenAsOneSwitch() {
    MonotonicReads.Table t = new MonotonicReads(3).table("t");
    // Every shard showed v1, and a call settled on it.
    VersionConsensus first = call(t, 0, 1, 2);
    first.answered(0, "v000001", "");
    first.answered(1, "v000001", "");
    first.answered(2, "v000001", "");
    assertTrue(first.agreed());
    first.settled();
    assertEquals(1, t.floor());

    // Shard 0 swapped to v2; shards 1 and 2 have not: a Get of shard 0 that
    // answered v2 is re-sent pinned to v1, as the other shards still show it.
    VersionConsensus get = call(t, 0);
    get.answered(0, "v000002", "");
    assertFalse(get.agreed(), "shards 1 and 2 hold the target back at v1");
    VersionConsensus.Round round = get.next();
    assertEquals("v000001", round.pin());
    assertArrayEquals(new int[] {0}, round.parts());
    get.answered(0, "v000001", "");
    assertTrue(get.agreed());
    assertEquals("v000001", get.version());
    get.settled();

    // A batch over shards 0 and 1 that both answered v2 (shard 2 not heard
    // from in it, but still at v1 for this client): v1 again.
    VersionConsensus batch = call(t, 0, 1);
    batch.answered(0, "v000002", "");
    batch.answered(1, "v000002", "");
    assertFalse(batch.agreed());
    assertEquals("v000001", batch.next().pin());
    assertArrayEquals(new int[] {0, 1}, batch.next().parts());

    // Shard 2 shows v2 too: now the target is v2, for every call.
    VersionConsensus last = call(t, 2);
    last.answered(0, "v000002", "");
    assertTrue(last.agreed());
    assertEquals("v000002", last.version());
    last.settled();
    assertEquals(2, t.floor());
    assertEquals(2, t.target());

    // Without monotonic reads the same Get takes what its shard answered.
    VersionConsensus plain = new VersionConsensus(1);
    plain.answered(0, "v000002", "");
    assertTrue(plain.agreed());
  }

  @Test
  void theFloorIsNeverLoweredWithoutWithdrawnThrough() {
    MonotonicReads.Table t = new MonotonicReads(2).table("t");
    VersionConsensus c = call(t, 0, 1);
    c.answered(0, "v000003", "");
    c.answered(1, "v000003", "");
    assertTrue(c.agreed());
    c.settled();
    assertEquals(3, t.floor());

    // A replica that lags (still v2) answers: the floor stays, and the call
    // is pinned to v3.
    VersionConsensus lagging = call(t, 1);
    lagging.answered(0, "v000002", "");
    assertEquals(3, t.floor());
    assertEquals(3, t.newest(1), "an older answer never lowers newest[s]");
    assertFalse(lagging.agreed());
    assertEquals("v000003", lagging.next().pin());

    // Refused (v3 is not there yet): forward never goes below the target.
    lagging.pinRefused();
    assertFalse(lagging.agreed());
    assertEquals("v000003", lagging.next().pin());

    // A call that agreed on an older version (it cannot under these rules,
    // but the state must hold anyway) does not lower it either.
    t.agreed(2);
    assertEquals(3, t.floor());
    // Nor an empty version (a server too old to say).
    t.answered(0, "", "");
    assertEquals(3, t.newest(0));
  }

  @Test
  void withdrawnThroughLowersTheFloorAndWithdrawsTheVersionsAboveIt() {
    MonotonicReads.Table t = new MonotonicReads(2).table("t");
    VersionConsensus c = call(t, 0, 1);
    c.answered(0, "v000002", "");
    c.answered(1, "v000002", "");
    assertTrue(c.agreed());
    c.settled();
    assertEquals(2, t.floor());

    // roost-admin rollback to v1 on shard 0's replica: it answers v1,
    // naming v2 withdrawn.
    VersionConsensus after = call(t, 0, 1);
    after.answered(0, "v000001", "v000002");
    assertEquals(1, t.floor(), "the floor went back");
    assertArrayEquals(new long[] {1, 2}, t.withdrawnRange());
    assertEquals(1, t.newest(0));
    assertEquals(1, t.newest(1), "every newest[t] in (V, X] went back too");
    assertTrue(t.isWithdrawn(2));
    assertFalse(t.isWithdrawn(1));
    // Shard 1's replica that has not rolled back yet still answers v2: not
    // taken, the part is pinned to v1.
    after.answered(1, "v000002", "");
    assertEquals(1, t.newest(1), "a withdrawn version is not newest[s]");
    assertFalse(after.agreed());
    VersionConsensus.Round round = after.next();
    assertEquals("v000001", round.pin());
    assertArrayEquals(new int[] {1}, round.parts());
    // Refused there: moving forward never picks the withdrawn v2.
    after.pinRefused();
    assertFalse(after.agreed());
    assertEquals("v000001", after.next().pin());
    after.answered(1, "v000001", "v000002");
    assertTrue(after.agreed());
    assertEquals("v000001", after.version());
    after.settled();
    assertEquals(1, t.floor(), "v1 is answered again, and v2 never more");

    // A call that agreed on v2 before it heard of the rollback does not
    // raise the floor back to it.
    t.agreed(2);
    assertEquals(1, t.floor());
  }

  @Test
  void aFreshPublishAboveTheWithdrawnBoundIsAcceptedAgain() {
    MonotonicReads.Table t = new MonotonicReads(1).table("t");
    t.answered(0, "v000003", "");
    t.agreed(3);
    t.answered(0, "v000001", "v000003"); // rolled back over v2 and v3
    assertEquals(1, t.floor());
    assertTrue(t.isWithdrawn(2));
    assertTrue(t.isWithdrawn(3));
    assertFalse(t.isWithdrawn(4));
    // v4, published after the rollback (newer than every withdrawn one, it
    // names none): read.
    VersionConsensus c = call(t, 0);
    c.answered(0, "v000004", "");
    assertEquals(4, t.newest(0));
    assertTrue(c.agreed());
    assertEquals("v000004", c.version());
    c.settled();
    assertEquals(4, t.floor());
    // And the lagging replica that still serves v3 is pinned to v4.
    VersionConsensus lagging = call(t, 0);
    lagging.answered(0, "v000003", "");
    assertFalse(lagging.agreed());
    assertEquals("v000004", lagging.next().pin());
  }

  @Test
  void anAnswerThatStandsInForWithdrawnVersionsIsRead() {
    // A client that starts after a rollback: its first answer names the
    // versions rolled back from, and is read.
    MonotonicReads.Table fresh = new MonotonicReads(1).table("t");
    VersionConsensus first = call(fresh, 0);
    first.answered(0, "v000003", "v000005");
    assertTrue(first.agreed());
    assertEquals("v000003", first.version());
    first.settled();
    assertEquals(3, fresh.floor());
    assertArrayEquals(new long[] {3, 5}, fresh.withdrawnRange());

    // A client that read v2, then v3 came, v4 and v5 too but were rolled
    // back before it read them: v3 is newer than its floor, not withdrawn.
    MonotonicReads.Table t = new MonotonicReads(1).table("t");
    t.answered(0, "v000002", "");
    t.agreed(2);
    VersionConsensus c = call(t, 0);
    c.answered(0, "v000003", "v000005");
    assertFalse(t.isWithdrawn(3));
    assertTrue(t.isWithdrawn(4));
    assertTrue(c.agreed());
    assertEquals("v000003", c.version());
    c.settled();
    assertEquals(3, t.floor());
    // A replica that still serves v5 is pinned to v3.
    VersionConsensus lagging = call(t, 0);
    lagging.answered(0, "v000005", "");
    assertEquals(3, t.newest(0));
    assertFalse(lagging.agreed());
    assertEquals("v000003", lagging.next().pin());

    // A second rollback, further back, through the same newest withdrawn
    // version: the range widens down to it, and the floor follows.
    t.answered(0, "v000001", "v000005");
    assertArrayEquals(new long[] {1, 5}, t.withdrawnRange());
    assertEquals(1, t.floor());
    assertTrue(t.isWithdrawn(3));
    // An answer of a narrower range leaves the wider one.
    t.answered(0, "v000003", "v000005");
    assertArrayEquals(new long[] {1, 5}, t.withdrawnRange());
    assertEquals(1, t.newest(0));
  }

  @Test
  void callerPinnedCallsNeitherReadNorChangeTheState() {
    MonotonicReads.Table t = new MonotonicReads(2).table("t");
    t.answered(0, "v000003", "");
    t.answered(1, "v000003", "");
    t.agreed(3);
    VersionConsensus pinned = VersionConsensus.forCall(new int[] {0, 1}, t, "v000001");
    pinned.answered(0, "v000001", "v000009");
    pinned.answered(1, "v000001", "");
    assertTrue(pinned.agreed(), "the floor v3 does not hold it back");
    assertEquals("v000001", pinned.version());
    pinned.settled();
    assertEquals(3, t.floor());
    assertArrayEquals(new long[] {-1, -1}, t.withdrawnRange());
    assertEquals(3, t.newest(0));
    assertEquals(3, t.newest(1));
  }

  @Test
  void withoutMonotonicReadsTheOldestAnsweredIsTheTarget() {
    VersionConsensus c = VersionConsensus.forCall(new int[] {0, 1}, null, null);
    c.answered(0, "v000003", "v000009");
    c.answered(1, "v000002", "");
    assertFalse(c.agreed());
    assertEquals("v000002", c.next().pin());
    assertArrayEquals(new int[] {0}, c.next().parts());
  }

  @Test
  void theStateIsSharedSafelyByThreads() throws Exception {
    MonotonicReads m = new MonotonicReads(4);
    CountDownLatch start = new CountDownLatch(1);
    List<Thread> threads = new ArrayList<>();
    for (int i = 0; i < 8; ++i) {
      int shard = i % 4;
      Thread th =
          new Thread(
              () -> {
                try {
                  start.await();
                } catch (InterruptedException e) {
                  return;
                }
                for (int v = 1; v <= 1000; ++v) {
                  MonotonicReads.Table t = m.table("t");
                  t.answered(shard, VersionConsensus.versionName(v), "");
                  t.agreed(Math.min(v, t.target()));
                }
              });
      th.start();
      threads.add(th);
    }
    start.countDown();
    for (Thread th : threads) {
      th.join();
    }
    MonotonicReads.Table t = m.table("t");
    for (int s = 0; s < 4; ++s) {
      assertEquals(1000, t.newest(s));
    }
    assertEquals(1000, t.target());
    assertEquals(1000, t.floor(), "the last call saw every shard at v1000");
  }
}
