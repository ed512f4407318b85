// The vector kernels of read compute (storage/row/vector_math.h), in
// process: a dot product and a cosine similarity at 128 and 768 dimensions,
// the portable kernel beside the AVX2 one; then what a scored MultiGet of
// 1,000 keys costs the server beyond its lookups: 1,000 rows' 128-dimension
// embeddings, each at an unaligned offset in its row as roost-row-1 leaves
// it, scored through the public functions (the kernel this CPU runs), with
// and without the top 10 chosen. `per_row` is the time per row scored.
//
//   build/release/bench/vector_math_bench --benchmark_min_time=0.2
#include <benchmark/benchmark.h>

#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

#include "storage/row/vector_math.h"

namespace {

namespace internal = roost::vector_math_internal;

using DotKernel = float (*)(const char*, const float*, size_t);
using SumsKernel = internal::DotAndSquares (*)(const char*, const float*,
                                               size_t);

std::vector<float> RandomFloats(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> value(-1, 1);
  std::vector<float> v(n);
  for (float& x : v) x = value(rng);
  return v;
}

// n floats as a row holds them: 1 byte past a 4-byte boundary.
std::vector<char> UnalignedBytes(const std::vector<float>& values) {
  std::vector<char> bytes(values.size() * sizeof(float) + 1);
  std::memcpy(bytes.data() + 1, values.data(), values.size() * sizeof(float));
  return bytes;
}

bool Available(benchmark::State& state, bool avx2) {
  if (avx2 && !internal::HasAvx2Fma()) {
    state.SkipWithError("this CPU has no AVX2 and FMA");
    return false;
  }
  return true;
}

void BM_DotProduct(benchmark::State& state, DotKernel kernel, bool avx2) {
  if (!Available(state, avx2)) return;
  const size_t n = static_cast<size_t>(state.range(0));
  const std::vector<char> row = UnalignedBytes(RandomFloats(n, 1));
  const std::vector<float> query = RandomFloats(n, 2);
  for (auto _ : state) {
    benchmark::DoNotOptimize(kernel(row.data() + 1, query.data(), n));
  }
  state.SetItemsProcessed(state.iterations());
}

void BM_Cosine(benchmark::State& state, SumsKernel kernel, bool avx2) {
  if (!Available(state, avx2)) return;
  const size_t n = static_cast<size_t>(state.range(0));
  const std::vector<char> row = UnalignedBytes(RandomFloats(n, 1));
  const std::vector<float> query = RandomFloats(n, 2);
  const float query_norm = roost::Norm(query.data(), n);
  for (auto _ : state) {
    benchmark::DoNotOptimize(internal::CosineFromSums(
        kernel(row.data() + 1, query.data(), n), query_norm));
  }
  state.SetItemsProcessed(state.iterations());
}

BENCHMARK_CAPTURE(BM_DotProduct, scalar, internal::DotProductScalar, false)
    ->Arg(128)
    ->Arg(768);
BENCHMARK_CAPTURE(BM_DotProduct, avx2, internal::DotProductAvx2, true)
    ->Arg(128)
    ->Arg(768);
BENCHMARK_CAPTURE(BM_Cosine, scalar, internal::DotAndSquaresScalar, false)
    ->Arg(128)
    ->Arg(768);
BENCHMARK_CAPTURE(BM_Cosine, avx2, internal::DotAndSquaresAvx2, true)
    ->Arg(128)
    ->Arg(768);

// 1,000 rows of 13 bytes of other fields, then the 128-float embedding, back
// to back: every embedding starts 1 byte past a 4-byte boundary.
constexpr size_t kRows = 1000;
constexpr size_t kDims = 128;
constexpr size_t kOtherBytes = 13;
constexpr size_t kRowBytes = kOtherBytes + kDims * sizeof(float);

std::vector<char> Rows() {
  std::vector<char> rows(kRows * kRowBytes);
  for (size_t r = 0; r < kRows; ++r) {
    const std::vector<float> embedding =
        RandomFloats(kDims, static_cast<uint32_t>(r + 10));
    std::memcpy(rows.data() + r * kRowBytes + kOtherBytes, embedding.data(),
                kDims * sizeof(float));
  }
  return rows;
}

enum class Scoring { kDot, kCosine, kCosineTop10 };

void BM_Score1000Rows(benchmark::State& state, Scoring scoring) {
  const std::vector<char> rows = Rows();
  const std::vector<float> query = RandomFloats(kDims, 2);
  std::vector<float> scores(kRows);
  std::vector<uint32_t> top;
  for (auto _ : state) {
    const float query_norm = roost::Norm(query.data(), kDims);
    for (size_t r = 0; r < kRows; ++r) {
      const char* embedding = rows.data() + r * kRowBytes + kOtherBytes;
      scores[r] = scoring == Scoring::kDot
                      ? roost::DotProduct(embedding, query.data(), kDims)
                      : roost::CosineSimilarity(embedding, query.data(), kDims,
                                                query_norm);
    }
    if (scoring == Scoring::kCosineTop10) roost::TopK(scores, 10, &top);
    benchmark::DoNotOptimize(scores.data());
    benchmark::DoNotOptimize(top.data());
  }
  state.SetItemsProcessed(state.iterations() * kRows);
  state.counters["per_row"] = benchmark::Counter(
      static_cast<double>(state.iterations() * kRows),
      benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
  state.SetLabel(internal::HasAvx2Fma() ? "avx2" : "scalar");
}

BENCHMARK_CAPTURE(BM_Score1000Rows, dot, Scoring::kDot);
BENCHMARK_CAPTURE(BM_Score1000Rows, cosine, Scoring::kCosine);
BENCHMARK_CAPTURE(BM_Score1000Rows, cosine_top10, Scoring::kCosineTop10);

}  // namespace

BENCHMARK_MAIN();
