#include "runtime/cgroup.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <spdlog/spdlog.h>
#include <sys/file.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <set>
#include <system_error>

#include "base/mountinfo.hpp"
#include "base/number.hpp"
#include "base/small_file.hpp"
#include "base/text.hpp"

namespace cordon::runtime {

namespace fs = std::filesystem;

namespace {

// How long a cgroup may take to empty after cgroup.kill before rmdir is given up on.
constexpr int rmdir_attempts = 200;
constexpr useconds_t rmdir_pause_us = 1000;

// errno is read by the caller right after the failing call, before a string is built.
std::string failed(std::string_view what, int error) {
    return std::string(what) + ": " + std::strerror(error);
}

// The files read here are small (/proc's mountinfo and cgroup, a cgroup's keyed files) and read
// on every run: base/small_file.hpp reads them with read(2), no iostreams.

// The whole file, or "" when it cannot be read.
std::string read_file(const fs::path& path) {
    base::read_result text = base::read_small_file(path);
    if (auto* content = std::get_if<std::string>(&text)) return std::move(*content);
    return {};
}

using base::lines;
using base::split;

bool has_piece(std::string_view text, char separator, std::string_view piece) {
    const auto pieces = split(text, separator);
    return std::find(pieces.begin(), pieces.end(), piece) != pieces.end();
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

// What the kernel says about this process's cgroups: read once per host.
struct cgroup_view {
    std::vector<base::mount_entry> mounts;  // /proc/self/mountinfo
    std::string cgroups;                    // /proc/self/cgroup
};

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

// Unique among the hosts of this pid (a host left by an earlier process with the same pid may
// still exist); the lock directory is private, so it need not be unguessable.
std::string random_suffix() {
    std::uint64_t value = 0;
    if (::getrandom(&value, sizeof value, GRND_NONBLOCK) != sizeof value) {
        value =
            static_cast<std::uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count());
    }
    char hex[17];
    std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(value));
    return hex;
}

void kill_members(const fs::path& cgroup) {
    if (write_file(cgroup / "cgroup.kill", "1") == 0) return;
    for (const pid_t pid : members(cgroup / "cgroup.procs"))
        ::kill(pid, SIGKILL);
}

bool remove_directory(const fs::path& directory) {
    for (int attempt = 0; attempt < rmdir_attempts; ++attempt) {
        if (::rmdir(directory.c_str()) == 0 || errno == ENOENT) return true;
        if (errno != EBUSY) return false;
        ::usleep(rmdir_pause_us);
    }
    return false;
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
        unique_fd lock(
            ::openat(lock_directory, lock_name.c_str(), O_RDWR | O_NOFOLLOW | O_CLOEXEC));
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
            spdlog::info("ended the runs of a cordon that is gone: {}", name);
        }
    }
}

}  // namespace

std::variant<std::shared_ptr<cgroup_host>, std::string> cgroup_host::create(
    cgroup_host_options options) {
    // Without its mount table or its own cgroups (no /proc), this process cannot tell where its
    // runs' cgroups would be: no host, and the executor says why (process-group containment).
    auto mounts = base::read_mountinfo();
    if (auto* reason = std::get_if<std::string>(&mounts)) return *reason;
    base::read_result cgroups = base::read_small_file("/proc/self/cgroup");
    if (auto* error = std::get_if<base::read_error>(&cgroups)) {
        return error->describe("/proc/self/cgroup");
    }
    const cgroup_view view{std::get<std::vector<base::mount_entry>>(std::move(mounts)),
                           std::get<std::string>(std::move(cgroups))};
    auto unified = own_directory(view, "");
    if (auto* reason = std::get_if<std::string>(&unified)) return *reason;
    const fs::path base = std::get<fs::path>(unified);
    std::shared_ptr<cgroup_host> host(new cgroup_host());

    // The v1 hierarchies of a hybrid host, for limits the v2 tree cannot carry.
    std::optional<fs::path> pids_base, memory_base;
    if (auto v1 = own_directory(view, "pids"); std::holds_alternative<fs::path>(v1)) {
        pids_base = std::get<fs::path>(v1);
    }
    if (auto v1 = own_directory(view, "memory"); std::holds_alternative<fs::path>(v1)) {
        memory_base = std::get<fs::path>(v1);
    }

    auto locks = open_lock_directory(options.lock_directory);
    if (auto* reason = std::get_if<std::string>(&locks)) {
        // Another user may have taken the name first (it is predictable, in a world-writable
        // directory): runs are still contained, but a crash would leave them to the next reboot.
        spdlog::warn("stale-run reaping disabled: {}", *reason);
        host->no_lock_ = *reason;
    } else {
        host->lock_directory_ = std::move(std::get<unique_fd>(locks));
        if (options.reap_stale) {
            std::vector<fs::path> bases{base};
            if (pids_base) bases.push_back(*pids_base);
            if (memory_base && memory_base != pids_base) bases.push_back(*memory_base);
            reap_stale_hosts(host->lock_directory_.get(), bases);
        }
    }

    host->name_ = "cordon-" + std::to_string(::getpid()) + "-" + random_suffix();
    // The lock is held before the cgroup exists, and before the lock file has the name reapers
    // look for (it is locked under a hidden name, then renamed), so no reaper ever sees it
    // unowned.
    if (host->lock_directory_) {
        const int locks_fd = host->lock_directory_.get();
        const std::string lock_name = host->name_ + ".lock";
        const std::string pending = "." + lock_name;
        host->lock_.reset(::openat(locks_fd, pending.c_str(),
                                   O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600));
        if (!host->lock_ || ::flock(host->lock_.get(), LOCK_EX | LOCK_NB) != 0 ||
            ::renameat(locks_fd, pending.c_str(), locks_fd, lock_name.c_str()) != 0) {
            const int error = errno;
            host->no_lock_ = failed("cannot lock " + lock_name, error);
            if (host->lock_) ::unlinkat(locks_fd, pending.c_str(), 0);
            host->lock_.reset();
        }
    }
    host->directory_ = base / host->name_;
    if (::mkdir(host->directory_.c_str(), 0755) != 0) {
        const int error = errno;
        std::string reason = failed("cannot create " + host->directory_.string(), error);
        host->directory_.clear();
        return reason;
    }
    std::error_code ec;
    if (!fs::exists(host->directory_ / "cgroup.kill", ec)) {
        return std::string("the kernel has no cgroup.kill (Linux 5.14 or later is needed)");
    }

    // Controllers: in the v2 tree when cordon's parent delegates them, else in v1.
    const std::string available = read_file(host->directory_ / "cgroup.controllers");
    const auto enable = [&](std::string_view controller) {
        return has_word(available, controller) &&
               write_file(host->directory_ / "cgroup.subtree_control",
                          "+" + std::string(controller)) == 0;
    };
    const auto v1_directory = [&](const std::optional<fs::path>& v1_base,
                                  std::string_view controller,
                                  std::string& reason) -> std::optional<fs::path> {
        if (!v1_base) {
            reason = "the " + std::string(controller) +
                     " controller is neither delegated to cordon's cgroup v2 nor mounted as v1";
            return std::nullopt;
        }
        fs::path directory = *v1_base / host->name_;
        if (::mkdir(directory.c_str(), 0755) != 0) {
            const int error = errno;
            reason = failed("cannot create " + directory.string(), error);
            return std::nullopt;
        }
        return directory;
    };
    host->pids_v2_ = enable("pids");
    if (!host->pids_v2_) host->pids_v1_ = v1_directory(pids_base, "pids", host->no_pids_);
    host->memory_v2_ = enable("memory");
    if (!host->memory_v2_) host->memory_v1_ = v1_directory(memory_base, "memory", host->no_memory_);
    return host;
}

cgroup_host::~cgroup_host() {
    bool removed = true;
    for (const auto* directory :
         {&directory_, pids_v1_ ? &*pids_v1_ : nullptr, memory_v1_ ? &*memory_v1_ : nullptr}) {
        if (directory == nullptr || directory->empty()) continue;
        if (::rmdir(directory->c_str()) != 0 && errno != ENOENT) {
            // Left for the next host to reap once this process (and with it the lock) is gone.
            spdlog::debug("cannot remove {}: {}", directory->string(), std::strerror(errno));
            removed = false;
        }
    }
    if (removed && lock_ && lock_directory_) {
        ::unlinkat(lock_directory_.get(), (name_ + ".lock").c_str(), 0);
    }
}

std::variant<std::unique_ptr<cgroup_scope>, std::string> cgroup_host::new_scope(
    const run_limits& limits) {
    if (limits.max_processes && !pids_v2_ && !pids_v1_) {
        return "cannot limit processes: " + no_pids_;
    }
    if (limits.max_memory && !memory_v2_ && !memory_v1_) {
        return "cannot limit memory: " + no_memory_;
    }
    const std::string run = "run-" + std::to_string(counter_.fetch_add(1) + 1);
    scope_paths paths;
    paths.unified = directory_ / run;
    std::vector<fs::path> created;
    std::vector<unique_fd> procs;
    const auto undo = [&created](std::string reason) {
        for (auto it = created.rbegin(); it != created.rend(); ++it)
            ::rmdir(it->c_str());
        return reason;
    };
    const auto join = [&](const fs::path& directory) -> std::optional<std::string> {
        if (std::find(created.begin(), created.end(), directory) != created.end()) return {};
        if (::mkdir(directory.c_str(), 0755) != 0) {
            const int error = errno;
            return failed("cannot create " + directory.string(), error);
        }
        created.push_back(directory);
        unique_fd fd(::open((directory / "cgroup.procs").c_str(), O_WRONLY | O_CLOEXEC));
        if (!fd) {
            const int error = errno;
            return failed("cannot open " + (directory / "cgroup.procs").string(), error);
        }
        procs.push_back(std::move(fd));
        return {};
    };
    const auto set = [](const fs::path& file, std::uint64_t value) -> std::optional<std::string> {
        const int error = write_file(file, std::to_string(value));
        if (error == 0) return {};
        return failed("cannot write " + file.string(), error);
    };
    if (auto error = join(paths.unified)) return undo(*error);
    if (limits.max_processes) {
        paths.pids = pids_v2_ ? paths.unified : *pids_v1_ / run;
        if (auto error = join(*paths.pids)) return undo(*error);
        if (auto error = set(*paths.pids / "pids.max", *limits.max_processes)) return undo(*error);
    }
    if (limits.max_memory) {
        paths.memory = memory_v2_ ? paths.unified : *memory_v1_ / run;
        paths.memory_v1 = !memory_v2_;
        if (auto error = join(*paths.memory)) return undo(*error);
        const fs::path file =
            *paths.memory / (paths.memory_v1 ? "memory.limit_in_bytes" : "memory.max");
        if (auto error = set(file, *limits.max_memory)) return undo(*error);
        // No swap for the run either: a limit the command can page around is no limit. (v1 has
        // memsw only with swap accounting; it must not be below the memory limit, set above.)
        if (paths.memory_v1) {
            std::error_code ec;
            const fs::path memsw = *paths.memory / "memory.memsw.limit_in_bytes";
            if (fs::exists(memsw, ec)) {
                if (auto error = set(memsw, *limits.max_memory)) return undo(*error);
            }
        } else {
            (void)write_file(paths.unified / "memory.swap.max", "0");
        }
    }
    return std::make_unique<cgroup_scope>(shared_from_this(), std::move(paths), std::move(procs));
}

cgroup_scope::cgroup_scope(std::shared_ptr<cgroup_host> host, scope_paths paths,
                           std::vector<unique_fd> procs)
    : host_(std::move(host)), paths_(std::move(paths)), procs_(std::move(procs)) {}

cgroup_scope::~cgroup_scope() {
    if (removed_) return;
    kill_all();
    // The kill is asynchronous; give the kernel a moment to empty the cgroup.
    for (int attempt = 0; attempt < rmdir_attempts && !remove(); ++attempt)
        ::usleep(rmdir_pause_us);
    if (!removed_) spdlog::warn("cgroup {} could not be removed", paths_.unified.string());
}

std::vector<int> cgroup_scope::procs_fds() const {
    std::vector<int> out;
    for (const auto& fd : procs_)
        out.push_back(fd.get());
    return out;
}

void cgroup_scope::signal_all(int signal, pid_t except) const {
    for (const pid_t pid : members(paths_.unified / "cgroup.procs")) {
        if (pid != except) ::kill(pid, signal);
    }
}

void cgroup_scope::kill_all() const {
    kill_members(paths_.unified);
}

bool cgroup_scope::populated() const {
    // A cgroup.events that cannot be read says nothing about the cgroup being empty.
    return keyed_value(paths_.unified / "cgroup.events", "populated").value_or(1) != 0;
}

limit_events cgroup_scope::events() const {
    limit_events out;
    if (paths_.pids)
        out.processes = keyed_value(*paths_.pids / "pids.events", "max").value_or(0) != 0;
    if (paths_.memory) {
        out.memory = keyed_value(*paths_.memory /
                                     (paths_.memory_v1 ? "memory.oom_control" : "memory.events"),
                                 "oom_kill")
                         .value_or(0) != 0;
    }
    return out;
}

bool cgroup_scope::remove() {
    if (removed_) return true;
    if (::rmdir(paths_.unified.c_str()) != 0 && errno != ENOENT) return false;
    // The v1 directories hold the same processes, so they are empty too by now.
    for (const auto* directory :
         {paths_.pids ? &*paths_.pids : nullptr, paths_.memory ? &*paths_.memory : nullptr}) {
        if (directory == nullptr || *directory == paths_.unified) continue;
        if (!remove_directory(*directory)) {
            spdlog::debug("cannot remove {}: {}", directory->string(), std::strerror(errno));
        }
    }
    removed_ = true;
    return true;
}

}  // namespace cordon::runtime
