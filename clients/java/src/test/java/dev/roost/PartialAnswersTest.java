package dev.roost;

import static dev.roost.Cluster.bytes;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Partial answers against 3 shards × 2 replicas: a shard down (killed) or hung (SIGSTOP) marks only
 * its keys; every other failure still fails the call, and so does every shard down.
 */
class PartialAnswersTest {
  @TempDir Path scratch;

  static final int N = 300;

  // Each key of `down` carries an error of one of `codes` naming its shard;
  // every other key its value.
  static void checkPartial(
      RoostClient client, MultiGetResult r, List<byte[]> keys, int down, Set<String> codes) {
    assertEquals(keys.size(), r.results().size());
    assertEquals("v000001", r.version());
    int failed = 0;
    for (int k = 0; k < keys.size(); ++k) {
      LookupResult one = r.results().get(k);
      if (client.shardOf(keys.get(k)) == down) {
        ++failed;
        assertFalse(one.answered(), "key " + k);
        assertFalse(one.found(), "key " + k);
        assertTrue(codes.contains(one.error().code()), one.error().getMessage());
        assertEquals(down, one.error().shard(), one.error().getMessage());
        assertTrue(one.error().getMessage().startsWith("shard " + down + " ("), "names the shard");
      } else {
        assertNull(one.error(), "key " + k);
        assertTrue(one.found(), "key " + k);
        assertArrayEquals(bytes("v1 value of key " + k), one.value(), "key " + k);
      }
    }
    assertTrue(failed > 50 && failed < keys.size() - 100, failed + " keys on shard " + down);
    assertEquals(failed, r.failedKeys());
  }

  static byte[] keyOf(RoostClient client, int shard) {
    for (int k = 0; ; ++k) {
      byte[] key = bytes(String.format("key%05d", k));
      if (client.shardOf(key) == shard) {
        return key;
      }
    }
  }

  @Test
  void aShardDownMarksOnlyItsKeys() throws Exception {
    try (Cluster cluster = new Cluster(scratch)) {
      cluster.build("t", Cluster.keysAndValues(N, "v1"), 3);
      cluster.build("b", Cluster.keysAndValues(N, "v1"), 3, "block");
      List<List<String>> shards = cluster.startShards(3, 2, List.of());
      ClientOptions partial =
          ClientOptions.builder().timeout(Duration.ofSeconds(2)).partialAnswers(true).build();
      List<byte[]> keys = FailoverTest.keys(N);
      try (RoostClient client = RoostClient.create(Layout.of(shards), partial);
          RoostClient whole =
              RoostClient.create(
                  Layout.of(shards),
                  ClientOptions.builder().timeout(Duration.ofSeconds(2)).build())) {
        MultiGetResult all = client.multiGet("t", keys);
        FailoverTest.checkAll(all, N);
        assertEquals(0, all.failedKeys());

        cluster.serverAt(shards.get(1).get(0)).kill();
        cluster.serverAt(shards.get(1).get(1)).kill();
        checkPartial(client, client.multiGet("t", keys), keys, 1, Set.of("UNAVAILABLE"));
        checkPartial(
            client, client.multiGetAsync("t", keys).join(), keys, 1, Set.of("UNAVAILABLE"));

        // Without the option the batch fails, naming the shard.
        RoostException e = assertThrows(RoostException.class, () -> whole.multiGet("t", keys));
        assertEquals("UNAVAILABLE", e.code(), e.getMessage());
        assertEquals(1, e.shard());

        // A Get is one shard's: it answers or fails, never partial.
        RoostException get =
            assertThrows(RoostException.class, () -> client.get("t", keyOf(client, 1)));
        assertEquals("UNAVAILABLE", get.code(), get.getMessage());
        assertTrue(client.get("t", keyOf(client, 0)).found());

        // A Scan is never partial: a merge missing a shard would skip keys.
        RoostException scan =
            assertThrows(RoostException.class, () -> client.scan("b", ScanOptions.ALL));
        assertTrue(
            Set.of("UNAVAILABLE", "DEADLINE_EXCEEDED").contains(scan.code()), scan.getMessage());

        // Other failures fail the call: no such table, a stale layout.
        RoostException table =
            assertThrows(RoostException.class, () -> client.multiGet("no_such_table", keys));
        assertEquals("NOT_FOUND", table.code(), table.getMessage());
        Layout swapped = Layout.of(List.of(shards.get(2), shards.get(1), shards.get(0)));
        try (RoostClient stale = RoostClient.create(swapped, partial)) {
          assertThrows(StaleLayoutException.class, () -> stale.multiGet("t", keys));
        }

        // Every shard down: no shard answered, the call fails.
        cluster.serverAt(shards.get(0).get(0)).kill();
        cluster.serverAt(shards.get(0).get(1)).kill();
        cluster.serverAt(shards.get(2).get(0)).kill();
        cluster.serverAt(shards.get(2).get(1)).kill();
        RoostException none = assertThrows(RoostException.class, () -> client.multiGet("t", keys));
        assertEquals("UNAVAILABLE", none.code(), none.getMessage());
      }
    }
  }

  @Test
  void aHungShardEndsAtTheDeadlineAndTheOthersAnswer() throws Exception {
    try (Cluster cluster = new Cluster(scratch)) {
      cluster.build("t", Cluster.keysAndValues(N, "v1"), 3);
      List<List<String>> shards = cluster.startShards(3, 2, List.of());
      ClientOptions partial =
          ClientOptions.builder().timeout(Duration.ofMillis(1500)).partialAnswers(true).build();
      List<byte[]> keys = FailoverTest.keys(N);
      try (RoostClient client = RoostClient.create(Layout.of(shards), partial)) {
        FailoverTest.checkAll(client.multiGet("t", keys), N); // connected
        List<Cluster.Server> hung =
            List.of(cluster.serverAt(shards.get(2).get(0)), cluster.serverAt(shards.get(2).get(1)));
        for (Cluster.Server s : hung) {
          signal("-STOP", s);
        }
        try {
          long start = System.nanoTime();
          MultiGetResult r = client.multiGet("t", keys);
          double seconds = (System.nanoTime() - start) / 1e9;
          assertTrue(seconds >= 1.4 && seconds < 5, "answered after " + seconds + " s");
          checkPartial(client, r, keys, 2, Set.of("DEADLINE_EXCEEDED"));
        } finally {
          for (Cluster.Server s : hung) {
            signal("-CONT", s);
          }
        }
      }
    }
  }

  /** Sends {@code signal} ("-STOP", "-CONT"); after a STOP, returns once every thread stopped. */
  static void signal(String signal, Cluster.Server s) throws Exception {
    long pid = s.process.pid();
    Process p = new ProcessBuilder("kill", signal, Long.toString(pid)).start();
    assertEquals(0, p.waitFor());
    if (signal.equals("-STOP")) {
      Cluster.waitFor(() -> allStopped(pid), "roost-server " + pid + " to stop", s);
    }
  }

  // Whether every thread of `pid` is stopped (state T in /proc/PID/task/TID/stat).
  private static boolean allStopped(long pid) {
    try (java.util.stream.Stream<Path> tasks =
        java.nio.file.Files.list(Path.of("/proc/" + pid + "/task"))) {
      return tasks.allMatch(
          t -> {
            try {
              String stat = java.nio.file.Files.readString(t.resolve("stat"));
              return stat.substring(stat.lastIndexOf(')') + 2).startsWith("T");
            } catch (java.io.IOException e) {
              return true; // the thread is gone
            }
          });
    } catch (java.io.IOException e) {
      return false;
    }
  }
}
