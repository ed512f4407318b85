package dev.roost;

import static dev.roost.Cluster.bytes;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The client metrics (tests/conformance/README.md, "Client metrics") in a Micrometer registry,
 * against real servers: calls, keys, errors, time, version switches, partial keys, retries past a
 * dead replica, hedges past a hung one, and the names a Prometheus registry gives them.
 */
class MetricsTest {
  @TempDir Path scratch;

  static double count(MeterRegistry r, String name, String... tags) {
    return r.find(name).tags(tags).counters().stream().mapToDouble(c -> c.count()).sum();
  }

  @Test
  void callsKeysErrorsTimeAndVersionSwitches() throws Exception {
    try (Cluster cluster = new Cluster(scratch)) {
      cluster.build("t", Cluster.keysAndValues(100, "v1"), 3);
      cluster.build("b", Cluster.keysAndValues(100, "v1"), 3, "block");
      List<List<String>> shards = cluster.startShards(3, 2, List.of());
      SimpleMeterRegistry r = new SimpleMeterRegistry();
      ClientOptions options =
          ClientOptions.builder()
              .timeout(Duration.ofSeconds(2))
              .partialAnswers(true)
              .meterRegistry(r)
              .build();
      try (RoostClient client = RoostClient.create(Layout.of(shards), options)) {
        client.get("t", bytes("key00001"));
        client.multiGet("t", FailoverTest.keys(10));
        client.multiGetAsync("t", FailoverTest.keys(20)).join();
        client.multiGet("t", List.of());
        assertThrows(RoostException.class, () -> client.get("no_such_table", bytes("k")));
        assertThrows(
            RoostException.class, () -> client.multiGet("t", List.of(bytes("k")), callV("9")));
        client.scan("b", ScanOptions.prefix(bytes("key0001"), 0));

        assertEquals(2, count(r, "roost.client.requests", "method", "get"));
        assertEquals(4, count(r, "roost.client.requests", "method", "multi_get"));
        assertEquals(1, count(r, "roost.client.requests", "method", "scan"));
        assertEquals(2, count(r, "roost.client.keys", "method", "get"));
        assertEquals(31, count(r, "roost.client.keys", "method", "multi_get"));
        assertEquals(0, count(r, "roost.client.keys", "method", "scan"));
        assertEquals(1, count(r, "roost.client.errors", "method", "get", "code", "NOT_FOUND"));
        assertEquals(
            1,
            count(r, "roost.client.errors", "method", "multi_get", "code", "FAILED_PRECONDITION"));
        assertEquals(2, count(r, "roost.client.errors"));
        assertEquals(4, r.find("roost.client.request").tag("method", "multi_get").timer().count());
        assertEquals(2, r.find("roost.client.request").tag("method", "get").timer().count());
        assertTrue(
            r.find("roost.client.request")
                    .tag("method", "get")
                    .timer()
                    .totalTime(java.util.concurrent.TimeUnit.NANOSECONDS)
                > 0);
        assertEquals(0, count(r, "roost.client.version.switches"));
        assertEquals(0, count(r, "roost.client.retries"));
        assertEquals(0, count(r, "roost.client.hedges"));
        assertEquals(0, count(r, "roost.client.partial.keys"));

        // A new version: the first answer from it is a switch; reading the
        // old one by name is another, and back to the new one a third.
        cluster.build("t", Cluster.keysAndValues(100, "v2"), 3);
        client.waitForVersion("t", "2", Duration.ofSeconds(30));
        assertEquals("v000002", client.multiGet("t", FailoverTest.keys(5)).version());
        assertEquals("v000002", client.multiGet("t", FailoverTest.keys(5)).version());
        assertEquals(1, count(r, "roost.client.version.switches"));
        assertEquals("v000001", client.get("t", bytes("key00001"), callV("1")).version());
        client.get("t", bytes("key00001"));
        assertEquals(3, count(r, "roost.client.version.switches"));
        // Another table has its own previous version: no switch.
        client.scan("b", ScanOptions.prefix(bytes("key0001"), 0));
        assertEquals(3, count(r, "roost.client.version.switches"));

        // A shard down, with partial answers: its keys, by code; the call
        // itself succeeded.
        cluster.serverAt(shards.get(0).get(0)).kill();
        cluster.serverAt(shards.get(0).get(1)).kill();
        MultiGetResult partial = client.multiGet("t", FailoverTest.keys(100));
        assertTrue(partial.failedKeys() > 0);
        assertEquals(
            partial.failedKeys(), count(r, "roost.client.partial.keys", "code", "UNAVAILABLE"));
        assertEquals(2, count(r, "roost.client.errors"));
        // Its part was sent again and again until the deadline.
        assertTrue(count(r, "roost.client.retries") >= 2, "retries");
      }
    }
  }

  static CallOptions callV(String version) {
    return CallOptions.version(version);
  }

  @Test
  void retriesPastADeadReplicaAndHedgesPastAHungOne() throws Exception {
    try (Cluster cluster = new Cluster(scratch)) {
      cluster.build("t", Cluster.keysAndValues(100, "v1"), 1);
      Cluster.Server a = cluster.server(-1, List.of());
      Cluster.Server b = cluster.server(-1, List.of());
      Layout layout = Layout.of(List.of(List.of(a.address, b.address)));
      SimpleMeterRegistry r = new SimpleMeterRegistry();
      ClientOptions options =
          ClientOptions.builder()
              .timeout(Duration.ofSeconds(10))
              .hedgeDelay(Duration.ofMillis(50))
              .meterRegistry(r)
              .build();
      try (RoostClient client = RoostClient.create(layout, options)) {
        for (int i = 0; i < 4; ++i) {
          FailoverTest.checkAll(client.multiGet("t", FailoverTest.keys(100)), 100);
        }
        assertEquals(0, count(r, "roost.client.retries"));
        // A hung replica: every other call goes to it first, and its hedge
        // to the live one answers.
        PartialAnswersTest.signal("-STOP", a);
        try {
          for (int i = 0; i < 4; ++i) {
            FailoverTest.checkAll(client.multiGet("t", FailoverTest.keys(100)), 100);
          }
        } finally {
          PartialAnswersTest.signal("-CONT", a);
        }
        assertTrue(count(r, "roost.client.hedges") >= 2, "hedges");
        assertEquals(0, count(r, "roost.client.retries"));
      }
      // A dead replica: every other call fails there first, and is sent
      // again to the other at once.
      SimpleMeterRegistry r2 = new SimpleMeterRegistry();
      try (RoostClient client =
          RoostClient.create(
              layout,
              ClientOptions.builder().meterRegistry(r2).timeout(Duration.ofSeconds(10)).build())) {
        FailoverTest.checkAll(client.multiGet("t", FailoverTest.keys(100)), 100);
        a.kill();
        for (int i = 0; i < 4; ++i) {
          FailoverTest.checkAll(client.multiGet("t", FailoverTest.keys(100)), 100);
        }
        assertTrue(count(r2, "roost.client.retries") >= 2, "retries");
        assertEquals(0, count(r2, "roost.client.hedges"));
        assertEquals(0, count(r2, "roost.client.errors"));
      }
    }
  }

  @Test
  void prometheusNamesAreTheConformanceReadmes() throws Exception {
    try (Cluster cluster = new Cluster(scratch)) {
      cluster.build("t", Cluster.keysAndValues(100, "v1"), 1);
      List<List<String>> shards = cluster.startShards(1, 1, List.of());
      PrometheusMeterRegistry r = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
      try (RoostClient client =
          RoostClient.create(Layout.of(shards), ClientOptions.builder().meterRegistry(r).build())) {
        client.multiGet("t", FailoverTest.keys(3));
        assertThrows(RoostException.class, () -> client.get("no_such_table", bytes("k")));
      }
      String text = r.scrape();
      for (String line :
          List.of(
              "roost_client_requests_total{method=\"multi_get\"} 1.0",
              "roost_client_requests_total{method=\"get\"} 1.0",
              "roost_client_keys_total{method=\"multi_get\"} 3.0",
              "roost_client_errors_total{code=\"NOT_FOUND\",method=\"get\"} 1.0",
              "roost_client_request_seconds_count{method=\"multi_get\"} 1",
              "roost_client_hedges_total 0.0",
              "roost_client_retries_total 0.0",
              "roost_client_version_switches_total 0.0")) {
        assertTrue(text.contains(line + "\n"), line + " not in:\n" + text);
      }
      assertTrue(text.contains("roost_client_request_seconds_bucket{method=\"get\",le="), text);
      assertFalse(text.contains("roost_client_partial_keys_total{"), "no partial key yet");
    }
  }
}
