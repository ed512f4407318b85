package dev.roost;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.ServerSocket;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import javax.tools.JavaCompiler;
import javax.tools.ToolProvider;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The service of README.md, compiled from the README's text and run against a real cluster. */
class ReadmeExampleTest {
  static final String MARKER = "<!-- ReadmeExampleTest: the block below -->";

  @TempDir Path scratch;

  static String example() throws Exception {
    Path readme = PartitionTest.root().resolve("clients/java/README.md");
    String text = Files.readString(readme);
    int marker = text.indexOf(MARKER);
    assertTrue(marker >= 0, readme + " has no " + MARKER);
    int start = text.indexOf("```java\n", marker);
    assertEquals(marker + MARKER.length() + 1, start, "the java block follows the marker");
    int end = text.indexOf("\n```\n", start);
    return text.substring(start + "```java\n".length(), end + 1);
  }

  @Test
  void theReadmeServiceAnswersFromTheCluster() throws Exception {
    Path target = Path.of(System.getProperty("roost.java.build", "target"));
    String classpath =
        target.resolve("classes")
            + ":"
            + Files.readString(target.resolve("test-classpath.txt")).strip();
    Path src = Files.createDirectories(scratch.resolve("src"));
    Path out = Files.createDirectories(scratch.resolve("out"));
    Files.writeString(src.resolve("UserService.java"), example());
    JavaCompiler javac = ToolProvider.getSystemJavaCompiler();
    int compiled =
        javac.run(
            null,
            null,
            null,
            "-Xlint:all",
            "-Werror",
            "-cp",
            classpath,
            "-d",
            out.toString(),
            src.resolve("UserService.java").toString());
    assertEquals(0, compiled, "javac of README.md's example");

    try (Cluster cluster = new Cluster(scratch)) {
      Map<String, byte[]> users = new LinkedHashMap<>();
      for (int i = 0; i < 100; ++i) {
        users.put(Cluster.hex(Cluster.bytes("user" + i)), Cluster.bytes("name of user " + i));
      }
      cluster.build("users", users, 2);
      List<List<String>> shards = cluster.startShards(2, 1, List.of());
      Path layout = scratch.resolve("cluster.json");
      Files.writeString(
          layout,
          "{\"shards\": [[\"" + shards.get(0).get(0) + "\"], [\"" + shards.get(1).get(0) + "\"]]}");
      int port;
      try (ServerSocket s = new ServerSocket(0)) {
        port = s.getLocalPort();
      }
      Process service =
          new ProcessBuilder(
                  Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                  "-cp",
                  out + ":" + classpath,
                  "UserService",
                  layout.toString(),
                  Integer.toString(port))
              .redirectErrorStream(true)
              .redirectOutput(scratch.resolve("service.log").toFile())
              .start();
      try {
        int p = port;
        Cluster.waitFor(
            () -> {
              try (Socket s = new Socket("127.0.0.1", p)) {
                return true;
              } catch (Exception e) {
                return false;
              }
            },
            "UserService to listen",
            null);
        HttpClient http = HttpClient.newHttpClient();
        for (int i = 0; i < 100; i += 9) {
          HttpResponse<String> r = get(http, port, "user" + i);
          assertEquals(200, r.statusCode(), "user" + i + ": " + log(scratch));
          assertEquals("name of user " + i, r.body());
        }
        assertEquals(404, get(http, port, "nobody").statusCode());
        // A shard gone: its keys are 503, the other shard's still answer.
        cluster.serverAt(shards.get(1).get(0)).kill();
        // (A dead shard's key waits for the client's deadline, 10 s: one of each.)
        String dead = null;
        String live = null;
        for (int i = 0; dead == null || live == null; ++i) {
          if (Partition.shardOf(Cluster.bytes("user" + i), 2) == 1) {
            dead = dead == null ? "user" + i : dead;
          } else {
            live = live == null ? "user" + i : live;
          }
        }
        assertEquals(503, get(http, port, dead).statusCode(), dead);
        assertEquals(200, get(http, port, live).statusCode(), live);
        assertTrue(
            Files.readString(scratch.resolve("service.log"))
                .contains("users " + dead + ": UNAVAILABLE: shard 1 ("),
            log(scratch));
      } finally {
        service.destroyForcibly().waitFor();
      }
    }
  }

  static String log(Path scratch) throws Exception {
    return "\n--- service.log ---\n" + Files.readString(scratch.resolve("service.log"));
  }

  static HttpResponse<String> get(HttpClient http, int port, String key) throws Exception {
    return http.send(
        HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/users/" + key)).build(),
        HttpResponse.BodyHandlers.ofString(StandardCharsets.UTF_8));
  }
}
