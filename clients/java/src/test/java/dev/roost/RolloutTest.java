package dev.roost;

import static dev.roost.Cluster.bytes;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** A new version published while batches run: every batch is all of one version. */
class RolloutTest {
  @TempDir Path scratch;

  @Test
  void everyBatchReadsOneVersionDuringARollout() throws Exception {
    try (Cluster cluster = new Cluster(scratch)) {
      int n = 1500;
      cluster.build("t", Cluster.keysAndValues(n, "v1"), 3);
      List<List<String>> shards = cluster.startShards(3, 2, List.of());
      ClientOptions options = ClientOptions.builder().timeout(Duration.ofSeconds(20)).build();
      try (RoostClient client = RoostClient.create(Layout.of(shards), options)) {
        List<byte[]> keys = FailoverTest.keys(n);
        AtomicBoolean stop = new AtomicBoolean();
        Map<String, AtomicInteger> byVersion = new ConcurrentHashMap<>();
        ConcurrentLinkedQueue<Throwable> failures = new ConcurrentLinkedQueue<>();
        List<Thread> threads = new ArrayList<>();
        for (int t = 0; t < 4; ++t) {
          Thread thread =
              new Thread(
                  () -> {
                    while (!stop.get()) {
                      try {
                        MultiGetResult r = client.multiGet("t", keys);
                        String tag = r.version().equals("v000001") ? "v1" : "v2";
                        assertTrue(
                            r.version().equals("v000001") || r.version().equals("v000002"),
                            r.version());
                        for (int k = 0; k < n; ++k) {
                          assertArrayEquals(
                              bytes(tag + " value of key " + k),
                              r.results().get(k).value(),
                              "key " + k + " of a batch read from " + r.version());
                        }
                        byVersion
                            .computeIfAbsent(r.version(), v -> new AtomicInteger())
                            .incrementAndGet();
                      } catch (Throwable e) {
                        failures.add(e);
                        return;
                      }
                    }
                  });
          thread.start();
          threads.add(thread);
        }
        Cluster.waitFor(
            () -> byVersion.containsKey("v000001") || !failures.isEmpty(), "v1 batches", null);
        cluster.build("t", Cluster.keysAndValues(n, "v2"), 3);
        client.waitForVersion("t", "v000002", Duration.ofSeconds(60));
        // Batches after every replica serves v2 read v2.
        int v2 = byVersion.computeIfAbsent("v000002", v -> new AtomicInteger()).get();
        Cluster.waitFor(
            () -> byVersion.get("v000002").get() >= v2 + 10 || !failures.isEmpty(),
            "v2 batches",
            null);
        stop.set(true);
        for (Thread t : threads) {
          t.join();
        }
        if (!failures.isEmpty()) {
          throw new AssertionError("a batch during the rollout failed", failures.peek());
        }
        assertTrue(byVersion.get("v000001").get() > 0, byVersion.toString());
        assertTrue(byVersion.get("v000002").get() >= 10, byVersion.toString());
        assertEquals(2, byVersion.size(), byVersion.toString());
      }
    }
  }
}
