package dev.roost;

import static dev.roost.Cluster.bytes;
import static dev.roost.Cluster.unhex;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.ServerSocket;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Reads against one real cluster, 3 shards × 2 replicas of roost-server serving a table roost-load
 * built, that no test changes.
 */
class ClientReadTest {
  @TempDir static Path scratch;
  static Cluster cluster;
  static Map<String, byte[]> kvs;
  static List<List<String>> shards;
  static RoostClient client;

  @BeforeAll
  static void startCluster() throws Exception {
    cluster = new Cluster(scratch);
    kvs = Cluster.keysAndValues(2000, "v1");
    cluster.build("t", kvs, 3);
    // A --max-batch below a shard's part of the largest batches here: the
    // client splits those parts (maxBatch).
    shards = cluster.startShards(3, 2, List.of("--max-batch", "300"));
    client = RoostClient.create(Layout.of(shards), ClientOptions.builder().maxBatch(300).build());
  }

  @AfterAll
  static void stopCluster() throws Exception {
    if (client != null) {
      client.close();
    }
    if (cluster != null) {
      cluster.close();
    }
  }

  @Test
  void everyKeyIsFoundWithItsValueAndMissesAreMisses() {
    List<byte[]> keys = new ArrayList<>();
    List<byte[]> want = new ArrayList<>();
    int i = 0;
    for (Map.Entry<String, byte[]> kv : kvs.entrySet()) {
      keys.add(unhex(kv.getKey()));
      want.add(kv.getValue());
      if (i++ % 7 == 0) {
        keys.add(bytes("missing " + i)); // misses between the hits
        want.add(null);
      }
    }
    keys.add(unhex("00ff00")); // a duplicate, answered twice
    want.add(kvs.get("00ff00"));
    // Each shard's part is larger than the servers' --max-batch: the client
    // splits it (without, the servers refuse it).
    try (RoostClient unsplit = RoostClient.create(Layout.of(shards))) {
      assertEquals(
          "INVALID_ARGUMENT",
          assertThrows(RoostException.class, () -> unsplit.multiGet("t", keys)).code());
    }
    MultiGetResult r = client.multiGet("t", keys);
    assertEquals("v000001", r.version());
    assertEquals(keys.size(), r.results().size());
    for (int k = 0; k < keys.size(); ++k) {
      LookupResult got = r.results().get(k);
      String what = "key " + k + " (" + Cluster.hex(keys.get(k)) + ")";
      if (want.get(k) == null) {
        assertFalse(got.found(), what);
        assertEquals(0, got.value().length, what);
      } else {
        assertTrue(got.found(), what);
        assertArrayEquals(want.get(k), got.value(), what);
      }
    }
  }

  @Test
  void getAnswersBinaryKeysTheEmptyKeyAndMisses() {
    GetResult empty = client.get("t", new byte[0]);
    assertTrue(empty.found());
    assertArrayEquals(bytes("v1 the empty key's value"), empty.value());
    assertEquals("v000001", empty.version());
    GetResult binary = client.get("t", new byte[] {0, (byte) 0xff, 0});
    assertArrayEquals(new byte[] {0, 'b', (byte) 0xff}, binary.value());
    GetResult emptyValue = client.get("t", bytes("tab\tnew\nline"));
    assertTrue(emptyValue.found(), "an empty value is a value");
    assertEquals(0, emptyValue.value().length);
    assertFalse(client.get("t", bytes("no such key")).found());
  }

  @Test
  void anEmptyBatchIsAnswered() {
    MultiGetResult r = client.multiGet("t", List.of());
    assertEquals(List.of(), r.results());
  }

  @Test
  void asyncCallsAnswerAsTheBlockingOnes() {
    List<CompletableFuture<MultiGetResult>> batches = new ArrayList<>();
    List<CompletableFuture<GetResult>> gets = new ArrayList<>();
    for (int b = 0; b < 50; ++b) {
      List<byte[]> keys = new ArrayList<>();
      for (int k = 0; k < 40; ++k) {
        keys.add(bytes(String.format("key%05d", b * 40 + k)));
      }
      batches.add(client.multiGetAsync("t", keys));
      gets.add(client.getAsync("t", bytes(String.format("key%05d", b))));
    }
    for (int b = 0; b < 50; ++b) {
      MultiGetResult r = batches.get(b).join();
      for (int k = 0; k < 40; ++k) {
        assertArrayEquals(bytes("v1 value of key " + (b * 40 + k)), r.results().get(k).value());
      }
      assertArrayEquals(bytes("v1 value of key " + b), gets.get(b).join().value());
    }
  }

  @Test
  void coalescedGetsGoOutTogetherAndAnswerEachCaller() throws Exception {
    ClientOptions options = ClientOptions.builder().coalesceGets(true, 2, 300).build();
    try (RoostClient coalescing = RoostClient.create(Layout.of(shards), options)) {
      List<CompletableFuture<GetResult>> gets = new ArrayList<>();
      for (int k = 0; k < 600; ++k) {
        gets.add(coalescing.getAsync("t", bytes(String.format("key%05d", k))));
      }
      gets.add(coalescing.getAsync("t", bytes("no such key")));
      for (int k = 0; k < 600; ++k) {
        GetResult r = gets.get(k).join();
        assertArrayEquals(bytes("v1 value of key " + k), r.value(), "key " + k);
        assertEquals("v000001", r.version());
      }
      assertFalse(gets.get(600).join().found());
      long[] sent = coalescing.coalesced();
      assertEquals(601, sent[1], "every Get went through the coalescer");
      // 3 shards × 2 in flight: far fewer calls than Gets.
      assertTrue(sent[0] < 601 / 4, sent[0] + " MultiGets for 601 Gets");
      // A Get that names a version or a timeout goes its own way.
      assertEquals(
          "v000001", coalescing.get("t", bytes("key00001"), CallOptions.version("1")).version());
      assertEquals(601, coalescing.coalesced()[1]);
    }
  }

  @Test
  void closingAClientEndsEveryCallInFlight() throws Exception {
    // A shard with no live replica keeps its parts retrying: close() must
    // end them, not leave their futures waiting for a timer that never runs.
    int port;
    try (ServerSocket s = new ServerSocket(0)) {
      port = s.getLocalPort();
    }
    List<List<String>> layout = List.of(shards.get(0), List.of("127.0.0.1:" + port), shards.get(2));
    RoostClient closing =
        RoostClient.create(
            Layout.of(layout), ClientOptions.builder().timeout(Duration.ofSeconds(60)).build());
    List<CompletableFuture<MultiGetResult>> calls = new ArrayList<>();
    for (int b = 0; b < 20; ++b) {
      List<byte[]> keys = new ArrayList<>();
      for (int k = 0; k < 30; ++k) {
        keys.add(bytes(String.format("key%05d", b * 30 + k)));
      }
      calls.add(closing.multiGetAsync("t", keys));
    }
    Thread.sleep(300);
    closing.close();
    for (CompletableFuture<MultiGetResult> call : calls) {
      java.util.concurrent.ExecutionException e =
          assertThrows(
              java.util.concurrent.ExecutionException.class,
              () -> call.get(10, java.util.concurrent.TimeUnit.SECONDS));
      assertTrue(e.getCause() instanceof RoostException, e.getCause().toString());
    }
  }

  @Test
  void aPinnedVersionIsReadOrRefused() {
    List<byte[]> keys = List.of(bytes("key00001"), bytes("key00002"), bytes("key00003"));
    assertEquals("v000001", client.multiGet("t", keys, CallOptions.version("1")).version());
    RoostException e =
        assertThrows(
            RoostException.class, () -> client.multiGet("t", keys, CallOptions.version("v000009")));
    assertEquals("FAILED_PRECONDITION", e.code());
    assertFalse(e instanceof StaleLayoutException, e.getMessage());
  }

  @Test
  void aLayoutInAnotherOrderIsStaleNotASilentMiss() {
    List<List<String>> reversed = List.of(shards.get(2), shards.get(1), shards.get(0));
    try (RoostClient stale = RoostClient.create(Layout.of(reversed))) {
      List<byte[]> keys = new ArrayList<>();
      for (int k = 0; k < 30; ++k) {
        keys.add(bytes(String.format("key%05d", k)));
      }
      StaleLayoutException e =
          assertThrows(StaleLayoutException.class, () -> stale.multiGet("t", keys));
      assertEquals("FAILED_PRECONDITION", e.code());
      assertTrue(e.getMessage().startsWith("stale cluster layout: shard "), e.getMessage());
      assertTrue(e.getMessage().contains("belongs to shard"), e.getMessage());
    }
    try (RoostClient fewer = RoostClient.create(Layout.of(shards.subList(0, 2)))) {
      assertThrows(
          StaleLayoutException.class, () -> fewer.waitForVersion("t", "1", Duration.ofSeconds(10)));
    }
  }

  @Test
  void anUnknownTableIsNotFound() {
    RoostException e =
        assertThrows(RoostException.class, () -> client.get("no_such_table", bytes("k")));
    assertEquals("NOT_FOUND", e.code(), e.getMessage());
  }

  @Test
  void aShardWithNoLiveReplicaIsUnavailableNamingIt() throws Exception {
    int port;
    try (ServerSocket s = new ServerSocket(0)) {
      port = s.getLocalPort();
    }
    String dead = "127.0.0.1:" + port;
    List<List<String>> layout = List.of(shards.get(0), List.of(dead, dead), shards.get(2));
    ClientOptions options = ClientOptions.builder().timeout(Duration.ofSeconds(1)).build();
    try (RoostClient broken = RoostClient.create(Layout.of(layout), options)) {
      byte[] key = null;
      for (int k = 0; key == null; ++k) {
        byte[] candidate = bytes(String.format("key%05d", k));
        if (broken.shardOf(candidate) == 1) {
          key = candidate;
        }
      }
      byte[] shard1 = key;
      RoostException e = assertThrows(RoostException.class, () -> broken.get("t", shard1));
      assertEquals("UNAVAILABLE", e.code(), e.getMessage());
      assertEquals(1, e.shard());
      assertTrue(e.getMessage().startsWith("shard 1 (" + dead + "): "), e.getMessage());
      assertTrue(
          e.getMessage().contains("no replica answered before the deadline"), e.getMessage());
    }
  }

  @Test
  void waitForVersionReturnsOnceEveryReplicaServesItOrTimesOutNamingThem() {
    client.waitForVersion("t", "v000001", Duration.ofSeconds(10));
    client.waitForVersionAsync("t", "1", Duration.ofSeconds(10)).join();
    RoostException e =
        assertThrows(
            RoostException.class, () -> client.waitForVersion("t", "2", Duration.ofSeconds(1)));
    assertEquals("DEADLINE_EXCEEDED", e.code());
    assertTrue(e.getMessage().startsWith("not every replica serves t v000002"), e.getMessage());
    // Each replica is named with what it serves, or with DEADLINE_EXCEEDED
    // when the deadline cut its last poll short (a busy machine).
    for (List<String> shard : shards) {
      for (String replica : shard) {
        assertTrue(
            e.getMessage().contains(" " + replica + ": serves v000001")
                || e.getMessage().contains(" " + replica + ": DEADLINE_EXCEEDED"),
            e.getMessage());
      }
    }
  }
}
