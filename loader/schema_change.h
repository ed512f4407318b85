// The schema check of publishing: a table's new version against its newest
// complete one (docs/format/rows.md, "Evolution"). Rows may follow rows
// whose schema CheckSchemaEvolution lets them follow (fields added nullable
// or with a default); opaque values may follow opaque values. Anything else
// (a field dropped, renamed, retyped or newly required; rows over opaque
// values, or opaque values over rows) is a schema change, refused unless
// the publish allows it (--allow-schema-change), in which case the new
// MANIFEST records what was refused in its schema_change.
//
// Every place that publishes a whole version calls it with the previous
// version's MANIFEST before it publishes anything: a data directory and a
// repository (data_dir_destination.h, repository_destination.h), and
// `roost-load publish` of shard parts (shard_commands.h).
//
// Example:
//   ROOST_RETURN_IF_ERROR(CheckSchemaChange(previous, "users v000003",
//                                           allow, &manifest));
#ifndef ROOST_LOADER_SCHEMA_CHANGE_H_
#define ROOST_LOADER_SCHEMA_CHANGE_H_

#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "storage/version/manifest.h"

namespace roost {

// What a new version with `next`'s values changes against `previous`'s
// that the evolution rules refuse, one line per field (or one line for
// rows against opaque values); "" when nothing.
std::string SchemaChange(const Manifest& previous, const Manifest& next);

// OK when `next` may follow `previous` (named `previous_name`, "users
// v000003" or a URI, in messages). Otherwise, with `allow`, records the
// change in next->schema_change and returns OK; without, returns
// FailedPrecondition naming each field and saying that nothing was
// published and how to force it.
absl::Status CheckSchemaChange(const Manifest& previous,
                               std::string_view previous_name, bool allow,
                               Manifest* next);

}  // namespace roost

#endif  // ROOST_LOADER_SCHEMA_CHANGE_H_
