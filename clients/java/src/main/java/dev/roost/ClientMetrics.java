package dev.roost;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

/**
 * The client metrics of tests/conformance/README.md ("Client metrics"), as Micrometer meters in the
 * application's registry ({@link ClientOptions.Builder#meterRegistry}). The names are the README's,
 * dotted as Micrometer's are; a Prometheus registry renders each as the README writes it ({@code
 * roost.client.requests} as {@code roost_client_requests_total}, the timer {@code
 * roost.client.request} as the histogram {@code roost_client_request_seconds}):
 *
 * <ul>
 *   <li>{@code roost.client.requests} (method): calls the application made, one each whatever their
 *       retries;
 *   <li>{@code roost.client.keys} (method): keys asked for: 1 per Get, the batch's size per
 *       MultiGet, 0 per Scan;
 *   <li>{@code roost.client.errors} (method, code): calls that ended in an error, by its gRPC code
 *       name;
 *   <li>{@code roost.client.partial.keys} (code): keys that partial answers marked with their
 *       shard's error;
 *   <li>{@code roost.client.request} (method), a timer with a histogram: each call's time, from the
 *       call to its answer or error;
 *   <li>{@code roost.client.hedges}: hedged attempts sent;
 *   <li>{@code roost.client.retries}: attempts sent again, to another replica or after a backoff,
 *       after a retryable failure;
 *   <li>{@code roost.client.version.switches}: answers of a table from another version than this
 *       client's previous answer of that table.
 * </ul>
 *
 * <p>Thread-safe.
 */
final class ClientMetrics {
  static final String REQUESTS = "roost.client.requests";
  static final String KEYS = "roost.client.keys";
  static final String ERRORS = "roost.client.errors";
  static final String PARTIAL_KEYS = "roost.client.partial.keys";
  static final String REQUEST_TIME = "roost.client.request";
  static final String HEDGES = "roost.client.hedges";
  static final String RETRIES = "roost.client.retries";
  static final String VERSION_SWITCHES = "roost.client.version.switches";
  static final String[] METHODS = {"get", "multi_get", "scan"};

  private final MeterRegistry registry;
  private final Map<String, Counter> requests = new ConcurrentHashMap<>();
  private final Map<String, Counter> keys = new ConcurrentHashMap<>();
  private final Map<String, Timer> time = new ConcurrentHashMap<>();
  private final Map<String, Counter> errors = new ConcurrentHashMap<>(); // "method code"
  private final Map<String, Counter> partialKeys = new ConcurrentHashMap<>(); // by code
  private final Counter hedges;
  private final Counter retries;
  private final Counter versionSwitches;
  // Each table's version in this client's previous answer of it.
  private final Map<String, String> lastVersions = new ConcurrentHashMap<>();

  ClientMetrics(MeterRegistry registry) {
    this.registry = registry;
    for (String method : METHODS) {
      requests.put(
          method,
          Counter.builder(REQUESTS)
              .description("calls the application made")
              .tag("method", method)
              .register(registry));
      keys.put(
          method,
          Counter.builder(KEYS)
              .description("keys asked for")
              .tag("method", method)
              .register(registry));
      time.put(
          method,
          Timer.builder(REQUEST_TIME)
              .description("each call's time, from the call to its answer or error")
              .tag("method", method)
              .publishPercentileHistogram()
              .register(registry));
    }
    hedges = Counter.builder(HEDGES).description("hedged attempts sent").register(registry);
    retries =
        Counter.builder(RETRIES)
            .description("attempts sent again after a retryable failure")
            .register(registry);
    versionSwitches =
        Counter.builder(VERSION_SWITCHES)
            .description("answers of a table from another version than the previous one")
            .register(registry);
  }

  void hedge() {
    hedges.increment();
  }

  void retry() {
    retries.increment();
  }

  /**
   * One call of {@code method} ended: after {@code nanos}, with the error code {@code errorCode}
   * (null: it answered, from {@code version}), {@code partial} keys marked by partial answers by
   * code.
   */
  void record(
      String method,
      String table,
      int keyCount,
      long nanos,
      String errorCode,
      String version,
      Map<String, Integer> partial) {
    requests.get(method).increment();
    keys.get(method).increment(keyCount);
    time.get(method).record(nanos, TimeUnit.NANOSECONDS);
    if (errorCode != null) {
      errors
          .computeIfAbsent(
              method + " " + errorCode,
              k ->
                  Counter.builder(ERRORS)
                      .description("calls that ended in an error")
                      .tag("method", method)
                      .tag("code", errorCode)
                      .register(registry))
          .increment();
      return;
    }
    for (Map.Entry<String, Integer> e : partial.entrySet()) {
      partialKeys
          .computeIfAbsent(
              e.getKey(),
              code ->
                  Counter.builder(PARTIAL_KEYS)
                      .description("keys that partial answers marked with their shard's error")
                      .tag("code", code)
                      .register(registry))
          .increment(e.getValue());
    }
    if (version != null && !version.isEmpty()) {
      boolean[] switched = {false};
      lastVersions.compute(
          table,
          (t, last) -> {
            if (last == null) {
              return version;
            }
            if (!VersionConsensus.sameVersion(last, version)) {
              switched[0] = true;
              return version;
            }
            return last;
          });
      if (switched[0]) {
        versionSwitches.increment();
      }
    }
  }
}
