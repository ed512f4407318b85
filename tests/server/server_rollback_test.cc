// roost-server end to end: rollback through the admin service and
// roost-admin, the pin across new versions and restarts, and unpinning. See
// tests/harness/server_harness.h.

#include <signal.h>

#include <filesystem>
#include <thread>

#include "tests/harness/server_harness.h"
#include "tests/harness/test_util.h"
#include "util/str_cat.h"

namespace roost::testing {
namespace {

namespace fs = std::filesystem;
using grpc::StatusCode;

class RollbackTest : public ServerFixture {};

// What the server says a version stands in for (lookup.proto's
// withdrawn_through): in ListTables, and in the answers of Get, MultiGet
// (both forms), and Scan's (`scan`: the version served is a block table).
::testing::AssertionResult Withdrawn(ServerProcess& server,
                                     const std::string& key,
                                     const std::string& want,
                                     bool scan = false) {
  auto info = server.Table("t");
  if (!info) return ::testing::AssertionFailure() << "no table t";
  if (info->withdrawn_through() != want) {
    return ::testing::AssertionFailure()
           << "ListTables: withdrawn_through \"" << info->withdrawn_through()
           << "\", want \"" << want << "\"";
  }
  v1::GetResponse get;
  grpc::Status st = server.Get("t", key, &get);
  if (!st.ok() || get.withdrawn_through() != want) {
    return ::testing::AssertionFailure()
           << "Get: " << st.error_message() << " withdrawn_through \""
           << get.withdrawn_through() << "\", want \"" << want << "\"";
  }
  for (bool packed : {false, true}) {
    v1::MultiGetRequest request;
    request.set_table("t");
    request.add_keys(key);
    request.set_packed(packed);
    v1::MultiGetResponse batch;
    grpc::ClientContext context;
    st = server.lookup().MultiGet(&context, request, &batch);
    if (!st.ok() || batch.withdrawn_through() != want) {
      return ::testing::AssertionFailure()
             << "MultiGet (packed " << packed << "): " << st.error_message()
             << " withdrawn_through \"" << batch.withdrawn_through()
             << "\", want \"" << want << "\"";
    }
  }
  if (scan) {
    v1::ScanRequest request;
    request.set_table("t");
    request.set_limit(3);
    grpc::ClientContext context;
    auto reader = server.lookup().Scan(&context, request);
    v1::ScanResponse message;
    int messages = 0;
    while (reader->Read(&message)) {
      ++messages;
      if (message.withdrawn_through() != want) {
        return ::testing::AssertionFailure()
               << "Scan: withdrawn_through \"" << message.withdrawn_through()
               << "\", want \"" << want << "\"";
      }
    }
    st = reader->Finish();
    if (!st.ok() || messages == 0) {
      return ::testing::AssertionFailure()
             << "Scan: " << st.error_message() << " after " << messages
             << " messages";
    }
  }
  return ::testing::AssertionSuccess();
}

TEST_F(RollbackTest, RollbackPinsAVersionAcrossNewVersionsAndRestarts) {
  const std::vector<std::string> keys = Keys(200);
  for (int v = 1; v <= 3; ++v) {
    ASSERT_NE(
        BuildTable(data_, "t", Versioned(v, keys), v == 2 ? "block" : "cuckoo"),
        "");
  }
  {
    ServerProcess server(Flags(), LogFile("first"));
    ASSERT_TRUE(server.WaitReady());
    ASSERT_EQ(server.ServingVersion("t"), "v000003");
    ASSERT_TRUE(ServesVersion(server, keys, 3));

    // To the version before the one served.
    v1::RollbackResponse rolled;
    ASSERT_OK(server.Rollback("t", "", &rolled));
    EXPECT_EQ(rolled.serving_version(), "v000002");
    EXPECT_EQ(rolled.previous_version(), "v000003");
    EXPECT_TRUE(ServesVersion(server, keys, 2));
    auto info = server.Table("t");
    ASSERT_TRUE(info);
    EXPECT_EQ(info->serving_version(), "v000002");
    EXPECT_TRUE(info->pinned());
    EXPECT_EQ(Strings(info->rolled_back_versions()), Names{"v000003"});
    EXPECT_TRUE(fs::exists(TableDir() + "/ROLLBACK"));
    // Answers of v2 say it stands in for v3, withdrawn.
    EXPECT_TRUE(Withdrawn(server, keys[0], "v000003", /*scan=*/true));

    // A new version while pinned: seen on disk, not served.
    ASSERT_NE(BuildTable(data_, "t", Versioned(4, keys)), "");
    ASSERT_TRUE(WaitFor([&] {
      auto t = server.Table("t");
      return t && t->versions_on_disk_size() == 4;
    }));
    // A few more scans (--poll-interval 0.2) to be sure none swaps it in.
    std::this_thread::sleep_for(std::chrono::seconds(1));
    EXPECT_EQ(server.ServingVersion("t"), "v000002");
    EXPECT_EQ(server.CountLogLines("serving t v000004"), 0);
    EXPECT_TRUE(ServesVersion(server, keys, 2));

    // Unpinned: the newest version not rolled back from, v4, never v3.
    v1::UnpinResponse unpinned;
    ASSERT_OK(server.Unpin("t", &unpinned));
    EXPECT_EQ(unpinned.serving_version(), "v000004");
    EXPECT_TRUE(ServesVersion(server, keys, 4));
    info = server.Table("t");
    ASSERT_TRUE(info);
    EXPECT_FALSE(info->pinned());
    EXPECT_EQ(Strings(info->rolled_back_versions()), Names{"v000003"});
    EXPECT_EQ(server.CountLogLines("serving t v000003"), 1);
    // v4 stands in for nothing: v3, rolled back from, is older.
    EXPECT_TRUE(Withdrawn(server, keys[0], ""));

    // Errors.
    EXPECT_TRUE(IsError(server.Rollback("nope", "", &rolled),
                        StatusCode::NOT_FOUND, "no table \"nope\""));
    EXPECT_TRUE(IsError(server.Rollback("t", "v000009", &rolled),
                        StatusCode::NOT_FOUND,
                        "table \"t\" has no complete version v000009 on "
                        "disk"));
    EXPECT_TRUE(IsError(server.Rollback("t", "x", &rolled),
                        StatusCode::INVALID_ARGUMENT,
                        "bad version \"x\" (expected v000003 or 3)"));
    EXPECT_TRUE(IsError(server.Unpin("nope", &unpinned), StatusCode::NOT_FOUND,
                        "no table \"nope\""));
    EXPECT_EQ(server.ServingVersion("t"), "v000004");

    // Rolling back to the version served pins it, and marks nothing.
    ASSERT_OK(server.Rollback("t", "v000004", &rolled));
    EXPECT_EQ(rolled.serving_version(), "v000004");
    // (roost-admin reads previous == serving as "already served".)
    EXPECT_EQ(rolled.previous_version(), "v000004");
    info = server.Table("t");
    ASSERT_TRUE(info);
    EXPECT_TRUE(info->pinned());
    EXPECT_EQ(Strings(info->rolled_back_versions()), Names{"v000003"});

    // roost-admin, end to end: to v1 by number.
    const ProcessResult r =
        RunProcess({RoostAdminBinary(), "--addr", server.admin_address(),
                    "rollback", "t", "1"});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(r.out, "t: now serving v000001 (rolled back from v000004)\n");
    EXPECT_TRUE(ServesVersion(server, keys, 1));
    EXPECT_TRUE(Withdrawn(server, keys[0], "v000004"));
    server.Disconnect();
    server.SendSignal(SIGTERM);
    EXPECT_EQ(server.WaitExit(), 0) << server.Log();
  }
  // The pin and the marks survive a restart.
  {
    ServerProcess server(Flags(), LogFile("second"));
    ASSERT_TRUE(server.WaitReady());
    auto info = server.Table("t");
    ASSERT_TRUE(info);
    EXPECT_EQ(info->serving_version(), "v000001");
    EXPECT_TRUE(info->pinned());
    EXPECT_EQ(Strings(info->rolled_back_versions()),
              (Names{"v000003", "v000004"}));
    EXPECT_TRUE(ServesVersion(server, keys, 1));
    EXPECT_EQ(server.CountLogLines("serving t v00000"), 1) << server.Log();
    // From the ROLLBACK file after a restart, too.
    EXPECT_TRUE(Withdrawn(server, keys[0], "v000004"));
  }
  // With the pinned version gone at start, the table is served as if
  // unpinned (never from a version rolled back from), and still reported
  // pinned; Unpin then changes nothing.
  fs::remove_all(TableDir() + "/v000001");
  ServerProcess server(Flags(), LogFile("third"));
  ASSERT_TRUE(server.WaitReady());
  auto info = server.Table("t");
  ASSERT_TRUE(info);
  EXPECT_EQ(info->serving_version(), "v000002");
  EXPECT_TRUE(info->pinned());
  EXPECT_TRUE(ServesVersion(server, keys, 2));
  v1::UnpinResponse unpinned;
  ASSERT_OK(server.Unpin("t", &unpinned));
  EXPECT_EQ(unpinned.serving_version(), "v000002");
  EXPECT_FALSE(server.Table("t").value_or(v1::TableInfo()).pinned());
  EXPECT_TRUE(ServesVersion(server, keys, 2));
}

// Issue 30, item 22: `roost-admin rollback T v1` was refused (the server
// takes v000001 or 1) where `roost-load rollback --to v1` works.
TEST_F(RollbackTest, RoostAdminTakesVersionsAsRoostLoadDoes) {
  const std::vector<std::string> keys = Keys(20);
  for (int v = 1; v <= 3; ++v) {
    ASSERT_NE(BuildTable(data_, "t", Versioned(v, keys)), "");
  }
  ServerProcess server(Flags(), LogFile());
  ASSERT_TRUE(server.WaitReady());
  const auto rollback = [&](const std::string& version) {
    return RunProcess({RoostAdminBinary(), "--addr", server.admin_address(),
                       "rollback", "t", version});
  };
  ProcessResult r = rollback("v1");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "t: now serving v000001 (rolled back from v000003)\n");
  EXPECT_TRUE(ServesVersion(server, keys, 1));
  r = rollback("v000002");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "t: now serving v000002 (rolled back from v000001)\n");
  r = rollback("v02");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "t: now serving v000002 (already served; now pinned)\n");
  for (const char* bad : {"v", "v0", "0", "x1", "v1x"}) {
    r = rollback(bad);
    EXPECT_EQ(r.exit_code, 64) << bad;
    EXPECT_THAT(r.err, ::testing::HasSubstr("(like v000003, v3 or 3)")) << bad;
  }
  EXPECT_TRUE(ServesVersion(server, keys, 2));
}

}  // namespace
}  // namespace roost::testing
