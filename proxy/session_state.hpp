// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

// The proxy's insides (service.hpp is the interface): a session's state and a connection it
// serves. Everything here runs on the service's one thread, except session_state::report().
#pragma once

#include <atomic>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/posix/stream_descriptor.hpp>
#include <boost/asio/steady_timer.hpp>
#include <cstdint>
#include <exception>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <unordered_map>
#include <variant>
#include <vector>

#include "proxy/service.hpp"

namespace cordon::proxy::detail {

class connection;

class session_state : public std::enable_shared_from_this<session_state> {
public:
    session_state(boost::asio::io_context& context, rules policy, std::shared_ptr<resolver> names,
                  const limits& bounds, unique_fd own_end);

    void start();                                 // begins reading the forwarder end
    void close();                                 // closes the forwarder end and every connection
    void fail(const std::string& why);            // records the failure, then close()
    [[nodiscard]] session_report report() const;  // any thread

    // For the connections.
    [[nodiscard]] boost::asio::io_context& context() noexcept { return context_; }
    [[nodiscard]] const rules& policy() const noexcept { return policy_; }
    [[nodiscard]] resolver& names() noexcept { return *names_; }
    [[nodiscard]] const limits& bounds() const noexcept { return bounds_; }
    // The session's lookups in flight (limits::max_lookups_per_session).
    [[nodiscard]] lookup_slots& lookups() noexcept { return *lookups_; }
    void record_refusal(const std::string& destination, const std::string& reason, bool askable);
    void record_connection();
    // A connection closed as it arrived (budget.hpp): counted, and logged once per session.
    void record_turned_away(const std::string& reason);
    void forget(const connection* which);

private:
    void wait_for_forwarder();
    void receive_from_forwarder();
    void serve(int fd);

    boost::asio::io_context& context_;
    const rules policy_;
    const std::shared_ptr<resolver> names_;
    const limits bounds_;
    const std::chrono::steady_clock::time_point opened_ = std::chrono::steady_clock::now();
    // Shared with the lookups' threads: an abandoned lookup gives its slot back when its thread
    // returns, which may be after the session is gone.
    const std::shared_ptr<lookup_slots> lookups_;
    unique_fd own_end_;  // until start() wraps it
    std::optional<boost::asio::posix::stream_descriptor> forwarder_;
    std::unordered_map<const connection*, std::shared_ptr<connection>> connections_;
    bool closed_ = false;

    mutable std::mutex mutex_;  // guards report_ only
    session_report report_;
};

// One client connection: its request read and decided, then relayed to the destination.
class connection : public std::enable_shared_from_this<connection> {
public:
    // `counted`: the connection's place in the process's budget, given back when it closes.
    connection(std::shared_ptr<session_state> session, boost::asio::ip::tcp::socket client,
               counted_slot counted);
    void start();
    void close();

private:
    enum class stage {
        sniff,
        http,
        socks5_greeting,
        socks5_request,
        resolving,  // a lookup in flight: lookup_ set, the timer at the lookup's deadline
        deciding,   // the addresses checked and connected to, the timer at the connect deadline
        relaying,
        closing
    };
    enum class kind { http_tunnel, http_forward, socks5 };

    void arm_timer(std::chrono::milliseconds after);
    void arm_timer_at(std::chrono::steady_clock::time_point deadline);
    void resolve();
    void on_timeout();
    void read_request();
    void on_request_bytes(std::string_view bytes);
    void on_socks5();
    void decide(const std::string& host, std::uint16_t port);
    void on_resolved(resolver::result result);
    void connect(const address_list& addresses);
    void connect_next(std::size_t next, boost::system::error_code last);
    void on_connected();
    // A refusal by the policy: the record's, answered 403 (SOCKS5: not allowed).
    void refuse(const refusal& refused);
    // A destination that cannot be reached, which is no refusal by the policy: answered 502
    // (SOCKS5: host unreachable).
    void unreachable(const std::string& destination, const std::string& reason);
    void fail_upstream(unsigned http_status, std::uint8_t socks_reply, const std::string& why);
    void reply_then_close(std::string bytes);
    void drain();
    void relay(bool from_client);

    std::shared_ptr<session_state> session_;
    std::optional<counted_slot> counted_;  // until close()
    const std::chrono::steady_clock::time_point arrived_ = std::chrono::steady_clock::now();
    boost::asio::ip::tcp::socket client_;
    boost::asio::ip::tcp::socket upstream_;
    boost::asio::steady_timer timer_;
    std::chrono::steady_clock::time_point connect_deadline_;
    std::shared_ptr<resolver::lookup> lookup_;  // in flight while stage_ is resolving
    std::uint64_t timer_phase_ = 0;
    stage stage_ = stage::sniff;
    kind kind_ = kind::http_tunnel;
    std::vector<char> read_buffer_;
    std::string inbox_;  // SOCKS5 bytes not yet parsed; then bytes for the destination
    std::optional<http_head_reader> http_;
    std::string head_;  // a forwarded request's rewritten head
    std::optional<route> route_;
    std::vector<boost::asio::ip::tcp::endpoint> endpoints_;  // the checked addresses, in order
    std::vector<char> to_upstream_;
    std::vector<char> to_client_;
    bool client_done_ = false;    // the client sent EOF (relayed as shutdown)
    bool upstream_done_ = false;  // the destination sent EOF
    std::size_t drained_ = 0;
    bool timed_out_ = false;
    bool closed_ = false;
};

// What a service and its sessions share: the context, the thread, the open sessions.
//
// The thread's life. It starts with the first session opened and runs until the service is
// destroyed, kept running by a work guard held all that time, whether sessions are open or not
// (an idle Asio thread waits in epoll and costs nothing). It never stops by itself, so nothing
// ever decides whether a thread that is about to stop can be reused: a thread that ran out of
// work between a session's close and the next open() would leave that session unstarted and its
// close waiting for a thread that is gone.
class service_core : public std::enable_shared_from_this<service_core> {
public:
    service_core(std::shared_ptr<resolver> names, limits bounds);
    ~service_core();

    [[nodiscard]] std::variant<std::shared_ptr<session_state>, std::string> open(
        const sandbox::network_rules& network, unique_fd& forwarder_end);
    void close(const std::shared_ptr<session_state>& state);  // returns once it is closed
    // The service's destructor: closes every session, then lets the thread end once idle.
    void close_all();
    [[nodiscard]] bool running() const;

private:
    void run() noexcept;
    void fail_sessions(const std::exception_ptr& thrown) noexcept;
    void close_on_thread(const std::shared_ptr<session_state>& state);

    boost::asio::io_context context_;
    const std::shared_ptr<resolver> names_;
    const limits bounds_;

    // Starting the thread, and which sessions are counted open. Never held while waiting for the
    // proxy's thread, so the thread may take it too (a close on the thread).
    mutable std::mutex lifecycle_;
    // From the first open until close_all(): the thread never runs out of work before.
    std::optional<boost::asio::executor_work_guard<boost::asio::io_context::executor_type>> work_;
    std::thread thread_;
    std::vector<std::shared_ptr<session_state>> open_;
    // The thread is in run(): set before it starts, cleared as it leaves.
    std::atomic<bool> serving_{false};

    // The sessions the thread fails when a handler throws (a copy of open_). Taken on the
    // proxy's thread, never while waiting for it.
    std::mutex failing_mutex_;
    std::vector<std::weak_ptr<session_state>> failing_;
};

}  // namespace cordon::proxy::detail
