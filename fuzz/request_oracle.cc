#include "fuzz/request_oracle.h"

#include <google/protobuf/stubs/common.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <optional>
#include <set>

#include "fuzz/fuzz_util.h"
#include "server/request_codec.h"
#include "util/escape.h"
#include "util/str_cat.h"

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

// Whether the request's version, once parsed, is answered by a fixture
// table (which serves kFixtureVersion and has no previous one).
bool Answered(uint64_t version) {
  return version == 0 || version == kFixtureVersion;
}

std::string FixtureVersionName() {
  return StrCat("v", std::string(5, '0'), kFixtureVersion);
}

}  // namespace

std::optional<uint64_t> OracleVersion(std::string_view text) {
  if (text.empty()) return 0;
  std::string_view digits = text;
  const bool named = text[0] == 'v';
  if (named) digits.remove_prefix(1);
  if (digits.empty()) return std::nullopt;  // zeros in front are no limit
  uint64_t v = 0;
  for (const char c : digits) {
    if (c < '0' || c > '9') return std::nullopt;
    const uint64_t d = static_cast<uint64_t>(c - '0');
    if (v > (UINT64_MAX - d) / 10) return std::nullopt;  // overflows
    v = v * 10 + d;
  }
  if (v == 0) return std::nullopt;
  // A name is "v" and at least six digits, no more zeros in front.
  if (named) {
    std::string name = std::to_string(v);
    if (name.size() < 6) name.insert(0, 6 - name.size(), '0');
    if (digits != name) return std::nullopt;
  }
  return v;
}

// `classic`'s results in the packed form, by lookup.proto's rules.
MultiGetResponse Packed(const MultiGetResponse& classic) {
  MultiGetResponse packed;
  packed.set_version(classic.version());
  std::set<size_t> widths;  // of the found values
  for (int i = 0; i < classic.results_size(); ++i) {
    const GetResponse& r = classic.results(i);
    packed.mutable_packed_values()->append(r.value());
    packed.add_packed_sizes(static_cast<uint32_t>(r.value().size()));
    if (r.found()) widths.insert(r.value().size());
    if (!r.found()) packed.add_missing(static_cast<uint32_t>(i));
  }
  if (widths.size() == 1 && *widths.begin() > 0) {
    packed.clear_packed_sizes();
    packed.set_packed_width(static_cast<uint32_t>(*widths.begin()));
  }
  return packed;
}

Expected Expect(const Server& s, std::string_view table,
                const std::vector<std::string>& keys, bool batch,
                std::string_view version, bool packed, bool rows) {
  Expected e;
  e.packed = batch && packed;
  const std::optional<uint64_t> wanted = OracleVersion(version);
  if (!wanted) {
    e.code = StatusCode::INVALID_ARGUMENT;
    return e;
  }
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
  if (!Answered(*wanted)) {
    e.code = StatusCode::FAILED_PRECONDITION;
    return e;
  }
  if (rows) {  // the fixture's tables hold opaque values
    e.code = StatusCode::INVALID_ARGUMENT;
    return e;
  }
  e.results.set_version(FixtureVersionName());
  for (const std::string& key : keys) {
    GetResponse* r = e.results.add_results();
    auto it = t->second->pairs.find(key);
    if (it != t->second->pairs.end()) {
      r->set_found(true);
      r->set_value(it->second);
    }
  }
  size_t size =
      e.packed ? Packed(e.results).ByteSizeLong() : e.results.ByteSizeLong();
  if (!batch) {  // a GetResponse: one result, and the version in it
    GetResponse get = e.results.results(0);
    get.set_version(e.results.version());
    size = get.ByteSizeLong();
  }
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
                  const Expected& expected) {
  const MultiGetResponse& want = expected.results;
  const bool packed_fields = got.packed_sizes_size() > 0 ||
                             !got.packed_values().empty() ||
                             got.missing_size() > 0 || got.packed_width() > 0;
  if (expected.packed) {
    // Byte for byte what protobuf writes of the same answer, packed.
    if (got.SerializeAsString() != Packed(want).SerializeAsString()) {
      Fail(what, ": the packed answer ", PrintableKey(got.SerializeAsString()),
           " where ", PrintableKey(Packed(want).SerializeAsString()),
           " was expected");
    }
    return;
  }
  if (packed_fields) Fail(what, ": a packed answer to a request not packed");
  if (got.version() != FixtureVersionName()) {
    Fail(what, ": answered by version ", PrintableKey(got.version()), " where ",
         FixtureVersionName(), " was expected");
  }
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
                   const std::vector<std::string>& keys, bool batch,
                   const std::string& version, bool packed) {
  if (!ValidUtf8(table) || !ValidUtf8(version)) {
    return {StatusCode::INVALID_ARGUMENT, {}};
  }
  return Expect(s, table, keys, batch, version, packed);
}

Expected ExpectRaw(const Server& s, std::string_view bytes, bool batch) {
  LookupRequest parsed;
  const absl::Status codec =
      batch ? ParseMultiGetRequest(bytes, kMaxBatch, &parsed)
            : ParseGetRequest(bytes, &parsed);
  std::string table;
  std::vector<std::string> keys;
  std::string version;
  bool packed = false;
  bool proto_ok;
  std::vector<std::string> fields;
  std::optional<v1::Score> score;
  if (batch) {
    MultiGetRequest r;
    proto_ok = r.ParseFromArray(bytes.data(), static_cast<int>(bytes.size()));
    table = r.table();
    keys.assign(r.keys().begin(), r.keys().end());
    version = r.version();
    packed = r.packed();
    fields.assign(r.fields().begin(), r.fields().end());
    if (r.has_score()) score = r.score();
  } else {
    GetRequest r;
    proto_ok = r.ParseFromArray(bytes.data(), static_cast<int>(bytes.size()));
    table = r.table();
    keys.push_back(r.key());
    version = r.version();
    fields.assign(r.fields().begin(), r.fields().end());
  }
  // Bytes protobuf reads whose version names none are refused by the
  // codec, and only those.
  const std::optional<uint64_t> wanted = OracleVersion(version);
  if (proto_ok && !wanted) {
    if (codec.ok() || codec.message().rfind("bad version ", 0) != 0) {
      Fail("request_codec reads version ", PrintableKey(version), " as ",
           codec.ok() ? "good" : codec.ToString(),
           " where it names no version");
    }
    return {StatusCode::INVALID_ARGUMENT, {}};
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
  if (parsed.version != *wanted) {
    Fail("request_codec reads version ", PrintableKey(version), " as ",
         parsed.version, " where it names ", *wanted);
  }
  if (batch && parsed.packed != packed) {
    Fail("request_codec reads packed as ", parsed.packed,
         " where protobuf reads ", packed);
  }
  if (parsed.fields.size() != fields.size() ||
      !std::equal(fields.begin(), fields.end(), parsed.fields.begin())) {
    Fail("request_codec reads ", parsed.fields.size(),
         " field names where protobuf reads ", fields.size());
  }
  if (parsed.has_score != score.has_value()) {
    Fail("request_codec reads ", parsed.has_score ? "a" : "no",
         " score where protobuf reads ", score ? "one" : "none");
  }
  if (score) {
    const auto& q = score->query();
    if (parsed.score.field != score->field() ||
        parsed.score.similarity != static_cast<int32_t>(score->similarity()) ||
        parsed.score.top_k != score->top_k() ||
        !std::equal(parsed.score.query.begin(), parsed.score.query.end(),
                    q.begin(), q.end(), [](float a, float b) {
                      return std::memcmp(&a, &b, sizeof a) == 0;  // bits
                    })) {
      Fail("request_codec reads the score as protobuf does not: field ",
           PrintableKey(parsed.score.field), ", similarity ",
           parsed.score.similarity, ", top_k ", parsed.score.top_k, ", ",
           parsed.score.query.size(),
           " query floats; protobuf: ", PrintableKey(score->field()), ", ",
           static_cast<int32_t>(score->similarity()), ", ", score->top_k(),
           ", ", q.size());
    }
  }
  return Expect(s, table, keys, batch, version, packed,
                !fields.empty() || score.has_value());
}

ExpectedScan ExpectScan(const Server& s, const v1::ScanRequest& request) {
  ExpectedScan e;
  const std::optional<uint64_t> wanted = OracleVersion(request.version());
  if (!wanted || request.table().empty() || request.limit() > kMaxScanKeys ||
      request.start().size() > kMaxKeySize ||
      request.end().size() > kMaxKeySize ||
      request.prefix().size() > kMaxKeySize) {
    e.code = StatusCode::INVALID_ARGUMENT;
    return e;
  }
  auto t = s.tables.find(request.table());
  if (t == s.tables.end()) {
    e.code = StatusCode::NOT_FOUND;
    return e;
  }
  if (!Answered(*wanted) || t->second->job.format != TableFormat::kBlock) {
    e.code = StatusCode::FAILED_PRECONDITION;
    return e;
  }
  const uint32_t limit = request.limit() == 0 ? kMaxScanKeys : request.limit();
  // What a message adds to its entries: the version, and room for `more`.
  const size_t tail = 2 + FixtureVersionName().size() + 2;
  for (const auto& [key, value] : t->second->pairs) {
    if (key < request.start() || !key.starts_with(request.prefix())) continue;
    if (!request.end().empty() && key >= request.end()) break;
    if (e.entries.size() == limit) {
      e.more = true;
      break;
    }
    v1::ScanResponse one;
    v1::KeyValue* kv = one.add_entries();
    kv->set_key(key);
    kv->set_value(value);
    if (one.ByteSizeLong() + tail > kMaxMessageSize) {
      e.code = StatusCode::RESOURCE_EXHAUSTED;  // after what came before
      return e;
    }
    e.entries.emplace_back(key, value);
  }
  return e;
}

ExpectedScan ExpectRawScan(const Server& s, std::string_view bytes) {
  ScanQuery parsed;
  const absl::Status codec = ParseScanRequest(bytes, &parsed);
  v1::ScanRequest r;
  const bool proto_ok =
      r.ParseFromArray(bytes.data(), static_cast<int>(bytes.size()));
  const std::optional<uint64_t> wanted = OracleVersion(r.version());
  if (proto_ok && !wanted) {
    if (codec.ok() || codec.message().rfind("bad version ", 0) != 0) {
      Fail("request_codec reads Scan version ", PrintableKey(r.version()),
           " as ", codec.ok() ? "good" : codec.ToString(),
           " where it names no version");
    }
    return {StatusCode::INVALID_ARGUMENT, {}, false};
  }
  if (codec.ok() != proto_ok) {
    Fail("request_codec ", codec.ok() ? "accepts" : "refuses",
         " bytes protobuf ", proto_ok ? "accepts" : "refuses",
         " as a ScanRequest: ", codec.ToString(),
         "; the bytes: ", PrintableKey(bytes, 1024));
  }
  if (!proto_ok) return {StatusCode::INVALID_ARGUMENT, {}, false};
  if (parsed.table != r.table() || parsed.start != r.start() ||
      parsed.end != r.end() || parsed.prefix != r.prefix() ||
      parsed.limit != r.limit() || parsed.version != *wanted) {
    Fail("request_codec reads ScanRequest ", PrintableKey(bytes, 1024),
         " otherwise than protobuf: ", r.ShortDebugString());
  }
  return ExpectScan(s, r);
}

void CheckScan(std::string_view what, const grpc::Status& status,
               const std::vector<v1::ScanResponse>& messages,
               const ExpectedScan& want, const Deadline& deadline) {
  Expected code;
  code.code = want.code;
  CheckStatus(what, status, code, deadline);
  if (deadline.kind != Deadline::kNone && !status.ok()) return;
  if (want.code != StatusCode::OK &&
      want.code != StatusCode::RESOURCE_EXHAUSTED && !messages.empty()) {
    Fail(what, ": ", messages.size(), " messages before its error");
  }
  if (status.ok() && messages.empty()) Fail(what, ": no message");
  size_t at = 0;
  for (size_t m = 0; m < messages.size(); ++m) {
    const v1::ScanResponse& r = messages[m];
    if (r.version() != FixtureVersionName()) {
      Fail(what, ": message ", m, " names version ", PrintableKey(r.version()));
    }
    if (r.ByteSizeLong() > kMaxMessageSize) {
      Fail(what, ": message ", m, " is ", r.ByteSizeLong(), " bytes");
    }
    if (r.more() && (m + 1 != messages.size() || !status.ok())) {
      Fail(what, ": more in message ", m, " of ", messages.size());
    }
    for (const v1::KeyValue& kv : r.entries()) {
      if (at >= want.entries.size() || kv.key() != want.entries[at].first ||
          kv.value() != want.entries[at].second) {
        Fail(what, ": entry ", at, " is ", PrintableKey(kv.key()), " where ",
             at < want.entries.size() ? PrintableKey(want.entries[at].first)
                                      : std::string("none"),
             " was expected");
      }
      ++at;
    }
  }
  if ((status.ok() || status.error_code() == StatusCode::RESOURCE_EXHAUSTED) &&
      at != want.entries.size()) {
    Fail(what, ": ", at, " entries where ", want.entries.size(),
         " were expected");
  }
  if (status.ok() && messages.back().more() != want.more) {
    Fail(what, ": more is ", messages.back().more(), " where ", want.more,
         " was expected");
  }
}

}  // namespace roost::fuzz
