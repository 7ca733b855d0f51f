// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

// The one small-file reader: the whole of a file cordon decides something by (/proc/self/maps and
// mountinfo, /proc/self/status, a cgroup's keyed files, a sysctl, a cached verdict).
//
// Plain read(2) into a string, no iostreams: these files are read on every run, and a stream's
// first use in a process brings its buffer and locale code in page by page, which cost cordon
// about 0.3 ms a run (docs/BENCHMARKS.md). Bounded: a file larger than the limit is an error, not
// a prefix, since half a mount table is a wrong one. And a failure is a value the caller has to
// look at: a check that decides whether something is safe refuses when its file cannot be read.
#pragma once

#include <cstddef>
#include <filesystem>
#include <string>
#include <variant>

namespace cordon::base {

// Enough for any /proc/self file but a mount table or a memory map.
inline constexpr std::size_t small_file_limit = std::size_t{1} << 20;
// /proc/self/mountinfo and /proc/self/maps: tens of thousands of lines on a busy container host.
inline constexpr std::size_t table_file_limit = std::size_t{16} << 20;

struct read_error {
    int error = 0;  // the errno of open(2) or read(2); EFBIG when the file exceeds the limit

    // "cannot read <path>: <strerror>".
    [[nodiscard]] std::string describe(const std::filesystem::path& path) const;
};

using read_result = std::variant<std::string, read_error>;

// The whole file at `path` (opened O_CLOEXEC), at most `limit` bytes.
[[nodiscard]] read_result read_small_file(const std::filesystem::path& path,
                                          std::size_t limit = small_file_limit);
// The rest of the file open as `fd` (which stays open), at most `limit` bytes.
[[nodiscard]] read_result read_small_fd(int fd, std::size_t limit = small_file_limit);

}  // namespace cordon::base
