// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

// Longer than the ~500 lines a file here stays under: one bounded walk (breadth first, its
// budget shared by lanes), its cache of directory stamps and the cache file's format, which
// must agree field by field; the recogniser of what a file holds is secret_recognise.cpp.
#include "sandbox/secret_scan.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <deque>
#include <map>
#include <set>

#include "base/log.hpp"
#include "base/mountinfo.hpp"
#include "base/number.hpp"
#include "base/small_file.hpp"
#include "cordon/unique_fd.hpp"

namespace cordon::sandbox {

namespace fs = std::filesystem;

std::string scan_limits::to_text() const {
    return std::to_string(depth) + " " + std::to_string(directories) + " " +
           std::to_string(entries_per_directory) + " " + std::to_string(files) + " " +
           std::to_string(head_bytes) + " " + std::to_string(pem_bytes) + " " +
           std::to_string(file_size) + " " + std::to_string(found);
}

namespace {

// Trees not entered, wherever they are: packages, virtual environments, build caches. Each holds
// thousands of files a tool put there, not a key the user left.
constexpr std::string_view skipped_anywhere[]{
    "node_modules", "__pycache__",   "site-packages", "dist-packages",   ".venv", ".tox",    ".nox",
    ".mypy_cache",  ".pytest_cache", ".ruff_cache",   ".terraform",      ".next", ".gradle", ".svn",
    ".hg",          ".direnv",       ".eggs",         "bower_components"};

// Trees not entered right under the home: caches, toolchains and their registries, trash,
// container and application images, editors' servers; cordon's own state (its quarantine holds
// what runs left, a directory per judgement: thousands after a busy week, which would spend the
// scan's budget and a stat each per run, and none a key the user left).
constexpr std::string_view skipped_in_home[]{".cache",
                                             ".local/state/cordon",
                                             ".npm",
                                             ".nvm",
                                             ".pnpm-store",
                                             ".yarn",
                                             ".rustup",
                                             ".cargo/registry",
                                             ".cargo/git",
                                             "go/pkg",
                                             ".m2/repository",
                                             ".local/lib",
                                             ".local/share/Trash",
                                             ".local/share/containers",
                                             ".local/share/docker",
                                             ".local/share/flatpak",
                                             ".local/share/Steam",
                                             ".var",
                                             "snap",
                                             ".vscode-server",
                                             ".vscode/extensions",
                                             ".cursor-server",
                                             ".cursor/extensions",
                                             ".windsurf-server",
                                             ".pyenv",
                                             ".rbenv",
                                             ".sdkman",
                                             ".conda",
                                             "miniconda3",
                                             "anaconda3",
                                             ".julia",
                                             ".ghcup",
                                             ".stack",
                                             ".opam",
                                             ".dotnet",
                                             ".nuget/packages",
                                             ".android",
                                             ".steam",
                                             ".wine",
                                             ".thumbnails",
                                             ".bun",
                                             ".deno",
                                             ".local/share/pnpm",
                                             ".local/share/virtualenvs"};

// Files not opened, by what their names say they are: images, archives, objects, media.
constexpr std::string_view binary_suffixes[]{
    ".png", ".jpg", ".jpeg", ".gif", ".webp",  ".ico",    ".pdf",   ".zip",  ".gz",    ".tgz",
    ".xz",  ".bz2", ".zst",  ".7z",  ".tar",   ".jar",    ".class", ".so",   ".o",     ".a",
    ".pyc", ".mp3", ".mp4",  ".mkv", ".mov",   ".wav",    ".flac",  ".ogg",  ".woff",  ".woff2",
    ".ttf", ".otf", ".iso",  ".img", ".qcow2", ".sqlite", ".wasm",  ".rlib", ".rmeta", ".deb"};

bool skipped_file_name(std::string_view name) {
    return std::any_of(std::begin(binary_suffixes), std::end(binary_suffixes),
                       [name](std::string_view suffix) { return name.ends_with(suffix); });
}

struct dir_identity {
    dev_t device = 0;
    ino_t inode = 0;
    timespec modified{};
    timespec changed{};
    bool operator==(const dir_identity& other) const {
        return device == other.device && inode == other.inode &&
               modified.tv_sec == other.modified.tv_sec &&
               modified.tv_nsec == other.modified.tv_nsec &&
               changed.tv_sec == other.changed.tv_sec && changed.tv_nsec == other.changed.tv_nsec;
    }
};

dir_identity dir_identity_of(const struct stat& st) {
    return {st.st_dev, st.st_ino, st.st_mtim, st.st_ctim};
}

// What the scan found in one directory, kept in the cache.
struct directory_record {
    dir_identity id;
    std::vector<std::string> subdirectories;  // entered from it, in order
    std::vector<std::string> found;           // files in it that hold a secret
};

using records = std::map<std::string, directory_record>;  // by path relative to the home

// A directory beneath `dir`, opened without following a symlink or leaving the filesystem on the
// way (openat2's RESOLVE_NO_SYMLINKS | RESOLVE_NO_XDEV: a link swapped in at a component while
// the scan runs leads nowhere); O_NOFOLLOW on the last component where openat2 is missing.
int open_directory(int dir, const std::string& relative) {
    const char* name = relative.empty() ? "." : relative.c_str();
    open_how how{};
    how.flags = O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK;
    how.resolve = RESOLVE_NO_SYMLINKS | RESOLVE_NO_XDEV | RESOLVE_BENEATH;
    const long fd = ::syscall(SYS_openat2, dir, name, &how, sizeof how);
    if (fd >= 0 || (errno != ENOSYS && errno != EPERM)) return static_cast<int>(fd);
    return ::openat(dir, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
}

// The head of a regular file of this filesystem, under the size cap; nullopt for anything else.
// Never waits: O_NONBLOCK (a FIFO is refused by its type, never read), O_NOFOLLOW, O_NOCTTY.
std::optional<std::string> file_head(int dir, const char* name, dev_t device,
                                     const scan_limits& limits) {
    constexpr int flags = O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC;
    // O_NOATIME: a scan is not a use (only the owner may ask for it).
    unique_fd fd(::openat(dir, name, flags | O_NOATIME));
    if (!fd && errno == EPERM) fd = unique_fd(::openat(dir, name, flags));
    if (!fd) return std::nullopt;
    struct stat st {};
    if (::fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode) || st.st_dev != device ||
        st.st_size < 16 || static_cast<std::uint64_t>(st.st_size) > limits.file_size) {
        return std::nullopt;
    }
    std::string head(std::min(limits.head_bytes, static_cast<std::size_t>(st.st_size)), '\0');
    std::size_t got = 0;
    const auto read_to = [&](std::size_t want) {
        head.resize(want);
        while (got < want) {
            const ssize_t n =
                ::pread(fd.get(), head.data() + got, want - got, static_cast<off_t>(got));
            if (n < 0 && errno == EINTR) continue;
            if (n <= 0) break;
            got += static_cast<std::size_t>(n);
        }
        head.resize(got);
    };
    read_to(head.size());
    // A PEM bundle may hold its key after the certificates.
    if (head.starts_with("-----BEGIN") && got == limits.head_bytes)
        read_to(std::min(limits.pem_bytes, static_cast<std::size_t>(st.st_size)));
    return head;
}

std::string joined(const std::string& dir, std::string_view name) {
    return dir.empty() ? std::string(name) : dir + "/" + std::string(name);
}

// The mount points strictly beneath `home`: never looked at (a dead network mount would block a
// stat), and on another filesystem anyway.
std::set<fs::path> mount_points_beneath(const fs::path& home) {
    std::set<fs::path> out;
    auto table = base::read_mountinfo();
    if (auto* reason = std::get_if<std::string>(&table)) {
        log::debug("secret scan: no mount table ({}): other filesystems are told by st_dev alone",
                   *reason);
        return out;
    }
    for (const base::mount_entry& mount : std::get<std::vector<base::mount_entry>>(table)) {
        const fs::path relative = mount.point.lexically_relative(home);
        if (!relative.empty() && relative != "." && *relative.begin() != "..")
            out.insert(mount.point);
    }
    return out;
}

// One scan, breadth first. A directory whose identity is what `previous` recorded is not read
// again: its subdirectories and matches are taken from the record (the entries of a directory
// change its modification time). Fills `now` with what it saw.
bool scan_within(const fs::path& path, const fs::path& root) {
    auto p = path.begin();
    for (auto r = root.begin(); r != root.end(); ++r, ++p) {
        if (p == path.end() || *p != *r) return false;
    }
    return true;
}

scan_result walk(const fs::path& home, const std::vector<fs::path>& skip, const scan_limits& limits,
                 const records* previous, records& now, bool& changed,
                 std::chrono::milliseconds settle, const std::vector<fs::path>& own = {},
                 const std::vector<fs::path>& last = {}) {
    scan_result out;
    changed = false;
    const auto deadline = std::chrono::steady_clock::now() + limits.deadline;
    unique_fd home_fd(::open(home.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NONBLOCK));
    struct stat home_st {};
    if (!home_fd || ::fstat(home_fd.get(), &home_st) != 0) {
        out.stopped = "the home cannot be opened";
        changed = true;
        return out;
    }
    const std::set<fs::path> mounts = mount_points_beneath(home);
    const std::set<fs::path> skipped(skip.begin(), skip.end());
    const auto not_entered = [&](const std::string& relative, std::string_view name,
                                 const fs::path& full) {
        if (mounts.count(full) != 0 || skipped.count(full) != 0) return true;
        if (std::find(std::begin(skipped_anywhere), std::end(skipped_anywhere), name) !=
            std::end(skipped_anywhere))
            return true;
        return std::find(std::begin(skipped_in_home), std::end(skipped_in_home), relative) !=
               std::end(skipped_in_home);
    };
    // The rest of the home is read first (lane 0); then the roots earlier runs wrote in, a lane
    // each, a directory of each in turn, each lane with an equal share of what the bounds leave
    // (directories, file heads, matches, time): what a run planted in its workspace (thousands of
    // files, directories, keys, or heads slow to read) spends its own lane's share, and keeps back
    // no key elsewhere. A directory a share of the counts cut short is reused as it was read until
    // it changes: what it left unread is the planter's, and read again by every run it would cost
    // each run the share (one the clock cut short is read again).
    struct lane {
        std::deque<std::pair<std::string, int>> queue;
        std::size_t directories = 0;
        std::size_t files = 0;
        std::size_t found = 0;
        std::chrono::steady_clock::duration spent{};
    };
    std::vector<lane> lanes(1 + last.size());
    lanes[0].queue.emplace_back("", 0);
    std::size_t files = 0;    // file heads counted against the bounds
    std::size_t waiting = 1;  // queued in all the lanes
    bool shared = false;      // lane 0 is done: the others share what the bounds leave
    lane share;               // each one's share, once shared
    std::size_t turn = 0;
    const auto lane_of = [&](const std::string& relative) {
        const fs::path full = home / relative;
        for (std::size_t i = 0; i < last.size(); ++i) {
            if (scan_within(full, last[i])) return i + 1;
        }
        return std::size_t{0};
    };
    // No more queued than can be read, in all and in a lane: a run's tree of a million
    // directories costs no memory here.
    const auto queue = [&](std::string relative, int level) {
        lane& to = lanes[lane_of(relative)];
        if (shared ? to.directories + to.queue.size() >= share.directories
                   : out.directories.size() + waiting >= limits.directories) {
            return false;
        }
        to.queue.emplace_back(std::move(relative), level);
        ++waiting;
        return true;
    };
    // The lane to read from next, or nullptr when none may.
    const auto next_lane = [&]() -> lane* {
        if (!lanes[0].queue.empty()) return &lanes[0];
        if (!shared) {
            shared = true;
            const auto active = static_cast<std::size_t>(std::count_if(
                lanes.begin() + 1, lanes.end(), [](const lane& l) { return !l.queue.empty(); }));
            if (active == 0) return nullptr;
            // At least one of each: a lane with none would never be read at all (the bounds
            // themselves still end the walk).
            const auto left = [active](std::size_t limit, std::size_t spent) {
                return std::max<std::size_t>(1, limit > spent ? (limit - spent) / active : 0);
            };
            share.directories = left(limits.directories, out.directories.size());
            share.files = left(limits.files, files);
            share.found = left(limits.found, out.found.size());
            const auto started = std::chrono::steady_clock::now();
            share.spent = started < deadline ? (deadline - started) / static_cast<long>(active)
                                             : std::chrono::steady_clock::duration{};
        }
        for (std::size_t tried = 1; tried < lanes.size(); ++tried) {
            lane& l = lanes[1 + turn++ % (lanes.size() - 1)];
            if (!l.queue.empty() && l.directories < share.directories && l.found < share.found &&
                l.spent < share.spent)
                return &l;
        }
        return nullptr;
    };
    while (waiting > 0) {
        if (out.directories.size() >= limits.directories) {
            out.stopped = "directory limit";
            break;
        }
        if (std::chrono::steady_clock::now() > deadline) {
            out.stopped = "deadline";
            break;
        }
        lane* current = next_lane();
        if (current == nullptr) {
            out.stopped = "a share of the bounds";
            break;
        }
        auto [relative, level] = std::move(current->queue.front());
        current->queue.pop_front();
        --waiting;
        // This lane's turn ends at its share of the time, as the scan does at the deadline.
        const auto turn_started = std::chrono::steady_clock::now();
        const auto turn_ends =
            shared ? std::min(deadline, turn_started + (share.spent - current->spent)) : deadline;
        struct charged {
            lane* to;
            bool counts;
            std::chrono::steady_clock::time_point from;
            ~charged() {
                if (counts) to->spent += std::chrono::steady_clock::now() - from;
            }
        } const charge{current, shared, turn_started};
        // Cut short by this lane's share, not by the bounds: reused as read (above).
        const auto cut = [&](directory_record& record) {
            if (!shared) record.id.inode = 0;
        };
        const fs::path full = relative.empty() ? home : home / relative;
        if (mounts.count(full) != 0) continue;  // mounted there since the last scan
        if (std::any_of(own.begin(), own.end(),
                        [&full](const fs::path& root) { return scan_within(full, root); })) {
            // The run's own root: what it holds is the run's to read, and what the run wrote
            // there must not spend the bounds that find the keys elsewhere (a thousand planted
            // keys, eight thousand files). Not entered; its records stand for the next run.
            if (previous != nullptr) {
                for (auto at = previous->lower_bound(relative);
                     at != previous->end() &&
                     (at->first == relative || at->first.starts_with(relative + "/"));
                     ++at) {
                    now.insert(*at);
                }
            }
            continue;
        }
        // Unchanged since the last scan: its record stands.
        if (previous != nullptr) {
            const auto was = previous->find(relative);
            struct stat st {};
            if (was != previous->end() &&
                ::fstatat(home_fd.get(), relative.empty() ? "." : relative.c_str(), &st,
                          AT_SYMLINK_NOFOLLOW) == 0 &&
                S_ISDIR(st.st_mode) && dir_identity_of(st) == was->second.id) {
                out.directories.push_back(relative);
                ++current->directories;
                for (const std::string& name : was->second.found)
                    out.found.push_back(full / name);
                current->found += was->second.found.size();
                if (level < limits.depth) {
                    for (const std::string& name : was->second.subdirectories)
                        (void)queue(joined(relative, name), level + 1);
                }
                now.emplace(relative, was->second);
                continue;
            }
        }
        changed = true;
        unique_fd dir_fd(open_directory(home_fd.get(), relative));
        struct stat st {};
        if (!dir_fd || ::fstat(dir_fd.get(), &st) != 0 || st.st_dev != home_st.st_dev) continue;
        DIR* listing = ::fdopendir(dir_fd.get());
        if (listing == nullptr) continue;
        (void)dir_fd.release();  // the listing owns it now
        directory_record record{dir_identity_of(st), {}, {}};
        // Changed so recently that a change in the same clock tick would not show in its times
        // (git's "racy" entries): read again next time, never reused.
        timespec wall{};
        ::clock_gettime(CLOCK_REALTIME, &wall);
        const auto ns = [](const timespec& t) {
            return static_cast<std::int64_t>(t.tv_sec) * 1'000'000'000 + t.tv_nsec;
        };
        if (std::max(ns(st.st_mtim), ns(st.st_ctim)) + settle.count() * 1'000'000 >= ns(wall))
            record.id.inode = 0;
        out.directories.push_back(relative);
        ++current->directories;
        // A file head more than the bounds, or this lane's share of them, allow.
        const auto one_file_too_many = [&] {
            if (shared && current->files >= share.files) return true;
            if (++files > limits.files) return true;
            ++current->files;
            return false;
        };
        // A match this lane's share still holds; past it the directory is cut short.
        const auto one_more_match = [&] {
            if (shared && current->found >= share.found) {
                cut(record);
                return false;
            }
            ++current->found;
            return true;
        };
        std::size_t entries = 0;
        while (const dirent* entry = ::readdir(listing)) {
            const std::string_view name = entry->d_name;
            if (name == "." || name == "..") continue;
            // A directory cut short by a bound is read again the next time, never reused (but in
            // an earlier root's lane: cut()).
            if (++entries > limits.entries_per_directory) {
                cut(record);
                break;
            }
            // Cut short by the clock (how long lane 0 took, how busy the machine is): not the
            // lane's contents, so read again the next time. Looked at before every entry: one
            // head can take milliseconds, and a lane's turn must not run into the others'.
            if (std::chrono::steady_clock::now() > turn_ends) {
                record.id.inode = 0;
                break;
            }
            // The cache keeps one name a line: a directory that holds a name with a newline is
            // read every time (its record is never reused, and such names are not stored).
            if (name.find('\n') != std::string_view::npos) record.id.inode = 0;
            const std::string child = joined(relative, name);
            const fs::path child_full = full / name;
            unsigned char type = entry->d_type;
            if (type == DT_UNKNOWN) {
                if (mounts.count(child_full) != 0) continue;
                struct stat child_st {};
                if (::fstatat(::dirfd(listing), entry->d_name, &child_st, AT_SYMLINK_NOFOLLOW) != 0)
                    continue;
                type = S_ISDIR(child_st.st_mode)   ? DT_DIR
                       : S_ISREG(child_st.st_mode) ? DT_REG
                                                   : DT_UNKNOWN;
            }
            if (type == DT_DIR) {
                if (name == ".git") {
                    // A repository's objects are compressed and its hooks are code; its config
                    // may hold a token in a remote's URL.
                    if (one_file_too_many()) {
                        cut(record);
                        continue;
                    }
                    const std::string config = std::string(name) + "/config";
                    if (auto head =
                            file_head(::dirfd(listing), config.c_str(), home_st.st_dev, limits);
                        head && recognise(*head) != secret_kind::none && one_more_match()) {
                        record.found.push_back(config);
                        out.found.push_back(child_full / "config");
                    }
                    continue;
                }
                if (level < limits.depth && !not_entered(child, name, child_full)) {
                    if (!queue(child, level + 1)) {
                        cut(record);
                        if (!shared) out.stopped = "directory limit";
                        continue;
                    }
                    record.subdirectories.emplace_back(name);
                }
                continue;
            }
            if (type != DT_REG || skipped.count(child_full) != 0 || skipped_file_name(name))
                continue;
            if (one_file_too_many()) {
                cut(record);
                continue;
            }
            const auto head = file_head(::dirfd(listing), entry->d_name, home_st.st_dev, limits);
            if (!head) continue;
            ++out.files_read;
            if (recognise(*head) != secret_kind::none && one_more_match()) {
                record.found.emplace_back(name);
                out.found.push_back(child_full);
            }
        }
        ::closedir(listing);
        now.emplace(relative, std::move(record));
        // A lane stops at its share of the matches (one_more_match), never the whole scan.
        if (!shared && out.found.size() >= limits.found) {
            out.stopped = "match limit";
            break;
        }
    }
    if (out.stopped.empty() && files > limits.files) out.stopped = "file limit";
    std::sort(out.found.begin(), out.found.end());
    return out;
}

// ---- the cache ---------------------------------------------------------------------------------
//   cordon-secret-scan 1
//   home <path>
//   limits <scan_limits::to_text()>
//   scanned <seconds since boot of the last whole scan>
//   d <device> <inode> <mtime s> <mtime ns> <ctime s> <ctime ns> <path relative to the home>
//   s <name>   (a subdirectory entered)
//   f <name>   (a file that holds a secret)

constexpr std::string_view cache_format = "cordon-secret-scan 1";
constexpr std::size_t max_cache_size = 16 << 20;

std::int64_t since_boot_seconds() {
    timespec now{};
    ::clock_gettime(CLOCK_BOOTTIME, &now);
    return now.tv_sec;
}

// FNV-1a of the home: the cache file's name (the file repeats the whole path).
std::string cache_name(const fs::path& home) {
    std::uint64_t hash = 1469598103934665603ULL;
    for (char c : home.string()) {
        hash ^= static_cast<unsigned char>(c);
        hash *= 1099511628211ULL;
    }
    char text[24];
    std::snprintf(text, sizeof text, "home-%016llx", static_cast<unsigned long long>(hash));
    return text;
}

// The cache directory: this user's own, open to nobody else (the verdict cache's rules,
// verdict_cache.hpp). Invalid when it is not.
unique_fd open_cache_directory(const fs::path& directory) {
    if (::mkdir(directory.c_str(), 0700) != 0 && errno != EEXIST) return {};
    unique_fd fd(::open(directory.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    struct stat st {};
    if (!fd || ::fstat(fd.get(), &st) != 0 || st.st_uid != ::geteuid() || (st.st_mode & 077) != 0) {
        log::debug("secret scan: {} is not a private directory of uid {}: not cached",
                   directory.string(), ::geteuid());
        return {};
    }
    return fd;
}

struct cache_entry {
    std::int64_t scanned = 0;
    records directories;
};

// A name of one entry of a directory, as the scan records them.
bool plain_name(std::string_view name) {
    return !name.empty() && name != "." && name != ".." && name.find('/') == std::string_view::npos;
}

// A path beneath the home as the scan records them: names joined by "/".
bool plain_relative(std::string_view path) {
    while (true) {
        const std::size_t slash = path.find('/');
        if (!plain_name(path.substr(0, slash))) return false;
        if (slash == std::string_view::npos) return true;
        path.remove_prefix(slash + 1);
    }
}

// The cache of `home`, nullopt when there is none this scan may trust: not this user's own, open
// to others, of another format, home or limits, truncated, or naming a path outside the home.
std::optional<cache_entry> load_cache(int directory, const fs::path& home,
                                      const scan_limits& limits) {
    unique_fd fd(::openat(directory, cache_name(home).c_str(),
                          O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC));
    if (!fd) return std::nullopt;
    struct stat st {};
    if (::fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode) || st.st_uid != ::geteuid() ||
        (st.st_mode & 077) != 0 || static_cast<std::size_t>(st.st_size) > max_cache_size) {
        log::debug("secret scan: the cache of {} is not this user's own: scanned again",
                   home.string());
        return std::nullopt;
    }
    base::read_result read = base::read_small_fd(fd.get(), max_cache_size);
    const std::string* text = std::get_if<std::string>(&read);
    if (text == nullptr) return std::nullopt;
    cache_entry out;
    std::string_view rest = *text;
    const auto next_line = [&rest]() -> std::optional<std::string_view> {
        if (rest.empty()) return std::nullopt;
        const std::size_t end = rest.find('\n');
        if (end == std::string_view::npos) return std::nullopt;  // truncated
        const std::string_view line = rest.substr(0, end);
        rest.remove_prefix(end + 1);
        return line;
    };
    if (next_line() != cache_format || next_line() != "home " + home.string() ||
        next_line() != "limits " + limits.to_text()) {
        return std::nullopt;
    }
    const auto scanned = next_line();
    if (!scanned || !scanned->starts_with("scanned ")) return std::nullopt;
    const auto seconds = base::parse_number<std::int64_t>(scanned->substr(8));
    if (!seconds) return std::nullopt;
    out.scanned = *seconds;
    directory_record* current = nullptr;
    while (auto line = next_line()) {
        if (line->size() < 2 || (*line)[1] != ' ') return std::nullopt;
        const char tag = line->front();
        std::string_view fields = line->substr(2);
        if (tag == 'd') {
            std::int64_t numbers[6];
            for (std::int64_t& number : numbers) {
                const std::size_t space = fields.find(' ');
                if (space == std::string_view::npos) return std::nullopt;
                const auto value = base::parse_number<std::int64_t>(fields.substr(0, space));
                if (!value) return std::nullopt;
                number = *value;
                fields.remove_prefix(space + 1);
            }
            directory_record record;
            record.id.device = static_cast<dev_t>(numbers[0]);
            record.id.inode = static_cast<ino_t>(numbers[1]);
            record.id.modified = {static_cast<time_t>(numbers[2]), static_cast<long>(numbers[3])};
            record.id.changed = {static_cast<time_t>(numbers[4]), static_cast<long>(numbers[5])};
            if (fields != "." && !plain_relative(fields)) return std::nullopt;
            const std::string relative = fields == "." ? std::string() : std::string(fields);
            current = &out.directories[relative];
            *current = std::move(record);
        } else if (tag == 's' && current != nullptr && plain_name(fields)) {
            current->subdirectories.emplace_back(fields);
        } else if (tag == 'f' && current != nullptr &&
                   (plain_name(fields) || fields == ".git/config")) {
            current->found.emplace_back(fields);
        } else {
            return std::nullopt;
        }
    }
    if (!rest.empty()) return std::nullopt;
    return out;
}

// `name` in `directory` replaced by a file of `text`, made 0600 under a private name and renamed
// into place: a concurrent reader sees the old file or the new one, never a part.
void replace_file_in(int directory, const std::string& name, std::string_view text) {
    timespec now{};
    ::clock_gettime(CLOCK_MONOTONIC, &now);
    const std::string temporary = "." + name + "." + std::to_string(::getpid()) + "." +
                                  std::to_string(::gettid()) + "." + std::to_string(now.tv_nsec);
    unique_fd fd(::openat(directory, temporary.c_str(),
                          O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600));
    if (!fd) return;
    std::size_t done = 0;
    while (done < text.size()) {
        const ssize_t put = ::write(fd.get(), text.data() + done, text.size() - done);
        if (put < 0 && errno == EINTR) continue;
        if (put <= 0) break;
        done += static_cast<std::size_t>(put);
    }
    if (done != text.size() ||
        ::renameat(directory, temporary.c_str(), directory, name.c_str()) != 0)
        (void)::unlinkat(directory, temporary.c_str(), 0);
}

void store_cache(int directory, const fs::path& home, const scan_limits& limits,
                 const cache_entry& entry) {
    std::string text = std::string(cache_format) + "\nhome " + home.string() + "\nlimits " +
                       limits.to_text() + "\nscanned " + std::to_string(entry.scanned) + "\n";
    const auto one_line = [](std::string_view name) {
        return name.find('\n') == std::string_view::npos;
    };
    for (const auto& [relative, record] : entry.directories) {
        // What no line can hold is read again the next time.
        if (!one_line(relative)) continue;
        const dir_identity& id = record.id;
        text += "d " + std::to_string(id.device) + " " + std::to_string(id.inode) + " " +
                std::to_string(id.modified.tv_sec) + " " + std::to_string(id.modified.tv_nsec) +
                " " + std::to_string(id.changed.tv_sec) + " " + std::to_string(id.changed.tv_nsec) +
                " " + (relative.empty() ? "." : relative) + "\n";
        for (const std::string& name : record.subdirectories) {
            if (one_line(name)) text += "s " + name + "\n";
        }
        for (const std::string& name : record.found) {
            if (one_line(name)) text += "f " + name + "\n";
        }
    }
    if (text.size() > max_cache_size) return;
    replace_file_in(directory, cache_name(home), text);
}

// The caches of homes that are gone (a test's, a container's), and what a writer that died left
// beside them: removed when a cache is stored, so that the directory does not grow.
void prune_cache(int directory) {
    unique_fd listing_fd(::openat(directory, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    if (!listing_fd) return;
    DIR* listing = ::fdopendir(listing_fd.get());
    if (listing == nullptr) return;
    (void)listing_fd.release();
    std::vector<std::string> gone;
    timespec now{};
    ::clock_gettime(CLOCK_REALTIME, &now);
    while (const dirent* entry = ::readdir(listing)) {
        const std::string_view name = entry->d_name;
        struct stat st {};
        if (::fstatat(directory, entry->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0 ||
            !S_ISREG(st.st_mode) || st.st_uid != ::geteuid()) {
            continue;
        }
        if (name.starts_with(".home-") || name.starts_with(".found-") ||
            name.starts_with(".roots-")) {
            if (st.st_mtim.tv_sec + 60 < now.tv_sec) gone.emplace_back(name);
            continue;
        }
        if (!name.starts_with("home-") && !name.starts_with("found-") &&
            !name.starts_with("roots-"))
            continue;
        unique_fd fd(::openat(directory, entry->d_name,
                              O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC));
        if (!fd) continue;
        char head[4096];
        const ssize_t got = ::read(fd.get(), head, sizeof head);
        if (got <= 0) continue;
        const std::string_view text(head, static_cast<std::size_t>(got));
        const std::size_t start = text.find("\nhome ");
        const std::size_t end = text.find('\n', start + 1);
        if (start == std::string_view::npos || end == std::string_view::npos) continue;
        const std::string home(text.substr(start + 6, end - start - 6));
        struct stat home_st {};
        if (::lstat(home.c_str(), &home_st) != 0 && errno == ENOENT) gone.emplace_back(name);
    }
    ::closedir(listing);
    for (const std::string& name : gone)
        (void)::unlinkat(directory, name.c_str(), 0);
}

// ---- what was found, and when -------------------------------------------------------------------
//   cordon-secret-found 1
//   home <path>
//   limits <scan_limits::to_text()>
//   looked <nanoseconds since boot when a cordon last looked at the directories>
//   <absolute path of a file found>...

constexpr std::string_view found_format = "cordon-secret-found 1";

std::int64_t since_boot_nanoseconds() {
    timespec now{};
    ::clock_gettime(CLOCK_BOOTTIME, &now);
    return static_cast<std::int64_t>(now.tv_sec) * 1'000'000'000 + now.tv_nsec;
}

// The run's own roots a summary was made without: another run's are not its to trust (what
// the first run's workspace holds is denied to the second). NUL-separated, one line.
std::string own_line(const std::vector<fs::path>& own) {
    std::string out = "own";
    for (const fs::path& root : own) {
        out += '\0';
        out += root.native();
    }
    return out;
}

std::string found_name(const fs::path& home) {
    return "found-" + cache_name(home).substr(5);
}

// What a cordon found under `home` no longer ago than `trust`, nullopt otherwise (or when the file
// is not one this user's cordon wrote: the cache's rules).
std::optional<std::vector<fs::path>> trusted_found(int directory, const fs::path& home,
                                                   const scan_limits& limits,
                                                   const std::vector<fs::path>& own,
                                                   std::chrono::milliseconds trust) {
    if (trust.count() <= 0) return std::nullopt;
    unique_fd fd(::openat(directory, found_name(home).c_str(),
                          O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC));
    if (!fd) return std::nullopt;
    struct stat st {};
    if (::fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode) || st.st_uid != ::geteuid() ||
        (st.st_mode & 077) != 0 || static_cast<std::size_t>(st.st_size) > max_cache_size) {
        return std::nullopt;
    }
    base::read_result read = base::read_small_fd(fd.get(), max_cache_size);
    const std::string* text = std::get_if<std::string>(&read);
    if (text == nullptr) return std::nullopt;
    std::string_view rest = *text;
    const auto next_line = [&rest]() -> std::optional<std::string_view> {
        const std::size_t end = rest.find('\n');
        if (end == std::string_view::npos) return std::nullopt;  // truncated
        const std::string_view line = rest.substr(0, end);
        rest.remove_prefix(end + 1);
        return line;
    };
    if (next_line() != found_format || next_line() != "home " + home.string() ||
        next_line() != "limits " + limits.to_text() || next_line() != own_line(own)) {
        return std::nullopt;
    }
    const auto looked = next_line();
    if (!looked || !looked->starts_with("looked ")) return std::nullopt;
    const auto when = base::parse_number<std::int64_t>(looked->substr(7));
    const std::int64_t now = since_boot_nanoseconds();
    // Another boot's clock, or too long ago.
    if (!when || *when > now || now - *when > std::chrono::nanoseconds(trust).count()) {
        return std::nullopt;
    }
    std::vector<fs::path> out;
    while (auto line = next_line()) {
        const fs::path path{std::string(*line)};
        if (!path.is_absolute() || path.lexically_normal() != path || !scan_within(path, home) ||
            path == home) {
            return std::nullopt;
        }
        out.push_back(path);
    }
    if (!rest.empty()) return std::nullopt;
    return out;
}

void store_found(int directory, const fs::path& home, const scan_limits& limits,
                 const std::vector<fs::path>& own, const std::vector<fs::path>& found) {
    std::string text = std::string(found_format) + "\nhome " + home.string() + "\nlimits " +
                       limits.to_text() + "\n" + own_line(own) + "\nlooked " +
                       std::to_string(since_boot_nanoseconds()) + "\n";
    for (const fs::path& path : found) {
        if (path.native().find('\n') != std::string::npos) {
            // Not a line: no summary, and none an earlier look left, is taken; every run looks.
            (void)::unlinkat(directory, found_name(home).c_str(), 0);
            return;
        }
        text += path.string() + "\n";
    }
    if (text.size() > max_cache_size) return;
    replace_file_in(directory, found_name(home), text);
}

// ---- the roots runs wrote in -------------------------------------------------------------------
//   cordon-secret-roots 1
//   home <path>
//   <absolute path of a run's root in the home>...   (appended, one a line, most recent last)

constexpr std::string_view roots_format = "cordon-secret-roots 1";
constexpr std::size_t roots_kept = 1024;

std::string roots_name(const fs::path& home) {
    return "roots-" + cache_name(home).substr(5);
}

// The roots of `home` this user's runs wrote in, each once, most recent last; empty when there is
// no such file this scan may trust. `lines` is how many the file holds.
std::vector<fs::path> earlier_roots(int directory, const fs::path& home, std::size_t& lines) {
    lines = 0;
    unique_fd fd(::openat(directory, roots_name(home).c_str(),
                          O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC));
    if (!fd) return {};
    struct stat st {};
    if (::fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode) || st.st_uid != ::geteuid() ||
        (st.st_mode & 077) != 0 || static_cast<std::size_t>(st.st_size) > max_cache_size) {
        return {};
    }
    base::read_result read = base::read_small_fd(fd.get(), max_cache_size);
    const std::string* text = std::get_if<std::string>(&read);
    const std::string header = std::string(roots_format) + "\nhome " + home.string() + "\n";
    if (text == nullptr || !text->starts_with(header)) return {};
    std::vector<fs::path> out;
    std::string_view rest = std::string_view(*text).substr(header.size());
    // A line cut short by a writer that died is no root.
    for (std::size_t end; (end = rest.find('\n')) != std::string_view::npos;
         rest.remove_prefix(end + 1)) {
        ++lines;
        fs::path root{std::string(rest.substr(0, end))};
        if (!root.is_absolute() || root.lexically_normal() != root || root == home ||
            !scan_within(root, home))
            continue;
        std::erase(out, root);
        out.push_back(std::move(root));
    }
    return out;
}

// Adds the run's roots in `home` to what `known` holds and to the file: appended, so that runs
// that start together all leave theirs; rewritten with the most recent only when it has grown.
void note_roots(int directory, const fs::path& home, const std::vector<fs::path>& own,
                std::vector<fs::path>& known, std::size_t lines) {
    std::string added;
    for (const fs::path& root : own) {
        // Only a root strictly within the home has a place in it to read last (the home itself
        // would put all of it last), and one within a root already noted is read in its lane:
        // runs in a thousand directories of one workspace do not push it out.
        if (root == home || !scan_within(root, home) ||
            root.native().find('\n') != std::string::npos ||
            std::any_of(known.begin(), known.end(),
                        [&root](const fs::path& noted) { return scan_within(root, noted); }))
            continue;
        known.push_back(root);
        added += root.string() + "\n";
    }
    if (added.empty()) return;
    const std::string header = std::string(roots_format) + "\nhome " + home.string() + "\n";
    if (lines >= 2 * roots_kept) {
        std::string text = header;
        const std::size_t from = known.size() > roots_kept ? known.size() - roots_kept : 0;
        for (std::size_t i = from; i < known.size(); ++i)
            text += known[i].string() + "\n";
        replace_file_in(directory, roots_name(home), text);
        return;
    }
    unique_fd fd(::openat(
        directory, roots_name(home).c_str(),
        O_WRONLY | O_APPEND | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC, 0600));
    struct stat st {};
    if (!fd || ::fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode) || st.st_uid != ::geteuid() ||
        (st.st_mode & 077) != 0) {
        return;
    }
    // One write: appends of runs that start together do not interleave. Runs that made the file
    // together each write the header; a second one reads as lines that are no root.
    if (st.st_size == 0) added = header + added;
    for (;;) {
        const ssize_t put = ::write(fd.get(), added.data(), added.size());
        if (put >= 0 || errno != EINTR) break;
    }
}

}  // namespace

scan_result scan_home(const fs::path& home, const std::vector<fs::path>& skip,
                      const scan_limits& limits) {
    records now;
    bool changed = false;
    return walk(home, skip, limits, nullptr, now, changed, std::chrono::milliseconds(0));
}

fs::path default_secret_cache() {
    return "/dev/shm/cordon-secrets-" + std::to_string(::geteuid());
}

found_secrets_result found_secrets(const fs::path& home, const std::vector<fs::path>& skip,
                                   const secret_cache_options& options) {
    // Only the run's roots in this home matter to its scan, and to whose summary it may take: the
    // runs of workspaces elsewhere share one.
    std::vector<fs::path> own;
    for (const fs::path& root : options.own) {
        if (scan_within(root, home) || scan_within(home, root)) own.push_back(root);
    }
    unique_fd directory;
    if (!options.directory.empty()) directory = open_cache_directory(options.directory);
    // The roots other runs wrote in are read last; this run's are noted for the runs after it,
    // whether or not it looks itself.
    std::vector<fs::path> last;
    if (directory) {
        std::size_t lines = 0;
        last = earlier_roots(directory.get(), home, lines);
        note_roots(directory.get(), home, own, last, lines);
        // The run's own are not entered at all.
        std::erase_if(last, [&own](const fs::path& root) {
            return std::any_of(own.begin(), own.end(),
                               [&root](const fs::path& mine) { return scan_within(root, mine); });
        });
        if (auto found = trusted_found(directory.get(), home, options.limits, own, options.trust))
            return {std::move(*found), true};
    }
    std::optional<cache_entry> cached;
    if (directory) cached = load_cache(directory.get(), home, options.limits);
    const std::int64_t now = since_boot_seconds();
    // Too old (a file rewritten in place changes no directory), or from another boot's clock.
    if (cached && (cached->scanned > now || now - cached->scanned > options.lifetime.count()))
        cached.reset();
    cache_entry fresh;
    fresh.scanned = cached ? cached->scanned : now;
    bool changed = false;
    scan_result result = walk(home, skip, options.limits, cached ? &cached->directories : nullptr,
                              fresh.directories, changed, options.settle, own, last);
    if (!result.stopped.empty()) {
        log::debug("secret scan of {} stopped early ({}): {} directories, {} files read",
                   home.string(), result.stopped, result.directories.size(), result.files_read);
    }
    if (directory && changed && !fresh.directories.empty()) {
        store_cache(directory.get(), home, options.limits, fresh);
        prune_cache(directory.get());
    }
    if (directory) store_found(directory.get(), home, options.limits, own, result.found);
    return {std::move(result.found), cached.has_value() && !changed};
}

std::vector<fs::path> secrets_to_deny(std::vector<fs::path> found,
                                      const std::vector<fs::path>& homes,
                                      const std::vector<fs::path>& readable,
                                      const std::vector<fs::path>& covered, std::size_t budget,
                                      std::vector<fs::path>* left) {
    std::erase_if(found, [&](const fs::path& path) {
        const auto beneath = [&path](const fs::path& root) { return scan_within(path, root); };
        return std::any_of(readable.begin(), readable.end(), beneath) ||
               std::any_of(covered.begin(), covered.end(), beneath);
    });
    std::sort(found.begin(), found.end());
    found.erase(std::unique(found.begin(), found.end()), found.end());
    const std::size_t before = found.size();
    while (found.size() > budget) {
        // A directory that holds several is denied in their place: the deepest one that makes
        // them fit, else the one that takes most (a directory of keys is a store of keys, and
        // files spread one a directory, as a run could spread decoys, fold into what holds them).
        // Never a home, nor a directory at or above a root of the run.
        std::map<fs::path, std::size_t> held;
        for (const fs::path& path : found) {
            for (fs::path dir = path.parent_path(); dir.has_relative_path();
                 dir = dir.parent_path())
                ++held[dir];
        }
        const std::size_t need = found.size() - budget;
        const fs::path* best = nullptr;
        std::size_t best_gain = 0;
        std::size_t best_depth = 0;
        for (const auto& [held_dir, count] : held) {
            const fs::path& dir = held_dir;
            const bool in_a_home =
                std::any_of(homes.begin(), homes.end(),
                            [&dir](const fs::path& h) { return dir != h && scan_within(dir, h); });
            const bool holds_readable =
                std::any_of(readable.begin(), readable.end(),
                            [&dir](const fs::path& r) { return scan_within(r, dir); });
            if (count < 2 || !in_a_home || holds_readable) continue;
            const std::size_t gain = count - 1;
            const auto depth = static_cast<std::size_t>(std::distance(dir.begin(), dir.end()));
            const bool enough = gain >= need;
            const bool best_enough = best != nullptr && best_gain >= need;
            const bool better = best == nullptr || (enough && !best_enough) ||
                                (enough && best_enough && depth > best_depth) ||
                                (!enough && !best_enough &&
                                 (gain > best_gain || (gain == best_gain && depth > best_depth)));
            if (better) {
                best = &dir;
                best_gain = gain;
                best_depth = depth;
            }
        }
        if (best == nullptr) break;
        const fs::path folded = *best;
        std::erase_if(found, [&folded](const fs::path& path) { return scan_within(path, folded); });
        found.insert(std::upper_bound(found.begin(), found.end(), folded), folded);
    }
    if (found.size() > budget) {
        // What stays readable is first what lies around the run's own roots (in a directory that
        // holds one, below a home: where a run beside this one could have planted keys to push
        // the user's out), then the last in order.
        const auto around_a_root = [&](const fs::path& path) {
            for (const fs::path& root : readable) {
                for (fs::path dir = root.parent_path(); dir.has_relative_path();
                     dir = dir.parent_path()) {
                    if (std::none_of(homes.begin(), homes.end(), [&dir](const fs::path& h) {
                            return dir != h && scan_within(dir, h);
                        })) {
                        break;
                    }
                    if (scan_within(path, dir)) return true;
                }
            }
            return false;
        };
        std::stable_partition(found.begin(), found.end(),
                              [&](const fs::path& path) { return !around_a_root(path); });
        log::warn(
            "{} files in the homes hold a private key or a token; {} of them stay readable "
            "(a run denies at most 256 paths): --deny-read the directories that hold them",
            before, found.size() - budget);
        if (left != nullptr)
            left->insert(left->end(), found.begin() + static_cast<std::ptrdiff_t>(budget),
                         found.end());
        found.resize(budget);
        std::sort(found.begin(), found.end());
    }
    return found;
}

}  // namespace cordon::sandbox
