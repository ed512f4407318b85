// Coalesced Gets (client/get_coalescer.h) and the reading of MultiGet
// answers in either form (client/multiget_answer.h): the reader on
// hand-made answers, well formed and not; the coalescer against real
// roost-servers on loopback (tests/client/cluster_fixture.h): bursts and many
// threads, misses, errors handed to every Get of a batch, a killed replica
// retried on the other, a cluster with no server left, and ClusterClient's
// coalescing Get and GetAsync over three shards.

#include "client/get_coalescer.h"

#include <csignal>
#include <thread>

#include "client/cluster_client.h"
#include "client/multiget_answer.h"
#include "tests/client/cluster_fixture.h"

namespace roost::testing {
namespace {

using ::testing::HasSubstr;

// --- ReadMultiGetAnswer ------------------------------------------------------

struct Read {
  absl::Status status;
  std::vector<std::optional<std::string>> values;  // nullopt: missing
};

Read ReadAnswer(const v1::MultiGetResponse& response, size_t keys) {
  Read out;
  out.status = ReadMultiGetAnswer(
      response, keys, [&](size_t i, bool found, std::string_view value) {
        EXPECT_EQ(i, out.values.size());
        if (found) {
          out.values.emplace_back(std::string(value));
        } else {
          EXPECT_EQ(value, "");
          out.values.emplace_back(std::nullopt);
        }
      });
  return out;
}

using Values = std::vector<std::optional<std::string>>;

TEST(ReadMultiGetAnswer, TheClassicForm) {
  v1::MultiGetResponse r;
  r.add_results()->set_found(false);
  auto* hit = r.add_results();
  hit->set_found(true);
  hit->set_value("xy");
  Read read = ReadAnswer(r, 2);
  ASSERT_OK(read.status);
  EXPECT_EQ(read.values, (Values{std::nullopt, "xy"}));
  // An empty batch is an empty answer.
  read = ReadAnswer(v1::MultiGetResponse(), 0);
  ASSERT_OK(read.status);
  EXPECT_TRUE(read.values.empty());
}

TEST(ReadMultiGetAnswer, ThePackedFormWithOneWidth) {
  // lookup.proto's example: a ("xy"), b missing, c ("zw").
  v1::MultiGetResponse r;
  r.set_packed_values("xyzw");
  r.set_packed_width(2);
  r.add_missing(1);
  Read read = ReadAnswer(r, 3);
  ASSERT_OK(read.status);
  EXPECT_EQ(read.values, (Values{"xy", std::nullopt, "zw"}));
}

TEST(ReadMultiGetAnswer, ThePackedFormWithSizes) {
  // a ("xy"), b missing, c ("z"), d ("", found).
  v1::MultiGetResponse r;
  r.set_packed_values("xyz");
  for (uint32_t size : {2, 0, 1, 0}) r.add_packed_sizes(size);
  r.add_missing(1);
  Read read = ReadAnswer(r, 4);
  ASSERT_OK(read.status);
  EXPECT_EQ(read.values, (Values{"xy", std::nullopt, "z", ""}));
  // Every key missing.
  v1::MultiGetResponse none;
  for (uint32_t i = 0; i < 3; ++i) {
    none.add_packed_sizes(0);
    none.add_missing(i);
  }
  read = ReadAnswer(none, 3);
  ASSERT_OK(read.status);
  EXPECT_EQ(read.values, (Values{std::nullopt, std::nullopt, std::nullopt}));
}

TEST(ReadMultiGetAnswer, MalformedAnswersAreDataLossNamingTheFault) {
  auto expect_bad = [](const v1::MultiGetResponse& r, size_t keys,
                       std::string_view what) {
    Read read = ReadAnswer(r, keys);
    EXPECT_THAT(read.status,
                StatusIs(absl::StatusCode::kDataLoss, HasSubstr(what)))
        << r.ShortDebugString();
    EXPECT_TRUE(read.values.empty()) << "no key is emitted from a bad answer";
  };
  v1::MultiGetResponse classic;
  classic.add_results()->set_found(false);
  expect_bad(classic, 2, "1 results for 2 keys");

  v1::MultiGetResponse both = classic;
  both.set_packed_width(1);
  both.set_packed_values("a");
  expect_bad(both, 1, "both forms");

  v1::MultiGetResponse width;
  width.set_packed_values("xyz");  // 3 bytes for 2 values of 2
  width.set_packed_width(2);
  expect_bad(width, 2, "3 bytes, where 2 values of 2");

  v1::MultiGetResponse width_and_sizes;
  width_and_sizes.set_packed_values("xy");
  width_and_sizes.set_packed_width(2);
  width_and_sizes.add_packed_sizes(2);
  expect_bad(width_and_sizes, 1, "bytes, where");

  v1::MultiGetResponse unordered;
  unordered.set_packed_values("x");
  unordered.set_packed_width(1);
  unordered.add_missing(2);
  unordered.add_missing(1);
  expect_bad(unordered, 3, "key 1 missing, out of order");

  v1::MultiGetResponse beyond;
  beyond.set_packed_values("x");
  beyond.set_packed_width(1);
  beyond.add_missing(5);
  expect_bad(beyond, 2, "key 5 missing, of 2 keys");

  v1::MultiGetResponse sizes;
  sizes.set_packed_values("xyz");
  sizes.add_packed_sizes(2);
  sizes.add_packed_sizes(2);
  expect_bad(sizes, 2, "3 bytes, their sizes add up to 4");

  v1::MultiGetResponse count;
  count.set_packed_values("xy");
  count.add_packed_sizes(2);
  expect_bad(count, 2, "1 sizes for 2 keys");

  v1::MultiGetResponse missing_with_value;
  missing_with_value.set_packed_values("xy");
  missing_with_value.add_packed_sizes(1);
  missing_with_value.add_packed_sizes(1);
  missing_with_value.add_missing(1);
  expect_bad(missing_with_value, 2, "key 1 is missing with a value");
}

// --- GetCoalescer against real servers ---------------------------------------

KeyValues Data(int n) {
  KeyValues kvs;
  for (const std::string& key : Keys(n)) kvs[key] = "value of " + key;
  return kvs;
}

// Results of async Gets, gathered from gRPC's threads.
class Gathered {
 public:
  GetCoalescer::Done Slot(size_t i) {
    return [this, i](absl::StatusOr<GetResult> r) {
      std::lock_guard lock(mu_);
      results_[i] = std::move(r);
      if (++done_ == results_.size()) all_.notify_all();
    };
  }
  explicit Gathered(size_t n) : results_(n, absl::UnknownError("no answer")) {}
  // Waits for every slot (at most 60 s).
  bool Wait() {
    std::unique_lock lock(mu_);
    return all_.wait_for(lock, std::chrono::seconds(60),
                         [&] { return done_ == results_.size(); });
  }
  const absl::StatusOr<GetResult>& operator[](size_t i) const {
    return results_[i];
  }

 private:
  std::mutex mu_;
  std::condition_variable all_;
  std::vector<absl::StatusOr<GetResult>> results_;
  size_t done_ = 0;
};

class GetCoalescerTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    scratch_ = new ScratchDir;
    cluster_ = new LoopbackCluster(*scratch_, {2});
    kvs_ = new KeyValues(Data(3000));
    ASSERT_NE(BuildTable(cluster_->data_dir(0), "t", *kvs_, "cuckoo"), "");
    ASSERT_NE(BuildTable(cluster_->data_dir(0), "b", *kvs_, "block"), "");
    ASSERT_TRUE(cluster_->Start());
    auto shards = Shards::Connect(cluster_->layout());
    ASSERT_OK(shards);
    shards_ = new Shards(*std::move(shards));
  }
  static void TearDownTestSuite() {
    delete shards_;
    delete cluster_;
    delete kvs_;
    delete scratch_;
  }

  static ScratchDir* scratch_;
  static LoopbackCluster* cluster_;
  static KeyValues* kvs_;
  static Shards* shards_;
};
ScratchDir* GetCoalescerTest::scratch_ = nullptr;
LoopbackCluster* GetCoalescerTest::cluster_ = nullptr;
KeyValues* GetCoalescerTest::kvs_ = nullptr;
Shards* GetCoalescerTest::shards_ = nullptr;

TEST_F(GetCoalescerTest, ABurstOfGetsGoesOutInFewBatchesEachAnsweredRight) {
  for (const char* table : {"t", "b"}) {
    SCOPED_TRACE(table);
    CoalescerOptions options;
    options.max_in_flight = 2;
    options.max_batch = 500;
    GetCoalescer coalescer(shards_->replicas(0), 0, options);
    std::vector<std::string> keys;
    for (const auto& [key, value] : *kvs_) {
      keys.push_back(key);
      if (keys.size() % 10 == 0) keys.push_back(StrCat("absent-", key));
    }
    Gathered got(keys.size());
    for (size_t i = 0; i < keys.size(); ++i) {
      coalescer.Get(table, keys[i], got.Slot(i));
    }
    ASSERT_TRUE(got.Wait());
    for (size_t i = 0; i < keys.size(); ++i) {
      ASSERT_OK(got[i]) << keys[i];
      const auto it = kvs_->find(keys[i]);
      EXPECT_EQ(got[i]->found, it != kvs_->end()) << keys[i];
      EXPECT_EQ(got[i]->value, it == kvs_->end() ? "" : it->second);
      EXPECT_EQ(got[i]->version, "v000001");
    }
    EXPECT_EQ(coalescer.gets(), keys.size());
    // 3,300 Gets, at most 500 a batch: at least 7 batches, and far fewer
    // than one per Get (the first two go alone, the rest queue behind).
    EXPECT_GE(coalescer.batches(), keys.size() / options.max_batch);
    EXPECT_LE(coalescer.batches(), 40u);
  }
}

TEST_F(GetCoalescerTest, BlockingGetsFromManyThreads) {
  GetCoalescer coalescer(shards_->replicas(0), 0, {});
  std::vector<std::string> keys;
  for (const auto& [key, value] : *kvs_) keys.push_back(key);
  Problems problems;
  std::vector<std::thread> threads;
  for (int t = 0; t < 16; ++t) {
    threads.emplace_back([&, t] {
      for (size_t i = t; i < keys.size(); i += 16) {
        absl::StatusOr<GetResult> r = coalescer.Get("t", keys[i]);
        if (!r.ok() || !r->found || r->value != kvs_->at(keys[i])) {
          problems.Add(StrCat(keys[i], ": ", r.ok() ? r->value : "error"));
        }
      }
    });
  }
  for (auto& thread : threads) thread.join();
  EXPECT_EQ(problems.count(), 0) << problems.Describe();
  EXPECT_EQ(coalescer.gets(), keys.size());
  EXPECT_LE(coalescer.batches(), coalescer.gets());
}

TEST_F(GetCoalescerTest, AnErrorReachesEveryGetOfItsBatch) {
  CoalescerOptions options;
  options.max_in_flight = 1;
  GetCoalescer coalescer(shards_->replicas(0), 0, options);
  Gathered got(50);
  for (size_t i = 0; i < 50; ++i) {
    coalescer.Get("no_such_table", StrCat("k", i), got.Slot(i));
  }
  ASSERT_TRUE(got.Wait());
  for (size_t i = 0; i < 50; ++i) {
    EXPECT_THAT(got[i],
                StatusIs(absl::StatusCode::kNotFound, HasSubstr("shard 0 (")));
  }
  // Another table's Gets are their own batches, and answer.
  ASSERT_OK(coalescer.Get("t", kvs_->begin()->first));
}

// Servers killed: clusters of their own.
class GetCoalescerFailoverTest : public ServerFixture {};

TEST_F(GetCoalescerFailoverTest, AKilledReplicaIsRetriedThenNoneLeftFails) {
  LoopbackCluster cluster(scratch_, {2});
  const KeyValues kvs = Data(200);
  ASSERT_NE(BuildTable(cluster.data_dir(0), "t", kvs), "");
  ASSERT_TRUE(cluster.Start());
  auto shards = Shards::Connect(cluster.layout());
  ASSERT_OK(shards);
  CoalescerOptions options;
  options.timeout_seconds = 5;
  GetCoalescer coalescer(shards->replicas(0), 0, options);
  std::vector<std::string> keys;
  for (const auto& [key, value] : kvs) keys.push_back(key);
  for (int i = 0; i < 4; ++i) ASSERT_OK(coalescer.Get("t", keys[i]));

  cluster.server(0, 0).SendSignal(SIGKILL);
  ASSERT_EQ(cluster.server(0, 0).WaitExit(), 128 + SIGKILL);
  {
    Gathered got(keys.size());
    for (size_t i = 0; i < keys.size(); ++i) {
      coalescer.Get("t", keys[i], got.Slot(i));
    }
    ASSERT_TRUE(got.Wait());
    for (size_t i = 0; i < keys.size(); ++i) {
      ASSERT_OK(got[i]) << keys[i];
      EXPECT_EQ(got[i]->value, kvs.at(keys[i]));
    }
  }

  // No replica left: UNAVAILABLE for every Get, well before the deadline.
  cluster.server(0, 1).SendSignal(SIGKILL);
  ASSERT_EQ(cluster.server(0, 1).WaitExit(), 128 + SIGKILL);
  Gathered got(20);
  const auto start = Clock::now();
  for (size_t i = 0; i < 20; ++i) coalescer.Get("t", keys[i], got.Slot(i));
  ASSERT_TRUE(got.Wait());
  EXPECT_LT(Clock::now() - start, std::chrono::seconds(4));
  for (size_t i = 0; i < 20; ++i) {
    EXPECT_THAT(got[i], StatusIs(absl::StatusCode::kUnavailable,
                                 HasSubstr("shard 0 (")));
  }
}

TEST_F(GetCoalescerFailoverTest, BatchesAreCutAtMaxBatch) {
  // The server takes at most 10 keys a MultiGet: a burst through a
  // coalescer cut at 10 is answered whole; one cut at 20 is refused.
  LoopbackCluster cluster(scratch_, {1}, {"--max-batch", "10"});
  const KeyValues kvs = Data(500);
  ASSERT_NE(BuildTable(cluster.data_dir(0), "t", kvs), "");
  ASSERT_TRUE(cluster.Start());
  auto shards = Shards::Connect(cluster.layout());
  ASSERT_OK(shards);
  std::vector<std::string> keys;
  for (const auto& [key, value] : kvs) keys.push_back(key);
  for (uint32_t max_batch : {10, 20}) {
    SCOPED_TRACE(max_batch);
    CoalescerOptions options;
    options.max_in_flight = 1;
    options.max_batch = max_batch;
    GetCoalescer coalescer(shards->replicas(0), 0, options);
    Gathered got(keys.size());
    for (size_t i = 0; i < keys.size(); ++i) {
      coalescer.Get("t", keys[i], got.Slot(i));
    }
    ASSERT_TRUE(got.Wait());
    size_t refused = 0;
    for (size_t i = 0; i < keys.size(); ++i) {
      if (got[i].ok()) {
        EXPECT_EQ(got[i]->value, kvs.at(keys[i]));
      } else {
        ++refused;
        EXPECT_THAT(got[i], StatusIs(absl::StatusCode::kInvalidArgument,
                                     HasSubstr("shard 0 (")));
      }
    }
    if (max_batch == 10) {
      EXPECT_EQ(refused, 0u);
      EXPECT_GE(coalescer.batches(), keys.size() / 10);
    } else {
      EXPECT_GT(refused, 0u);
    }
  }
}

TEST_F(GetCoalescerFailoverTest, ClusterClientCoalescesOverThreeShards) {
  LoopbackCluster cluster(scratch_, {1, 1, 1});
  const KeyValues kvs = Data(600);
  ASSERT_NE(
      BuildTable(cluster.data_dir(0), "t", kvs, "cuckoo", {"--shards", "3"}),
      "");
  ASSERT_TRUE(cluster.Start());
  ClusterClientOptions options;
  options.coalesce_gets = true;
  auto client = ClusterClient::Create(cluster.layout(), options);
  ASSERT_OK(client);
  std::vector<std::string> keys;
  for (const auto& [key, value] : kvs) keys.push_back(key);
  keys.push_back("absent");

  Gathered got(keys.size());
  for (size_t i = 0; i < keys.size(); ++i) {
    (*client)->GetAsync("t", keys[i], got.Slot(i));
  }
  ASSERT_TRUE(got.Wait());
  for (size_t i = 0; i + 1 < keys.size(); ++i) {
    ASSERT_OK(got[i]) << keys[i];
    EXPECT_TRUE(got[i]->found);
    EXPECT_EQ(got[i]->value, kvs.at(keys[i]));
  }
  ASSERT_OK(got[keys.size() - 1]);
  EXPECT_FALSE(got[keys.size() - 1]->found);

  // The blocking Get through the coalescer, and around it when the call
  // names a version.
  absl::StatusOr<GetResult> r = (*client)->Get("t", keys[7]);
  ASSERT_OK(r);
  EXPECT_EQ(r->value, kvs.at(keys[7]));
  CallOptions pinned;
  pinned.version = "v000001";
  r = (*client)->Get("t", keys[8], pinned);
  ASSERT_OK(r);
  EXPECT_EQ(r->value, kvs.at(keys[8]));

  ClusterClientOptions bad;
  bad.coalesce_max_batch = 0;
  EXPECT_THAT(
      ClusterClient::Create(cluster.layout(), bad),
      StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("coalescing")));
}

}  // namespace
}  // namespace roost::testing
