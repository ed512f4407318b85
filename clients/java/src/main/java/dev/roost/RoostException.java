package dev.roost;

import io.grpc.Status;

/**
 * A call of the client failed. {@link #code()} is the name of the gRPC status code that ended it
 * ("UNAVAILABLE", "ABORTED", "FAILED_PRECONDITION", ...), {@link #shard()} the shard whose part
 * failed (-1 when not one shard's); the message names the shard, the replica and what the server
 * said, so that a log line alone tells what went wrong.
 *
 * <p>Subclasses: {@link StaleLayoutException} (the layout does not match the table's shards),
 * {@link LayoutException} (a layout refused before any call).
 *
 * <pre>{@code
 * try {
 *   client.get("users", key);
 * } catch (StaleLayoutException e) {
 *   reloadLayout();
 * } catch (RoostException e) {
 *   log.warn("lookup failed: {} ({})", e.getMessage(), e.code());
 * }
 * }</pre>
 */
public class RoostException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  private final Status.Code status;
  private final int shard;

  public RoostException(Status.Code status, String message) {
    this(status, message, -1, null);
  }

  public RoostException(Status.Code status, String message, int shard, Throwable cause) {
    super(message, cause);
    this.status = status;
    this.shard = shard;
  }

  /** The gRPC status code's name, e.g. "UNAVAILABLE". */
  public String code() {
    return status.name();
  }

  /** The gRPC status code. */
  public Status.Code status() {
    return status;
  }

  /** The shard whose part failed, or -1. */
  public int shard() {
    return shard;
  }
}
