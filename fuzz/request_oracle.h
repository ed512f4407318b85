// What request_fuzz's server must answer: the status code that a request's
// table, key count and key sizes call for (lookup.proto,
// docs/operations/reference.md), RESOURCE_EXHAUSTED exactly when the response
// would pass --max-message-size, and otherwise every key's answer from the
// fixture's pairs; and the checks of an answer against that. Raw bytes are
// read by request_codec and by protobuf, which must agree
// (request_codec.h: "as protobuf parses them").
#ifndef ROOST_FUZZ_REQUEST_ORACLE_H_
#define ROOST_FUZZ_REQUEST_ORACLE_H_

#include <grpcpp/grpcpp.h>

#include <chrono>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "fuzz/request_server.h"
#include "roost/v1/lookup.pb.h"

namespace roost::fuzz {

// What the server must answer to a lookup of `keys` in `table`.
struct Expected {
  grpc::StatusCode code = grpc::StatusCode::OK;
  v1::MultiGetResponse results;  // when OK; its version too
  // The answer comes in the packed form (MultiGetRequest.packed); `results`
  // holds it in the classic one all the same.
  bool packed = false;
};

// The version every fixture table serves (each is published once).
inline constexpr uint64_t kFixtureVersion = 1;

// The version a request's `version` text names by lookup.proto's rule
// ("v000007" or "7"; 0 for empty), or std::nullopt when it names none (bad
// syntax: INVALID_ARGUMENT). Written apart from request_codec's.
std::optional<uint64_t> OracleVersion(std::string_view text);

// The answer to a lookup of `keys` in `table`, a Get (one key) unless
// `batch`, asking for version `version` (as OracleVersion reads it), in the
// packed form if `packed` (a MultiGet's). `rows`: the request asks for
// fields or a score (lookup.proto's Rows), which the fixture's tables of
// opaque values refuse.
Expected Expect(const Server& s, std::string_view table,
                const std::vector<std::string>& keys, bool batch,
                std::string_view version = "", bool packed = false,
                bool rows = false);

// Expect(), and table names and versions with invalid UTF-8 are refused
// when the request is parsed.
Expected ExpectFor(const Server& s, const std::string& table,
                   const std::vector<std::string>& keys, bool batch,
                   const std::string& version = "", bool packed = false);

// request_codec against protobuf on the same bytes (a MultiGetRequest if
// `batch`, else a GetRequest), Fail()ing when they disagree; the
// expectation for the server from protobuf's reading.
Expected ExpectRaw(const Server& s, std::string_view bytes, bool batch);

// A deadline as the input picks it: none, passed, or a few microseconds
// away (which the server may or may not see pass).
struct Deadline {
  enum Kind { kNone, kPassed, kSoon } kind = kNone;
  void Apply(grpc::ClientContext* context) const {
    const auto now = std::chrono::system_clock::now();
    if (kind == kPassed) context->set_deadline(now - std::chrono::seconds(1));
    if (kind == kSoon)
      context->set_deadline(now + std::chrono::microseconds(50));
  }
  // Whether `code` may stand for what was expected.
  bool Allows(grpc::StatusCode code) const {
    return kind != kNone && code == grpc::StatusCode::DEADLINE_EXCEEDED;
  }
};

// Fail()s unless `got` is the status `want` calls for, or one `deadline`
// allows.
void CheckStatus(std::string_view what, const grpc::Status& got,
                 const Expected& want, const Deadline& deadline);

// Fail()s unless `got` holds exactly the results of `want`, in the form
// `want` says (packed or not), and names the fixture's version.
void CheckResults(std::string_view what, const v1::MultiGetResponse& got,
                  const Expected& want);

// What a Scan must return: its status, and the entries sent before it (all
// of them, when OK), and the last message's `more`.
struct ExpectedScan {
  grpc::StatusCode code = grpc::StatusCode::OK;
  std::vector<std::pair<std::string, std::string>> entries;
  bool more = false;
};

// The answer to `request` (as protobuf reads it).
ExpectedScan ExpectScan(const Server& s, const v1::ScanRequest& request);

// request_codec against protobuf on the same bytes, read as a ScanRequest,
// Fail()ing when they disagree; the expectation from protobuf's reading.
ExpectedScan ExpectRawScan(const Server& s, std::string_view bytes);

// Fail()s unless a Scan's status and messages are what `want` says: the
// entries in order, in messages each under --max-message-size and naming
// the fixture's version, `more` in the last one only.
void CheckScan(std::string_view what, const grpc::Status& status,
               const std::vector<v1::ScanResponse>& messages,
               const ExpectedScan& want, const Deadline& deadline);

}  // namespace roost::fuzz

#endif  // ROOST_FUZZ_REQUEST_ORACLE_H_
