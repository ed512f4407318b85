// Reading a MultiGet answer in either of its forms (proto/roost/v1/
// lookup.proto): one GetResponse per key, or the packed form a request with
// `packed` asks for (found values concatenated, the missing keys' indexes,
// and one width or a size per key). A server older than the packed form
// answers a packed request the classic way, so a client that asks for it
// reads whichever comes.
//
// Every inconsistency (a count that does not match the keys, a missing index
// out of order or out of range, sizes that do not add up to the bytes) is
// DataLoss naming it: never a value cut from the wrong place.
//
// Example:
//   request.set_packed(true);
//   ... stub->MultiGet(&context, request, &response) ...
//   ROOST_RETURN_IF_ERROR(ReadMultiGetAnswer(
//       response, request.keys_size(),
//       [&](size_t i, bool found, std::string_view value) { ... }));
#ifndef ROOST_CLIENT_MULTIGET_ANSWER_H_
#define ROOST_CLIENT_MULTIGET_ANSWER_H_

#include <cstddef>
#include <string_view>

#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "roost/v1/lookup.pb.h"

namespace roost {

// Calls emit(i, found, value) for each of the `keys` keys of the request,
// i rising from 0, after the whole answer has been checked (so emit is
// called for every key or for none). A value viewed is valid while
// `response` lives and is not changed; a missing key's is empty.
absl::Status ReadMultiGetAnswer(
    const v1::MultiGetResponse& response, size_t keys,
    absl::FunctionRef<void(size_t, bool, std::string_view)> emit);

}  // namespace roost

#endif  // ROOST_CLIENT_MULTIGET_ANSWER_H_
