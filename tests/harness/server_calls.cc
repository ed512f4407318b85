// ServerProcess's calls: one of each RPC the tests make, each on the stubs
// WaitListening() connected and with a deadline, and a raw call of any
// method with any bytes.
#include <grpcpp/generic/generic_stub.h>
#include <grpcpp/grpcpp.h>

#include <future>

#include "tests/harness/grpc_client.h"
#include "tests/harness/server_process.h"

namespace roost::testing {
namespace {

constexpr std::chrono::seconds kRpcDeadline{10};

void SetDeadline(grpc::ClientContext* context) {
  context->set_deadline(std::chrono::system_clock::now() + kRpcDeadline);
}

}  // namespace

grpc::Status ServerProcess::Get(const std::string& table,
                                const std::string& key,
                                v1::GetResponse* response) {
  grpc::ClientContext context;
  SetDeadline(&context);
  v1::GetRequest request;
  request.set_table(table);
  request.set_key(key);
  return lookup_stub_->Get(&context, request, response);
}

grpc::Status ServerProcess::MultiGet(const std::string& table,
                                     const std::vector<std::string>& keys,
                                     v1::MultiGetResponse* response) {
  grpc::ClientContext context;
  SetDeadline(&context);
  v1::MultiGetRequest request;
  request.set_table(table);
  for (const std::string& k : keys) request.add_keys(k);
  return lookup_stub_->MultiGet(&context, request, response);
}

grpc::Status ServerProcess::ListTables(v1::ListTablesResponse* response) {
  grpc::ClientContext context;
  SetDeadline(&context);
  return lookup_stub_->ListTables(&context, v1::ListTablesRequest(), response);
}

grpc::Status ServerProcess::Rollback(const std::string& table,
                                     const std::string& version,
                                     v1::RollbackResponse* response) {
  grpc::ClientContext context;
  SetDeadline(&context);
  v1::RollbackRequest request;
  request.set_table(table);
  request.set_version(version);
  return admin_stub_->Rollback(&context, request, response);
}

grpc::Status ServerProcess::Unpin(const std::string& table,
                                  v1::UnpinResponse* response) {
  grpc::ClientContext context;
  SetDeadline(&context);
  v1::UnpinRequest request;
  request.set_table(table);
  return admin_stub_->Unpin(&context, request, response);
}

grpc::Status ServerProcess::HealthCheck(
    const std::string& service,
    grpc::health::v1::HealthCheckResponse::ServingStatus* status) {
  grpc::ClientContext context;
  SetDeadline(&context);
  grpc::health::v1::HealthCheckRequest request;
  request.set_service(service);
  grpc::health::v1::HealthCheckResponse response;
  grpc::Status s = health_stub_->Check(&context, request, &response);
  *status = response.status();
  return s;
}

std::optional<v1::TableInfo> ServerProcess::Table(const std::string& table) {
  v1::ListTablesResponse response;
  if (!ListTables(&response).ok()) return std::nullopt;
  for (const v1::TableInfo& t : response.tables()) {
    if (t.name() == table) return t;
  }
  return std::nullopt;
}

std::string ServerProcess::ServingVersion(const std::string& table) {
  auto t = Table(table);
  return t ? t->serving_version() : std::string();
}

Metrics ServerProcess::ScrapeMetrics() {
  std::string error;
  auto body = HttpGet(metrics_port_, "/metrics", &error);
  if (!body) {
    ADD_FAILURE() << "cannot scrape /metrics on port " << metrics_port_ << ": "
                  << error;
    return {};
  }
  return ParsePrometheusText(*body);
}

grpc::Status ServerProcess::RawCall(const std::string& method,
                                    const std::string& request,
                                    std::string* response, bool admin,
                                    grpc_compression_algorithm compression) {
  auto channel = CreateTestChannel(admin ? admin_address() : lookup_address(),
                                   credentials_, server_name_);
  grpc::GenericStub stub(channel);
  grpc::ClientContext context;
  SetDeadline(&context);
  if (compression != GRPC_COMPRESS_NONE) {
    context.set_compression_algorithm(compression);
  }
  grpc::Slice slice(request);
  grpc::ByteBuffer in(&slice, 1), out;
  std::promise<grpc::Status> done;
  stub.UnaryCall(&context, method, grpc::StubOptions(), &in, &out,
                 [&done](grpc::Status s) { done.set_value(std::move(s)); });
  grpc::Status status = done.get_future().get();
  if (status.ok() && response != nullptr) {
    std::vector<grpc::Slice> slices;
    response->clear();
    if (out.Dump(&slices).ok()) {
      for (const grpc::Slice& s : slices) {
        response->append(reinterpret_cast<const char*>(s.begin()), s.size());
      }
    }
  }
  return status;
}

}  // namespace roost::testing
