// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

// Longer than the ~500 lines a file here stays under: the process's host and a run's scope share
// the hierarchies' paths and the v1/v2 differences; what is read and written in cgroupfs is
// cgroup_files.cpp's, the reaping of dead hosts cgroup_reaper.cpp's.
#include "runtime/cgroup.hpp"

#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <sys/eventfd.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstdlib>
#include <cstring>
#include <new>
#include <system_error>
#include <utility>

#include "base/log.hpp"
#include "base/mountinfo.hpp"
#include "base/number.hpp"
#include "base/random_name.hpp"
#include "base/small_file.hpp"
#include "runtime/cgroup_files.hpp"
#include "runtime/cgroup_reaper.hpp"
#include "runtime/cgroup_watchdog.hpp"

namespace cordon::runtime {

namespace fs = std::filesystem;

namespace {

using cgroup_files::cgroup_view;
using cgroup_files::failed;
using cgroup_files::has_word;
using cgroup_files::keyed_value;
using cgroup_files::kill_members;
using cgroup_files::members;
using cgroup_files::own_directory;
using cgroup_files::read_file;
using cgroup_files::write_file;
using cgroup_reaper::open_lock_directory;
using cgroup_reaper::reap_stale_hosts;

// v1 has no memory.oom.group: an eventfd the kernel signals when the OOM killer acts in
// `memory` (memory.oom_control through cgroup.event_control, also signalled when the cgroup is
// removed), for the run's loop to end the rest. Empty when the kernel refuses: the limit still
// holds, and the OOM killer still chooses inside the run, one process at a time.
unique_fd watch_v1_oom(const fs::path& memory) {
    unique_fd event(::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK));
    unique_fd control(::open((memory / "memory.oom_control").c_str(), O_RDONLY | O_CLOEXEC));
    if (!event || !control) return {};
    const std::string registration =
        std::to_string(event.get()) + " " + std::to_string(control.get());
    if (const int error = write_file(memory / "cgroup.event_control", registration); error != 0) {
        log::debug("cannot watch {} for OOM: {}", memory.string(), std::strerror(error));
        return {};
    }
    return event;
}

// Where the process's host is kept (cgroup_host::for_this_process). Made once and never
// destroyed, since threads may still call it as the process exits; an atexit handler ends the
// host instead, and a pthread_atfork handler hands a forked child's copy back to its parent.
class process_host {
public:
    static process_host& instance();

    std::variant<std::shared_ptr<cgroup_host>, std::string> get() {
        const std::lock_guard lock(mutex_);
        if (inherited_) {
            // Kept and never released here: its end would remove the parent's cgroup and lock.
            static auto* const parents = new std::vector<std::shared_ptr<cgroup_host>>();
            parents->push_back(std::move(host_));
            host_.reset();
            inherited_ = false;
        }
        if (ended_) {
            auto own = cgroup_host::create();
            if (auto* host = std::get_if<std::shared_ptr<cgroup_host>>(&own)) (*host)->silence();
            return own;
        }
        if (!host_) {
            auto made = cgroup_host::create();
            if (auto* reason = std::get_if<std::string>(&made)) return *reason;
            host_ = std::get<std::shared_ptr<cgroup_host>>(std::move(made));
        }
        return host_;
    }

private:
    process_host() = default;

    // pthread_atfork's child handler: async-signal-safe, no lock taken, nothing allocated.
    void forked() noexcept {
        // A thread of the parent may have held the mutex at the fork: none of them is here.
        new (&mutex_) std::mutex();
        if (host_) {
            host_->forget_after_fork();
            inherited_ = true;
        }
    }

    // At exit: the host ends once the last run holding it has (at once, as a rule), silently.
    void end() noexcept {
        std::shared_ptr<cgroup_host> ending;
        {
            const std::lock_guard lock(mutex_);
            ended_ = true;
            if (inherited_) return;
            ending = std::move(host_);
            host_.reset();
        }
        if (ending) ending->silence();
    }

    std::mutex mutex_;
    std::shared_ptr<cgroup_host> host_;
    bool inherited_ = false;  // host_ is a forked parent's
    bool ended_ = false;      // the process is exiting
};

// The handlers find the host through this, never through instance(): a fork that happens while
// instance() makes it must not wait on its initialisation.
std::atomic<process_host*> the_process_host{nullptr};

process_host& process_host::instance() {
    static process_host* const made = [] {
        auto* kept = new process_host();
        the_process_host.store(kept);
        ::pthread_atfork(nullptr, nullptr, [] {
            if (process_host* host = the_process_host.load()) host->forked();
        });
        std::atexit([] {
            if (process_host* host = the_process_host.load()) host->end();
        });
        return kept;
    }();
    return *made;
}

}  // namespace

std::uint64_t socket_memory_limit(std::uint64_t max_memory) {
    // net.ipv4.tcp_mem: three page counts; below the first, TCP is "not bothered about its memory
    // appetite" (tcp(7)). A run gets a quarter of it, so that a few runs at their bound together
    // stay below where the host's sockets start to be squeezed.
    static const std::optional<std::uint64_t> share = []() -> std::optional<std::uint64_t> {
        const base::read_result read = base::read_small_file("/proc/sys/net/ipv4/tcp_mem");
        const std::string* text = std::get_if<std::string>(&read);
        if (text == nullptr) return std::nullopt;
        const std::string_view first =
            std::string_view(*text).substr(0, text->find_first_of(" \t\n"));
        const auto pages = base::parse_number<std::uint64_t>(first);
        const long page = ::sysconf(_SC_PAGESIZE);
        if (!pages || page <= 0 || *pages > UINT64_MAX / static_cast<std::uint64_t>(page)) {
            return std::nullopt;
        }
        return *pages * static_cast<std::uint64_t>(page) / 4;
    }();
    return share ? std::min(max_memory, *share) : max_memory;
}

std::variant<std::shared_ptr<cgroup_host>, std::string> cgroup_host::for_this_process() {
    return process_host::instance().get();
}

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
        log::warn("stale-run reaping disabled: {}", *reason);
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

    // The random part: unique among the hosts of this pid (a host left by an earlier process with
    // the same pid may still exist).
    host->name_ = "cordon-" + std::to_string(::getpid()) + "-" + base::random_hex64();
    // The lock is held before the cgroup exists, and before the lock file has the name reapers
    // look for (it is locked under a hidden name, then renamed), so no reaper ever sees it
    // unowned.
    if (host->lock_directory_) {
        const int locks_fd = host->lock_directory_.get();
        const std::string lock_name = host->name_ + ".lock";
        const std::string pending = "." + lock_name;
        // Every directory this host may make, in every hierarchy, is in the lock file before it
        // is made: a reaper in another cgroup scope finds them all there (cgroup_reaper.hpp).
        std::vector<fs::path> directories{base / host->name_};
        for (const auto& v1_base : {pids_base, memory_base}) {
            if (v1_base && std::find(directories.begin(), directories.end(),
                                     *v1_base / host->name_) == directories.end()) {
                directories.push_back(*v1_base / host->name_);
            }
        }
        const std::string record = cgroup_reaper::lock_record(directories);
        host->lock_.reset(::openat(locks_fd, pending.c_str(),
                                   O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600));
        if (!host->lock_ || ::flock(host->lock_.get(), LOCK_EX | LOCK_NB) != 0 ||
            ::write(host->lock_.get(), record.data(), record.size()) !=
                static_cast<ssize_t>(record.size()) ||
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
    // The runs end with this process, however it ends (cgroup_watchdog.hpp).
    if (auto watchdog = cgroup_watchdog::start(host->directory_);
        auto* reason = std::get_if<std::string>(&watchdog)) {
        log::warn("runs would outlive a killed cordon until the next one starts: {}", *reason);
        host->no_watchdog_ = true;
    } else {
        host->watchdog_ = std::move(std::get<cgroup_watchdog>(watchdog));
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

void cgroup_host::leave(std::vector<fs::path> directories) {
    std::lock_guard lock(leftovers_mutex_);
    for (fs::path& directory : directories)
        leftovers_.push_back(std::move(directory));
}

void cgroup_host::remove_leftovers() {
    std::lock_guard lock(leftovers_mutex_);
    std::erase_if(leftovers_, [this](const fs::path& directory) {
        if (::rmdir(directory.c_str()) == 0 || errno == ENOENT) return true;
        if (errno == EBUSY) return false;  // its processes are still being freed
        if (!quiet_) log::debug("cannot remove {}: {}", directory.string(), std::strerror(errno));
        return true;  // never will be: left to the next host's reaper
    });
}

std::size_t cgroup_host::leftovers() {
    remove_leftovers();
    std::lock_guard lock(leftovers_mutex_);
    return leftovers_.size();
}

cgroup_host::~cgroup_host() {
    remove_leftovers();
    bool removed = true;
    for (const auto* directory :
         {&directory_, pids_v1_ ? &*pids_v1_ : nullptr, memory_v1_ ? &*memory_v1_ : nullptr}) {
        if (directory == nullptr || directory->empty()) continue;
        if (::rmdir(directory->c_str()) != 0 && errno != ENOENT) {
            // Left for the next host to reap once this process (and with it the lock) is gone.
            if (!quiet_) {
                log::debug("cannot remove {}: {}", directory->string(), std::strerror(errno));
            }
            removed = false;
        }
    }
    if (removed && lock_ && lock_directory_) {
        ::unlinkat(lock_directory_.get(), (name_ + ".lock").c_str(), 0);
    }
}

void cgroup_host::forget_after_fork() noexcept {
    inherited_ = true;
    if (lock_) ::close(lock_.release());
    if (lock_directory_) ::close(lock_directory_.release());
    watchdog_.forget();
}

void cgroup_host::keep_watchdog() {
    // One that could not start with the host (no launcher) is not looked for again at every run.
    if (inherited_ || no_watchdog_) return;
    const std::lock_guard lock(watchdog_mutex_);
    if (watchdog_.running()) return;
    // Without a reader the pipe tells nobody anything: replacing it kills no run.
    auto restarted = cgroup_watchdog::start(directory_);
    if (auto* reason = std::get_if<std::string>(&restarted)) {
        if (!quiet_) log::debug("the watchdog of {} is gone: {}", name_, *reason);
        return;
    }
    if (!quiet_) log::debug("the watchdog of {} was gone: another one started", name_);
    // The new pipe in place before the old one is closed: a fork in between closes the child's
    // copy of the new one (forget_after_fork), never a number the old one left free.
    const cgroup_watchdog gone =
        std::exchange(watchdog_, std::move(std::get<cgroup_watchdog>(restarted)));
}

std::variant<std::unique_ptr<cgroup_scope>, std::string> cgroup_host::new_scope(
    const run_limits& limits) {
    keep_watchdog();
    remove_leftovers();
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
    std::vector<unique_fd> joins;
    unique_fd birth;
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
        // The v2 cgroup is joined as a process; a v1 hierarchy's as the child's one thread.
        const bool unified = directory == paths.unified;
        const fs::path file = directory / (unified ? "cgroup.procs" : "tasks");
        unique_fd fd(::open(file.c_str(), O_WRONLY | O_CLOEXEC));
        if (!fd) {
            const int error = errno;
            return failed("cannot open " + file.string(), error);
        }
        joins.push_back(std::move(fd));
        if (unified) birth.reset(::open(directory.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
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
            // Socket buffers: v1 charges them to the run only once this limit is set (v2
            // charges them to memory.max). Without it a command's unread loopback connections
            // hold memory no limit of the run sees, up to net.ipv4.tcp_mem, whose pressure then
            // falls on every TCP socket of the host (docs/sandbox.md, "Host-wide kernel
            // resources"). Absent without kernel memory accounting, as memsw is without swap's.
            const fs::path sockets = *paths.memory / "memory.kmem.tcp.limit_in_bytes";
            if (fs::exists(sockets, ec)) {
                const std::uint64_t bound = socket_memory_limit(*limits.max_memory);
                if (auto error = set(sockets, bound)) return undo(*error);
                paths.socket_bound = bound;
            }
        } else {
            // v2 charges socket buffers to memory.max, which by default is far above the host's
            // tcp_mem: the run is watched against the same share (socket_bytes()).
            paths.socket_bound = socket_memory_limit(*limits.max_memory);
            (void)write_file(paths.unified / "memory.swap.max", "0");
            // An OOM kills every process of the run at once, not the one the kernel picked.
            if (auto error = set(paths.unified / "memory.oom.group", 1)) return undo(*error);
        }
    }
    unique_fd oom_notice;
    if (paths.memory && paths.memory_v1) oom_notice = watch_v1_oom(*paths.memory);
    return std::make_unique<cgroup_scope>(shared_from_this(), std::move(paths), std::move(joins),
                                          std::move(birth), std::move(oom_notice));
}

cgroup_scope::cgroup_scope(std::shared_ptr<cgroup_host> host, scope_paths paths,
                           std::vector<unique_fd> joins, unique_fd birth, unique_fd oom_notice)
    : host_(std::move(host)),
      paths_(std::move(paths)),
      joins_(std::move(joins)),
      birth_(std::move(birth)),
      oom_notice_(std::move(oom_notice)) {
    // The v2 directory first: it is the one that holds every process of the run.
    pending_.push_back(paths_.unified);
    for (const auto* directory :
         {paths_.pids ? &*paths_.pids : nullptr, paths_.memory ? &*paths_.memory : nullptr}) {
        if (directory != nullptr && *directory != paths_.unified &&
            std::find(pending_.begin(), pending_.end(), *directory) == pending_.end()) {
            pending_.push_back(*directory);
        }
    }
}

cgroup_scope::~cgroup_scope() {
    if (pending_.empty()) return;
    kill_all();
    if (remove()) return;
    // The kill is asynchronous: the kernel frees the processes a little later, and only then can
    // the directories go. That is not waited for here (this runs on a run's event loop): the
    // host removes them at its next scope or at its end.
    host_->leave(std::move(pending_));
}

std::vector<int> cgroup_scope::join_fds() const {
    std::vector<int> out;
    for (const auto& fd : joins_)
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
        // v2 counts the processes of a group kill apart (oom_group_kill, Linux 5.19).
        const fs::path file =
            *paths_.memory / (paths_.memory_v1 ? "memory.oom_control" : "memory.events");
        out.memory = keyed_value(file, "oom_kill").value_or(0) != 0 ||
                     keyed_value(file, "oom_group_kill").value_or(0) != 0;
    }
    return out;
}

std::optional<std::uint64_t> cgroup_scope::socket_bytes() const {
    if (!paths_.memory || paths_.socket_bound == 0) return std::nullopt;
    if (!paths_.memory_v1) return keyed_value(*paths_.memory / "memory.stat", "sock");
    const std::string text = read_file(*paths_.memory / "memory.kmem.tcp.usage_in_bytes");
    std::uint64_t value = 0;
    const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (error != std::errc() || end == text.data()) return std::nullopt;
    return value;
}

bool cgroup_scope::memory_v1_limit_met() const {
    if (!paths_.memory || !paths_.memory_v1) return false;
    const auto number = [this](const std::string& file) -> std::optional<std::uint64_t> {
        const std::string text = read_file(*paths_.memory / file);
        std::uint64_t value = 0;
        const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
        if (error != std::errc() || end == text.data()) return std::nullopt;
        return value;
    };
    // A charge that fails at the limit may leave the usage short of it by what it asked for: a
    // batch of pages, or a huge page.
    constexpr std::uint64_t charge_slack = 4 << 20;
    for (const std::string counter : {"memory.", "memory.memsw."}) {
        if (number(counter + "failcnt").value_or(0) != 0) return true;
        const auto limit = number(counter + "limit_in_bytes");
        const auto peak = number(counter + "max_usage_in_bytes");
        if (limit && peak && *peak + std::min(charge_slack, *limit / 4) >= *limit) return true;
    }
    return false;
}

bool cgroup_scope::remove() {
    // One rmdir each, never a wait. A directory whose rmdir fails otherwise than with EBUSY stays
    // pending too: the caller's retries end, and the host or the next reaper has the last word.
    std::erase_if(pending_, [](const fs::path& directory) {
        return ::rmdir(directory.c_str()) == 0 || errno == ENOENT;
    });
    return pending_.empty();
}

}  // namespace cordon::runtime
