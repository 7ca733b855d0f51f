// Helpers shared by the suites that run real processes through cordon_runtime (runtime, cli, and
// the real-runner tests in tests/sandbox): a cgroup host, a provider restricted to one backend,
// the default child environment, and /proc-based checks that a process is gone, that no zombie
// was left and that no fd leaked. Everything here reads the kernel's view of the system rather
// than trusting what the code under test says about itself. Helpers that need no cordon_runtime
// (scratch directories, reading a file, the test child) are in tests/support.hpp.
#pragma once

#include <dirent.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>
#include <system_error>
#include <thread>
#include <vector>

#include "runtime/cgroup.hpp"
#include "runtime/environment.hpp"
#include "runtime/local_provider_factory.hpp"
#include "runtime/process.hpp"
#include "runtime/spawn.hpp"
#include "sandbox/local_provider.hpp"
#include "support.hpp"

extern char** environ;

namespace cordon::test {

// A cgroup host, or nullptr with the reason in `why`.
inline std::shared_ptr<runtime::cgroup_host> cgroup_host_or(
    std::string& why, runtime::cgroup_host_options options = {}) {
    auto host = runtime::cgroup_host::create(options);
    if (auto* reason = std::get_if<std::string>(&host)) {
        why = "cgroup containment unavailable: " + *reason;
        return nullptr;
    }
    return std::get<std::shared_ptr<runtime::cgroup_host>>(std::move(host));
}

// The environment the executor would give a child: the test's own, scrubbed, plus the defaults.
inline std::vector<std::string> child_env() {
    return runtime::build_environment(environ, {});
}

// A spec for `argv` run from "/" with the test environment, a timeout that fails a hung test
// instead of hanging it, and the standard kill plan.
inline runtime::process_spec child_spec(
    std::vector<std::string> argv, std::chrono::milliseconds timeout = std::chrono::seconds(30),
    std::chrono::milliseconds grace = std::chrono::seconds(3)) {
    runtime::process_spec spec;
    spec.argv = std::move(argv);
    spec.env = child_env();
    spec.cwd = "/";
    spec.timeout = timeout;
    spec.plan = runtime::kill_plan::standard(grace);
    return spec;
}

// A provider that may use only `choice`, or nullptr with why that choice is unusable on this host
// in `why` (for CORDON_SKIP_OR_FAIL). The launcher is the one built beside the tests, and the
// probe timeout is generous: a loaded CI machine must not turn a slow probe into a skip.
inline std::shared_ptr<sandbox::local_provider> provider_for(sandbox::backend_choice choice,
                                                             std::string& why) {
    sandbox::local_provider_options options;
    options.choice = choice;
    options.launcher_path = launcher_path();
    options.probe_timeout = std::chrono::seconds(60);
    auto provider = runtime::make_local_provider(std::move(options));
    if (provider->selected()) return provider;
    why.clear();
    for (const auto& report : provider->probe_all()) {
        if (!why.empty()) why += "; ";
        why += std::string(sandbox::to_string(report.kind)) + " unusable: " + report.reason;
    }
    if (why.empty()) why = std::string(sandbox::to_string(choice)) + ": no rung to probe";
    return nullptr;
}

inline void write_file(const std::filesystem::path& path, std::string_view text,
                       std::filesystem::perms perms) {
    {
        std::ofstream out(path, std::ios::binary | std::ios::trunc);
        out.write(text.data(), static_cast<std::streamsize>(text.size()));
    }
    std::filesystem::permissions(path, perms);
}

inline std::optional<pid_t> read_pid_file(const std::filesystem::path& path) {
    std::string text = read_file(path);
    if (text.empty()) return std::nullopt;
    return static_cast<pid_t>(std::stol(text));
}

// The open fds of this process (the directory stream's own fd excluded).
inline std::vector<int> open_fds() {
    std::vector<int> fds;
    DIR* dir = ::opendir("/proc/self/fd");
    if (dir == nullptr) return fds;
    const int own = ::dirfd(dir);
    while (dirent* entry = ::readdir(dir)) {
        if (entry->d_name[0] == '.') continue;
        int fd = std::atoi(entry->d_name);
        if (fd != own) fds.push_back(fd);
    }
    ::closedir(dir);
    return fds;
}

inline std::size_t count_open_fds() {
    return open_fds().size();
}

// The fields of /proc/<pid>/stat that the suites look at (proc(5)); the comm field may contain
// spaces and parentheses, so parsing starts after the last ')'.
struct proc_stat {
    pid_t pid = 0;
    char state = '?';
    pid_t ppid = 0;
    pid_t pgrp = 0;
    pid_t session = 0;
    int tty_nr = 0;
};

inline std::optional<proc_stat> parse_proc_stat(std::string_view text) {
    auto close = text.rfind(')');
    if (close == std::string_view::npos) return std::nullopt;
    proc_stat out;
    out.pid = static_cast<pid_t>(std::atol(std::string(text.substr(0, text.find(' '))).c_str()));
    std::istringstream rest{std::string(text.substr(close + 1))};
    rest >> out.state >> out.ppid >> out.pgrp >> out.session >> out.tty_nr;
    if (!rest) return std::nullopt;
    return out;
}

inline std::optional<proc_stat> read_proc_stat(pid_t pid) {
    std::string text = read_file("/proc/" + std::to_string(pid) + "/stat");
    if (text.empty()) return std::nullopt;
    return parse_proc_stat(text);
}

// Pids of every process visible in /proc.
inline std::vector<pid_t> all_pids() {
    std::vector<pid_t> pids;
    for (const auto& entry : std::filesystem::directory_iterator("/proc")) {
        const std::string name = entry.path().filename().string();
        if (!name.empty() && name.find_first_not_of("0123456789") == std::string::npos) {
            pids.push_back(static_cast<pid_t>(std::stol(name)));
        }
    }
    return pids;
}

// Children of this process that have exited but were never reaped.
inline std::vector<pid_t> zombie_children() {
    std::vector<pid_t> zombies;
    const pid_t self = ::getpid();
    for (pid_t pid : all_pids()) {
        auto stat = read_proc_stat(pid);
        if (stat && stat->ppid == self && stat->state == 'Z') zombies.push_back(pid);
    }
    return zombies;
}

// Dead: no such process, or only its zombie is left (it was reparented to pid 1, which may be
// slow to reap it; a zombie runs nothing and holds no file).
inline bool process_dead(pid_t pid) {
    if (::kill(pid, 0) != 0 && errno == ESRCH) return true;
    auto stat = read_proc_stat(pid);
    return !stat || stat->state == 'Z' || stat->state == 'X';
}

inline bool wait_dead(pid_t pid, std::chrono::milliseconds within) {
    const auto until = std::chrono::steady_clock::now() + within;
    while (!process_dead(pid)) {
        if (std::chrono::steady_clock::now() > until) return false;
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return true;
}

// Cleanup after a failed assertion: a survivor must not outlive the test that found it.
inline void kill_if_alive(pid_t pid) {
    if (pid > 0 && !process_dead(pid)) ::kill(pid, SIGKILL);
}

// Live processes whose command line contains `needle` (a zombie's cmdline is empty). Used where
// a pid is not comparable with ours, e.g. inside bwrap's pid namespace.
inline std::vector<pid_t> live_processes_with_cmdline(std::string_view needle) {
    std::vector<pid_t> found;
    const pid_t self = ::getpid();
    for (pid_t pid : all_pids()) {
        if (pid == self) continue;
        std::string cmdline = read_file("/proc/" + std::to_string(pid) + "/cmdline");
        if (cmdline.find(needle) != std::string::npos && !process_dead(pid)) found.push_back(pid);
    }
    return found;
}

// Until at least `count` live processes have `needle` in their command line, or `within`.
inline bool wait_for_processes_with_cmdline(std::string_view needle, std::size_t count,
                                            std::chrono::milliseconds within) {
    const auto until = std::chrono::steady_clock::now() + within;
    while (live_processes_with_cmdline(needle).size() < count) {
        if (std::chrono::steady_clock::now() > until) return false;
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return true;
}

inline bool wait_no_process_with_cmdline(std::string_view needle,
                                         std::chrono::milliseconds within) {
    const auto until = std::chrono::steady_clock::now() + within;
    while (!live_processes_with_cmdline(needle).empty()) {
        if (std::chrono::steady_clock::now() > until) return false;
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return true;
}

// Sanitizer builds spawn with fork(): their runtimes cannot follow a CLONE_VM child, so the
// vfork parameter must not run there.
inline bool vfork_unusable() {
    return runtime::default_spawn_method() == runtime::spawn_method::fork;
}

inline std::string method_name(runtime::spawn_method method) {
    switch (method) {
        case runtime::spawn_method::vfork:
            return "vfork";
        case runtime::spawn_method::fork:
            return "fork";
    }
    return "invalid";
}

// Lines of `text`, without their '\n'.
inline std::vector<std::string> split_lines(std::string_view text) {
    std::vector<std::string> lines;
    std::size_t start = 0;
    while (start < text.size()) {
        std::size_t end = text.find('\n', start);
        if (end == std::string_view::npos) end = text.size();
        lines.emplace_back(text.substr(start, end - start));
        start = end + 1;
    }
    return lines;
}

}  // namespace cordon::test

// Skips a test parameterised on spawn_method when it is vfork in a sanitizer build.
#define CORDON_SKIP_VFORK_UNDER_SANITIZER(method)                                  \
    do {                                                                           \
        if ((method) == ::cordon::runtime::spawn_method::vfork &&                  \
            ::cordon::test::vfork_unusable()) {                                    \
            GTEST_SKIP() << "spawn_method::vfork is not used in sanitizer builds"; \
        }                                                                          \
    } while (0)
