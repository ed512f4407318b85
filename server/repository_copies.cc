// RepositoryPuller's look at the copies on disk: is DATA_DIR/T/v<N> the
// repository's version <N>? Compared by the MANIFEST, byte for byte (it
// names every file's size and XXH3-64), and by this server's file being
// there whole; pulled afresh over it when not. And the REPOSITORY file that
// names the repository a table's versions came from. The thread's loop is
// repository_puller.cc.
#include <filesystem>

#include "repository/repository.h"
#include "server/log.h"
#include "server/repository_puller.h"
#include "server/version_pull.h"
#include "storage/version/data_dir.h"
#include "storage/version/manifest.h"
#include "util/file.h"
#include "util/str_cat.h"

namespace roost {

namespace fs = std::filesystem;

bool RepositoryPuller::Look(const std::string& table, uint64_t version) {
  using Local = RepositoryPointer::Local;
  const std::string name = VersionDirName(version);
  const std::string dir = (fs::path(options_.data_dir) / table / name).string();
  const std::string manifest_key =
      TableRepository::VersionKey(table, version, kManifestName);
  const std::string manifest_what = StrCat(store_->uri(), "/", manifest_key);
  CheckOrigin(table);
  // Sets what the registry is told of the table; true when it changed.
  const auto set = [&](Local local) {
    std::lock_guard lock(mu_);
    TableState& state = tables_[table];
    state.look_due = false;
    const bool changed = state.local != local;
    state.local = local;
    return changed;
  };
  // Logged and counted once per copy found wanting, then pulled over.
  const auto differs = [&](const std::string& reason, const std::string& why) {
    bool told = false;
    {
      std::lock_guard lock(mu_);
      TableState& state = tables_[table];
      if (state.local != Local::kDiffers) {
        state.mismatches[reason]++;
        Log(table, " ", name, " on disk ", why,
            "; pulling it afresh (it "
            "does not serve here until then)");
        state.local = Local::kDiffers;
        told = true;
      }
    }
    // The registry stops serving it before the download starts.
    if (told) TellRegistry();
    return Pull(table, version, /*replace=*/true);
  };

  std::error_code ec;
  if (!fs::exists(dir, ec) && !ec) {
    const bool pulled = Pull(table, version, /*replace=*/false);
    return pulled || set(Local::kUnknown);
  }
  absl::StatusOr<std::string> local =
      ReadRegularFile(StrCat(dir, "/", kManifestName), kMaxManifestSize);
  if (!local.ok()) {
    return differs("manifest", StrCat("is not the repository's ", name, ": ",
                                      local.status().message()));
  }
  const std::string fingerprint = VersionFingerprint(dir);
  absl::StatusOr<ObjectInfo> head = store_->Head(manifest_key);
  if (stop_.load()) return false;
  if (!head.ok()) {
    Refused(table, version,
            absl::IsNotFound(head.status()) ? "missing"
                                            : StoreFailureReason(head.status()),
            head.status());
    return false;
  }
  {
    std::lock_guard lock(mu_);
    TableState& state = tables_[table];
    if (state.local == Local::kMatches && state.matched_version == version &&
        state.matched_etag == head->etag &&
        state.matched_local == fingerprint) {
      state.look_due = false;
      return false;
    }
  }
  TableRepository repository(store_.get());
  absl::StatusOr<std::string> theirs = repository.ReadManifest(table, version);
  if (stop_.load()) return false;
  if (!theirs.ok()) {
    Refused(table, version,
            absl::IsResourceExhausted(theirs.status())
                ? "manifest"
                : StoreFailureReason(theirs.status()),
            theirs.status());
    return false;
  }
  if (*theirs != *local) {
    return differs("manifest",
                   StrCat("is not the repository's ", name,
                          ": its MANIFEST differs from ", manifest_what));
  }
  // The repository's MANIFEST: this server's file must be there whole (a
  // copy pulled for another --shard holds another file).
  absl::StatusOr<Manifest> manifest = Manifest::Parse(*theirs);
  if (manifest.ok()) {
    const ManifestFile* file = nullptr;
    if (options_.shard && manifest->shards > *options_.shard &&
        manifest->files.size() == manifest->shards) {
      file = &manifest->files[*options_.shard];
    } else if (manifest->shards == 0 && manifest->files.size() == 1) {
      file = &manifest->files[0];
    }
    if (file != nullptr) {
      const uint64_t size = fs::file_size(fs::path(dir) / file->name, ec);
      if (ec || size != file->size) {
        return differs(
            "file", StrCat("lacks this server's file ", file->name, " (",
                           ec ? ec.message()
                              : StrCat(size, " of its ", file->size, " bytes"),
                           ")"));
      }
    }
  }
  {
    std::lock_guard lock(mu_);
    TableState& state = tables_[table];
    state.matched_version = version;
    state.matched_etag = head->etag;
    state.matched_local = fingerprint;
  }
  NoteOrigin(table);
  return set(Local::kMatches);
}

void RepositoryPuller::CheckOrigin(const std::string& table) {
  {
    std::lock_guard lock(mu_);
    TableState& state = tables_[table];
    if (state.origin_checked) return;
    state.origin_checked = true;
  }
  const std::string path =
      (fs::path(options_.data_dir) / table / std::string(kRepositoryFileName))
          .string();
  absl::StatusOr<std::string> origin = ReadRegularFile(path, 4096);
  if (!origin.ok()) return;
  std::string_view uri = *origin;
  while (!uri.empty() && (uri.back() == '\n' || uri.back() == ' ')) {
    uri.remove_suffix(1);
  }
  if (!uri.empty() && uri != store_->uri()) {
    Log(table, ": its versions on disk were pulled from ", uri,
        "; --repository is ", store_->uri(),
        ": each is compared with this one's before it serves");
  }
}

void RepositoryPuller::NoteOrigin(const std::string& table) {
  const std::string path =
      (fs::path(options_.data_dir) / table / std::string(kRepositoryFileName))
          .string();
  const std::string contents = StrCat(store_->uri(), "\n");
  absl::StatusOr<std::string> now = ReadRegularFile(path, 4096);
  if (now.ok() && *now == contents) return;
  if (absl::Status s = WriteFileAtomically(path, contents); !s.ok()) {
    Log("cannot write ", path, ": ", s.message());
  }
}

}  // namespace roost
