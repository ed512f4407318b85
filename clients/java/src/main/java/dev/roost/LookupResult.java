package dev.roost;

/**
 * One key's answer in a {@link MultiGetResult}: found or not, and its value (empty when not found;
 * an empty value of a found key is a value).
 */
public record LookupResult(boolean found, byte[] value) {
  static final LookupResult MISSING = new LookupResult(false, new byte[0]);
}
