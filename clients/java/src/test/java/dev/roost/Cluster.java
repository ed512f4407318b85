package dev.roost;

import static org.junit.jupiter.api.Assertions.fail;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Test support: tables built by the real roost-load, real roost-server processes on loopback (one
 * per shard and replica), and their logs, as the Python client's tests/conftest.py. The binaries
 * come from ROOST_LOAD_BINARY and ROOST_SERVER_BINARY (ctest sets them to the build's), else from
 * build/release of this checkout. Nothing is mocked; waits are polls with generous timeouts that
 * fail with the server's log.
 *
 * <pre>{@code
 * try (Cluster cluster = new Cluster(tempDir)) {
 *   cluster.build("t", Cluster.keysAndValues(100), 3);
 *   List<List<String>> shards = cluster.startShards(3, 2);
 * }
 * }</pre>
 *
 * <p>{@link #withRepository}: tables are published to a table repository (a local directory) and
 * each server pulls its shard of them into a data directory of its own, following each table's
 * POINTER ({@link #rollback} moves it back).
 */
public final class Cluster implements AutoCloseable {
  static final long WAIT_SECONDS = 60;
  private static final Pattern LISTENING = Pattern.compile("lookup service listening on (\\S+)\n");

  final Path scratch;
  final Path data;
  final String load;
  final String serverBinary;
  final List<Server> servers = new ArrayList<>();
  final String repository; // file:///...; null: none, every server reads `data`
  private int inputs;

  public Cluster(Path scratch) throws IOException {
    this(scratch, null);
  }

  private Cluster(Path scratch, String repository) throws IOException {
    this.scratch = scratch;
    this.data = Files.createDirectories(scratch.resolve("data"));
    this.load = binary("ROOST_LOAD_BINARY", "loader/roost-load");
    this.serverBinary = binary("ROOST_SERVER_BINARY", "server/roost-server");
    this.repository = repository;
  }

  /**
   * A cluster whose tables are published to a table repository in {@code scratch}: each server
   * pulls from it (polling its POINTERs every 0.1 s unless told otherwise) into its own data
   * directory.
   */
  public static Cluster withRepository(Path scratch) throws IOException {
    Path repo = Files.createDirectories(scratch.resolve("repo"));
    return new Cluster(scratch, "file://" + repo);
  }

  static String binary(String variable, String relative) {
    String path = System.getenv(variable);
    if (path == null || path.isEmpty()) {
      path = PartitionTest.root().resolve("build/release").resolve(relative).toString();
    }
    if (!Files.isExecutable(Path.of(path))) {
      fail(path + " is not an executable: build with scripts/build.sh or set " + variable);
    }
    return path;
  }

  static byte[] bytes(String text) {
    return text.getBytes(StandardCharsets.UTF_8);
  }

  /** n keys, some binary (zero and high bytes, the empty key), each with its own value. */
  public static Map<String, byte[]> keysAndValues(int n, String tag) {
    Map<String, byte[]> kvs = new LinkedHashMap<>();
    for (int i = 0; i < n; ++i) {
      kvs.put(hex(bytes(String.format("key%05d", i))), bytes(tag + " value of key " + i));
    }
    kvs.put("", bytes(tag + " the empty key's value"));
    kvs.put("00ff00", new byte[] {0, 'b', (byte) 0xff});
    kvs.put(hex(bytes("tab\tnew\nline")), new byte[0]); // an empty value is a value
    return kvs;
  }

  static String hex(byte[] b) {
    return HexFormat.of().formatHex(b);
  }

  static byte[] unhex(String s) {
    return HexFormat.of().parseHex(s);
  }

  /** Publishes the next version of {@code table}: keys in hex, values. */
  public void build(String table, Map<String, byte[]> kvs, int shards) throws Exception {
    build(table, kvs, shards, "cuckoo");
  }

  /** The same, in {@code format} ("cuckoo" or "block"). */
  public void build(String table, Map<String, byte[]> kvs, int shards, String format)
      throws Exception {
    ++inputs;
    Path tsv = scratch.resolve("input-" + table + "-" + inputs + ".tsv");
    StringBuilder text = new StringBuilder();
    for (Map.Entry<String, byte[]> kv : kvs.entrySet()) {
      text.append(kv.getKey()).append('\t').append(hex(kv.getValue())).append('\n');
    }
    Files.writeString(tsv, text);
    Path log = scratch.resolve("load-" + inputs + ".log");
    Process p =
        new ProcessBuilder(
                load,
                "build",
                "-q",
                "--format",
                format,
                "--key-encoding",
                "hex",
                "--value-encoding",
                "hex",
                repository == null ? "--data-dir" : "--repository",
                repository == null ? data.toString() : repository,
                "--table",
                table,
                "--shards",
                Integer.toString(shards),
                "-i",
                tsv.toString())
            .redirectErrorStream(true)
            .redirectOutput(log.toFile())
            .start();
    if (!p.waitFor(WAIT_SECONDS, TimeUnit.SECONDS) || p.exitValue() != 0) {
      p.destroyForcibly();
      fail("roost-load build failed: " + Files.readString(log));
    }
  }

  /**
   * Moves the POINTER of {@code table} in the repository back to {@code version} ("v000001" or
   * "1"), as roost-load rollback does; every server follows.
   */
  public void rollback(String table, String version) throws Exception {
    Path log = scratch.resolve("rollback-" + table + "-" + version + ".log");
    Process p =
        new ProcessBuilder(
                load, "rollback", "--repository", repository, "--table", table, "--to", version)
            .redirectErrorStream(true)
            .redirectOutput(log.toFile())
            .start();
    if (!p.waitFor(WAIT_SECONDS, TimeUnit.SECONDS) || p.exitValue() != 0) {
      p.destroyForcibly();
      fail("roost-load rollback failed: " + Files.readString(log));
    }
  }

  /** A roost-server of shard {@code shard} (-1: unsharded), ready. */
  Server server(int shard, List<String> extra) throws Exception {
    Path dataDir =
        repository == null
            ? data
            : Files.createDirectories(scratch.resolve("data-" + servers.size()));
    Server server = start(dataDir, shard, "127.0.0.1:0", extra, servers.size());
    servers.add(server);
    server.waitReady();
    return server;
  }

  /**
   * Stops {@code old} (SIGTERM: it finishes the calls it has; calls that race its shutdown may end
   * CANCELLED) and starts it again on the same address and data directory, with {@code extra} flags
   * instead of its own; returns the new one, ready.
   */
  Server restart(Server old, List<String> extra) throws Exception {
    old.process.destroy();
    if (!old.process.waitFor(WAIT_SECONDS, TimeUnit.SECONDS)) {
      fail("roost-server did not stop on SIGTERM" + old.describe());
    }
    int i = servers.indexOf(old);
    Server server = start(old.dataDir, old.shard, old.address, extra, i);
    servers.set(i, server);
    server.waitReady();
    return server;
  }

  private Server start(Path dataDir, int shard, String listen, List<String> extra, int logIndex)
      throws IOException {
    List<String> args =
        new ArrayList<>(
            List.of(
                serverBinary,
                "--data-dir",
                dataDir.toString(),
                "--listen",
                listen,
                "--admin-listen",
                "",
                "--metrics-listen",
                "",
                "--poll-interval",
                "0.2",
                "--drain-period",
                "0"));
    if (shard >= 0) {
      args.add("--shard");
      args.add(Integer.toString(shard));
    }
    if (repository != null) {
      args.add("--repository");
      args.add(repository);
      if (!extra.contains("--repository-poll")) {
        args.add("--repository-poll");
        args.add("0.1");
      }
    }
    args.addAll(extra);
    Path log = scratch.resolve("server" + logIndex + ".log");
    for (int n = 2; Files.exists(log); ++n) { // a restart's log is a file of its own
      log = scratch.resolve("server" + logIndex + "-" + n + ".log");
    }
    return new Server(log, args, dataDir, shard);
  }

  /** shards × replicas servers; the layout's lists of their addresses. */
  public List<List<String>> startShards(int shards, int replicas, List<String> extra)
      throws Exception {
    List<List<String>> layout = new ArrayList<>();
    for (int s = 0; s < shards; ++s) {
      List<String> targets = new ArrayList<>();
      for (int r = 0; r < replicas; ++r) {
        targets.add(server(s, extra).address);
      }
      layout.add(targets);
    }
    return layout;
  }

  Server serverAt(String address) {
    return servers.stream().filter(s -> s.address.equals(address)).findFirst().orElseThrow();
  }

  static void waitFor(BooleanSupplier predicate, String what, Server server) throws Exception {
    long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(WAIT_SECONDS);
    while (!predicate.getAsBoolean()) {
      if (System.nanoTime() > end) {
        fail("timed out waiting for " + what + (server == null ? "" : server.describe()));
      }
      Thread.sleep(20);
    }
  }

  @Override
  public void close() throws Exception {
    for (Server s : servers) {
      s.kill();
    }
    for (Server s : servers) {
      String log = s.log();
      for (String report :
          List.of("ERROR: AddressSanitizer", "ERROR: LeakSanitizer", "runtime error:")) {
        if (log.contains(report)) {
          fail("roost-server's log holds a sanitizer report:" + s.describe());
        }
      }
    }
  }

  /** A roost-server child process; killed at the end of the test. */
  static final class Server {
    final Path logPath;
    final Process process;
    final Path dataDir;
    final int shard;
    String address = "";

    Server(Path logPath, List<String> args, Path dataDir, int shard) throws IOException {
      this.logPath = logPath;
      this.dataDir = dataDir;
      this.shard = shard;
      this.process =
          new ProcessBuilder(args)
              .redirectErrorStream(true)
              .redirectOutput(logPath.toFile())
              .redirectInput(ProcessBuilder.Redirect.from(new java.io.File("/dev/null")))
              .start();
    }

    String log() {
      try {
        return Files.readString(logPath, StandardCharsets.ISO_8859_1);
      } catch (IOException e) {
        return "(cannot read " + logPath + ": " + e + ")";
      }
    }

    String describe() {
      return "\n--- " + logPath + " ---\n" + log() + "--- end of log ---";
    }

    void waitLog(String text) throws Exception {
      waitFor(
          () -> {
            if (!process.isAlive()) {
              fail("roost-server exited " + process.exitValue() + describe());
            }
            return log().contains(text);
          },
          "\"" + text + "\"",
          this);
    }

    void waitReady() throws Exception {
      waitFor(
          () -> {
            if (!process.isAlive()) {
              fail("roost-server exited " + process.exitValue() + describe());
            }
            Matcher m = LISTENING.matcher(log());
            if (m.find()) {
              address = m.group(1);
            }
            return !address.isEmpty();
          },
          "roost-server to listen",
          this);
      waitLog("roost-server: ready: "); // not "not ready: waiting for ..."
    }

    /** SIGKILL (Process.destroyForcibly on Unix). */
    void kill() throws InterruptedException {
      if (process.isAlive()) {
        process.destroyForcibly();
      }
      process.waitFor();
    }
  }
}
