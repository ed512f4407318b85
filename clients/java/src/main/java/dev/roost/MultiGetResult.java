package dev.roost;

import java.util.List;

/**
 * A MultiGet's answer: one result per key, in request order (duplicates included), and the one
 * table version every shard answered from ("v000007"; "" for an empty batch or servers too old to
 * say).
 */
public record MultiGetResult(List<LookupResult> results, String version) {}
