// Run containment with cgroup v2: every run gets its own cgroup, the child joins it before exec,
// and `cgroup.kill` (Linux 5.14) ends every process in it at once. Membership is inherited and
// cannot be left without write access to another cgroup, so processes that call setsid() or
// double-fork are still found; this is how cordon ends whole trees under the Landlock launcher
// and danger-full-access, where no pid namespace exists. (Under bwrap the pid namespace does the
// same and the cgroup is a second net.)
//
// It needs a writable cgroup v2 hierarchy at the process's own cgroup (root, or a delegated
// subtree such as a systemd user service). Without one, cgroup_host::create() returns nullptr and
// the executor falls back to signalling the process group alone; `cordon probe` reports which.
#pragma once

#include <sys/types.h>

#include <atomic>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>

#include "runtime/unique_fd.hpp"

namespace cordon::runtime {

class cgroup_scope;

class cgroup_host : public std::enable_shared_from_this<cgroup_host> {
public:
    // Finds the cgroup v2 mount and this process's cgroup, and creates a private parent
    // `cordon-<pid>-<random>` under it. nullptr (with a debug log) when any step is impossible.
    [[nodiscard]] static std::shared_ptr<cgroup_host> create();
    ~cgroup_host();
    cgroup_host(const cgroup_host&) = delete;
    cgroup_host& operator=(const cgroup_host&) = delete;

    // A fresh leaf cgroup for one run, or nullptr.
    [[nodiscard]] std::unique_ptr<cgroup_scope> new_scope();

    [[nodiscard]] const std::filesystem::path& directory() const noexcept { return directory_; }

    // Why create() returned nullptr on this host, for diagnostics ("" when it did not).
    [[nodiscard]] static std::string unavailable_reason();

private:
    cgroup_host(std::filesystem::path directory, unique_fd lock, std::filesystem::path lock_path)
        : directory_(std::move(directory)), lock_(std::move(lock)), lock_path_(std::move(lock_path)) {}
    std::filesystem::path directory_;
    unique_fd lock_;  // flock(LOCK_EX) held for the host's lifetime: proof that it is alive
    std::filesystem::path lock_path_;
    std::atomic<unsigned long> counter_{0};
};

class cgroup_scope {
public:
    cgroup_scope(std::shared_ptr<cgroup_host> host, std::filesystem::path directory,
                 unique_fd procs);
    ~cgroup_scope();  // kills what is left and removes the directory
    cgroup_scope(const cgroup_scope&) = delete;
    cgroup_scope& operator=(const cgroup_scope&) = delete;

    // The open cgroup.procs the child writes its pid to before exec.
    [[nodiscard]] int procs_fd() const noexcept { return procs_.get(); }

    // Sends `signal` to every member (a snapshot: used for the polite SIGTERM phase).
    void signal_all(int signal) const;
    // SIGKILLs every member through cgroup.kill, or member by member on older kernels.
    void kill_all() const;
    // True while any process is in the cgroup.
    [[nodiscard]] bool populated() const;
    // rmdir; succeeds only once the cgroup is empty.
    bool remove();

private:
    std::shared_ptr<cgroup_host> host_;
    std::filesystem::path directory_;
    unique_fd procs_;
    bool removed_ = false;
};

}  // namespace cordon::runtime
