// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

// cordon's filtering network proxy: what a command confined under `network = proxy` reaches the
// network through (docs/network.md says what a user sees).
//
// Design.
// - No listening socket anywhere. The command runs in a network namespace of its own with only
//   loopback; a forwarder inside the sandbox (the launcher) accepts its TCP connections on
//   127.0.0.1:3128 and hands each accepted socket to this proxy as an fd, over an unnamed
//   AF_UNIX SOCK_SEQPACKET socketpair the launcher inherits (SCM_RIGHTS, one fd per message).
//   A socket bound into the sandbox would have a name another user, or the command itself after
//   a change of namespace, could reach; an inherited socketpair has none: only the run's own
//   forwarder holds the other end.
// - One thread. A service (one per cordon process) runs every session's connections on one
//   Boost.Asio thread, started with the first session opened and kept until the service is
//   destroyed, idle between sessions (an idle Asio thread waits in epoll and costs nothing). It
//   never stops by itself: a thread that stopped when the last session closed could be found
//   "still running" by the next open() an instant before it ended, leaving that session never
//   started and its close waiting for it forever. Nothing on it blocks: a slow client or a huge
//   header holds up that connection only, and each connection's memory is bounded (the limits
//   below). Nothing waits for it without a bound either: a close made on the thread itself is
//   made there and then, and one waited for from elsewhere gives up after a bound (service.cpp)
//   and runs when the thread gets to it.
// - DNS off the thread, never waited for. A lookup is a blocking getaddrinfo, which nothing can
//   cancel: each runs on a detached thread of its own (resolver.hpp), in parallel with the others,
//   under a deadline (lookup_timeout) and two bounds (per session, per process) that fail fast
//   rather than queue. A lookup whose connection, session or service ends is abandoned, not
//   joined, and is no work for the proxy's thread: a slow DNS zone delays the connections waiting
//   for its names, never another connection, another run, a session's close or the process's
//   exit.
// - The decision comes before DNS. A destination is checked against denied_domains and
//   allowed_domains (sandbox/domain_pattern.hpp) before any query: looking a refused name up
//   would already send it out (a DNS exfiltration channel). Only then is an allowed name
//   resolved, through proxy_resolve (trusted as the operator wrote it) or the resolver.
// - DNS rebinding. Every address an allowed name resolves to must be public (rules.hpp,
//   is_public) unless listed itself, and the proxy connects only to the addresses it checked,
//   never resolving again: a name cannot be turned into a way to 127.0.0.1, the LAN or a cloud
//   metadata service. An address is reached only when allowed_domains lists it.
// - Fail closed. If an exception escapes a handler on the proxy's thread, every open session
//   records the failure and closes its forwarder end and its connections: the forwarder stops
//   handing connections over and the run loses its network, it never gains any. The thread
//   itself goes on, and serves the sessions opened afterwards.
// - One request per forwarded plain-HTTP connection: the request head is rewritten with
//   `Connection: close` and the rest of the connection is relayed raw. A second, pipelined
//   request on the same client connection therefore goes to the same destination, which was
//   decided already, and the destination closes after the first: a client cannot reach a second
//   host through a connection the proxy let through for the first.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "cordon/policy.hpp"
#include "cordon/unique_fd.hpp"
#include "proxy/budget.hpp"
#include "proxy/request.hpp"
#include "proxy/resolver.hpp"

namespace cordon::proxy {

namespace detail {
class service_core;
class session_state;
}  // namespace detail

// A destination the proxy refused, counted.
struct blocked_destination {
    std::string destination;  // "example.com:443", "[::1]:80", "10.1.2.3:22"
    // One line: "not in allowed_domains", "in denied_domains", "an address, not a name",
    // "resolves to a private address (10.0.0.5)", "cannot be resolved", "not a host name", ...
    std::string reason;
    std::uint64_t count = 0;
    // Whether a person could be asked to open it (rules.hpp, refusal::askable).
    bool askable = false;
    // When it was first refused, from the session's opening (the run's start).
    std::chrono::milliseconds first_at{0};
};

struct session_report {
    std::vector<blocked_destination> blocked;  // at most max_blocked distinct, first seen first
    std::uint64_t blocked_more = 0;            // refusals of destinations beyond those
    std::uint64_t connections = 0;             // connections let through (connected upstream)
    // Connections closed as they arrived because a bound was reached (limits, budget.hpp), and
    // the first one's reason: "too many connections of this run at once (256)", ...
    std::uint64_t refused_connections = 0;
    std::string refused_reason;
    // Set when the session stopped serving before it was closed, and why.
    std::optional<std::string> failure;
};

inline constexpr std::size_t default_max_connections = 256;
inline constexpr std::chrono::milliseconds default_first_byte_timeout{10'000};
inline constexpr std::chrono::milliseconds default_head_timeout{30'000};
inline constexpr std::chrono::milliseconds default_connect_timeout{30'000};
inline constexpr std::chrono::milliseconds default_lookup_timeout{5'000};
inline constexpr std::size_t default_relay_buffer = 16 * 1024;
inline constexpr std::size_t default_max_blocked = 16;

// The bounds every session of a service keeps; tests lower them.
struct limits {
    // Connections served at once per session; one more is closed as soon as it arrives.
    std::size_t max_connections = default_max_connections;
    // Connections served at once by every session of every service of the process, at most: the
    // bound is an eighth of the soft descriptor limit when that is lower (a quarter of the table,
    // two descriptors each: budget.hpp). One more, or one whose descriptor arrives within
    // call_reserve of the limit, is closed as it arrives.
    std::size_t max_process_connections = default_max_process_connections;
    // From a connection's arrival until its first byte: a client sends its request as soon as it
    // has connected (HTTP, SOCKS5; a CONNECT tunnel's server-speaks-first protocol comes after
    // it), so one that has sent nothing by then holds a descriptor for nothing and is closed.
    std::chrono::milliseconds first_byte_timeout = default_first_byte_timeout;
    // From a connection's arrival until its request (HTTP head, SOCKS5 greeting and request) is
    // read; a slower client is closed.
    std::chrono::milliseconds head_timeout = default_head_timeout;
    // From the decision until the destination is connected (the DNS lookup included): 504 or
    // SOCKS5 0x04 after it.
    std::chrono::milliseconds connect_timeout = default_connect_timeout;
    // From the start of a DNS lookup until its answer: after it the lookup is abandoned and the
    // client gets 502 "DNS lookup timed out" (SOCKS5 0x04), no refusal recorded. Below
    // connect_timeout, or the connect timeout's 504 comes first.
    std::chrono::milliseconds lookup_timeout = default_lookup_timeout;
    // Lookups of one session in flight at once, abandoned ones included until their thread has
    // returned: one more gets 502 "too many DNS lookups in flight" (SOCKS5 0x04) at once. The
    // system resolver also bounds the process's (default_max_lookups_in_flight and
    // default_max_lookup_threads, resolver.hpp).
    std::size_t max_lookups_per_session = default_max_lookups_per_session;
    std::size_t relay_buffer = default_relay_buffer;  // per direction and connection
    std::size_t header_limit = default_header_limit;  // an HTTP head; over it: 431
    std::size_t max_blocked = default_max_blocked;    // distinct entries in a report
};

// One run's proxy. Closing it (the destructor) closes its forwarder end and every connection it
// serves, abandoning their lookups, and returns when the proxy's thread has closed them (that
// thread never waits for DNS), or at once when closed on that thread.
class session {
public:
    session(const session&) = delete;
    session& operator=(const session&) = delete;
    ~session();

    // The sandbox's end of an AF_UNIX SOCK_SEQPACKET socketpair (SOCK_CLOEXEC), for the
    // forwarder: each message it sends carries one byte of data and one fd (SCM_RIGHTS), an
    // accepted client connection. A message without exactly one fd is ignored (its fds closed).
    // End of file on it (the forwarder exited) closes nothing: connections already relayed go
    // on until the session is closed. Taken once; later calls return an invalid fd.
    [[nodiscard]] unique_fd take_forwarder_end();

    // A snapshot, from any thread.
    [[nodiscard]] session_report report() const;

private:
    friend class service;
    session(std::shared_ptr<detail::service_core> core,
            std::shared_ptr<detail::session_state> state, unique_fd forwarder_end);

    std::shared_ptr<detail::service_core> core_;
    std::shared_ptr<detail::session_state> state_;
    unique_fd forwarder_end_;
};

// The proxy of one cordon process (a `cordon run`, or a `cordon mcp` server serving many runs).
// open() and closing sessions are safe from any thread; a session closed on the proxy's own
// thread is closed there and then. The service itself is not destroyed on that thread.
class service {
public:
    // `resolver` nullptr: the system's (system_resolver()).
    explicit service(std::shared_ptr<resolver> resolver = nullptr, limits bounds = {});
    service(const service&) = delete;
    service& operator=(const service&) = delete;
    // Closes every session still open (abandoning every lookup) and lets the thread end, which a
    // lookup in flight does not hold; it is joined once the last session object is gone too. The
    // session objects stay valid (their report() still answers) and close nothing more when
    // destroyed.
    ~service();

    // A session enforcing rules.allowed_domains, denied_domains and proxy_resolve (whatever
    // rules.policy says: the caller opens one for `proxy` only). The proxy's thread starts with
    // the first session and lasts as long as the service. The session, or a one-line reason
    // there is none (an invalid pattern or proxy_resolve entry, a socketpair or thread that
    // cannot be made).
    [[nodiscard]] std::variant<std::unique_ptr<session>, std::string> open(
        const sandbox::network_rules& rules);

    // Whether the proxy's thread runs: from the first session opened until the service is
    // destroyed, with sessions open or not (tests).
    [[nodiscard]] bool running() const;

private:
    std::shared_ptr<detail::service_core> core_;
};

}  // namespace cordon::proxy
