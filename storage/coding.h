// Fixed-width little-endian integers and varints, read from and written to
// byte buffers. Every decoder is bounded: it takes the end of the buffer and
// fails rather than read past it.
#ifndef ROOST_STORAGE_CODING_H_
#define ROOST_STORAGE_CODING_H_

#include <bit>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

namespace roost {

// The host must be little-endian (x86-64, aarch64): the formats store
// integers little-endian and read them with memcpy.
static_assert(std::endian::native == std::endian::little,
              "roost's formats assume a little-endian host");

inline uint16_t DecodeFixed16(const char* p) {
  uint16_t v;
  std::memcpy(&v, p, sizeof(v));
  return v;
}
inline uint32_t DecodeFixed32(const char* p) {
  uint32_t v;
  std::memcpy(&v, p, sizeof(v));
  return v;
}
inline uint64_t DecodeFixed64(const char* p) {
  uint64_t v;
  std::memcpy(&v, p, sizeof(v));
  return v;
}
inline void EncodeFixed16(char* p, uint16_t v) {
  std::memcpy(p, &v, sizeof(v));
}
inline void EncodeFixed32(char* p, uint32_t v) {
  std::memcpy(p, &v, sizeof(v));
}
inline void EncodeFixed64(char* p, uint64_t v) {
  std::memcpy(p, &v, sizeof(v));
}

inline void PutFixed32(std::string* dst, uint32_t v) {
  char buf[sizeof(v)];
  EncodeFixed32(buf, v);
  dst->append(buf, sizeof(buf));
}
inline void PutFixed64(std::string* dst, uint64_t v) {
  char buf[sizeof(v)];
  EncodeFixed64(buf, v);
  dst->append(buf, sizeof(buf));
}

// The longest varint64 encoding, in bytes.
inline constexpr int kMaxVarint64Length = 10;

// Writes `v` as a varint (7 bits a byte, low bits first) at `p` and returns
// the byte after it. REQUIRES: `p` has room for kMaxVarint64Length bytes.
inline char* EncodeVarint64(char* p, uint64_t v) {
  auto* out = reinterpret_cast<unsigned char*>(p);
  while (v >= 0x80) {
    *out++ = static_cast<unsigned char>(v | 0x80);
    v >>= 7;
  }
  *out++ = static_cast<unsigned char>(v);
  return reinterpret_cast<char*>(out);
}

inline void PutVarint64(std::string* dst, uint64_t v) {
  char buf[kMaxVarint64Length];
  dst->append(buf, EncodeVarint64(buf, v) - buf);
}

inline int VarintLength(uint64_t v) {
  int len = 1;
  while (v >= 0x80) {
    v >>= 7;
    ++len;
  }
  return len;
}

// Decodes a varint from [p, limit) into *v. Returns the byte after it, or
// nullptr if the varint is truncated or longer than 64 bits.
inline const char* DecodeVarint64(const char* p, const char* limit,
                                  uint64_t* v) {
  uint64_t result = 0;
  for (int shift = 0; shift <= 63 && p < limit; shift += 7) {
    const uint64_t byte = static_cast<unsigned char>(*p++);
    if (shift == 63 && byte > 1) return nullptr;  // overflows 64 bits
    result |= (byte & 0x7f) << shift;
    if ((byte & 0x80) == 0) {
      *v = result;
      return p;
    }
  }
  return nullptr;
}

}  // namespace roost

#endif  // ROOST_STORAGE_CODING_H_
