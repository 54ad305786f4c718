// gbench.cc: a tiny Google Benchmark binary for examples/tools/gbench.yaml (make build/tools/gbench).
#include <benchmark/benchmark.h>
#include <numeric>
#include <vector>

// Sums n longs: a loop whose time grows with n.
static void BM_Sum(benchmark::State &state)
{
	std::vector<long> v(state.range(0), 1);

	for (auto _ : state)
		benchmark::DoNotOptimize(std::accumulate(v.begin(), v.end(), 0L));
	state.SetItemsProcessed(state.iterations() * state.range(0));
}
BENCHMARK(BM_Sum)->Arg(1024)->Arg(8192);

BENCHMARK_MAIN();
