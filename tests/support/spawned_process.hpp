// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

// A process the test starts and then acts on while it runs (waits for a line of its output,
// signals it, kills it), with its output collected: for the tests that need the process itself,
// not only its end (support/cordon_cli.hpp runs one to its end). Plain fork/exec: nothing here
// needs a cordon library.
#pragma once

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <map>
#include <optional>
#include <string>
#include <system_error>
#include <thread>
#include <vector>

extern char** environ;

namespace cordon::test {

// A process spawned with fork/exec, stdin on /dev/null and its stdout and stderr on pipes that the
// test pumps while it waits; killed and reaped at scope end if it is still there. `env_overrides`
// are set over this process's own environment.
class spawned_process {
public:
    spawned_process(const std::vector<std::string>& argv,
                    const std::map<std::string, std::string>& env_overrides) {
        std::map<std::string, std::string> env;
        for (char** e = environ; *e != nullptr; ++e) {
            const std::string entry = *e;
            const auto equals = entry.find('=');
            if (equals != std::string::npos)
                env[entry.substr(0, equals)] = entry.substr(equals + 1);
        }
        for (const auto& [name, value] : env_overrides)
            env[name] = value;
        std::vector<std::string> env_entries;
        for (const auto& [name, value] : env)
            env_entries.push_back(name + "=" + value);
        std::vector<char*> args;
        for (const auto& arg : argv)
            args.push_back(const_cast<char*>(arg.c_str()));
        args.push_back(nullptr);
        std::vector<char*> envp;
        for (const auto& entry : env_entries)
            envp.push_back(const_cast<char*>(entry.c_str()));
        envp.push_back(nullptr);

        int out[2];
        int err[2];
        if (::pipe2(out, O_CLOEXEC) != 0 || ::pipe2(err, O_CLOEXEC) != 0) {
            throw std::system_error(errno, std::generic_category(), "pipe2");
        }
        pid_ = ::fork();
        if (pid_ < 0) throw std::system_error(errno, std::generic_category(), "fork");
        if (pid_ == 0) {
            const int null = ::open("/dev/null", O_RDONLY);
            ::dup2(null, 0);
            ::dup2(out[1], 1);
            ::dup2(err[1], 2);
            ::execve(args[0], args.data(), envp.data());
            _exit(127);
        }
        ::close(out[1]);
        ::close(err[1]);
        out_fd_ = out[0];
        err_fd_ = err[0];
    }
    ~spawned_process() {
        if (pid_ > 0 && !status_) {
            ::kill(pid_, SIGKILL);
            int status = 0;
            ::waitpid(pid_, &status, 0);
        }
        if (out_fd_ >= 0) ::close(out_fd_);
        if (err_fd_ >= 0) ::close(err_fd_);
    }
    spawned_process(const spawned_process&) = delete;
    spawned_process& operator=(const spawned_process&) = delete;

    [[nodiscard]] pid_t pid() const { return pid_; }
    [[nodiscard]] const std::string& out() const { return out_; }
    [[nodiscard]] const std::string& err() const { return err_; }

    // Reads output until `text` appears on stdout or `bound` passes; true when it appeared.
    bool wait_for_output(const std::string& text,
                         std::chrono::milliseconds bound = std::chrono::seconds(60)) {
        const auto deadline = std::chrono::steady_clock::now() + bound;
        while (out_.find(text) == std::string::npos) {
            if (std::chrono::steady_clock::now() >= deadline) return false;
            if (!pump(std::chrono::milliseconds(50)) && out_.find(text) == std::string::npos)
                return false;
        }
        return true;
    }

    // Waits for the exit (bounded; SIGKILL at the bound) and returns the exit status, or
    // 128 + signal when a signal ended it.
    int wait(std::chrono::milliseconds bound = std::chrono::seconds(60)) {
        const auto deadline = std::chrono::steady_clock::now() + bound;
        while (!status_) {
            int status = 0;
            const pid_t done = ::waitpid(pid_, &status, WNOHANG);
            if (done == pid_) {
                status_ = status;
                break;
            }
            if (std::chrono::steady_clock::now() >= deadline) {
                ::kill(pid_, SIGKILL);
                ::waitpid(pid_, &status, 0);
                status_ = status;
                timed_out_ = true;
                break;
            }
            pump(std::chrono::milliseconds(20));
        }
        // Whatever is still buffered in the pipes (bounded: a leftover holder cannot stall us).
        for (int i = 0; i < 50 && pump(std::chrono::milliseconds(20));)
            ++i;
        return WIFEXITED(*status_) ? WEXITSTATUS(*status_) : 128 + WTERMSIG(*status_);
    }

    void kill(int signal) const { ::kill(pid_, signal); }
    // The reader of its stdout goes away (`| head -1` once it has its line).
    void close_stdout() {
        if (out_fd_ >= 0) ::close(out_fd_);
        out_fd_ = -1;
    }
    [[nodiscard]] bool timed_out() const { return timed_out_; }

private:
    // One poll round; false once both pipes are at EOF.
    bool pump(std::chrono::milliseconds bound) {
        pollfd fds[2] = {{out_fd_, POLLIN, 0}, {err_fd_, POLLIN, 0}};
        int open_count = 0;
        for (auto& p : fds) {
            if (p.fd >= 0) ++open_count;
        }
        if (open_count == 0) {
            std::this_thread::sleep_for(bound);
            return false;
        }
        if (::poll(fds, 2, static_cast<int>(bound.count())) <= 0) return true;
        for (int i = 0; i < 2; ++i) {
            if (fds[i].fd < 0 || fds[i].revents == 0) continue;
            char buf[65536];
            const ssize_t n = ::read(fds[i].fd, buf, sizeof buf);
            int& fd = i == 0 ? out_fd_ : err_fd_;
            if (n <= 0) {
                ::close(fd);
                fd = -1;
            } else {
                (i == 0 ? out_ : err_).append(buf, static_cast<std::size_t>(n));
            }
        }
        return true;
    }

    pid_t pid_ = -1;
    int out_fd_ = -1;
    int err_fd_ = -1;
    std::string out_;
    std::string err_;
    std::optional<int> status_;
    bool timed_out_ = false;
};

}  // namespace cordon::test
