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
 * <p>Not thread-safe: one per batch, used under its lock.
 */
final class VersionConsensus {
  /** One round of re-sends: these parts, pinned to {@code pin}. */
  record Round(String pin, int[] parts) {}

  private final String[] answers;
  private final List<String> seen = new ArrayList<>();
  private boolean forward;

  VersionConsensus(int parts) {
    answers = new String[parts];
    Arrays.fill(answers, null);
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

  /** Whether every part has an answer and every one that named a version named the same. */
  boolean agreed() {
    for (String a : answers) {
      if (a == null) {
        return false;
      }
    }
    String oldest = extreme(false);
    for (String a : answers) {
      if (!a.isEmpty() && !sameVersion(a, oldest)) {
        return false;
      }
    }
    return true;
  }

  /** The version the batch was read from, once agreed: "" when no part named one. */
  String version() {
    return extreme(false);
  }

  /**
   * What to send next (only when !agreed()): before any refusal, the parts newer than the oldest,
   * pinned to the oldest; after one, the parts older than the newest, pinned to the newest; and
   * parts with no answer yet.
   */
  Round next() {
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
