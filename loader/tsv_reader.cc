#include "loader/tsv_reader.h"

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "storage/str_cat.h"

namespace roost {

absl::StatusOr<std::unique_ptr<TsvReader>> TsvReader::Open(
    const std::string& path) {
  if (path == "-") {
    return std::unique_ptr<TsvReader>(new TsvReader("<stdin>", stdin));
  }
  FILE* file = std::fopen(path.c_str(), "rb");
  if (file == nullptr) {
    const int err = errno;
    std::string message =
        StrCat("cannot open ", path, ": ", std::strerror(err));
    return err == ENOENT ? absl::NotFoundError(message)
                         : absl::PermissionDeniedError(message);
  }
  return std::unique_ptr<TsvReader>(new TsvReader(path, file));
}

TsvReader::~TsvReader() {
  if (file_ != stdin) std::fclose(file_);
  std::free(buffer_);
}

absl::StatusOr<bool> TsvReader::Next(std::string_view* key,
                                     std::string_view* value) {
  errno = 0;
  ssize_t n = getline(&buffer_, &capacity_, file_);
  if (n < 0) {
    if (std::ferror(file_)) {
      return absl::DataLossError(
          StrCat("cannot read ", path_, ": ", std::strerror(errno)));
    }
    return false;
  }
  ++line_;
  std::string_view line(buffer_, static_cast<size_t>(n));
  if (!line.empty() && line.back() == '\n') line.remove_suffix(1);
  const size_t tab = line.find('\t');
  if (tab == std::string_view::npos) {
    return absl::InvalidArgumentError(
        StrCat(path_, ":", line_, ": no tab between key and value"));
  }
  *key = line.substr(0, tab);
  *value = line.substr(tab + 1);
  return true;
}

}  // namespace roost
