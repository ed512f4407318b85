package dev.roost;

import com.google.protobuf.ByteString;
import dev.roost.v1.KeyValue;
import dev.roost.v1.LookupGrpc;
import dev.roost.v1.ScanRequest;
import dev.roost.v1.ScanResponse;
import io.grpc.Context;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.Iterator;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.IntStream;

/**
 * RoostClient.scan: one Scan stream per shard, the first message of each read (it names the version
 * the stream answers from), the streams agreed on one version by the same algorithm as MultiGet's,
 * then merged in key order until the limit (the C++ client's client/cluster_scan.cc). A stream that
 * fails retryably before its first message is re-opened on another replica; one that fails later
 * fails the scan.
 *
 * <p>Blocking, on the calling thread; one per scan.
 */
final class ClusterScan implements AutoCloseable {
  private static final Comparator<ByteString> KEY_ORDER =
      ByteString.unsignedLexicographicalComparator();

  private final Shards shards;
  private final Shards.Policy policy;
  private final Stream[] streams;

  // One shard's stream.
  private static final class Stream {
    final int shard;
    ScanRequest request;
    int firstReplica;
    int tries;
    String target = "";
    Context.CancellableContext context;
    Iterator<ScanResponse> reader;
    boolean open;
    ScanResponse message = ScanResponse.getDefaultInstance();
    int next; // the next entry of `message` to merge
    boolean more; // the last message's `more`
    String version = "";
    String withdrawnThrough = ""; // its first message's
    ByteString lastKey; // the last key taken from this stream

    Stream(int shard, ScanRequest request) {
      this.shard = shard;
      this.request = request;
    }
  }

  private ClusterScan(Shards shards, Shards.Policy policy, Stream[] streams) {
    this.shards = shards;
    this.policy = policy;
    this.streams = streams;
  }

  /**
   * Scans {@code table}: {@code callerPin} the caller's version (null: none), {@code monotonic} the
   * table's state of monotonic reads (null: off; a caller's version neither reads nor changes it).
   */
  static ScanResult run(
      Shards shards,
      Shards.Policy policy,
      String table,
      ScanOptions scan,
      String callerPin,
      MonotonicReads.Table monotonic) {
    Stream[] streams = new Stream[shards.size()];
    for (int s = 0; s < streams.length; ++s) {
      streams[s] =
          new Stream(
              s,
              ScanRequest.newBuilder()
                  .setTable(table)
                  .setStart(ByteString.copyFrom(scan.start()))
                  .setEnd(ByteString.copyFrom(scan.end()))
                  .setPrefix(ByteString.copyFrom(scan.prefix()))
                  // Each shard may hold every one of the first `limit` keys.
                  .setLimit(scan.limit())
                  .build());
    }
    try (ClusterScan run = new ClusterScan(shards, policy, streams)) {
      VersionConsensus consensus =
          VersionConsensus.forCall(
              IntStream.range(0, streams.length).toArray(), monotonic, callerPin);
      run.readOneVersion(table, callerPin, consensus);
      return run.merge(scan.limit(), consensus.version());
    }
  }

  // The consistency algorithm's driver (BatchRead's, blocking).
  private void readOneVersion(String table, String callerPin, VersionConsensus consensus) {
    int[] all = IntStream.range(0, streams.length).toArray();
    RoostException failure = send(all, callerPin == null ? "" : callerPin, consensus);
    if (failure != null) {
      throw failure;
    }
    if (callerPin != null) {
      return;
    }
    long backoff = policy.backoffNanos();
    while (!consensus.agreed()) {
      if (System.nanoTime() - policy.deadlineNanos() >= 0) {
        throw aborted(table, consensus, "");
      }
      VersionConsensus.Round round = consensus.next();
      failure = send(round.parts(), round.pin(), consensus);
      if (failure == null) {
        continue;
      }
      if (failure.status() != Status.Code.FAILED_PRECONDITION
          || failure instanceof StaleLayoutException) {
        throw failure;
      }
      consensus.pinRefused();
      if (System.nanoTime() + backoff - policy.deadlineNanos() >= 0) {
        throw aborted(table, consensus, "; last refusal: " + failure.getMessage());
      }
      sleep(backoff);
      backoff = Math.min(backoff * 2, policy.maxBackoffNanos());
    }
    consensus.settled();
  }

  private static RoostException aborted(String table, VersionConsensus consensus, String why) {
    return new RoostException(
        Status.Code.ABORTED,
        "table "
            + table
            + ": no version answered by every shard before the deadline; versions seen: "
            + consensus.seen()
            + why);
  }

  private static void sleep(long nanos) {
    try {
      TimeUnit.NANOSECONDS.sleep(nanos);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new RoostException(Status.Code.CANCELLED, "interrupted", -1, e);
    }
  }

  // Opens the streams `which` pinned to `pin` and reads their first
  // messages; every one is read even after one failed, so that the
  // consensus knows what each answers. The first failure, or null.
  private RoostException send(int[] which, String pin, VersionConsensus consensus) {
    for (int i : which) {
      Stream s = streams[i];
      close(s);
      s.request = s.request.toBuilder().setVersion(pin).build();
      s.tries = 0;
      s.firstReplica = shards.pickReplica(s.shard);
      start(s);
    }
    RoostException first = null;
    for (int i : which) {
      RoostException failure = first(streams[i]);
      if (failure == null) {
        consensus.answered(i, streams[i].version, streams[i].withdrawnThrough);
      } else {
        consensus.lost(i);
        first = first == null ? failure : first;
      }
    }
    return first;
  }

  private void start(Stream s) {
    List<Shards.Replica> replicas = shards.replicas(s.shard);
    Shards.Replica replica = replicas.get((s.firstReplica + s.tries) % replicas.size());
    ++s.tries;
    s.target = replica.target();
    s.context = Context.current().withCancellation();
    Context previous = s.context.attach();
    try {
      s.reader =
          LookupGrpc.newBlockingStub(replica.channel())
              .withDeadline(policy.deadline())
              .scan(s.request);
    } finally {
      s.context.detach(previous);
    }
    s.open = true;
    s.message = ScanResponse.getDefaultInstance();
    s.next = 0;
    s.more = false;
    s.version = "";
    s.withdrawnThrough = "";
  }

  private static void close(Stream s) {
    if (s.open) {
      s.context.cancel(null);
      s.open = false;
    }
  }

  @Override
  public void close() {
    for (Stream s : streams) {
      close(s);
    }
  }

  // Reads the first message of `s`, moving to another replica while the
  // stream fails retryably before one.
  private RoostException first(Stream s) {
    int n = shards.replicas(s.shard).size();
    long backoff = policy.backoffNanos();
    while (true) {
      Status status;
      try {
        if (s.reader.hasNext()) {
          s.message = s.reader.next();
          s.version = s.message.getVersion();
          s.withdrawnThrough = s.message.getWithdrawnThrough();
          s.more = s.message.getMore();
          return null;
        }
        s.open = false;
        s.message = ScanResponse.getDefaultInstance();
        return null; // no entries, no version
      } catch (StatusRuntimeException e) {
        status = e.getStatus();
      }
      s.open = false;
      s.message = ScanResponse.getDefaultInstance();
      if (!Shards.retryable(status) || System.nanoTime() - policy.deadlineNanos() >= 0) {
        return Shards.shardError(s.shard, s.target, status, "");
      }
      if (s.tries % n == 0) {
        if (System.nanoTime() + backoff - policy.deadlineNanos() >= 0) {
          return Shards.shardError(s.shard, s.target, status, "");
        }
        sleep(backoff);
        backoff = Math.min(backoff * 2, policy.maxBackoffNanos());
      }
      if (policy.metrics() != null) {
        policy.metrics().retry();
      }
      start(s);
    }
  }

  // The next entry of `s` in key order, or null when it has none left.
  private KeyValue head(Stream s) {
    while (s.next >= s.message.getEntriesCount()) {
      if (!s.open) {
        return null;
      }
      ScanResponse message;
      try {
        if (!s.reader.hasNext()) {
          s.open = false;
          s.message = ScanResponse.getDefaultInstance();
          s.next = 0;
          return null;
        }
        message = s.reader.next();
      } catch (StatusRuntimeException e) {
        s.open = false;
        throw Shards.shardError(s.shard, s.target, e.getStatus(), "");
      }
      if (!VersionConsensus.sameVersion(message.getVersion(), s.version)) {
        throw new RoostException(
            Status.Code.INTERNAL,
            "shard "
                + s.shard
                + " ("
                + s.target
                + ") answered from "
                + s.version
                + ", then from "
                + message.getVersion(),
            s.shard,
            null);
      }
      s.message = message;
      s.next = 0;
      s.more = message.getMore();
    }
    return s.message.getEntries(s.next);
  }

  // The merge: the smallest head of all streams, each time (a linear scan:
  // a table has few shards).
  private ScanResult merge(int limit, String version) {
    List<ScanResult.Entry> entries = new ArrayList<>();
    List<ByteString> keys = new ArrayList<>();
    KeyValue[] heads = new KeyValue[streams.length];
    for (int i = 0; i < streams.length; ++i) {
      heads[i] = head(streams[i]);
    }
    while (limit == 0 || entries.size() < limit) {
      int best = -1;
      for (int i = 0; i < streams.length; ++i) {
        if (heads[i] != null
            && (best < 0 || KEY_ORDER.compare(heads[i].getKey(), heads[best].getKey()) < 0)) {
          best = i;
        }
      }
      if (best < 0) {
        break;
      }
      Stream s = streams[best];
      ByteString key = heads[best].getKey();
      if (s.lastKey != null && KEY_ORDER.compare(s.lastKey, key) >= 0) {
        throw new RoostException(
            Status.Code.INTERNAL,
            "shard " + s.shard + " (" + s.target + ") answered keys out of order",
            s.shard,
            null);
      }
      s.lastKey = key;
      keys.add(key);
      entries.add(new ScanResult.Entry(key.toByteArray(), heads[best].getValue().toByteArray()));
      ++s.next;
      heads[best] = head(s);
    }
    // More: an entry not taken, or a shard that stopped at its limit with
    // keys left.
    boolean more = false;
    for (int i = 0; i < streams.length && !more; ++i) {
      more = heads[i] != null || streams[i].more;
    }
    if (limit == 0) {
      // Each server stopped at its own --max-scan-keys: the merge holds
      // every key only up to the smallest last key of a shard that stopped.
      ByteString cut = null;
      for (Stream s : streams) {
        if (s.more && s.lastKey != null && (cut == null || KEY_ORDER.compare(s.lastKey, cut) < 0)) {
          cut = s.lastKey;
        }
      }
      if (cut != null) {
        int keep = 0;
        while (keep < keys.size() && KEY_ORDER.compare(keys.get(keep), cut) <= 0) {
          ++keep;
        }
        entries.subList(keep, entries.size()).clear();
      }
    }
    return new ScanResult(List.copyOf(entries), more, version);
  }
}
