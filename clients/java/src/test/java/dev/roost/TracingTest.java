package dev.roost;

import static dev.roost.Cluster.bytes;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.api.trace.StatusCode;
import io.opentelemetry.context.Scope;
import io.opentelemetry.sdk.OpenTelemetrySdk;
import io.opentelemetry.sdk.testing.exporter.InMemorySpanExporter;
import io.opentelemetry.sdk.trace.SdkTracerProvider;
import io.opentelemetry.sdk.trace.data.SpanData;
import io.opentelemetry.sdk.trace.export.SimpleSpanProcessor;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * One OpenTelemetry span per get, multiGet and scan, against real servers, exported by the SDK's
 * in-memory exporter: names, kind, attributes, the error status, and the caller's span as parent.
 */
class TracingTest {
  @TempDir Path scratch;

  @Test
  void aSpanPerCall() throws Exception {
    InMemorySpanExporter exporter = InMemorySpanExporter.create();
    SdkTracerProvider provider =
        SdkTracerProvider.builder().addSpanProcessor(SimpleSpanProcessor.create(exporter)).build();
    OpenTelemetrySdk otel = OpenTelemetrySdk.builder().setTracerProvider(provider).build();
    try (Cluster cluster = new Cluster(scratch)) {
      cluster.build("t", Cluster.keysAndValues(100, "v1"), 3);
      cluster.build("b", Cluster.keysAndValues(100, "v1"), 3, "block");
      List<List<String>> shards = cluster.startShards(3, 1, List.of());
      ClientOptions options =
          ClientOptions.builder()
              .timeout(Duration.ofSeconds(2))
              .partialAnswers(true)
              .openTelemetry(otel)
              .build();
      try (RoostClient client = RoostClient.create(Layout.of(shards), options)) {
        client.get("t", bytes("key00001"));
        client.multiGetAsync("t", FailoverTest.keys(20)).join();
        client.scan("b", ScanOptions.prefix(bytes("key0001"), 0));
        assertThrows(RoostException.class, () -> client.get("no_such_table", bytes("k")));
        Span parent = otel.getTracer("test").spanBuilder("request").startSpan();
        try (Scope scope = parent.makeCurrent()) {
          client.multiGet("t", FailoverTest.keys(5));
        } finally {
          parent.end();
        }
        cluster.serverAt(shards.get(1).get(0)).kill();
        MultiGetResult partial = client.multiGet("t", FailoverTest.keys(100));
        assertTrue(partial.failedKeys() > 0);

        List<SpanData> spans = exporter.getFinishedSpanItems();
        assertEquals(7, spans.size(), spans.toString());

        SpanData get = spans.get(0);
        assertEquals("roost.Get", get.getName());
        assertEquals(SpanKind.CLIENT, get.getKind());
        assertEquals("t", get.getAttributes().get(Telemetry.TABLE));
        assertEquals(1L, get.getAttributes().get(Telemetry.KEYS));
        assertEquals("v000001", get.getAttributes().get(Telemetry.VERSION));
        assertEquals(StatusCode.UNSET, get.getStatus().getStatusCode());
        assertFalse(get.getParentSpanContext().isValid(), "no parent: a root span");

        SpanData multi = spans.get(1);
        assertEquals("roost.MultiGet", multi.getName());
        assertEquals(20L, multi.getAttributes().get(Telemetry.KEYS));
        assertEquals("v000001", multi.getAttributes().get(Telemetry.VERSION));
        assertNull(multi.getAttributes().get(Telemetry.PARTIAL_KEYS));

        SpanData scan = spans.get(2);
        assertEquals("roost.Scan", scan.getName());
        assertEquals("b", scan.getAttributes().get(Telemetry.TABLE));
        assertEquals(0L, scan.getAttributes().get(Telemetry.KEYS));

        SpanData failed = spans.get(3);
        assertEquals("roost.Get", failed.getName());
        assertEquals(StatusCode.ERROR, failed.getStatus().getStatusCode());
        assertTrue(failed.getStatus().getDescription().startsWith("NOT_FOUND: "));
        assertEquals("NOT_FOUND", failed.getAttributes().get(Telemetry.ERROR_CODE));
        assertNull(failed.getAttributes().get(Telemetry.VERSION));
        assertEquals("exception", failed.getEvents().get(0).getName());

        SpanData child = spans.get(4);
        assertEquals("roost.MultiGet", child.getName());
        assertEquals(parent.getSpanContext().getSpanId(), child.getParentSpanId());
        assertEquals(parent.getSpanContext().getTraceId(), child.getTraceId());
        assertEquals("request", spans.get(5).getName());

        SpanData partialSpan = spans.get(6);
        assertEquals(StatusCode.UNSET, partialSpan.getStatus().getStatusCode());
        assertEquals(
            (long) partial.failedKeys(), partialSpan.getAttributes().get(Telemetry.PARTIAL_KEYS));
      }
    } finally {
      otel.close();
    }
  }
}
