package dev.roost;

import static dev.roost.Cluster.bytes;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.grpc.Status;
import java.nio.channels.ClosedChannelException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Replicas that die or hang while batches run: answers stay complete. */
class FailoverTest {
  @TempDir Path scratch;

  static List<byte[]> keys(int n) {
    List<byte[]> keys = new ArrayList<>();
    for (int k = 0; k < n; ++k) {
      keys.add(bytes(String.format("key%05d", k)));
    }
    return keys;
  }

  static void checkAll(MultiGetResult r, int n) {
    assertEquals(n, r.results().size());
    for (int k = 0; k < n; ++k) {
      assertTrue(r.results().get(k).found(), "key " + k);
      assertArrayEquals(bytes("v1 value of key " + k), r.results().get(k).value(), "key " + k);
    }
  }

  // grpc-java reports a server that went away mid-write as "UNKNOWN: channel closed" (its cause a
  // ClosedChannelException, grpc/grpc-java#7376): retried like UNAVAILABLE; other UNKNOWNs are not.
  @Test
  void aClosedChannelIsRetriedLikeUnavailable() {
    assertTrue(Shards.retryable(Status.UNAVAILABLE));
    assertTrue(
        Shards.retryable(
            Status.UNKNOWN
                .withDescription("channel closed")
                .withCause(new ClosedChannelException())));
    assertFalse(Shards.retryable(Status.UNKNOWN.withDescription("channel closed")));
    assertFalse(Shards.retryable(Status.NOT_FOUND));
  }

  @Test
  void aReplicaKilledMidBatchLosesNoAnswer() throws Exception {
    try (Cluster cluster = new Cluster(scratch)) {
      cluster.build("t", Cluster.keysAndValues(3000, "v1"), 3);
      List<List<String>> shards = cluster.startShards(3, 2, List.of());
      ClientOptions options = ClientOptions.builder().timeout(Duration.ofSeconds(20)).build();
      try (RoostClient client = RoostClient.create(Layout.of(shards), options)) {
        List<byte[]> keys = keys(3000);
        AtomicBoolean stop = new AtomicBoolean();
        AtomicInteger batches = new AtomicInteger();
        ConcurrentLinkedQueue<Throwable> failures = new ConcurrentLinkedQueue<>();
        List<Thread> threads = new ArrayList<>();
        for (int t = 0; t < 4; ++t) {
          Thread thread =
              new Thread(
                  () -> {
                    while (!stop.get()) {
                      try {
                        checkAll(client.multiGet("t", keys), keys.size());
                        batches.incrementAndGet();
                      } catch (Throwable e) {
                        failures.add(e);
                        return;
                      }
                    }
                  });
          thread.start();
          threads.add(thread);
        }
        Cluster.waitFor(() -> batches.get() >= 20 || !failures.isEmpty(), "20 batches", null);
        int before = batches.get();
        cluster.serverAt(shards.get(1).get(0)).kill(); // while batches are in flight
        Cluster.waitFor(
            () -> batches.get() >= before + 40 || !failures.isEmpty(), "40 more batches", null);
        stop.set(true);
        for (Thread t : threads) {
          t.join();
        }
        if (!failures.isEmpty()) {
          throw new AssertionError("a batch failed after the kill", failures.peek());
        }
      }
    }
  }

  @Test
  void hedgingAnswersPastAHungReplica() throws Exception {
    try (Cluster cluster = new Cluster(scratch)) {
      cluster.build("t", Cluster.keysAndValues(100, "v1"), 1);
      Cluster.Server hung = cluster.server(-1, List.of());
      Cluster.Server live = cluster.server(-1, List.of());
      Layout layout = Layout.of(List.of(List.of(hung.address, live.address)));
      Process stop = new ProcessBuilder("kill", "-STOP", Long.toString(hung.process.pid())).start();
      assertEquals(0, stop.waitFor());
      try {
        // Every other batch goes to the hung replica first; the hedge sent
        // after 50 ms to the live one answers long before the 10 s deadline.
        ClientOptions hedged =
            ClientOptions.builder()
                .timeout(Duration.ofSeconds(10))
                .hedgeDelay(Duration.ofMillis(50))
                .build();
        try (RoostClient client = RoostClient.create(layout, hedged)) {
          long start = System.nanoTime();
          for (int b = 0; b < 6; ++b) {
            checkAll(client.multiGet("t", keys(100)), 100);
          }
          double seconds = (System.nanoTime() - start) / 1e9;
          assertTrue(seconds < 5, "6 hedged batches took " + seconds + " s");
        }
        // Without hedging, a call that went to the hung replica waits for
        // its deadline: the hedge is what answered above.
        ClientOptions plain = ClientOptions.builder().timeout(Duration.ofMillis(500)).build();
        try (RoostClient client = RoostClient.create(layout, plain)) {
          int deadlines = 0;
          for (int b = 0; b < 4; ++b) {
            try {
              client.multiGet("t", keys(10));
            } catch (RoostException e) {
              assertEquals("DEADLINE_EXCEEDED", e.code(), e.getMessage());
              ++deadlines;
            }
          }
          assertTrue(deadlines >= 1, "no call went to the hung replica");
        }
      } finally {
        new ProcessBuilder("kill", "-CONT", Long.toString(hung.process.pid())).start().waitFor();
      }
    }
  }
}
