# bench_sum.py: two pytest-benchmark benchmarks for examples/tools/pytest-benchmark.yaml.


def test_sum_small(benchmark):
    benchmark(sum, range(100))


def test_sum_large(benchmark):
    benchmark(sum, range(10000))
