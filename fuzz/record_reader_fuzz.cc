// record_reader_fuzz: roost-load's input formats, checked against a model.
//
// Input: a 6-byte header, then the input file's bytes.
//   byte 0  bits 0-1 format (tsv, fixed, length-prefixed; 3 is tsv),
//           bits 2-3 key encoding and 4-5 value encoding (raw, hex, base64;
//           3 is raw), bit 6 strip_cr, bit 7 allow_missing_final_newline
//   byte 1  bits 0-1 gzip: 0 the bytes as they are (gunzipped by the reader
//           if they start with the gzip magic bytes), 1 gzipped as one
//           member, 2 as two members, 3 as they are;
//           bits 2-4 buffer_size: 1, 2, 3, 5, 8, 64, 4096 bytes or the
//           default (small windows make records straddle them and grow them)
//   byte 2  key_size, byte 3 value_size (fixed-size records)
//   byte 4  max_key_size (255: the default), byte 5 max_value_size / 4
//           (255: the default)
//
// Every outcome the reader gives (a record, or an error and where) is
// compared with a model of the format written here from the header comment
// of loader/record_reader.h, simply, on the whole input at once: the same
// records in the same order, an error where the model finds a malformed
// record, and the end where it ends. Gzipped input must give exactly what
// the plain bytes give, errors included.
#include <zlib.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "fuzz/fuzz_util.h"
#include "loader/input_hints.h"
#include "loader/record_reader.h"
#include "storage/coding.h"
#include "util/encoding.h"

namespace roost::fuzz {
namespace {

constexpr size_t kHeaderSize = 6;

// One thing Next() gave: a record, an error (its code and message), or the
// end of the input.
struct Outcome {
  enum Kind { kRecord, kError, kEnd } kind = kEnd;
  std::string key, value;
  absl::StatusCode code = absl::StatusCode::kOk;
  std::string message;
  std::string where;  // the reader's Location() at an error

  static Outcome Record(std::string_view key, std::string_view value) {
    Outcome o;
    o.kind = kRecord;
    o.key = key;
    o.value = value;
    return o;
  }
  static Outcome Error(absl::StatusCode code = absl::StatusCode::kOk,
                       std::string message = "", std::string where = "") {
    Outcome o;
    o.kind = kError;
    o.code = code;
    o.message = std::move(message);
    o.where = std::move(where);
    return o;
  }
  static Outcome End() { return Outcome(); }
};

std::string Describe(const Outcome& o) {
  switch (o.kind) {
    case Outcome::kRecord:
      return StrCat("record (", o.key.size(), "-byte key, ", o.value.size(),
                    "-byte value)");
    case Outcome::kError:
      return StrCat("error ", absl::StatusCodeToString(o.code), ": ",
                    o.message);
    case Outcome::kEnd:
      break;
  }
  return "end";
}

std::string Gzip(std::string_view data) {
  z_stream z{};
  // 16 + MAX_WBITS: a gzip wrapper.
  if (deflateInit2(&z, Z_BEST_SPEED, Z_DEFLATED, 16 + MAX_WBITS, 8,
                   Z_DEFAULT_STRATEGY) != Z_OK) {
    Fail("deflateInit2 failed");
  }
  std::string out(deflateBound(&z, data.size()), '\0');
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data()));
  z.avail_in = static_cast<uInt>(data.size());
  z.next_out = reinterpret_cast<Bytef*>(out.data());
  z.avail_out = static_cast<uInt>(out.size());
  if (deflate(&z, Z_FINISH) != Z_STREAM_END) Fail("deflate failed");
  out.resize(z.total_out);
  deflateEnd(&z);
  return out;
}

// What the reader gives for `path`: every outcome up to the end or the
// first error that ends the input (any error of the binary formats, any but
// a malformed line of TSV), which must then repeat. The input holds at most
// `input_size` bytes (after gunzipping).
std::vector<Outcome> Read(const std::string& path,
                          const RecordReaderOptions& options,
                          size_t input_size) {
  std::vector<Outcome> out;
  auto reader = RecordReader::Open(path, options);
  if (!reader.ok()) Fail("cannot open the input: ", reader.status().ToString());
  const bool binary = options.format != InputFormat::kTsv;
  // Each call consumes at least a byte, or ends.
  for (size_t calls = 0;; ++calls) {
    if (calls > input_size + 1) Fail("the reader does not come to an end");
    std::string_view key, value;
    absl::StatusOr<bool> more = (*reader)->Next(&key, &value);
    if (!more.ok()) {
      const std::string message(more.status().message());
      if (more.status().code() == absl::StatusCode::kInvalidArgument &&
          message.rfind((*reader)->Location() + ": ", 0) != 0) {
        Fail("error message \"", message, "\" does not start with ",
             (*reader)->Location());
      }
      out.push_back(
          Outcome::Error(more.status().code(), message, (*reader)->Location()));
      if (!binary && more.status().code() == absl::StatusCode::kInvalidArgument)
        continue;
      absl::StatusOr<bool> again = (*reader)->Next(&key, &value);
      if (again.ok() || again.status() != more.status()) {
        Fail("an error that ends the input does not repeat: ",
             again.status().ToString(), " after ", more.status().ToString());
      }
      return out;
    }
    if (!*more) {
      if (auto again = (*reader)->Next(&key, &value); !again.ok() || *again) {
        Fail("the reader goes on after the end");
      }
      out.push_back(Outcome::End());
      return out;
    }
    if (key.size() > options.max_key_size ||
        value.size() > options.max_value_size) {
      Fail("a record over the limits: ", key.size(), "-byte key, ",
           value.size(), "-byte value");
    }
    if (options.format == InputFormat::kFixed &&
        (key.size() != options.key_size ||
         value.size() != options.value_size)) {
      Fail("a fixed-size record of the wrong size");
    }
    Touch(key);
    Touch(value);
    out.push_back(Outcome::Record(key, value));
  }
}

// The model: each format as record_reader.h describes it, on the whole input.
absl::StatusOr<std::string_view> ModelDecode(Encoding e, std::string_view in,
                                             std::string* buffer) {
  switch (e) {
    case Encoding::kHex:
      return DecodeHexInto(in, "field", buffer);
    case Encoding::kBase64:
      return DecodeBase64Into(in, "field", buffer);
    case Encoding::kRaw:
      break;
  }
  return in;
}

std::vector<Outcome> ModelTsv(std::string_view in,
                              const RecordReaderOptions& o) {
  std::vector<Outcome> out;
  std::string kb, vb;
  size_t pos = 0;
  auto error = [&] { out.push_back(Outcome::Error()); };
  // An input plainly of another format is refused whole, on its first
  // kSniffBytes bytes (all of them when it is shorter).
  if (OtherFormat(in.substr(0, kSniffBytes), in.size() < kSniffBytes, "in")) {
    error();
    return out;
  }
  while (pos < in.size()) {
    const size_t newline = in.find('\n', pos);
    // A last line without its newline: input cut short, which ends it.
    if (newline == std::string_view::npos && !o.allow_missing_final_newline) {
      error();
      return out;
    }
    const size_t end = newline == std::string_view::npos ? in.size() : newline;
    std::string_view line = in.substr(pos, end - pos);
    pos = newline == std::string_view::npos ? in.size() : newline + 1;
    if (o.strip_cr && !line.empty() && line.back() == '\r') {
      line.remove_suffix(1);
    }
    if (line.empty()) {
      // An empty last line is no record; any other is one without a tab.
      if (pos == in.size()) break;
      error();
      continue;
    }
    const size_t tab = line.find('\t');
    if (tab == std::string_view::npos) {
      error();
      continue;
    }
    auto k = ModelDecode(o.key_encoding, line.substr(0, tab), &kb);
    if (!k.ok() || k->size() > o.max_key_size) {
      error();
      continue;
    }
    auto v = ModelDecode(o.value_encoding, line.substr(tab + 1), &vb);
    if (!v.ok() || v->size() > o.max_value_size) {
      error();
      continue;
    }
    out.push_back(Outcome::Record(*k, *v));
  }
  out.push_back(Outcome::End());
  return out;
}

std::vector<Outcome> ModelBinary(std::string_view in,
                                 const RecordReaderOptions& o) {
  std::vector<Outcome> out;
  size_t pos = 0;
  while (pos < in.size()) {
    uint64_t key_size = o.key_size, value_size = o.value_size;
    size_t header = 0;
    if (o.format == InputFormat::kLengthPrefixed) {
      const char* p = in.data() + pos;
      const char* limit = in.data() + in.size();
      p = DecodeVarint64(p, limit, &key_size);
      if (p != nullptr) p = DecodeVarint64(p, limit, &value_size);
      if (p == nullptr) break;
      header = static_cast<size_t>(p - (in.data() + pos));
    }
    if (key_size > o.max_key_size || value_size > o.max_value_size ||
        in.size() - pos - header < key_size ||
        in.size() - pos - header - key_size < value_size) {
      break;
    }
    out.push_back(
        Outcome::Record(in.substr(pos + header, key_size),
                        in.substr(pos + header + key_size, value_size)));
    pos += header + key_size + value_size;
  }
  out.push_back(pos < in.size() ? Outcome::Error() : Outcome::End());
  return out;
}

// With `compare_errors`, errors must also agree on their code and where
// they are, and on their message unless it is a malformed TSV line: a line
// too long for the limits is named as such when it does not fit the window
// and by the field that is too long when it does, so how the bytes arrive
// may change the words but not the line or the code.
void Compare(const std::vector<Outcome>& got, const std::vector<Outcome>& want,
             std::string_view what, bool compare_errors, bool tsv) {
  for (size_t i = 0; i < std::max(got.size(), want.size()); ++i) {
    if (i >= got.size() || i >= want.size()) {
      Fail(what, ": ", got.size(), " outcomes where ", want.size(),
           " were expected");
    }
    const Outcome& g = got[i];
    const Outcome& w = want[i];
    const bool any_words = tsv && g.code == absl::StatusCode::kInvalidArgument;
    const bool same =
        g.kind == w.kind && g.key == w.key && g.value == w.value &&
        (!compare_errors || (g.code == w.code && g.where == w.where &&
                             (any_words || g.message == w.message)));
    if (!same) {
      Fail(what, ": outcome ", i, " is ", Describe(g), " where ", Describe(w),
           " was expected");
    }
  }
}

}  // namespace
}  // namespace roost::fuzz

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace roost;
  using fuzz::Outcome;
  if (size < fuzz::kHeaderSize) return 0;
  const uint8_t* h = data;
  RecordReaderOptions o;
  constexpr InputFormat kFormats[] = {InputFormat::kTsv, InputFormat::kFixed,
                                      InputFormat::kLengthPrefixed,
                                      InputFormat::kTsv};
  constexpr Encoding kEncodings[] = {Encoding::kRaw, Encoding::kHex,
                                     Encoding::kBase64, Encoding::kRaw};
  o.format = kFormats[h[0] & 3];
  o.key_encoding = kEncodings[(h[0] >> 2) & 3];
  o.value_encoding = kEncodings[(h[0] >> 4) & 3];
  o.strip_cr = (h[0] >> 6) & 1;
  o.allow_missing_final_newline = (h[0] >> 7) & 1;
  const int gzip = h[1] & 3;
  constexpr size_t kBufferSizes[] = {1, 2, 3, 5, 8, 64, 4096, 0};
  if (const size_t b = kBufferSizes[(h[1] >> 2) & 7]; b != 0) {
    o.buffer_size = b;
  }
  o.key_size = h[2];
  o.value_size = h[3];
  if (h[4] != 255) o.max_key_size = h[4];
  if (h[5] != 255) o.max_value_size = uint64_t{h[5]} * 4;

  const std::string plain(
      reinterpret_cast<const char*>(data) + fuzz::kHeaderSize,
      size - fuzz::kHeaderSize);
  if (o.format == InputFormat::kFixed && o.key_size + o.value_size == 0) {
    if (RecordReader::Open("/dev/null", o).ok()) {
      fuzz::Fail("fixed-size records of no bytes were not refused");
    }
    return 0;
  }
  const std::vector<Outcome> want = o.format == InputFormat::kTsv
                                        ? fuzz::ModelTsv(plain, o)
                                        : fuzz::ModelBinary(plain, o);
  const bool gzip_magic = plain.size() >= 2 &&
                          static_cast<uint8_t>(plain[0]) == 0x1f &&
                          static_cast<uint8_t>(plain[1]) == 0x8b;
  const std::string path = fuzz::ScratchPath("input");
  fuzz::WriteFileOrDie(path, plain);
  // Deflate makes at most 1032 bytes of one.
  const std::vector<Outcome> got =
      fuzz::Read(path, o, gzip_magic ? 1032 * plain.size() : plain.size());
  // The model knows nothing of gzip.
  const bool tsv = o.format == InputFormat::kTsv;
  if (!gzip_magic) fuzz::Compare(got, want, "plain input", false, tsv);

  if ((gzip == 1 || gzip == 2) && !gzip_magic) {
    std::string gz;
    if (gzip == 1) {
      gz = fuzz::Gzip(plain);
    } else {
      const size_t half = plain.size() / 2;
      gz = fuzz::Gzip(std::string_view(plain).substr(0, half)) +
           fuzz::Gzip(std::string_view(plain).substr(half));
    }
    fuzz::WriteFileOrDie(path, gz);
    fuzz::Compare(fuzz::Read(path, o, plain.size()), got, "gzipped input", true,
                  tsv);
  }
  return 0;
}
