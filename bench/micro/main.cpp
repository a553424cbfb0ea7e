// micro_bench's main. Our own (not benchmark_main) so the launcher archive's int main() is
// never pulled in: only its run_loop is linked.
#include <benchmark/benchmark.h>

BENCHMARK_MAIN();
