package dev.roost;

import io.grpc.Status;

/**
 * A cluster layout (a file or a list of shards) or a TLS file it names was refused before any call
 * was made (INVALID_ARGUMENT); the message names the file and the member that is wrong.
 */
public final class LayoutException extends RoostException {
  private static final long serialVersionUID = 1L;

  public LayoutException(String message) {
    super(Status.Code.INVALID_ARGUMENT, message);
  }

  public LayoutException(String message, Throwable cause) {
    super(Status.Code.INVALID_ARGUMENT, message, -1, cause);
  }
}
