package dev.roost;

import com.google.common.util.concurrent.ListenableFuture;
import dev.roost.v1.ListTablesRequest;
import dev.roost.v1.ListTablesResponse;
import dev.roost.v1.LookupGrpc;
import dev.roost.v1.TableInfo;
import io.grpc.ChannelCredentials;
import io.grpc.ManagedChannel;
import io.grpc.Status;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

/**
 * Waiting until every replica of every shard serves one version of a table: the check of {@code
 * roost-admin wait} and the Python client's Client.wait. Each replica's ListTables must show the
 * table serving that version. A "dns:///NAME:PORT" entry stands for every address NAME resolves to,
 * each asked on its own (a round-robin channel would ask only one of them). A replica whose table
 * is another shard than the layout says fails at once with a {@link StaleLayoutException}: waiting
 * would never end.
 *
 * <p>Blocks the calling thread; one wait at a time per instance.
 */
final class VersionWait {
  private static final long POLL_NANOS = TimeUnit.MILLISECONDS.toNanos(200);

  private final Layout layout;
  private final Shards shards;
  private final String token;

  VersionWait(Layout layout, Shards shards, String token) {
    this.layout = layout;
    this.shards = shards;
    this.token = token;
  }

  /** "v000007": the server's name for version {@code n}. */
  static String versionName(long n) {
    return String.format("v%06d", n);
  }

  private record Target(int shard, String target, ManagedChannel channel) {}

  void await(String table, String version, Duration timeout) {
    if (table == null || table.isEmpty()) {
      throw new IllegalArgumentException("the table name must not be empty");
    }
    long want = VersionConsensus.versionNumber(version);
    if (want < 0) {
      throw new IllegalArgumentException(
          "a version is \"v000007\" or \"7\", not \"" + version + "\"");
    }
    long deadline = System.nanoTime() + timeout.toNanos();
    Map<String, ManagedChannel> resolved = new HashMap<>();
    ChannelCredentials credentials = Shards.credentials(layout);
    try {
      while (true) {
        List<String> lagging = new ArrayList<>();
        List<Target> targets = targets(resolved, credentials, lagging);
        long callNanos =
            Math.max(
                TimeUnit.MILLISECONDS.toNanos(50),
                Math.min(TimeUnit.SECONDS.toNanos(2), deadline - System.nanoTime()));
        List<ListenableFuture<ListTablesResponse>> calls = new ArrayList<>();
        for (Target t : targets) {
          calls.add(
              LookupGrpc.newFutureStub(t.channel())
                  .withDeadlineAfter(callNanos, TimeUnit.NANOSECONDS)
                  .listTables(ListTablesRequest.getDefaultInstance()));
        }
        for (int i = 0; i < targets.size(); ++i) {
          Target t = targets.get(i);
          String where = "shard " + t.shard() + " " + t.target();
          try {
            answered(table, want, t.shard(), where, calls.get(i).get(), lagging);
          } catch (ExecutionException e) {
            Status status = Status.fromThrowable(e.getCause());
            lagging.add(where + ": " + status.getCode() + ": " + Shards.describe(status));
          }
        }
        if (lagging.isEmpty()) {
          return;
        }
        long left = deadline - System.nanoTime();
        if (left <= 0) {
          throw new RoostException(
              Status.Code.DEADLINE_EXCEEDED,
              "not every replica serves "
                  + table
                  + " "
                  + versionName(want)
                  + " before the timeout: "
                  + String.join("; ", lagging));
        }
        TimeUnit.NANOSECONDS.sleep(Math.min(POLL_NANOS, left));
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new RoostException(Status.Code.CANCELLED, "interrupted while waiting", -1, e);
    } finally {
      for (ManagedChannel c : resolved.values()) {
        c.shutdownNow();
      }
    }
  }

  private List<Target> targets(
      Map<String, ManagedChannel> resolved, ChannelCredentials credentials, List<String> lagging) {
    List<Target> out = new ArrayList<>();
    for (int s = 0; s < layout.shardCount(); ++s) {
      List<String> replicas = layout.shards().get(s);
      for (int r = 0; r < replicas.size(); ++r) {
        String target = replicas.get(r);
        String[] name = dnsName(target);
        if (name == null) {
          out.add(new Target(s, target, shards.replicas(s).get(r).channel()));
          continue;
        }
        TreeSet<String> addresses = new TreeSet<>();
        try {
          for (InetAddress a : InetAddress.getAllByName(name[0])) {
            addresses.add(a.getHostAddress());
          }
        } catch (UnknownHostException e) {
          lagging.add("shard " + s + " " + target + ": cannot resolve: " + e.getMessage());
          continue;
        }
        for (String a : addresses) {
          String address = (a.contains(":") ? "[" + a + "]" : a) + ":" + name[1];
          ManagedChannel channel =
              resolved.computeIfAbsent(address, x -> Shards.channel(x, credentials, layout, token));
          out.add(new Target(s, address, channel));
        }
      }
    }
    return out;
  }

  /** {host, port} of "dns:///host:port" or "dns:host:port"; null for any other target. */
  static String[] dnsName(String target) {
    String rest;
    if (target.startsWith("dns:///")) {
      rest = target.substring("dns:///".length());
    } else if (target.startsWith("dns:") && !target.startsWith("dns://")) {
      rest = target.substring("dns:".length());
    } else {
      return null;
    }
    String host;
    String port;
    if (rest.startsWith("[")) {
      int end = rest.indexOf("]:");
      if (end < 0) {
        return null;
      }
      host = rest.substring(1, end);
      port = rest.substring(end + 2);
    } else {
      int colon = rest.lastIndexOf(':');
      if (colon < 0) {
        return null;
      }
      host = rest.substring(0, colon);
      port = rest.substring(colon + 1);
    }
    return host.isEmpty() || port.isEmpty() ? null : new String[] {host, port};
  }

  private void answered(
      String table,
      long want,
      int shard,
      String where,
      ListTablesResponse response,
      List<String> lagging) {
    for (TableInfo info : response.getTablesList()) {
      if (!info.getName().equals(table)) {
        continue;
      }
      int n = layout.shardCount();
      if (info.getShardCount() != 0 && (info.getShardCount() != n || info.getShard() != shard)) {
        throw new StaleLayoutException(
            where
                + ": serves shard "
                + info.getShard()
                + " of "
                + info.getShardCount()
                + " of table "
                + table
                + "; the layout has "
                + n
                + " shards",
            shard);
      }
      String serving = info.getServingVersion();
      if (!serving.isEmpty() && VersionConsensus.versionNumber(serving) == want) {
        return;
      }
      lagging.add(where + ": serves " + (serving.isEmpty() ? "no version" : serving));
      return;
    }
    lagging.add(where + ": does not serve table " + table);
  }
}
