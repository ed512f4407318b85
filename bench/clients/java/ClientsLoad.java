// The Java load generators of bench/clients_bench.sh: roost's Java client
// (dev.roost, clients/java) against a roost cluster, or Jedis against
// Redis, under one of two closed loops on the pairs of bench/text_pairs.h:
//
//   --workload get       roost: --in-flight getAsync calls outstanding, with
//                        coalesceGets, each answer (on a gRPC thread)
//                        issuing the next; Redis: --in-flight threads, each
//                        one GET at a time through a JedisPool of as many
//                        connections
//   --workload multiget  --in-flight threads, each one multiGet (Redis:
//                        MGET) of --batch keys at a time
//
// Keys are drawn uniformly from the first --keys pairs and every answer is
// checked: a miss or a wrong value is an error, and the exit status is 1
// when any call failed or was answered wrong. After --warmup seconds, calls
// that complete within the next --duration seconds are measured. One JSON
// line, with bench/closed_loop.h's names (qps: calls/s).
//
//   java -cp ... ClientsLoad --client roost --layout cluster.json
//       --keys 1000000 --workload get --in-flight 64
import dev.roost.ClientOptions;
import dev.roost.GetResult;
import dev.roost.LookupResult;
import dev.roost.MultiGetResult;
import dev.roost.RoostClient;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicLong;
import redis.clients.jedis.Jedis;
import redis.clients.jedis.JedisPool;
import redis.clients.jedis.JedisPoolConfig;

public final class ClientsLoad {
  static final int VALUE_SIZE = 100;

  // bench/text_pairs.h's pairs.
  static byte[] key(long i) {
    String digits = Long.toString(i);
    int width = 8 + (int) (i % 9);
    StringBuilder b = new StringBuilder(width);
    for (int k = digits.length(); k < width; k++) b.append('0');
    return b.append(digits).toString().getBytes(StandardCharsets.US_ASCII);
  }

  static byte[] value(byte[] key) {
    byte[] v = new byte[VALUE_SIZE];
    int n = 0;
    while (n < VALUE_SIZE) {
      for (int k = 0; k < key.length && n < VALUE_SIZE; k++) v[n++] = key[k];
      if (n < VALUE_SIZE) v[n++] = ':';
    }
    return v;
  }

  // The flags.
  static String client = "";
  static String layout = "";
  static String table = "bench";
  static String redis = "";
  static long keys = 0;
  static String workload = "";
  static int inFlight = 64;
  static int batch = 100;
  static double duration = 10;
  static double warmup = 2;
  static long seed = 20261122;

  // What the calls did.
  static final AtomicLong rpcErrors = new AtomicLong();
  static final AtomicLong misses = new AtomicLong();
  static final AtomicLong badValues = new AtomicLong();
  static final AtomicLong keysDone = new AtomicLong();
  static final List<Long> latencies = Collections.synchronizedList(new ArrayList<>());
  static volatile String firstError = "";
  static long from;
  static long to;

  static synchronized void fail(AtomicLong n, String what) {
    n.incrementAndGet();
    if (firstError.isEmpty()) firstError = what;
  }

  static boolean check(long i, boolean found, byte[] got) {
    if (!found) {
      fail(misses, "key #" + i + " answered as absent");
      return false;
    }
    if (!Arrays.equals(got, value(key(i)))) {
      fail(badValues, "key #" + i + " answered a wrong value");
      return false;
    }
    return true;
  }

  // Counts a call of n keys that took start..end (nanoTime) and was right.
  static void done(long start, long end, int n) {
    if (start >= from && end <= to) {
      latencies.add(end - start);
      keysDone.addAndGet(n);
    }
  }

  interface Lookup {
    // found[i] and values[i] for keys[i]; throws on a failed call.
    void call(byte[][] keys, boolean[] found, byte[][] values) throws Exception;
  }

  // One thread's loop of blocking calls.
  static void loop(int index, Lookup lookup) {
    SplittableRandom rng = new SplittableRandom(seed * 1000 + index);
    long[] numbers = new long[batch];
    byte[][] ks = new byte[batch][];
    boolean[] found = new boolean[batch];
    byte[][] values = new byte[batch][];
    while (System.nanoTime() < to) {
      for (int i = 0; i < batch; i++) {
        numbers[i] = rng.nextLong(keys);
        ks[i] = key(numbers[i]);
      }
      long start = System.nanoTime();
      try {
        lookup.call(ks, found, values);
      } catch (Exception e) {
        fail(rpcErrors, e.toString());
        continue;
      }
      long end = System.nanoTime();
      boolean ok = true;
      for (int i = 0; i < batch; i++) ok = check(numbers[i], found[i], values[i]) && ok;
      if (ok) done(start, end, batch);
    }
  }

  static void runThreads(Lookup lookup) throws InterruptedException {
    List<Thread> threads = new ArrayList<>();
    for (int t = 0; t < inFlight; t++) {
      final int index = t;
      Thread th = new Thread(() -> loop(index, lookup));
      th.start();
      threads.add(th);
    }
    for (Thread th : threads) th.join();
  }

  // --workload get against roost: chains of getAsync.
  static void runAsyncGets(RoostClient roost) throws InterruptedException {
    CountDownLatch finished = new CountDownLatch(inFlight);
    for (int t = 0; t < inFlight; t++) {
      new Chain(roost, new SplittableRandom(seed * 1000 + t), finished).issue();
    }
    finished.await();
  }

  static final class Chain {
    final RoostClient roost;
    final SplittableRandom rng;
    final CountDownLatch finished;

    Chain(RoostClient roost, SplittableRandom rng, CountDownLatch finished) {
      this.roost = roost;
      this.rng = rng;
      this.finished = finished;
    }

    void issue() {
      if (System.nanoTime() >= to) {
        finished.countDown();
        return;
      }
      long number = rng.nextLong(keys);
      long start = System.nanoTime();
      roost
          .getAsync(table, key(number))
          .whenComplete(
              (GetResult r, Throwable e) -> {
                long end = System.nanoTime();
                if (e != null) {
                  fail(rpcErrors, e.toString());
                } else if (check(number, r.found(), r.value())) {
                  done(start, end, 1);
                }
                issue();
              });
    }
  }

  static double cpuSeconds() {
    return ((com.sun.management.OperatingSystemMXBean)
                ManagementFactory.getOperatingSystemMXBean())
            .getProcessCpuTime()
        / 1e9;
  }

  // Starts the warm-up and the measured window, and the thread that reads
  // this process's CPU time at the window's edges, once the client is made
  // (a JVM's start-up is not the client's).
  static Thread startWindow(double[] cpu) {
    from = System.nanoTime() + (long) (warmup * 1e9);
    to = from + (long) (duration * 1e9);
    Thread clock =
        new Thread(
            () -> {
              try {
                Thread.sleep(Math.max(0, (from - System.nanoTime()) / 1_000_000));
                cpu[0] = cpuSeconds();
                Thread.sleep(Math.max(0, (to - System.nanoTime()) / 1_000_000));
                cpu[1] = cpuSeconds();
              } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
              }
            });
    clock.start();
    return clock;
  }

  static void usage(String what) {
    System.err.println("ClientsLoad: " + what);
    System.exit(2);
  }

  public static void main(String[] args) throws Exception {
    for (int a = 0; a < args.length; a += 2) {
      if (a + 1 >= args.length) usage(args[a] + " needs a value");
      String v = args[a + 1];
      switch (args[a]) {
        case "--client" -> client = v;
        case "--layout" -> layout = v;
        case "--table" -> table = v;
        case "--redis" -> redis = v;
        case "--keys" -> keys = Long.parseLong(v);
        case "--workload" -> workload = v;
        case "--in-flight" -> inFlight = Integer.parseInt(v);
        case "--batch" -> batch = Integer.parseInt(v);
        case "--duration" -> duration = Double.parseDouble(v);
        case "--warmup" -> warmup = Double.parseDouble(v);
        case "--seed" -> seed = Long.parseLong(v);
        default -> usage("unknown argument: " + args[a]);
      }
    }
    if (keys < 1 || keys > 100_000_000 || inFlight < 1 || batch < 1) {
      usage("--keys (1 to 10^8), --in-flight and --batch must be positive");
    }
    if (!workload.equals("get") && !workload.equals("multiget")) {
      usage("--workload must be get or multiget");
    }
    if (workload.equals("get")) batch = 1;
    double[] cpu = new double[2];
    Thread clock = null;
    switch (client) {
      case "roost" -> {
        try (RoostClient roost =
            RoostClient.fromLayoutFile(
                Path.of(layout), ClientOptions.builder().coalesceGets(true, 4, 1000).build())) {
          clock = startWindow(cpu);
          if (workload.equals("get")) {
            runAsyncGets(roost);
          } else {
            runThreads(
                (ks, found, values) -> {
                  MultiGetResult r = roost.multiGet(table, Arrays.asList(ks));
                  List<LookupResult> results = r.results();
                  if (results.size() != ks.length) {
                    throw new IllegalStateException(results.size() + " answers");
                  }
                  for (int i = 0; i < ks.length; i++) {
                    found[i] = results.get(i).found();
                    values[i] = results.get(i).value();
                  }
                });
          }
        }
      }
      case "redis" -> {
        int colon = redis.lastIndexOf(':');
        if (colon < 0) usage("--redis HOST:PORT");
        // JedisPool, deprecated in Jedis 8 for RedisClient, is what most
        // services still run.
        JedisPoolConfig config = new JedisPoolConfig();
        config.setMaxTotal(inFlight);
        config.setMaxIdle(inFlight);
        try (JedisPool pool =
            new JedisPool(
                config, redis.substring(0, colon), Integer.parseInt(redis.substring(colon + 1)))) {
          clock = startWindow(cpu);
          runThreads(
              (ks, found, values) -> {
                try (Jedis j = pool.getResource()) {
                  if (ks.length == 1 && workload.equals("get")) {
                    values[0] = j.get(ks[0]);
                    found[0] = values[0] != null;
                    return;
                  }
                  List<byte[]> vs = j.mget(ks);
                  if (vs.size() != ks.length) throw new IllegalStateException(vs.size() + " answers");
                  for (int i = 0; i < ks.length; i++) {
                    values[i] = vs.get(i);
                    found[i] = values[i] != null;
                  }
                }
              });
        }
      }
      default -> usage("--client must be roost or redis");
    }
    if (clock != null) clock.join();
    long[] lat;
    synchronized (latencies) {
      lat = latencies.stream().mapToLong(Long::longValue).sorted().toArray();
    }
    String json =
        String.format(
            java.util.Locale.ROOT,
            "{\"method\":\"%s\",\"concurrency\":%d,\"batch\":%d,\"seconds\":%.3f,\"rpcs\":%d,"
                + "\"keys\":%d,\"qps\":%.1f,\"keys_per_s\":%.1f,\"p50_us\":%.1f,\"p99_us\":%.1f,"
                + "\"rpc_errors\":%d,\"misses\":%d,\"bad_values\":%d,\"client_cpu_s\":%.3f,"
                + "\"first_error\":\"%s\"}",
            workload,
            inFlight,
            batch,
            duration,
            lat.length,
            keysDone.get(),
            lat.length / duration,
            keysDone.get() / duration,
            percentile(lat, 0.50) / 1e3,
            percentile(lat, 0.99) / 1e3,
            rpcErrors.get(),
            misses.get(),
            badValues.get(),
            cpu[1] - cpu[0],
            firstError.replace("\\", "\\\\").replace("\"", "\\\""));
    System.out.println(json);
    if (!firstError.isEmpty()) {
      System.err.println("ClientsLoad: " + firstError);
      System.exit(1);
    }
    if (lat.length == 0) {
      System.err.println("ClientsLoad: no call completed in the measured window");
      System.exit(1);
    }
    System.exit(0);
  }

  static double percentile(long[] sorted, double q) {
    if (sorted.length == 0) return 0;
    return sorted[Math.min(sorted.length - 1, (int) (q * sorted.length))];
  }
}
