#include "repository/s3_xml.h"

#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <pugixml.hpp>
#include <sstream>

#include "absl/status/status.h"
#include "util/str_cat.h"

namespace roost {
namespace {

bool Load(std::string_view xml, pugi::xml_document* doc) {
  return doc->load_buffer(xml.data(), xml.size()).status == pugi::status_ok;
}

absl::Status Malformed(std::string_view what, std::string_view why) {
  return absl::InvalidArgumentError(
      StrCat("malformed ", what, " from the object store: ", why));
}

}  // namespace

int64_t ParseIso8601(std::string_view text) {
  std::tm tm{};
  const std::string s(text);
  int consumed = 0;
  if (std::sscanf(s.c_str(), "%4d-%2d-%2dT%2d:%2d:%2d%n", &tm.tm_year,
                  &tm.tm_mon, &tm.tm_mday, &tm.tm_hour, &tm.tm_min, &tm.tm_sec,
                  &consumed) != 6 ||
      consumed != 19) {
    return 0;
  }
  if (tm.tm_year < 1970 || tm.tm_mon < 1 || tm.tm_mon > 12 || tm.tm_mday < 1 ||
      tm.tm_mday > 31 || tm.tm_hour > 23 || tm.tm_min > 59 || tm.tm_sec > 60) {
    return 0;
  }
  tm.tm_year -= 1900;
  tm.tm_mon -= 1;
  const time_t t = ::timegm(&tm);
  return t < 0 ? 0 : static_cast<int64_t>(t);
}

std::optional<S3Error> ParseS3Error(std::string_view xml) {
  pugi::xml_document doc;
  if (!Load(xml, &doc)) return std::nullopt;
  const pugi::xml_node error = doc.child("Error");
  if (!error) return std::nullopt;
  return S3Error{error.child_value("Code"), error.child_value("Message")};
}

absl::StatusOr<S3ListPage> ParseListObjectsV2(std::string_view xml) {
  pugi::xml_document doc;
  if (!Load(xml, &doc)) return Malformed("listing", "not XML");
  const pugi::xml_node result = doc.child("ListBucketResult");
  if (!result) return Malformed("listing", "no ListBucketResult");
  S3ListPage page;
  for (pugi::xml_node c : result.children("Contents")) {
    ObjectInfo info;
    info.key = c.child_value("Key");
    const char* size = c.child_value("Size");
    char* end = nullptr;
    info.size = std::strtoull(size, &end, 10);
    if (info.key.empty() || *size == '\0' || *end != '\0') {
      return Malformed("listing", StrCat("bad Contents entry \"", info.key,
                                         "\" of size \"", size, "\""));
    }
    info.etag = UnquoteEtag(c.child_value("ETag"));
    // "2026-11-26T06:10:00.000Z"; a time it cannot read is left unknown
    // (0), never an error: only retention looks at it.
    info.modified_unix = ParseIso8601(c.child_value("LastModified"));
    page.objects.push_back(std::move(info));
  }
  for (pugi::xml_node p : result.children("CommonPrefixes")) {
    page.common_prefixes.emplace_back(p.child_value("Prefix"));
  }
  if (std::string_view(result.child_value("IsTruncated")) == "true") {
    page.next_continuation_token = result.child_value("NextContinuationToken");
    if (page.next_continuation_token.empty()) {
      return Malformed("listing", "truncated without NextContinuationToken");
    }
  }
  return page;
}

absl::StatusOr<std::string> ParseUploadId(std::string_view xml) {
  pugi::xml_document doc;
  if (!Load(xml, &doc)) return Malformed("multipart upload", "not XML");
  std::string id =
      doc.child("InitiateMultipartUploadResult").child_value("UploadId");
  if (id.empty()) return Malformed("multipart upload", "no UploadId");
  return id;
}

std::string CompleteMultipartUploadXml(const std::vector<std::string>& etags) {
  pugi::xml_document doc;
  pugi::xml_node root = doc.append_child("CompleteMultipartUpload");
  root.append_attribute("xmlns") = "http://s3.amazonaws.com/doc/2006-03-01/";
  for (size_t i = 0; i < etags.size(); ++i) {
    pugi::xml_node part = root.append_child("Part");
    part.append_child("PartNumber")
        .text()
        .set(static_cast<unsigned long long>(i + 1));
    part.append_child("ETag").text().set(StrCat("\"", etags[i], "\"").c_str());
  }
  std::ostringstream out;
  doc.save(out, "", pugi::format_raw);
  return out.str();
}

std::string UnquoteEtag(std::string_view etag) {
  if (etag.size() >= 2 && etag.front() == '"' && etag.back() == '"') {
    etag = etag.substr(1, etag.size() - 2);
  }
  return std::string(etag);
}

}  // namespace roost
