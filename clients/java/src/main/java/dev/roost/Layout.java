package dev.roost;

import com.google.gson.JsonArray;
import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import com.google.gson.JsonParseException;
import com.google.gson.JsonParser;
import com.google.gson.Strictness;
import com.google.gson.stream.JsonReader;
import com.google.gson.stream.JsonToken;
import java.io.IOException;
import java.io.StringReader;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;

/**
 * The cluster layout: per shard, the gRPC targets of its replicas, and how to speak TLS to them.
 * The file is the same JSON the C++ client (roost-get --cluster, roost-admin wait) and the Python
 * client read:
 *
 * <pre>{@code
 * {"shards": [["127.0.0.1:7001", "127.0.0.1:7002"],
 *             ["127.0.0.1:7003", "dns:///roost-1.roost.svc:7000"]],
 *  "tls": {"ca": "ca.pem", "cert": "client.pem", "key": "client.key",
 *          "server_name": "roost.internal"}}
 * }</pre>
 *
 * <p>"shards"[i] lists shard i's replicas in the partition function's shard order; an entry is
 * "host:port" or any gRPC target URI, and "dns:///NAME:PORT" (a Kubernetes headless Service) stands
 * for every address NAME resolves to. "tls" is optional (absent: plaintext), and so is each of its
 * members (no "ca": the system's CAs). Relative paths in "tls" are read from the layout file's
 * folder. Any other member, in the file or in "tls", is refused: a misspelt "tls" ignored would
 * quietly mean plaintext. The bearer token is never in the file: it is a {@link ClientOptions}
 * secret.
 *
 * <p>Immutable and thread-safe.
 *
 * <pre>{@code
 * Layout layout = Layout.fromFile(Path.of("/etc/roost/cluster.json"));
 * Layout local = Layout.of(List.of(List.of("127.0.0.1:7001"), List.of("127.0.0.1:7002")));
 * }</pre>
 */
public final class Layout {
  /** A sanity bound on a hand-written file (the C++ client's too). */
  public static final int MAX_REPLICAS = 1024;

  // A layout file is a few lines; anything larger is not one.
  private static final long MAX_FILE_BYTES = 1 << 20;

  /**
   * TLS towards every replica. Each member may be null: {@code ca} the PEM file of the CAs that
   * sign the servers' certificates (null: the system's), {@code cert} and {@code key} the client's
   * certificate chain and PKCS#8 key for mutual TLS (both or neither), {@code serverName} the name
   * the servers' certificates must hold (null: each target's host).
   */
  public record Tls(String ca, String cert, String key, String serverName) {
    public Tls {
      if ((cert == null) != (key == null)) {
        throw new LayoutException("bad cluster layout: tls.cert and tls.key go together");
      }
    }
  }

  private final List<List<String>> shards;
  private final Tls tls;

  private Layout(List<List<String>> shards, Tls tls) {
    this.shards = shards;
    this.tls = tls;
  }

  /** A plaintext layout from a list of shards, each a list of replica targets. */
  public static Layout of(List<? extends List<String>> shards) {
    return of(shards, null);
  }

  /**
   * A layout from a list of shards and TLS (null: plaintext).
   *
   * @throws LayoutException naming what is wrong
   */
  public static Layout of(List<? extends List<String>> shards, Tls tls) {
    return new Layout(check(shards, "shards"), tls);
  }

  /**
   * Reads a layout file.
   *
   * @throws LayoutException starting with the path, naming the member that is wrong
   */
  public static Layout fromFile(Path path) {
    String where = "bad cluster layout " + path;
    byte[] data;
    try {
      if (Files.size(path) > MAX_FILE_BYTES) {
        throw new LayoutException(where + ": larger than 1 MiB; not a layout file");
      }
      data = Files.readAllBytes(path);
    } catch (IOException e) {
      throw new LayoutException("cannot read cluster layout " + path + ": " + e, e);
    }
    String text;
    try {
      text =
          StandardCharsets.UTF_8
              .newDecoder()
              .onMalformedInput(CodingErrorAction.REPORT)
              .onUnmappableCharacter(CodingErrorAction.REPORT)
              .decode(ByteBuffer.wrap(data))
              .toString();
    } catch (CharacterCodingException e) {
      throw new LayoutException(where + ": not UTF-8");
    }
    JsonElement doc;
    try (JsonReader reader = new JsonReader(new StringReader(text))) {
      reader.setStrictness(Strictness.STRICT);
      doc = JsonParser.parseReader(reader);
      if (reader.peek() != JsonToken.END_DOCUMENT) {
        throw new LayoutException(where + ": not JSON: more after the object");
      }
    } catch (JsonParseException | IOException e) {
      String message = e.getCause() != null ? e.getCause().getMessage() : e.getMessage();
      throw new LayoutException(where + ": not JSON: " + message);
    }
    Path folder = path.toAbsolutePath().getParent();
    return fromDocument(doc, where, folder);
  }

  private static Layout fromDocument(JsonElement doc, String where, Path folder) {
    if (!doc.isJsonObject()) {
      throw new LayoutException(where + ": not a JSON object with \"shards\"");
    }
    JsonObject object = doc.getAsJsonObject();
    for (String name : object.keySet()) {
      if (!name.equals("shards") && !name.equals("tls")) {
        throw new LayoutException(
            where + ": unknown member \"" + name + "\" (known: \"shards\", \"tls\")");
      }
    }
    JsonElement shards = object.get("shards");
    if (shards == null) {
      throw new LayoutException(where + ": no \"shards\"");
    }
    if (!shards.isJsonArray()) {
      throw new LayoutException(where + ": \"shards\" is not an array");
    }
    List<List<String>> out = new ArrayList<>();
    JsonArray array = shards.getAsJsonArray();
    for (int s = 0; s < array.size(); ++s) {
      JsonElement replicas = array.get(s);
      if (!replicas.isJsonArray()) {
        throw new LayoutException(where + ": shards[" + s + "] is not an array of targets");
      }
      List<String> targets = new ArrayList<>();
      JsonArray list = replicas.getAsJsonArray();
      for (int r = 0; r < list.size(); ++r) {
        JsonElement target = list.get(r);
        if (!target.isJsonPrimitive() || !target.getAsJsonPrimitive().isString()) {
          throw new LayoutException(where + ": shards[" + s + "][" + r + "] is not a string");
        }
        targets.add(target.getAsString());
      }
      out.add(targets);
    }
    Tls tls = null;
    if (object.has("tls")) {
      tls = tlsFromDocument(object.get("tls"), where, folder);
    }
    return new Layout(check(out, where + ": shards"), tls);
  }

  private static Tls tlsFromDocument(JsonElement element, String where, Path folder) {
    Set<String> known = Set.of("ca", "cert", "key", "server_name");
    if (!element.isJsonObject()) {
      throw new LayoutException(where + ": \"tls\" is not an object");
    }
    JsonObject tls = element.getAsJsonObject();
    String[] values = new String[4];
    String[] names = {"ca", "cert", "key", "server_name"};
    for (Map.Entry<String, JsonElement> member : tls.entrySet()) {
      if (!known.contains(member.getKey())) {
        throw new LayoutException(
            where
                + ": unknown member \"tls."
                + member.getKey()
                + "\" (known: ca, cert, key, server_name)");
      }
    }
    for (int i = 0; i < names.length; ++i) {
      JsonElement value = tls.get(names[i]);
      if (value == null) {
        continue;
      }
      if (!value.isJsonPrimitive()
          || !value.getAsJsonPrimitive().isString()
          || value.getAsString().isEmpty()) {
        throw new LayoutException(where + ": tls." + names[i] + " is not a non-empty string");
      }
      String text = value.getAsString();
      values[i] = i < 3 ? folder.resolve(text).toString() : text;
    }
    if ((values[1] == null) != (values[2] == null)) {
      throw new LayoutException(where + ": tls.cert and tls.key go together");
    }
    return new Tls(values[0], values[1], values[2], values[3]);
  }

  private static List<List<String>> check(List<? extends List<String>> shards, String where) {
    if (shards == null || shards.isEmpty()) {
      throw new LayoutException("bad cluster layout: " + where + ": no shards");
    }
    if (shards.size() > Partition.MAX_SHARDS) {
      throw new LayoutException(
          "bad cluster layout: "
              + where
              + ": "
              + shards.size()
              + " shards, more than the "
              + Partition.MAX_SHARDS
              + " a table may have");
    }
    List<List<String>> out = new ArrayList<>();
    for (int s = 0; s < shards.size(); ++s) {
      List<String> replicas = shards.get(s);
      if (replicas == null || replicas.isEmpty()) {
        throw new LayoutException(
            "bad cluster layout: " + where + "[" + s + "]: shard " + s + " has no replica");
      }
      if (replicas.size() > MAX_REPLICAS) {
        throw new LayoutException(
            "bad cluster layout: "
                + where
                + "["
                + s
                + "]: more than "
                + MAX_REPLICAS
                + " replicas");
      }
      for (int r = 0; r < replicas.size(); ++r) {
        String target = replicas.get(r);
        if (target == null || target.isBlank() || !target.equals(target.strip())) {
          throw new LayoutException(
              "bad cluster layout: "
                  + where
                  + "["
                  + s
                  + "]["
                  + r
                  + "]: must be \"host:port\" or a gRPC target, not \""
                  + target
                  + "\"");
        }
      }
      out.add(List.copyOf(replicas));
    }
    return List.copyOf(out);
  }

  /** shards().get(i): the replica targets of shard i. */
  public List<List<String>> shards() {
    return shards;
  }

  public int shardCount() {
    return shards.size();
  }

  /** TLS, or empty for plaintext. */
  public Optional<Tls> tls() {
    return Optional.ofNullable(tls);
  }

  /** This layout with {@code tls} (null: plaintext). */
  public Layout withTls(Tls tls) {
    return new Layout(shards, tls);
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof Layout other
        && shards.equals(other.shards)
        && Objects.equals(tls, other.tls);
  }

  @Override
  public int hashCode() {
    return Objects.hash(shards, tls);
  }

  @Override
  public String toString() {
    return "Layout" + shards + (tls == null ? "" : " " + tls);
  }
}
