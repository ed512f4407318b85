#include "server/request_codec.h"

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/stubs/common.h>
#include <google/protobuf/wire_format_lite.h>

#include <cstring>

#include "storage/version/data_dir.h"
#include "util/escape.h"
#include "util/status_macros.h"
#include "util/str_cat.h"

namespace roost {
namespace {

using google::protobuf::internal::WireFormatLite;
using google::protobuf::io::CodedOutputStream;

constexpr uint32_t kTableField = 1;
constexpr uint32_t kKeyField = 2;  // `key` of GetRequest, `keys` of MultiGet
constexpr uint32_t kLookupVersionField = 3;   // of GetRequest, MultiGetRequest
constexpr uint32_t kPackedField = 4;          // MultiGetRequest.packed
constexpr uint32_t kGetFieldsField = 4;       // GetRequest.fields
constexpr uint32_t kMultiGetFieldsField = 5;  // MultiGetRequest.fields
constexpr uint32_t kScoreField = 6;           // MultiGetRequest.score
// Score's fields.
constexpr uint32_t kScoreFieldField = 1;
constexpr uint32_t kScoreSimilarityField = 2;
constexpr uint32_t kScoreQueryField = 3;
constexpr uint32_t kScoreTopKField = 4;
constexpr uint32_t kScanStartField = 2;
constexpr uint32_t kScanEndField = 3;
constexpr uint32_t kScanPrefixField = 4;
constexpr uint32_t kScanLimitField = 5;
constexpr uint32_t kScanVersionField = 6;
constexpr uint8_t kFoundTag = 0x08;  // field 1, varint
constexpr uint8_t kValueTag = 0x12;  // field 2, length-delimited
constexpr uint8_t kEntryTag = 0x0a;  // field 1, length-delimited
constexpr uint8_t kMoreTag = 0x18;   // field 3, varint
// MultiGetResponse's packed form: fields 3, 4 and 5, length-delimited.
constexpr uint8_t kPackedValuesTag = 0x1a;
constexpr uint8_t kPackedSizesTag = 0x22;
constexpr uint8_t kMissingTag = 0x2a;
constexpr uint8_t kPackedWidthTag = 0x30;  // field 6, varint
constexpr uint8_t kScoresTag = 0x3a;       // field 7, length-delimited
constexpr uint8_t kTopTag = 0x42;          // field 8, length-delimited
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
  bool ReadVarint64(uint64_t* value) { return ReadVarint(10, value); }
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

// One field of a message, as ReadFields() hands it over: a length-delimited
// field's bytes, or a varint field's value.
struct Field {
  uint32_t number;
  uint32_t type;  // a WireFormatLite::WIRETYPE_*
  std::string_view bytes;
  uint64_t varint = 0;
};

// Reads fields until the end of the bytes (group == 0) or until the end-group
// tag of group number `group`, calling on_field(field) for each
// length-delimited, varint or fixed32 field of the message itself (not of a
// group in it), and skipping every other field. False where protobuf's
// parser fails.
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
      case WireFormatLite::WIRETYPE_VARINT: {
        uint64_t v;
        if (!in.ReadVarint64(&v)) return false;
        if (group == 0) on_field(Field{number, type, {}, v});
        break;
      }
      case WireFormatLite::WIRETYPE_FIXED64:
        if (!in.Take(8, &value)) return false;
        break;
      case WireFormatLite::WIRETYPE_FIXED32:
        if (!in.Take(4, &value)) return false;
        if (group == 0) on_field(Field{number, type, value});
        break;
      case WireFormatLite::WIRETYPE_LENGTH_DELIMITED: {
        uint32_t size;
        if (!in.ReadSize(&size) || !in.Take(size, &value)) return false;
        if (group == 0)
          on_field(Field{number, type, size == 0 ? kEmpty : value});
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

// Calls on_field(field) for each length-delimited, varint or fixed32 field
// of `bytes`, skipping every other field; false when the bytes do not parse.
template <typename OnField>
bool ForEachField(std::string_view bytes, OnField&& on_field) {
  WireReader in(bytes);
  return ReadFields(in, 0, 0, on_field);
}

bool IsString(const Field& f) {
  return f.type == WireFormatLite::WIRETYPE_LENGTH_DELIMITED;
}

// Protobuf checks every occurrence of a string field as it parses, not only
// the one that wins: so does the codec.
bool IsUtf8(std::string_view s) {
  return google::protobuf::internal::IsStructurallyValidUTF8(
      s.data(), static_cast<int>(s.size()));
}

bool IsFixed32(const Field& f) {
  return f.type == WireFormatLite::WIRETYPE_FIXED32;
}

// Merges one occurrence of MultiGetRequest.score into `*score`, as protobuf
// merges a message field: the last field, similarity and top_k, the query
// floats of every occurrence, packed or not. False where protobuf fails (a
// packed query that is not whole floats, or bytes that do not parse).
bool MergeScore(std::string_view bytes, LookupRequest::Score* score,
                bool* utf8) {
  bool whole = true;
  const bool ok = ForEachField(bytes, [&](const Field& f) {
    switch (f.number) {
      case kScoreFieldField:
        if (IsString(f)) {
          score->field = f.bytes;
          *utf8 = *utf8 && IsUtf8(f.bytes);
        }
        break;
      case kScoreSimilarityField:
        // An enum is an int32: protobuf keeps the low 32 bits.
        if (f.type == WireFormatLite::WIRETYPE_VARINT) {
          score->similarity = static_cast<int32_t>(f.varint);
        }
        break;
      case kScoreQueryField:
        if (IsFixed32(f) || IsString(f)) {
          if (f.bytes.size() % 4 != 0) {
            whole = false;
            break;
          }
          // An empty packed field adds nothing; an empty vector's data() may
          // be null, which memcpy must not be given even for 0 bytes.
          if (f.bytes.empty()) break;
          const size_t at = score->query.size();
          score->query.resize(at + f.bytes.size() / 4);
          std::memcpy(score->query.data() + at, f.bytes.data(), f.bytes.size());
        }
        break;
      case kScoreTopKField:
        if (f.type == WireFormatLite::WIRETYPE_VARINT) {
          score->top_k = static_cast<uint32_t>(f.varint);
        }
        break;
      default:
        break;
    }
  });
  return ok && whole;
}

absl::Status StringStatus(bool table_utf8, bool version_utf8) {
  if (!table_utf8) {
    return absl::InvalidArgumentError("table name is not valid UTF-8");
  }
  if (!version_utf8) {
    return absl::InvalidArgumentError("version is not valid UTF-8");
  }
  return absl::OkStatus();
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

// The request's version field, checked: empty (none asked for) or a
// version's name or number.
absl::Status CheckVersion(std::string_view text, uint64_t* version) {
  *version = 0;
  if (text.empty()) return absl::OkStatus();
  if (auto v = ParseVersionText(text)) {
    *version = *v;
    return absl::OkStatus();
  }
  return absl::InvalidArgumentError(
      StrCat("bad version ", PrintableKey(text, 64),
             " (expected a version such as v000007 or 7)"));
}

}  // namespace

std::string EncodeVersionField(int number, std::string_view name) {
  std::string out;
  out.push_back(static_cast<char>(WireFormatLite::MakeTag(
      number, WireFormatLite::WIRETYPE_LENGTH_DELIMITED)));
  char size[10];
  out.append(size, WriteVarint(name.size(), size) - size);
  out.append(name);
  return out;
}

absl::Status ParseGetRequest(std::string_view bytes, LookupRequest* request) {
  request->table = kEmpty;
  request->keys.assign(1, kEmpty);
  request->total_keys = 1;
  request->fields.clear();
  request->has_score = false;
  std::string_view version = kEmpty;
  bool table_utf8 = true;
  bool version_utf8 = true;
  bool fields_utf8 = true;
  const bool ok = ForEachField(bytes, [&](const Field& f) {
    if (!IsString(f)) return;
    if (f.number == kTableField) {
      request->table = f.bytes;
      table_utf8 = table_utf8 && IsUtf8(f.bytes);
    } else if (f.number == kKeyField) {
      request->keys[0] = f.bytes;
    } else if (f.number == kLookupVersionField) {
      version = f.bytes;
      version_utf8 = version_utf8 && IsUtf8(f.bytes);
    } else if (f.number == kGetFieldsField) {
      request->fields.push_back(f.bytes);
      fields_utf8 = fields_utf8 && IsUtf8(f.bytes);
    }
  });
  if (!ok) return Malformed("GetRequest");
  ROOST_RETURN_IF_ERROR(StringStatus(table_utf8, version_utf8));
  if (!fields_utf8) {
    return absl::InvalidArgumentError("a field name is not valid UTF-8");
  }
  return CheckVersion(version, &request->version);
}

absl::Status ParseMultiGetRequest(std::string_view bytes, size_t max_keys,
                                  LookupRequest* request) {
  request->table = kEmpty;
  request->keys.clear();
  request->packed = false;
  request->fields.clear();
  request->has_score = false;
  request->score.field = kEmpty;
  request->score.similarity = 0;
  request->score.query.clear();
  request->score.top_k = 0;
  size_t keys = 0;
  std::string_view version = kEmpty;
  bool table_utf8 = true;
  bool version_utf8 = true;
  bool fields_utf8 = true;
  bool score_ok = true;
  const bool ok = ForEachField(bytes, [&](const Field& f) {
    if (f.type == WireFormatLite::WIRETYPE_VARINT) {
      // A bool is true when any of the varint's bits is; the last wins.
      if (f.number == kPackedField) request->packed = f.varint != 0;
      return;
    }
    if (!IsString(f)) return;
    if (f.number == kTableField) {
      request->table = f.bytes;
      table_utf8 = table_utf8 && IsUtf8(f.bytes);
    } else if (f.number == kKeyField) {
      if (++keys <= max_keys) request->keys.push_back(f.bytes);
    } else if (f.number == kLookupVersionField) {
      version = f.bytes;
      version_utf8 = version_utf8 && IsUtf8(f.bytes);
    } else if (f.number == kMultiGetFieldsField) {
      request->fields.push_back(f.bytes);
      fields_utf8 = fields_utf8 && IsUtf8(f.bytes);
    } else if (f.number == kScoreField) {
      request->has_score = true;
      score_ok = score_ok && MergeScore(f.bytes, &request->score, &fields_utf8);
    }
  });
  request->total_keys = keys;
  if (!ok || !score_ok) return Malformed("MultiGetRequest");
  ROOST_RETURN_IF_ERROR(StringStatus(table_utf8, version_utf8));
  if (!fields_utf8) {
    return absl::InvalidArgumentError("a field name is not valid UTF-8");
  }
  return CheckVersion(version, &request->version);
}

absl::Status ParseScanRequest(std::string_view bytes, ScanQuery* query) {
  *query = ScanQuery();
  query->table = query->start = query->end = query->prefix = kEmpty;
  std::string_view version = kEmpty;
  bool table_utf8 = true;
  bool version_utf8 = true;
  const bool ok = ForEachField(bytes, [&](const Field& f) {
    if (f.type == WireFormatLite::WIRETYPE_VARINT) {
      // uint32: protobuf keeps the low 32 bits.
      if (f.number == kScanLimitField) {
        query->limit = static_cast<uint32_t>(f.varint);
      }
      return;
    }
    if (!IsString(f)) return;
    switch (f.number) {
      case kTableField:
        query->table = f.bytes;
        table_utf8 = table_utf8 && IsUtf8(f.bytes);
        break;
      case kScanStartField:
        query->start = f.bytes;
        break;
      case kScanEndField:
        query->end = f.bytes;
        break;
      case kScanPrefixField:
        query->prefix = f.bytes;
        break;
      case kScanVersionField:
        version = f.bytes;
        version_utf8 = version_utf8 && IsUtf8(f.bytes);
        break;
      default:
        break;
    }
  });
  if (!ok) return Malformed("ScanRequest");
  ROOST_RETURN_IF_ERROR(StringStatus(table_utf8, version_utf8));
  return CheckVersion(version, &query->version);
}

void AppendScores(std::span<const float> scores, std::string* out) {
  if (scores.empty()) return;
  out->push_back(static_cast<char>(kScoresTag));
  char size[10];
  out->append(size, WriteVarint(scores.size() * 4, size) - size);
  out->append(reinterpret_cast<const char*>(scores.data()), scores.size() * 4);
}

void AppendTop(std::span<const uint32_t> top, std::string* out) {
  if (top.empty()) return;
  size_t body = 0;
  for (uint32_t i : top) body += VarintSize(i);
  out->push_back(static_cast<char>(kTopTag));
  char buf[10];
  out->append(buf, WriteVarint(body, buf) - buf);
  for (uint32_t i : top) out->append(buf, WriteVarint(i, buf) - buf);
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

namespace {

// A length-delimited field's tag and length; `size` bytes follow.
size_t FieldHeaderSize(size_t size) { return 1 + VarintSize(size); }
char* WriteFieldHeader(uint8_t tag, size_t size, char* out) {
  *out++ = static_cast<char>(tag);
  return WriteVarint(size, out);
}
// Proto3 leaves an empty field out.
size_t FieldSize(size_t size) {
  return size == 0 ? 0 : FieldHeaderSize(size) + size;
}

}  // namespace

void PackedMultiGet::Count(const EncodedResult& result) {
  const size_t n = result.found ? result.value.size() : 0;
  values_ += n;
  sizes_bytes_ += VarintSize(n);
  if (!result.found) {
    missing_bytes_ += VarintSize(keys_);
  } else if (n == 0 || (width_ != 0 && width_ != n)) {
    width_ = kMixedWidths;  // an empty value, or a second size
  } else {
    width_ = n;
  }
  ++keys_;
}

size_t PackedMultiGet::size() const {
  const size_t sizes =
      width() > 0 ? 1 + VarintSize(width()) : FieldSize(sizes_bytes_);
  return FieldSize(values_) + sizes + FieldSize(missing_bytes_);
}

void PackedMultiGet::Start(char* out) {
  // Each field's bytes are known from Count(): the regions are laid out
  // now, in field order as protobuf writes them, and filled side by side
  // as the results are written.
  if (values_ > 0) out = WriteFieldHeader(kPackedValuesTag, values_, out);
  values_out_ = out;
  out += values_;
  sizes_out_ = nullptr;  // none written with a width
  if (width() == 0) {
    if (sizes_bytes_ > 0) {
      out = WriteFieldHeader(kPackedSizesTag, sizes_bytes_, out);
    }
    sizes_out_ = out;
    out += sizes_bytes_;
  }
  if (missing_bytes_ > 0) {
    out = WriteFieldHeader(kMissingTag, missing_bytes_, out);
  }
  missing_out_ = out;
  out += missing_bytes_;
  if (width() > 0) {
    *out++ = static_cast<char>(kPackedWidthTag);
    out = WriteVarint(width(), out);
  }
  end_ = out;
  keys_ = 0;
}

void PackedMultiGet::Write(const EncodedResult& result) {
  if (result.found) {
    if (!result.value.empty()) {  // memcpy takes no null pointer
      std::memcpy(values_out_, result.value.data(), result.value.size());
      values_out_ += result.value.size();
    }
  } else {
    missing_out_ = WriteVarint(keys_, missing_out_);
  }
  if (sizes_out_ != nullptr) {
    sizes_out_ =
        WriteVarint(result.found ? result.value.size() : 0, sizes_out_);
  }
  ++keys_;
}

namespace {

size_t KeyValueBodySize(std::string_view key, std::string_view value) {
  size_t n = 0;
  if (!key.empty()) n += 1 + VarintSize(key.size()) + key.size();
  if (!value.empty()) n += 1 + VarintSize(value.size()) + value.size();
  return n;
}

char* WriteBytesField(uint8_t tag, std::string_view bytes, char* out) {
  if (bytes.empty()) return out;  // proto3 leaves an empty field out
  *out++ = static_cast<char>(tag);
  out = WriteVarint(bytes.size(), out);
  std::memcpy(out, bytes.data(), bytes.size());
  return out + bytes.size();
}

}  // namespace

size_t ScanEntrySize(std::string_view key, std::string_view value) {
  const size_t body = KeyValueBodySize(key, value);
  return 1 + VarintSize(body) + body;
}

char* WriteScanEntry(std::string_view key, std::string_view value, char* out) {
  *out++ = static_cast<char>(kEntryTag);
  out = WriteVarint(KeyValueBodySize(key, value), out);
  out = WriteBytesField(kEntryTag, key, out);  // KeyValue.key: field 1
  return WriteBytesField(kValueTag, value, out);
}

char* WriteScanMore(char* out) {
  *out++ = static_cast<char>(kMoreTag);
  *out++ = 1;
  return out;
}

}  // namespace roost
