// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

#include "runtime/network_witness.hpp"

#include <linux/seccomp.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <sys/uio.h>

#include <algorithm>
#include <boost/asio/post.hpp>
#include <cerrno>
#include <cstddef>
#include <cstring>
#include <fstream>
#include <sstream>

#include "sandbox/host_address.hpp"

namespace cordon::runtime {

namespace net = boost::asio;
using boost::system::error_code;

namespace {

constexpr char walls_reason[] = "a direct connection, refused by the network walls";

// Whether the sandbox's own loopback is where `address` connects: 127/8, and 0/8 (0.0.0.0
// connects to loopback; the rest of it to nothing).
[[nodiscard]] bool own_loopback_v4(std::uint32_t value) noexcept {
    return (value >> 24) == 127 || (value >> 24) == 0;
}

// Whether the notification `id` still waits for its answer. Kernels before 5.17 numbered this
// ioctl as a read (SECCOMP_IOR), later ones as a write; both are tried.
[[nodiscard]] bool still_pending(int listener, std::uint64_t id) {
    if (::ioctl(listener, SECCOMP_IOCTL_NOTIF_ID_VALID, &id) == 0) return true;
    if (errno != EINVAL && errno != ENOTTY) return false;
    constexpr unsigned long older = SECCOMP_IOR(2, __u64);
    return ::ioctl(listener, older, &id) == 0;
}

// The name servers /etc/resolv.conf names (the sandbox reads the host's), for what a lookup
// under deny tries first.
[[nodiscard]] std::vector<sandbox::ip_address> configured_name_servers() {
    std::vector<sandbox::ip_address> out;
    std::ifstream file("/etc/resolv.conf");
    for (std::string line; std::getline(file, line);) {
        std::istringstream words(line);
        std::string key;
        std::string value;
        if (!(words >> key >> value) || key != "nameserver") continue;
        if (auto address = sandbox::parse_ip_address(value.substr(0, value.find('%')))) {
            out.push_back(*address);
        }
    }
    return out;
}

}  // namespace

std::optional<outside_destination> outside_of(const sockaddr_storage& address, std::size_t size,
                                              bool own_loopback) {
    outside_destination out;
    if (address.ss_family == AF_INET && size >= sizeof(sockaddr_in)) {
        const auto* v4 = reinterpret_cast<const sockaddr_in*>(&address);
        std::memcpy(out.address.bytes.data(), &v4->sin_addr, 4);
        out.address.v4 = true;
        out.port = ntohs(v4->sin_port);
    } else if (address.ss_family == AF_INET6 && size >= offsetof(sockaddr_in6, sin6_scope_id)) {
        const auto* v6 = reinterpret_cast<const sockaddr_in6*>(&address);
        std::memcpy(out.address.bytes.data(), &v6->sin6_addr, 16);
        out.port = ntohs(v6->sin6_port);
    } else {
        return std::nullopt;
    }
    if (own_loopback) {
        // Where the kernel itself connects to IPv4 loopback: an IPv4 address, or one mapped into
        // IPv6 (::ffff:127.0.0.1); and :: and ::1. Other embeddings (NAT64, 6to4) are routed as
        // IPv6, to nowhere here.
        const auto& bytes = out.address.bytes;
        const bool zero_prefix =
            std::all_of(bytes.begin(), bytes.begin() + 10, [](std::uint8_t b) { return b == 0; });
        const bool mapped =
            !out.address.v4 && zero_prefix && bytes[10] == 0xFF && bytes[11] == 0xFF;
        const bool own =
            out.address.v4 || mapped
                ? own_loopback_v4(std::uint32_t{bytes[out.address.v4 ? 0U : 12U]} << 24)
                : zero_prefix && bytes[10] == 0 && bytes[11] == 0 && bytes[12] == 0 &&
                      bytes[13] == 0 && bytes[14] == 0 && bytes[15] <= 1;
        if (own) return std::nullopt;
    }
    const std::string host = sandbox::to_string(out.address);
    out.destination = (out.address.v4 ? host : "[" + host + "]") + ":" + std::to_string(out.port);
    return out;
}

std::variant<std::pair<std::shared_ptr<network_witness>, unique_fd>, std::string>
network_witness::open(const net::any_io_executor& where, bool own_loopback) {
    int ends[2] = {-1, -1};
    if (::socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, ends) != 0) {
        return std::string("cannot create the network witness's socketpair: ") +
               std::strerror(errno);
    }
    unique_fd sandbox_end(ends[1]);
    auto witness = std::make_shared<network_witness>(where, unique_fd(ends[0]), own_loopback);
    return std::pair{std::move(witness), std::move(sandbox_end)};
}

network_witness::network_witness(const net::any_io_executor& where, unique_fd channel,
                                 bool own_loopback)
    : where_(where),
      channel_(where),
      own_loopback_(own_loopback),
      name_servers_(configured_name_servers()) {
    error_code ignored;
    channel_.assign(channel.get(), ignored);
    if (!ignored) (void)channel.release();
}

void network_witness::start() {
    if (channel_.is_open()) wait_for_listener();
}

void network_witness::wait_for_listener() {
    channel_.async_wait(net::posix::stream_descriptor::wait_read,
                        [self = shared_from_this()](const error_code& error) {
                            if (error || !self->channel_.is_open()) return;
                            self->receive_listener();
                        });
}

void network_witness::receive_listener() {
    char byte = 0;
    iovec data{&byte, 1};
    alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int) * 4)] = {};
    msghdr message{};
    message.msg_iov = &data;
    message.msg_iovlen = 1;
    message.msg_control = control;
    message.msg_controllen = sizeof control;
    const ssize_t got =
        ::recvmsg(channel_.native_handle(), &message, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
    if (got < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) {
        wait_for_listener();
        return;
    }
    std::vector<unique_fd> fds;
    for (cmsghdr* each = CMSG_FIRSTHDR(&message); got >= 0 && each != nullptr;
         each = CMSG_NXTHDR(&message, each)) {
        if (each->cmsg_level != SOL_SOCKET || each->cmsg_type != SCM_RIGHTS) continue;
        const std::size_t count = (each->cmsg_len - CMSG_LEN(0)) / sizeof(int);
        for (std::size_t i = 0; i < count; ++i) {
            int fd = -1;
            std::memcpy(&fd, CMSG_DATA(each) + i * sizeof(int), sizeof fd);
            fds.emplace_back(fd);
        }
    }
    // One message, one listener: anything else (end of file where the kernel gave none, an
    // error) leaves the run without a witness.
    error_code ignored;
    channel_.close(ignored);
    if (fds.size() != 1 || (message.msg_flags & MSG_CTRUNC) != 0) return;
    listener_.emplace(where_);
    listener_->assign(fds.front().get(), ignored);
    if (ignored) {
        listener_.reset();
        return;
    }
    (void)fds.front().release();
    wait_for_call();
}

void network_witness::wait_for_call() {
    listener_->async_wait(net::posix::stream_descriptor::wait_read,
                          [self = shared_from_this()](const error_code& error) {
                              if (error || !self->listener_ || !self->listener_->is_open()) return;
                              self->serve_call();
                          });
}

void network_witness::serve_call() {
    // Every call waiting, not one per wake-up: Asio watches the listener edge-triggered, and two
    // calls that arrived together wake it once. At most a batch per turn, so that other handlers
    // on the loop get theirs; the rest is served in a posted turn, which asks poll() again and
    // so misses none.
    constexpr int batch = 64;
    const int listener = listener_->native_handle();
    for (int served = 0; served < batch; ++served) {
        pollfd ready{listener, POLLIN, 0};
        const int polled = ::poll(&ready, 1, 0);
        if (polled < 0 && errno == EINTR) continue;
        if (polled <= 0 || (ready.revents & POLLIN) == 0) {
            if (polled > 0 && (ready.revents & (POLLHUP | POLLERR | POLLNVAL)) != 0) {
                close();  // the run's last process is gone
                return;
            }
            wait_for_call();
            return;
        }
        answer_one(listener);
    }
    net::post(where_, [self = shared_from_this()] {
        if (self->listener_ && self->listener_->is_open()) self->serve_call();
    });
}

void network_witness::answer_one(int listener) {
    // A call is waiting (RECV would block on none): take it, read what it connects to, and let it
    // go on. ENOENT: its caller went away meanwhile.
    seccomp_notif call{};
    if (::ioctl(listener, SECCOMP_IOCTL_NOTIF_RECV, &call) != 0) return;
    if (call.data.nr == SYS_connect) {
        // The kernel reads the length as an int, and takes an IPv6 address from 24 bytes (without
        // its scope): read what it reads. A read cut short at an unmapped page keeps what came.
        const int length = static_cast<int>(static_cast<std::uint32_t>(call.data.args[2]));
        sockaddr_storage address{};
        const std::size_t wanted =
            length <= 0 ? 0 : std::min<std::size_t>(static_cast<std::size_t>(length), 28);
        iovec local{&address, wanted};
        iovec remote{reinterpret_cast<void*>(call.data.args[1]), wanted};
        const ssize_t read = wanted == 0 ? -1
                                         : ::process_vm_readv(static_cast<pid_t>(call.pid), &local,
                                                              1, &remote, 1, 0);
        // Read, then checked still pending: a pid reused meanwhile would be another's.
        if (read > 0 && still_pending(listener, call.id)) {
            if (auto seen = outside_of(address, static_cast<std::size_t>(read), own_loopback_)) {
                note(std::move(*seen));
            }
        }
    }
    seccomp_notif_resp answer{};
    answer.id = call.id;
    answer.flags = SECCOMP_USER_NOTIF_FLAG_CONTINUE;
    if (::ioctl(listener, SECCOMP_IOCTL_NOTIF_SEND, &answer) != 0 && errno == EINVAL) {
        // A kernel that cannot let the call go on (the witness is planned from Linux 5.5 only):
        // it fails as the walls would fail it, rather than wait for ever.
        answer.flags = 0;
        answer.error = -ENETUNREACH;
        (void)::ioctl(listener, SECCOMP_IOCTL_NOTIF_SEND, &answer);
    }
}

void network_witness::note(outside_destination outside) {
    const auto counted = [&] {
        auto& seen = seen_.destinations;
        const auto found = std::find_if(seen.begin(), seen.end(), [&](const auto& each) {
            return each.destination == outside.destination;
        });
        if (found != seen.end()) {
            ++found->count;
            return true;
        }
        if (seen.size() >= witnessed_destinations) {
            ++seen_.more;
            return true;
        }
        return false;
    };
    {
        const std::lock_guard lock(mutex_);
        if (counted()) return;
    }
    // Whether the whole network could be offered for it (render.hpp, network_retry): a public
    // address of another host, or one of the host's name servers on port 53 (how any name is
    // reached: a lookup under deny tries it first). Never the host's loopback, its LAN,
    // link-local or its own addresses otherwise. Asked without the lock held: the route lookup is
    // a round trip to the kernel.
    const bool name_server =
        outside.port == 53 && std::find(name_servers_.begin(), name_servers_.end(),
                                        outside.address) != name_servers_.end();
    const bool askable = name_server || (sandbox::is_public(outside.address) &&
                                         !sandbox::reaches_this_host(outside.address));
    const std::lock_guard lock(mutex_);
    if (counted()) return;
    sandbox::network_facts::blocked_destination entry;
    entry.destination = std::move(outside.destination);
    entry.reason = walls_reason;
    entry.count = 1;
    entry.askable = askable;
    entry.by_walls = true;
    entry.first_at = std::chrono::duration_cast<std::chrono::milliseconds>(
        std::chrono::steady_clock::now() - opened_);
    seen_.destinations.push_back(std::move(entry));
}

network_witness::witnessed network_witness::finish() {
    net::post(where_, [self = shared_from_this()] { self->close(); });
    const std::lock_guard lock(mutex_);
    return seen_;
}

void network_witness::close() {
    error_code ignored;
    channel_.close(ignored);
    if (listener_) listener_->close(ignored);
}

}  // namespace cordon::runtime
