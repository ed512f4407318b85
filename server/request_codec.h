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
//   GetRequest      { string table = 1; bytes key = 2; }
//   MultiGetRequest { string table = 1; repeated bytes keys = 2; }
//   GetResponse     { bool found = 1; bytes value = 2; }
//   MultiGetResponse{ repeated GetResponse results = 1; }
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
#include <span>
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
};

// Parses a GetRequest; `request->keys` gets exactly one key (empty when the
// request has none). InvalidArgument, the request malformed, when the bytes
// are not a GetRequest or a table name in them is not UTF-8.
absl::Status ParseGetRequest(std::string_view bytes, LookupRequest* request);

// Parses a MultiGetRequest, keeping at most its first `max_keys` keys (and
// counting them all). InvalidArgument, the request malformed, when the bytes
// are not a MultiGetRequest or a table name in them is not UTF-8.
absl::Status ParseMultiGetRequest(std::string_view bytes, size_t max_keys,
                                  LookupRequest* request);

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

}  // namespace roost

#endif  // ROOST_SERVER_REQUEST_CODEC_H_
