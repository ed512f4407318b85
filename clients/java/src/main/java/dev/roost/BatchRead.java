package dev.roost;

import io.grpc.Status;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.stream.IntStream;

/**
 * The driver of the consistency algorithm ({@link VersionConsensus}) over the parts of one batch
 * (the C++ client's client/read_one_version.cc): sends every part (pinned to the caller's version
 * when it names one: then once, and no more), then re-sends as the consensus says until the parts
 * agree. A pinned part refused with FAILED_PRECONDITION (not a stale layout) moves the batch
 * forward after a backoff; past the deadline the batch fails ABORTED naming the versions seen. Any
 * other failure is the batch's. With partial answers, a part whose shard could not answer ({@link
 * Shards.Part#failure}) is dropped from the consensus: never compared nor re-sent, its keys given
 * its error by the caller. With monotonic reads (a table state given, and no caller's version), the
 * consensus settles on the state's target, and the agreed version raises the floor.
 *
 * <p>Runs on gRPC's and the client's timer threads, one step at a time: the future completes with
 * the version the batch was read from.
 */
final class BatchRead {
  private final Shards shards;
  private final String table;
  private final List<Shards.Part> parts;
  private final String callerPin;
  private final Shards.Policy policy;
  private final VersionConsensus consensus;
  private final CompletableFuture<String> result = new CompletableFuture<>();
  private long backoff;

  private BatchRead(
      Shards shards,
      String table,
      List<Shards.Part> parts,
      String callerPin,
      Shards.Policy policy,
      MonotonicReads.Table monotonic) {
    this.shards = shards;
    this.table = table;
    this.parts = parts;
    this.callerPin = callerPin;
    this.policy = policy;
    this.consensus =
        VersionConsensus.forCall(
            parts.stream().mapToInt(p -> p.shard).toArray(), monotonic, callerPin);
    this.backoff = policy.backoffNanos();
  }

  /**
   * Reads {@code parts} from one version: the future's value is that version. {@code monotonic}:
   * the table's state of monotonic reads, null when off.
   */
  static CompletableFuture<String> run(
      Shards shards,
      String table,
      List<Shards.Part> parts,
      String callerPin,
      Shards.Policy policy,
      MonotonicReads.Table monotonic) {
    BatchRead read = new BatchRead(shards, table, parts, callerPin, policy, monotonic);
    read.send(IntStream.range(0, parts.size()).toArray(), callerPin == null ? "" : callerPin)
        .whenComplete(
            (failure, thrown) -> {
              if (read.failed(failure, thrown)) {
                return;
              }
              if (callerPin != null) {
                read.result.complete(read.consensus.version());
              } else {
                read.loop();
              }
            });
    return read.result;
  }

  private CompletableFuture<RoostException> send(int[] which, String pin) {
    for (int i : which) {
      Shards.Part part = parts.get(i);
      part.request = part.request.toBuilder().setVersion(pin).build();
    }
    return shards
        .run(parts, which, policy)
        .thenApply(
            failure -> {
              // Parts that answered before another failed hold their new
              // answer: the consensus must know, or it could keep them at
              // another version than the batch settles on.
              synchronized (this) {
                for (int i : which) {
                  if (parts.get(i).answered) {
                    consensus.answered(
                        i,
                        parts.get(i).response.getVersion(),
                        parts.get(i).response.getWithdrawnThrough());
                  } else if (parts.get(i).failure != null) {
                    consensus.dropped(i); // partial answers: its shard is left out
                  }
                }
              }
              return failure;
            });
  }

  private boolean failed(RoostException failure, Throwable thrown) {
    if (thrown != null) {
      result.completeExceptionally(thrown);
      return true;
    }
    if (failure != null) {
      result.completeExceptionally(failure);
      return true;
    }
    return false;
  }

  private RoostException aborted(String why) {
    return new RoostException(
        Status.Code.ABORTED,
        "table "
            + table
            + ": no version answered by every shard before the deadline; versions seen: "
            + consensus.seen()
            + why);
  }

  // A pinned part refused because its server no longer (or not yet) has the
  // version: FAILED_PRECONDITION that is not a stale layout's.
  private static boolean pinRefused(RoostException e) {
    return e.status() == Status.Code.FAILED_PRECONDITION && !(e instanceof StaleLayoutException);
  }

  private void loop() {
    VersionConsensus.Round round;
    synchronized (this) {
      if (consensus.agreed()) {
        consensus.settled();
        result.complete(consensus.version());
        return;
      }
      // A server that answers another version than the one asked for
      // would keep this loop going: the deadline ends it too.
      if (System.nanoTime() - policy.deadlineNanos() >= 0) {
        result.completeExceptionally(aborted(""));
        return;
      }
      round = consensus.next();
    }
    send(round.parts(), round.pin())
        .whenComplete(
            (failure, thrown) -> {
              if (thrown != null) {
                result.completeExceptionally(thrown);
                return;
              }
              if (failure == null) {
                loop();
                return;
              }
              if (!pinRefused(failure)) {
                result.completeExceptionally(failure);
                return;
              }
              long wait;
              synchronized (this) {
                consensus.pinRefused();
                wait = backoff;
                backoff = Math.min(backoff * 2, policy.maxBackoffNanos());
              }
              if (System.nanoTime() + wait - policy.deadlineNanos() >= 0) {
                result.completeExceptionally(aborted("; last refusal: " + failure.getMessage()));
                return;
              }
              try {
                shards.timers().schedule(this::loop, wait, TimeUnit.NANOSECONDS);
              } catch (RejectedExecutionException e) {
                result.completeExceptionally(
                    new RoostException(Status.Code.CANCELLED, "the client was closed", -1, e));
              }
            });
  }
}
