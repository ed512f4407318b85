// TableIndex (server/table_index.h), the first hop of every Get, MultiGet
// and Scan: Read() and Find() of a table's name, over an index of 1, 16
// and 1024 tables (--max-tables' default), on one thread and on two at
// once (both reading the index, as the server's threads do).
//
//   scripts/build.sh -j2 table_index_bench
//   build/release/bench/table_index_bench
//
// Rows: BM_FindTable/<tables>/threads:<n>; the figure to compare is the
// time per iteration (one Read() and one Find() of a table there).

#include <benchmark/benchmark.h>

#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "server/table_index.h"

namespace roost::bench {
namespace {

struct Entry {
  explicit Entry(std::string n) : name(std::move(n)) {}
  const std::string name;
};
using Index = TableIndex<Entry>;

constexpr size_t kMaxTables = 1024;

std::string TableName(int i) {
  char name[32];
  std::snprintf(name, sizeof(name), "features_%04d", i);
  return name;
}

// One index per table count, filled before any benchmark runs (a
// function-local static: threads wait for it).
struct Indexes {
  Indexes() {
    for (int tables : {1, 16, 1024}) {
      auto index = std::make_unique<Index>(kMaxTables);
      for (int i = 0; i < tables; ++i) {
        auto entry = std::make_unique<Entry>(TableName(i));
        if (!index->Add(entry)) std::abort();
      }
      by_tables.emplace(tables, std::move(index));
    }
  }
  std::map<int, std::unique_ptr<Index>> by_tables;
};

const Index& IndexOf(int tables) {
  static const Indexes indexes;
  return *indexes.by_tables.at(tables);
}

void BM_FindTable(benchmark::State& state) {
  const int tables = static_cast<int>(state.range(0));
  const Index& index = IndexOf(tables);
  std::vector<std::string> names;
  for (int i = 0; i < tables; ++i) names.push_back(TableName(i));
  size_t i = state.thread_index() % names.size();
  int64_t found = 0;
  for (auto _ : state) {
    const auto reader = index.Read();
    Entry* entry = reader.Find(names[i]);
    benchmark::DoNotOptimize(entry);
    found += entry != nullptr;
    if (++i == names.size()) i = 0;
  }
  if (found != state.iterations()) state.SkipWithError("a table was missed");
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_FindTable)->Arg(1)->Arg(16)->Arg(1024)->Threads(1)->Threads(2);

}  // namespace
}  // namespace roost::bench

BENCHMARK_MAIN();
