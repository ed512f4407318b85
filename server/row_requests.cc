#include "server/row_requests.h"

#include <cmath>
#include <limits>
#include <utility>

#include "storage/row/row_codec.h"
#include "storage/row/vector_math.h"
#include "util/str_cat.h"

namespace roost {
namespace {

absl::Status KeyError(size_t index, const absl::Status& s) {
  return absl::Status(s.code(), StrCat("key ", index, ": ", s.message()));
}

}  // namespace

absl::Status RowAnswer::Apply(const LookupRequest& request,
                              const std::optional<RowSchema>& schema,
                              std::vector<LookupResult>* results) {
  trailer_.clear();
  if (!schema) {
    return absl::InvalidArgumentError(
        StrCat("table \"", request.table, "\" holds opaque values: ",
               request.has_score ? "a score needs" : "fields need",
               " a table of rows (roost-load build --rows)"));
  }
  if (request.has_score) {
    // Before the projection: the score reads the whole row.
    if (absl::Status s = Score(request.score, *schema, results); !s.ok()) {
      return s;
    }
    if (request.fields.empty()) {
      // No value, but a view that still points into the table: the
      // encodings copy a found value's bytes, 0 of them here, and memcpy
      // takes no null pointer even then.
      for (LookupResult& r : *results) r.value = r.value.substr(0, 0);
      return absl::OkStatus();
    }
  }
  return Project(request.fields, *schema, results);
}

absl::Status RowAnswer::Project(std::span<const std::string_view> fields,
                                const RowSchema& schema,
                                std::vector<LookupResult>* results) {
  names_.assign(fields.begin(), fields.end());
  absl::StatusOr<RowSchema> projected = schema.Project(names_, &indexes_);
  if (!projected.ok()) return projected.status();
  const RowProjection projection(&schema, &*projected, indexes_);
  // Sizes first, so that the rows are laid out in one buffer that does not
  // move while views into it are taken.
  sizes_.clear();
  size_t total = 0;
  for (size_t k = 0; k < results->size(); ++k) {
    const LookupResult& r = (*results)[k];
    size_t size = 0;
    if (r.found) {
      absl::StatusOr<size_t> s = projection.Size(r.value);
      if (!s.ok()) return KeyError(k, s.status());
      size = *s;
    }
    sizes_.push_back(size);
    total += size;
  }
  rows_.resize(total);
  char* out = rows_.data();
  for (size_t k = 0; k < results->size(); ++k) {
    LookupResult& r = (*results)[k];
    if (!r.found) continue;
    char* end = projection.Write(r.value, out);
    r.value = std::string_view(out, end - out);
    out = end;
  }
  return absl::OkStatus();
}

absl::Status RowAnswer::Score(const LookupRequest::Score& score,
                              const RowSchema& schema,
                              std::vector<LookupResult>* results) {
  const std::optional<size_t> field = schema.Find(score.field);
  if (!field) {
    return absl::InvalidArgumentError(
        StrCat("score: no field \"", score.field, "\" in the table's rows"));
  }
  if (schema.field(*field).type != FieldType::kFloat32List) {
    return absl::InvalidArgumentError(StrCat(
        "score: field \"", schema.field(*field).name, "\" is ",
        FieldTypeName(schema.field(*field).type), ", not a float32_list"));
  }
  if (score.similarity != 0 && score.similarity != 1) {
    return absl::InvalidArgumentError(StrCat("score: unknown similarity ",
                                             score.similarity,
                                             " (0 is DOT_PRODUCT, 1 COSINE)"));
  }
  const size_t n = score.query.size();
  if (n == 0) return absl::InvalidArgumentError("score: the query is empty");
  const float* q = score.query.data();
  const float norm = score.similarity == 1 ? Norm(q, n) : 0;
  constexpr float kNoScore = std::numeric_limits<float>::quiet_NaN();
  scores_.clear();
  for (size_t k = 0; k < results->size(); ++k) {
    const LookupResult& r = (*results)[k];
    float value = kNoScore;
    if (r.found) {
      size_t begin, end;
      if (!VariableRange(schema, r.value, *field, &begin, &end)) {
        return absl::DataLossError(StrCat("key ", k, ": field \"",
                                          schema.field(*field).name,
                                          "\": its bytes are outside the row"));
      }
      // A null field has no bytes: no score, as for another dimension.
      if (end - begin == n * 4) {
        const char* v = r.value.data() + begin;
        value = score.similarity == 1 ? CosineSimilarity(v, q, n, norm)
                                      : DotProduct(v, q, n);
      }
    }
    scores_.push_back(value);
  }
  if (score.top_k == 0) {
    AppendScores(scores_, &trailer_);
    return absl::OkStatus();
  }
  TopK(scores_, score.top_k, &top_);
  chosen_.clear();
  top_scores_.clear();
  for (uint32_t i : top_) {
    chosen_.push_back((*results)[i]);
    top_scores_.push_back(scores_[i]);
  }
  results->swap(chosen_);
  AppendScores(top_scores_, &trailer_);
  AppendTop(top_, &trailer_);
  return absl::OkStatus();
}

}  // namespace roost
