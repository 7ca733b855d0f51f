// The resource limits of one run, set in its cgroup (cgroup.hpp), and what the run met of them.
#pragma once

#include <cstdint>
#include <optional>

#include "classify/outcome.hpp"

namespace cordon::runtime {

// nullopt: not limited.
struct run_limits {
    std::optional<std::uint64_t> max_processes;  // processes and threads (pids.max)
    std::optional<std::uint64_t> max_memory;     // bytes (memory.max / memory.limit_in_bytes)
};

// The default process limit: far above what a build or a test suite starts (a JVM's threads
// count too), far below a host's pid_max, so that a fork bomb stops inside its run.
inline constexpr std::uint64_t default_max_processes = 4096;

// What a run's cgroup saw by the time it ended (evidence the classifier reads).
using classify::limit_events;

}  // namespace cordon::runtime
