// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

// What the proxies of one process may hold at once, every service and session together
// (docs/network.md, "What the proxy holds"). A command decides how many connections it opens to
// the proxy port and how many names it has looked up; each connection is a descriptor in cordon
// (two once its destination is connected), each lookup a thread (and a socket while it asks).
// Left to the commands, the runs of one `cordon mcp` would share the server's descriptor table
// with nothing kept back, and the next call would fail to open its pipes or /dev/null. So the
// proxy takes a fixed share of the table, read from the soft RLIMIT_NOFILE when it is needed
// (a program may raise it after the service was made), and keeps away from the table's top:
//
//   - connections at once, in the process: a quarter of the table (two descriptors each), at
//     most default_max_process_connections (their buffers are memory: 36 KiB each relaying);
//   - DNS lookup threads at once, in the process: a sixteenth of the table, at most
//     default_max_lookup_threads (resolver.hpp);
//   - the last quarter of that budget only for a run holding fewer than few_connections, so
//     that runs holding many cannot take every connection from the runs of the same process;
//   - whatever holds the rest of the table, a connection whose descriptor arrives within
//     call_reserve of the limit is closed at once: that room is a new call's (its pipes,
//     /dev/null, pidfd, cgroup files, the next run's socketpairs).
//
// Over a bound a new connection is closed as it arrives (the client sees it end), logged once
// per run and counted in the run's report; the connections already served are not touched.
#pragma once

#include <atomic>
#include <cstddef>
#include <memory>
#include <optional>

namespace cordon::proxy {

inline constexpr std::size_t default_max_process_connections = 1024;
// Descriptors kept free at the top of the table for what a new call opens.
inline constexpr std::size_t call_reserve = 64;
// The last quarter of the connection budget is kept for runs that hold fewer than this many
// connections: runs that hold many (a job keeping hundreds of heads half sent, reopening what
// the deadlines close) share three quarters of it, and a run that starts meanwhile still gets
// its few.
inline constexpr std::size_t few_connections = 8;

// The soft RLIMIT_NOFILE now (1024 when it cannot be read, at most 1 << 20).
[[nodiscard]] std::size_t descriptor_limit() noexcept;

// Connections the process's proxies serve at once under a soft limit of `descriptors`: a quarter
// of it (two descriptors each), at most `most`, at least 1.
[[nodiscard]] std::size_t connection_budget(
    std::size_t descriptors, std::size_t most = default_max_process_connections) noexcept;

// DNS lookup threads at once in the process under a soft limit of `descriptors`: a sixteenth of
// it, at most `most`, at least 1.
[[nodiscard]] std::size_t lookup_thread_budget(std::size_t descriptors, std::size_t most) noexcept;

// Whether a descriptor numbered `fd` that just arrived lies within call_reserve of the limit:
// descriptors are numbered lowest free first, so every number below it is in use.
[[nodiscard]] bool in_reserve(int fd, std::size_t descriptors) noexcept;

class counted_slots;

// One unit counted against a counted_slots, given back when destroyed (or released).
class counted_slot {
public:
    counted_slot(const counted_slot&) = delete;
    counted_slot& operator=(const counted_slot&) = delete;
    counted_slot(counted_slot&& other) noexcept : owner_(std::move(other.owner_)) {}
    counted_slot& operator=(counted_slot&& other) noexcept;
    ~counted_slot() { release(); }
    void release() noexcept;

private:
    friend class counted_slots;
    explicit counted_slot(std::shared_ptr<counted_slots> owner) : owner_(std::move(owner)) {}
    std::shared_ptr<counted_slots> owner_;  // keeps the count alive while a thread holds a slot
};

// A bound on things held at once, from any thread: taking a slot never waits.
class counted_slots : public std::enable_shared_from_this<counted_slots> {
public:
    explicit counted_slots(std::size_t most) : most_(most) {}
    // A slot, or nothing when `most` (the constructor's) are taken.
    [[nodiscard]] std::optional<counted_slot> try_take() { return try_take(most_); }
    // A slot, or nothing when `most` are taken: for a bound read when it is needed.
    [[nodiscard]] std::optional<counted_slot> try_take(std::size_t most);
    [[nodiscard]] std::size_t in_use() const noexcept { return in_use_.load(); }

private:
    friend class counted_slot;
    const std::size_t most_;
    std::atomic<std::size_t> in_use_{0};
};

// The process's counts: connections served by every proxy service, and DNS lookup threads of
// every system resolver (abandoned ones included until they return).
[[nodiscard]] counted_slots& process_connections();
[[nodiscard]] counted_slots& process_lookup_threads();

}  // namespace cordon::proxy
