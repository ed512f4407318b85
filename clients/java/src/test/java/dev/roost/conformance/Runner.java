package dev.roost.conformance;

import com.google.gson.Gson;
import com.google.gson.GsonBuilder;
import com.google.gson.JsonArray;
import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import com.google.gson.JsonPrimitive;
import dev.roost.CallOptions;
import dev.roost.ClientOptions;
import dev.roost.GetResult;
import dev.roost.LayoutException;
import dev.roost.LookupResult;
import dev.roost.MultiGetResult;
import dev.roost.Partition;
import dev.roost.RoostClient;
import dev.roost.RoostException;
import dev.roost.ScanOptions;
import dev.roost.ScanResult;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The Java runner of the client conformance suite (tests/conformance/ README.md): one JSON request
 * per line on stdin, one JSON answer per line on stdout, in order, flushed; exits 0 at end of
 * input. Drives {@link RoostClient}: ops partition, open, get, multi_get, scan, wait and metrics
 * (the client's Micrometer meters, in a registry of their own per open, summed over their tags).
 * Every option of the suite is the client's: an unknown one is answered {"error": {"code": "USAGE",
 * ...}}, so that no case passes on an option ignored.
 *
 * <pre>
 * mvn -q test-compile   # writes target/test-classpath.txt
 * java -cp target/classes:target/test-classes:$(cat target/test-classpath.txt) \
 *     dev.roost.conformance.Runner
 * </pre>
 */
public final class Runner {
  private static final Gson GSON = new GsonBuilder().disableHtmlEscaping().create();

  private RoostClient client;
  private SimpleMeterRegistry registry = new SimpleMeterRegistry();

  /** A request the runner cannot take: answered with code USAGE. */
  static final class Usage extends RuntimeException {
    private static final long serialVersionUID = 1L;

    Usage(String message) {
      super(message);
    }
  }

  public static void main(String[] args) throws Exception {
    Runner runner = new Runner();
    PrintStream out = new PrintStream(System.out, false, StandardCharsets.UTF_8);
    try (BufferedReader in =
        new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8))) {
      String line;
      while ((line = in.readLine()) != null) {
        if (line.isBlank()) {
          continue;
        }
        out.println(GSON.toJson(runner.answer(line)));
        out.flush();
      }
    } finally {
      runner.close();
    }
  }

  void close() {
    if (client != null) {
      client.close();
      client = null;
    }
  }

  /** The answer to one request line. */
  JsonObject answer(String line) {
    try {
      JsonElement parsed = JsonParser.parseString(line);
      if (!parsed.isJsonObject()) {
        throw new Usage("a request is a JSON object");
      }
      return handle(parsed.getAsJsonObject());
    } catch (Usage | com.google.gson.JsonParseException | IllegalArgumentException e) {
      return error("USAGE", e.getMessage());
    } catch (LayoutException e) {
      return error("LAYOUT", e.getMessage());
    } catch (RoostException e) {
      return error(e.code(), e.getMessage());
    } catch (RuntimeException e) {
      return error("INTERNAL", "the Java runner failed: " + e);
    }
  }

  static JsonObject error(String code, String message) {
    JsonObject inner = new JsonObject();
    inner.addProperty("code", code);
    inner.addProperty("message", message == null ? "" : message);
    JsonObject out = new JsonObject();
    out.add("error", inner);
    return out;
  }

  private JsonObject handle(JsonObject request) {
    String op = string(request, "op");
    switch (op) {
      case "partition" -> {
        members(request, Set.of("op", "key", "shards"), Set.of("key", "shards"));
        JsonObject out = new JsonObject();
        out.addProperty(
            "shard", Partition.shardOf(bytes(request, "key"), integer(request, "shards")));
        return out;
      }
      case "open" -> {
        members(request, Set.of("op", "layout", "options"), Set.of("layout"));
        SimpleMeterRegistry meters = new SimpleMeterRegistry();
        ClientOptions options =
            options(request.get("options")).toBuilder().meterRegistry(meters).build();
        RoostClient opened =
            RoostClient.fromLayoutFile(Path.of(string(request, "layout")), options);
        close();
        client = opened;
        registry = meters;
        return new JsonObject();
      }
      case "get" -> {
        members(request, Set.of("op", "table", "key", "version"), Set.of("table", "key"));
        GetResult r = open().get(string(request, "table"), bytes(request, "key"), call(request));
        JsonObject out = result(r.found(), r.value());
        out.addProperty("version", r.version());
        return out;
      }
      case "multi_get" -> {
        members(request, Set.of("op", "table", "keys", "version"), Set.of("table", "keys"));
        JsonElement keys = request.get("keys");
        if (!keys.isJsonArray()) {
          throw new Usage("\"keys\" must be a list of base64 strings");
        }
        List<byte[]> list = new ArrayList<>();
        for (JsonElement k : keys.getAsJsonArray()) {
          list.add(base64(k, "keys"));
        }
        MultiGetResult r = open().multiGet(string(request, "table"), list, call(request));
        JsonArray results = new JsonArray();
        for (LookupResult one : r.results()) {
          if (one.error() != null) {
            JsonObject error = error(one.error().code(), one.error().getMessage());
            error.getAsJsonObject("error").addProperty("shard", one.error().shard());
            results.add(error);
          } else {
            results.add(result(one.found(), one.value()));
          }
        }
        JsonObject out = new JsonObject();
        out.add("results", results);
        out.addProperty("version", r.version());
        return out;
      }
      case "scan" -> {
        members(
            request,
            Set.of("op", "table", "start", "end", "prefix", "limit", "version"),
            Set.of("table"));
        ScanOptions scan =
            new ScanOptions(
                request.has("start") ? bytes(request, "start") : null,
                request.has("end") ? bytes(request, "end") : null,
                request.has("prefix") ? bytes(request, "prefix") : null,
                request.has("limit") ? integer(request, "limit") : 0);
        ScanResult r = open().scan(string(request, "table"), scan, call(request));
        JsonArray entries = new JsonArray();
        for (ScanResult.Entry e : r.entries()) {
          JsonArray pair = new JsonArray();
          pair.add(Base64.getEncoder().encodeToString(e.key()));
          pair.add(Base64.getEncoder().encodeToString(e.value()));
          entries.add(pair);
        }
        JsonObject out = new JsonObject();
        out.add("entries", entries);
        out.addProperty("more", r.more());
        out.addProperty("version", r.version());
        return out;
      }
      case "wait" -> {
        members(
            request,
            Set.of("op", "table", "version", "timeout_s"),
            Set.of("table", "version", "timeout_s"));
        open()
            .waitForVersion(
                string(request, "table"),
                string(request, "version"),
                seconds(request.get("timeout_s"), "timeout_s"));
        return new JsonObject();
      }
      case "metrics" -> {
        members(request, Set.of("op"), Set.of());
        open();
        JsonObject errors = new JsonObject();
        for (Counter c : registry.find("roost.client.errors").counters()) {
          String code = c.getId().getTag("code");
          long before = errors.has(code) ? errors.get(code).getAsLong() : 0;
          errors.addProperty(code, before + (long) c.count());
        }
        JsonObject out = new JsonObject();
        out.addProperty("requests", sum("roost.client.requests"));
        out.addProperty("keys", sum("roost.client.keys"));
        out.add("errors", errors);
        out.addProperty("partial_keys", sum("roost.client.partial.keys"));
        out.addProperty("hedges", sum("roost.client.hedges"));
        out.addProperty("retries", sum("roost.client.retries"));
        out.addProperty("version_switches", sum("roost.client.version.switches"));
        return out;
      }
      default -> throw new Usage("op \"" + op + "\" is not one the Java runner has");
    }
  }

  // A counter of the client's registry, summed over its tags.
  private long sum(String name) {
    return (long) registry.find(name).counters().stream().mapToDouble(Counter::count).sum();
  }

  private RoostClient open() {
    if (client == null) {
      throw new Usage("no client: send an \"open\" request first");
    }
    return client;
  }

  private static JsonObject result(boolean found, byte[] value) {
    JsonObject out = new JsonObject();
    out.addProperty("found", found);
    out.addProperty("value", Base64.getEncoder().encodeToString(value));
    return out;
  }

  private static CallOptions call(JsonObject request) {
    return request.has("version")
        ? CallOptions.version(string(request, "version"))
        : CallOptions.DEFAULT;
  }

  private static ClientOptions options(JsonElement element) {
    ClientOptions.Builder b = ClientOptions.builder();
    if (element == null || element.isJsonNull()) {
      return b.build();
    }
    if (!element.isJsonObject()) {
      throw new Usage("\"options\" must be an object");
    }
    for (Map.Entry<String, JsonElement> option : element.getAsJsonObject().entrySet()) {
      JsonElement value = option.getValue();
      switch (option.getKey()) {
        case "timeout_s" -> b.timeout(seconds(value, "timeout_s"));
        case "hedge_s" -> b.hedgeDelay(seconds(value, "hedge_s"));
        case "token" -> {
          if (!value.isJsonPrimitive() || !value.getAsJsonPrimitive().isString()) {
            throw new Usage("options.token must be a string");
          }
          b.token(value.getAsString());
        }
        case "coalesce" -> {
          if (!value.isJsonPrimitive() || !value.getAsJsonPrimitive().isBoolean()) {
            throw new Usage("options.coalesce must be true or false");
          }
          b.coalesceGets(value.getAsBoolean(), 4, 1000);
        }
        case "partial" -> {
          if (!value.isJsonPrimitive() || !value.getAsJsonPrimitive().isBoolean()) {
            throw new Usage("options.partial must be true or false");
          }
          b.partialAnswers(value.getAsBoolean());
        }
        case "monotonic" -> {
          if (!value.isJsonPrimitive() || !value.getAsJsonPrimitive().isBoolean()) {
            throw new Usage("options.monotonic must be true or false");
          }
          b.monotonic(value.getAsBoolean());
        }
        default -> throw new Usage("unknown option \"" + option.getKey() + "\"");
      }
    }
    return b.build();
  }

  private static void members(JsonObject request, Set<String> known, Set<String> required) {
    for (String name : request.keySet()) {
      if (!known.contains(name)) {
        throw new Usage(
            "unknown member \"" + name + "\" of op \"" + request.get("op").getAsString() + "\"");
      }
    }
    for (String name : required) {
      if (!request.has(name)) {
        throw new Usage("op \"" + request.get("op").getAsString() + "\" needs \"" + name + "\"");
      }
    }
  }

  private static String string(JsonObject request, String name) {
    JsonElement e = request.get(name);
    if (e == null || !e.isJsonPrimitive() || !e.getAsJsonPrimitive().isString()) {
      throw new Usage("\"" + name + "\" must be a string");
    }
    return e.getAsString();
  }

  private static int integer(JsonObject request, String name) {
    JsonElement e = request.get(name);
    if (e == null || !e.isJsonPrimitive() || !e.getAsJsonPrimitive().isNumber()) {
      throw new Usage("\"" + name + "\" must be a number");
    }
    JsonPrimitive p = e.getAsJsonPrimitive();
    double d = p.getAsDouble();
    if (d != Math.rint(d) || d < Integer.MIN_VALUE || d > Integer.MAX_VALUE) {
      throw new Usage("\"" + name + "\" must be an integer");
    }
    return (int) d;
  }

  private static Duration seconds(JsonElement e, String name) {
    if (e == null || !e.isJsonPrimitive() || !e.getAsJsonPrimitive().isNumber()) {
      throw new Usage("\"" + name + "\" must be a number of seconds");
    }
    double s = e.getAsDouble();
    if (!(s >= 0) || s > 365 * 24 * 3600) {
      throw new Usage("\"" + name + "\" must be 0 to a year of seconds");
    }
    return Duration.ofNanos((long) (s * 1e9));
  }

  private static byte[] bytes(JsonObject request, String name) {
    return base64(request.get(name), name);
  }

  private static byte[] base64(JsonElement e, String name) {
    if (e == null || !e.isJsonPrimitive() || !e.getAsJsonPrimitive().isString()) {
      throw new Usage("\"" + name + "\" must be base64 text");
    }
    try {
      return Base64.getDecoder().decode(e.getAsString());
    } catch (IllegalArgumentException x) {
      throw new Usage("\"" + name + "\" is not standard base64: " + x.getMessage());
    }
  }
}
