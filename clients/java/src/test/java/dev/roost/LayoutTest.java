package dev.roost;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The layout file: the same JSON as the C++ and Python clients', strictly read. */
class LayoutTest {
  @TempDir Path dir;

  Path write(String text) throws Exception {
    Path file = dir.resolve("cluster.json");
    Files.writeString(file, text);
    return file;
  }

  String refused(String text) throws Exception {
    Path file = write(text);
    LayoutException e = assertThrows(LayoutException.class, () -> Layout.fromFile(file));
    assertEquals("INVALID_ARGUMENT", e.code());
    assertTrue(e.getMessage().contains(file.toString()), e.getMessage());
    return e.getMessage();
  }

  @Test
  void readsShardsAndTlsWithPathsFromTheFilesFolder() throws Exception {
    Layout layout =
        Layout.fromFile(
            write(
                "{\"shards\": [[\"127.0.0.1:7001\", \"127.0.0.1:7002\"],"
                    + " [\"dns:///roost-1.roost.svc:7000\"]],"
                    + " \"tls\": {\"ca\": \"ca.pem\", \"cert\": \"/abs/c.pem\", \"key\": \"k.key\","
                    + " \"server_name\": \"roost.internal\"}}"));
    assertEquals(
        List.of(
            List.of("127.0.0.1:7001", "127.0.0.1:7002"), List.of("dns:///roost-1.roost.svc:7000")),
        layout.shards());
    Layout.Tls tls = layout.tls().orElseThrow();
    assertEquals(dir.resolve("ca.pem").toString(), tls.ca());
    assertEquals("/abs/c.pem", tls.cert());
    assertEquals(dir.resolve("k.key").toString(), tls.key());
    assertEquals("roost.internal", tls.serverName());
    assertTrue(Layout.fromFile(write("{\"shards\": [[\"a:1\"]]}")).tls().isEmpty());
    assertTrue(Layout.fromFile(write("{\"shards\": [[\"a:1\"]], \"tls\": {}}")).tls().isPresent());
  }

  @Test
  void refusesWhatIsNotALayout() throws Exception {
    assertTrue(
        refused("{\"shards\": [[\"a:1\"]], \"tsl\": {}}").contains("unknown member \"tsl\""));
    assertTrue(
        refused("{\"shards\": [[\"a:1\"]], \"tls\": {\"cafile\": \"x\"}}")
            .contains("unknown member \"tls.cafile\""));
    assertTrue(
        refused("{\"shards\": [[\"a:1\"]], \"tls\": {\"cert\": \"x\"}}")
            .contains("tls.cert and tls.key go together"));
    assertTrue(refused("{\"shards\": []}").contains("no shards"));
    assertTrue(refused("{\"shards\": [[]]}").contains("shard 0 has no replica"));
    assertTrue(refused("{\"shards\": [[\"a:1\"], [1]]}").contains("shards[1][0] is not a string"));
    assertTrue(refused("{\"shards\": [\"a:1\"]}").contains("shards[0] is not an array"));
    assertTrue(refused("{\"shards\": [[\" a:1\"]]}").contains("shards[0][0]"));
    assertTrue(refused("{}").contains("no \"shards\""));
    assertTrue(refused("[]").contains("not a JSON object"));
    assertTrue(refused("{\"shards\": [[\"a:1\"]],}").contains("not JSON"));
    assertTrue(refused("{\"shards\": [[\"a:1\"]]} {}").contains("not JSON"));
    assertTrue(refused("{shards: [[\"a:1\"]]}").contains("not JSON"));
    List<List<String>> many = new ArrayList<>(Collections.nCopies(1025, List.of("a:1")));
    assertThrows(LayoutException.class, () -> Layout.of(many));
    assertThrows(LayoutException.class, () -> Layout.of(List.of()));
  }

  @Test
  void aMissingFileOrTlsFileIsNamed() throws Exception {
    LayoutException e =
        assertThrows(LayoutException.class, () -> Layout.fromFile(dir.resolve("none.json")));
    assertTrue(e.getMessage().contains("none.json"), e.getMessage());
    Layout layout =
        Layout.fromFile(write("{\"shards\": [[\"127.0.0.1:1\"]], \"tls\": {\"ca\": \"no.pem\"}}"));
    LayoutException tls = assertThrows(LayoutException.class, () -> RoostClient.create(layout));
    assertTrue(tls.getMessage().contains(dir.resolve("no.pem").toString()), tls.getMessage());
  }
}
