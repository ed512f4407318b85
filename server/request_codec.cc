#include "server/request_codec.h"

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/stubs/common.h>
#include <google/protobuf/wire_format_lite.h>

#include <cstring>

#include "storage/str_cat.h"

namespace roost {
namespace {

using google::protobuf::internal::WireFormatLite;
using google::protobuf::io::CodedInputStream;
using google::protobuf::io::CodedOutputStream;

constexpr int kTableField = 1;
constexpr int kKeyField = 2;         // `key` of GetRequest, `keys` of MultiGet
constexpr uint8_t kFoundTag = 0x08;  // field 1, varint
constexpr uint8_t kValueTag = 0x12;  // field 2, length-delimited
constexpr uint8_t kEntryTag = 0x0a;  // field 1, length-delimited
// Empty fields point here rather than at null, as a protobuf string would.
constexpr std::string_view kEmpty("", 0);

absl::Status Malformed(std::string_view message) {
  return absl::InvalidArgumentError(
      StrCat("malformed request: not a roost.v1.", message));
}

// Calls on_field(number, view) for each length-delimited field 1 or 2 of
// `bytes`, skipping every other field; false when the bytes do not parse.
template <typename OnField>
bool ForEachField(std::string_view bytes, OnField&& on_field) {
  CodedInputStream in(reinterpret_cast<const uint8_t*>(bytes.data()),
                      static_cast<int>(bytes.size()));
  for (;;) {
    const uint32_t tag = in.ReadTag();
    if (tag == 0) return in.ConsumedEntireMessage();
    const int number = WireFormatLite::GetTagFieldNumber(tag);
    const auto type = WireFormatLite::GetTagWireType(tag);
    if ((number == kTableField || number == kKeyField) &&
        type == WireFormatLite::WIRETYPE_LENGTH_DELIMITED) {
      uint32_t length;
      const void* data;
      int available;
      if (!in.ReadVarint32(&length)) return false;
      if (length == 0) {
        on_field(number, kEmpty);
        continue;
      }
      // The stream reads a flat array, so what is left of it is directly
      // addressable.
      if (!in.GetDirectBufferPointer(&data, &available) ||
          static_cast<uint32_t>(available) < length) {
        return false;
      }
      on_field(number,
               std::string_view(static_cast<const char*>(data), length));
      in.Skip(static_cast<int>(length));
    } else if (!WireFormatLite::SkipField(&in, tag)) {
      return false;
    }
  }
}

// Protobuf checks every occurrence of a string field as it parses, not only
// the one that wins: so does the codec.
bool IsUtf8(std::string_view s) {
  return google::protobuf::internal::IsStructurallyValidUTF8(
      s.data(), static_cast<int>(s.size()));
}

absl::Status TableStatus(bool utf8) {
  return utf8 ? absl::OkStatus()
              : absl::InvalidArgumentError("table name is not valid UTF-8");
}

size_t VarintSize(uint64_t n) { return CodedOutputStream::VarintSize64(n); }

char* WriteVarint(uint64_t n, char* out) {
  return reinterpret_cast<char*>(CodedOutputStream::WriteVarint64ToArray(
      n, reinterpret_cast<uint8_t*>(out)));
}

// Proto3 leaves out a false `found` and an empty `value`.
size_t BodySize(const EncodedResult& r) {
  if (!r.found) return 0;
  size_t n = 2;  // found = true
  if (!r.value.empty()) n += 1 + VarintSize(r.value.size()) + r.value.size();
  return n;
}

}  // namespace

absl::Status ParseGetRequest(std::string_view bytes, LookupRequest* request) {
  request->table = kEmpty;
  request->keys.assign(1, kEmpty);
  request->total_keys = 1;
  bool utf8 = true;
  const bool ok = ForEachField(bytes, [&](int number, std::string_view v) {
    if (number == kTableField) {
      request->table = v;
      utf8 = utf8 && IsUtf8(v);
    } else {
      request->keys[0] = v;
    }
  });
  if (!ok) return Malformed("GetRequest");
  return TableStatus(utf8);
}

absl::Status ParseMultiGetRequest(std::string_view bytes, size_t max_keys,
                                  LookupRequest* request) {
  request->table = kEmpty;
  request->keys.clear();
  size_t keys = 0;
  bool utf8 = true;
  const bool ok = ForEachField(bytes, [&](int number, std::string_view v) {
    if (number == kTableField) {
      request->table = v;
      utf8 = utf8 && IsUtf8(v);
    } else if (++keys <= max_keys) {
      request->keys.push_back(v);
    }
  });
  request->total_keys = keys;
  if (!ok) return Malformed("MultiGetRequest");
  return TableStatus(utf8);
}

size_t GetResponseSize(const EncodedResult& result) { return BodySize(result); }

size_t MultiGetEntrySize(const EncodedResult& result) {
  const size_t body = BodySize(result);
  return 1 + VarintSize(body) + body;
}

char* WriteGetResponse(const EncodedResult& result, char* out) {
  if (!result.found) return out;
  *out++ = static_cast<char>(kFoundTag);
  *out++ = 1;
  if (!result.value.empty()) {
    *out++ = static_cast<char>(kValueTag);
    out = WriteVarint(result.value.size(), out);
    std::memcpy(out, result.value.data(), result.value.size());
    out += result.value.size();
  }
  return out;
}

char* WriteMultiGetEntry(const EncodedResult& result, char* out) {
  *out++ = static_cast<char>(kEntryTag);
  out = WriteVarint(BodySize(result), out);
  return WriteGetResponse(result, out);
}

}  // namespace roost
