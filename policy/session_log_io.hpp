// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

// What the session log's two units share (cordon/session_log.hpp): opening and locking the
// file, reading it so that a compaction running meanwhile is never half-seen, parsing a line,
// folding one event, and the journal that standing() caches its fold in.
#pragma once

#include <sys/types.h>

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <variant>

#include "cordon/session_log.hpp"
#include "cordon/unique_fd.hpp"

namespace cordon::policy {

// standing()'s cache: the fold of the log's first `offset` bytes (`lines` whole lines), valid
// while the file is the same inode, at least that long, with the same first line and the same
// start of its last folded line (a log truncated and written again in place).
struct session_log::journal {
    std::mutex mutex;
    bool valid = false;  // guarded by mutex, as everything below but `read`
    dev_t device = 0;
    ino_t inode = 0;
    std::uint64_t offset = 0;
    std::size_t lines = 0;
    std::string head;        // the log's first head_bytes, cut after its first newline
    std::uint64_t last = 0;  // where the last folded line starts
    std::string last_head;   // its first head_bytes
    session_state state;
    std::atomic<std::uint64_t> read{0};  // bytes read from the file, by every call
};

namespace detail {

// How often a bounded wait looks again.
inline constexpr int lock_poll_ms = 5;

[[nodiscard]] std::string errno_text(std::string_view what, const std::filesystem::path& path);
[[nodiscard]] std::string now_iso8601();

// The log opened with `flags` (O_CLOEXEC, O_NOFOLLOW, O_NONBLOCK added), refused unless it is a
// regular file of this user that nobody else may write.
[[nodiscard]] std::variant<unique_fd, log_error> open_log(const std::filesystem::path& path,
                                                          int flags);

// The log's exclusive flock, tried without blocking until `wait` is over.
[[nodiscard]] std::optional<log_error> lock_for_append(int fd, const std::filesystem::path& path,
                                                       std::chrono::milliseconds wait);

// One line (without its newline) parsed and checked: the event, or why it is not one.
[[nodiscard]] std::variant<session_event, log_error> parse_line(std::string_view line,
                                                                std::size_t number);

// One event folded onto `state` (fold() is this, event after event).
void fold_event(session_state& state, const session_event& event);

// Compacts the log open (read-write, without O_APPEND) on `fd`, whose exclusive flock the caller
// holds. `read` counts the bytes read.
[[nodiscard]] std::variant<compaction, log_error> compact_locked(int fd,
                                                                 const std::filesystem::path& path,
                                                                 std::uint64_t max_bytes,
                                                                 std::atomic<std::uint64_t>& read);

}  // namespace detail
}  // namespace cordon::policy
