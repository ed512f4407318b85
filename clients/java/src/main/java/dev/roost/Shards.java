package dev.roost;

import dev.roost.v1.LookupGrpc;
import dev.roost.v1.MultiGetRequest;
import dev.roost.v1.MultiGetResponse;
import io.grpc.ChannelCredentials;
import io.grpc.ClientCall;
import io.grpc.Deadline;
import io.grpc.Grpc;
import io.grpc.InsecureChannelCredentials;
import io.grpc.ManagedChannel;
import io.grpc.ManagedChannelBuilder;
import io.grpc.Metadata;
import io.grpc.Status;
import io.grpc.TlsChannelCredentials;
import io.grpc.stub.ClientCalls;
import io.grpc.stub.MetadataUtils;
import io.grpc.stub.StreamObserver;
import java.io.File;
import java.io.IOException;
import java.nio.channels.ClosedChannelException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The replicas of each shard and the parallel MultiGet calls the client makes to them (the C++
 * client's client/shard_calls.h): the parts of one batch sent at once, each retried on another
 * replica when it fails with a retryable status, optionally hedged, all within one deadline.
 *
 * <p>Replicas: one channel per target listed in the layout; a part's first call goes to the next
 * one in round-robin order (a counter per shard), so that a retry or a hedge goes to a different
 * replica than the call that failed or lags. A "dns:///NAME:PORT" target is one channel with gRPC's
 * round_robin policy over every address the name resolves to. Channels start connecting when the
 * client is made, so that its first calls do not spend their deadline on it.
 *
 * <p>Retryable: UNAVAILABLE (the replica is down, unreachable, shutting down, or serves no version
 * of the table yet) and RESOURCE_EXHAUSTED (its --max-in-flight is full). Each retry goes to the
 * next replica; after every replica of the shard failed once, the next round waits a backoff
 * (doubling up to the maximum). Anything else is final. A part that the deadline cuts short after a
 * retryable failure ends with that failure ("... (last of 3 attempts; no replica answered before
 * the deadline)").
 *
 * <p>Thread-safe: shared by every call of a client.
 */
final class Shards implements AutoCloseable {
  /** How the calls of one client call are made. */
  record Policy(
      long deadlineNanos, // System.nanoTime() by which every attempt ends
      Deadline deadline, // the same, for gRPC
      long hedgeNanos, // 0: no hedging
      long backoffNanos,
      long maxBackoffNanos,
      // Partial answers: a part whose shard cannot answer ends with its
      // Part.failure and the others go on (see run).
      boolean partial,
      ClientMetrics metrics) {} // null: none; counts hedges and retries

  record Replica(String target, ManagedChannel channel) {}

  /** One shard's part of a batch: the keys of the batch that belong to it. */
  static final class Part {
    final int shard;
    final int[] indices; // indices[j]: the batch position of request key j
    MultiGetRequest request;
    MultiGetResponse response; // its last answer
    boolean answered; // the last run got it a new answer
    // With Policy.partial: why its shard could not answer in the last run
    // that sent it; null otherwise.
    RoostException failure;

    Part(int shard, int[] indices, MultiGetRequest request) {
      this.shard = shard;
      this.indices = indices;
      this.request = request;
    }
  }

  private final List<List<Replica>> shards;
  private final AtomicLong[] next;
  private final ScheduledExecutorService timers;
  // Set by close(): no call is retried or hedged any more, so that every
  // call in flight ends (CANCELLED or UNAVAILABLE) instead of waiting for
  // a timer that will never run.
  private volatile boolean closed;

  private Shards(List<List<Replica>> shards, ScheduledExecutorService timers) {
    this.shards = shards;
    this.next = new AtomicLong[shards.size()];
    for (int i = 0; i < next.length; ++i) {
      next[i] = new AtomicLong();
    }
    this.timers = timers;
  }

  /**
   * Channels to every target of {@code layout}.
   *
   * @throws LayoutException naming a TLS file that cannot be read
   */
  static Shards connect(Layout layout, String token, ScheduledExecutorService timers) {
    ChannelCredentials credentials = credentials(layout);
    List<List<Replica>> shards = new ArrayList<>();
    for (List<String> targets : layout.shards()) {
      List<Replica> replicas = new ArrayList<>();
      for (String target : targets) {
        ManagedChannel channel = channel(target, credentials, layout, token);
        channel.getState(true); // connect now, not on the first call
        replicas.add(new Replica(target, channel));
      }
      shards.add(List.copyOf(replicas));
    }
    return new Shards(List.copyOf(shards), timers);
  }

  static ChannelCredentials credentials(Layout layout) {
    if (layout.tls().isEmpty()) {
      return InsecureChannelCredentials.create();
    }
    Layout.Tls tls = layout.tls().get();
    TlsChannelCredentials.Builder b = TlsChannelCredentials.newBuilder();
    String file = tls.ca();
    try {
      if (tls.ca() != null) {
        b.trustManager(new File(tls.ca()));
      }
      if (tls.cert() != null) {
        file = tls.cert() + " / " + tls.key();
        b.keyManager(new File(tls.cert()), new File(tls.key()));
      }
    } catch (IOException | RuntimeException e) {
      throw new LayoutException("tls: cannot read " + file + ": " + e.getMessage(), e);
    }
    return b.build();
  }

  static ManagedChannel channel(
      String target, ChannelCredentials credentials, Layout layout, String token) {
    ManagedChannelBuilder<?> b =
        Grpc.newChannelBuilder(target, credentials).maxInboundMessageSize(Integer.MAX_VALUE);
    if (target.startsWith("dns:")) {
      b.defaultLoadBalancingPolicy("round_robin");
    }
    layout.tls().map(Layout.Tls::serverName).ifPresent(b::overrideAuthority);
    if (token != null) {
      Metadata headers = new Metadata();
      headers.put(
          Metadata.Key.of("authorization", Metadata.ASCII_STRING_MARSHALLER), "Bearer " + token);
      b.intercept(MetadataUtils.newAttachHeadersInterceptor(headers));
    }
    return b.build();
  }

  int size() {
    return shards.size();
  }

  List<Replica> replicas(int shard) {
    return shards.get(shard);
  }

  /** The replica a call to {@code shard} goes to first: round-robin. */
  int pickReplica(int shard) {
    return (int) Long.remainderUnsigned(next[shard].getAndIncrement(), shards.get(shard).size());
  }

  ScheduledExecutorService timers() {
    return timers;
  }

  /** Whether a call that failed with {@code code} is tried again on another replica. */
  static boolean retryable(Status.Code code) {
    return code == Status.Code.UNAVAILABLE || code == Status.Code.RESOURCE_EXHAUSTED;
  }

  /**
   * Whether a call that failed with {@code status} is tried again on another replica: as {@link
   * #retryable(Status.Code)} says, and also grpc-java's "UNKNOWN: channel closed" (its cause a
   * ClosedChannelException), which is how it reports a server that went away while the call was
   * being written (grpc/grpc-java#7376): the replica is gone, as with UNAVAILABLE.
   */
  static boolean retryable(Status status) {
    return retryable(status.getCode())
        || (status.getCode() == Status.Code.UNKNOWN
            && status.getCause() instanceof ClosedChannelException);
  }

  /** What a status says: its description, and the cause's when gRPC gave one. */
  static String describe(Status status) {
    String text = status.getDescription() == null ? "" : status.getDescription();
    if (status.getCause() != null && status.getCause().getMessage() != null) {
      text += (text.isEmpty() ? "" : ": ") + status.getCause().getMessage();
    }
    return text;
  }

  /**
   * {@code status} as a RoostException, its message prefixed with the shard and the replica that
   * gave it; a stale layout (FAILED_PRECONDITION "... belongs to shard ...") is a
   * StaleLayoutException that says so.
   */
  static RoostException shardError(int shard, String target, Status status, String suffix) {
    String message = describe(status) + suffix;
    if (status.getCode() == Status.Code.FAILED_PRECONDITION
        && message.contains("belongs to shard")) {
      return new StaleLayoutException(
          "stale cluster layout: shard " + shard + " (" + target + "): " + message, shard);
    }
    return new RoostException(
        status.getCode(), "shard " + shard + " (" + target + "): " + message, shard, null);
  }

  /**
   * Sends parts.get(i) for each i in {@code which} at once, each to a replica of its shard,
   * retrying and hedging as {@code policy} says. The future completes with null when every one has
   * answered (its response replaced, {@code answered} set), or with the error of the first that
   * failed for good: then the others are cancelled, keeping the response they had.
   *
   * <p>With {@code policy.partial()}, a part whose shard could not answer (its retries ended
   * UNAVAILABLE or RESOURCE_EXHAUSTED at the deadline, or the deadline itself) ends with its {@code
   * failure} instead, and the others go on; any other failure still ends the run.
   */
  CompletableFuture<RoostException> run(List<Part> parts, int[] which, Policy policy) {
    return new Round(parts, which, policy).start();
  }

  boolean closed() {
    return closed;
  }

  @Override
  public void close() {
    closed = true;
    for (List<Replica> replicas : shards) {
      for (Replica r : replicas) {
        r.channel().shutdownNow();
      }
    }
    for (List<Replica> replicas : shards) {
      for (Replica r : replicas) {
        try {
          r.channel().awaitTermination(5, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
          return;
        }
      }
    }
  }

  /** One round of a batch's calls; every field is guarded by {@code this}. */
  private final class Round {
    private final List<Part> parts;
    private final int[] which;
    private final Policy policy;
    private final PartState[] state;
    private final CompletableFuture<RoostException> done = new CompletableFuture<>();
    private int pending;
    private boolean finished;

    private final class PartState {
      int firstReplica;
      int tries; // calls started; the next goes to first + tries
      int inFlight;
      boolean done;
      boolean hedged;
      long lastStart;
      ScheduledFuture<?> timer;
      final List<ClientCall<MultiGetRequest, MultiGetResponse>> calls = new ArrayList<>();
      // The last retryable failure and its replica: what the part ends with
      // when the deadline cuts its retries short.
      Status lastFailure;
      int lastFailureReplica;
    }

    Round(List<Part> parts, int[] which, Policy policy) {
      this.parts = parts;
      this.which = which;
      this.policy = policy;
      this.state = new PartState[which.length];
      this.pending = which.length;
    }

    synchronized CompletableFuture<RoostException> start() {
      for (int i : which) {
        parts.get(i).answered = false;
        parts.get(i).failure = null;
      }
      for (int i = 0; i < which.length; ++i) {
        state[i] = new PartState();
      }
      if (pending == 0) {
        done.complete(null);
      }
      for (int i = 0; i < which.length && !finished; ++i) {
        attempt(i);
      }
      return done;
    }

    // Starts one call of part i to its next replica.
    private void attempt(int i) {
      Part part = parts.get(which[i]);
      List<Replica> replicas = shards.get(part.shard);
      PartState s = state[i];
      if (s.tries == 0) {
        s.firstReplica = pickReplica(part.shard);
      }
      int replica = (s.firstReplica + s.tries) % replicas.size();
      ++s.tries;
      ++s.inFlight;
      long started = System.nanoTime();
      s.lastStart = started;
      ClientCall<MultiGetRequest, MultiGetResponse> call =
          replicas
              .get(replica)
              .channel()
              .newCall(
                  LookupGrpc.getMultiGetMethod(),
                  io.grpc.CallOptions.DEFAULT.withDeadline(policy.deadline()));
      s.calls.add(call);
      ClientCalls.asyncUnaryCall(
          call,
          part.request,
          new StreamObserver<>() {
            private MultiGetResponse response;

            @Override
            public void onNext(MultiGetResponse value) {
              response = value;
            }

            @Override
            public void onError(Throwable t) {
              finish(i, replica, Status.fromThrowable(t), null);
            }

            @Override
            public void onCompleted() {
              finish(i, replica, Status.OK, response);
            }
          });
      if (policy.hedgeNanos() > 0 && !s.hedged && replicas.size() > 1 && !closed) {
        try {
          timers.schedule(() -> hedge(i, started), policy.hedgeNanos(), TimeUnit.NANOSECONDS);
        } catch (RejectedExecutionException e) {
          // The client closed meanwhile: no hedge.
        }
      }
    }

    private synchronized void hedge(int i, long started) {
      PartState s = state[i];
      if (finished
          || s.done
          || s.hedged
          || s.inFlight != 1
          || s.lastStart != started
          || s.timer != null) {
        return;
      }
      s.hedged = true;
      if (policy.metrics() != null) {
        policy.metrics().hedge();
      }
      attempt(i);
    }

    // One finished call: done, retried, left to its hedge, or the end.
    private synchronized void finish(int i, int replica, Status status, MultiGetResponse response) {
      PartState s = state[i];
      --s.inFlight;
      if (finished || s.done) {
        return; // lost a race, or cancelled
      }
      Part part = parts.get(which[i]);
      List<Replica> replicas = shards.get(part.shard);
      if (status.isOk()) {
        part.response = response;
        part.answered = true;
        s.done = true;
        for (ClientCall<?, ?> c : s.calls) {
          c.cancel("another replica answered", null);
        }
        if (--pending == 0) {
          finished = true;
          done.complete(null);
        }
        return;
      }
      if (s.inFlight > 0) {
        return; // its hedge may still answer
      }
      int n = replicas.size();
      long now = System.nanoTime();
      boolean retryable = !closed && retryable(status);
      if (retryable) {
        s.lastFailure = status;
        s.lastFailureReplica = replica;
      }
      if (retryable && now - policy.deadlineNanos() < 0) {
        if (s.tries % n != 0) {
          if (policy.metrics() != null) {
            policy.metrics().retry();
          }
          attempt(i); // the next replica, at once
          return;
        }
        long wait = policy.backoffNanos();
        for (int round = 1; round < s.tries / n && wait < policy.maxBackoffNanos(); ++round) {
          wait *= 2;
        }
        wait = Math.min(wait, policy.maxBackoffNanos());
        if (now + wait - policy.deadlineNanos() < 0) {
          try {
            s.timer = timers.schedule(() -> retry(i), wait, TimeUnit.NANOSECONDS);
            return;
          } catch (RejectedExecutionException e) {
            // The client closed meanwhile: the part ends with its failure.
          }
        }
      }
      boolean cutShort =
          retryable || (status.getCode() == Status.Code.DEADLINE_EXCEEDED && s.lastFailure != null);
      RoostException failure =
          cutShort
              ? shardError(
                  part.shard,
                  replicas.get(s.lastFailureReplica).target(),
                  s.lastFailure,
                  " (last of "
                      + s.tries
                      + (s.tries == 1 ? " attempt" : " attempts")
                      + "; no replica answered before the deadline)")
              : shardError(part.shard, replicas.get(replica).target(), status, "");
      if (policy.partial() && (cutShort || status.getCode() == Status.Code.DEADLINE_EXCEEDED)) {
        // Its shard could not answer: this part ends, the others go on.
        part.failure = failure;
        s.done = true;
        if (s.timer != null) {
          s.timer.cancel(false);
        }
        if (--pending == 0) {
          finished = true;
          done.complete(null);
        }
        return;
      }
      finished = true;
      for (PartState other : state) {
        if (other.timer != null) {
          other.timer.cancel(false);
        }
        for (ClientCall<?, ?> c : other.calls) {
          c.cancel("another part of the batch failed", null);
        }
      }
      done.complete(failure);
    }

    private synchronized void retry(int i) {
      PartState s = state[i];
      s.timer = null;
      if (!finished && !s.done) {
        if (policy.metrics() != null) {
          policy.metrics().retry();
        }
        attempt(i);
      }
    }
  }
}
