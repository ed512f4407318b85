package dev.roost;

import io.grpc.Status;

/**
 * A server refused a key of another shard (FAILED_PRECONDITION "stale cluster layout: shard I
 * (TARGET): key J belongs to shard K of N"), or serves another shard than the layout says: the
 * layout's shards are listed in another order or count than the table's. Reload the layout; the
 * same one cannot succeed.
 */
public final class StaleLayoutException extends RoostException {
  private static final long serialVersionUID = 1L;

  public StaleLayoutException(String message, int shard) {
    super(Status.Code.FAILED_PRECONDITION, message, shard, null);
  }
}
