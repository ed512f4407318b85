package dev.roost;

import static dev.roost.Cluster.bytes;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Scan over 3 shards × 2 replicas of a block table: the shards' streams merged in key order. */
class ScanTest {
  @TempDir Path scratch;

  // The keys of kvs in unsigned byte order (hex text sorts the same way).
  static List<String> sortedHex(Map<String, byte[]> kvs) {
    List<String> keys = new ArrayList<>(kvs.keySet());
    keys.sort(null);
    return keys;
  }

  static void check(Map<String, byte[]> kvs, List<String> want, ScanResult got) {
    assertEquals(want.size(), got.entries().size());
    for (int i = 0; i < want.size(); ++i) {
      ScanResult.Entry e = got.entries().get(i);
      assertEquals(want.get(i), Cluster.hex(e.key()), "entry " + i);
      assertArrayEquals(kvs.get(want.get(i)), e.value(), "entry " + i);
    }
  }

  @Test
  void scansMergeTheShardsInKeyOrder() throws Exception {
    try (Cluster cluster = new Cluster(scratch)) {
      Map<String, byte[]> kvs = Cluster.keysAndValues(500, "v1");
      cluster.build("b", kvs, 3, "block");
      cluster.build("c", kvs, 3, "cuckoo");
      List<List<String>> shards = cluster.startShards(3, 2, List.of());
      List<String> all = sortedHex(kvs);
      try (RoostClient client = RoostClient.create(Layout.of(shards))) {
        ScanResult r = client.scan("b", ScanOptions.ALL);
        check(kvs, all, r);
        assertFalse(r.more());
        assertEquals("v000001", r.version());

        ScanResult some = client.scan("b", ScanOptions.prefix(bytes("key0001"), 0));
        check(
            kvs,
            all.subList(
                all.indexOf(Cluster.hex(bytes("key00010"))),
                all.indexOf(Cluster.hex(bytes("key00020")))),
            some);

        ScanResult first = client.scan("b", new ScanOptions(null, null, null, 25));
        check(kvs, all.subList(0, 25), first);
        assertTrue(first.more());

        ScanResult range =
            client.scan("b", ScanOptions.range(bytes("key00100"), bytes("key00200"), 0));
        check(
            kvs,
            all.subList(
                all.indexOf(Cluster.hex(bytes("key00100"))),
                all.indexOf(Cluster.hex(bytes("key00200")))),
            range);
        assertEquals(100, range.entries().size());

        check(kvs, all, client.scanAsync("b", ScanOptions.ALL, CallOptions.version("1")).join());

        RoostException cuckoo =
            assertThrows(RoostException.class, () -> client.scan("c", ScanOptions.ALL));
        assertEquals("FAILED_PRECONDITION", cuckoo.code(), cuckoo.getMessage());

        // A replica down: its streams open on the other one.
        cluster.serverAt(shards.get(2).get(0)).kill();
        for (int i = 0; i < 4; ++i) {
          check(kvs, all, client.scan("b", ScanOptions.ALL));
        }
      }
    }
  }
}
