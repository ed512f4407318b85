package dev.roost;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HexFormat;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The partition function against every row of docs/format/partition_vectors.tsv. */
class PartitionTest {
  static Path root() {
    return Path.of(System.getProperty("roost.root", "../..")).toAbsolutePath().normalize();
  }

  @Test
  void everyVectorOfTheDocs() throws Exception {
    Path file = root().resolve("docs/format/partition_vectors.tsv");
    List<String> lines = Files.readAllLines(file, StandardCharsets.UTF_8);
    String[] header = null;
    int rows = 0;
    for (int n = 0; n < lines.size(); ++n) {
      String line = lines.get(n);
      if (line.startsWith("#") || line.isEmpty()) {
        continue;
      }
      String[] cells = line.split("\t", -1);
      if (header == null) {
        header = cells;
        assertEquals("key_hex", header[0], file + ":" + (n + 1));
        assertEquals("xxh3_64", header[1], file + ":" + (n + 1));
        continue;
      }
      String where = file + ":" + (n + 1) + " key " + cells[0];
      assertEquals(header.length, cells.length, where + ": cells");
      byte[] key = HexFormat.of().parseHex(cells[0]);
      assertEquals(cells[1], String.format("%016x", Partition.hash(key)), where + ": xxh3_64");
      for (int c = 2; c < header.length; ++c) {
        int shards = Integer.parseInt(header[c]);
        assertEquals(
            Integer.parseInt(cells[c]), Partition.shardOf(key, shards), where + " of " + shards);
      }
      ++rows;
    }
    // The file's rows as its doc describes them: 64 keyNNNNN keys and more.
    assertTrue(rows > 64, "only " + rows + " rows in " + file);
  }

  @Test
  void worksExamplesOfTheDocs() {
    assertEquals(2, Partition.shardOf(new byte[0], 4));
    assertEquals(704, Partition.shardOf(new byte[0], 1000));
    assertEquals(3, Partition.shardOf("user1".getBytes(StandardCharsets.UTF_8), 4));
    assertEquals(5, Partition.shardOf("user1".getBytes(StandardCharsets.UTF_8), 7));
    assertEquals(0, Partition.shardOf(new byte[] {0, (byte) 0xff}, 4));
  }

  @Test
  void reducesAsUnsigned128BitProduct() {
    // h = 2^64 - 1: (h * n) >> 64 = n - 1; h = 2^63: n / 2.
    assertEquals(1023, Partition.reduce(-1L, 1024));
    assertEquals(512, Partition.reduce(Long.MIN_VALUE, 1024));
    assertEquals(0, Partition.reduce(Long.MAX_VALUE, 1));
    assertEquals(0, Partition.reduce(-1L, 1));
  }

  @Test
  void refusesShardCountsOutOfRange() {
    assertThrows(IllegalArgumentException.class, () -> Partition.shardOf(new byte[0], 0));
    assertThrows(IllegalArgumentException.class, () -> Partition.shardOf(new byte[0], 1025));
  }
}
