// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

// What cordon reads and writes in the cgroup filesystems (cgroup_files.hpp).
#include "runtime/cgroup_files.hpp"

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <system_error>

#include "base/number.hpp"
#include "base/small_file.hpp"
#include "base/text.hpp"
#include "runtime/unique_fd.hpp"

namespace cordon::runtime::cgroup_files {

namespace fs = std::filesystem;
using base::lines;
using base::split;

// errno is read by the caller right after the failing call, before a string is built.
std::string failed(std::string_view what, int error) {
    return std::string(what) + ": " + std::strerror(error);
}

// The files read here are small (/proc's mountinfo and cgroup, a cgroup's keyed files) and read
// on every run: base/small_file.hpp reads them with read(2), no iostreams.
std::string read_file(const fs::path& path) {
    base::read_result text = base::read_small_file(path);
    if (auto* content = std::get_if<std::string>(&text)) return std::move(*content);
    return {};
}

// Whether `word` is one of the whitespace-separated words of `text` (cgroup.controllers).
bool has_word(std::string_view text, std::string_view word) {
    constexpr std::string_view blanks = " \t\n";
    for (std::size_t start = text.find_first_not_of(blanks); start != std::string_view::npos;) {
        const std::size_t end = text.find_first_of(blanks, start);
        if (text.substr(start, end - start) == word) return true;
        start = text.find_first_not_of(blanks, end);
    }
    return false;
}

namespace {

bool has_piece(std::string_view text, char separator, std::string_view piece) {
    const auto pieces = split(text, separator);
    return std::find(pieces.begin(), pieces.end(), piece) != pieces.end();
}

// The mount of the cgroup2 filesystem, or of the cgroup v1 hierarchy carrying `controller`.
const base::mount_entry* cgroup_mount(const std::vector<base::mount_entry>& mounts,
                                      std::string_view controller) {
    for (const base::mount_entry& mount : mounts) {
        if (mount.type != (controller.empty() ? "cgroup2" : "cgroup")) continue;
        if (!controller.empty() && !has_piece(mount.super_options, ',', controller)) continue;
        return &mount;
    }
    return nullptr;
}

// This process's cgroup in the v2 tree ("0::/path") or in the v1 hierarchy of `controller`.
// A line: "HIERARCHY-ID:CONTROLLERS:PATH"; v2's is "0::PATH".
std::optional<fs::path> own_cgroup(std::string_view cgroups, std::string_view controller) {
    for (const std::string_view line : lines(cgroups)) {
        const auto first = line.find(':');
        const auto second = line.find(':', first + 1);
        if (first == std::string_view::npos || second == std::string_view::npos) continue;
        const std::string_view controllers = line.substr(first + 1, second - first - 1);
        const bool match = controller.empty() ? line.substr(0, first) == "0" && controllers.empty()
                                              : has_piece(controllers, ',', controller);
        if (match) return fs::path(line.substr(second + 1));
    }
    return std::nullopt;
}

}  // namespace

// The directory of this process's cgroup in the hierarchy of `controller` ("" for v2).
std::variant<fs::path, std::string> own_directory(const cgroup_view& view,
                                                  std::string_view controller) {
    const std::string what =
        controller.empty() ? "cgroup v2" : "cgroup v1 " + std::string(controller);
    const base::mount_entry* mount = cgroup_mount(view.mounts, controller);
    if (mount == nullptr) return "no " + what + " filesystem is mounted";
    auto own = own_cgroup(view.cgroups, controller);
    if (!own) return "this process has no " + what + " membership";
    // Under a cgroup namespace or a bind mount, the mount shows only part of the hierarchy.
    const fs::path relative = own->lexically_relative(mount->root);
    if (relative.empty() || *relative.begin() == "..") {
        return "the process's " + what + " cgroup " + own->string() + " is not visible at " +
               mount->point.string();
    }
    fs::path directory = (mount->point / relative).lexically_normal();
    std::error_code ec;
    if (!fs::exists(directory / "cgroup.procs", ec)) {
        return "the process's " + what + " cgroup " + directory.string() + " is not visible";
    }
    return directory;
}

// 0, or the errno of the failing open or write (read before the fd is closed).
int write_file(const fs::path& path, std::string_view text) {
    unique_fd fd(::open(path.c_str(), O_WRONLY | O_CLOEXEC));
    if (!fd) return errno;
    const ssize_t written = ::write(fd.get(), text.data(), text.size());
    if (written < 0) return errno;
    return written == static_cast<ssize_t>(text.size()) ? 0 : EIO;
}

// The value of `key` in a flat keyed file ("key value" per line), 0 when absent; nullopt when
// the file cannot be read.
std::optional<std::uint64_t> keyed_value(const fs::path& path, std::string_view key) {
    const base::read_result read = base::read_small_file(path);
    const std::string* text = std::get_if<std::string>(&read);
    if (text == nullptr) return std::nullopt;
    for (const std::string_view line : lines(*text)) {
        const auto fields = split(line, ' ');
        if (fields.size() == 2 && fields[0] == key)
            return base::parse_number<std::uint64_t>(fields[1]).value_or(0);
    }
    return 0;
}

// The processes of a cgroup.procs file, one per line.
std::vector<pid_t> members(const fs::path& procs) {
    std::vector<pid_t> pids;
    const std::string text = read_file(procs);
    for (const std::string_view line : lines(text)) {
        if (const auto pid = base::parse_number<pid_t>(line); pid && *pid > 0) pids.push_back(*pid);
    }
    return pids;
}

void kill_members(const fs::path& cgroup) {
    if (write_file(cgroup / "cgroup.kill", "1") == 0) return;
    for (const pid_t pid : members(cgroup / "cgroup.procs"))
        ::kill(pid, SIGKILL);
}

}  // namespace cordon::runtime::cgroup_files
