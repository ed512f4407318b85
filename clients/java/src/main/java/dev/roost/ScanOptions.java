package dev.roost;

/**
 * What a {@link RoostClient#scan} reads: the keys from {@code start} (inclusive; empty: the table's
 * first) to {@code end} (exclusive; empty: no bound) that begin with {@code prefix} (empty: any),
 * at most {@code limit} over all shards (0: each server's --max-scan-keys, and then the result
 * holds every key only up to where the first shard stopped).
 */
public record ScanOptions(byte[] start, byte[] end, byte[] prefix, int limit) {
  public static final ScanOptions ALL = new ScanOptions(null, null, null, 0);

  public ScanOptions {
    start = start == null ? new byte[0] : start;
    end = end == null ? new byte[0] : end;
    prefix = prefix == null ? new byte[0] : prefix;
    if (limit < 0) {
      throw new IllegalArgumentException("the limit must not be negative");
    }
  }

  public static ScanOptions prefix(byte[] prefix, int limit) {
    return new ScanOptions(null, null, prefix, limit);
  }

  public static ScanOptions range(byte[] start, byte[] end, int limit) {
    return new ScanOptions(start, end, null, limit);
  }
}
