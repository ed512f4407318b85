package dev.roost;

import java.time.Duration;

/**
 * Per call: its deadline and the version it reads. Immutable.
 *
 * <pre>{@code
 * client.multiGet("users", keys, CallOptions.version("v000007"));
 * client.get("users", key, CallOptions.timeout(Duration.ofMillis(50)));
 * }</pre>
 *
 * @param timeout the deadline of this call; null: {@link ClientOptions#timeout()}
 * @param version read this version ("v000007" or "7") on every shard, as the servers take it (the
 *     serving one or the one it replaced within --version-grace; FAILED_PRECONDITION otherwise);
 *     null or empty: the consistency algorithm chooses one version for the whole batch
 */
public record CallOptions(Duration timeout, String version) {
  public static final CallOptions DEFAULT = new CallOptions(null, null);

  public CallOptions {
    if (timeout != null && (timeout.isNegative() || timeout.isZero())) {
      throw new IllegalArgumentException("the timeout must be more than 0 s, not " + timeout);
    }
    if (version != null && version.isEmpty()) {
      version = null;
    }
  }

  public static CallOptions timeout(Duration timeout) {
    return new CallOptions(timeout, null);
  }

  public static CallOptions version(String version) {
    return new CallOptions(null, version);
  }
}
