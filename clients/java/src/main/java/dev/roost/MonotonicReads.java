package dev.roost;

import java.util.Arrays;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The state of monotonic reads ({@link ClientOptions.Builder#monotonic}), per client and table: the
 * rules of client/README.md, "Monotonic reads", that every roost client runs alike.
 *
 * <ul>
 *   <li>the floor F: the newest version a call of the table was answered from (none at first);
 *   <li>the withdrawn range (L, W]: versions after L, up to and including W, were withdrawn and are
 *       not read (none at first);
 *   <li>per shard, newest[s]: the newest version not withdrawn that a replica of shard s has
 *       answered from.
 * </ul>
 *
 * On every answer from version V of shard s: (1) if it names withdrawn_through X (X &gt; V): if X
 * &gt; W, or X = W and V &lt; L, the withdrawn range becomes (V, X]; F goes back to V if it was in
 * (V, X], and so does every newest[t] in (V, X]; (2) if V is not withdrawn, newest[s] becomes
 * max(newest[s], V). A call settles on the target R = max(F, the oldest newest[s] over the shards
 * heard from) ({@link VersionConsensus} drives it), and once every part answered one version V, F
 * becomes max(F, V).
 *
 * <p>Versions are numbers here ("v000007" is 7); -1 stands for none. Thread-safe: shared by every
 * call of a client.
 */
final class MonotonicReads {
  private final int shards;
  private final ConcurrentHashMap<String, Table> tables = new ConcurrentHashMap<>();

  MonotonicReads(int shards) {
    this.shards = shards;
  }

  /** The state of {@code table}, made at its first call. */
  Table table(String table) {
    return tables.computeIfAbsent(table, t -> new Table(shards));
  }

  /** One table's state; every method holds its lock. */
  static final class Table {
    private long floor = -1; // F
    private long withdrawnAfter = -1; // L
    private long withdrawn = -1; // W
    private final long[] newest; // newest[s]; -1: not heard from

    Table(int shards) {
      newest = new long[shards];
      Arrays.fill(newest, -1);
    }

    /**
     * A replica of {@code shard} answered from {@code version}, naming {@code withdrawnThrough} (""
     * when none): rules 1 and 2. An answer that names no version (a server too old to say) changes
     * nothing.
     */
    synchronized void answered(int shard, String version, String withdrawnThrough) {
      long v = VersionConsensus.versionNumber(version);
      if (v < 0) {
        return;
      }
      long x = VersionConsensus.versionNumber(withdrawnThrough);
      if (x > v) {
        if (x > withdrawn || (x == withdrawn && v < withdrawnAfter)) {
          withdrawnAfter = v;
          withdrawn = x;
        }
        if (floor > v && floor <= x) {
          floor = v;
        }
        for (int t = 0; t < newest.length; ++t) {
          if (newest[t] > v && newest[t] <= x) {
            newest[t] = v;
          }
        }
      }
      if (!isWithdrawn(v)) {
        newest[shard] = Math.max(newest[shard], v);
      }
    }

    /** Whether {@code version} was withdrawn: in (L, W]. */
    synchronized boolean isWithdrawn(long version) {
      return version > withdrawnAfter && version <= withdrawn;
    }

    /** The target R = max(F, the oldest newest[s] over the shards heard from); -1: no state yet. */
    synchronized long target() {
      long oldest = -1;
      for (long n : newest) {
        if (n >= 0 && (oldest < 0 || n < oldest)) {
          oldest = n;
        }
      }
      return Math.max(floor, oldest);
    }

    /**
     * Every part of a call answered {@code version}: F becomes max(F, version), unless a rollback
     * learnt meanwhile withdrew it (the call's answer stands; the floor follows the withdrawal).
     */
    synchronized void agreed(long version) {
      if (version >= 0 && !isWithdrawn(version)) {
        floor = Math.max(floor, version);
      }
    }

    synchronized long floor() {
      return floor;
    }

    /** {L, W}: the withdrawn range; {-1, -1} for none. */
    synchronized long[] withdrawnRange() {
      return new long[] {withdrawnAfter, withdrawn};
    }

    synchronized long newest(int shard) {
      return newest[shard];
    }
  }
}
