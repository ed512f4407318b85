package dev.roost;

/**
 * One key's answer in a {@link MultiGetResult}: found or not, and its value (empty when not found;
 * an empty value of a found key is a value). With partial answers ({@link
 * ClientOptions.Builder#partialAnswers}), {@code error} is the error of the key's shard when that
 * shard could not answer (then {@code found} is false and {@code value} empty); otherwise null.
 */
public record LookupResult(boolean found, byte[] value, RoostException error) {
  static final LookupResult MISSING = new LookupResult(false, new byte[0]);

  /** An answered key. */
  public LookupResult(boolean found, byte[] value) {
    this(found, value, null);
  }

  /** Whether the key's shard answered (always, without partial answers). */
  public boolean answered() {
    return error == null;
  }
}
