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
#include <chrono>
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

constexpr std::string_view record_magic = "cordon-cgroups 2";
// Written by earlier cordons: paths trusted only from the namespaces the record names.
constexpr std::string_view record_magic_v1 = "cordon-cgroups 1";
constexpr std::size_t record_limit = 64 * 1024;

// A directory's identity, "<st_dev>:<st_ino>": the same cgroup directory has the same one from
// every mount and cgroup namespace (one kernfs node of one superblock), unlike its path. Empty
// when it cannot be had.
std::string identity(const fs::path& directory) {
    struct stat st {};
    if (::stat(directory.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) return {};
    return std::to_string(st.st_dev) + ":" + std::to_string(st.st_ino);
}

// The mount and cgroup namespaces of this process ("<mnt> <cgroup>", by inode): what a record of
// an earlier cordon ("cordon-cgroups 1") is seen from. Empty when /proc does not say.
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

// One directory of a record, and the identity of the cgroup it was to be made in (empty in a
// record of an earlier cordon).
struct recorded_directory {
    fs::path path;
    std::string parent;
};

// What a free lock file says: nullopt when it records nothing (an earlier cordon's lock), the
// directories otherwise (none when the record is not whole: the host is then left alone).
struct record {
    bool whole = false;
    bool paths_trusted = false;  // an earlier cordon's record, seen from its own namespaces
    std::vector<recorded_directory> directories;
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
    int version = 0;
    bool ended = false;
    std::string seen_from;
    while (!rest.empty()) {
        const std::size_t eol = rest.find('\n');
        if (eol == std::string_view::npos) break;  // a line cut short: not whole
        const std::string_view line = rest.substr(0, eol);
        rest.remove_prefix(eol + 1);
        if (version == 0) {
            if (line == record_magic) {
                version = 2;
            } else if (line == record_magic_v1) {
                version = 1;
            } else {
                return out;
            }
        } else if (version == 1 && line.starts_with("namespaces ")) {
            seen_from = line.substr(11);
        } else if (version == 1 && line.starts_with("cgroup ")) {
            out.directories.push_back({fs::path(line.substr(7)), {}});
        } else if (version == 2 && line.starts_with("cgroup ")) {
            const std::string_view entry = line.substr(7);
            const std::size_t space = entry.find(' ');
            if (space == std::string_view::npos || space == 0) return out;
            out.directories.push_back(
                {fs::path(entry.substr(space + 1)), std::string(entry.substr(0, space))});
        } else if (line == "end") {
            ended = true;
        }
    }
    out.whole = ended;
    if (!ended) out.directories.clear();
    const std::string here = version == 1 ? namespaces() : std::string();
    out.paths_trusted = version == 1 && ended && !here.empty() && seen_from == here;
    return out;
}

// Whether `directory` may be one the host `name` made: an absolute path named after the host, a
// directory of this user's (mkdir(2) gives the host's its euid) in a cgroup filesystem. Anything
// else is not removed.
bool host_cgroup(const fs::path& directory, const std::string& name) {
    if (!directory.is_absolute() || directory.filename() != name ||
        directory.lexically_normal() != directory) {
        return false;
    }
    struct statfs fs_info {};
    if (::statfs(directory.parent_path().c_str(), &fs_info) != 0) return false;
    if (fs_info.f_type != CGROUP_SUPER_MAGIC && fs_info.f_type != CGROUP2_SUPER_MAGIC) return false;
    struct stat st {};
    if (::lstat(directory.c_str(), &st) != 0) return errno == ENOENT;  // gone: nothing to do
    return S_ISDIR(st.st_mode) && st.st_uid == ::geteuid();
}

// Where a recorded directory is from here, if that can be proven: the recorded path, when the
// cgroup it names as parent is the one the record identifies (any mount namespace that shows the
// same cgroup filesystem there: a restarted service's private /tmp, a container sharing
// /dev/shm); else the directory of the host's name in a base of this process that is that cgroup
// (a cgroup namespace that shows it at another path).
std::optional<fs::path> locate(const recorded_directory& directory, bool paths_trusted,
                               const std::string& name, const std::vector<fs::path>& bases) {
    if (directory.path.filename() != name) return std::nullopt;
    if (directory.parent.empty()) {
        return paths_trusted ? std::optional<fs::path>(directory.path) : std::nullopt;
    }
    if (identity(directory.path.parent_path()) == directory.parent) return directory.path;
    for (const fs::path& base : bases) {
        if (identity(base) == directory.parent) return base / name;
    }
    return std::nullopt;
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
    std::string out = std::string(record_magic) + "\n";
    for (const fs::path& directory : directories) {
        const std::string parent = identity(directory.parent_path());
        if (parent.empty() || directory.native().find('\n') != std::string::npos) return {};
        out += "cgroup " + parent + " " + directory.native() + "\n";
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
        // A lock file is made under a hidden name and renamed within moments (cgroup.cpp): one a
        // minute old was left by a cordon killed in between, before it made any cgroup.
        const auto minute_ago = std::chrono::system_clock::now() - std::chrono::minutes(1);
        while (const dirent* entry = ::readdir(entries)) {
            std::string_view file = entry->d_name;
            constexpr std::string_view suffix = ".lock";
            const bool pending = file.starts_with(".");
            if (pending) file.remove_prefix(1);
            if (file.rfind("cordon-", 0) != 0 || file.size() <= suffix.size() ||
                file.substr(file.size() - suffix.size()) != suffix) {
                continue;
            }
            if (!pending) {
                names.emplace(file.substr(0, file.size() - suffix.size()));
                continue;
            }
            struct stat st {};
            if (::fstatat(lock_directory, entry->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
                S_ISREG(st.st_mode) &&
                std::chrono::system_clock::from_time_t(st.st_mtim.tv_sec) < minute_ago) {
                (void)::unlinkat(lock_directory, entry->d_name, 0);
            }
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
        // Whether every directory of the record was found from here: only then can its lock go.
        bool all_located = true;
        const std::optional<record> recorded = read_record(lock.get());
        if (recorded && !recorded->whole) continue;  // cut short: which cgroups is unknown
        if (recorded) {
            for (const recorded_directory& directory : recorded->directories) {
                std::optional<fs::path> here =
                    locate(directory, recorded->paths_trusted, name, bases);
                if (here && host_cgroup(*here, name)) {
                    directories.push_back(std::move(*here));
                } else {
                    all_located = false;
                    log::debug("{} records {}: not provably one of its cgroups from here",
                               lock_name, directory.path.string());
                }
            }
        }
        if (!recorded || !all_located) {
            // An earlier cordon's lock, which records nothing, or a record that cannot be
            // verified from here: the host's cgroups are looked for by its name under this
            // process's bases (the name is unique to the host; a lock of it in this private
            // directory says its owner is gone).
            std::error_code ec;
            for (const fs::path& base : bases) {
                const fs::path directory = base / name;
                if (std::find(directories.begin(), directories.end(), directory) ==
                        directories.end() &&
                    fs::exists(directory, ec) && host_cgroup(directory, name)) {
                    directories.push_back(directory);
                }
            }
            // A record that records nothing: what was found under the bases is all there is,
            // if anything was (else the host is left to a cordon that shares its bases: another
            // service, another scope).
            if (!recorded) {
                if (directories.empty()) continue;
                directories.clear();
                for (const fs::path& base : bases) {
                    if (host_cgroup(base / name, name)) directories.push_back(base / name);
                }
            }
        }
        // In the order recorded: the v2 tree first, which holds every process of a run.
        bool removed = true;
        for (const fs::path& directory : directories)
            removed = end_host_directory(directory) && removed;
        // The lock goes last, and only when every directory went: it is what leads the next
        // reaper to what is left, and a directory this reaper cannot place may be seen by another.
        if (removed && all_located) {
            ::unlinkat(lock_directory, lock_name.c_str(), 0);
            log::info("ended the runs of a cordon that is gone: {}", name);
        } else if (!directories.empty()) {
            log::debug("the cgroups of {}, a cordon that is gone, are not all removable yet", name);
        }
    }
}

}  // namespace cordon::runtime::cgroup_reaper
