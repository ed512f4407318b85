// roost-server's flags for pulling tables from a table repository
// (repository/repository.h): --repository and what tunes it. The puller
// (repository_puller.h) reads them; the registry only asks whether
// `uri` is set (then each table's POINTER decides what it serves).
//
// Example config file:
//   repository = "s3://tables/prod"
//   shard = 2
//   download-rate = 104857600
#ifndef ROOST_SERVER_REPOSITORY_OPTIONS_H_
#define ROOST_SERVER_REPOSITORY_OPTIONS_H_

#include <cstdint>
#include <string>

namespace CLI {
class App;
}

namespace roost {

struct RepositoryOptions {
  // The table repository to pull from: s3://BUCKET/PREFIX or a local
  // directory (file:///PATH). Empty: serve what is in the data directory,
  // as always. The default value is "".
  std::string uri;
  // Read every table's POINTER this often; failures wait longer (doubling
  // up to 32 times this, with jitter). The default value is 5 seconds.
  double poll_seconds = 5;
  // Download at most this many bytes per second; 0 is unlimited. The
  // default value is 0.
  uint64_t download_rate = 0;
  // Refuse a download (reason no_space) unless the data directory's file
  // system keeps at least this many bytes free after it. The default value
  // is 256 MiB.
  uint64_t min_free_bytes = uint64_t{256} << 20;

  bool enabled() const { return !uri.empty(); }
};

// Adds the "Table repository" group (--repository, --repository-poll,
// --download-rate, --min-free-bytes) to `app`, bound to `*options`.
void AddRepositoryFlags(CLI::App& app, RepositoryOptions* options);

}  // namespace roost

#endif  // ROOST_SERVER_REPOSITORY_OPTIONS_H_
