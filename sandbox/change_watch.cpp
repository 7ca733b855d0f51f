// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

// See change_watch.hpp. fanotify(7) with FAN_REPORT_DFID_NAME: each event names its directory by
// file handle and the entry by name; the handles are opened (open_by_handle_at(2)) and named once
// the run is over, each directory once. A thread drains the queue while the run lasts, so that
// the kernel never holds more than a moment's events; a lost event (a queue overflow, more names
// than cordon keeps) makes the watch's answer unusable, and the caller scans instead.
//
// Longer than the ~500 lines a file here stays under: the fanotify reader, its thread and the
// naming of handles belong to one watch whose answer is usable or not as a whole.
#include "sandbox/change_watch.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/fanotify.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdint>
#include <cstring>
#include <map>
#include <mutex>
#include <set>
#include <system_error>
#include <thread>
#include <unordered_map>

#include "cordon/unique_fd.hpp"
#include "sandbox/directory_listing.hpp"
#include "sandbox/landlock_ruleset.hpp"
#include "sandbox/protected_paths.hpp"
#include "sandbox/quarantine.hpp"

namespace cordon::sandbox {

namespace fs = std::filesystem;

namespace {

// Entries (a directory and a name) a watch keeps; a run that changes more is scanned instead.
constexpr std::size_t most_names = 1'000'000;
// How often the reader reads the queue while events keep coming.
constexpr int batch_interval_ms = 10;

// A write through a shared mapping raises no FAN_MODIFY. The closing of the file it was opened
// for writing through is reported (FAN_CLOSE_WRITE), unless the file outlives the run: a
// descriptor a command sends over a unix socket to itself stays open, unreferenced, until the
// kernel's collector frees it, later. So every file opened (FAN_OPEN) is a candidate, and one whose
// change time moved in the window is a change (no command can set a change time).
constexpr std::uint64_t change_events =
    FAN_CREATE | FAN_MOVED_TO | FAN_MODIFY | FAN_CLOSE_WRITE | FAN_ATTRIB;
constexpr std::uint64_t watched_events = change_events | FAN_OPEN | FAN_ONDIR;

bool not_before(const struct statx_timestamp& t, const timespec& since) {
    return t.tv_sec > since.tv_sec ||
           (t.tv_sec == since.tv_sec && static_cast<long>(t.tv_nsec) >= since.tv_nsec);
}

std::string fsid_key(const fsid_t& id) {
    return std::string(reinterpret_cast<const char*>(&id), sizeof id);
}

}  // namespace

struct change_watch::state {
    struct filesystem {
        std::string fsid;
        unique_fd mount;             // a directory on it, for open_by_handle_at
        std::uint64_t mount_id = 0;  // the mount that directory was reached through
    };

    unique_fd fanotify;
    unique_fd stop;
    std::vector<filesystem> filesystems;
    std::thread reader;

    timespec since{};  // when the window opened
    // Where the run may write (the roots, then `elsewhere`): a directory outside them all holds
    // nothing of its doing.
    std::vector<fs::path> reach;

    std::mutex mutex;
    // fsid + handle type + handle -> the names changed in that directory ("." for itself)
    std::map<std::string, std::set<std::string>> names;
    // The same, of the files only opened: changed if their change time moved.
    std::map<std::string, std::set<std::string>> opened;
    std::set<std::pair<std::string, std::string>> moved;  // directories renamed in
    std::size_t count = 0;
    std::optional<std::string> lost;

    // Reads every queued event; false on an error reading.
    bool drain() {
        alignas(fanotify_event_metadata) char buffer[65536];
        for (;;) {
            const ssize_t got = ::read(fanotify.get(), buffer, sizeof buffer);
            if (got < 0) {
                if (errno == EINTR) continue;
                if (errno == EAGAIN) return true;
                std::lock_guard lock(mutex);
                lost = std::string("cannot read fanotify events: ") + std::strerror(errno);
                return false;
            }
            if (got == 0) return true;
            std::lock_guard lock(mutex);
            // The records are read by copy, field by field: nothing here relies on their
            // alignment in the buffer.
            const auto size = static_cast<std::size_t>(got);
            for (std::size_t at = 0; at + sizeof(fanotify_event_metadata) <= size;) {
                fanotify_event_metadata event{};
                std::memcpy(&event, buffer + at, sizeof event);
                if (event.event_len < sizeof event || at + event.event_len > size) break;
                take(event, std::string_view(buffer + at, event.event_len));
                at += event.event_len;
            }
        }
    }

    // One event: its directory's handle and the entry's name, kept until finish().
    void take(const fanotify_event_metadata& event, std::string_view record) {
        if (event.fd >= 0) ::close(event.fd);
        if (lost) return;  // the answer is the scan's already: nothing more to keep
        if (event.vers != FANOTIFY_METADATA_VERSION) {
            lost = "fanotify events of another version";
            return;
        }
        if ((event.mask & FAN_Q_OVERFLOW) != 0) {
            lost = "the kernel's fanotify queue overflowed";
            return;
        }
        for (std::size_t at = event.metadata_len;
             at + sizeof(fanotify_event_info_header) <= record.size();) {
            fanotify_event_info_header header{};
            std::memcpy(&header, record.data() + at, sizeof header);
            if (header.len < sizeof header || at + header.len > record.size()) break;
            const std::string_view info = record.substr(at, header.len);
            at += header.len;
            const auto type = header.info_type;
            if (type != FAN_EVENT_INFO_TYPE_DFID_NAME && type != FAN_EVENT_INFO_TYPE_DFID &&
                type != FAN_EVENT_INFO_TYPE_FID) {
                continue;
            }
            // fanotify_event_info_fid: the header, the fsid, then a file_handle (its byte count,
            // its type, its bytes) and, for DFID_NAME, the entry's name.
            const std::size_t fsid_at = sizeof header;
            const std::size_t handle_at = fsid_at + sizeof(__kernel_fsid_t);
            if (handle_at + sizeof(file_handle) > info.size()) continue;
            file_handle handle{};
            std::memcpy(&handle, info.data() + handle_at, sizeof handle);
            const std::size_t bytes_at = handle_at + sizeof(file_handle);
            if (bytes_at + handle.handle_bytes > info.size()) continue;
            std::string key(info.substr(fsid_at, sizeof(__kernel_fsid_t)));
            key.append(reinterpret_cast<const char*>(&handle.handle_type),
                       sizeof handle.handle_type);
            key.append(info.substr(bytes_at, handle.handle_bytes));
            std::string name = ".";
            if (type == FAN_EVENT_INFO_TYPE_DFID_NAME) {
                const std::string_view rest = info.substr(bytes_at + handle.handle_bytes);
                name.assign(rest.substr(0, rest.find('\0')));
            }
            if (name.empty() || name.find('/') != std::string::npos) name = ".";
            const bool changed = (event.mask & change_events) != 0;
            // A directory listed is no candidate: what changes in it raises its own events.
            if (!changed && ((event.mask & FAN_ONDIR) != 0 || name == ".")) continue;
            auto& into = changed ? names : opened;
            if (into[key].insert(name).second && ++count > most_names) {
                lost = "more than " + std::to_string(most_names) + " entries changed or opened";
                names.clear();
                opened.clear();
                moved.clear();
                return;
            }
            if ((event.mask & FAN_MOVED_TO) != 0 && (event.mask & FAN_ONDIR) != 0 && name != ".") {
                moved.emplace(key, name);
            }
        }
    }

    void stop_reader() {
        if (!reader.joinable()) return;
        const std::uint64_t one = 1;
        while (::write(stop.get(), &one, sizeof one) < 0 && errno == EINTR) {
        }
        reader.join();
    }

    struct named_directory {
        fs::path path;
        unique_fd fd;  // O_PATH
        // No path names it (longer than PATH_MAX): `path` is then the first directory on its
        // way that none does, named from its parent.
        bool unnameable = false;
    };

    // The directory a key names, by the path it has now; nullopt when it is gone.
    std::optional<named_directory> directory_of(const std::string& key) const {
        constexpr std::size_t fsid_size = sizeof(__kernel_fsid_t);
        constexpr std::size_t type_size = sizeof(int);
        if (key.size() < fsid_size + type_size) return std::nullopt;
        const std::string fsid = key.substr(0, fsid_size);
        const auto found = std::find_if(filesystems.begin(), filesystems.end(),
                                        [&fsid](const filesystem& f) { return f.fsid == fsid; });
        if (found == filesystems.end()) return std::nullopt;
        const std::size_t bytes = key.size() - fsid_size - type_size;
        std::vector<unsigned char> storage(sizeof(file_handle) + bytes);
        auto* handle = reinterpret_cast<file_handle*>(storage.data());
        handle->handle_bytes = static_cast<unsigned int>(bytes);
        std::memcpy(&handle->handle_type, key.data() + fsid_size, type_size);
        std::memcpy(handle->f_handle, key.data() + fsid_size + type_size, bytes);
        unique_fd dir(::open_by_handle_at(found->mount.get(), handle, O_PATH | O_CLOEXEC));
        if (!dir) return std::nullopt;
        // A directory removed since keeps its handle for a while: it has no link, and its
        // path is no path.
        struct stat st {};
        if (::fstat(dir.get(), &st) != 0 || st.st_nlink == 0) return std::nullopt;
        std::error_code ec;
        fs::path path = fs::read_symlink("/proc/self/fd/" + std::to_string(dir.get()), ec);
        if (ec == std::errc::filename_too_long) {
            std::optional<fs::path> top = unnameable_top(dir.get());
            if (!top) return std::nullopt;
            return named_directory{std::move(*top), std::move(dir), true};
        }
        if (ec || !path.is_absolute()) return std::nullopt;
        return named_directory{std::move(path), std::move(dir)};
    }

    // The first directory no path names on the way to `dir` (O_PATH), found going up through
    // "..": the nearest directory a path names, and the name in it of the one below.
    static std::optional<fs::path> unnameable_top(int dir) {
        unique_fd child(::fcntl(dir, F_DUPFD_CLOEXEC, 0));
        for (int level = 0; child && level < 4096; ++level) {
            unique_fd parent(::openat(child.get(), "..", O_PATH | O_DIRECTORY | O_CLOEXEC));
            struct stat below {};
            if (!parent || ::fstat(child.get(), &below) != 0) return std::nullopt;
            std::optional<std::string> name;
            for (const std::string& entry :
                 names_in(parent.get()).value_or(std::vector<std::string>{})) {
                struct stat st {};
                if (::fstatat(parent.get(), entry.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0 &&
                    st.st_ino == below.st_ino && st.st_dev == below.st_dev) {
                    name = entry;
                    break;
                }
            }
            if (!name) return std::nullopt;
            std::error_code ec;
            const fs::path path =
                fs::read_symlink("/proc/self/fd/" + std::to_string(parent.get()), ec);
            if (!ec && path.is_absolute()) return path / *name;
            child = std::move(parent);
        }
        return std::nullopt;
    }
};

change_watch::change_watch(std::unique_ptr<state> s) : state_(std::move(s)) {}

change_watch::~change_watch() {
    if (state_) state_->stop_reader();
}

std::variant<std::unique_ptr<change_watch>, std::string> change_watch::open(
    std::span<const fs::path> roots, std::span<const base::mount_entry> mounts, timespec since,
    std::span<const fs::path> elsewhere) {
    auto s = std::make_unique<state>();
    s->since = since;
    s->reach.assign(roots.begin(), roots.end());
    s->reach.insert(s->reach.end(), elsewhere.begin(), elsewhere.end());
    s->fanotify.reset(::fanotify_init(
        FAN_CLASS_NOTIF | FAN_CLOEXEC | FAN_NONBLOCK | FAN_UNLIMITED_QUEUE | FAN_REPORT_DFID_NAME,
        O_RDONLY | O_CLOEXEC | O_LARGEFILE));
    if (!s->fanotify) {
        if (errno == EPERM) return std::string("fanotify needs CAP_SYS_ADMIN");
        if (errno == EINVAL) return std::string("this kernel's fanotify reports no names");
        return std::string("fanotify_init: ") + std::strerror(errno);
    }
    // Every filesystem a root lies on, or a writable mount beneath one.
    std::vector<fs::path> points;
    for (const fs::path& root : roots) {
        points.push_back(root);
        for (const base::mount_entry& mount : mounts) {
            if (!mount.read_only && mount.point != root && is_within(mount.point, root)) {
                points.push_back(mount.point);
            }
        }
    }
    for (const fs::path& point : points) {
        // A descriptor that is more than a path: fanotify_mark and open_by_handle_at want one.
        unique_fd path_only = open_directory_no_symlinks(point);
        unique_fd dir(path_only ? ::openat(path_only.get(), ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC)
                                : -1);
        if (!dir) return "cannot open " + point.string() + ": " + std::strerror(errno);
        struct statfs fs_info {};
        if (::fstatfs(dir.get(), &fs_info) != 0) {
            return "cannot read the filesystem of " + point.string() + ": " + std::strerror(errno);
        }
        const std::string fsid = fsid_key(fs_info.f_fsid);
        struct statx mount_info {};
        if (::statx(dir.get(), "", AT_EMPTY_PATH, STATX_MNT_ID, &mount_info) != 0 ||
            (mount_info.stx_mask & STATX_MNT_ID) == 0) {
            return "cannot tell which mount " + point.string() + " lies on";
        }
        const auto known =
            std::find_if(s->filesystems.begin(), s->filesystems.end(),
                         [&fsid](const state::filesystem& f) { return f.fsid == fsid; });
        if (known != s->filesystems.end()) {
            // A second mount of a filesystem watched already (a bind mount beneath a root, or a
            // root that is one): an event names a directory by its handle, which open_by_handle_at
            // can name through one mount only, and a change made through the other would be
            // named where it lies outside the roots.
            if (known->mount_id != mount_info.stx_mnt_id) {
                return point.string() + " is another mount of a filesystem watched already: " +
                       "the watch could not name what changes through it";
            }
            continue;
        }
        if (::fanotify_mark(s->fanotify.get(), FAN_MARK_ADD | FAN_MARK_FILESYSTEM, watched_events,
                            dir.get(), nullptr) != 0) {
            return "fanotify cannot watch the filesystem of " + point.string() + ": " +
                   std::strerror(errno);
        }
        s->filesystems.push_back({fsid, std::move(dir), mount_info.stx_mnt_id});
    }
    s->stop.reset(::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK));
    if (!s->stop) return std::string("eventfd: ") + std::strerror(errno);
    state* raw = s.get();
    try {
        s->reader = std::thread([raw] {
            try {
                pollfd fds[2] = {{raw->fanotify.get(), POLLIN, 0}, {raw->stop.get(), POLLIN, 0}};
                for (;;) {
                    if (::poll(fds, 2, -1) < 0) {
                        if (errno == EINTR) continue;
                        return;
                    }
                    if ((fds[1].revents & POLLIN) != 0) return;
                    if (!raw->drain()) return;
                    // Events come one open or write at a time: woken for each, the reader would
                    // take a core's worth of switches from the run it watches. The queue has no
                    // bound; read it in batches, a few milliseconds apart.
                    pollfd stop{raw->stop.get(), POLLIN, 0};
                    if (::poll(&stop, 1, batch_interval_ms) > 0) return;
                }
            } catch (...) {
                // Keeping the events ran out of memory: the answer is the scan's, never a
                // std::terminate. The reason fits in the string's own buffer (no allocation).
                try {
                    const std::lock_guard lock(raw->mutex);
                    raw->lost.emplace("out of memory");
                } catch (...) {
                }
            }
        });
    } catch (const std::system_error& error) {
        return std::string("cannot start the fanotify reader: ") + error.what();
    }
    return std::unique_ptr<change_watch>(new change_watch(std::move(s)));
}

std::variant<change_set, std::string> change_watch::finish() {
    state_->stop_reader();
    // Every process of the run is gone, and the kernel queued its events before its calls
    // returned: what is left in the queue is the rest.
    (void)state_->drain();
    std::lock_guard lock(state_->mutex);
    if (state_->lost) return *state_->lost;
    change_set out;
    std::set<std::string> keys;
    for (const auto& [key, names] : state_->names)
        keys.insert(key);
    for (const auto& [key, names] : state_->opened)
        keys.insert(key);
    static const std::set<std::string> none;
    for (const std::string& key : keys) {
        const auto changed = state_->names.find(key);
        const auto opened = state_->opened.find(key);
        const std::set<std::string>& names =
            changed != state_->names.end() ? changed->second : none;
        const std::optional<state::named_directory> dir = state_->directory_of(key);
        if (!dir) continue;
        // The mark covers the whole filesystem: another process's files (one of several names
        // among them: a local `git clone`, a package store) are not the run's, and would only
        // make the watch give way to the scan.
        if (std::none_of(state_->reach.begin(), state_->reach.end(),
                         [&dir](const fs::path& place) { return is_within(dir->path, place); })) {
            continue;
        }
        if (dir->unnameable) {
            out.unnameable.push_back(dir->path);
            continue;
        }
        for (const std::string& name : opened != state_->opened.end() ? opened->second : none) {
            if (names.contains(name)) continue;
            struct statx st {};
            if (::statx(dir->fd.get(), name.c_str(), AT_SYMLINK_NOFOLLOW | AT_STATX_DONT_SYNC,
                        STATX_TYPE | STATX_CTIME | STATX_NLINK, &st) != 0 ||
                !not_before(st.stx_ctime, state_->since)) {
                continue;
            }
            out.paths.push_back(dir->path / name);
            if (S_ISREG(st.stx_mode) && st.stx_nlink > 1) {
                return "a file with several names changed: " + (dir->path / name).string();
            }
        }
        for (const std::string& name : names) {
            const fs::path path = name == "." ? dir->path : dir->path / name;
            out.paths.push_back(path);
            if (state_->moved.contains({key, name})) out.moved.push_back(path);
            if (name == ".") continue;
            // A file of several names made, linked, renamed or written under one: its other
            // names (a protected one, perhaps) changed too, and no event says where they are.
            // The scan finds them (their change time moved).
            struct statx st {};
            if (::statx(dir->fd.get(), name.c_str(), AT_SYMLINK_NOFOLLOW | AT_STATX_DONT_SYNC,
                        STATX_TYPE | STATX_NLINK, &st) == 0 &&
                S_ISREG(st.stx_mode) && st.stx_nlink > 1) {
                return "a file with several names changed: " + path.string();
            }
        }
    }
    return out;
}

// ---- the scan ----------------------------------------------------------------------------------

scan_interest::scan_interest(std::span<const std::string> names,
                             std::span<const protected_place> places) {
    for (const std::string& name : names) {
        if (name == path_directories) continue;
        first_.insert(fs::path(std::string(home_anchored(name).value_or(name))).begin()->string());
    }
    for (const protected_place& place : places)
        first_.insert(place.path.filename().string());
    for (const std::string& first : first_)
        key_ += first + '/';
}

bool scan_interest::everything_in(const fs::path& dir) const {
    if (dir.filename() == "hooks") return true;
    for (const fs::path& part : dir) {
        if (first_.contains(part.native())) return true;
    }
    return false;
}

const std::string& scan_interest::key() const {
    return key_;
}

bool scan_interest::entry(std::string_view name) const {
    // A git directory's parts are named by no protected name where the directory is not `.git`
    // (a bare or separate one).
    return name == "config" || name == "config.worktree" || name == "commondir" || name == "HEAD" ||
           first_.contains(name);
}

scan_interest interest_of(std::span<const std::string> names,
                          std::span<const protected_place> places) {
    return scan_interest(names, places);
}

namespace {

// What the scan needs of a directory whose ctime was `ctime`: its subdirectories, and its other
// entries that may be of interest (all of them in a directory whose every entry is). It stays
// true until the ctime moves. Per process, shared by the scans of every run in it (a long-lived
// `cordon mcp` lists each directory once); cleared when it grows beyond what a tree needs.
struct remembered_directory {
    dev_t dev = 0;
    ino_t ino = 0;
    statx_timestamp ctime{};
    std::string interest;  // scan_interest::key() it was filtered with
    bool everything = false;
    std::vector<std::string> directories;
    std::vector<std::string> others;
};

struct scan_memory {
    std::mutex mutex;
    std::unordered_map<std::string, std::shared_ptr<const remembered_directory>> directories;
};
scan_memory& memory() {
    static scan_memory instance;
    return instance;
}
constexpr std::size_t most_remembered = 500'000;

bool same_time(const statx_timestamp& a, const statx_timestamp& b) {
    return a.tv_sec == b.tv_sec && a.tv_nsec == b.tv_nsec;
}

// The entries of the directory open as `fd` that the scan needs; nullopt when it cannot be listed.
std::optional<remembered_directory> read_directory(int fd, const scan_interest& interest,
                                                   bool everything) {
    const int listed = ::openat(fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (listed < 0) return std::nullopt;
    DIR* stream = ::fdopendir(listed);
    if (stream == nullptr) {
        ::close(listed);
        return std::nullopt;
    }
    remembered_directory out;
    out.interest = interest.key();
    out.everything = everything;
    errno = 0;
    while (const dirent* entry = ::readdir(stream)) {
        const std::string_view name = entry->d_name;
        if (name == "." || name == "..") continue;
        unsigned char type = entry->d_type;
        if (type == DT_UNKNOWN) {
            struct stat st {};
            if (::fstatat(::dirfd(stream), entry->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0) continue;
            type = S_ISDIR(st.st_mode) ? DT_DIR : DT_REG;
        }
        if (type == DT_DIR) {
            out.directories.emplace_back(name);
        } else if (everything || interest.entry(name)) {
            out.others.emplace_back(name);
        }
    }
    const bool failed = errno != 0;
    ::closedir(stream);
    if (failed) return std::nullopt;
    return out;
}

}  // namespace

std::variant<change_set, std::string> scan_changes(std::span<const fs::path> roots, timespec since,
                                                   const scan_interest& interest) {
    constexpr unsigned wanted = STATX_CTIME | STATX_MTIME | STATX_INO | STATX_TYPE;
    change_set out;
    // A place that cannot be read is named and the scan goes on: what it can see is judged.
    const auto unread = [&out](const fs::path& dir, int error) {
        if (!out.incomplete)
            out.incomplete = "cannot scan " + dir.string() + ": " + std::strerror(error);
    };
    std::size_t readable_roots = 0;
    // The work trees met (a directory holding a `.git`): what their repositories obey beyond their
    // git directories (a core.hooksPath, a symlinked hook's target, an included file) can be
    // written in place anywhere, and is looked at once the walk is done.
    std::vector<fs::path> work_trees;
    for (const fs::path& root : roots) {
        // A directory and what its parent's statx said of it (nothing for the root). A directory
        // that holds nothing the scan needs (no subdirectory, no entry of interest) and did not
        // change is never opened: in a tree of many leaf directories that is most of them.
        std::vector<std::pair<fs::path, std::optional<struct statx>>> pending;
        pending.emplace_back(root, std::nullopt);
        while (!pending.empty()) {
            const fs::path dir = std::move(pending.back().first);
            const std::optional<struct statx> known = pending.back().second;
            pending.pop_back();
            const bool is_root = dir == root;
            unique_fd fd;
            const auto opened = [&fd, &dir]() {
                if (!fd) fd = open_directory_no_symlinks(dir);
                return static_cast<bool>(fd);
            };
            // Gone since its parent was read (another run's doing): nothing to judge there.
            const auto gone = [is_root] {
                return !is_root && (errno == ENOENT || errno == ENOTDIR || errno == ELOOP);
            };
            struct statx st {};
            if (known) {
                st = *known;
            } else if (!opened() || ::statx(fd.get(), "", AT_EMPTY_PATH | AT_STATX_DONT_SYNC,
                                            wanted, &st) != 0) {
                if (!gone()) unread(dir, errno);
                continue;
            }
            if (is_root) ++readable_roots;
            const dev_t dev = makedev(st.stx_dev_major, st.stx_dev_minor);
            std::shared_ptr<const remembered_directory> seen;
            {
                std::lock_guard lock(memory().mutex);
                auto found = memory().directories.find(dir.native());
                if (found != memory().directories.end()) seen = found->second;
            }
            const bool changed = not_before(st.stx_ctime, since);
            if (changed && !is_root) {
                out.paths.push_back(dir);
                // Its inode changed but not its entries: renamed in, with everything beneath it,
                // which the judgement walks whole; unless this very directory was here at an
                // earlier scan (its mode or owner changed).
                const bool here_before = seen && seen->ino == st.stx_ino && seen->dev == dev;
                if (!not_before(st.stx_mtime, since) && !here_before) {
                    out.moved.push_back(dir);
                    continue;
                }
            }
            // A changed directory's entries are all looked at; an unchanged one's only where
            // something protected may have been written in place.
            const bool everything =
                changed ||
                interest.everything_in(is_root ? fs::path() : dir.lexically_relative(root));
            std::shared_ptr<const remembered_directory> entries;
            if (!changed && seen && seen->ino == st.stx_ino && seen->dev == dev &&
                same_time(seen->ctime, st.stx_ctime) && seen->everything == everything &&
                seen->interest == interest.key()) {
                entries = seen;
            }
            if (!entries) {
                std::optional<remembered_directory> read;
                if (opened()) {
                    read = read_directory(fd.get(), interest, everything);
                    // Made unreadable by its owner, the user cordon runs as: a command can do
                    // that to what it made, to hide what lies beneath.
                    if (!read && errno == EACCES && make_listable(fd.get())) {
                        read = read_directory(fd.get(), interest, everything);
                    }
                }
                if (!read) {
                    if (!gone()) unread(dir, errno);
                    continue;
                }
                read->dev = dev;
                read->ino = st.stx_ino;
                read->ctime = st.stx_ctime;
                entries = std::make_shared<const remembered_directory>(std::move(*read));
                std::lock_guard lock(memory().mutex);
                if (memory().directories.size() > most_remembered) memory().directories.clear();
                memory().directories[dir.native()] = entries;
            }
            if (entries->others.empty() && entries->directories.empty()) continue;
            const auto holds_git = [](const std::vector<std::string>& names) {
                return std::find(names.begin(), names.end(), ".git") != names.end();
            };
            if (holds_git(entries->directories) || holds_git(entries->others)) {
                work_trees.push_back(dir);
            }
            if (!opened()) {
                if (!gone()) unread(dir, errno);
                continue;
            }
            for (const std::string& name : entries->others) {
                struct statx entry {};
                if (::statx(fd.get(), name.c_str(), AT_SYMLINK_NOFOLLOW | AT_STATX_DONT_SYNC,
                            STATX_CTIME, &entry) == 0 &&
                    not_before(entry.stx_ctime, since)) {
                    out.paths.push_back(dir / name);
                }
            }
            for (const std::string& name : entries->directories) {
                struct statx child {};
                if (::statx(fd.get(), name.c_str(), AT_SYMLINK_NOFOLLOW | AT_STATX_DONT_SYNC,
                            wanted, &child) != 0) {
                    continue;  // gone since the listing
                }
                if (dir.native().size() + 1 + name.size() >= PATH_MAX) {
                    // No path names it: made or changed in the run, it goes whole; else what
                    // lies beneath it is not looked at, and the record says so.
                    if (not_before(child.stx_ctime, since)) {
                        out.unnameable.push_back(dir / name);
                    } else {
                        unread(dir / name, ENAMETOOLONG);
                    }
                    continue;
                }
                if (!S_ISDIR(child.stx_mode)) {
                    // Replaced by something else since the listing: judged as an entry.
                    if (not_before(child.stx_ctime, since)) out.paths.push_back(dir / name);
                    continue;
                }
                pending.emplace_back(dir / name, child);
            }
        }
    }
    if (readable_roots == 0 && out.incomplete) return *out.incomplete;
    if (work_trees.empty()) return out;
    const auto look_at = [&out, &since](const fs::path& path) {
        struct statx st {};
        if (::statx(AT_FDCWD, path.c_str(), AT_SYMLINK_NOFOLLOW | AT_STATX_DONT_SYNC, STATX_CTIME,
                    &st) == 0 &&
            not_before(st.stx_ctime, since)) {
            out.paths.push_back(path);
        }
    };
    const std::vector<std::string> user_hooks = user_hooks_paths();
    for (const fs::path& top : work_trees) {
        const repository_reach reach = reach_of_work_tree(top, roots, user_hooks);
        for (const fs::path& target : reach.hook_targets)
            look_at(target);
        for (const fs::path& file : reach.configurations)
            look_at(file);
        for (const fs::path& hooks : reach.hook_directories) {
            unique_fd dir = open_directory_no_symlinks(hooks);
            if (!dir) continue;
            for (const std::string& name : names_in(dir.get()).value_or(std::vector<std::string>{}))
                look_at(hooks / name);
        }
    }
    return out;
}

}  // namespace cordon::sandbox
