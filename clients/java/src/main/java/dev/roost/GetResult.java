package dev.roost;

/**
 * A Get's answer: found or not, the value (empty when not found), and the table version that
 * answered ("v000007"; "" from a server too old to say).
 */
public record GetResult(boolean found, byte[] value, String version) {}
