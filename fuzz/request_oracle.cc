#include "fuzz/request_oracle.h"

#include <google/protobuf/stubs/common.h>

#include <algorithm>

#include "fuzz/fuzz_util.h"
#include "server/request_codec.h"
#include "util/escape.h"

namespace roost::fuzz {
namespace {

using grpc::StatusCode;
using roost::v1::GetRequest;
using roost::v1::GetResponse;
using roost::v1::MultiGetRequest;
using roost::v1::MultiGetResponse;

bool ValidUtf8(std::string_view s) {
  return google::protobuf::internal::IsStructurallyValidUTF8(
      s.data(), static_cast<int>(s.size()));
}

}  // namespace

Expected Expect(const Server& s, std::string_view table,
                const std::vector<std::string>& keys, bool batch) {
  Expected e;
  if (table.empty() || (batch && keys.size() > kMaxBatch)) {
    e.code = StatusCode::INVALID_ARGUMENT;
    return e;
  }
  for (const std::string& key : keys) {
    if (key.size() > kMaxKeySize) {
      e.code = StatusCode::INVALID_ARGUMENT;
      return e;
    }
  }
  auto t = s.tables.find(std::string(table));
  if (t == s.tables.end()) {
    e.code = StatusCode::NOT_FOUND;
    return e;
  }
  for (const std::string& key : keys) {
    GetResponse* r = e.results.add_results();
    auto it = t->second->pairs.find(key);
    if (it != t->second->pairs.end()) {
      r->set_found(true);
      r->set_value(it->second);
    }
  }
  const size_t size =
      batch ? e.results.ByteSizeLong() : e.results.results(0).ByteSizeLong();
  if (size > kMaxMessageSize) {
    e.code = StatusCode::RESOURCE_EXHAUSTED;
    e.results.Clear();
  }
  return e;
}

void CheckStatus(std::string_view what, const grpc::Status& got,
                 const Expected& want, const Deadline& deadline) {
  if (deadline.kind == Deadline::kPassed) {
    if (got.error_code() != StatusCode::DEADLINE_EXCEEDED) {
      Fail(what, " past its deadline: ", +got.error_code(), " ",
           got.error_message());
    }
    return;
  }
  if (got.error_code() != want.code && !deadline.Allows(got.error_code())) {
    Fail(what, ": status ", +got.error_code(), " (", got.error_message(),
         ") where ", +want.code, " was expected");
  }
}

void CheckResults(std::string_view what, const MultiGetResponse& got,
                  const MultiGetResponse& want) {
  if (got.results_size() != want.results_size()) {
    Fail(what, ": ", got.results_size(), " results for ", want.results_size(),
         " keys");
  }
  for (int i = 0; i < got.results_size(); ++i) {
    const GetResponse& g = got.results(i);
    const GetResponse& w = want.results(i);
    if (g.found() != w.found() || g.value() != w.value()) {
      Fail(what, ": key ", i, " gives found=", g.found(), " value ",
           PrintableKey(g.value()), " where found=", w.found(), " value ",
           PrintableKey(w.value()), " was expected");
    }
  }
}

Expected ExpectFor(const Server& s, const std::string& table,
                   const std::vector<std::string>& keys, bool batch) {
  if (!ValidUtf8(table)) return {StatusCode::INVALID_ARGUMENT, {}};
  return Expect(s, table, keys, batch);
}

Expected ExpectRaw(const Server& s, std::string_view bytes, bool batch) {
  LookupRequest parsed;
  const absl::Status codec =
      batch ? ParseMultiGetRequest(bytes, kMaxBatch, &parsed)
            : ParseGetRequest(bytes, &parsed);
  std::string table;
  std::vector<std::string> keys;
  bool proto_ok;
  if (batch) {
    MultiGetRequest r;
    proto_ok = r.ParseFromArray(bytes.data(), static_cast<int>(bytes.size()));
    table = r.table();
    keys.assign(r.keys().begin(), r.keys().end());
  } else {
    GetRequest r;
    proto_ok = r.ParseFromArray(bytes.data(), static_cast<int>(bytes.size()));
    table = r.table();
    keys.push_back(r.key());
  }
  if (codec.ok() != proto_ok) {
    Fail("request_codec ", codec.ok() ? "accepts" : "refuses",
         " bytes protobuf ", proto_ok ? "accepts" : "refuses", " as a ",
         batch ? "MultiGetRequest" : "GetRequest", ": ", codec.ToString(),
         "; the bytes: ", PrintableKey(bytes, 1024));
  }
  if (!proto_ok) return {StatusCode::INVALID_ARGUMENT, {}};
  if (parsed.table != table || parsed.total_keys != keys.size() ||
      parsed.keys.size() !=
          std::min<size_t>(keys.size(), batch ? kMaxBatch : 1)) {
    Fail("request_codec reads table ", PrintableKey(parsed.table), " and ",
         parsed.total_keys, " keys where protobuf reads ", PrintableKey(table),
         " and ", keys.size());
  }
  for (size_t i = 0; i < parsed.keys.size(); ++i) {
    if (parsed.keys[i] != keys[i]) {
      Fail("request_codec reads key ", i, " as ", PrintableKey(parsed.keys[i]),
           " where protobuf reads ", PrintableKey(keys[i]));
    }
  }
  return Expect(s, table, keys, batch);
}

}  // namespace roost::fuzz
