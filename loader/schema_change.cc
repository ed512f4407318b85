#include "loader/schema_change.h"

#include "storage/row/row_schema.h"
#include "util/str_cat.h"

namespace roost {

std::string SchemaChange(const Manifest& previous, const Manifest& next) {
  if (!previous.schema && !next.schema) return "";
  if (!previous.schema) {
    return "values become rows of a schema (--rows), where they were "
           "opaque: readers of the opaque values would break";
  }
  if (!next.schema) {
    return "values become opaque, where they were rows of a schema: "
           "readers of its fields would break (build with --rows)";
  }
  const absl::Status s = CheckSchemaEvolution(*previous.schema, *next.schema);
  return s.ok() ? "" : std::string(s.message());
}

absl::Status CheckSchemaChange(const Manifest& previous,
                               std::string_view previous_name, bool allow,
                               Manifest* next) {
  std::string change = SchemaChange(previous, *next);
  if (change.empty()) return absl::OkStatus();
  if (allow) {
    next->schema_change = std::move(change);
    return absl::OkStatus();
  }
  return absl::FailedPreconditionError(StrCat(
      "the new version of ", next->table, " cannot follow ", previous_name,
      " (docs/format/rows.md, \"Evolution\"):\n", change,
      "\nnothing was published; --allow-schema-change publishes it anyway "
      "and records this in its MANIFEST's schema_change"));
}

}  // namespace roost
