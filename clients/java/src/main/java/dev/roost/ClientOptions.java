package dev.roost;

import io.micrometer.core.instrument.MeterRegistry;
import io.opentelemetry.api.OpenTelemetry;
import io.opentelemetry.api.trace.Tracer;
import java.time.Duration;
import java.util.Objects;

/**
 * How a {@link RoostClient} makes its calls. Immutable; made with {@link #builder()}.
 *
 * <pre>{@code
 * ClientOptions options = ClientOptions.builder()
 *     .timeout(Duration.ofSeconds(2))
 *     .hedgeDelay(Duration.ofMillis(20))
 *     .token(System.getenv("ROOST_TOKEN"))
 *     .build();
 * }</pre>
 */
public final class ClientOptions {
  private final Duration timeout;
  private final Duration hedgeDelay;
  private final Duration backoff;
  private final Duration maxBackoff;
  private final String token;
  private final int maxBatch;
  private final boolean coalesceGets;
  private final int coalesceMaxInFlight;
  private final int coalesceMaxBatch;
  private final boolean partialAnswers;
  private final boolean monotonic;
  private final MeterRegistry meterRegistry;
  private final Tracer tracer;

  private ClientOptions(Builder b) {
    this.partialAnswers = b.partialAnswers;
    this.monotonic = b.monotonic;
    this.meterRegistry = b.meterRegistry;
    this.tracer = b.tracer;
    this.maxBatch = b.maxBatch;
    this.coalesceGets = b.coalesceGets;
    this.coalesceMaxInFlight = b.coalesceMaxInFlight;
    this.coalesceMaxBatch = b.coalesceMaxBatch;
    this.timeout = b.timeout;
    this.hedgeDelay = b.hedgeDelay;
    this.backoff = b.backoff;
    this.maxBackoff = b.maxBackoff;
    this.token = b.token;
  }

  public static Builder builder() {
    return new Builder();
  }

  /** The defaults: 10 s deadline, no hedging, backoff 20 ms doubling to 500 ms, no token. */
  public static ClientOptions defaults() {
    return builder().build();
  }

  public Duration timeout() {
    return timeout;
  }

  public Duration hedgeDelay() {
    return hedgeDelay;
  }

  public Duration backoff() {
    return backoff;
  }

  public Duration maxBackoff() {
    return maxBackoff;
  }

  /** The bearer token, or null. */
  public String token() {
    return token;
  }

  public int maxBatch() {
    return maxBatch;
  }

  public boolean coalesceGets() {
    return coalesceGets;
  }

  public int coalesceMaxInFlight() {
    return coalesceMaxInFlight;
  }

  public int coalesceMaxBatch() {
    return coalesceMaxBatch;
  }

  public boolean partialAnswers() {
    return partialAnswers;
  }

  public boolean monotonic() {
    return monotonic;
  }

  /** The registry the client metrics go to, or null (none). */
  public MeterRegistry meterRegistry() {
    return meterRegistry;
  }

  /** The tracer of the client's spans, or null (none). */
  public Tracer tracer() {
    return tracer;
  }

  public Builder toBuilder() {
    Builder b = new Builder();
    b.partialAnswers = partialAnswers;
    b.monotonic = monotonic;
    b.meterRegistry = meterRegistry;
    b.tracer = tracer;
    b.maxBatch = maxBatch;
    b.coalesceGets = coalesceGets;
    b.coalesceMaxInFlight = coalesceMaxInFlight;
    b.coalesceMaxBatch = coalesceMaxBatch;
    b.timeout = timeout;
    b.hedgeDelay = hedgeDelay;
    b.backoff = backoff;
    b.maxBackoff = maxBackoff;
    b.token = token;
    return b;
  }

  public static final class Builder {
    private Duration timeout = Duration.ofSeconds(10);
    private Duration hedgeDelay = Duration.ZERO;
    private Duration backoff = Duration.ofMillis(20);
    private Duration maxBackoff = Duration.ofMillis(500);
    private String token;
    private int maxBatch = 10000;
    private boolean coalesceGets;
    private int coalesceMaxInFlight = 4;
    private int coalesceMaxBatch = 1000;
    private boolean partialAnswers;
    private boolean monotonic;
    private MeterRegistry meterRegistry;
    private Tracer tracer;

    private Builder() {}

    /**
     * Partial answers: a MultiGet whose shard could not answer (its retries ended UNAVAILABLE or
     * RESOURCE_EXHAUSTED at the deadline, or the deadline itself) answers the other shards' keys,
     * all from one version, and gives each key of that shard its error ({@link
     * LookupResult#error()}). The call fails only when no shard answered, or for any other error (a
     * stale layout, no such table), as without it. A Get (one shard) and a Scan are never partial.
     * The default value is off.
     */
    public Builder partialAnswers(boolean on) {
      this.partialAnswers = on;
      return this;
    }

    /**
     * Monotonic reads (client/README.md, "Monotonic reads"): no call answers from a version of a
     * table older than one this client already answered a call of that table from, unless that
     * newer version was withdrawn (a rollback; the servers say so in withdrawn_through); and a new
     * version becomes visible only once every shard this client has heard from has shown it, so
     * that a rollout is seen as one switch. The state is this client's, per table, shared by every
     * call; a call that names its version ({@link CallOptions}) neither reads nor changes it. A
     * call may take one more round trip during a rollout, and waits (backoff, up to its deadline)
     * while every replica of a shard lags behind a version already answered. The default value is
     * off.
     */
    public Builder monotonic(boolean on) {
      this.monotonic = on;
      return this;
    }

    /**
     * The client metrics (tests/conformance/README.md, "Client metrics") are kept in {@code
     * registry}: {@code roost.client.requests}, {@code roost.client.keys}, {@code
     * roost.client.errors}, {@code roost.client.partial.keys}, the timer {@code
     * roost.client.request}, {@code roost.client.hedges}, {@code roost.client.retries}, {@code
     * roost.client.version.switches}. Null: none. The default value is none.
     */
    public Builder meterRegistry(MeterRegistry registry) {
      this.meterRegistry = registry;
      return this;
    }

    /**
     * A span per get, multiGet and scan ("roost.Get", "roost.MultiGet", "roost.Scan") from {@code
     * tracer}. Null: none. The default value is none.
     */
    public Builder tracer(Tracer tracer) {
      this.tracer = tracer;
      return this;
    }

    /** {@link #tracer} with the tracer "dev.roost.roost-client" of {@code openTelemetry}. */
    public Builder openTelemetry(OpenTelemetry openTelemetry) {
      this.tracer =
          openTelemetry == null ? null : openTelemetry.getTracer("dev.roost.roost-client", "0.1.0");
      return this;
    }

    /**
     * The most keys one MultiGet call carries: the servers' --max-batch. A shard's part of a batch
     * with more keys goes as several calls, sent at once and read from the same version as the rest
     * of the batch. The default value is 10000 (roost-server's default).
     */
    public Builder maxBatch(int maxBatch) {
      if (maxBatch < 1) {
        throw new IllegalArgumentException("maxBatch must be 1 or more");
      }
      this.maxBatch = maxBatch;
      return this;
    }

    /**
     * Coalescing: get() and getAsync() without CallOptions send single keys as MultiGets, many
     * callers' keys together: per shard and table, at most {@code maxInFlight} MultiGets on the
     * wire, Gets that come meanwhile waiting for one to answer and going out together, at most
     * {@code maxBatch} keys (the servers' --max-batch or less). A coalesced Get's version is its
     * shard's. The default value is off, 4 and 1000.
     */
    public Builder coalesceGets(boolean on, int maxInFlight, int maxBatch) {
      if (maxInFlight < 1 || maxBatch < 1) {
        throw new IllegalArgumentException(
            "coalescing needs at least 1 batch in flight of at least 1 key");
      }
      this.coalesceGets = on;
      this.coalesceMaxInFlight = maxInFlight;
      this.coalesceMaxBatch = maxBatch;
      return this;
    }

    /**
     * The deadline of a call that names none: every attempt, retry and version round of it. More
     * than 0. The default value is 10 seconds.
     */
    public Builder timeout(Duration timeout) {
      if (timeout.isNegative() || timeout.isZero()) {
        throw new IllegalArgumentException("the timeout must be more than 0 s, not " + timeout);
      }
      this.timeout = timeout;
      return this;
    }

    /**
     * Hedging: when a shard's part has not answered after this long, a second call goes to another
     * replica of the shard and the first answer wins. Zero turns hedging off. The default value is
     * zero.
     */
    public Builder hedgeDelay(Duration hedgeDelay) {
      if (hedgeDelay.isNegative()) {
        throw new IllegalArgumentException("the hedge delay must not be negative");
      }
      this.hedgeDelay = hedgeDelay;
      return this;
    }

    /**
     * The wait before a shard all of whose replicas failed is tried again, doubling each round up
     * to maxBackoff; also the first wait before a batch re-reads a newer version. The default
     * values are 20 ms and 500 ms.
     */
    public Builder backoff(Duration backoff, Duration maxBackoff) {
      if (backoff.isNegative() || maxBackoff.compareTo(backoff) < 0) {
        throw new IllegalArgumentException("the backoff must be 0 <= backoff <= maxBackoff");
      }
      this.backoff = backoff;
      this.maxBackoff = maxBackoff;
      return this;
    }

    /**
     * Sent as "authorization: Bearer TOKEN" with every call (roost-server --auth-token-file); null
     * or empty: none. The default value is none.
     */
    public Builder token(String token) {
      this.token = token == null || token.isEmpty() ? null : token;
      return this;
    }

    public ClientOptions build() {
      Objects.requireNonNull(timeout);
      return new ClientOptions(this);
    }
  }
}
