package dev.roost;

import static dev.roost.Cluster.bytes;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BooleanSupplier;
import java.util.function.Predicate;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Monotonic reads against 3 shards × 2 replicas pulling from a table repository, while MultiGets
 * and (coalesced) Gets run on 4 threads: a rollout is seen as one switch (no call answers the new
 * version while a shard still shows only the old one, and none answers the old one after one
 * answered the new), a rollback is followed (the servers name the withdrawn version, and the client
 * reads the older one again, never the withdrawn one), and a version published after it is read.
 */
class MonotonicTest {
  private static final Pattern SERVING = Pattern.compile("serving t (v\\d+) \\(");
  // Reads the repository's POINTERs only when it starts: a replica that lags.
  private static final List<String> LAGGING = List.of("--repository-poll", "86400");

  @TempDir Path scratch;

  // One call's answer: when it started and ended (System.nanoTime), its version.
  record Answer(long start, long end, String version) {}

  @Test
  void aRolloutIsOneSwitchAndARollbackIsFollowed() throws Exception {
    try (Cluster cluster = Cluster.withRepository(scratch)) {
      int n = 600;
      cluster.build("t", Cluster.keysAndValues(n, "v1"), 3);
      // Shards 0 and 1 follow the repository; shard 2 lags until restarted.
      List<List<String>> layout = new ArrayList<>();
      List<List<Cluster.Server>> servers = new ArrayList<>();
      for (int s = 0; s < 3; ++s) {
        List<String> targets = new ArrayList<>();
        List<Cluster.Server> replicas = new ArrayList<>();
        for (int r = 0; r < 2; ++r) {
          Cluster.Server server = cluster.server(s, s == 2 ? LAGGING : List.of());
          targets.add(server.address);
          replicas.add(server);
        }
        layout.add(targets);
        servers.add(replicas);
      }
      ClientOptions options =
          ClientOptions.builder()
              .timeout(Duration.ofSeconds(20))
              .coalesceGets(true, 4, 1000)
              .monotonic(true)
              .build();
      try (RoostClient client = RoostClient.create(Layout.of(layout), options)) {
        List<byte[]> keys = FailoverTest.keys(n);
        List<byte[]> shard0 = keys.stream().filter(k -> client.shardOf(k) == 0).toList();
        ConcurrentLinkedQueue<Answer> answers = new ConcurrentLinkedQueue<>();
        ConcurrentLinkedQueue<Throwable> failures = new ConcurrentLinkedQueue<>();
        AtomicBoolean stop = new AtomicBoolean();
        AtomicBoolean restarting = new AtomicBoolean();
        AtomicInteger cut = new AtomicInteger();
        List<Thread> threads = new ArrayList<>();
        for (int t = 0; t < 4; ++t) {
          int thread = t;
          Thread reader =
              new Thread(
                  () -> {
                    for (int i = 0; !stop.get(); ++i) {
                      try {
                        long start = System.nanoTime();
                        String version = read(client, keys, shard0, n, thread, i);
                        answers.add(new Answer(start, System.nanoTime(), version));
                      } catch (RoostException e) {
                        // A call a replica's restart cut short (the test's own
                        // doing: gRPC's shutdown cancels the calls that race
                        // it) is no answer; any other failure fails the test.
                        if (!(restarting.get()
                            && Set.of("CANCELLED", "UNAVAILABLE", "INTERNAL").contains(e.code()))) {
                          failures.add(e);
                          return;
                        }
                        cut.incrementAndGet();
                      } catch (Throwable e) {
                        failures.add(e);
                        return;
                      }
                    }
                  });
          reader.start();
          threads.add(reader);
        }
        Predicate<Long> answeredAfter =
            since -> answers.stream().filter(a -> a.start() > since).count() >= 40;
        try {
          until(failures, () -> answeredAfter.test(0L), "v1 answers");

          // v2: shards 0 and 1 swap, shard 2 does not.
          cluster.build("t", Cluster.keysAndValues(n, "v2"), 3);
          for (int s = 0; s < 2; ++s) {
            for (Cluster.Server server : servers.get(s)) {
              waitServing(server, "v000002");
            }
          }
          long swapped = System.nanoTime();
          until(failures, () -> answeredAfter.test(swapped), "answers while shard 2 lags");
          // Shard 2 catches up, one replica after the other.
          long shard2Shows = System.nanoTime();
          for (int r = 0; r < 2; ++r) {
            Cluster.Server server = restart(cluster, servers.get(2).get(r), List.of(), restarting);
            servers.get(2).set(r, server);
            waitServing(server, "v000002");
          }
          client.waitForVersion("t", "v000002", Duration.ofSeconds(60));
          long everywhere = System.nanoTime();
          until(failures, () -> answeredAfter.test(everywhere), "v2 answers");
          for (Answer a : answers) {
            assertTrue(
                !a.version().equals("v000002") || a.end() > shard2Shows,
                "a call answered v2 while shard 2 showed only v1: " + a);
            assertTrue(
                a.start() < everywhere || a.version().equals("v000002"),
                "a call after v2 was everywhere answered " + a.version());
          }

          // Shard 2's second replica lags again, then the POINTER goes back
          // to v1: every other replica serves v1 naming v2 withdrawn.
          Cluster.Server lagging = restart(cluster, servers.get(2).get(1), LAGGING, restarting);
          servers.get(2).set(1, lagging);
          waitServing(lagging, "v000002");
          long rollback = System.nanoTime();
          cluster.rollback("t", "v1");
          for (List<Cluster.Server> replicas : servers) {
            for (Cluster.Server server : replicas) {
              if (server != lagging) {
                waitServing(server, "v000001");
              }
            }
          }
          // Once the client answered v1 again, it answers v1 only (the
          // floor v2 would hold it at v2, in its --version-grace, if it
          // did not follow withdrawn_through; the lagging replica's v2 is
          // withdrawn).
          until(
              failures,
              () ->
                  answers.stream()
                      .anyMatch(a -> a.start() > rollback && a.version().equals("v000001")),
              "a v1 answer after the rollback");
          long followed =
              answers.stream()
                  .filter(a -> a.start() > rollback && a.version().equals("v000001"))
                  .mapToLong(Answer::end)
                  .min()
                  .orElseThrow();
          until(failures, () -> answeredAfter.test(followed), "answers after the rollback");
          for (Answer a : answers) {
            assertTrue(
                a.start() < followed || a.version().equals("v000001"),
                "a call after the rollback was followed answered " + a);
          }

          // v3, published after the rollback: read once every shard shows it.
          Cluster.Server caughtUp = restart(cluster, lagging, List.of(), restarting);
          servers.get(2).set(1, caughtUp);
          cluster.build("t", Cluster.keysAndValues(n, "v3"), 3);
          client.waitForVersion("t", "v000003", Duration.ofSeconds(60));
          long v3 = System.nanoTime();
          until(failures, () -> answeredAfter.test(v3), "v3 answers");
          assertMonotonic(answers, Long.MIN_VALUE, rollback);
          assertMonotonic(answers, followed, Long.MAX_VALUE);
          for (Answer a : answers) {
            assertTrue(
                a.start() < v3 || a.version().equals("v000003"),
                "a call after v3 was everywhere answered " + a);
          }
        } finally {
          stop.set(true);
          for (Thread t : threads) {
            t.join();
          }
        }
        if (!failures.isEmpty()) {
          throw new AssertionError("a call failed", failures.peek());
        }
        assertTrue(cut.get() < answers.size() / 10, cut + " calls cut short by restarts");
        // Every version was read, each value that version's.
        for (String v : List.of("v000001", "v000002", "v000003")) {
          assertTrue(
              answers.stream().anyMatch(a -> a.version().equals(v)), "no call answered " + v);
        }
      }
    }
  }

  private static Cluster.Server restart(
      Cluster cluster, Cluster.Server old, List<String> extra, AtomicBoolean restarting)
      throws Exception {
    restarting.set(true);
    try {
      return cluster.restart(old, extra);
    } finally {
      restarting.set(false);
    }
  }

  // Waits for `done`; a reader's failure ends the wait, and the test.
  private static void until(
      ConcurrentLinkedQueue<Throwable> failures, BooleanSupplier done, String what)
      throws Exception {
    Cluster.waitFor(() -> done.getAsBoolean() || !failures.isEmpty(), what, null);
    if (!failures.isEmpty()) {
      Throwable e = failures.peek();
      throw new AssertionError(
          "a call failed ("
              + (e instanceof RoostException r ? r.code() : e.getClass().getName())
              + "), waiting for "
              + what,
          e);
    }
  }

  // A MultiGet of every key, a MultiGet of shard 0's keys only, or a
  // coalesced Get of a key of shard 0: the answer's version, its values
  // checked.
  private static String read(
      RoostClient client, List<byte[]> keys, List<byte[]> shard0, int n, int thread, int i) {
    switch ((thread + i) % 3) {
      case 0 -> {
        MultiGetResult r = client.multiGet("t", keys);
        for (int k = 0; k < n; ++k) {
          assertArrayEquals(
              value(r.version(), k), r.results().get(k).value(), "key " + k + " " + r.version());
        }
        return r.version();
      }
      case 1 -> {
        MultiGetResult r = client.multiGet("t", shard0);
        for (int k = 0; k < shard0.size(); ++k) {
          int key = Integer.parseInt(new String(shard0.get(k)).substring(3));
          assertArrayEquals(value(r.version(), key), r.results().get(k).value());
        }
        return r.version();
      }
      default -> {
        byte[] key = shard0.get(i % shard0.size());
        GetResult r = client.get("t", key);
        int k = Integer.parseInt(new String(key).substring(3));
        assertArrayEquals(value(r.version(), k), r.value(), "key " + k + " " + r.version());
        return r.version();
      }
    }
  }

  private static byte[] value(String version, int key) {
    return bytes("v" + Integer.parseInt(version.substring(1)) + " value of key " + key);
  }

  // Until the last version `server` logged that it serves is `version`.
  private static void waitServing(Cluster.Server server, String version) throws Exception {
    Cluster.waitFor(
        () -> {
          Matcher m = SERVING.matcher(server.log());
          String last = "";
          while (m.find()) {
            last = m.group(1);
          }
          return last.equals(version);
        },
        "the server to serve " + version,
        server);
  }

  // No answer among those that started at or after `from` and ended before
  // `to` is older than one that ended before it started.
  private static void assertMonotonic(Iterable<Answer> all, long from, long to) {
    List<Answer> window = new ArrayList<>();
    for (Answer a : all) {
      if (a.start() >= from && a.end() < to) {
        window.add(a);
      }
    }
    List<Answer> byEnd = new ArrayList<>(window);
    byEnd.sort(Comparator.comparingLong(Answer::end));
    window.sort(Comparator.comparingLong(Answer::start));
    int ended = 0;
    Answer newest = null;
    for (Answer a : window) {
      while (ended < byEnd.size() && byEnd.get(ended).end() < a.start()) {
        Answer b = byEnd.get(ended++);
        if (newest == null || b.version().compareTo(newest.version()) > 0) {
          newest = b;
        }
      }
      assertTrue(
          newest == null || a.version().compareTo(newest.version()) >= 0,
          a + " is older than " + newest + ", which ended before it started");
    }
    assertTrue(window.size() > 40, "answers in the window: " + window.size());
  }
}
