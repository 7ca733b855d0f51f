// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

// Longer than the ~500 lines a file here stays under: the slot's reservation, the mapping
// namespaces and the tree plan are one decision (who runs, and which trees show it as their
// owner); the child side is identity_child.cpp.
#include "sandbox/identity.hpp"

#include <fcntl.h>
#include <grp.h>
#include <linux/mount.h>
#include <pwd.h>
#include <sched.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <map>
#include <mutex>
#include <utility>

#include "sandbox/landlock_ruleset.hpp"
#include "sandbox/quarantine.hpp"

namespace cordon::sandbox {

namespace {

// Where the slots' lock files live: root's own, in memory, gone at reboot with every holder.
constexpr const char* slots_directory = "/run/cordon-identities";

std::string errno_text(int error) {
    return std::strerror(error);
}

// Writes `text` to /proc/PID/NAME; 0 or an errno.
int write_proc(pid_t pid, const char* name, const std::string& text) {
    const std::string path = "/proc/" + std::to_string(pid) + "/" + name;
    unique_fd fd(::open(path.c_str(), O_WRONLY | O_CLOEXEC));
    if (!fd) return errno;
    if (::write(fd.get(), text.data(), text.size()) != static_cast<ssize_t>(text.size())) {
        return errno != 0 ? errno : EIO;
    }
    return 0;
}

// The holder shares this thread's memory, but under ThreadSanitizer, whose state (the thread's
// own) it would otherwise share while running beside it: there it has a copy, as a fork would.
// It makes raw system calls only, which no sanitizer intercepts.
#if defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define CORDON_IDENTITY_TSAN 1
#endif
#endif
#if defined(__SANITIZE_THREAD__)
#define CORDON_IDENTITY_TSAN 1
#endif
#if defined(CORDON_IDENTITY_TSAN)
constexpr int holder_shares_memory = 0;
#else
constexpr int holder_shares_memory = CLONE_VM;
#endif

// The child that holds a new user namespace (make_mapping): born in it, it waits on the read end
// of `done` for its end-of-file, when the parent has written the maps and opened the namespace.
// It shares the parent's memory and descriptor table (CLONE_FILES: it holds no copy of another
// thread's descriptors, so nothing is left to close), stack aside, and the calling thread's
// thread-local storage while that thread runs on: its one call, a raw read(2) with every signal
// blocked on a descriptor the parent keeps open until it has reaped it, cannot fail, so it writes
// nothing the thread could see, errno included. Child-side code like runtime/spawn_child_linux.cpp.
__attribute__((no_sanitize("address"))) int hold_namespace(void* done_read) {
    char byte = 0;
    ::syscall(SYS_read, *static_cast<const int*>(done_read), &byte, 1UL);  // 0: the end closed
    return 0;
}

// hold_namespace's stack: 64 KiB above a PROT_NONE guard page (an overflow faults instead of
// writing into the parent's memory; the first call through the PLT may resolve it lazily, which
// takes a few KiB), unmapped once the holder is reaped.
class holder_stack {
public:
    holder_stack() {
        void* base = ::mmap(nullptr, guard + size, PROT_READ | PROT_WRITE,
                            MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
        if (base == MAP_FAILED) return;
        if (::mprotect(base, guard, PROT_NONE) != 0) {
            ::munmap(base, guard + size);
            return;
        }
        base_ = base;
    }
    ~holder_stack() {
        if (base_ != nullptr) ::munmap(base_, guard + size);
    }
    holder_stack(const holder_stack&) = delete;
    holder_stack& operator=(const holder_stack&) = delete;
    [[nodiscard]] void* top() const noexcept {
        return base_ == nullptr ? nullptr : static_cast<char*>(base_) + guard + size;
    }

private:
    static constexpr std::size_t guard = 4096;
    static constexpr std::size_t size = 64 * 1024;
    void* base_ = nullptr;
};

// The holder, ended and reaped whatever way make_mapping leaves (an exception included), before
// its stack and the descriptor it waits on go: declared after both.
struct holder_process {
    pid_t pid = -1;
    unique_fd done_write;  // closing it ends the holder
    holder_process() = default;
    holder_process(const holder_process&) = delete;
    holder_process& operator=(const holder_process&) = delete;
    ~holder_process() {
        done_write.reset();
        if (pid <= 0) return;
        int status = 0;
        while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
        }
    }
};

// A user namespace whose one uid mapping is `owner` -> `uid` and one gid mapping `owner_gid` ->
// `gid`: held by a child born in it, that only waits there (a mount's idmapping needs a
// namespace, not a process in it), released once its namespace is open. The child stays root's:
// the run could enter a namespace its own uid owned. The child shares this process's memory
// (clone with CLONE_VM | CLONE_NEWUSER), so it costs no copy of the page tables, which a fork
// of a large agent that embeds cordon would; one per owner and process, cached.
std::variant<unique_fd, std::string> make_mapping(uid_t owner, gid_t owner_gid, uid_t uid,
                                                  gid_t gid) {
    int ends[2];
    if (::pipe2(ends, O_CLOEXEC) != 0) return "cannot make a pipe: " + errno_text(errno);
    const unique_fd done_read(ends[0]);
    int holder_end = done_read.get();
    const holder_stack stack;
    holder_process holder;
    holder.done_write.reset(ends[1]);
    if (stack.top() == nullptr) return "cannot map a stack: " + errno_text(errno);
    // No handler of the parent's runs in the child.
    sigset_t all;
    sigset_t before;
    ::sigfillset(&all);
    ::pthread_sigmask(SIG_SETMASK, &all, &before);
    const pid_t pid =
        ::clone(hold_namespace, stack.top(),
                holder_shares_memory | CLONE_FILES | CLONE_NEWUSER | SIGCHLD, &holder_end);
    const int clone_error = errno;
    ::pthread_sigmask(SIG_SETMASK, &before, nullptr);
    if (pid < 0)
        return "cannot make a user namespace for an idmapped mount: " + errno_text(clone_error);
    holder.pid = pid;
    std::string failure;
    unique_fd theirs;
    if (int error =
            write_proc(pid, "uid_map", std::to_string(owner) + " " + std::to_string(uid) + " 1\n");
        error != 0) {
        failure = "cannot write a uid map: " + errno_text(error);
    } else if (error = write_proc(pid, "setgroups", "deny"); error != 0 && error != ENOENT) {
        failure = "cannot refuse setgroups: " + errno_text(error);
    } else if (error = write_proc(pid, "gid_map",
                                  std::to_string(owner_gid) + " " + std::to_string(gid) + " 1\n");
               error != 0) {
        failure = "cannot write a gid map: " + errno_text(error);
    } else {
        const std::string ns = "/proc/" + std::to_string(pid) + "/ns/user";
        theirs.reset(::open(ns.c_str(), O_RDONLY | O_CLOEXEC));
        if (!theirs) failure = "cannot open an idmapping's namespace: " + errno_text(errno);
    }
    if (!failure.empty()) return failure;
    return theirs;
}

struct mapping_cache {
    std::mutex mutex;
    std::map<std::pair<std::pair<uid_t, gid_t>, std::pair<uid_t, gid_t>>,
             std::shared_ptr<const unique_fd>>
        made;
    // Per filesystem: whether it takes an idmapping (nullopt: it does).
    std::map<dev_t, std::optional<std::string>> support;
};

mapping_cache& mappings() {
    static mapping_cache cache;
    return cache;
}

// Whether the tree open as `fd` can be idmapped with `mapping`: tried on a detached copy, which
// goes when its fd closes. `refusal`: nullopt, or why not; `settled`: the filesystem's own answer
// (a shortage of descriptors or memory is not, and is asked again).
struct idmap_answer {
    std::optional<std::string> refusal;
    bool settled = true;
};
idmap_answer try_idmap(int fd, int mapping) {
    unique_fd tree(static_cast<int>(
        ::syscall(SYS_open_tree, fd, "", AT_EMPTY_PATH | OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC)));
    if (!tree) return {"cannot copy the mount: " + errno_text(errno), false};
    mount_attr attributes{};
    attributes.attr_set = MOUNT_ATTR_IDMAP;
    attributes.userns_fd = static_cast<decltype(attributes.userns_fd)>(mapping);
    if (::syscall(SYS_mount_setattr, tree.get(), "", AT_EMPTY_PATH, &attributes,
                  sizeof attributes) != 0) {
        const int error = errno;
        if (error == EINVAL || error == ENOSYS || error == EOPNOTSUPP) {
            return {"its filesystem cannot be idmapped (" + errno_text(error) + ")", true};
        }
        return {"cannot idmap it: " + errno_text(error), false};
    }
    return {};
}

std::string parent_of(const std::string& path) {
    const auto slash = path.rfind('/');
    return slash == 0 || slash == std::string::npos ? "/" : path.substr(0, slash);
}

// Whether `owner` is a member of `group`: cordon's own groups for cordon's uid, the account's
// for another; an owner without an account has none to ask, and its tree's group is taken as its.
bool owner_has_group(uid_t owner, gid_t group) {
    if (owner == ::geteuid()) {
        if (group == ::getegid()) return true;
        const int count = ::getgroups(0, nullptr);
        std::vector<gid_t> groups(static_cast<std::size_t>(count > 0 ? count : 0));
        const int got = count > 0 ? ::getgroups(count, groups.data()) : 0;
        return std::find(groups.begin(), groups.begin() + std::max(got, 0), group) !=
               groups.begin() + std::max(got, 0);
    }
    passwd entry{};
    passwd* found = nullptr;
    std::vector<char> buffer(16384);
    if (::getpwuid_r(owner, &entry, buffer.data(), buffer.size(), &found) != 0 || found == nullptr)
        return true;
    if (entry.pw_gid == group) return true;
    int count = 64;
    std::vector<gid_t> groups(static_cast<std::size_t>(count));
    if (::getgrouplist(entry.pw_name, entry.pw_gid, groups.data(), &count) < 0 && count > 64) {
        groups.resize(static_cast<std::size_t>(count));
        if (::getgrouplist(entry.pw_name, entry.pw_gid, groups.data(), &count) < 0) return false;
    }
    groups.resize(static_cast<std::size_t>(std::max(count, 0)));
    return std::find(groups.begin(), groups.end(), group) != groups.end();
}

// The group a tree's files show as the run's: the tree's own when its owner is a member (the
// run then has what the owner has), else the owner's primary group (a team directory of root's
// whose group root is not in gives the run none of that team's files).
gid_t group_of(uid_t owner, gid_t group) {
    if (owner_has_group(owner, group)) return group;
    if (owner == ::geteuid()) return ::getegid();
    passwd entry{};
    passwd* found = nullptr;
    std::vector<char> buffer(16384);
    if (::getpwuid_r(owner, &entry, buffer.data(), buffer.size(), &found) == 0 && found != nullptr)
        return entry.pw_gid;
    return group;
}

struct wanted_tree {
    std::string path;
    struct stat st;
    bool read_only;
};

// Whether the run's id may search the directory `path` (`st`): as its owner where a mapped tree
// holding it shows its owner as the run's, else as anyone.
template <typename Tree, typename Owner>
bool searchable(const std::string& path, const struct stat& st, const std::vector<Tree>& trees,
                Owner owner_of) {
    const bool own = std::any_of(trees.begin(), trees.end(), [&](const Tree& tree) {
        return owner_of(tree) == st.st_uid &&
               (path == tree.path || path.starts_with(tree.path + "/"));
    });
    return (st.st_mode & (own ? S_IXUSR : S_IXOTH)) != 0;
}

bool reachable_through(const std::string& path, const struct stat& st,
                       const std::vector<wanted_tree>& trees) {
    return searchable(path, st, trees, [](const wanted_tree& tree) { return tree.st.st_uid; });
}

}  // namespace

std::variant<run_identity, std::string> reserve_identity(const identity_range& range) {
    static std::mutex mutex;
    static std::optional<std::pair<std::uint32_t, std::uint32_t>> reserved_for;
    static std::variant<run_identity, std::string> answer = std::string();
    static unique_fd held;
    std::lock_guard lock(mutex);
    if (range.count == 0) return std::string("no range of ids is configured");
    if (range.first < lowest_identity ||
        std::uint64_t{range.first} + range.count > (std::uint64_t{1} << 31)) {
        return "the range of ids " + identity_range_text(range) + " reaches below " +
               std::to_string(lowest_identity) + " or past 2^31";
    }
    if (reserved_for && *reserved_for == std::pair{range.first, range.count}) return answer;
    if (reserved_for) held.reset();  // another range: this process's slot goes back
    reserved_for = std::pair{range.first, range.count};
    if (::mkdir(slots_directory, 0700) != 0 && errno != EEXIST) {
        answer = std::string("cannot make ") + slots_directory + ": " + errno_text(errno);
        return answer;
    }
    unique_fd directory(::open(slots_directory, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    struct stat st {};
    if (!directory || ::fstat(directory.get(), &st) != 0) {
        answer = std::string("cannot open ") + slots_directory + ": " + errno_text(errno);
        return answer;
    }
    if (st.st_uid != ::geteuid() || (st.st_mode & 0022) != 0) {
        answer = std::string(slots_directory) + " is not this user's own";
        return answer;
    }
    // The first free slot: the files stay as many as cordons ever ran at once.
    for (std::uint32_t i = 0; i < range.count && i < 4096; ++i) {
        const std::uint32_t uid = range.first + i;
        const std::string name = std::to_string(uid);
        unique_fd slot(::openat(directory.get(), name.c_str(),
                                O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK, 0600));
        if (!slot) continue;
        if (::flock(slot.get(), LOCK_EX | LOCK_NB) != 0) continue;
        held = std::move(slot);
        answer = run_identity{uid, uid, true, {}};
        return answer;
    }
    answer = "no id of the range " + identity_range_text(range) + " is free (" +
             std::to_string(std::min<std::uint32_t>(range.count, 4096)) + " tried)";
    return answer;
}

std::variant<std::pair<std::string, std::string>, std::string> account_files(
    const run_identity& who, const std::string& home) {
    static std::mutex mutex;
    static std::map<std::uint32_t, std::pair<std::string, std::string>> made;
    std::lock_guard lock(mutex);
    if (auto found = made.find(who.uid); found != made.end()) return found->second;
    const auto read_all = [](const char* path) -> std::optional<std::string> {
        auto text = read_regular_file(AT_FDCWD, path, 16 * 1024 * 1024);
        if (text && !text->empty() && text->back() != '\n') *text += '\n';
        return text;
    };
    const std::string id = std::to_string(who.uid);
    const std::string gid = std::to_string(who.gid);
    const auto passwd = read_all("/etc/passwd");
    const auto group = read_all("/etc/group");
    if (!passwd || !group) return std::string("cannot read /etc/passwd and /etc/group");
    const std::string shell = ::access("/bin/sh", X_OK) == 0 ? "/bin/sh" : "/bin/false";
    const std::string files[2][2] = {
        {"passwd-" + id, *passwd + "cordon-run:x:" + id + ":" + gid +
                             ":a command confined by cordon:" + (home.empty() ? "/" : home) + ":" +
                             shell + "\n"},
        {"group-" + id, *group + "cordon-run:x:" + gid + ":\n"}};
    std::pair<std::string, std::string> paths;
    for (int i = 0; i < 2; ++i) {
        const std::string path = std::string(slots_directory) + "/" + files[i][0];
        const std::string partial = path + ".partial";
        unique_fd out(
            ::open(partial.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0644));
        if (!out) return "cannot write " + partial + ": " + errno_text(errno);
        const std::string& text = files[i][1];
        if (::fchmod(out.get(), 0644) != 0 ||
            ::write(out.get(), text.data(), text.size()) != static_cast<ssize_t>(text.size()) ||
            ::rename(partial.c_str(), path.c_str()) != 0) {
            return "cannot write " + path + ": " + errno_text(errno);
        }
        (i == 0 ? paths.first : paths.second) = path;
    }
    made.emplace(who.uid, paths);
    return paths;
}

run_identity preview_identity(const identity_range& range, const std::string& workspace) {
    run_identity own{::geteuid(), ::getegid(), false, {}};
    if (own.uid != 0) return own;
    auto reserved = reserve_identity(range);
    if (auto* why = std::get_if<std::string>(&reserved)) {
        own.reason = "the command runs as root: " + *why;
        return own;
    }
    auto trees = plan_idmapped_trees(std::get<run_identity>(reserved), {workspace}, {});
    if (auto* why = std::get_if<std::string>(&trees)) {
        own.reason = "the command runs as root: " + *why;
        return own;
    }
    return std::get<run_identity>(reserved);
}

bool reachable_by_run(const std::vector<idmapped_tree>& trees, const std::string& path) {
    for (std::string up = path; !up.empty() && up != "/"; up = parent_of(up)) {
        struct stat st {};
        if (::stat(up.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) continue;
        const auto holding = [&](const idmapped_tree& tree) {
            return up == tree.path || up.starts_with(tree.path + "/");
        };
        // A directory a writable tree shows as the run's own is the run's to open whatever its
        // mode now (it may chmod it): never a wall.
        const bool opens_it = std::any_of(trees.begin(), trees.end(), [&](const auto& tree) {
            return !tree.read_only && tree.owner == st.st_uid && holding(tree);
        });
        if (opens_it) continue;
        // The kernel's order: the owner's bits, else the group's (a tree shows its group as the
        // run's), else everyone's; an access ACL may grant more than the bits say, and is taken
        // to let the run in.
        const bool own = std::any_of(trees.begin(), trees.end(), [&](const auto& tree) {
            return tree.owner == st.st_uid && holding(tree);
        });
        const bool grouped = !own && std::any_of(trees.begin(), trees.end(), [&](const auto& tree) {
            return tree.group == st.st_gid && holding(tree);
        });
        if (::getxattr(up.c_str(), "system.posix_acl_access", nullptr, 0) > 0) continue;
        const mode_t search = own ? S_IXUSR : grouped ? S_IXGRP : S_IXOTH;
        if ((st.st_mode & search) == 0) return false;
    }
    return true;
}

std::variant<std::vector<idmapped_tree>, std::string> plan_idmapped_trees(
    const run_identity& who, const std::vector<std::string>& writable,
    const std::vector<std::string>& readable) {
    // Never the root: a mount over it is not what the process's root (the mount beneath) shows,
    // and a process whose root is covered may not make a user namespace.
    const auto usable = [](const std::string& path) {
        return !path.empty() && path.front() == '/' && path != "/";
    };
    std::vector<wanted_tree> wanted;
    const auto add = [&](const std::string& path, bool read_only) {
        struct stat st {};
        if (!usable(path) || ::stat(path.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) return;
        // A sticky directory anyone may write is everyone's: the run makes its own files there.
        if (!read_only && (st.st_mode & S_ISVTX) != 0 && (st.st_mode & S_IWOTH) != 0) return;
        for (wanted_tree& tree : wanted) {
            if (tree.path != path) continue;
            tree.read_only = tree.read_only && read_only;
            return;
        }
        wanted.push_back({path, st, read_only});
    };
    for (const std::string& path : writable)
        add(path, false);
    for (const std::string& path : readable)
        add(path, true);

    // Each tree must be reachable by the run's id. A directory on the way that others may not
    // enter, and that no mapped tree shows as the run's own, is mapped read-only when it is
    // cordon's own (the run then reads in it what cordon's uid read before it had an id of its
    // own, never more); anyone else's is never mapped, which would hand over all it holds: the run
    // keeps cordon's uid, as before.
    // A directory inside a writable tree is the run's own to open or close (it may chmod it):
    // what it closes there it shuts itself out of, and it decides nothing here (else a run could
    // close one to have the next run fall back to cordon's uid).
    const auto inside_writable = [&wanted](const std::string& path) {
        return std::any_of(wanted.begin(), wanted.end(), [&path](const wanted_tree& tree) {
            return !tree.read_only && path.starts_with(tree.path + "/");
        });
    };
    for (std::size_t i = 0; i < wanted.size(); ++i) {
        const std::string path = wanted[i].path;
        for (std::string up = parent_of(path); usable(up); up = parent_of(up)) {
            struct stat above {};
            if (::stat(up.c_str(), &above) != 0 || !S_ISDIR(above.st_mode)) continue;
            if (inside_writable(up) || reachable_through(up, above, wanted)) continue;
            if (above.st_uid != ::geteuid()) {
                return up + " is closed to others on the way to " + path + " and is not " +
                       "cordon's own";
            }
            add(up, true);
        }
    }
    // Parents first: a tree attached later goes over the one that holds it.
    std::stable_sort(wanted.begin(), wanted.end(), [](const wanted_tree& a, const wanted_tree& b) {
        return std::count(a.path.begin(), a.path.end(), '/') <
               std::count(b.path.begin(), b.path.end(), '/');
    });

    std::vector<idmapped_tree> out;
    mapping_cache& cache = mappings();
    std::lock_guard lock(cache.mutex);
    for (const wanted_tree& tree : wanted) {
        unique_fd fd(landlock::open_no_symlinks(tree.path.c_str(), O_DIRECTORY));
        struct stat st {};
        if (!fd || ::fstat(fd.get(), &st) != 0) {
            return "cannot open " + tree.path + " to map it: " + errno_text(errno);
        }
        const gid_t group = group_of(st.st_uid, st.st_gid);
        const auto key = std::pair{std::pair{st.st_uid, group}, std::pair{who.uid, who.gid}};
        auto& mapping = cache.made[key];
        if (!mapping) {
            auto made = make_mapping(st.st_uid, group, who.uid, who.gid);
            if (auto* why = std::get_if<std::string>(&made)) return *why;
            mapping = std::make_shared<const unique_fd>(std::move(std::get<unique_fd>(made)));
        }
        auto known = cache.support.find(st.st_dev);
        if (known == cache.support.end()) {
            const idmap_answer answer = try_idmap(fd.get(), mapping->get());
            // Only the filesystem's own answer is kept; a passing shortage is asked again.
            if (!answer.settled) return tree.path + ": " + *answer.refusal;
            known = cache.support.emplace(st.st_dev, answer.refusal).first;
        }
        if (known->second) return tree.path + ": " + *known->second;
        out.push_back(
            {tree.path, st.st_dev, st.st_ino, st.st_uid, group, mapping, -1, tree.read_only});
    }
    return out;
}

}  // namespace cordon::sandbox
