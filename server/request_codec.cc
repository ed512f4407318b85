#include "server/request_codec.h"

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/stubs/common.h>
#include <google/protobuf/wire_format_lite.h>

#include <cstring>

#include "util/str_cat.h"

namespace roost {
namespace {

using google::protobuf::internal::WireFormatLite;
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

// Reads protobuf's wire format by the rules of protobuf's own parser
// (parse_context.h, protobuf 3.21), not CodedInputStream's, which differ on
// bytes no encoder writes: a tag or a length is at most 5 bytes (the tag's
// value cut to 32 bits, the length under 2 GiB), a varint at most 10.
class WireReader {
 public:
  explicit WireReader(std::string_view bytes)
      : p_(reinterpret_cast<const uint8_t*>(bytes.data())),
        end_(p_ + bytes.size()) {}

  bool AtEnd() const { return p_ == end_; }

  bool ReadTag(uint32_t* tag) {
    uint64_t value;
    if (!ReadVarint(5, &value)) return false;
    *tag = static_cast<uint32_t>(value);
    return true;
  }
  bool ReadSize(uint32_t* size) {
    uint64_t value;
    if (!ReadVarint(5, &value) || value >= (uint64_t{1} << 31)) return false;
    *size = static_cast<uint32_t>(value);
    return true;
  }
  bool SkipVarint() {
    uint64_t value;
    return ReadVarint(10, &value);
  }
  // The next `n` bytes, or false when fewer are left.
  bool Take(size_t n, std::string_view* out) {
    if (n > static_cast<size_t>(end_ - p_)) return false;
    *out = std::string_view(reinterpret_cast<const char*>(p_), n);
    p_ += n;
    return true;
  }

 private:
  // A varint of at most `max_bytes`; bits past 64 are dropped.
  bool ReadVarint(int max_bytes, uint64_t* value) {
    uint64_t v = 0;
    for (int i = 0; i < max_bytes && p_ < end_; ++i) {
      const uint8_t byte = *p_++;
      if (i < 10) v |= uint64_t{byte & 0x7fu} << (7 * i);
      if (byte < 0x80) {
        *value = v;
        return true;
      }
    }
    return false;
  }

  const uint8_t* p_;
  const uint8_t* const end_;
};

// Protobuf's recursion limit, which bounds how deep groups nest.
constexpr int kMaxGroupDepth = 100;

// Reads fields until the end of the bytes (group == 0) or until the end-group
// tag of group number `group`, calling on_field(number, view) for each
// length-delimited field 1 or 2 of the message itself (not of a group in
// it), and skipping every other field. False where protobuf's parser fails.
template <typename OnField>
bool ReadFields(WireReader& in, uint32_t group, int depth, OnField& on_field) {
  for (;;) {
    if (in.AtEnd()) return group == 0;
    uint32_t tag;
    if (!in.ReadTag(&tag)) return false;
    const uint32_t number = tag >> 3;
    const uint32_t type = tag & 7;
    // A zero tag or an end-group tag ends the parse: only the end of the
    // group being read ends it well.
    if (tag == 0 || type == WireFormatLite::WIRETYPE_END_GROUP) {
      return group != 0 && number == group;
    }
    if (number == 0) return false;
    std::string_view value;
    switch (type) {
      case WireFormatLite::WIRETYPE_VARINT:
        if (!in.SkipVarint()) return false;
        break;
      case WireFormatLite::WIRETYPE_FIXED64:
        if (!in.Take(8, &value)) return false;
        break;
      case WireFormatLite::WIRETYPE_FIXED32:
        if (!in.Take(4, &value)) return false;
        break;
      case WireFormatLite::WIRETYPE_LENGTH_DELIMITED: {
        uint32_t size;
        if (!in.ReadSize(&size) || !in.Take(size, &value)) return false;
        if (group == 0 && (number == kTableField || number == kKeyField)) {
          on_field(static_cast<int>(number), size == 0 ? kEmpty : value);
        }
        break;
      }
      case WireFormatLite::WIRETYPE_START_GROUP:
        if (depth >= kMaxGroupDepth ||
            !ReadFields(in, number, depth + 1, on_field)) {
          return false;
        }
        break;
      default:  // wire types 6 and 7
        return false;
    }
  }
}

// Calls on_field(number, view) for each length-delimited field 1 or 2 of
// `bytes`, skipping every other field; false when the bytes do not parse.
template <typename OnField>
bool ForEachField(std::string_view bytes, OnField&& on_field) {
  WireReader in(bytes);
  return ReadFields(in, 0, 0, on_field);
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
