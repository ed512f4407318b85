package dev.roost.conformance;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.OutputStreamWriter;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Base64;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The conformance runner as the harness runs it: a child `java -cp ...
 * dev.roost.conformance.Runner` (the classpath of target/test-classpath.txt) speaking the line
 * protocol, against a real 2-shard cluster.
 */
class RunnerTest {
  @TempDir Path scratch;

  static String b64(String text) {
    return Base64.getEncoder().encodeToString(text.getBytes(StandardCharsets.UTF_8));
  }

  @Test
  void answersEachRequestLineInOrder() throws Exception {
    Path target = Path.of(System.getProperty("roost.java.build", "target"));
    String classpath =
        target.resolve("classes")
            + ":"
            + target.resolve("test-classes")
            + ":"
            + Files.readString(target.resolve("test-classpath.txt")).strip();
    try (dev.roost.Cluster cluster = new dev.roost.Cluster(scratch)) {
      cluster.build("t", dev.roost.Cluster.keysAndValues(50, "v1"), 2);
      cluster.build("b", dev.roost.Cluster.keysAndValues(50, "v1"), 2, "block");
      List<List<String>> shards = cluster.startShards(2, 1, List.of());
      Path layout = scratch.resolve("cluster.json");
      Files.writeString(
          layout,
          "{\"shards\": [[\"" + shards.get(0).get(0) + "\"], [\"" + shards.get(1).get(0) + "\"]]}");
      Path bad = scratch.resolve("bad.json");
      Files.writeString(bad, "{\"shards\": [], \"extra\": 1}");
      Process runner =
          new ProcessBuilder(
                  Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                  "-cp",
                  classpath,
                  "dev.roost.conformance.Runner")
              .redirectError(scratch.resolve("runner.log").toFile())
              .start();
      String[] requests = {
        "{\"op\": \"partition\", \"key\": \"" + b64("user1") + "\", \"shards\": 4}",
        "{\"op\": \"get\", \"table\": \"t\", \"key\": \"" + b64("key00001") + "\"}",
        "{\"op\": \"open\", \"layout\": \"" + bad + "\"}",
        "{\"op\": \"open\", \"layout\": \"" + layout + "\", \"options\": {\"timeout_s\": 5}}",
        "{\"op\": \"get\", \"table\": \"t\", \"key\": \"" + b64("key00001") + "\"}",
        "{\"op\": \"multi_get\", \"table\": \"t\", \"keys\": [\""
            + b64("key00002")
            + "\", \""
            + b64("nope")
            + "\"], \"version\": \"1\"}",
        "{\"op\": \"get\", \"table\": \"t\", \"key\": \"" + b64("k") + "\", \"versoin\": \"1\"}",
        "{\"op\": \"open\", \"layout\": \"" + layout + "\", \"options\": {\"monotonic\": 1}}",
        "{\"op\": \"wait\", \"table\": \"t\", \"version\": \"v000001\", \"timeout_s\": 10}",
        "{\"op\": \"wait\", \"table\": \"t\", \"version\": \"v000002\", \"timeout_s\": 0.2}",
        "{\"op\": \"get\", \"table\": \"t\", \"key\": \"" + b64("k") + "\", \"version\": \"9\"}",
        "{\"op\": \"metrics\"}",
        "{\"op\": \"scan\", \"table\": \"b\", \"prefix\": \""
            + b64("key0001")
            + "\", \"limit\": 2}",
        "{\"op\": \"scan\", \"table\": \"t\"}",
        "{\"op\": \"open\", \"layout\": \"" + layout + "\", \"options\": {\"monotonic\": true}}",
        "{\"op\": \"get\", \"table\": \"t\", \"key\": \"" + b64("key00001") + "\"}",
      };
      try (Writer in = new OutputStreamWriter(runner.getOutputStream(), StandardCharsets.UTF_8)) {
        for (String r : requests) {
          in.write(r + "\n");
        }
      }
      List<String> lines;
      try (BufferedReader out =
          new BufferedReader(
              new InputStreamReader(runner.getInputStream(), StandardCharsets.UTF_8))) {
        lines = out.lines().toList();
      }
      assertTrue(runner.waitFor(60, TimeUnit.SECONDS));
      assertEquals(0, runner.exitValue(), Files.readString(scratch.resolve("runner.log")));
      assertEquals(requests.length, lines.size(), String.join("\n", lines));
      JsonObject[] a =
          lines.stream()
              .map(l -> JsonParser.parseString(l).getAsJsonObject())
              .toArray(JsonObject[]::new);
      assertEquals(3, a[0].get("shard").getAsInt());
      assertEquals("USAGE", code(a[1]), "a get before open");
      assertEquals("LAYOUT", code(a[2]));
      assertEquals(0, a[3].size());
      assertTrue(a[4].get("found").getAsBoolean());
      assertEquals(b64("v1 value of key 1"), a[4].get("value").getAsString());
      assertEquals("v000001", a[4].get("version").getAsString());
      assertEquals(
          b64("v1 value of key 2"),
          a[5].getAsJsonArray("results").get(0).getAsJsonObject().get("value").getAsString());
      assertEquals(
          "{\"found\":false,\"value\":\"\"}", a[5].getAsJsonArray("results").get(1).toString());
      assertEquals("v000001", a[5].get("version").getAsString());
      assertEquals("USAGE", code(a[6]), "an unknown member");
      assertEquals("USAGE", code(a[7]), "an option of the wrong type");
      assertEquals(0, a[8].size(), a[8].toString());
      assertEquals("DEADLINE_EXCEEDED", code(a[9]));
      assertEquals("FAILED_PRECONDITION", code(a[10]));
      // The client of request 3: its get, multi_get of 2 keys and the get
      // of an unserved version (a refused open leaves it in place).
      assertEquals(
          "{\"requests\":3,\"keys\":4,\"errors\":{\"FAILED_PRECONDITION\":1},"
              + "\"partial_keys\":0,\"hedges\":0,\"retries\":0,\"version_switches\":0}",
          a[11].toString());
      assertEquals(
          "[[\""
              + b64("key00010")
              + "\",\""
              + b64("v1 value of key 10")
              + "\"],[\""
              + b64("key00011")
              + "\",\""
              + b64("v1 value of key 11")
              + "\"]]",
          a[12].getAsJsonArray("entries").toString());
      assertTrue(a[12].get("more").getAsBoolean());
      assertEquals("v000001", a[12].get("version").getAsString());
      assertEquals("FAILED_PRECONDITION", code(a[13]), "a scan of a cuckoo table");
      assertEquals(0, a[14].size(), a[14].toString());
      assertEquals("v000001", a[15].get("version").getAsString(), "monotonic reads");
    }
  }

  static String code(JsonObject answer) {
    assertTrue(answer.has("error"), answer.toString());
    return answer.getAsJsonObject("error").get("code").getAsString();
  }
}
