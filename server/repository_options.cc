#include "server/repository_options.h"

#include <CLI/CLI.hpp>

#include "util/cli.h"

namespace roost {

void AddRepositoryFlags(CLI::App& app, RepositoryOptions* o) {
  // --help lists each group's flags in the order they are added here.
  app.option_defaults()->group("Table repository");
  app.add_option(
      "--repository", o->uri,
      "Pull tables from the table repository URI (s3://BUCKET/PREFIX, or a "
      "local directory) into --data-dir: each table's POINTER decides the "
      "version served, and this server's --shard of it is downloaded. "
      "Credentials from the AWS default chain (AWS_ACCESS_KEY_ID..., "
      "~/.aws files, web identity, container, EC2 instance metadata), "
      "renewed before they expire; region and endpoint from AWS_REGION, "
      "AWS_ENDPOINT_URL(_S3)");
  app.add_option("--repository-poll", o->poll_seconds,
                 "Read the repository's POINTERs every SECONDS (0.05 to "
                 "86400); failures back off up to 32 times this")
      ->check(CLI::Range(0.05, 86400.0));
  app.add_option("--download-rate", o->download_rate,
                 "Download from the repository at most BYTES per second (0: "
                 "unlimited; at most 2^50); one download at a time")
      ->type_name("BYTES")
      ->transform(SizeValue())
      // A range, so that "-1" (which strtoull takes) is refused.
      ->check(CLI::Range(uint64_t{0}, uint64_t{1} << 50));
  app.add_option("--min-free-bytes", o->min_free_bytes,
                 "Refuse a download unless the data directory keeps BYTES "
                 "free after it (failure reason no_space; at most 2^62)")
      ->type_name("BYTES")
      ->transform(SizeValue())
      ->check(CLI::Range(uint64_t{0}, uint64_t{1} << 62));
}

}  // namespace roost
