// roost-server end to end: tables of rows (lookup.proto's Rows). The schema
// in ListTables, projections (Get, MultiGet, the packed form) compared with
// the row codec's own, scores of a float32_list field against a double
// reference, the top k of a batch, and every wrong request refused naming
// what is wrong. The rows are made with storage/row's RowBuilder and
// published by the real roost-load as hex values, their schema then written
// into the MANIFEST (what `roost-load build --rows` writes there).
#include <algorithm>
#include <cmath>
#include <random>

#include "client/cluster_client.h"
#include "storage/row/row_codec.h"
#include "tests/harness/child_process.h"
#include "tests/harness/manifest_edit.h"
#include "tests/harness/roost_binaries.h"
#include "tests/harness/server_harness.h"
#include "tests/harness/test_util.h"
#include "util/str_cat.h"

namespace roost::testing {
namespace {

using grpc::StatusCode;
using ::testing::HasSubstr;

constexpr char kSchema[] = R"({"encoding": "roost-row-1", "fields": [
    {"name": "ltv", "type": "float64", "nullable": true},
    {"name": "segments", "type": "string_list", "nullable": false},
    {"name": "embedding", "type": "float32_list", "nullable": true},
    {"name": "name", "type": "string", "nullable": false}]})";

RowSchema TheSchema() {
  auto schema = RowSchema::FromJson(*ParseJson(kSchema));
  EXPECT_TRUE(schema.ok());
  return *schema;
}

// Row i: ltv null for every 5th, a 4-dimension embedding (3 dimensions for
// every 7th, null for every 11th).
struct Rows {
  RowSchema schema = TheSchema();
  KeyValues kvs;
  std::map<std::string, std::vector<float>> embeddings;
};

Rows MakeRows(int n) {
  Rows rows;
  RowBuilder b(&rows.schema);
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> u(-1, 1);
  for (int i = 0; i < n; ++i) {
    const std::string key = StrCat("user", i);
    if (i % 5 == 0) {
      b.SetNull(0);
    } else {
      b.SetFloat(0, i * 1.5);
    }
    b.StartStringList(1);
    for (int s = 0; s < i % 3; ++s) b.AddString(1, StrCat("seg", s));
    if (i % 11 == 0) {
      b.SetNull(2);
    } else {
      std::vector<float> e(i % 7 == 0 ? 3 : 4);
      for (float& x : e) x = u(rng);
      b.SetVariable(2, std::string(reinterpret_cast<const char*>(e.data()),
                                   e.size() * 4));
      rows.embeddings[key] = e;
    }
    b.SetVariable(3, StrCat("name ", i));
    std::string row;
    EXPECT_OK(b.Finish(&row));
    rows.kvs[key] = row;
  }
  return rows;
}

class RowsTest : public ServerFixture {
 protected:
  void SetUp() override {
    rows_ = MakeRows(300);
    for (const char* format : {"cuckoo", "block"}) {
      const std::string dir = BuildTable(data_, format, rows_.kvs, format);
      ASSERT_NE(dir, "");
      EditManifest(dir, [](Json& m) { m["schema"] = *ParseJson(kSchema); });
    }
    ASSERT_NE(BuildTable(data_, "opaque", {{"k", "v"}}), "");
    server_ = std::make_unique<ServerProcess>(Flags(), LogFile());
    ASSERT_TRUE(server_->WaitReady());
  }

  grpc::Status Call(const v1::MultiGetRequest& request,
                    v1::MultiGetResponse* response) {
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() +
                         std::chrono::seconds(30));
    return server_->lookup().MultiGet(&context, request, response);
  }

  // The row of `key` projected onto `fields` by the row codec.
  std::string Projected(const std::string& key,
                        const std::vector<std::string>& fields) {
    std::vector<uint32_t> indexes;
    auto p = rows_.schema.Project(fields, &indexes);
    EXPECT_OK(p);
    RowProjection projection(&rows_.schema, &*p, indexes);
    const std::string& row = rows_.kvs.at(key);
    std::string out(*projection.Size(row), '\0');
    projection.Write(row, out.data());
    return out;
  }

  Rows rows_;
  std::unique_ptr<ServerProcess> server_;
};

TEST_F(RowsTest, ListTablesShowsTheSchema) {
  v1::ListTablesResponse list;
  ASSERT_OK(server_->ListTables(&list));
  for (const v1::TableInfo& t : list.tables()) {
    if (t.name() == "opaque") {
      EXPECT_EQ(t.schema_json(), "");
    } else {
      EXPECT_EQ(t.schema_json(), DumpJson(rows_.schema.ToJson(), false));
    }
  }
}

TEST_F(RowsTest, ProjectionsAreTheCodecsInEveryForm) {
  const std::vector<std::string> fields{"embedding", "ltv", "segments"};
  for (const char* table : {"cuckoo", "block"}) {
    v1::MultiGetRequest request;
    request.set_table(table);
    for (const std::string& f : fields) request.add_fields(f);
    std::vector<std::string> keys;
    for (int i = 0; i < 60; ++i) keys.push_back(StrCat("user", i * 5));
    keys.push_back("nobody");
    for (const std::string& k : keys) request.add_keys(k);
    v1::MultiGetResponse entries, packed;
    ASSERT_OK(Call(request, &entries));
    request.set_packed(true);
    ASSERT_OK(Call(request, &packed));
    ASSERT_EQ(entries.results_size(), static_cast<int>(keys.size()));
    size_t at = 0;
    for (size_t k = 0; k < keys.size(); ++k) {
      if (!rows_.kvs.count(keys[k])) {
        EXPECT_FALSE(entries.results(k).found());
        continue;
      }
      const std::string want = Projected(keys[k], fields);
      EXPECT_EQ(entries.results(k).value(), want) << table << " " << keys[k];
      const size_t size = packed.packed_sizes(k);
      EXPECT_EQ(packed.packed_values().substr(at, size), want);
      at += size;
    }
    EXPECT_EQ(packed.missing_size(), 1);
    // Get too, and a field asked alone.
    v1::GetRequest get;
    get.set_table(table);
    get.set_key("user12");
    get.add_fields("name");
    v1::GetResponse one;
    grpc::ClientContext context;
    ASSERT_OK(server_->lookup().Get(&context, get, &one));
    EXPECT_EQ(one.value(), Projected("user12", {"name"}));
    std::vector<uint32_t> indexes;
    const std::vector<std::string> name{"name"};
    auto name_only = rows_.schema.Project(name, &indexes);
    ASSERT_OK(name_only);
    EXPECT_EQ(DumpJson(RowToJson(*name_only, one.value()), false),
              R"({"name":"name 12"})");
  }
}

TEST_F(RowsTest, ScoresAreTheDoubleReferences) {
  const std::vector<float> query{0.5f, -0.25f, 1.0f, 0.125f};
  for (int similarity : {0, 1}) {
    v1::MultiGetRequest request;
    request.set_table("cuckoo");
    std::vector<std::string> keys;
    for (int i = 0; i < 120; ++i) keys.push_back(StrCat("user", i));
    keys.push_back("nobody");
    for (const std::string& k : keys) request.add_keys(k);
    v1::Score* score = request.mutable_score();
    score->set_field("embedding");
    score->set_similarity(static_cast<v1::Score::Similarity>(similarity));
    for (float q : query) score->add_query(q);
    v1::MultiGetResponse r;
    ASSERT_OK(Call(request, &r));
    ASSERT_EQ(r.scores_size(), static_cast<int>(keys.size()));
    for (size_t k = 0; k < keys.size(); ++k) {
      auto e = rows_.embeddings.find(keys[k]);
      if (e == rows_.embeddings.end() || e->second.size() != 4) {
        // Missing, a null embedding, or one of 3 dimensions: no score.
        EXPECT_TRUE(std::isnan(r.scores(k))) << keys[k];
        continue;
      }
      double dot = 0, vv = 0, qq = 0;
      for (size_t d = 0; d < 4; ++d) {
        dot += double{e->second[d]} * query[d];
        vv += double{e->second[d]} * e->second[d];
        qq += double{query[d]} * query[d];
      }
      const double want = similarity == 0 ? dot : dot / std::sqrt(vv * qq);
      EXPECT_NEAR(r.scores(k), want, 1e-5) << keys[k];
      // No fields asked: found, without a value.
      EXPECT_TRUE(r.results(k).found());
      EXPECT_EQ(r.results(k).value(), "");
    }
    EXPECT_EQ(r.top_size(), 0);
    // The packed form too: every found key's value empty, the same scores.
    // (A found value of no bytes once reached memcpy as a null pointer:
    // UBSan, in the Python client's tests of the sanitized server.)
    request.set_packed(true);
    v1::MultiGetResponse packed;
    ASSERT_OK(Call(request, &packed));
    EXPECT_EQ(packed.packed_values(), "");
    ASSERT_EQ(packed.missing_size(), 1);
    EXPECT_EQ(packed.missing(0), keys.size() - 1);
    ASSERT_EQ(packed.scores_size(), r.scores_size());
    for (int k = 0; k < r.scores_size(); ++k) {
      if (std::isnan(r.scores(k))) {
        EXPECT_TRUE(std::isnan(packed.scores(k)));
      } else {
        EXPECT_EQ(packed.scores(k), r.scores(k));
      }
    }
  }
}

TEST_F(RowsTest, TopKAnswersTheBestKeysOnly) {
  const std::vector<float> query{1, 0, 0, 0};
  v1::MultiGetRequest request;
  request.set_table("block");
  std::vector<std::string> keys;
  for (int i = 0; i < 100; ++i) keys.push_back(StrCat("user", i));
  for (const std::string& k : keys) request.add_keys(k);
  request.add_fields("name");
  v1::Score* score = request.mutable_score();
  score->set_field("embedding");
  for (float q : query) score->add_query(q);
  score->set_top_k(5);
  v1::MultiGetResponse r;
  ASSERT_OK(Call(request, &r));
  // The reference: every scored key's first dimension, best first.
  std::vector<std::pair<float, size_t>> scored;
  for (size_t k = 0; k < keys.size(); ++k) {
    auto e = rows_.embeddings.find(keys[k]);
    if (e != rows_.embeddings.end() && e->second.size() == 4) {
      scored.push_back({e->second[0], k});
    }
  }
  std::sort(scored.begin(), scored.end(), [](auto a, auto b) {
    return a.first != b.first ? a.first > b.first : a.second < b.second;
  });
  ASSERT_EQ(r.top_size(), 5);
  ASSERT_EQ(r.scores_size(), 5);
  ASSERT_EQ(r.results_size(), 5);
  for (int j = 0; j < 5; ++j) {
    EXPECT_EQ(r.top(j), scored[j].second);
    EXPECT_FLOAT_EQ(r.scores(j), scored[j].first);
    EXPECT_EQ(r.results(j).value(),
              Projected(keys[scored[j].second], {"name"}));
  }
}

TEST_F(RowsTest, WrongRequestsAreRefusedNamingWhatIsWrong) {
  auto refused = [&](const std::function<void(v1::MultiGetRequest&)>& edit) {
    v1::MultiGetRequest request;
    request.set_table("cuckoo");
    request.add_keys("user1");
    edit(request);
    v1::MultiGetResponse r;
    const grpc::Status s = Call(request, &r);
    EXPECT_EQ(s.error_code(), StatusCode::INVALID_ARGUMENT)
        << s.error_message();
    return s.error_message();
  };
  EXPECT_THAT(refused([](auto& r) { r.add_fields("lvt"); }),
              HasSubstr("no field \"lvt\" in the table's rows"));
  EXPECT_THAT(refused([](auto& r) {
                r.add_fields("ltv");
                r.add_fields("ltv");
              }),
              HasSubstr("field \"ltv\" is asked for twice"));
  EXPECT_THAT(refused([](auto& r) {
                r.set_table("opaque");
                r.add_fields("ltv");
              }),
              HasSubstr("table \"opaque\" holds opaque values: fields need a "
                        "table of rows"));
  EXPECT_THAT(refused([](auto& r) {
                r.mutable_score()->set_field("name");
                r.mutable_score()->add_query(1);
              }),
              HasSubstr("score: field \"name\" is string, not a "
                        "float32_list"));
  EXPECT_THAT(
      refused([](auto& r) { r.mutable_score()->set_field("embedding"); }),
      HasSubstr("score: the query is empty"));
  EXPECT_THAT(refused([](auto& r) {
                r.mutable_score()->set_field("embedding");
                r.mutable_score()->add_query(1);
                r.mutable_score()->set_similarity(
                    static_cast<v1::Score::Similarity>(7));
              }),
              HasSubstr("score: unknown similarity 7"));
  EXPECT_THAT(refused([](auto& r) {
                r.mutable_score()->set_field("nope");
                r.mutable_score()->add_query(1);
              }),
              HasSubstr("score: no field \"nope\""));
}

TEST_F(RowsTest, TheCppClientReturnsTypedRows) {
  ClusterLayout layout;
  layout.shards.push_back({{server_->lookup_address()}});
  auto client = ClusterClient::Create(layout);
  ASSERT_OK(client);
  const std::vector<std::string> keys{"user3", "nobody", "user10"};
  CallOptions call;
  call.fields = {"ltv", "segments"};
  auto r = (*client)->MultiGetRows("cuckoo", keys, call);
  ASSERT_OK(r);
  EXPECT_EQ(r->version, "v000001");
  ASSERT_EQ(r->rows.size(), 3u);
  EXPECT_FALSE(r->rows[1]);
  ASSERT_TRUE(r->rows[0] && r->rows[2]);
  RowReader three(&r->schema, *r->rows[0]);
  EXPECT_EQ(three.Float(0), 4.5);
  EXPECT_EQ(three.Strings(1), (std::vector<std::string_view>{}));
  RowReader ten(&r->schema, *r->rows[2]);
  EXPECT_TRUE(ten.IsNull(0));  // every 5th ltv is null
  EXPECT_EQ(ten.Strings(1), (std::vector<std::string_view>{"seg0"}));
  // Whole rows: the version's schema.
  auto whole = (*client)->MultiGetRows("block", keys);
  ASSERT_OK(whole);
  EXPECT_TRUE(whole->schema == rows_.schema);
  EXPECT_EQ(*whole->rows[0], rows_.kvs.at("user3"));
  // A table of opaque values is not one of rows.
  EXPECT_THAT((*client)->MultiGetRows("opaque", keys).status(),
              StatusIs(absl::StatusCode::kFailedPrecondition,
                       HasSubstr("table opaque holds opaque values")));
}

TEST_F(RowsTest, RoostGetPrintsRowsAsJsonLines) {
  const ProcessResult r = RunProcess(
      {RoostGetBinary(), "--addr", server_->lookup_address(), "--rows",
       "--fields", "name,ltv", "cuckoo", "user3", "user404", "user10"});
  EXPECT_EQ(r.exit_code, 1) << r.err;  // a key not found
  EXPECT_EQ(r.out,
            "{\"key\":\"user3\",\"row\":{\"name\":\"name 3\",\"ltv\":4.5}}\n"
            "{\"key\":\"user10\",\"row\":{\"name\":\"name 10\",\"ltv\":null}}"
            "\n");
  EXPECT_THAT(r.err, HasSubstr("roost-get: \"user404\": not found"));
  const ProcessResult bad =
      RunProcess({RoostGetBinary(), "--addr", server_->lookup_address(),
                  "--fields", "nope", "cuckoo", "user3"});
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_THAT(bad.err, HasSubstr("no field \"nope\" in the table's rows"));
}

}  // namespace
}  // namespace roost::testing
