package dev.roost;

import static dev.roost.Cluster.bytes;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * TLS from the layout file (the CA, the server name, mutual TLS with a client certificate, paths
 * relative to the file) and a bearer token, against servers with --tls-cert, --tls-client-ca and
 * --access-policy. The certificates are made by the openssl command, as the Python client's
 * test_tls.py makes them.
 */
class TlsTest {
  @TempDir Path scratch;

  static void openssl(Path dir, String... args) throws Exception {
    List<String> command = new ArrayList<>(List.of("openssl"));
    command.addAll(List.of(args));
    Process p =
        new ProcessBuilder(command)
            .directory(dir.toFile())
            .redirectErrorStream(true)
            .redirectOutput(dir.resolve("openssl.log").toFile())
            .start();
    if (!p.waitFor(60, TimeUnit.SECONDS) || p.exitValue() != 0) {
      throw new AssertionError(command + ": " + Files.readString(dir.resolve("openssl.log")));
    }
  }

  /** ca.pem; server.pem/.key for roost.internal; client.pem/.key. */
  static void makePki(Path dir) throws Exception {
    openssl(
        dir,
        "req",
        "-x509",
        "-newkey",
        "rsa:2048",
        "-nodes",
        "-days",
        "2",
        "-subj",
        "/CN=roost test CA",
        "-keyout",
        "ca.key",
        "-out",
        "ca.pem");
    for (String[] cert :
        new String[][] {
          {"server", "subjectAltName=DNS:roost.internal"}, {"client", "extendedKeyUsage=clientAuth"}
        }) {
      String name = cert[0];
      openssl(
          dir,
          "req",
          "-newkey",
          "rsa:2048",
          "-nodes",
          "-subj",
          "/CN=" + name,
          "-keyout",
          name + ".key",
          "-out",
          name + ".csr");
      Files.writeString(dir.resolve(name + ".ext"), cert[1] + "\n");
      openssl(
          dir,
          "x509",
          "-req",
          "-in",
          name + ".csr",
          "-CA",
          "ca.pem",
          "-CAkey",
          "ca.key",
          "-CAcreateserial",
          "-days",
          "2",
          "-extfile",
          name + ".ext",
          "-out",
          name + ".pem");
    }
  }

  static String sha256(String text) throws Exception {
    return HexFormat.of()
        .formatHex(
            MessageDigest.getInstance("SHA-256").digest(text.getBytes(StandardCharsets.UTF_8)));
  }

  @Test
  void tlsMutualTlsAndATokenFromTheLayoutFile() throws Exception {
    Path etc = Files.createDirectories(scratch.resolve("etc"));
    makePki(etc);
    Path policy = etc.resolve("policy.json");
    Files.writeString(
        policy,
        "{\"clients\": [{\"name\": \"svc\", \"token_sha256\": \""
            + sha256("s3cret")
            + "\", \"tables\": [\"t\"]}], \"anonymous_tables\": []}");
    try (Cluster cluster = new Cluster(scratch)) {
      Map<String, byte[]> kvs = Cluster.keysAndValues(200, "v1");
      cluster.build("t", kvs, 2);
      List<String> tls =
          List.of(
              "--tls-cert",
              etc.resolve("server.pem").toString(),
              "--tls-key",
              etc.resolve("server.key").toString(),
              "--access-policy",
              policy.toString());
      List<String> mtls = new ArrayList<>(tls);
      mtls.addAll(List.of("--tls-client-ca", etc.resolve("ca.pem").toString()));
      String shard0 = cluster.server(0, tls).address;
      String shard1 = cluster.server(1, mtls).address;
      String shards = "\"shards\": [[\"" + shard0 + "\"], [\"" + shard1 + "\"]]";
      Path layout = etc.resolve("cluster.json");
      Files.writeString(
          layout,
          "{"
              + shards
              + ", \"tls\": {\"ca\": \"ca.pem\", \"cert\": \"client.pem\","
              + " \"key\": \"client.key\", \"server_name\": \"roost.internal\"}}");
      List<byte[]> keys = FailoverTest.keys(200);
      ClientOptions withToken =
          ClientOptions.builder().timeout(Duration.ofSeconds(30)).token("s3cret").build();
      try (RoostClient client = RoostClient.fromLayoutFile(layout, withToken)) {
        MultiGetResult r = client.multiGet("t", keys);
        for (int k = 0; k < keys.size(); ++k) {
          assertArrayEquals(bytes("v1 value of key " + k), r.results().get(k).value());
        }
        client.waitForVersion("t", "1", Duration.ofSeconds(30));
      }
      ClientOptions short_ = ClientOptions.builder().timeout(Duration.ofSeconds(2)).build();
      // No token: the policy lets no anonymous caller read t.
      try (RoostClient client = RoostClient.fromLayoutFile(layout, short_)) {
        assertEquals(
            "PERMISSION_DENIED",
            assertThrows(RoostException.class, () -> client.multiGet("t", keys)).code());
      }
      try (RoostClient client =
          RoostClient.fromLayoutFile(layout, short_.toBuilder().token("wrong").build())) {
        assertEquals(
            "UNAUTHENTICATED",
            assertThrows(RoostException.class, () -> client.multiGet("t", keys)).code());
      }
      // Without a client certificate, the mutual-TLS shard refuses the call.
      Files.writeString(
          layout,
          "{" + shards + ", \"tls\": {\"ca\": \"ca.pem\", \"server_name\": \"roost.internal\"}}");
      try (RoostClient client =
          RoostClient.fromLayoutFile(layout, short_.toBuilder().token("s3cret").build())) {
        List<byte[]> mine = keys.stream().filter(k -> client.shardOf(k) == 0).toList();
        assertEquals(mine.size(), client.multiGet("t", mine).results().size());
        RoostException e = assertThrows(RoostException.class, () -> client.multiGet("t", keys));
        assertEquals("UNAVAILABLE", e.code(), e.getMessage());
        assertEquals(1, e.shard());
      }
      // Plaintext towards TLS: refused, never answered.
      try (RoostClient client =
          RoostClient.create(Layout.of(List.of(List.of(shard0), List.of(shard1))), short_)) {
        assertEquals(
            "UNAVAILABLE",
            assertThrows(RoostException.class, () -> client.get("t", keys.get(0))).code());
      }
    }
  }
}
