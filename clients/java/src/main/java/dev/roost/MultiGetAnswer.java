package dev.roost;

import com.google.protobuf.ByteString;
import dev.roost.v1.GetResponse;
import dev.roost.v1.MultiGetResponse;
import io.grpc.Status;

/**
 * Reading a MultiGet answer in either of its forms (proto/roost/v1/ lookup.proto): one GetResponse
 * per key, or the packed form a request with {@code packed} asks for (found values concatenated,
 * the missing keys' indexes, and one width or a size per key). A server older than the packed form
 * answers a packed request the classic way, so the client reads whichever comes. The C++ client's
 * client/multiget_answer.cc, ported.
 *
 * <p>Every inconsistency (a count that does not match the keys, a missing index out of order or out
 * of range, sizes that do not add up) is DATA_LOSS naming it: never a value cut from the wrong
 * place.
 */
final class MultiGetAnswer {
  interface Emit {
    void emit(int index, boolean found, ByteString value);
  }

  private MultiGetAnswer() {}

  private static RoostException malformed(String what) {
    return new RoostException(Status.Code.DATA_LOSS, "malformed MultiGet answer: " + what);
  }

  /**
   * Calls emit(i, found, value) for each of the {@code keys} keys, i rising from 0, after the whole
   * answer has been checked.
   *
   * @throws RoostException DATA_LOSS naming what does not fit
   */
  static void read(MultiGetResponse response, int keys, Emit emit) {
    boolean packed =
        response.getPackedSizesCount() > 0
            || response.getPackedWidth() > 0
            || !response.getPackedValues().isEmpty()
            || response.getMissingCount() > 0;
    if (!packed) {
      if (response.getResultsCount() != keys) {
        throw malformed(response.getResultsCount() + " results for " + keys + " keys");
      }
      for (int i = 0; i < keys; ++i) {
        GetResponse r = response.getResults(i);
        emit.emit(i, r.getFound(), r.getValue());
      }
      return;
    }
    if (response.getResultsCount() > 0) {
      throw malformed("results in both forms at once");
    }
    long last = -1;
    for (int i = 0; i < response.getMissingCount(); ++i) {
      long m = Integer.toUnsignedLong(response.getMissing(i));
      if (m <= last || m >= keys) {
        throw malformed(
            "it names key "
                + m
                + " missing, "
                + (m >= keys ? "of " + keys + " keys" : "out of order"));
      }
      last = m;
    }
    ByteString data = response.getPackedValues();
    long width = Integer.toUnsignedLong(response.getPackedWidth());
    int missing = response.getMissingCount();
    if (width > 0) {
      long found = keys - (long) missing;
      if (response.getPackedSizesCount() > 0 || found * width != data.size()) {
        throw malformed(
            "the packed values are "
                + data.size()
                + " bytes, where "
                + found
                + " values of "
                + width
                + " were expected");
      }
      int nextMissing = 0;
      int offset = 0;
      for (int i = 0; i < keys; ++i) {
        if (nextMissing < missing && response.getMissing(nextMissing) == i) {
          ++nextMissing;
          emit.emit(i, false, ByteString.EMPTY);
          continue;
        }
        emit.emit(i, true, data.substring(offset, offset + (int) width));
        offset += (int) width;
      }
      return;
    }
    if (response.getPackedSizesCount() != keys) {
      throw malformed(response.getPackedSizesCount() + " sizes for " + keys + " keys");
    }
    long total = 0;
    for (int i = 0; i < keys; ++i) {
      total += Integer.toUnsignedLong(response.getPackedSizes(i));
    }
    if (total != data.size()) {
      throw malformed(
          "the packed values are " + data.size() + " bytes, their sizes add up to " + total);
    }
    for (int i = 0; i < missing; ++i) {
      if (response.getPackedSizes(response.getMissing(i)) != 0) {
        throw malformed("key " + response.getMissing(i) + " is missing with a value");
      }
    }
    int nextMissing = 0;
    int offset = 0;
    for (int i = 0; i < keys; ++i) {
      int size = response.getPackedSizes(i);
      boolean found = !(nextMissing < missing && response.getMissing(nextMissing) == i);
      if (!found) {
        ++nextMissing;
      }
      emit.emit(i, found, data.substring(offset, offset + size));
      offset += size;
    }
  }
}
