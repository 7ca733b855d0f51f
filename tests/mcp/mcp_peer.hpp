// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

// The client side of a conversation with a real `cordon mcp` process: it spawns the server with
// pipes for stdin and stdout, writes JSON-RPC lines and reads the replies, keeping notifications
// aside for the test to look at.
#pragma once

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/ioctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include <chrono>
#include <cstring>
#include <deque>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "support.hpp"

extern char** environ;

namespace cordon::test {

using nlohmann::json;

// The text of a tool result's content parts, joined.
inline std::string text_of(const json& result) {
    std::string out;
    for (const auto& part : result.at("content"))
        out += part.at("text").get<std::string>();
    return out;
}

class mcp_peer {
public:
    // `prefix`: a program (absolute path) and its arguments that start the server, e.g. a shell
    // that changes a limit first and then execs the rest of its arguments.
    explicit mcp_peer(std::vector<std::string> args, std::vector<std::string> prefix = {}) {
        int in[2];
        int out[2];
        if (::pipe2(in, O_CLOEXEC) != 0 || ::pipe2(out, O_CLOEXEC) != 0) {
            throw std::runtime_error("pipe2 failed");
        }
        posix_spawn_file_actions_t actions;
        ::posix_spawn_file_actions_init(&actions);
        ::posix_spawn_file_actions_adddup2(&actions, in[0], STDIN_FILENO);
        ::posix_spawn_file_actions_adddup2(&actions, out[1], STDOUT_FILENO);
        std::vector<std::string> argv = std::move(prefix);
        argv.push_back(cordon_path().string());
        argv.push_back("mcp");
        argv.insert(argv.end(), args.begin(), args.end());
        std::vector<char*> pointers;
        for (auto& arg : argv)
            pointers.push_back(arg.data());
        pointers.push_back(nullptr);
        const int failed =
            ::posix_spawn(&pid_, pointers[0], &actions, nullptr, pointers.data(), environ);
        ::posix_spawn_file_actions_destroy(&actions);
        ::close(in[0]);
        ::close(out[1]);
        to_server_ = in[1];
        from_server_ = out[0];
        if (failed != 0) throw std::runtime_error("cannot start cordon mcp");
    }

    // As a client leaves: stdin closed, and the server given the time to end its jobs and remove
    // their stream files (a generous bound); SIGKILL only for one that does not exit by then.
    ~mcp_peer() {
        if (to_server_ >= 0) ::close(to_server_);
        if (pid_ > 0 && !exit_status_) {
            const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
            while (::waitpid(pid_, nullptr, WNOHANG) == 0) {
                if (std::chrono::steady_clock::now() >= deadline) {
                    ::kill(pid_, SIGKILL);
                    ::waitpid(pid_, nullptr, 0);
                    break;
                }
                std::this_thread::sleep_for(std::chrono::milliseconds(10));
            }
        }
        ::close(from_server_);
    }
    mcp_peer(const mcp_peer&) = delete;
    mcp_peer& operator=(const mcp_peer&) = delete;

    [[nodiscard]] pid_t pid() const { return pid_; }

    void send_line(const std::string& line) {
        const std::string framed = line + "\n";
        std::size_t done = 0;
        while (done < framed.size()) {
            const ssize_t n = ::write(to_server_, framed.data() + done, framed.size() - done);
            if (n < 0) {
                if (errno == EINTR) continue;
                throw std::runtime_error(std::string("write to cordon mcp: ") +
                                         std::strerror(errno));
            }
            done += static_cast<std::size_t>(n);
        }
    }
    void send(const json& message) { send_line(message.dump()); }

    json request(const json& id, const std::string& method, json params = json::object()) {
        send({{"jsonrpc", "2.0"}, {"id", id}, {"method", method}, {"params", std::move(params)}});
        return reply_to(id);
    }

    // Sends tools/call and returns its result (or the error reply).
    json call(const json& id, const std::string& tool, json args = json::object(),
              std::chrono::milliseconds within = std::chrono::seconds(60)) {
        send({{"jsonrpc", "2.0"},
              {"id", id},
              {"method", "tools/call"},
              {"params", {{"name", tool}, {"arguments", std::move(args)}}}});
        json reply = reply_to(id, within);
        return reply.contains("result") ? reply["result"] : reply;
    }

    void initialize(const std::string& version = "2025-11-25", json capabilities = json::object()) {
        json reply = request(0, "initialize",
                             {{"protocolVersion", version},
                              {"capabilities", std::move(capabilities)},
                              {"clientInfo", {{"name", "cordon-test"}, {"version", "0"}}}});
        if (!reply.contains("result")) throw std::runtime_error("initialize: " + reply.dump());
        send({{"jsonrpc", "2.0"}, {"method", "notifications/initialized"}});
    }

    // Sends tools/call without waiting for its reply; `meta` becomes params._meta.
    void start_call(const json& id, const std::string& tool, json args, json meta = nullptr) {
        json params{{"name", tool}, {"arguments", std::move(args)}};
        if (!meta.is_null()) params["_meta"] = std::move(meta);
        send({{"jsonrpc", "2.0"}, {"id", id}, {"method", "tools/call"}, {"params", params}});
    }

    // The next request the server sends the client (e.g. elicitation/create), or null.
    json server_request(std::chrono::milliseconds within = std::chrono::seconds(60)) {
        const auto until = std::chrono::steady_clock::now() + within;
        for (;;) {
            for (auto it = replies_.begin(); it != replies_.end(); ++it) {
                if (it->contains("method")) {
                    json found = std::move(*it);
                    replies_.erase(it);
                    return found;
                }
            }
            auto next = receive(until);
            if (!next) return nullptr;
            if (next->contains("id")) {
                replies_.push_back(std::move(*next));
            } else {
                notifications_.push_back(std::move(*next));
            }
        }
    }

    // Answers a request of the server's.
    void answer(const json& asked, json result) {
        send({{"jsonrpc", "2.0"}, {"id", asked.at("id")}, {"result", std::move(result)}});
    }

    // The reply to `id`; notifications read on the way are kept in notifications().
    json reply_to(const json& id, std::chrono::milliseconds within = std::chrono::seconds(60)) {
        const auto until = std::chrono::steady_clock::now() + within;
        for (;;) {
            for (auto it = replies_.begin(); it != replies_.end(); ++it) {
                if ((*it)["id"] == id && !it->contains("method")) {
                    json found = std::move(*it);
                    replies_.erase(it);
                    return found;
                }
            }
            auto next = receive(until);
            if (!next) return json{{"timeout", true}};
            if (next->contains("id")) {
                replies_.push_back(std::move(*next));
            } else {
                notifications_.push_back(std::move(*next));
            }
        }
    }

    // Every reply that arrives until `until`, for checking that one never comes.
    std::vector<json> replies_until(std::chrono::steady_clock::time_point until) {
        while (auto next = receive(until)) {
            if (next->contains("id")) {
                replies_.push_back(std::move(*next));
            } else {
                notifications_.push_back(std::move(*next));
            }
        }
        return {replies_.begin(), replies_.end()};
    }

    [[nodiscard]] const std::vector<json>& notifications() const { return notifications_; }

    // True once `count` notifications have arrived (within `within`); replies read on the way are
    // kept for reply_to().
    bool wait_for_notifications(std::size_t count,
                                std::chrono::milliseconds within = std::chrono::seconds(60)) {
        const auto until = std::chrono::steady_clock::now() + within;
        while (notifications_.size() < count) {
            auto next = receive(until);
            if (!next) return false;
            if (next->contains("id")) {
                replies_.push_back(std::move(*next));
            } else {
                notifications_.push_back(std::move(*next));
            }
        }
        return true;
    }

    // True once the server's unread output fills at least half of the pipe it writes to, read
    // from the kernel (FIONREAD against F_GETPIPE_SZ) without reading any of it: the server is
    // about to block on a client that does not read.
    bool wait_until_unread_output_backs_up(
        std::chrono::milliseconds within = std::chrono::seconds(60)) {
        const int capacity = ::fcntl(from_server_, F_GETPIPE_SZ);
        const auto until = std::chrono::steady_clock::now() + within;
        for (;;) {
            int unread = 0;
            if (capacity > 0 && ::ioctl(from_server_, FIONREAD, &unread) == 0 &&
                unread >= capacity / 2) {
                return true;
            }
            if (std::chrono::steady_clock::now() > until) return false;
            std::this_thread::sleep_for(std::chrono::milliseconds(5));
        }
    }

    void close_input() {
        ::close(to_server_);
        to_server_ = -1;
    }

    // The server's wait status once it exited within `within`. `drain`: read what it writes
    // meanwhile, so that it never waits for room in the pipe.
    std::optional<int> wait_exit(std::chrono::milliseconds within, bool drain = true) {
        const auto until = std::chrono::steady_clock::now() + within;
        while (!exit_status_) {
            int status = 0;
            const pid_t got = ::waitpid(pid_, &status, WNOHANG);
            if (got == pid_) {
                exit_status_ = status;
                break;
            }
            if (std::chrono::steady_clock::now() > until) return std::nullopt;
            if (drain) {
                (void)receive(std::chrono::steady_clock::now() + std::chrono::milliseconds(20));
            } else {
                std::this_thread::sleep_for(std::chrono::milliseconds(20));
            }
        }
        return exit_status_;
    }

private:
    // One message, or nullopt at `until` or at the end of the output.
    std::optional<json> receive(std::chrono::steady_clock::time_point until) {
        for (;;) {
            if (auto newline = buffer_.find('\n'); newline != std::string::npos) {
                json parsed = json::parse(buffer_.substr(0, newline));
                buffer_.erase(0, newline + 1);
                return parsed;
            }
            if (eof_) return std::nullopt;
            const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                until - std::chrono::steady_clock::now());
            if (left.count() <= 0) return std::nullopt;
            pollfd ready{from_server_, POLLIN, 0};
            if (::poll(&ready, 1, static_cast<int>(left.count())) <= 0) continue;
            char chunk[65536];
            const ssize_t n = ::read(from_server_, chunk, sizeof chunk);
            if (n < 0 && errno == EINTR) continue;
            if (n <= 0) {
                eof_ = true;
                continue;
            }
            buffer_.append(chunk, static_cast<std::size_t>(n));
        }
    }

    pid_t pid_ = -1;
    int to_server_ = -1;
    int from_server_ = -1;
    std::string buffer_;
    bool eof_ = false;
    std::optional<int> exit_status_;
    std::deque<json> replies_;
    std::vector<json> notifications_;
};

}  // namespace cordon::test
