// The vector kernels of read compute on the server: the dot product and the
// cosine similarity of a row's float32_list field with a query vector, and
// the top k of a batch's scores.
//
// A row's vector is n float32 values, little-endian, at whatever address the
// field starts in the row (docs/format/rows.md: values are unaligned), so the
// kernels read it as bytes; the query is the request's floats, copied once.
// The kernels run with AVX2 and FMA where the CPU has both (checked once, at
// the first call), and portable C++ otherwise; the rest of the build stays
// baseline x86-64. Every function is thread-safe and allocates nothing except
// TopK's output.
//
// Example:
//   const float qnorm = Norm(query.data(), query.size());
//   std::vector<float> scores;
//   for (std::string_view embedding : embeddings)  // float32_list fields
//     scores.push_back(CosineSimilarity(embedding.data(), query.data(),
//                                       query.size(), qnorm));
//   std::vector<uint32_t> best;
//   TopK(scores, 10, &best);  // indexes into scores, best first
//
// Accuracy: the sums are of floats, in 8 (portable) or 32 (AVX2) partial
// sums added pairwise at the end, so no term passes through more than
// m = ceil(n / 8) + 8 roundings, and
//   |DotProduct - exact| <= gamma(m) * sum_i |v_i * q_i|,
//   gamma(m) = m * u / (1 - m * u),  u = 2^-24,
// the bound tests/storage/vector_math_test.cc checks against a double
// reference (a bound relative to the sum of magnitudes, since a dot product
// of orthogonal vectors is 0 and no bound relative to it exists). The sum of
// squares is within gamma(m) of its own, so the cosine is within 2 gamma(m)
// of the exact one: 2.4e-5 at n = 1536, 3.3e-6 at n = 128. The sums are not
// compensated: squares or products beyond float's range (values near
// 1.8e19) overflow to inf.
#ifndef ROOST_STORAGE_ROW_VECTOR_MATH_H_
#define ROOST_STORAGE_ROW_VECTOR_MATH_H_

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace roost {

// The dot product of the n float32 values at `vector_bytes` (4n bytes,
// little-endian, any alignment) with query[0, n). 0 for n = 0. A NaN in
// either gives NaN; an inf gives inf of its sign, or NaN (inf * 0, inf - inf),
// as IEEE arithmetic does.
float DotProduct(const char* vector_bytes, const float* query, size_t n);

// The Euclidean norm of values[0, n) (summed in double: a query's norm is
// computed once per request), for CosineSimilarity's `query_norm`.
float Norm(const float* values, size_t n);

// dot(v, q) / (|v| |q|) of the n float32 values at `vector_bytes` (as for
// DotProduct) and query[0, n), where query_norm = Norm(query, n), clamped
// to [-1, 1] (rounding may otherwise give 1.0000001 for v = q).
// NaN, "no score", when the cosine is undefined: n = 0, either vector all
// zeros (or so small that its squares underflow), either norm not finite,
// or a NaN anywhere. NaN is never chosen by TopK.
float CosineSimilarity(const char* vector_bytes, const float* query, size_t n,
                       float query_norm);

// Sets *out to the indexes of the k highest of `scores`, best first; ties
// go to the lower index; NaN is never chosen, so *out has min(k, number of
// non-NaN scores) entries. O(n log k) time, O(k) memory.
// REQUIRES: scores.size() <= UINT32_MAX.
void TopK(std::span<const float> scores, size_t k, std::vector<uint32_t>* out);

// The kernels behind the dispatch, for tests and benchmarks to call each
// one directly. The results of a kernel are the same on every call; the two
// kernels differ only in rounding (both within the bound above).
namespace vector_math_internal {

// Whether this CPU has AVX2 and FMA, i.e. whether the public functions run
// the *Avx2 kernels. The *Avx2 kernels may be called only when it is true.
bool HasAvx2Fma();

// sum v_i q_i, and sum v_i^2 (CosineSimilarity's one pass over v).
struct DotAndSquares {
  float dot;
  float squares;
};

float DotProductScalar(const char* vector_bytes, const float* query, size_t n);
DotAndSquares DotAndSquaresScalar(const char* vector_bytes, const float* query,
                                  size_t n);
// REQUIRES: HasAvx2Fma().
float DotProductAvx2(const char* vector_bytes, const float* query, size_t n);
// REQUIRES: HasAvx2Fma().
DotAndSquares DotAndSquaresAvx2(const char* vector_bytes, const float* query,
                                size_t n);

// The cosine from one pass's sums and the query's norm, as
// CosineSimilarity computes it (NaN when undefined, clamped to [-1, 1]).
float CosineFromSums(DotAndSquares sums, float query_norm);

}  // namespace vector_math_internal
}  // namespace roost

#endif  // ROOST_STORAGE_ROW_VECTOR_MATH_H_
