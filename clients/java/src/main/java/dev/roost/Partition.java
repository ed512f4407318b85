package dev.roost;

import java.util.Objects;
import net.openhft.hashing.LongHashFunction;

/**
 * The partition function of sharded tables, {@code xxh3-64-multiply-shift}
 * (docs/format/partitioning.md): the shard of a key is the high 64 bits of XXH3-64(key, seed
 * 0x726f6f7374) times the shard count, taken as unsigned integers. The loader, the servers and
 * every client compute the same number; PartitionTest checks this one against every row of
 * docs/format/partition_vectors.tsv.
 *
 * <p>Thread-safe: stateless.
 *
 * <pre>{@code
 * int shard = Partition.shardOf("user1".getBytes(UTF_8), 4);  // 3
 * }</pre>
 */
public final class Partition {
  /** The seed: the ASCII bytes of "roost" read as a big-endian number. */
  public static final long SEED = 0x726f6f7374L;

  /** The most shards a table may have. */
  public static final int MAX_SHARDS = 1024;

  // XXH3-64 with a 64-bit seed and the default secret, as
  // XXH3_64bits_withSeed (net.openhft zero-allocation-hashing).
  private static final LongHashFunction XXH3 = LongHashFunction.xx3(SEED);

  private Partition() {}

  /** XXH3-64 of {@code key} with the partition seed, an unsigned 64-bit number. */
  public static long hash(byte[] key) {
    return XXH3.hashBytes(Objects.requireNonNull(key, "key"));
  }

  /**
   * The shard of {@code key} among {@code shards} (1 to {@link #MAX_SHARDS}).
   *
   * @throws IllegalArgumentException for a shard count out of that range
   */
  public static int shardOf(byte[] key, int shards) {
    if (shards < 1 || shards > MAX_SHARDS) {
      throw new IllegalArgumentException(
          "the shard count must be 1 to " + MAX_SHARDS + ", not " + shards);
    }
    return reduce(hash(key), shards);
  }

  /** (h × n) >> 64 with h unsigned: multiplyHigh, corrected for a negative h. */
  static int reduce(long h, int n) {
    return (int) (Math.multiplyHigh(h, n) + (h < 0 ? n : 0));
  }
}
