// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

// The resource limits of one run, set in its cgroup (docs/execution.md), and what the run met of
// them.
//
//     request.max_memory = 512ull << 20;  // this run: 512 MiB; 0 would mean no limit
//     if (record.limits_hit.memory) { /* the OOM killer ended it at that limit */ }
#pragma once

#include <cstdint>
#include <optional>

#include "cordon/export.hpp"
#include "cordon/outcome.hpp"

CORDON_PUBLIC_BEGIN
namespace cordon::runtime {

// nullopt: not limited.
struct run_limits {
    std::optional<std::uint64_t> max_processes;  // processes and threads (pids.max)
    std::optional<std::uint64_t> max_memory;     // bytes (memory.max / memory.limit_in_bytes)
};

// The default process limit: far above what a build or a test suite starts (a JVM's threads
// count too), far below a host's pid_max, so that a fork bomb stops inside its run.
inline constexpr std::uint64_t default_max_processes = 4096;

// The memory cordon and everything it starts may use: MemTotal, or less when cordon's own cgroup
// (or one above it, v2 or v1) has a lower limit, as in a container. nullopt when /proc/meminfo
// cannot be read. Read once per process.
[[nodiscard]] std::optional<std::uint64_t> host_memory();

// The default memory limit of a run: half of host_memory(), in whole MiB (nullopt without it).
// A run that fills its memory, whether with its processes or with files in a tmpfs (which no
// process owns), meets its own cgroup's limit and is ended there while the other half is left to
// the agent, cordon and the host: the kernel's OOM killer never has to choose among them.
[[nodiscard]] std::optional<std::uint64_t> default_max_memory();

// For a program, at its start, before it starts a thread: raises the process's soft
// RLIMIT_NOFILE to its hard limit and remembers the soft limit it found, which every command
// spawned afterwards gets back (commands_descriptor_limit). The descriptors of many runs at once
// (their pipes, the network proxy's connections, docs/network.md "What the proxy holds") then fit
// in cordon's table, while a command that uses select() keeps a table where FD_SETSIZE (1024)
// holds. The `cordon` program calls it for every subcommand; the library never changes a limit
// of its host process by itself. Returns the soft limit now in force; a hard limit that cannot be
// reached (fs.nr_open lowered below it) leaves the soft one as it was. Calling it again changes
// nothing more.
std::uint64_t raise_descriptor_limit() noexcept;

// The soft RLIMIT_NOFILE every command gets (set in the spawned child just before exec): the one
// raise_descriptor_limit() found, nullopt when it was never called (commands then inherit the
// process's own).
[[nodiscard]] std::optional<std::uint64_t> commands_descriptor_limit() noexcept;

// What a run's cgroup saw by the time it ended (evidence the classifier reads).
using classify::limit_events;

}  // namespace cordon::runtime

// The same names in namespace cordon, as the library's users write them.
namespace cordon {
using runtime::run_limits;
}  // namespace cordon
CORDON_PUBLIC_END
