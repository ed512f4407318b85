// What a Get or MultiGet asks of a table of rows beyond its keys
// (lookup.proto's Rows): the fields to answer (a projection) and a score of
// a float32_list field against a query (read compute), with the k best keys
// of the batch. Applied to a batch's results after the lookup and before
// the response is written: the results' values become projected rows in
// the thread's scratch, and the scores and top indexes are encoded as the
// response's fields 7 and 8.
//
// Example (LookupService::DoLookup):
//   RowAnswer& rows = ThreadRowAnswer();
//   ROOST_RETURN_IF_ERROR(rows.Apply(request, version.opened.manifest.schema,
//                                    &results));
//   ... write results, then rows.trailer(), then the version field.
#ifndef ROOST_SERVER_ROW_REQUESTS_H_
#define ROOST_SERVER_ROW_REQUESTS_H_

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "server/request_codec.h"
#include "storage/row/row_schema.h"
#include "storage/table.h"

namespace roost {

class RowAnswer {
 public:
  // Whether the request asks for anything Apply() does.
  static bool Asks(const LookupRequest& request) {
    return !request.fields.empty() || request.has_score;
  }

  // Applies `request`'s fields and score to `*results` (one per key, in
  // request order; with top_k, only the best keys' are left, best first).
  // `schema` is the serving version's (nullopt: opaque values).
  // InvalidArgument for what the request asks wrongly (fields or a score of
  // a table of opaque values, an unknown field, a score of a field that is
  // not a float32_list, an empty query, an unknown similarity), naming it;
  // DataLoss naming the key whose row is malformed.
  absl::Status Apply(const LookupRequest& request,
                     const std::optional<RowSchema>& schema,
                     std::vector<LookupResult>* results);

  // MultiGetResponse's scores and top, encoded: written after the results.
  std::string_view trailer() const { return trailer_; }

 private:
  absl::Status Project(std::span<const std::string_view> fields,
                       const RowSchema& schema,
                       std::vector<LookupResult>* results);
  absl::Status Score(const LookupRequest::Score& score, const RowSchema& schema,
                     std::vector<LookupResult>* results);

  std::vector<std::string> names_;
  std::vector<uint32_t> indexes_;
  std::string rows_;  // the projected rows, end to end
  std::vector<size_t> sizes_;
  std::vector<float> scores_;
  std::vector<uint32_t> top_;
  std::vector<float> top_scores_;
  std::vector<LookupResult> chosen_;
  std::string trailer_;
};

}  // namespace roost

#endif  // ROOST_SERVER_ROW_REQUESTS_H_
