package dev.roost;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

/** The consistency algorithm's decisions, case by case (as version_consensus_test.cc). */
class VersionConsensusTest {
  @Test
  void versionNumbers() {
    assertEquals(7, VersionConsensus.versionNumber("v000007"));
    assertEquals(7, VersionConsensus.versionNumber("7"));
    assertEquals(-1, VersionConsensus.versionNumber(""));
    assertEquals(-1, VersionConsensus.versionNumber("v"));
    assertEquals(-1, VersionConsensus.versionNumber("v7a"));
    assertTrue(VersionConsensus.sameVersion("v000007", "7"));
    assertFalse(VersionConsensus.sameVersion("v000007", "v000008"));
  }

  @Test
  void oneVersionIsAgreed() {
    VersionConsensus c = new VersionConsensus(3);
    c.answered(0, "v000002");
    assertFalse(c.agreed(), "parts 1 and 2 have not answered");
    c.answered(1, "2");
    c.answered(2, "v000002");
    assertTrue(c.agreed());
    assertEquals("v000002", c.version());
  }

  @Test
  void newerPartsArePinnedToTheOldest() {
    VersionConsensus c = new VersionConsensus(3);
    c.answered(0, "v000003");
    c.answered(1, "v000002");
    c.answered(2, "v000003");
    assertFalse(c.agreed());
    VersionConsensus.Round round = c.next();
    assertEquals("v000002", round.pin());
    assertArrayEquals(new int[] {0, 2}, round.parts());
    assertEquals("v000002, v000003", c.seen());
  }

  @Test
  void aRefusedPinMovesTheBatchForward() {
    VersionConsensus c = new VersionConsensus(3);
    c.answered(0, "v000003");
    c.answered(1, "v000002");
    c.answered(2, "v000003");
    c.pinRefused();
    VersionConsensus.Round round = c.next();
    assertEquals("v000003", round.pin());
    assertArrayEquals(new int[] {1}, round.parts());
    c.answered(1, "v000003");
    assertTrue(c.agreed());
    assertEquals("v000003", c.version());
  }

  @Test
  void aServerTooOldToNameItsVersionIsTakenAsItAnswered() {
    VersionConsensus c = new VersionConsensus(2);
    c.answered(0, "");
    c.answered(1, "v000004");
    assertTrue(c.agreed());
    assertEquals("v000004", c.version());
    VersionConsensus none = new VersionConsensus(1);
    none.answered(0, "");
    assertTrue(none.agreed());
    assertEquals("", none.version());
  }

  @Test
  void versionsCompareAsNumbers() {
    VersionConsensus c = new VersionConsensus(2);
    c.answered(0, "v000010");
    c.answered(1, "v000009");
    assertEquals("v000009", c.next().pin());
    assertArrayEquals(new int[] {0}, c.next().parts());
  }

  @Test
  void aDroppedPartIsNeitherComparedNorResent() {
    VersionConsensus c = new VersionConsensus(3);
    c.answered(0, "v000002");
    c.answered(1, "v000003");
    c.answered(2, "v000002");
    assertFalse(c.agreed());
    assertArrayEquals(new int[] {1}, c.next().parts());
    // Re-sent pinned to v000002, part 1's shard could not answer: its
    // v000003 answer no longer counts, and the others agree.
    c.dropped(1);
    assertTrue(c.agreed());
    assertEquals("v000002", c.version());
    // A part dropped before any answer: the rest still agree.
    VersionConsensus d = new VersionConsensus(2);
    d.dropped(0);
    assertFalse(d.agreed(), "part 1 has not answered");
    d.answered(1, "v000004");
    assertTrue(d.agreed());
    assertEquals("v000004", d.version());
  }
}
