"""Python helpers shared by the integration tests, the demo and the benchmarks."""
