// The vector kernels of read compute (storage/row/vector_math.h): each
// kernel, portable and AVX2, against a double-precision reference within
// the header's error bound, at every misalignment of the row's bytes; the
// cosine's fixed points (v with itself, with -v, with an orthogonal vector);
// empty, zero, NaN and inf inputs; TopK against a full sort.
#include "storage/row/vector_math.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <fstream>
#include <limits>
#include <random>
#include <sstream>
#include <string>
#include <vector>

namespace roost {
namespace {

namespace internal = vector_math_internal;

constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();
constexpr float kInf = std::numeric_limits<float>::infinity();
constexpr double kUnit = 0x1p-24;  // float's unit roundoff

// The header's bound: gamma(m), m = ceil(n / 8) + 8.
double Gamma(size_t n) {
  const double m = static_cast<double>((n + 7) / 8 + 8);
  return m * kUnit / (1 - m * kUnit);
}

// A kernel under test: the two functions of one implementation.
struct Kernel {
  std::string name;
  float (*dot)(const char*, const float*, size_t);
  internal::DotAndSquares (*dot_and_squares)(const char*, const float*, size_t);
};

// The portable kernel, and the AVX2 one where the CPU runs it.
std::vector<Kernel> Kernels() {
  std::vector<Kernel> kernels = {
      {"scalar", internal::DotProductScalar, internal::DotAndSquaresScalar}};
  if (internal::HasAvx2Fma()) {
    kernels.push_back(
        {"avx2", internal::DotProductAvx2, internal::DotAndSquaresAvx2});
  }
  return kernels;
}

// n float32 values written as a row holds them: at `misalignment` bytes
// past a 64-byte boundary, so that misalignment 0..3 covers every address
// modulo 4 (and 0 the aligned one).
class RowBytes {
 public:
  RowBytes(const std::vector<float>& values, size_t misalignment)
      : storage_(values.size() * sizeof(float) + 64 + misalignment) {
    const auto base = reinterpret_cast<uintptr_t>(storage_.data());
    data_ = storage_.data() + ((64 - base % 64) % 64) + misalignment;
    if (!values.empty()) {
      std::memcpy(data_, values.data(), values.size() * sizeof(float));
    }
  }
  const char* data() const { return data_; }

 private:
  std::vector<char> storage_;
  char* data_;
};

std::vector<float> RandomVector(std::mt19937& rng, size_t n, float low,
                                float high) {
  std::uniform_real_distribution<float> value(low, high);
  std::vector<float> v(n);
  for (float& x : v) x = value(rng);
  return v;
}

struct Reference {
  double dot = 0;
  double abs_products = 0;  // sum |v_i q_i|
  double squares = 0;       // sum v_i^2
  double query_squares = 0;
};

Reference Exact(const std::vector<float>& v, const std::vector<float>& q) {
  Reference r;
  for (size_t i = 0; i < v.size(); ++i) {
    const double product = static_cast<double>(v[i]) * q[i];  // exact
    r.dot += product;
    r.abs_products += std::fabs(product);
    r.squares += static_cast<double>(v[i]) * v[i];
    r.query_squares += static_cast<double>(q[i]) * q[i];
  }
  return r;
}

uint32_t Bits(float f) { return std::bit_cast<uint32_t>(f); }

// The sizes the issue names (embeddings of 128, 768 and 1536 dimensions)
// and every n up to 300, so that each kernel's every loop and tail length
// is taken; and one past 1536.
std::vector<size_t> Sizes() {
  std::vector<size_t> sizes;
  for (size_t n = 0; n <= 300; ++n) sizes.push_back(n);
  for (size_t n : {511, 768, 1536, 1537}) sizes.push_back(n);
  return sizes;
}

// The CPU's features as Linux lists them (/proc/cpuinfo's "flags"): the
// kernels HasAvx2Fma() chooses are the ones the kernel says this CPU (and
// the kernel's saving of the AVX registers) allows.
TEST(VectorMathTest, HasAvx2FmaAsProcCpuinfoSays) {
  std::ifstream cpuinfo("/proc/cpuinfo");
  std::string line;
  while (std::getline(cpuinfo, line) && line.rfind("flags", 0) != 0) {
  }
  if (line.empty()) GTEST_SKIP() << "no flags line in /proc/cpuinfo";
  std::istringstream words(line.substr(line.find(':') + 1));
  bool avx2 = false, fma = false;
  for (std::string word; words >> word;) {
    avx2 |= word == "avx2";
    fma |= word == "fma";
  }
  EXPECT_EQ(internal::HasAvx2Fma(), avx2 && fma) << line;
  if (!internal::HasAvx2Fma()) {
    GTEST_SKIP() << "this CPU has no AVX2 and FMA: only the portable kernel "
                    "is tested";
  }
}

TEST(VectorMathTest, KernelsAgreeWithDoublePrecisionWithinTheBound) {
  std::mt19937 rng(33);
  for (const Kernel& kernel : Kernels()) {
    for (size_t n : Sizes()) {
      // Mixed signs (cancellation), and one sign (none: the bound is then
      // relative to the result itself).
      for (float low : {-1.0f, 0.0f}) {
        const std::vector<float> v = RandomVector(rng, n, low, 1.0f);
        const std::vector<float> q = RandomVector(rng, n, low, 1.0f);
        const Reference exact = Exact(v, q);
        // The reference's own error (n roundings of a double) is added.
        const double dot_tolerance =
            (Gamma(n) + n * 0x1p-52) * exact.abs_products;
        const double squares_tolerance =
            (Gamma(n) + n * 0x1p-52) * exact.squares;
        const double query_norm = std::sqrt(exact.query_squares);
        const double exact_cosine =
            exact.dot / (std::sqrt(exact.squares) * query_norm);
        for (size_t misalignment = 0; misalignment < 4; ++misalignment) {
          SCOPED_TRACE(kernel.name + " n=" + std::to_string(n) +
                       " misalignment=" + std::to_string(misalignment) +
                       " low=" + std::to_string(low));
          const RowBytes row(v, misalignment);
          const float dot = kernel.dot(row.data(), q.data(), n);
          EXPECT_NEAR(dot, exact.dot, dot_tolerance);
          const internal::DotAndSquares sums =
              kernel.dot_and_squares(row.data(), q.data(), n);
          EXPECT_NEAR(sums.dot, exact.dot, dot_tolerance);
          EXPECT_NEAR(sums.squares, exact.squares, squares_tolerance);
          if (n == 0) {
            EXPECT_EQ(Bits(dot), Bits(0.0f));
            continue;
          }
          const float cosine =
              internal::CosineFromSums(sums, Norm(q.data(), n));
          EXPECT_NEAR(cosine, exact_cosine, 2 * Gamma(n));
        }
      }
    }
  }
}

// A query's floats are aligned as floats, but not to a vector's width: the
// kernels are right at every float offset of the query too.
TEST(VectorMathTest, QueryAtEveryFloatOffset) {
  std::mt19937 rng(7);
  const size_t n = 131;
  const std::vector<float> v = RandomVector(rng, n, -1, 1);
  const std::vector<float> padded = RandomVector(rng, n + 8, -1, 1);
  for (const Kernel& kernel : Kernels()) {
    for (size_t offset = 0; offset < 8; ++offset) {
      SCOPED_TRACE(kernel.name + " offset=" + std::to_string(offset));
      const std::vector<float> q(padded.begin() + offset,
                                 padded.begin() + offset + n);
      const Reference exact = Exact(v, q);
      const RowBytes row(v, 1);
      EXPECT_NEAR(kernel.dot(row.data(), padded.data() + offset, n), exact.dot,
                  Gamma(n) * exact.abs_products);
    }
  }
}

// The public functions run the kernel HasAvx2Fma() names, bit for bit.
TEST(VectorMathTest, DispatchIsTheKernel) {
  const Kernel active = Kernels().back();
  EXPECT_EQ(active.name, internal::HasAvx2Fma() ? "avx2" : "scalar");
  std::mt19937 rng(5);
  for (size_t n : {0, 1, 7, 8, 33, 128, 768}) {
    SCOPED_TRACE("n=" + std::to_string(n));
    const std::vector<float> v = RandomVector(rng, n, -1, 1);
    const std::vector<float> q = RandomVector(rng, n, -1, 1);
    const RowBytes row(v, 3);
    const float query_norm = Norm(q.data(), n);
    EXPECT_EQ(Bits(DotProduct(row.data(), q.data(), n)),
              Bits(active.dot(row.data(), q.data(), n)));
    EXPECT_EQ(
        Bits(CosineSimilarity(row.data(), q.data(), n, query_norm)),
        Bits(internal::CosineFromSums(
            active.dot_and_squares(row.data(), q.data(), n), query_norm)));
  }
}

TEST(VectorMathTest, CosineFixedPoints) {
  std::mt19937 rng(11);
  for (const Kernel& kernel : Kernels()) {
    for (size_t n : {1, 3, 8, 31, 128, 768, 1536}) {
      SCOPED_TRACE(kernel.name + " n=" + std::to_string(n));
      const std::vector<float> v = RandomVector(rng, n, -1, 1);
      const RowBytes row(v, 2);
      auto cosine = [&](const std::vector<float>& q) {
        return internal::CosineFromSums(
            kernel.dot_and_squares(row.data(), q.data(), n), Norm(q.data(), n));
      };
      // With itself, and with itself scaled: 1, never above it.
      const float self = cosine(v);
      EXPECT_NEAR(self, 1.0f, 2 * Gamma(n));
      EXPECT_LE(self, 1.0f);
      std::vector<float> scaled = v;
      for (float& x : scaled) x *= 2.5f;
      EXPECT_NEAR(cosine(scaled), 1.0f, 2 * Gamma(n));
      // With its opposite: -1, never below it.
      std::vector<float> opposite = v;
      for (float& x : opposite) x = -x;
      const float minus = cosine(opposite);
      EXPECT_NEAR(minus, -1.0f, 2 * Gamma(n));
      EXPECT_GE(minus, -1.0f);
      // With an orthogonal vector: 0.
      if (n >= 2) {
        std::vector<float> orthogonal(n, 0.0f);
        orthogonal[0] = v[1];
        orthogonal[1] = -v[0];
        EXPECT_NEAR(cosine(orthogonal), 0.0f, 2 * Gamma(n));
      }
    }
  }
  // The public function on a vector with itself.
  const std::vector<float> v = {3, 4, 0, 12};
  const RowBytes row(v, 1);
  EXPECT_FLOAT_EQ(CosineSimilarity(row.data(), v.data(), 4, 13.0f), 1.0f);
  EXPECT_FLOAT_EQ(Norm(v.data(), 4), 13.0f);
}

TEST(VectorMathTest, EmptyAndZeroVectors) {
  const std::vector<float> zeros(40, 0.0f);
  const std::vector<float> ones(40, 1.0f);
  const RowBytes zero_row(zeros, 1);
  const RowBytes ones_row(ones, 1);
  for (const Kernel& kernel : Kernels()) {
    SCOPED_TRACE(kernel.name);
    // n = 0: a dot product of 0, no cosine.
    EXPECT_EQ(kernel.dot(ones_row.data(), ones.data(), 0), 0.0f);
    EXPECT_TRUE(std::isnan(internal::CosineFromSums(
        kernel.dot_and_squares(ones_row.data(), ones.data(), 0), 0.0f)));
    // A zero vector on either side: a dot product of 0, no cosine.
    EXPECT_EQ(kernel.dot(zero_row.data(), ones.data(), 40), 0.0f);
    EXPECT_EQ(kernel.dot(ones_row.data(), zeros.data(), 40), 0.0f);
    EXPECT_TRUE(std::isnan(internal::CosineFromSums(
        kernel.dot_and_squares(zero_row.data(), ones.data(), 40),
        Norm(ones.data(), 40))));
    EXPECT_TRUE(std::isnan(internal::CosineFromSums(
        kernel.dot_and_squares(ones_row.data(), zeros.data(), 40),
        Norm(zeros.data(), 40))));
  }
  EXPECT_EQ(DotProduct(ones_row.data(), ones.data(), 0), 0.0f);
  EXPECT_TRUE(std::isnan(
      CosineSimilarity(ones_row.data(), ones.data(), 0, Norm(ones.data(), 0))));
  EXPECT_EQ(Norm(ones.data(), 0), 0.0f);
}

// A NaN or an inf anywhere, in the main loop, the 8-wide steps or the tail:
// a NaN or an inf out, as IEEE arithmetic gives it, never a crash; the
// cosine is then no score.
TEST(VectorMathTest, NanAndInfInputs) {
  const size_t n = 131;  // 4 steps of 32, none of 8, a tail of 3
  std::mt19937 rng(13);
  const std::vector<float> v = RandomVector(rng, n, -1, 1);
  const std::vector<float> positive = RandomVector(rng, n, 0.5f, 1);
  for (const Kernel& kernel : Kernels()) {
    for (size_t at : {0, 5, 31, 32, 100, 127, 128, 130}) {
      SCOPED_TRACE(kernel.name + " at=" + std::to_string(at));
      auto dot = [&](const std::vector<float>& a, const std::vector<float>& b) {
        const RowBytes row(a, 3);
        return kernel.dot(row.data(), b.data(), n);
      };
      auto cosine = [&](const std::vector<float>& a,
                        const std::vector<float>& b) {
        const RowBytes row(a, 3);
        return internal::CosineFromSums(
            kernel.dot_and_squares(row.data(), b.data(), n), Norm(b.data(), n));
      };
      std::vector<float> with = v;
      with[at] = kNaN;
      EXPECT_TRUE(std::isnan(dot(with, positive)));
      EXPECT_TRUE(std::isnan(dot(positive, with)));
      EXPECT_TRUE(std::isnan(cosine(with, positive)));
      EXPECT_TRUE(std::isnan(cosine(positive, with)));

      with[at] = kInf;
      EXPECT_EQ(dot(with, positive), kInf);
      EXPECT_EQ(dot(positive, with), kInf);
      EXPECT_TRUE(std::isnan(cosine(with, positive)));
      EXPECT_TRUE(std::isnan(cosine(positive, with)));
      with[at] = -kInf;
      EXPECT_EQ(dot(with, positive), -kInf);
      EXPECT_TRUE(std::isnan(cosine(with, positive)));

      // inf * 0 and inf - inf: NaN.
      std::vector<float> zero_there = positive;
      zero_there[at] = 0.0f;
      EXPECT_TRUE(std::isnan(dot(with, zero_there)));
      std::vector<float> both = positive;
      both[at] = kInf;
      both[(at + 1) % n] = -kInf;
      EXPECT_TRUE(std::isnan(dot(both, positive)));

      // A value whose square is beyond float's range: the dot product is
      // finite, the sum of squares inf, the cosine no score (the header's
      // limit of uncompensated float sums).
      std::vector<float> huge = positive;
      huge[at] = 1e20f;
      EXPECT_NEAR(dot(huge, positive), 1e20 * positive[at], 1e15);
      EXPECT_TRUE(std::isnan(cosine(huge, positive)));
      // Products beyond it: inf.
      std::vector<float> huge_query = positive;
      huge_query[at] = 1e20f;
      EXPECT_EQ(dot(huge, huge_query), kInf);
    }
    // A query norm that is not finite or not positive: no score.
    const RowBytes row(v, 0);
    const internal::DotAndSquares sums =
        kernel.dot_and_squares(row.data(), positive.data(), n);
    EXPECT_TRUE(std::isnan(internal::CosineFromSums(sums, kInf)));
    EXPECT_TRUE(std::isnan(internal::CosineFromSums(sums, kNaN)));
    EXPECT_TRUE(std::isnan(internal::CosineFromSums(sums, 0.0f)));
    EXPECT_TRUE(std::isnan(internal::CosineFromSums(sums, -1.0f)));
  }
}

// The reference: every non-NaN index, by score high to low, ties in index
// order (a stable sort of the indexes), the first k.
std::vector<uint32_t> SortedTopK(const std::vector<float>& scores, size_t k) {
  std::vector<uint32_t> indexes;
  for (uint32_t i = 0; i < scores.size(); ++i) {
    if (!std::isnan(scores[i])) indexes.push_back(i);
  }
  std::stable_sort(indexes.begin(), indexes.end(), [&](uint32_t a, uint32_t b) {
    return scores[a] > scores[b];
  });
  if (indexes.size() > k) indexes.resize(k);
  return indexes;
}

TEST(VectorMathTest, TopKAgainstAFullSort) {
  std::mt19937 rng(21);
  // Few distinct values, so ties are many; NaN, the infinities and both
  // zeros (equal, so tied) among them.
  const std::vector<float> values = {kNaN,  -kInf, -1.5f, -0.0f, 0.0f,
                                     0.25f, 0.5f,  0.75f, 1.0f,  kInf};
  std::uniform_int_distribution<size_t> pick(0, values.size() - 1);
  std::uniform_real_distribution<float> real(-1, 1);
  for (size_t n : {0, 1, 2, 3, 10, 100, 1000}) {
    for (bool continuous : {false, true}) {
      std::vector<float> scores(n);
      for (float& s : scores) {
        s = continuous && pick(rng) != 0 ? real(rng) : values[pick(rng)];
      }
      for (size_t k : {size_t{0}, size_t{1}, size_t{2}, n / 2, n, n + 1,
                       n + 1000, std::numeric_limits<size_t>::max()}) {
        SCOPED_TRACE("n=" + std::to_string(n) + " k=" + std::to_string(k) +
                     (continuous ? " continuous" : " ties"));
        std::vector<uint32_t> top = {7, 7, 7};  // replaced, not appended to
        TopK(scores, k, &top);
        EXPECT_EQ(top, SortedTopK(scores, k));
      }
    }
  }
}

TEST(VectorMathTest, TopKSmallCases) {
  std::vector<uint32_t> top;
  TopK(std::vector<float>{0.5f, kNaN, 0.9f, 0.5f, 0.9f}, 3, &top);
  EXPECT_EQ(top, (std::vector<uint32_t>{2, 4, 0}));
  TopK(std::vector<float>{kNaN, kNaN}, 2, &top);
  EXPECT_TRUE(top.empty());
  TopK(std::vector<float>{}, 5, &top);
  EXPECT_TRUE(top.empty());
  TopK(std::vector<float>{1, 2, 3}, 0, &top);
  EXPECT_TRUE(top.empty());
  // Descending input: every score displaces the heap's front.
  TopK(std::vector<float>{1, 2, 3, 4, 5, 6}, 2, &top);
  EXPECT_EQ(top, (std::vector<uint32_t>{5, 4}));
  TopK(std::vector<float>{6, 5, 4, 3, 2, 1}, 2, &top);
  EXPECT_EQ(top, (std::vector<uint32_t>{0, 1}));
}

}  // namespace
}  // namespace roost
