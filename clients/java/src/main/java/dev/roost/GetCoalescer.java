package dev.roost;

import com.google.protobuf.ByteString;
import dev.roost.v1.MultiGetRequest;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Function;
import java.util.function.Supplier;

/**
 * Single-key Gets from many concurrent callers, sent to their shard as MultiGets (the C++ client's
 * client/get_coalescer.h). A gRPC call costs the server about as much as looking a thousand keys
 * up, so many concurrent Gets are bounded by the per-call cost. Per shard and table, a Get is sent
 * at once while fewer than {@code maxInFlight} MultiGets are on the wire; otherwise it waits in a
 * queue, and when one of those answers, everything queued (up to {@code maxBatch} keys) goes out as
 * the next one. No timer: under light load a Get is a MultiGet of one key sent at once; under load
 * it waits at most one round trip, in a batch as large as the load makes it. Each MultiGet has the
 * retries and hedging of any part ({@link Shards}), its deadline counted from its first Get's
 * arrival. The version a Get names is the one its shard answered, not agreed over shards (one key
 * is on one shard). With monotonic reads each Get is a call of one part: the MultiGet goes through
 * the same consensus ({@link BatchRead}), re-sent pinned to the table's target when its shard
 * answered another version, and its answer raises the floor.
 *
 * <p>Thread-safe.
 */
final class GetCoalescer {
  private final Shards shards;
  private final Function<String, MonotonicReads.Table> monotonic; // a table's state, or null
  private final int maxInFlight;
  private final int maxBatch;
  private final Supplier<Shards.Policy> policy;
  private final Map<Queue.Key, Queue> queues = new HashMap<>();
  // Counted for tests and for users who want to see the effect.
  final AtomicLong batchesSent = new AtomicLong();
  final AtomicLong keysSent = new AtomicLong();

  private record Waiting(byte[] key, CompletableFuture<GetResult> done, Shards.Policy policy) {}

  private static final class Queue {
    record Key(int shard, String table) {}

    final ArrayDeque<Waiting> waiting = new ArrayDeque<>();
    int inFlight;
  }

  GetCoalescer(
      Shards shards,
      Function<String, MonotonicReads.Table> monotonic,
      int maxInFlight,
      int maxBatch,
      Supplier<Shards.Policy> policy) {
    this.shards = shards;
    this.monotonic = monotonic;
    this.maxInFlight = maxInFlight;
    this.maxBatch = maxBatch;
    this.policy = policy;
  }

  CompletableFuture<GetResult> get(String table, byte[] key, int shard) {
    CompletableFuture<GetResult> done = new CompletableFuture<>();
    Waiting w = new Waiting(key, done, policy.get());
    List<Waiting> batch = null;
    Queue queue;
    synchronized (this) {
      queue = queues.computeIfAbsent(new Queue.Key(shard, table), k -> new Queue());
      if (queue.inFlight < maxInFlight) {
        ++queue.inFlight;
        batch = List.of(w);
      } else {
        queue.waiting.add(w);
      }
    }
    if (batch != null) {
      send(table, shard, queue, batch);
    }
    return done;
  }

  private void send(String table, int shard, Queue queue, List<Waiting> batch) {
    batchesSent.incrementAndGet();
    keysSent.addAndGet(batch.size());
    MultiGetRequest.Builder request = MultiGetRequest.newBuilder().setTable(table).setPacked(true);
    for (Waiting w : batch) {
      request.addKeys(ByteString.copyFrom(w.key()));
    }
    Shards.Part part = new Shards.Part(shard, null, request.build());
    // The deadline of the batch's first Get. A batch of one part: without
    // monotonic reads, its first answer is agreed at once.
    BatchRead.run(shards, table, List.of(part), null, batch.get(0).policy(), monotonic.apply(table))
        .whenComplete(
            (version, thrown) -> {
              try {
                if (thrown != null || part.failure != null) {
                  Throwable error = thrown != null ? thrown : part.failure;
                  for (Waiting w : batch) {
                    w.done().completeExceptionally(error);
                  }
                } else {
                  answer(batch, part);
                }
              } finally {
                next(table, shard, queue);
              }
            });
  }

  private static void answer(List<Waiting> batch, Shards.Part part) {
    String version = part.response.getVersion();
    GetResult[] results = new GetResult[batch.size()];
    try {
      MultiGetAnswer.read(
          part.response,
          batch.size(),
          (j, found, value) ->
              results[j] =
                  new GetResult(found, found ? value.toByteArray() : new byte[0], version));
    } catch (RoostException e) {
      RoostException named =
          new RoostException(
              e.status(), "shard " + part.shard + ": " + e.getMessage(), part.shard, null);
      for (Waiting w : batch) {
        w.done().completeExceptionally(named);
      }
      return;
    }
    for (int j = 0; j < batch.size(); ++j) {
      batch.get(j).done().complete(results[j]);
    }
  }

  // A MultiGet of `queue` answered: what waits goes out as the next one.
  private void next(String table, int shard, Queue queue) {
    List<Waiting> batch = new ArrayList<>();
    synchronized (this) {
      while (!queue.waiting.isEmpty() && batch.size() < maxBatch) {
        batch.add(queue.waiting.poll());
      }
      if (batch.isEmpty()) {
        --queue.inFlight;
        return;
      }
    }
    send(table, shard, queue, batch);
  }
}
