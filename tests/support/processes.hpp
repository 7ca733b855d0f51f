// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

// Processes as the kernel shows them (/proc), for the tests that check what a run left behind:
// every pid, a process's state, parent and group, its descendants, whether it is dead, the
// processes carrying a marker in their command line, and this process's open fds. Nothing here
// trusts what the code under test says about itself, and nothing needs a cordon library.
#pragma once

#include <dirent.h>
#include <poll.h>
#include <signal.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <functional>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "support/files.hpp"

namespace cordon::test {

// Runs `body` in a forked child and returns its exit status, or nullopt when it had not ended
// `within` (the child is then killed): a call that would block on a lock or a FIFO fails the
// test instead of hanging it. Waits on the child's pidfd, not on a clock.
inline std::optional<int> exit_within(const std::function<int()>& body,
                                      std::chrono::milliseconds within) {
    const pid_t pid = ::fork();
    if (pid < 0) return std::nullopt;
    if (pid == 0) ::_exit(body());
    const int pidfd = static_cast<int>(::syscall(SYS_pidfd_open, pid, 0));
    pollfd ready{pidfd, POLLIN, 0};
    const bool ended = pidfd >= 0 && ::poll(&ready, 1, static_cast<int>(within.count())) == 1;
    if (!ended) ::kill(pid, SIGKILL);
    int status = 0;
    ::waitpid(pid, &status, 0);
    if (pidfd >= 0) ::close(pidfd);
    if (!ended || !WIFEXITED(status)) return std::nullopt;
    return WEXITSTATUS(status);
}

// Pids of every process visible in /proc.
inline std::vector<pid_t> all_pids() {
    std::vector<pid_t> out;
    DIR* proc = ::opendir("/proc");
    if (proc == nullptr) return out;
    while (dirent* entry = ::readdir(proc)) {
        char* end = nullptr;
        const long pid = std::strtol(entry->d_name, &end, 10);
        if (end != entry->d_name && *end == '\0' && pid > 0) out.push_back(static_cast<pid_t>(pid));
    }
    ::closedir(proc);
    return out;
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

// Every descendant of `root` (children, grandchildren, ...).
inline std::vector<pid_t> descendants_of(pid_t root) {
    std::map<pid_t, pid_t> parents;
    for (pid_t pid : all_pids()) {
        if (auto stat = read_proc_stat(pid)) parents[pid] = stat->ppid;
    }
    std::vector<pid_t> out{root};
    for (std::size_t i = 0; i < out.size(); ++i) {
        for (const auto& [pid, parent] : parents) {
            if (parent == out[i]) out.push_back(pid);
        }
    }
    out.erase(out.begin());
    return out;
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

// The command line of `pid` with its NUL separators as spaces; nullopt when the process is gone.
inline std::optional<std::string> cmdline_of(pid_t pid) {
    auto text = read_file_if_present("/proc/" + std::to_string(pid) + "/cmdline");
    if (!text) return std::nullopt;
    std::replace(text->begin(), text->end(), '\0', ' ');
    return text;
}

// Live processes other than this one whose command line contains `marker` (a zombie's is
// empty). Used where a pid is not comparable with ours, e.g. inside bwrap's pid namespace.
inline std::vector<pid_t> live_processes_with_cmdline(std::string_view marker) {
    std::vector<pid_t> found;
    const pid_t self = ::getpid();
    for (pid_t pid : all_pids()) {
        if (pid == self) continue;
        const auto cmdline = cmdline_of(pid);
        if (cmdline && cmdline->find(marker) != std::string::npos && !process_dead(pid)) {
            found.push_back(pid);
        }
    }
    return found;
}

// Until at least `count` live processes have `marker` in their command line, or `within`.
inline bool wait_for_processes_with_cmdline(std::string_view marker, std::size_t count,
                                            std::chrono::milliseconds within) {
    const auto until = std::chrono::steady_clock::now() + within;
    while (live_processes_with_cmdline(marker).size() < count) {
        if (std::chrono::steady_clock::now() > until) return false;
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return true;
}

inline bool wait_no_process_with_cmdline(std::string_view marker,
                                         std::chrono::milliseconds within) {
    const auto until = std::chrono::steady_clock::now() + within;
    while (!live_processes_with_cmdline(marker).empty()) {
        if (std::chrono::steady_clock::now() > until) return false;
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return true;
}

// Waits (bounded) until no process carries `marker`; returns the survivors, which it then
// SIGKILLs so that a failing test leaves nothing behind.
inline std::vector<pid_t> survivors_after(
    std::string_view marker, std::chrono::milliseconds within = std::chrono::seconds(15)) {
    if (wait_no_process_with_cmdline(marker, within)) return {};
    std::vector<pid_t> left = live_processes_with_cmdline(marker);
    for (pid_t pid : left)
        ::kill(pid, SIGKILL);
    return left;
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

}  // namespace cordon::test
