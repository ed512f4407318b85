package dev.roost;

import com.google.protobuf.ByteString;
import dev.roost.v1.MultiGetRequest;
import io.grpc.Deadline;
import io.grpc.Status;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The routing client of a sharded roost cluster, the Java face of the contract the C++ client
 * (client/cluster_client.h) and the Python one keep: it routes each key to its shard by the
 * partition function ({@link Partition}), splits a MultiGet per shard and sends the parts at once,
 * spreads calls over each shard's replicas, retries a part on another replica (UNAVAILABLE,
 * RESOURCE_EXHAUSTED), optionally hedges, and reads every batch from one table version.
 *
 * <p>The guarantee: every result of one call comes from the one table version it names, on every
 * shard, or the call fails (ABORTED when no version could be agreed on before the deadline). A
 * layout that does not match the table (shards in another order or count) fails with a {@link
 * StaleLayoutException}, never a silent miss. Every failure is a {@link RoostException} carrying
 * the gRPC status code's name.
 *
 * <p>Thread-safe: one client for the whole process. The blocking methods block only their caller;
 * the async ones return at once, and their futures complete on gRPC's threads (do not block in
 * their callbacks). Close the client to release its channels.
 *
 * <pre>{@code
 * try (RoostClient client = RoostClient.create(Layout.fromFile(Path.of("cluster.json")))) {
 *   MultiGetResult r = client.multiGet("users", keys);
 *   for (int i = 0; i < keys.size(); ++i) {
 *     if (r.results().get(i).found()) use(keys.get(i), r.results().get(i).value());
 *   }
 *   // r.version(): "v000007", the version every shard answered from
 * }
 * }</pre>
 */
public final class RoostClient implements AutoCloseable {
  private static final AtomicInteger CLIENTS = new AtomicInteger();

  private final Layout layout;
  private final ClientOptions options;
  private final ScheduledThreadPoolExecutor timers;
  private final Shards shards;
  private final GetCoalescer coalescer; // null: off
  private final MonotonicReads monotonic; // null: off
  private final Telemetry telemetry;

  private RoostClient(Layout layout, ClientOptions options) {
    this.layout = layout;
    this.options = options;
    this.telemetry =
        new Telemetry(
            options.meterRegistry() == null ? null : new ClientMetrics(options.meterRegistry()),
            options.tracer());
    int id = CLIENTS.incrementAndGet();
    this.timers =
        new ScheduledThreadPoolExecutor(
            1,
            r -> {
              Thread t = new Thread(r, "roost-client-" + id + "-timer");
              t.setDaemon(true);
              return t;
            });
    timers.setRemoveOnCancelPolicy(true);
    try {
      this.shards = Shards.connect(layout, options.token(), timers);
    } catch (RuntimeException e) {
      timers.shutdownNow();
      throw e;
    }
    this.monotonic = options.monotonic() ? new MonotonicReads(layout.shardCount()) : null;
    this.coalescer =
        options.coalesceGets()
            ? new GetCoalescer(
                shards,
                this::monotonic,
                options.coalesceMaxInFlight(),
                options.coalesceMaxBatch(),
                () -> policy(CallOptions.DEFAULT, false)) // one key: never partial
            : null;
  }

  /** A client of the cluster {@code layout} describes, with the default options. */
  public static RoostClient create(Layout layout) {
    return create(layout, ClientOptions.defaults());
  }

  /**
   * A client of the cluster {@code layout} describes.
   *
   * @throws LayoutException for a TLS file that cannot be read
   */
  public static RoostClient create(Layout layout, ClientOptions options) {
    return new RoostClient(Objects.requireNonNull(layout), Objects.requireNonNull(options));
  }

  /** A client of the cluster the layout file at {@code path} describes. */
  public static RoostClient fromLayoutFile(Path path, ClientOptions options) {
    return create(Layout.fromFile(path), options);
  }

  public Layout layout() {
    return layout;
  }

  public ClientOptions options() {
    return options;
  }

  /** The shard {@code key} belongs to. */
  public int shardOf(byte[] key) {
    return Partition.shardOf(key, layout.shardCount());
  }

  // ---- blocking ----

  /** Looks {@code key} up in its shard. */
  public GetResult get(String table, byte[] key) {
    return await(getAsync(table, key, CallOptions.DEFAULT));
  }

  public GetResult get(String table, byte[] key, CallOptions call) {
    return await(getAsync(table, key, call));
  }

  /**
   * Looks {@code keys} up: one part per shard, sent at once, the results put back in request order
   * (duplicates and an empty batch included), all from one version.
   */
  public MultiGetResult multiGet(String table, List<byte[]> keys) {
    return await(multiGetAsync(table, keys, CallOptions.DEFAULT));
  }

  public MultiGetResult multiGet(String table, List<byte[]> keys, CallOptions call) {
    return await(multiGetAsync(table, keys, call));
  }

  /**
   * Reads a block table in key order over every shard: one stream per shard, merged, all from one
   * version; {@code scan.limit()} applies to the merged entries. A cuckoo table has no key order:
   * FAILED_PRECONDITION.
   */
  public ScanResult scan(String table, ScanOptions scan) {
    return scan(table, scan, CallOptions.DEFAULT);
  }

  public ScanResult scan(String table, ScanOptions scan, CallOptions call) {
    if (table == null || table.isEmpty()) {
      throw new IllegalArgumentException("the table name must not be empty");
    }
    Objects.requireNonNull(scan);
    Objects.requireNonNull(call);
    Telemetry.Call t = telemetry.begin("scan", table, 0);
    try {
      // Never partial: a merge with a shard missing would skip its keys.
      ScanResult r =
          ClusterScan.run(
              shards, policy(call, false), table, scan, call.version(), monotonic(table));
      if (t != null) {
        t.answered(r.version(), Map.of());
      }
      return r;
    } catch (RuntimeException e) {
      if (t != null) {
        t.failed(e);
      }
      throw e;
    }
  }

  /**
   * Returns when every replica of every shard serves {@code version} of {@code table} ("v000007" or
   * "7"), as {@code roost-admin wait} does.
   *
   * @throws RoostException DEADLINE_EXCEEDED after {@code timeout}, naming the replicas that do
   *     not; StaleLayoutException when a replica serves another shard than the layout says
   */
  public void waitForVersion(String table, String version, Duration timeout) {
    new VersionWait(layout, shards, options.token()).await(table, version, timeout);
  }

  // ---- async ----

  public CompletableFuture<GetResult> getAsync(String table, byte[] key) {
    return getAsync(table, key, CallOptions.DEFAULT);
  }

  /** {@link #get}, without blocking. */
  public CompletableFuture<GetResult> getAsync(String table, byte[] key, CallOptions call) {
    Objects.requireNonNull(key, "key");
    Objects.requireNonNull(call, "call");
    if (table == null || table.isEmpty()) {
      throw new IllegalArgumentException("the table name must not be empty");
    }
    Telemetry.Call t = telemetry.begin("get", table, 1);
    CompletableFuture<GetResult> f;
    if (coalescer != null && call.equals(CallOptions.DEFAULT)) {
      f = coalescer.get(table, key, shardOf(key));
    } else {
      // One key is a batch of one: the same path, retries and all (its one
      // shard failing fails it, partial answers or not).
      f =
          readBatch(table, List.of(key), call)
              .thenApply(
                  r -> {
                    LookupResult one = r.results().get(0);
                    if (one.error() != null) {
                      throw one.error();
                    }
                    return new GetResult(one.found(), one.value(), r.version());
                  });
    }
    if (t == null) {
      return f;
    }
    return f.whenComplete(
        (r, e) -> {
          if (e != null) {
            t.failed(e);
          } else {
            t.answered(r.version(), Map.of());
          }
        });
  }

  public CompletableFuture<MultiGetResult> multiGetAsync(String table, List<byte[]> keys) {
    return multiGetAsync(table, keys, CallOptions.DEFAULT);
  }

  /** {@link #multiGet}, without blocking. */
  public CompletableFuture<MultiGetResult> multiGetAsync(
      String table, List<byte[]> keys, CallOptions call) {
    if (table == null || table.isEmpty()) {
      throw new IllegalArgumentException("the table name must not be empty");
    }
    Objects.requireNonNull(keys, "keys");
    Objects.requireNonNull(call, "call");
    Telemetry.Call t = telemetry.begin("multi_get", table, keys.size());
    CompletableFuture<MultiGetResult> f;
    try {
      f = readBatch(table, keys, call);
    } catch (RuntimeException e) { // a null key
      if (t != null) {
        t.failed(e);
      }
      throw e;
    }
    if (t == null) {
      return f;
    }
    return f.whenComplete(
        (r, e) -> {
          if (e != null) {
            t.failed(e);
          } else {
            t.answered(r.version(), Telemetry.partialKeys(r));
          }
        });
  }

  private CompletableFuture<MultiGetResult> readBatch(
      String table, List<byte[]> keys, CallOptions call) {
    if (keys.isEmpty()) {
      return CompletableFuture.completedFuture(new MultiGetResult(List.of(), ""));
    }
    // One part per shard that has keys, or several of at most maxBatch
    // keys each: the consistency algorithm reads every part from one
    // version, whichever shard it goes to.
    int n = layout.shardCount();
    int maxBatch = options.maxBatch();
    int[] shardOf = new int[keys.size()];
    int[] count = new int[n];
    for (int i = 0; i < keys.size(); ++i) {
      byte[] key = Objects.requireNonNull(keys.get(i), "a key is null");
      shardOf[i] = n == 1 ? 0 : Partition.shardOf(key, n);
      ++count[shardOf[i]];
    }
    int[] firstPart = new int[n];
    List<MultiGetRequest.Builder> requests = new ArrayList<>();
    List<int[]> indices = new ArrayList<>();
    List<Integer> partShards = new ArrayList<>();
    for (int s = 0; s < n; ++s) {
      firstPart[s] = requests.size();
      for (int left = count[s]; left > 0; left -= maxBatch) {
        requests.add(MultiGetRequest.newBuilder().setTable(table).setPacked(true));
        indices.add(new int[Math.min(left, maxBatch)]);
        partShards.add(s);
      }
    }
    int[] seen = new int[n]; // keys of each shard placed so far
    for (int i = 0; i < keys.size(); ++i) {
      int s = shardOf[i];
      int p = firstPart[s] + seen[s] / maxBatch;
      indices.get(p)[seen[s] % maxBatch] = i;
      ++seen[s];
      requests.get(p).addKeys(ByteString.copyFrom(keys.get(i)));
    }
    List<Shards.Part> parts = new ArrayList<>();
    for (int p = 0; p < requests.size(); ++p) {
      parts.add(new Shards.Part(partShards.get(p), indices.get(p), requests.get(p).build()));
    }
    Shards.Policy policy = policy(call, options.partialAnswers());
    return BatchRead.run(shards, table, parts, call.version(), policy, monotonic(table))
        .thenApply(version -> collect(parts, keys.size(), version));
  }

  /** {@link #waitForVersion}, on a thread of its own. */
  public CompletableFuture<Void> waitForVersionAsync(
      String table, String version, Duration timeout) {
    return CompletableFuture.runAsync(
        () -> waitForVersion(table, version, timeout), RoostClient::ownThread);
  }

  /** {@link #scan}, on a thread of its own (its streams are read blocking). */
  public CompletableFuture<ScanResult> scanAsync(String table, ScanOptions scan, CallOptions call) {
    return CompletableFuture.supplyAsync(() -> scan(table, scan, call), RoostClient::ownThread);
  }

  private static void ownThread(Runnable r) {
    Thread t = new Thread(r, "roost-client-blocking-call");
    t.setDaemon(true);
    t.start();
  }

  /**
   * Closes the channels. Calls still in flight end at once with their failure (UNAVAILABLE or
   * CANCELLED): a retry or a hedge waiting for its timer runs it, and finds the channel closed.
   */
  @Override
  public void close() {
    shards.close();
    timers.shutdown(); // delayed tasks still run, and end their calls
  }

  /** Coalesced MultiGets sent and the Gets they carried: {batches, keys}; zeros when off. */
  long[] coalesced() {
    return coalescer == null
        ? new long[2]
        : new long[] {coalescer.batchesSent.get(), coalescer.keysSent.get()};
  }

  // ---- internals ----

  /** The state of monotonic reads of {@code table}, or null when they are off. */
  private MonotonicReads.Table monotonic(String table) {
    return monotonic == null ? null : monotonic.table(table);
  }

  private Shards.Policy policy(CallOptions call, boolean partial) {
    Duration timeout = call.timeout() != null ? call.timeout() : options.timeout();
    // A year is as good as forever, and does not overflow.
    long nanos = Math.min(timeout.toNanos(), TimeUnit.DAYS.toNanos(365));
    return new Shards.Policy(
        System.nanoTime() + nanos,
        Deadline.after(nanos, TimeUnit.NANOSECONDS),
        options.hedgeDelay().toNanos(),
        options.backoff().toNanos(),
        options.maxBackoff().toNanos(),
        partial,
        telemetry.metrics());
  }

  private static MultiGetResult collect(List<Shards.Part> parts, int keys, String version) {
    LookupResult[] out = new LookupResult[keys];
    RoostException firstFailure = null;
    boolean anyAnswered = false;
    for (Shards.Part part : parts) {
      if (part.failure != null) {
        // Partial answers: its shard could not answer (even if an earlier
        // round of the batch got it an answer, from another version).
        LookupResult failed = new LookupResult(false, new byte[0], part.failure);
        for (int i : part.indices) {
          out[i] = failed;
        }
        if (firstFailure == null) {
          firstFailure = part.failure;
        }
        continue;
      }
      anyAnswered = true;
      try {
        MultiGetAnswer.read(
            part.response,
            part.indices.length,
            (j, found, value) ->
                out[part.indices[j]] =
                    found ? new LookupResult(true, value.toByteArray()) : LookupResult.MISSING);
      } catch (RoostException e) {
        throw new RoostException(
            e.status(), "shard " + part.shard + ": " + e.getMessage(), part.shard, null);
      }
    }
    if (!anyAnswered && firstFailure != null) {
      throw firstFailure; // no shard answered: nothing partial about it
    }
    return new MultiGetResult(List.copyOf(Arrays.asList(out)), version);
  }

  /** The future's value, or its failure thrown as a RoostException. */
  static <T> T await(CompletableFuture<T> future) {
    try {
      return future.get();
    } catch (ExecutionException e) {
      Throwable cause = e.getCause();
      if (cause instanceof RoostException r) {
        throw r;
      }
      if (cause instanceof RuntimeException r) {
        throw r;
      }
      throw new RoostException(Status.Code.INTERNAL, String.valueOf(cause), -1, cause);
    } catch (InterruptedException e) {
      future.cancel(true);
      Thread.currentThread().interrupt();
      throw new RoostException(Status.Code.CANCELLED, "interrupted", -1, e);
    }
  }
}
