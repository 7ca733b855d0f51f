// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

// The liveness locks and the reaping of the runs of cordons that are gone (cgroup_reaper.hpp).
#include "runtime/cgroup_reaper.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <optional>
#include <set>
#include <string_view>
#include <system_error>

#include "base/log.hpp"
#include "runtime/cgroup_files.hpp"

namespace cordon::runtime::cgroup_reaper {

namespace fs = std::filesystem;
using cgroup_files::failed;
using cgroup_files::kill_members;

namespace {

// How long a dead host's cgroup may take to empty after cgroup.kill before its rmdir is given up
// on (it is tried again by the next host). This waits, but only here: reaping runs when a host is
// created, before any run of it, never on an event loop.
constexpr int rmdir_attempts = 200;
constexpr useconds_t rmdir_pause_us = 1000;

bool remove_directory(const fs::path& directory) {
    for (int attempt = 0; attempt < rmdir_attempts; ++attempt) {
        if (::rmdir(directory.c_str()) == 0 || errno == ENOENT) return true;
        if (errno != EBUSY) return false;
        ::usleep(rmdir_pause_us);
    }
    return false;
}

constexpr std::string_view record_magic = "cordon-cgroups 1";
constexpr std::size_t record_limit = 64 * 1024;

// The mount and cgroup namespaces of this process ("<mnt> <cgroup>", by inode): where the paths
// of a record are seen from. Empty when /proc does not say.
std::string namespaces() {
    std::string out;
    for (const char* ns : {"/proc/self/ns/mnt", "/proc/self/ns/cgroup"}) {
        struct stat st {};
        if (::stat(ns, &st) != 0) return {};
        out +=
            (out.empty() ? "" : " ") + std::to_string(st.st_dev) + ":" + std::to_string(st.st_ino);
    }
    return out;
}

// What a free lock file says: nullopt when it records nothing (an earlier cordon's), the
// directories otherwise (none when the record is not whole, or not of these namespaces: the host
// is then left alone).
struct record {
    bool ours = false;  // seen from this process's namespaces
    std::vector<fs::path> directories;
};

std::optional<record> read_record(int lock) {
    std::string text(record_limit, '\0');
    std::size_t got = 0;
    while (got < text.size()) {
        const ssize_t n =
            ::pread(lock, text.data() + got, text.size() - got, static_cast<off_t>(got));
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;
        got += static_cast<std::size_t>(n);
    }
    text.resize(got);
    if (text.empty()) return std::nullopt;
    record out;
    std::string_view rest = text;
    bool magic = false;
    bool ended = false;
    std::string seen_from;
    while (!rest.empty()) {
        const std::size_t eol = rest.find('\n');
        if (eol == std::string_view::npos) break;  // a line cut short: not whole
        const std::string_view line = rest.substr(0, eol);
        rest.remove_prefix(eol + 1);
        if (!magic) {
            if (line != record_magic) return out;
            magic = true;
        } else if (line.starts_with("namespaces ")) {
            seen_from = line.substr(11);
        } else if (line.starts_with("cgroup ")) {
            out.directories.emplace_back(line.substr(7));
        } else if (line == "end") {
            ended = true;
        }
    }
    const std::string here = namespaces();
    out.ours = ended && !here.empty() && seen_from == here;
    return out;
}

// Whether `directory` may be one the host `name` made: an absolute path named after the host, in
// a cgroup filesystem. Anything else in a record is not removed.
bool recorded_cgroup(const fs::path& directory, const std::string& name) {
    if (!directory.is_absolute() || directory.filename() != name ||
        directory.lexically_normal() != directory) {
        return false;
    }
    struct statfs fs_info {};
    if (::statfs(directory.parent_path().c_str(), &fs_info) != 0) return false;
    return fs_info.f_type == CGROUP_SUPER_MAGIC || fs_info.f_type == CGROUP2_SUPER_MAGIC;
}

// Ends the runs under the dead host's directory `host` and removes them and it; true once it is
// gone.
bool end_host_directory(const fs::path& host) {
    std::error_code ec;
    if (!fs::exists(host, ec)) return !ec;
    std::vector<fs::path> runs;
    for (const auto& run : fs::directory_iterator(host, ec)) {
        if (run.is_directory(ec)) runs.push_back(run.path());
    }
    for (const auto& run : runs)
        kill_members(run);
    bool removed = true;
    for (const auto& run : runs)
        removed = remove_directory(run) && removed;
    return remove_directory(host) && removed;
}

}  // namespace

std::string lock_record(const std::vector<fs::path>& directories) {
    const std::string seen_from = namespaces();
    if (seen_from.empty()) return {};
    std::string out = std::string(record_magic) + "\nnamespaces " + seen_from + "\n";
    for (const fs::path& directory : directories) {
        if (directory.native().find('\n') != std::string::npos) return {};
        out += "cgroup " + directory.native() + "\n";
    }
    return out + "end\n";
}

// The lock directory, trusted only when this user owns it and nobody else can enter it: another
// user who could delete lock files could make the next cordon end runs that are alive. It lives
// under /dev/shm, where no confined command can open anything (see cgroup.hpp).
std::variant<unique_fd, std::string> open_lock_directory(fs::path path) {
    if (path.empty()) path = "/dev/shm/cordon-cgroup-locks-" + std::to_string(::geteuid());
    if (::mkdir(path.c_str(), 0700) != 0 && errno != EEXIST) {
        const int error = errno;
        return failed("cannot create " + path.string(), error);
    }
    unique_fd fd(::open(path.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    if (!fd) {
        const int error = errno;
        return failed("cannot open " + path.string(), error);
    }
    struct stat st {};
    if (::fstat(fd.get(), &st) != 0) {
        const int error = errno;
        return failed("cannot stat " + path.string(), error);
    }
    if (st.st_uid != ::geteuid() || (st.st_mode & 077) != 0) {
        return path.string() + " is not a private directory of uid " + std::to_string(::geteuid()) +
               " (owner " + std::to_string(st.st_uid) + ")";
    }
    return fd;
}

// A cordon that was killed (SIGKILL, a crash) left its cgroups behind, possibly with the trees of
// its last runs still inside. Whoever creates the next host ends them. Only a cgroup whose lock
// file exists and can be locked is touched: no lock file (another user) proves nothing, and a held
// lock means its owner is alive. The search starts from the lock files, so that the common case
// (every host alive) costs one small directory listing.
void reap_stale_hosts(int lock_directory, const std::vector<fs::path>& bases) {
    std::set<std::string> names;
    {
        unique_fd listing(::openat(lock_directory, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC));
        DIR* entries = listing ? ::fdopendir(listing.release()) : nullptr;
        if (entries == nullptr) return;
        while (const dirent* entry = ::readdir(entries)) {
            const std::string_view file = entry->d_name;
            constexpr std::string_view suffix = ".lock";
            if (file.rfind("cordon-", 0) != 0 || file.size() <= suffix.size() ||
                file.substr(file.size() - suffix.size()) != suffix) {
                continue;
            }
            names.emplace(file.substr(0, file.size() - suffix.size()));
        }
        ::closedir(entries);
    }
    for (const std::string& name : names) {
        const std::string lock_name = name + ".lock";
        // Never waited on: no blocking open (O_NONBLOCK, whatever was put at the name) and no
        // blocking lock (LOCK_NB: a held lock is a live host, or a squatter; either way the host
        // is left alone).
        unique_fd lock(::openat(lock_directory, lock_name.c_str(),
                                O_RDWR | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC));
        struct stat st {};
        if (!lock || ::fstat(lock.get(), &st) != 0 || !S_ISREG(st.st_mode) ||
            ::flock(lock.get(), LOCK_EX | LOCK_NB) != 0) {
            continue;
        }
        std::vector<fs::path> directories;
        if (std::optional<record> recorded = read_record(lock.get())) {
            // A host seen from other namespaces (or a record cut short) is for a cordon there:
            // these paths may name other directories here, or none, and its lock must stay.
            if (!recorded->ours) continue;
            for (fs::path& directory : recorded->directories) {
                if (recorded_cgroup(directory, name)) {
                    directories.push_back(std::move(directory));
                } else {
                    log::debug("{} records {}: not one of its cgroups, left alone", lock_name,
                               directory.string());
                }
            }
        } else {
            // An earlier cordon's lock, which records nothing: its cgroups are looked for under
            // this process's bases, and a host with none there is left to a cordon that shares
            // its bases (another service, another scope): its lock file stays, or nobody ever
            // could end it.
            std::error_code ec;
            for (const fs::path& base : bases) {
                if (fs::exists(base / name, ec)) directories.push_back(base / name);
            }
            if (directories.empty()) continue;
            directories = bases;
            for (fs::path& directory : directories)
                directory /= name;
        }
        // In the order recorded: the v2 tree first, which holds every process of a run.
        bool removed = true;
        for (const fs::path& directory : directories)
            removed = end_host_directory(directory) && removed;
        // The lock goes last, and only when every directory went: it is what leads the next
        // reaper to what is left.
        if (removed) {
            ::unlinkat(lock_directory, lock_name.c_str(), 0);
            log::info("ended the runs of a cordon that is gone: {}", name);
        } else {
            log::debug("the cgroups of {}, a cordon that is gone, are not all removable yet", name);
        }
    }
}

}  // namespace cordon::runtime::cgroup_reaper
