// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

// A session on the proxy's thread: the forwarder end read for fds (recvmsg, SCM_RIGHTS), one
// connection per fd, and the report.
#include "proxy/session_state.hpp"

#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <string>

#include "base/log.hpp"

namespace cordon::proxy::detail {

namespace net = boost::asio;
using boost::system::error_code;

namespace {

// Room for more fds than a message may carry, so that one carrying several is seen whole (and
// its fds closed) rather than cut.
constexpr std::size_t fds_room = 8;
// Messages taken in one go before other handlers get their turn.
constexpr int messages_per_turn = 64;

}  // namespace

session_state::session_state(net::io_context& context, rules policy,
                             std::shared_ptr<resolver> names, const limits& bounds,
                             unique_fd own_end)
    : context_(context),
      policy_(std::move(policy)),
      names_(std::move(names)),
      bounds_(bounds),
      lookups_(std::make_shared<lookup_slots>(bounds.max_lookups_per_session)),
      own_end_(std::move(own_end)) {}

void session_state::start() {
    if (closed_) return;
    forwarder_.emplace(context_);
    error_code error;
    forwarder_->assign(own_end_.get(), error);
    if (error) {
        forwarder_.reset();
        fail("the proxy cannot watch its forwarder end: " + error.message());
        return;
    }
    (void)own_end_.release();
    wait_for_forwarder();
}

void session_state::wait_for_forwarder() {
    forwarder_->async_wait(net::posix::stream_descriptor::wait_read,
                           [self = shared_from_this()](const error_code& error) {
                               if (error || self->closed_ || !self->forwarder_) return;
                               self->receive_from_forwarder();
                           });
}

void session_state::receive_from_forwarder() {
    for (int taken = 0; taken < messages_per_turn; ++taken) {
        char byte = 0;
        iovec data{&byte, 1};
        alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int) * fds_room)] = {};
        msghdr message{};
        message.msg_iov = &data;
        message.msg_iovlen = 1;
        message.msg_control = control;
        message.msg_controllen = sizeof control;
        const ssize_t got =
            ::recvmsg(forwarder_->native_handle(), &message, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
        if (got < 0) {
            if (errno == EINTR) continue;
            if (errno == EAGAIN || errno == EWOULDBLOCK) break;
            error_code ignored;
            forwarder_->close(ignored);
            forwarder_.reset();
            return;
        }
        std::vector<unique_fd> fds;
        for (cmsghdr* each = CMSG_FIRSTHDR(&message); each != nullptr;
             each = CMSG_NXTHDR(&message, each)) {
            if (each->cmsg_level != SOL_SOCKET || each->cmsg_type != SCM_RIGHTS) continue;
            const std::size_t count = (each->cmsg_len - CMSG_LEN(0)) / sizeof(int);
            for (std::size_t i = 0; i < count; ++i) {
                int fd = -1;
                std::memcpy(&fd, CMSG_DATA(each) + i * sizeof(int), sizeof fd);
                fds.emplace_back(fd);
            }
        }
        if (got == 0 && fds.empty()) {
            // End of file: the forwarder is gone. Nothing more will come; what is relayed goes on.
            error_code ignored;
            forwarder_->close(ignored);
            forwarder_.reset();
            return;
        }
        if (fds.size() != 1 || (message.msg_flags & MSG_CTRUNC) != 0) continue;  // fds closed
        serve(fds.front().release());
    }
    wait_for_forwarder();
}

void session_state::serve(int fd) {
    unique_fd owned(fd);
    // Over a bound the connection is closed at once: the client sees its connection end, and
    // the calls and the connections already served keep their descriptors (budget.hpp).
    if (connections_.size() >= bounds_.max_connections) {
        record_turned_away("too many connections of this run at once (" +
                           std::to_string(bounds_.max_connections) + ")");
        return;
    }
    const std::size_t descriptors = descriptor_limit();
    if (in_reserve(fd, descriptors)) {
        record_turned_away("cordon's descriptor table is nearly full (" +
                           std::to_string(descriptors) + " descriptors)");
        return;
    }
    const std::size_t budget = connection_budget(descriptors, bounds_.max_process_connections);
    if (connections_.size() >= few_connections &&
        process_connections().in_use() + budget / 4 >= budget) {
        record_turned_away("the rest of cordon's proxy connections (" + std::to_string(budget) +
                           " at once) are kept for runs that hold few");
        return;
    }
    auto counted = process_connections().try_take(budget);
    if (!counted) {
        record_turned_away("too many proxy connections in cordon at once (" +
                           std::to_string(budget) + ")");
        return;
    }
    int domain = 0;
    int type = 0;
    socklen_t size = sizeof domain;
    if (::getsockopt(fd, SOL_SOCKET, SO_DOMAIN, &domain, &size) != 0) return;
    size = sizeof type;
    if (::getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &size) != 0) return;
    if (type != SOCK_STREAM || (domain != AF_INET && domain != AF_INET6)) return;
    net::ip::tcp::socket socket(context_);
    error_code error;
    socket.assign(domain == AF_INET ? net::ip::tcp::v4() : net::ip::tcp::v6(), fd, error);
    if (error) return;
    (void)owned.release();
    auto served =
        std::make_shared<connection>(shared_from_this(), std::move(socket), std::move(*counted));
    connections_.emplace(served.get(), served);
    served->start();
}

void session_state::close() {
    if (closed_) return;
    closed_ = true;
    own_end_.reset();
    if (forwarder_) {
        error_code ignored;
        forwarder_->close(ignored);
        forwarder_.reset();
    }
    auto all = std::move(connections_);
    connections_.clear();
    for (auto& [key, served] : all)
        served->close();
}

void session_state::fail(const std::string& why) {
    {
        const std::lock_guard lock(mutex_);
        if (!report_.failure) report_.failure = why;
    }
    close();
}

session_report session_state::report() const {
    const std::lock_guard lock(mutex_);
    return report_;
}

void session_state::record_refusal(const std::string& destination, const std::string& reason,
                                   bool askable) {
    const std::lock_guard lock(mutex_);
    auto& blocked = report_.blocked;
    auto found = std::find_if(blocked.begin(), blocked.end(),
                              [&](const auto& each) { return each.destination == destination; });
    if (found != blocked.end()) {
        ++found->count;
    } else if (blocked.size() < bounds_.max_blocked) {
        blocked.push_back({destination, reason, 1, askable,
                           std::chrono::duration_cast<std::chrono::milliseconds>(
                               std::chrono::steady_clock::now() - opened_)});
    } else {
        ++report_.blocked_more;
    }
}

void session_state::record_connection() {
    const std::lock_guard lock(mutex_);
    ++report_.connections;
}

void session_state::record_turned_away(const std::string& reason) {
    bool first = false;
    {
        const std::lock_guard lock(mutex_);
        first = report_.refused_connections++ == 0;
        if (first) report_.refused_reason = reason;
    }
    // Once per run: a command that opens thousands would otherwise write thousands of lines.
    if (first) {
        log::warn(
            "the network proxy closed a run's new connection as it arrived: {}; the run's "
            "record counts every connection closed so",
            reason);
    }
}

void session_state::forget(const connection* which) {
    connections_.erase(which);
}

}  // namespace cordon::proxy::detail
