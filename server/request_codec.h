// The wire format of roost.v1's lookup messages, read and written by hand
// on the request path. Requests are parsed in place: the table name and
// every key are views into the received bytes, so a MultiGet of 1,000 keys
// allocates nothing for them, and a batch over --max-batch is refused after
// counting its keys, before any is kept. Responses are written straight into
// the buffer gRPC sends, so each value is copied once, from the mapped table
// into that buffer. Everything else (ListTables, the admin service) goes
// through the generated protobuf classes.
//
// The messages (proto/roost/v1/lookup.proto):
//   GetRequest      { string table = 1; bytes key = 2; string version = 3;
//                     repeated string fields = 4; }
//   MultiGetRequest { string table = 1; repeated bytes keys = 2;
//                     string version = 3; bool packed = 4;
//                     repeated string fields = 5; Score score = 6; }
//   Score           { string field = 1; Similarity similarity = 2;
//                     repeated float query = 3 [packed]; uint32 top_k = 4; }
//   ScanRequest     { string table = 1; bytes start = 2; bytes end = 3;
//                     bytes prefix = 4; uint32 limit = 5; string version = 6; }
//   GetResponse     { bool found = 1; bytes value = 2; string version = 3; }
//   MultiGetResponse{ repeated GetResponse results = 1; string version = 2;
//                     bytes packed_values = 3;
//                     repeated uint32 packed_sizes = 4 [packed];
//                     repeated uint32 missing = 5 [packed];
//                     uint32 packed_width = 6;
//                     repeated float scores = 7 [packed];
//                     repeated uint32 top = 8 [packed]; }
//   ScanResponse    { repeated KeyValue entries = 1; string version = 2;
//                     bool more = 3; }
//   KeyValue        { bytes key = 1; bytes value = 2; }
// A response's version is written last, from bytes encoded once per served
// version (EncodeVersionField), so that naming it costs one copy of a few
// bytes.
// As protobuf parses them: the last `table` (and `key`) wins, unknown fields
// are skipped, and a known field number with another wire type is an unknown
// field.
//
// Example:
//   LookupRequest request;
//   if (absl::Status s = ParseMultiGetRequest(bytes, 10000, &request); !s.ok())
//     return s;
//   size_t size = MultiGetResponseSize(results);   // then reserve that much
//   char* end = WriteMultiGetResponse(results, buffer);
#ifndef ROOST_SERVER_REQUEST_CODEC_H_
#define ROOST_SERVER_REQUEST_CODEC_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"

namespace roost {

struct LookupRequest {
  std::string_view table;
  // One key for Get; the batch, in request order, for MultiGet (at most
  // the `max_keys` first).
  std::vector<std::string_view> keys;
  // How many keys the request holds (may be more than `keys` has).
  size_t total_keys = 0;
  // The version asked for ("v000007" or "7"), or 0 for the serving one.
  uint64_t version = 0;
  // A MultiGet that asks for the packed response form.
  bool packed = false;
  // The fields of a row asked for (lookup.proto's Rows); empty: whole
  // values.
  std::vector<std::string_view> fields;
  // MultiGetRequest.score, when the request has one: as protobuf merges a
  // message field given more than once, the last field and similarity, the
  // query's floats of every occurrence.
  bool has_score = false;
  struct Score {
    std::string_view field;
    int32_t similarity = 0;  // roost.v1.Score.Similarity (open enum)
    std::vector<float> query;
    uint32_t top_k = 0;
  } score;
};

// A ScanRequest, its bytes fields views into the request.
struct ScanQuery {
  std::string_view table;
  std::string_view start;   // inclusive; empty: the first key
  std::string_view end;     // exclusive; empty: no bound
  std::string_view prefix;  // empty: any key
  uint32_t limit = 0;       // 0: the server's --max-scan-keys
  uint64_t version = 0;     // as LookupRequest's
};

// Parses a GetRequest; `request->keys` gets exactly one key (empty when the
// request has none). InvalidArgument, the request malformed, when the bytes
// are not a GetRequest, a table name or version in them is not UTF-8, or
// the version is not a version's name or number ("bad version ...").
absl::Status ParseGetRequest(std::string_view bytes, LookupRequest* request);

// Parses a MultiGetRequest, keeping at most its first `max_keys` keys (and
// counting them all). InvalidArgument as ParseGetRequest's.
absl::Status ParseMultiGetRequest(std::string_view bytes, size_t max_keys,
                                  LookupRequest* request);

// Parses a ScanRequest. InvalidArgument as ParseGetRequest's.
// (GetRequest.fields and MultiGetRequest's fields and score are parsed too;
// a field name or score.field that is not UTF-8 is refused the same way.)
absl::Status ParseScanRequest(std::string_view bytes, ScanQuery* query);

// One result to write: a value when found.
struct EncodedResult {
  bool found = false;
  std::string_view value;
};

// The encoded size of a GetResponse, and of one MultiGetResponse entry
// (the GetResponse with its field tag and length).
size_t GetResponseSize(const EncodedResult& result);
size_t MultiGetEntrySize(const EncodedResult& result);

// Writes a GetResponse, or one MultiGetResponse entry, at `out`, which has
// room for the sizes above; returns the end of what was written.
char* WriteGetResponse(const EncodedResult& result, char* out);
char* WriteMultiGetEntry(const EncodedResult& result, char* out);

// MultiGetResponse.scores and .top (fields 7 and 8, packed), appended to
// `*out`; nothing for an empty list.
void AppendScores(std::span<const float> scores, std::string* out);
void AppendTop(std::span<const uint32_t> top, std::string* out);

// The packed form of a MultiGetResponse (fields 3 to 6), written in two
// passes over the results: Count() each to learn the size, then, with that
// much room reserved, Start() and Write() each, in the same order. When
// every found value has one size (larger than 0), it goes in packed_width
// and no packed_sizes are written (lookup.proto).
//
// Example:
//   PackedMultiGet packed;
//   for (i...) packed.Count(results[i]);
//   char* out = buffer;  // packed.size() bytes
//   packed.Start(out);
//   for (i...) packed.Write(results[i]);
//   out = packed.end();
class PackedMultiGet {
 public:
  void Count(const EncodedResult& result);
  // The encoded size of the three fields (0 for an empty batch).
  size_t size() const;
  // Writes the fields' tags and lengths; `out` has room for size() bytes.
  void Start(char* out);
  void Write(const EncodedResult& result);
  // The end of what was written, after the last Write().
  char* end() const { return end_; }

 private:
  uint32_t keys_ = 0;       // Count()ed, then the next index to Write()
  size_t values_ = 0;       // bytes of found values
  size_t sizes_bytes_ = 0;  // varints of every key's size
  size_t missing_bytes_ = 0;
  // The size of every found value so far; 0 before the first, and
  // kMixedWidths once two differ or one is empty.
  static constexpr size_t kMixedWidths = SIZE_MAX;
  size_t width_ = 0;
  size_t width() const { return width_ == kMixedWidths ? 0 : width_; }
  char* values_out_ = nullptr;
  char* sizes_out_ = nullptr;
  char* missing_out_ = nullptr;
  char* end_ = nullptr;
};

// A response's `version` field, field `number` (3 of GetResponse, 2 of
// MultiGetResponse and ScanResponse), naming version `name`: tag, length,
// name, ready to copy after the rest of the response.
std::string EncodeVersionField(int number, std::string_view name);

// One ScanResponse entry (a KeyValue with its field tag and length): its
// size, and writing it at `out`; returns the end of what was written.
size_t ScanEntrySize(std::string_view key, std::string_view value);
char* WriteScanEntry(std::string_view key, std::string_view value, char* out);
// ScanResponse's `more = true`.
inline constexpr size_t kScanMoreSize = 2;
char* WriteScanMore(char* out);

}  // namespace roost

#endif  // ROOST_SERVER_REQUEST_CODEC_H_
