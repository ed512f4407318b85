package dev.roost;

import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.api.trace.StatusCode;
import io.opentelemetry.api.trace.Tracer;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletionException;

/**
 * What the client says about each call the application made: the metrics ({@link ClientMetrics},
 * when the options give a MeterRegistry) and one OpenTelemetry span (when they give a Tracer or an
 * OpenTelemetry): "roost.Get", "roost.MultiGet" or "roost.Scan", of kind CLIENT, a child of the
 * caller's current span, with the attributes {@code roost.table}, {@code roost.keys}, and, when it
 * answered, {@code roost.version} and {@code roost.partial_keys} (keys partial answers marked), or
 * when it failed the status ERROR with the exception and {@code roost.error.code} (the gRPC code
 * name). Without either, {@link #begin} returns null and costs nothing.
 */
final class Telemetry {
  static final AttributeKey<String> TABLE = AttributeKey.stringKey("roost.table");
  static final AttributeKey<Long> KEYS = AttributeKey.longKey("roost.keys");
  static final AttributeKey<String> VERSION = AttributeKey.stringKey("roost.version");
  static final AttributeKey<Long> PARTIAL_KEYS = AttributeKey.longKey("roost.partial_keys");
  static final AttributeKey<String> ERROR_CODE = AttributeKey.stringKey("roost.error.code");

  private final ClientMetrics metrics; // null: none
  private final Tracer tracer; // null: none

  Telemetry(ClientMetrics metrics, Tracer tracer) {
    this.metrics = metrics;
    this.tracer = tracer;
  }

  ClientMetrics metrics() {
    return metrics;
  }

  /** A call begins; null when there is nothing to record. */
  Call begin(String method, String table, int keys) {
    if (metrics == null && tracer == null) {
      return null;
    }
    Span span = null;
    if (tracer != null) {
      span =
          tracer
              .spanBuilder(spanName(method))
              .setSpanKind(SpanKind.CLIENT)
              .setAttribute(TABLE, table)
              .setAttribute(KEYS, (long) keys)
              .startSpan();
    }
    return new Call(method, table, keys, span);
  }

  static String spanName(String method) {
    return switch (method) {
      case "get" -> "roost.Get";
      case "multi_get" -> "roost.MultiGet";
      default -> "roost.Scan";
    };
  }

  /** The gRPC code name a call's failure counts under. */
  static String code(Throwable error) {
    while (error instanceof CompletionException && error.getCause() != null) {
      error = error.getCause();
    }
    if (error instanceof RoostException r) {
      return r.code();
    }
    if (error instanceof CancellationException) {
      return "CANCELLED";
    }
    if (error instanceof IllegalArgumentException) {
      return "INVALID_ARGUMENT";
    }
    return "UNKNOWN";
  }

  /** Partial answers' marked keys, by code. */
  static Map<String, Integer> partialKeys(MultiGetResult r) {
    Map<String, Integer> out = new TreeMap<>();
    for (LookupResult one : r.results()) {
      if (one.error() != null) {
        out.merge(one.error().code(), 1, Integer::sum);
      }
    }
    return out;
  }

  /** One call under way. */
  final class Call {
    private final String method;
    private final String table;
    private final int keys;
    private final Span span;
    private final long start = System.nanoTime();

    private Call(String method, String table, int keys, Span span) {
      this.method = method;
      this.table = table;
      this.keys = keys;
      this.span = span;
    }

    /** It answered from {@code version}; {@code partial}: keys marked, by code. */
    void answered(String version, Map<String, Integer> partial) {
      long nanos = System.nanoTime() - start;
      if (metrics != null) {
        metrics.record(method, table, keys, nanos, null, version, partial);
      }
      if (span != null) {
        span.setAttribute(VERSION, version);
        if (!partial.isEmpty()) {
          span.setAttribute(
              PARTIAL_KEYS, partial.values().stream().mapToLong(Integer::longValue).sum());
        }
        span.end();
      }
    }

    void failed(Throwable error) {
      long nanos = System.nanoTime() - start;
      String code = code(error);
      if (metrics != null) {
        metrics.record(method, table, keys, nanos, code, null, Map.of());
      }
      if (span != null) {
        Throwable shown =
            error instanceof CompletionException c && c.getCause() != null ? c.getCause() : error;
        span.setAttribute(ERROR_CODE, code);
        span.recordException(shown);
        span.setStatus(StatusCode.ERROR, code + ": " + shown.getMessage());
        span.end();
      }
    }
  }
}
