// The table listing of `roost-get --list` and `roost-admin tables`: one line
// per table, from the lookup service's ListTables.
//
// Each line holds eight fields separated by tabs:
//   NAME FORMAT SERVING KEYS BYTES VERSIONS PINNED ROLLED_BACK
// SERVING is the version served ("-" while none is); KEYS and BYTES are its
// key count and file size; VERSIONS lists the complete versions on disk,
// oldest first, separated by commas ("-" when none); PINNED is "pinned" or
// "unpinned"; ROLLED_BACK lists the versions rolled back from ("-" when
// none). Tables are sorted by name.
//
// Example:
//   users	cuckoo	v000002	1000	65536	v000001,v000002,v000003	pinned
//   v000003
#ifndef ROOST_CLIENT_TABLE_LISTING_H_
#define ROOST_CLIENT_TABLE_LISTING_H_

#include <memory>
#include <string>
#include <string_view>

#include "client/rpc_util.h"
#include "roost/v1/lookup.grpc.pb.h"

namespace roost {

// What --help says about the listing's fields.
inline constexpr char kTableListingHelp[] =
    "one line per table, sorted by name, with tab-separated fields: name, "
    "format, serving version (- while none), key count, file size in bytes, "
    "complete versions on disk (oldest first, comma-separated, - if none), "
    "pinned or unpinned, versions rolled back from (comma-separated, - if "
    "none)";

// One line of the listing for `table`, without the newline.
std::string FormatTableLine(const v1::TableInfo& table);

// Calls ListTables on the lookup service at `addr` (as `security` says)
// with a deadline of `timeout_seconds` and prints the listing to stdout.
// Returns kExitOk, or kExitRpcFailed (kExitUsage when a TLS or token file
// cannot be read) after reporting the failure as `program`.
int PrintTableListing(std::string_view program, const std::string& addr,
                      double timeout_seconds, const ChannelSecurity& security);

}  // namespace roost

#endif  // ROOST_CLIENT_TABLE_LISTING_H_
