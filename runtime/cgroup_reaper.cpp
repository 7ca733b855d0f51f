// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

// The liveness locks and the reaping of the runs of cordons that are gone (cgroup_reaper.hpp).
#include "runtime/cgroup_reaper.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <set>
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

}  // namespace

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
// file exists and can be locked is touched: no lock file (another user, a host in another mount
// namespace) proves nothing, a held lock means its owner is alive, and a host with no cgroup under
// this process's bases is left to a cordon that shares its bases. The search starts from the lock
// files, so that the common case (every host alive) costs one small directory listing.
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
        // A host whose cgroups live elsewhere (another service, another terminal's scope) is
        // for a cordon there to end: its lock file stays, or nobody ever could.
        std::error_code ec;
        if (std::none_of(bases.begin(), bases.end(),
                         [&](const fs::path& base) { return fs::exists(base / name, ec); })) {
            continue;
        }
        // Never waited on: no blocking open (O_NONBLOCK, whatever was put at the name) and no
        // blocking lock (LOCK_NB: a held lock is a live host, or a squatter; either way the host
        // is left alone).
        unique_fd lock(::openat(lock_directory, lock_name.c_str(),
                                O_RDWR | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC));
        if (!lock || ::flock(lock.get(), LOCK_EX | LOCK_NB) != 0) continue;
        bool removed = true;
        for (const fs::path& base : bases) {
            const fs::path host = base / name;
            std::vector<fs::path> runs;
            for (const auto& run : fs::directory_iterator(host, ec)) {
                if (run.is_directory(ec)) runs.push_back(run.path());
            }
            for (const auto& run : runs)
                kill_members(run);
            for (const auto& run : runs)
                removed = remove_directory(run) && removed;
            if (fs::exists(host, ec)) removed = remove_directory(host) && removed;
        }
        if (removed) {
            ::unlinkat(lock_directory, lock_name.c_str(), 0);
            log::info("ended the runs of a cordon that is gone: {}", name);
        }
    }
}

}  // namespace cordon::runtime::cgroup_reaper
