package dev.roost;

import java.util.List;

/**
 * A MultiGet's answer: one result per key, in request order (duplicates included), and the one
 * table version every shard answered from ("v000007"; "" for an empty batch or servers too old to
 * say). With partial answers, every shard that answered: the keys of a shard that could not answer
 * carry its error ({@link LookupResult#error()}).
 */
public record MultiGetResult(List<LookupResult> results, String version) {
  /** How many keys' shards could not answer (with partial answers; else 0). */
  public int failedKeys() {
    int n = 0;
    for (LookupResult r : results) {
      if (r.error() != null) {
        ++n;
      }
    }
    return n;
  }
}
