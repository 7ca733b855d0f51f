// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

// Google Benchmark micro-benchmarks for the pure parts of a run: confine() with the verdict
// cached, the workspace-write checks, building the Landlock rung for the child, the denial scan
// over a 64 MiB stderr, and the output collector's tail (docs/BENCHMARKS.md).
#include <benchmark/benchmark.h>

#include <filesystem>
#include <string>
#include <vector>

#include "classify/signature_scanner.hpp"
#include "cordon/logging.hpp"
#include "runtime/local_provider_factory.hpp"
#include "runtime/output_collector.hpp"
#include "sandbox/child_confinement.hpp"
#include "sandbox/runner_path.hpp"

namespace {

namespace fs = std::filesystem;
using namespace cordon;

// The provider of `choice`, probed; null, with the benchmark skipped, where it is not usable.
std::shared_ptr<sandbox::local_provider> usable_provider(benchmark::State& state,
                                                         sandbox::backend_choice choice) {
    cordon::set_log_level(cordon::log_level::warn);
    sandbox::local_provider_options options;
    options.choice = choice;
    auto provider = runtime::make_local_provider(std::move(options));
    if (provider->selected()) return provider;
    state.SkipWithError("the backend is not usable here");
    return nullptr;
}

void confine_cached(benchmark::State& state, sandbox::backend_choice choice) {
    const auto provider = usable_provider(state, choice);
    if (!provider) return;
    sandbox::sandbox_policy policy;
    policy.mode = sandbox::sandbox_mode::read_only;
    policy.workspace_root = fs::temp_directory_path();
    const std::vector<std::string> argv{"/bin/bash", "-c", "true"};
    for (auto _ : state)
        benchmark::DoNotOptimize(provider->confine(argv, policy, policy.workspace_root));
}
BENCHMARK_CAPTURE(confine_cached, bwrap, sandbox::backend_choice::bwrap)
    ->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(confine_cached, landlock, sandbox::backend_choice::landlock)
    ->Unit(benchmark::kMicrosecond);

// What every workspace-write run pays before it starts: the checks that nothing which runs
// unconfined later is writable, by spelling and through the mounts (mountinfo read once).
void refusal_workspace_write(benchmark::State& state, sandbox::backend_choice choice) {
    const auto provider = usable_provider(state, choice);
    if (!provider) return;
    const sandbox::sandbox_policy policy{sandbox::sandbox_mode::workspace_write,
                                         fs::temp_directory_path()};
    if (auto refused = provider->refusal(policy, {})) {
        state.SkipWithError(refused->c_str());
        return;
    }
    for (auto _ : state)
        benchmark::DoNotOptimize(provider->refusal(policy, {}));
}
BENCHMARK_CAPTURE(refusal_workspace_write, bwrap, sandbox::backend_choice::bwrap)
    ->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(refusal_workspace_write, landlock, sandbox::backend_choice::landlock)
    ->Unit(benchmark::kMicrosecond);

// What the parent builds for the Landlock rung in the child: the ruleset (every entry of /, the
// /dev nodes, the workspace) and the two seccomp filters.
void child_confinement_build(benchmark::State& state, sandbox::sandbox_mode mode) {
    cordon::set_log_level(cordon::log_level::warn);
    sandbox::local_provider_options options;
    options.choice = sandbox::backend_choice::landlock;
    auto provider = runtime::make_local_provider(std::move(options));
    if (!provider->selected()) {
        state.SkipWithError("the Landlock rung is not usable here");
        return;
    }
    const fs::path workspace = fs::temp_directory_path();
    const std::vector<std::string> argv{"/bin/bash", "-c", "true"};
    const sandbox::confined_argv confined = provider->confine(argv, {mode, workspace}, workspace);
    for (auto _ : state)
        benchmark::DoNotOptimize(sandbox::build_child_confinement(*confined.in_child));
}
BENCHMARK_CAPTURE(child_confinement_build, read_only, sandbox::sandbox_mode::read_only)
    ->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(child_confinement_build, workspace_write, sandbox::sandbox_mode::workspace_write)
    ->Unit(benchmark::kMicrosecond);

// The denial scan sees every byte of stderr, in the chunks a pipe delivers.
void denial_scan_64mib(benchmark::State& state) {
    const std::vector<std::string> signatures{"operation not permitted", "permission denied",
                                              "read-only file system"};
    const std::string chunk(64 * 1024, 'x');
    const std::size_t chunks = (64U << 20) / chunk.size();
    for (auto _ : state) {
        classify::signature_scanner scanner(signatures);
        for (std::size_t i = 0; i < chunks; ++i)
            scanner.feed(chunk);
        benchmark::DoNotOptimize(scanner.matched());
    }
    state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * (64LL << 20)));
}
BENCHMARK(denial_scan_64mib)->Unit(benchmark::kMillisecond);

// The collector's tail: 64 MiB through the default 64,000-byte tail, no spill file.
void output_tail_64mib(benchmark::State& state) {
    const std::string chunk(static_cast<std::size_t>(state.range(0)), 'y');
    const std::size_t chunks = (64U << 20) / chunk.size();
    for (auto _ : state) {
        runtime::output_collector collector("stdout", runtime::output_limits{}, nullptr);
        for (std::size_t i = 0; i < chunks; ++i)
            collector.append(chunk);
        benchmark::DoNotOptimize(collector.finish());
    }
    state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * (64LL << 20)));
}
BENCHMARK(output_tail_64mib)->Arg(4096)->Arg(65536)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
