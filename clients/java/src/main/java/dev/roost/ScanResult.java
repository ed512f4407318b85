package dev.roost;

import java.util.List;

/**
 * A Scan's answer: entries in key order (unsigned bytes) over every shard; {@code more} when keys
 * are left in the range after the last entry (scan again from just after it); the one version every
 * shard answered from.
 */
public record ScanResult(List<Entry> entries, boolean more, String version) {
  /** One key and its value. */
  public record Entry(byte[] key, byte[] value) {}
}
