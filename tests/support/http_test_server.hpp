// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

// A plain HTTP server on 127.0.0.1 (a port the kernel picks), for the network proxy's tests: the
// only destination they ever reach, through a name the test maps to it (proxy_resolve).
#pragma once

#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <string>
#include <system_error>
#include <thread>

namespace cordon::test {

// An HTTP server on 127.0.0.1 that answers every request with one line and counts them. For a
// CONNECT tunnel the proxy hands it the client's bytes as they are: the same plain request.
class http_test_server {
public:
    http_test_server() {
        fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        sockaddr_in address{};
        address.sin_family = AF_INET;
        address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        socklen_t size = sizeof address;
        if (fd_ < 0 || ::bind(fd_, reinterpret_cast<sockaddr*>(&address), size) != 0 ||
            ::listen(fd_, 16) != 0 ||
            ::getsockname(fd_, reinterpret_cast<sockaddr*>(&address), &size) != 0 ||
            ::pipe2(stop_, O_CLOEXEC) != 0) {
            throw std::system_error(errno, std::generic_category(), "test server");
        }
        port_ = ntohs(address.sin_port);
        thread_ = std::thread([this] { serve(); });
    }
    ~http_test_server() {
        ::close(stop_[1]);
        thread_.join();
        ::close(stop_[0]);
        ::close(fd_);
    }
    http_test_server(const http_test_server&) = delete;
    http_test_server& operator=(const http_test_server&) = delete;

    [[nodiscard]] int port() const { return port_; }
    [[nodiscard]] int requests() const { return requests_.load(); }

private:
    void serve() {
        for (;;) {
            pollfd fds[2] = {{fd_, POLLIN, 0}, {stop_[0], POLLIN, 0}};
            if (::poll(fds, 2, -1) < 0 && errno != EINTR) return;
            if (fds[1].revents != 0) return;
            if ((fds[0].revents & POLLIN) == 0) continue;
            const int client = ::accept4(fd_, nullptr, nullptr, SOCK_CLOEXEC);
            if (client < 0) continue;
            std::string head;
            char buffer[1024];
            ssize_t got;
            while (head.find("\r\n\r\n") == std::string::npos &&
                   (got = ::read(client, buffer, sizeof buffer)) > 0) {
                head.append(buffer, static_cast<std::size_t>(got));
            }
            ++requests_;
            const std::string body = "hello from the test server\n";
            const std::string answer =
                "HTTP/1.1 200 OK\r\nContent-Length: " + std::to_string(body.size()) +
                "\r\nConnection: close\r\n\r\n" + body;
            (void)!::write(client, answer.data(), answer.size());
            ::close(client);
        }
    }

    int fd_ = -1;
    int stop_[2] = {-1, -1};
    int port_ = 0;
    std::atomic<int> requests_{0};
    std::thread thread_;
};

}  // namespace cordon::test
