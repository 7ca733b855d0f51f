// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

// Runs a piece of a test in a child process whose mount namespace has no /proc (or no /sys): the
// child unshares its mount namespace, makes every mount private (so that nothing it unmounts
// reaches the host) and detaches the mounts, then runs `body` and sends back the string it
// returns. What cordon decides there shows what it does when it cannot read
// /proc/self/{maps,mountinfo,exe} (or sysfs). `body` must not use gtest's assertions: the child
// reports through its string only.
//
// Needs CAP_SYS_ADMIN (the tests run as root); without it the caller skips with the reason.
#pragma once

#include <fcntl.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <functional>
#include <initializer_list>
#include <string>
#include <variant>

namespace cordon::test {

struct proc_unavailable {
    std::string reason;  // why no such namespace could be made: the test skips with it
};

// `body`'s answer in a namespace without /proc; a crash of the child, or an exit other than the
// one after `body` returned, is an answer too ("child ended: ...").
inline std::variant<std::string, proc_unavailable> without_mounts(
    std::initializer_list<const char*> points, const std::function<std::string()>& body) {
    int channel[2];
    if (::pipe2(channel, O_CLOEXEC) != 0) return proc_unavailable{std::strerror(errno)};
    const pid_t pid = ::fork();
    if (pid < 0) {
        ::close(channel[0]);
        ::close(channel[1]);
        return proc_unavailable{std::string("fork: ") + std::strerror(errno)};
    }
    if (pid == 0) {
        ::close(channel[0]);
        const auto send = [&](char kind, const std::string& text) {
            const std::string message = kind + text;
            std::size_t done = 0;
            while (done < message.size()) {
                const ssize_t put =
                    ::write(channel[1], message.data() + done, message.size() - done);
                if (put < 0 && errno == EINTR) continue;
                if (put <= 0) break;
                done += static_cast<std::size_t>(put);
            }
            ::_exit(0);
        };
        if (::unshare(CLONE_NEWNS) != 0) {
            send('!', std::string("unshare(CLONE_NEWNS): ") + std::strerror(errno));
        }
        if (::mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0) {
            send('!', std::string("making the mounts private: ") + std::strerror(errno));
        }
        for (const char* point : points) {
            // Detached until nothing is left at the point (a mount may hide another).
            while (::umount2(point, MNT_DETACH) == 0) {
            }
            if (errno != EINVAL) {
                send('!', std::string("umount2(") + point + "): " + std::strerror(errno));
            }
        }
        std::string answer;
        try {
            answer = body();
        } catch (const std::exception& error) {
            answer = std::string("threw: ") + error.what();
        }
        send('=', answer);
    }
    ::close(channel[1]);
    std::string message;
    char buffer[4096];
    for (;;) {
        const ssize_t got = ::read(channel[0], buffer, sizeof buffer);
        if (got < 0 && errno == EINTR) continue;
        if (got <= 0) break;
        message.append(buffer, static_cast<std::size_t>(got));
    }
    ::close(channel[0]);
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    if (message.empty()) {
        return "child ended: " + std::string(WIFSIGNALED(status) ? "signal " : "exit ") +
               std::to_string(WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status));
    }
    if (message.front() == '!') return proc_unavailable{message.substr(1)};
    return message.substr(1);
}

inline std::variant<std::string, proc_unavailable> without_proc(
    const std::function<std::string()>& body) {
    return without_mounts({"/proc"}, body);
}

}  // namespace cordon::test
