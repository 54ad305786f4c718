// gbench.cc: a tiny Google Benchmark binary for examples/tools/gbench.yaml (make build/tools/gbench).
#include <benchmark/benchmark.h>
#include <numeric>
#include <vector>

// Sums n longs: a loop whose time grows with n. Its counters: items (n a run) and bytes (8 n a run), which
// the console prints with k, M, G of 1000 and of 1024.
static void BM_Sum(benchmark::State &state)
{
	std::vector<long> v(state.range(0), 1);

	for (auto _ : state)
		benchmark::DoNotOptimize(std::accumulate(v.begin(), v.end(), 0L));
	state.SetItemsProcessed(state.iterations() * state.range(0));
	state.SetBytesProcessed(state.iterations() * state.range(0) * (int64_t)sizeof(long));
}
BENCHMARK(BM_Sum)->Arg(1024)->Arg(8192);

BENCHMARK_MAIN();
