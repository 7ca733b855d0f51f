// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

// What the proxy's service tests share: real sockets on 127.0.0.1 only. An upstream test server
// (echo, or a one-shot HTTP responder), a resolver the test controls (it counts its queries), and
// a client whose accepted socket the test hands to a session over its forwarder end with
// SCM_RIGHTS, exactly as the forwarder in the sandbox does.
#pragma once

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <boost/asio/post.hpp>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <variant>
#include <vector>

#include "cordon/unique_fd.hpp"
#include "proxy/service.hpp"

namespace cordon::proxy::test {

// How long a blocking step may take before the test fails instead of hanging.
inline constexpr int patience_ms = 10'000;

inline unique_fd tcp_socket() {
    return unique_fd(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
}

inline sockaddr_in loopback(std::uint16_t port) {
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_port = htons(port);
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    return address;
}

// A listening socket on 127.0.0.1 and an ephemeral port.
inline unique_fd listen_loopback(std::uint16_t& port) {
    unique_fd fd = tcp_socket();
    sockaddr_in address = loopback(0);
    socklen_t size = sizeof address;
    if (::bind(fd.get(), reinterpret_cast<sockaddr*>(&address), sizeof address) != 0 ||
        ::listen(fd.get(), 512) != 0 ||
        ::getsockname(fd.get(), reinterpret_cast<sockaddr*>(&address), &size) != 0) {
        throw std::runtime_error(std::string("listen: ") + std::strerror(errno));
    }
    port = ntohs(address.sin_port);
    return fd;
}

inline void send_all(int fd, std::string_view bytes) {
    while (!bytes.empty()) {
        const ssize_t sent = ::send(fd, bytes.data(), bytes.size(), MSG_NOSIGNAL);
        if (sent < 0) throw std::runtime_error(std::string("send: ") + std::strerror(errno));
        bytes.remove_prefix(static_cast<std::size_t>(sent));
    }
}

// One read of at most `most` bytes ("" at end of file or on a reset); throws when nothing comes
// within patience_ms.
inline std::string read_some(int fd, std::size_t most = 65536) {
    pollfd ready{fd, POLLIN, 0};
    if (::poll(&ready, 1, patience_ms) != 1) throw std::runtime_error("nothing to read in time");
    std::string buffer(most, '\0');
    const ssize_t got = ::recv(fd, buffer.data(), buffer.size(), 0);
    if (got <= 0) return {};
    buffer.resize(static_cast<std::size_t>(got));
    return buffer;
}

inline std::string read_exact(int fd, std::size_t size) {
    std::string out;
    while (out.size() < size) {
        const std::string more = read_some(fd, size - out.size());
        if (more.empty()) break;
        out += more;
    }
    return out;
}

inline std::string read_to_eof(int fd) {
    std::string out;
    for (;;) {
        const std::string more = read_some(fd);
        if (more.empty()) return out;
        out += more;
    }
}

// A test server on 127.0.0.1: `echo` sends back what it reads until end of file, then closes;
// otherwise it reads an HTTP head, keeps it, and answers `HTTP/1.1 200 OK` with body "hello".
class upstream_server {
public:
    explicit upstream_server(bool echo) : echo_(echo) {
        listener_ = listen_loopback(port_);
        acceptor_ = std::thread([this] { accept_loop(); });
    }
    ~upstream_server() {
        ::shutdown(listener_.get(), SHUT_RDWR);
        acceptor_.join();
        {
            const std::lock_guard lock(mutex_);
            for (const int fd : open_)
                ::shutdown(fd, SHUT_RDWR);
        }
        for (auto& each : handlers_)
            each.join();
    }
    [[nodiscard]] std::uint16_t port() const { return port_; }
    [[nodiscard]] std::vector<std::string> heads() const {
        const std::lock_guard lock(mutex_);
        return heads_;
    }

private:
    void accept_loop() {
        for (;;) {
            const int fd = ::accept4(listener_.get(), nullptr, nullptr, SOCK_CLOEXEC);
            if (fd < 0) return;
            const std::lock_guard lock(mutex_);
            open_.push_back(fd);
            handlers_.emplace_back([this, fd] { serve(unique_fd(fd)); });
        }
    }
    void serve(unique_fd fd) {
        std::string buffer(4096, '\0');
        std::string head;
        for (;;) {
            const ssize_t got = ::recv(fd.get(), buffer.data(), buffer.size(), 0);
            if (got <= 0) break;
            if (echo_) {
                send_all(fd.get(), std::string_view(buffer.data(), static_cast<std::size_t>(got)));
                continue;
            }
            head.append(buffer.data(), static_cast<std::size_t>(got));
            if (head.find("\r\n\r\n") != std::string::npos) {
                {
                    const std::lock_guard lock(mutex_);
                    heads_.push_back(head);
                }
                send_all(fd.get(), "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello");
                break;
            }
        }
        const std::lock_guard lock(mutex_);
        std::erase(open_, fd.get());
    }

    bool echo_;
    std::uint16_t port_ = 0;
    unique_fd listener_;
    std::thread acceptor_;
    mutable std::mutex mutex_;
    std::vector<int> open_;
    std::vector<std::thread> handlers_;
    std::vector<std::string> heads_;
};

// Names mapped to the addresses a test chooses; every query counted. A name mapped to "throw"
// makes the completion throw on the proxy's thread; one mapped to "never" is never answered.
class fake_resolver final : public resolver {
public:
    void map(const std::string& name, const std::string& address) {
        const std::lock_guard lock(mutex_);
        names_[name] = address;
    }
    void async_resolve(const std::string& name, std::shared_ptr<lookup> pending) override {
        ++queries;
        std::string address;
        {
            const std::lock_guard lock(mutex_);
            const auto found = names_.find(name);
            if (found != names_.end()) address = found->second;
        }
        if (address == "never") return;  // no answer: a deadline ends the wait
        if (address == "throw") {
            boost::asio::post(pending->executor(),
                              [] { throw std::runtime_error("a handler threw"); });
            return;
        }
        if (address.empty()) {
            pending->answer(base::fail(lookup_failure::no_address, "cannot be resolved"));
        } else {
            pending->answer(address_list{boost::asio::ip::make_address(address)});
        }
    }
    std::atomic<int> queries{0};

private:
    std::mutex mutex_;
    std::map<std::string, std::string> names_;
};

// The blocking lookup a system_resolver() runs on its threads, as a slow DNS zone would: a name
// mapped to an address is answered at once, one mapped to "hold" blocks until release() (then
// "cannot be resolved"), any other cannot be resolved. Held by a shared_ptr the lookups' threads
// share: a thread still blocked when its test ends keeps it alive.
class held_lookups : public std::enable_shared_from_this<held_lookups> {
public:
    void map(const std::string& name, const std::string& address) {
        const std::lock_guard lock(mutex_);
        names_[name] = address;
    }
    lookup_function function() {
        return [self = shared_from_this()](const std::string& name) { return self->look_up(name); };
    }
    // Until `count` lookups are blocked; false when that takes longer than patience_ms.
    bool wait_until_held(int count) {
        std::unique_lock lock(mutex_);
        return changed_.wait_for(lock, std::chrono::milliseconds(patience_ms),
                                 [&] { return held_ >= count; });
    }
    [[nodiscard]] int held() const {
        const std::lock_guard lock(mutex_);
        return held_;
    }
    void release() {
        const std::lock_guard lock(mutex_);
        released_ = true;
        changed_.notify_all();
    }

private:
    resolver::result look_up(const std::string& name) {
        std::unique_lock lock(mutex_);
        const auto found = names_.find(name);
        if (found == names_.end()) {
            return base::fail(lookup_failure::no_address, "cannot be resolved");
        }
        if (found->second != "hold") {
            return address_list{boost::asio::ip::make_address(found->second)};
        }
        ++held_;
        changed_.notify_all();
        changed_.wait(lock, [&] { return released_; });
        --held_;
        return base::fail(lookup_failure::no_address, "cannot be resolved");
    }

    mutable std::mutex mutex_;
    std::condition_variable changed_;
    std::map<std::string, std::string> names_;
    int held_ = 0;
    bool released_ = false;
};

// Hands `fds` to the proxy in one message, as the forwarder does (with one fd).
// One more session of `service` under `network` (as proxy), its forwarder end in `forwarder`;
// null, with the test failed, when the service refuses it.
inline std::unique_ptr<session> open_session(service& proxy, sandbox::network_rules network,
                                             unique_fd& forwarder) {
    network.policy = sandbox::network_policy::proxy;
    auto opened = proxy.open(network);
    if (!std::holds_alternative<std::unique_ptr<session>>(opened)) {
        ADD_FAILURE() << std::get<std::string>(opened);
        return nullptr;
    }
    auto served = std::get<std::unique_ptr<session>>(std::move(opened));
    forwarder = served->take_forwarder_end();
    EXPECT_TRUE(forwarder);
    return served;
}

inline void hand_over(int forwarder, const std::vector<int>& fds) {
    char byte = 'c';
    iovec data{&byte, 1};
    alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int) * 4)] = {};
    msghdr message{};
    message.msg_iov = &data;
    message.msg_iovlen = 1;
    if (!fds.empty()) {
        message.msg_control = control;
        message.msg_controllen = CMSG_SPACE(sizeof(int) * fds.size());
        cmsghdr* header = CMSG_FIRSTHDR(&message);
        header->cmsg_level = SOL_SOCKET;
        header->cmsg_type = SCM_RIGHTS;
        header->cmsg_len = CMSG_LEN(sizeof(int) * fds.size());
        std::memcpy(CMSG_DATA(header), fds.data(), sizeof(int) * fds.size());
    }
    if (::sendmsg(forwarder, &message, MSG_NOSIGNAL) != 1) {
        throw std::runtime_error(std::string("sendmsg: ") + std::strerror(errno));
    }
}

// The test's own loopback listener standing in for the forwarder's: connect() returns the
// client's end and the accepted end.
class front_door {
public:
    front_door() { listener_ = listen_loopback(port_); }
    std::pair<unique_fd, unique_fd> connect() {
        unique_fd client = tcp_socket();
        const sockaddr_in address = loopback(port_);
        if (::connect(client.get(), reinterpret_cast<const sockaddr*>(&address), sizeof address) !=
            0) {
            throw std::runtime_error(std::string("connect: ") + std::strerror(errno));
        }
        unique_fd accepted(::accept4(listener_.get(), nullptr, nullptr, SOCK_CLOEXEC));
        return {std::move(client), std::move(accepted)};
    }

private:
    std::uint16_t port_ = 0;
    unique_fd listener_;
};

}  // namespace cordon::proxy::test
