package dev.roost;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.protobuf.ByteString;
import dev.roost.v1.GetResponse;
import dev.roost.v1.MultiGetResponse;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Both forms of a MultiGet answer, and every inconsistency refused DATA_LOSS. */
class MultiGetAnswerTest {
  static List<String> read(MultiGetResponse response, int keys) {
    List<String> out = new ArrayList<>();
    MultiGetAnswer.read(
        response, keys, (i, found, value) -> out.add(found ? value.toStringUtf8() : null));
    return out;
  }

  static String refused(MultiGetResponse response, int keys) {
    RoostException e = assertThrows(RoostException.class, () -> read(response, keys));
    assertEquals("DATA_LOSS", e.code());
    assertTrue(e.getMessage().startsWith("malformed MultiGet answer: "), e.getMessage());
    return e.getMessage();
  }

  @Test
  void readsTheDocsExamples() {
    // lookup.proto: a ("xy"), b (missing), c ("z"); then c ("zw").
    assertEquals(
        java.util.Arrays.asList("xy", null, "z"),
        read(
            MultiGetResponse.newBuilder()
                .setPackedValues(ByteString.copyFromUtf8("xyz"))
                .addAllPackedSizes(List.of(2, 0, 1))
                .addMissing(1)
                .build(),
            3));
    assertEquals(
        java.util.Arrays.asList("xy", null, "zw"),
        read(
            MultiGetResponse.newBuilder()
                .setPackedValues(ByteString.copyFromUtf8("xyzw"))
                .setPackedWidth(2)
                .addMissing(1)
                .build(),
            3));
    assertEquals(
        java.util.Arrays.asList("v", null),
        read(
            MultiGetResponse.newBuilder()
                .addResults(
                    GetResponse.newBuilder().setFound(true).setValue(ByteString.copyFromUtf8("v")))
                .addResults(GetResponse.newBuilder().setFound(false))
                .build(),
            2));
  }

  @Test
  void refusesAnswersThatDoNotAddUp() {
    assertTrue(
        refused(
                MultiGetResponse.newBuilder().addResults(GetResponse.getDefaultInstance()).build(),
                2)
            .contains("1 results for 2 keys"));
    assertTrue(
        refused(MultiGetResponse.newBuilder().addMissing(2).build(), 2).contains("of 2 keys"));
    assertTrue(
        refused(MultiGetResponse.newBuilder().addMissing(1).addMissing(0).build(), 2)
            .contains("out of order"));
    assertTrue(
        refused(
                MultiGetResponse.newBuilder()
                    .setPackedWidth(2)
                    .setPackedValues(ByteString.copyFromUtf8("abc"))
                    .build(),
                2)
            .contains("3 bytes"));
    assertTrue(
        refused(
                MultiGetResponse.newBuilder()
                    .addAllPackedSizes(List.of(1))
                    .setPackedValues(ByteString.copyFromUtf8("a"))
                    .build(),
                2)
            .contains("1 sizes for 2 keys"));
    assertTrue(
        refused(
                MultiGetResponse.newBuilder()
                    .addAllPackedSizes(List.of(1, 1))
                    .setPackedValues(ByteString.copyFromUtf8("abc"))
                    .build(),
                2)
            .contains("add up to 2"));
    assertTrue(
        refused(
                MultiGetResponse.newBuilder()
                    .addAllPackedSizes(List.of(1, 1))
                    .addMissing(1)
                    .setPackedValues(ByteString.copyFromUtf8("ab"))
                    .build(),
                2)
            .contains("missing with a value"));
    assertTrue(
        refused(
                MultiGetResponse.newBuilder()
                    .addResults(GetResponse.getDefaultInstance())
                    .addMissing(0)
                    .build(),
                1)
            .contains("both forms"));
  }
}
