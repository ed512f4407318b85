// The kernels: a portable one the compiler may vectorize with baseline
// SSE2, and an AVX2+FMA one compiled for those instructions alone
// (__attribute__((target))), chosen once by what the CPU reports. Both add
// in a fixed order, so a kernel's result does not depend on the call; the
// accuracy bound they share is derived in vector_math.h. Hand-written
// because scoring is the hot path of a scored MultiGet (a row's 128 floats
// in ~10 ns), and no Debian library offers an unaligned float dot product
// with runtime dispatch and a stated error bound.
#include "storage/row/vector_math.h"

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstring>
#include <limits>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace roost {
namespace vector_math_internal {
namespace {

constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();

inline float LoadFloat(const char* p) {
  float f;
  std::memcpy(&f, p, sizeof(f));
  return f;
}

// acc[0..7] added pairwise: 3 roundings for each partial sum.
inline float Sum8(const float* acc) {
  return ((acc[0] + acc[4]) + (acc[2] + acc[6])) +
         ((acc[1] + acc[5]) + (acc[3] + acc[7]));
}

#if defined(__x86_64__)
// The 8 lanes of `x` added pairwise: 3 roundings.
__attribute__((target("avx2,fma"))) inline float HorizontalSum(__m256 x) {
  __m128 s = _mm_add_ps(_mm256_castps256_ps128(x), _mm256_extractf128_ps(x, 1));
  s = _mm_add_ps(s, _mm_movehl_ps(s, s));
  s = _mm_add_ss(s, _mm_movehdup_ps(s));
  return _mm_cvtss_f32(s);
}

__attribute__((target("avx2,fma"))) inline __m256 LoadVector(const char* p) {
  return _mm256_loadu_ps(reinterpret_cast<const float*>(p));
}

// The last n % 8 values of each side, zero-padded to 8 lanes (a masked load
// would do, but this reads no byte past either end, which ASan can check).
struct Tail {
  alignas(32) float v[8] = {};
  alignas(32) float q[8] = {};
  Tail(const char* vector_bytes, const float* query, size_t count) {
    std::memcpy(v, vector_bytes, count * sizeof(float));
    std::memcpy(q, query, count * sizeof(float));
  }
};
#endif

}  // namespace

bool HasAvx2Fma() {
#if defined(__x86_64__)
  static const bool has = [] {
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  }();
  return has;
#else
  return false;
#endif
}

// 8 partial sums, a value's product added to sum i % 8: a term passes
// through 1 rounding of its product, ceil(n / 8) of the additions, and 3 of
// Sum8's.
float DotProductScalar(const char* vector_bytes, const float* query, size_t n) {
  float acc[8] = {};
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    for (size_t j = 0; j < 8; ++j) {
      acc[j] += LoadFloat(vector_bytes + 4 * (i + j)) * query[i + j];
    }
  }
  for (size_t j = 0; i + j < n; ++j) {
    acc[j] += LoadFloat(vector_bytes + 4 * (i + j)) * query[i + j];
  }
  return Sum8(acc);
}

namespace {

// The squares as DotProductScalar sums the products: the same partial sums,
// the same bound.
float SquaresScalar(const char* vector_bytes, size_t n) {
  float acc[8] = {};
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    for (size_t j = 0; j < 8; ++j) {
      const float v = LoadFloat(vector_bytes + 4 * (i + j));
      acc[j] += v * v;
    }
  }
  for (size_t j = 0; i + j < n; ++j) {
    const float v = LoadFloat(vector_bytes + 4 * (i + j));
    acc[j] += v * v;
  }
  return Sum8(acc);
}

}  // namespace

// Two passes over v (the second from L1), each vectorized as
// DotProductScalar is: GCC 12 leaves one loop of both sums scalar, 84 ns at
// n = 128 against 23 ns this way (bench/vector_math_bench).
DotAndSquares DotAndSquaresScalar(const char* vector_bytes, const float* query,
                                  size_t n) {
  return {DotProductScalar(vector_bytes, query, n),
          SquaresScalar(vector_bytes, n)};
}

#if defined(__x86_64__)
// 4 accumulators of 8 lanes take 32 values a step; up to 3 steps of 8 more
// go to the first, the zero-padded tail to the second. A lane's sum passes
// through at most n / 32 + 3 fused multiply-adds (one rounding each), then 2
// roundings joining the 4 accumulators and 3 joining the lanes.
__attribute__((target("avx2,fma"))) float DotProductAvx2(
    const char* vector_bytes, const float* query, size_t n) {
  __m256 a0 = _mm256_setzero_ps();
  __m256 a1 = _mm256_setzero_ps();
  __m256 a2 = _mm256_setzero_ps();
  __m256 a3 = _mm256_setzero_ps();
  size_t i = 0;
  for (; i + 32 <= n; i += 32) {
    const char* v = vector_bytes + 4 * i;
    a0 = _mm256_fmadd_ps(LoadVector(v), _mm256_loadu_ps(query + i), a0);
    a1 =
        _mm256_fmadd_ps(LoadVector(v + 32), _mm256_loadu_ps(query + i + 8), a1);
    a2 = _mm256_fmadd_ps(LoadVector(v + 64), _mm256_loadu_ps(query + i + 16),
                         a2);
    a3 = _mm256_fmadd_ps(LoadVector(v + 96), _mm256_loadu_ps(query + i + 24),
                         a3);
  }
  for (; i + 8 <= n; i += 8) {
    a0 = _mm256_fmadd_ps(LoadVector(vector_bytes + 4 * i),
                         _mm256_loadu_ps(query + i), a0);
  }
  if (i < n) {
    const Tail tail(vector_bytes + 4 * i, query + i, n - i);
    a1 = _mm256_fmadd_ps(_mm256_load_ps(tail.v), _mm256_load_ps(tail.q), a1);
  }
  return HorizontalSum(
      _mm256_add_ps(_mm256_add_ps(a0, a1), _mm256_add_ps(a2, a3)));
}

// As DotProductAvx2, with the squares in 4 more accumulators.
__attribute__((target("avx2,fma"))) DotAndSquares DotAndSquaresAvx2(
    const char* vector_bytes, const float* query, size_t n) {
  __m256 d0 = _mm256_setzero_ps();
  __m256 d1 = _mm256_setzero_ps();
  __m256 d2 = _mm256_setzero_ps();
  __m256 d3 = _mm256_setzero_ps();
  __m256 s0 = _mm256_setzero_ps();
  __m256 s1 = _mm256_setzero_ps();
  __m256 s2 = _mm256_setzero_ps();
  __m256 s3 = _mm256_setzero_ps();
  size_t i = 0;
  for (; i + 32 <= n; i += 32) {
    const char* v = vector_bytes + 4 * i;
    const __m256 v0 = LoadVector(v);
    const __m256 v1 = LoadVector(v + 32);
    const __m256 v2 = LoadVector(v + 64);
    const __m256 v3 = LoadVector(v + 96);
    d0 = _mm256_fmadd_ps(v0, _mm256_loadu_ps(query + i), d0);
    d1 = _mm256_fmadd_ps(v1, _mm256_loadu_ps(query + i + 8), d1);
    d2 = _mm256_fmadd_ps(v2, _mm256_loadu_ps(query + i + 16), d2);
    d3 = _mm256_fmadd_ps(v3, _mm256_loadu_ps(query + i + 24), d3);
    s0 = _mm256_fmadd_ps(v0, v0, s0);
    s1 = _mm256_fmadd_ps(v1, v1, s1);
    s2 = _mm256_fmadd_ps(v2, v2, s2);
    s3 = _mm256_fmadd_ps(v3, v3, s3);
  }
  for (; i + 8 <= n; i += 8) {
    const __m256 v = LoadVector(vector_bytes + 4 * i);
    d0 = _mm256_fmadd_ps(v, _mm256_loadu_ps(query + i), d0);
    s0 = _mm256_fmadd_ps(v, v, s0);
  }
  if (i < n) {
    const Tail tail(vector_bytes + 4 * i, query + i, n - i);
    const __m256 v = _mm256_load_ps(tail.v);
    d1 = _mm256_fmadd_ps(v, _mm256_load_ps(tail.q), d1);
    s1 = _mm256_fmadd_ps(v, v, s1);
  }
  return {HorizontalSum(
              _mm256_add_ps(_mm256_add_ps(d0, d1), _mm256_add_ps(d2, d3))),
          HorizontalSum(
              _mm256_add_ps(_mm256_add_ps(s0, s1), _mm256_add_ps(s2, s3)))};
}
#else
// No AVX2 off x86-64: HasAvx2Fma() is false and these are never chosen.
float DotProductAvx2(const char* vector_bytes, const float* query, size_t n) {
  return DotProductScalar(vector_bytes, query, n);
}
DotAndSquares DotAndSquaresAvx2(const char* vector_bytes, const float* query,
                                size_t n) {
  return DotAndSquaresScalar(vector_bytes, query, n);
}
#endif

float CosineFromSums(DotAndSquares sums, float query_norm) {
  // Undefined: a zero sum of squares (n = 0, a zero vector), or a NaN or
  // an inf in either vector (which makes its sum of squares, or the norm,
  // NaN or inf; a NaN fails every comparison).
  if (!(sums.squares > 0.0f && sums.squares <= FLT_MAX && query_norm > 0.0f &&
        query_norm <= FLT_MAX)) {
    return kNaN;
  }
  // In double, so that the division adds nothing to the sums' error.
  const double cosine = static_cast<double>(sums.dot) /
                        (std::sqrt(static_cast<double>(sums.squares)) *
                         static_cast<double>(query_norm));
  // std::clamp would keep a NaN too, but says less about it.
  if (cosine > 1.0) return 1.0f;
  if (cosine < -1.0) return -1.0f;
  return static_cast<float>(cosine);  // NaN stays NaN
}

}  // namespace vector_math_internal

namespace {

using vector_math_internal::DotAndSquares;

// The kernels this CPU runs, chosen at the first call.
struct Kernels {
  float (*dot)(const char*, const float*, size_t);
  DotAndSquares (*dot_and_squares)(const char*, const float*, size_t);
};

const Kernels& ActiveKernels() {
  namespace internal = vector_math_internal;
  static const Kernels kernels =
      internal::HasAvx2Fma()
          ? Kernels{internal::DotProductAvx2, internal::DotAndSquaresAvx2}
          : Kernels{internal::DotProductScalar, internal::DotAndSquaresScalar};
  return kernels;
}

}  // namespace

float DotProduct(const char* vector_bytes, const float* query, size_t n) {
  return ActiveKernels().dot(vector_bytes, query, n);
}

float Norm(const float* values, size_t n) {
  double squares = 0;
  for (size_t i = 0; i < n; ++i) {
    squares += static_cast<double>(values[i]) * values[i];
  }
  return static_cast<float>(std::sqrt(squares));
}

float CosineSimilarity(const char* vector_bytes, const float* query, size_t n,
                       float query_norm) {
  return vector_math_internal::CosineFromSums(
      ActiveKernels().dot_and_squares(vector_bytes, query, n), query_norm);
}

void TopK(std::span<const float> scores, size_t k, std::vector<uint32_t>* out) {
  out->clear();
  if (k == 0) return;
  // A heap of the k best so far under `better`, its front the worst of
  // them: a new score displaces it only if strictly higher, since the new
  // index is higher than every kept one (ties go to the lower index).
  const auto better = [scores](uint32_t a, uint32_t b) {
    return scores[a] > scores[b] || (scores[a] == scores[b] && a < b);
  };
  out->reserve(std::min(k, scores.size()));
  for (size_t i = 0; i < scores.size(); ++i) {
    const float score = scores[i];
    if (std::isnan(score)) continue;
    if (out->size() < k) {
      out->push_back(static_cast<uint32_t>(i));
      std::push_heap(out->begin(), out->end(), better);
    } else if (score > scores[out->front()]) {
      std::pop_heap(out->begin(), out->end(), better);
      out->back() = static_cast<uint32_t>(i);
      std::push_heap(out->begin(), out->end(), better);
    }
  }
  std::sort_heap(out->begin(), out->end(), better);
}

}  // namespace roost
