// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

// The network witness of one run (docs/network.md, "Denials"): what the network walls refused,
// seen as it happened rather than read off what the command printed. Under network deny and
// proxy the sandbox's last runner (the launcher, or the in-child confinement) installs a seccomp
// filter that hands each connect(2) to a supervisor (sandbox/confinement_extras.hpp,
// install_witness) and sends the filter's listener here. For each call this reads the address
// from the caller's memory and lets the call go on unchanged: the walls (the network namespace,
// Landlock, the main filter) refuse what they refuse, whatever is read here. A connection to a
// destination outside the sandbox's own loopback is what they refuse, and is recorded.
//
// All on one executor (the run's event loop): each call waits for one round trip through it. A
// kernel without user notification, or a listener already in place (a sandbox inside another),
// sends no listener: the run then has no witness and its denials are found as before, in what
// the command printed.
#pragma once

#include <sys/socket.h>

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/posix/stream_descriptor.hpp>
#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "cordon/confined_argv.hpp"
#include "cordon/unique_fd.hpp"
#include "sandbox/host_address.hpp"

namespace cordon::runtime {

// At most this many distinct destinations are kept; the rest are counted.
inline constexpr std::size_t witnessed_destinations = 16;

// A destination a connect(2) asked for outside the sandbox.
struct outside_destination {
    std::string destination;  // as the record writes it: "1.1.1.1:80", "[2606:4700::1111]:443"
    sandbox::ip_address address;
    std::uint16_t port = 0;
};

// The destination of a connect(2) to `address` (`size` bytes of it) when the walls refuse it:
// nullopt for AF_UNIX and every family but AF_INET and AF_INET6, for an address shorter than the
// kernel takes (16 bytes for IPv4, 24 for IPv6, whose scope it does not need), and, where the
// sandbox has a loopback of its own (`own_loopback`: a network namespace), for loopback and the
// unspecified address (which connects to loopback) in every form. Without a namespace of its own
// the host's loopback is outside too.
[[nodiscard]] std::optional<outside_destination> outside_of(const sockaddr_storage& address,
                                                            std::size_t size, bool own_loopback);

class network_witness : public std::enable_shared_from_this<network_witness> {
public:
    struct witnessed {
        std::vector<sandbox::network_facts::blocked_destination> destinations;
        std::uint64_t more = 0;  // refusals of destinations beyond those
    };

    // A witness serving on `where`, and the sandbox's end of its channel (for the run at
    // sandbox::network_witness_fd); or a one-line reason there is none.
    [[nodiscard]] static std::variant<std::pair<std::shared_ptr<network_witness>, unique_fd>,
                                      std::string>
    open(const boost::asio::any_io_executor& where, bool own_loopback);

    network_witness(const boost::asio::any_io_executor& where, unique_fd channel,
                    bool own_loopback);

    // Waits for the listener, then serves every call until the run's last process is gone.
    void start();
    // What was refused; serving stops (the descriptors are closed on the executor). Any thread.
    [[nodiscard]] witnessed finish();

private:
    void wait_for_listener();
    void receive_listener();
    void wait_for_call();
    void serve_call();
    void answer_one(int listener);
    void note(outside_destination seen);
    void close();

    boost::asio::any_io_executor where_;
    boost::asio::posix::stream_descriptor channel_;
    std::optional<boost::asio::posix::stream_descriptor> listener_;
    const bool own_loopback_;
    const std::vector<sandbox::ip_address> name_servers_;  // /etc/resolv.conf's
    const std::chrono::steady_clock::time_point opened_ = std::chrono::steady_clock::now();

    mutable std::mutex mutex_;  // guards seen_ only
    witnessed seen_;
};

}  // namespace cordon::runtime
