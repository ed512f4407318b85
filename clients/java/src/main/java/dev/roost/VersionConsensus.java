package dev.roost;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;

/**
 * The client consistency algorithm, as state: which version each part of a batch answered, and what
 * to send next so that the whole batch is read from one table version. The same algorithm as the
 * C++ client's (client/version_consensus.h) and the Python one's:
 *
 * <ol>
 *   <li>Send every part with no version.
 *   <li>If every part names the same version, done.
 *   <li>Otherwise re-send the parts that answered a newer version, pinned to the oldest one
 *       answered (servers keep the version they replaced for --version-grace).
 *   <li>If a pinned part is refused (FAILED_PRECONDITION: that version is gone there), re-send
 *       instead the parts that answered older, pinned to the newest, after a short backoff, until
 *       the caller's deadline; then the batch fails ABORTED naming the versions seen.
 * </ol>
 *
 * A part that answered an empty version (a server too old to say) is accepted as it is: never
 * compared nor re-sent.
 *
 * <p>With monotonic reads (a {@link MonotonicReads.Table} given), every answer also goes to the
 * table's state, and the batch settles on its target instead of the oldest version answered: R =
 * max(floor, the oldest newest[s] over the shards heard from), the parts that did not answer R
 * re-sent pinned to R; after a refusal, the newest version the parts answered that is not withdrawn
 * (never below R). Once agreed, {@link #settled} raises the floor. A batch whose caller names the
 * version has no state: it neither reads nor changes it.
 *
 * <p>Not thread-safe: one per batch, used under its lock. {@link #next} and {@link #version} use
 * the target the last {@link #agreed} computed (the table's state moves with other calls).
 */
final class VersionConsensus {
  /** One round of re-sends: these parts, pinned to {@code pin}. */
  record Round(String pin, int[] parts) {}

  private final String[] answers;
  private final List<String> seen = new ArrayList<>();
  private boolean forward;
  // Monotonic reads: the table's state, and each part's shard; null: off.
  private final MonotonicReads.Table state;
  private final int[] shards;
  private long target = -1; // what the last agreed() computed; -1: the oldest answered

  VersionConsensus(int parts) {
    this(parts, null, null);
  }

  /**
   * A batch of {@code shards.length} parts, part i going to shard {@code shards[i]}, with monotonic
   * reads over {@code state}; a null state: without.
   */
  VersionConsensus(int[] shards, MonotonicReads.Table state) {
    this(shards.length, state, shards);
  }

  /**
   * The consensus of one call whose part i goes to shard {@code shards[i]}: with monotonic reads
   * over {@code state} (null: off) unless the caller names the version ({@code callerPin} not
   * null), as such a call neither reads nor changes the state.
   */
  static VersionConsensus forCall(int[] shards, MonotonicReads.Table state, String callerPin) {
    return state == null || callerPin != null
        ? new VersionConsensus(shards.length)
        : new VersionConsensus(shards, state);
  }

  private VersionConsensus(int parts, MonotonicReads.Table state, int[] shards) {
    answers = new String[parts];
    Arrays.fill(answers, null);
    this.state = state;
    this.shards = shards;
  }

  /** The name of version {@code n} as the servers write it: "v000007". */
  static String versionName(long n) {
    return String.format("v%06d", n);
  }

  /**
   * The number of a version as the server names it: "v000007" and "7" are both 7; -1 for "" and
   * anything else.
   */
  static long versionNumber(String version) {
    if (version == null) {
      return -1;
    }
    String digits = version.startsWith("v") ? version.substring(1) : version;
    if (digits.isEmpty() || digits.length() > 18) {
      return -1;
    }
    long n = 0;
    for (int i = 0; i < digits.length(); ++i) {
      char c = digits.charAt(i);
      if (c < '0' || c > '9') {
        return -1;
      }
      n = n * 10 + (c - '0');
    }
    return n;
  }

  /** Whether {@code a} and {@code b} name the same version ("v000007" and "7" do). */
  static boolean sameVersion(String a, String b) {
    if (a.equals(b)) {
      return true;
    }
    long x = versionNumber(a);
    return x >= 0 && x == versionNumber(b);
  }

  // Orders versions by number; one that is not a number (no roost server
  // sends one) sorts before every number, by its text.
  private static final Comparator<String> OLDER_FIRST =
      (a, b) -> {
        long x = versionNumber(a);
        long y = versionNumber(b);
        if ((x >= 0) != (y >= 0)) {
          return x >= 0 ? 1 : -1;
        }
        if (x >= 0) {
          return Long.compare(x, y);
        }
        return a.compareTo(b);
      };

  /** Part {@code part} answered from {@code version} ("" from a server too old to say). */
  void answered(int part, String version) {
    answered(part, version, "");
  }

  /**
   * Part {@code part} answered from {@code version}, naming {@code withdrawnThrough} (the newest
   * version withdrawn that this one stands in for; "" for none): with monotonic reads, the table's
   * state learns both.
   */
  void answered(int part, String version, String withdrawnThrough) {
    if (state != null) {
      state.answered(shards[part], version, withdrawnThrough);
    }
    if (!version.isEmpty() && seen.stream().noneMatch(v -> sameVersion(v, version))) {
      seen.add(version);
    }
    answers[part] = version;
  }

  /**
   * Part {@code part} has no usable answer any more (its Scan stream was re-opened, then failed):
   * it is sent again in every round until it answers.
   */
  void lost(int part) {
    answers[part] = null;
  }

  /**
   * Part {@code part} is left out of the batch (its shard could not answer, and the caller takes
   * partial answers): never compared nor re-sent, as an answer that names no version.
   */
  void dropped(int part) {
    answers[part] = "";
  }

  /**
   * Whether every part has an answer and every one that named a version named the same: with
   * monotonic reads, the target.
   */
  boolean agreed() {
    target = monotonicTarget();
    for (String a : answers) {
      if (a == null) {
        return false;
      }
    }
    if (target >= 0) {
      for (String a : answers) {
        long n = versionNumber(a);
        if (n >= 0 && n != target) {
          return false;
        }
      }
      return true;
    }
    String oldest = extreme(false);
    for (String a : answers) {
      if (!a.isEmpty() && !sameVersion(a, oldest)) {
        return false;
      }
    }
    return true;
  }

  // With monotonic reads, what the batch settles on now: R, or after a
  // refusal the newest version answered that is not withdrawn (never below
  // R). -1: off, or nothing known yet (the oldest answered, as without).
  private long monotonicTarget() {
    if (state == null) {
      return -1;
    }
    long r = state.target();
    if (forward) {
      for (String a : answers) {
        long n = versionNumber(a);
        if (n > r && !state.isWithdrawn(n)) {
          r = n;
        }
      }
    }
    return r;
  }

  /**
   * The batch agreed (agreed() was true) and its answer is taken: with monotonic reads, the floor
   * becomes at least its version.
   */
  void settled() {
    if (state != null) {
      state.agreed(versionNumber(version()));
    }
  }

  /** The version the batch was read from, once agreed: "" when no part named one. */
  String version() {
    if (target >= 0) {
      for (String a : answers) {
        if (a != null && versionNumber(a) == target) {
          return a;
        }
      }
      return "";
    }
    return extreme(false);
  }

  /**
   * What to send next (only when !agreed()): before any refusal, the parts newer than the oldest,
   * pinned to the oldest; after one, the parts older than the newest, pinned to the newest; and
   * parts with no answer yet. With monotonic reads, every part that did not answer the target,
   * pinned to it.
   */
  Round next() {
    if (target >= 0) {
      String pin = versionName(target);
      for (String a : answers) {
        if (versionNumber(a) == target) {
          pin = a; // as the servers named it
          break;
        }
      }
      int[] parts =
          java.util.stream.IntStream.range(0, answers.length)
              .filter(
                  i ->
                      answers[i] == null
                          || (versionNumber(answers[i]) >= 0
                              && versionNumber(answers[i]) != target))
              .toArray();
      return new Round(pin, parts);
    }
    String pin = extreme(forward);
    int[] parts =
        java.util.stream.IntStream.range(0, answers.length)
            .filter(
                i -> answers[i] == null || (!answers[i].isEmpty() && !sameVersion(answers[i], pin)))
            .toArray();
    return new Round(pin, parts);
  }

  /** A part pinned by next() was refused: from now on the batch moves forward. */
  void pinRefused() {
    forward = true;
  }

  /** Every version answered so far, oldest first: "v000001, v000002". */
  String seen() {
    List<String> sorted = new ArrayList<>(seen);
    sorted.sort(OLDER_FIRST);
    return String.join(", ", sorted);
  }

  private String extreme(boolean newest) {
    String best = "";
    for (String v : answers) {
      if (v == null || v.isEmpty()) {
        continue;
      }
      if (best.isEmpty()
          || (newest ? OLDER_FIRST.compare(best, v) < 0 : OLDER_FIRST.compare(v, best) < 0)) {
        best = v;
      }
    }
    return best;
  }
}
