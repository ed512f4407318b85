#include "client/table_listing.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <vector>

#include "client/rpc_util.h"
#include "util/str_cat.h"

namespace roost {
namespace {

// `items` joined by commas, or "-" when there are none: a field is never
// empty, so the line splits on tabs into the same number of fields always.
template <typename Items>
std::string JoinOrDash(const Items& items) {
  if (items.empty()) return "-";
  std::string out;
  for (const auto& item : items) {
    if (!out.empty()) out += ',';
    out += item;
  }
  return out;
}

}  // namespace

std::string FormatTableLine(const v1::TableInfo& table) {
  return StrCat(table.name(), "\t", table.format(), "\t",
                table.serving_version().empty() ? std::string("-")
                                                : table.serving_version(),
                "\t", table.key_count(), "\t", table.file_size(), "\t",
                JoinOrDash(table.versions_on_disk()), "\t",
                table.pinned() ? "pinned" : "unpinned", "\t",
                JoinOrDash(table.rolled_back_versions()));
}

int PrintTableListing(std::string_view program, const std::string& addr,
                      double timeout_seconds, const ChannelSecurity& security) {
  auto channel = MakeChannel(addr, security);
  if (!channel.ok()) {
    return ReportUsageError(program, std::string(channel.status().message()));
  }
  auto stub = v1::Lookup::NewStub(*channel);
  grpc::ClientContext context;
  PrepareCall(&context, timeout_seconds, security);
  v1::ListTablesResponse response;
  const grpc::Status status =
      stub->ListTables(&context, v1::ListTablesRequest(), &response);
  if (!status.ok()) return ReportRpcError(program, status, security);
  std::vector<const v1::TableInfo*> tables;
  for (const v1::TableInfo& table : response.tables()) tables.push_back(&table);
  std::sort(tables.begin(), tables.end(),
            [](const v1::TableInfo* a, const v1::TableInfo* b) {
              return a->name() < b->name();
            });
  for (const v1::TableInfo* table : tables) {
    fmt::print("{}\n", FormatTableLine(*table));
  }
  return kExitOk;
}

}  // namespace roost
