// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

// Directories that cordon processes of one uid make side by side under a shared parent
// (/var/tmp/cordon-spill-XXXXXX, /var/tmp/cordon-probe-XXXXXX, /tmp/cordon-tmp-XXXXXX): each is
// made by mkdtemp and held with an exclusive flock(2) on a descriptor of it for as long as its
// maker uses it, which the kernel releases when the maker dies, however it dies (SIGKILL, a
// crash). One whose lock is free was left by a process that is gone, and a later cordon may
// remove it: proof by lock, never by pid or by age.
//
// The lock is only ever tried with LOCK_NB: a process that locks a directory of its uid keeps it
// from being swept while it lives, and never makes cordon wait.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "cordon/unique_fd.hpp"

namespace cordon::base {

struct locked_directory {
    std::filesystem::path path;  // parent / name
    std::string name;
    unique_fd fd;  // O_RDONLY | O_DIRECTORY, its flock held while this lives
};

// Makes `<parent>/<prefix>XXXXXX` (mode 0700) and locks it; the reason when it cannot. Another
// process's sweep may take the directory in the instant between mkdtemp and the lock: another
// name is then tried.
[[nodiscard]] std::variant<locked_directory, std::string> make_locked_directory(
    const std::filesystem::path& parent, std::string_view prefix);

// Every `<prefix>*` directory of this uid under `parent` whose lock is free, each now locked by
// the caller (and checked to be still at its name), in no particular order.
[[nodiscard]] std::vector<locked_directory> abandoned_directories(
    const std::filesystem::path& parent, std::string_view prefix);

// The same directory still at `name` in `parent`: not replaced since `fd` was opened.
[[nodiscard]] bool still_at(int parent, const char* name, int fd);

}  // namespace cordon::base
