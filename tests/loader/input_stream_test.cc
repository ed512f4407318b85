// Where RecordReader's bytes come from, through RecordReader on real files:
// gzip (one member, several, damaged), zstd (one frame, several, cut,
// damaged), opening errors, stdin through a
// pipe, and ExpandInputs, which turns the command line's globs into files.
// The record formats are record_reader_test.cc's.

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zlib.h>
#include <zstd.h>

#include <algorithm>
#include <cstdlib>
#include <string>
#include <utility>
#include <vector>

#include "loader/record_reader.h"
#include "tests/harness/status_matchers.h"
#include "tests/harness/test_util.h"
#include "tests/loader/record_reader_fixture.h"
#include "util/str_cat.h"

namespace roost::testing {
namespace {

std::string Gzip(const std::string& data) {
  ScratchDir dir;
  const std::string path = dir.File("x.gz");
  gzFile file = gzopen(path.c_str(), "wb");
  if (file == nullptr) std::abort();
  for (size_t done = 0; done < data.size();) {
    const unsigned n =
        static_cast<unsigned>(std::min<size_t>(data.size() - done, 1 << 20));
    if (gzwrite(file, data.data() + done, n) != static_cast<int>(n)) {
      std::abort();
    }
    done += n;
  }
  if (gzclose(file) != Z_OK) std::abort();
  return ReadFile(path);
}

// --- gzip --------------------------------------------------------------------

TEST_F(RecordReaderTest, GzipTsv) {
  std::string text;
  Pairs pairs;
  for (int i = 0; i < 100000; ++i) {
    pairs.emplace_back(StrCat("key", i), StrCat(i * 7));
    text += pairs.back().first + "\t" + pairs.back().second + "\n";
  }
  const std::string gz = Gzip(text);
  const std::string path = Write("in.tsv.gz", gz);
  auto reader = Open(path);
  ReadResult r = ReadAll(*reader);
  EXPECT_OK(r.end) << r.end;
  EXPECT_TRUE(r.errors.empty());
  EXPECT_TRUE(r.records == pairs);
  EXPECT_EQ(reader->bytes_read(), gz.size());
  EXPECT_EQ(reader->Location(), path + ":100000");
}

TEST_F(RecordReaderTest, GzipBinaryFormatsCountDecompressedOffsets) {
  const Pairs pairs = RandomVariablePairs(13, 20000, 1, 30, 0, 300);
  const std::string data = LengthPrefixed(pairs);
  const std::string path = Write("in.lp.gz", Gzip(data + "\x05"));
  ReadResult r = ReadAll(*Open(path, LengthPrefixedOptions()));
  EXPECT_TRUE(r.records == pairs);
  EXPECT_TRUE(absl::IsDataLoss(r.end)) << r.end;
  EXPECT_EQ(Message(r.end),
            StrCat(path, "@", data.size()) + ": truncated record");

  const Pairs fixed = RandomFixedPairs(17, 30000, 16, 48);
  std::string fixed_data;
  for (const auto& [key, value] : fixed) fixed_data += key + value;
  r = ReadFileAs("in.bin.gz", Gzip(fixed_data), Fixed(16, 48));
  EXPECT_TRUE(r.errors.empty());
  EXPECT_TRUE(r.records == fixed);
}

TEST_F(RecordReaderTest, GzipConcatenatedMembers) {
  const std::string path =
      Write("in.tsv.gz",
            Gzip("a\t1\nb\t2") + Gzip("\nc\t3\n") + Gzip("") + Gzip("d\t4\n"));
  ReadResult r = ReadAll(*Open(path));
  EXPECT_OK(r.end) << r.end;
  EXPECT_EQ(r.records, (Pairs{{"a", "1"}, {"b", "2"}, {"c", "3"}, {"d", "4"}}));
}

TEST_F(RecordReaderTest, GzipCorruptionIsDataLossNamingTheFile) {
  std::string text;
  for (int i = 0; i < 20000; ++i) text += StrCat("line ", i, "\n");
  const std::string gz = Gzip(text);
  std::string flipped = gz;
  flipped[gz.size() / 2] ^= 0x55;
  std::string bad_crc = gz;
  bad_crc[gz.size() - 6] ^= 0x01;  // the CRC-32 in the trailer
  const std::vector<std::pair<std::string, std::string>> damaged = {
      {"flipped.gz", flipped},
      {"crc.gz", bad_crc},
      {"truncated.gz", gz.substr(0, gz.size() - 100)},
      {"header.gz", "\x1f\x8b garbage after the magic"},
      {"trailing.gz", gz + "trailing garbage"}};
  for (const auto& [name, data] : damaged) {
    const std::string path = Write(name, data);
    // One-byte records: nothing can be malformed, only the stream.
    ReadResult r = ReadAll(*Open(path, Fixed(1, 0)));
    EXPECT_TRUE(absl::IsDataLoss(r.end)) << name << ": " << r.end;
    EXPECT_NE(Message(r.end).find(path), std::string::npos) << r.end;
  }
}

// --- zstd --------------------------------------------------------------------

// One frame with a checksum, as the zstd tool writes it.
std::string Zstd(const std::string& data, int level = 3) {
  std::string out(ZSTD_compressBound(data.size()), '\0');
  ZSTD_CCtx* cctx = ZSTD_createCCtx();
  ZSTD_CCtx_setParameter(cctx, ZSTD_c_compressionLevel, level);
  ZSTD_CCtx_setParameter(cctx, ZSTD_c_checksumFlag, 1);
  const size_t n =
      ZSTD_compress2(cctx, out.data(), out.size(), data.data(), data.size());
  ZSTD_freeCCtx(cctx);
  if (ZSTD_isError(n)) std::abort();
  out.resize(n);
  return out;
}

TEST_F(RecordReaderTest, ZstdTsvInEveryWindow) {
  std::string text;
  Pairs pairs;
  for (int i = 0; i < 100000; ++i) {
    pairs.emplace_back(StrCat("key", i), StrCat(i * 7));
    text += StrCat("key", i, "\t", i * 7, "\n");
  }
  const std::string zst = Zstd(text);
  for (size_t window : {size_t{1} << 20, size_t{4093}}) {
    RecordReaderOptions options;
    options.buffer_size = window;
    const std::string path = Write("in.tsv.zst", zst);
    auto reader = Open(path, options);
    ReadResult r = ReadAll(*reader);
    EXPECT_OK(r.end) << r.end;
    EXPECT_TRUE(r.records == pairs);
    EXPECT_EQ(reader->bytes_read(), zst.size());
    EXPECT_EQ(reader->Location(), path + ":100000");
  }
}

TEST_F(RecordReaderTest, ZstdConcatenatedAndSkippableFrames) {
  // A skippable frame: magic 0x184D2A50, a 4-byte size, that many bytes.
  const std::string skippable("\x50\x2a\x4d\x18\x03\x00\x00\x00xyz", 11);
  const std::string path =
      Write("in.tsv.zst", Zstd("a\t1\nb\t2") + Zstd("\nc\t3\n") + skippable +
                              Zstd("") + Zstd("d\t4\n", 19));
  ReadResult r = ReadAll(*Open(path));
  EXPECT_OK(r.end) << r.end;
  EXPECT_EQ(r.records, (Pairs{{"a", "1"}, {"b", "2"}, {"c", "3"}, {"d", "4"}}));
}

TEST_F(RecordReaderTest, ZstdCutOrDamagedIsDataLossNamingTheFile) {
  std::string text;
  for (int i = 0; i < 20000; ++i) text += StrCat("line ", i, "\n");
  const std::string zst = Zstd(text);
  std::string flipped = zst;
  flipped[zst.size() / 2] ^= 0x55;
  const std::vector<std::pair<std::string, std::string>> damaged = {
      {"flipped.zst", flipped},
      {"truncated.zst", zst.substr(0, zst.size() - 100)},
      {"short.zst", zst.substr(0, zst.size() - 1)},
      {"magic.zst", zst.substr(0, 4)},
      {"header.zst", "\x28\xb5\x2f\xfd garbage after the magic"},
      {"trailing.zst", zst + "trailing garbage"}};
  for (const auto& [name, data] : damaged) {
    for (size_t window : {size_t{1} << 20, size_t{1}}) {
      SCOPED_TRACE(StrCat(name, ", window ", window));
      const std::string path = Write(name, data);
      RecordReaderOptions options = Fixed(1, 0);
      options.buffer_size = window;
      ReadResult r = ReadAll(*Open(path, options));
      EXPECT_TRUE(absl::IsDataLoss(r.end)) << r.end;
      EXPECT_EQ(Message(r.end).rfind(path + ": ", 0), 0u) << r.end;
    }
  }
  const std::string path = Write("cut.zst", zst.substr(0, zst.size() - 100));
  ReadResult r = ReadAll(*Open(path, Fixed(1, 0)));
  EXPECT_EQ(Message(r.end), path + ": zstd data ends in the middle of a frame");
}

// --- Opening, stdin ----------------------------------------------------------

TEST_F(RecordReaderTest, OpenErrors) {
  const std::string missing = dir_.File("missing.tsv");
  absl::StatusOr<std::unique_ptr<RecordReader>> r =
      RecordReader::Open(missing, {});
  EXPECT_TRUE(absl::IsNotFound(r.status())) << r.status();
  EXPECT_EQ(Message(r.status()),
            "cannot open " + missing + ": No such file or directory");

  r = RecordReader::Open(dir_.path().string(), {});
  EXPECT_FALSE(r.ok());
  EXPECT_NE(Message(r.status()).find(dir_.path().string()), std::string::npos);

  if (geteuid() != 0) {  // root may read anything
    const std::string secret = Write("secret.tsv", "a\t1\n");
    chmod(secret.c_str(), 0);
    r = RecordReader::Open(secret, {});
    EXPECT_TRUE(absl::IsPermissionDenied(r.status())) << r.status();
    EXPECT_EQ(Message(r.status()),
              "cannot open " + secret + ": Permission denied");
  }
}

TEST_F(RecordReaderTest, OpensStdinWithoutReadingIt) {
  // Open() must not block on a terminal; reading waits for the first Next().
  EXPECT_NE(Open("-"), nullptr);
}

// Reads gzip TSV from a pipe on fd 0 in a child process, which exits 0 if
// the records and locations are right.
TEST_F(RecordReaderTest, ReadsGzipFromAPipeOnStdin) {
  std::string text;
  for (int i = 0; i < 50000; ++i) text += StrCat("k", i, "\tv\n");
  text += "bad\n";
  const std::string gz = Gzip(text);
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  const pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    close(fds[1]);
    if (dup2(fds[0], STDIN_FILENO) < 0) _exit(2);
    absl::StatusOr<std::unique_ptr<RecordReader>> reader =
        RecordReader::Open("-", {});
    if (!reader.ok()) _exit(3);
    ReadResult r = ReadAll(**reader);
    if (!r.end.ok() || r.records.size() != 50000) _exit(4);
    if (r.records[49999] !=
        std::make_pair(std::string("k49999"), std::string("v"))) {
      _exit(5);
    }
    if (r.errors != std::vector<std::string>{
                        "<stdin>:50001: no tab between key and value"}) {
      _exit(6);
    }
    if ((*reader)->bytes_read() != gz.size()) _exit(7);
    _exit(0);
  }
  close(fds[0]);
  size_t written = 0;
  while (written < gz.size()) {
    const ssize_t n = write(fds[1], gz.data() + written, gz.size() - written);
    if (n <= 0) break;
    written += static_cast<size_t>(n);
  }
  close(fds[1]);
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0);
}

// --- ExpandInputs ------------------------------------------------------------

TEST_F(RecordReaderTest, ExpandInputs) {
  for (const char* name : {"c.tsv", "a.tsv", "B.tsv", "b.tsv", "x.bin"}) {
    Write(name, "");
  }
  const std::string glob = dir_.File("*.tsv");
  absl::StatusOr<std::vector<std::string>> paths =
      ExpandInputs({"-", glob, "plain/path.tsv"});
  ASSERT_OK(paths) << paths.status();
  EXPECT_EQ(*paths,
            (std::vector<std::string>{"-", dir_.File("B.tsv"),
                                      dir_.File("a.tsv"), dir_.File("b.tsv"),
                                      dir_.File("c.tsv"), "plain/path.tsv"}));

  paths = ExpandInputs({dir_.File("[ax].*")});
  ASSERT_OK(paths) << paths.status();
  EXPECT_EQ(*paths,
            (std::vector<std::string>{dir_.File("a.tsv"), dir_.File("x.bin")}));

  const std::string none = dir_.File("*.gz");
  paths = ExpandInputs({glob, none});
  EXPECT_TRUE(absl::IsNotFound(paths.status())) << paths.status();
  EXPECT_EQ(Message(paths.status()), "no files match " + none);

  // A file whose name only looks like a glob.
  const std::string odd = Write("part[1].tsv", "");
  paths = ExpandInputs({odd});
  ASSERT_OK(paths) << paths.status();
  EXPECT_EQ(*paths, std::vector<std::string>{odd});
}

}  // namespace
}  // namespace roost::testing
