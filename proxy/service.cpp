// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

// The service's thread and the sessions' lifetimes (service.hpp says why there is one thread).
#include "proxy/service.hpp"

#include <sys/socket.h>

#include <algorithm>
#include <boost/asio/post.hpp>
#include <cerrno>
#include <cstring>
#include <future>

#include "proxy/session_state.hpp"

namespace cordon::proxy {

namespace detail {

service_core::service_core(std::shared_ptr<resolver> names, limits bounds)
    : names_(names ? std::move(names) : system_resolver()), bounds_(bounds) {}

service_core::~service_core() {
    // Every lookup is abandoned before context_ is destroyed: a lookup belongs to a connection,
    // which abandons it when it closes (connection.cpp), and close_all() has closed every session
    // still open with its connections (a closed session closed its own). A lookup's thread that
    // returns later posts nothing. The join is quick: a lookup in flight is no work for the
    // thread (resolver.hpp).
    close_all();
    if (thread_.joinable()) thread_.join();
}

std::variant<std::shared_ptr<session_state>, std::string> service_core::open(
    const sandbox::network_rules& network, unique_fd& forwarder_end) {
    auto compiled = compile_rules(network);
    if (auto* reason = std::get_if<std::string>(&compiled)) return *reason;
    int ends[2] = {-1, -1};
    if (::socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, ends) != 0) {
        return std::string("cannot create the proxy's socketpair: ") + std::strerror(errno);
    }
    unique_fd own_end(ends[0]);
    forwarder_end.reset(ends[1]);
    auto state = std::make_shared<session_state>(context_, std::get<rules>(std::move(compiled)),
                                                 names_, bounds_, std::move(own_end));
    const std::lock_guard lock(lifecycle_);
    if (!work_) {
        // The work is taken first: a context not stopped now cannot stop afterwards. A thread
        // the last session left that is still running (the closing handlers) then serves again;
        // one that has stopped has nothing in flight, and joining it is quick.
        work_.emplace(context_.get_executor());
        if (!thread_.joinable() || context_.stopped()) {
            if (thread_.joinable()) thread_.join();
            context_.restart();
            thread_ = std::thread([this] { run(); });
        }
    }
    open_.push_back(state);
    {
        const std::lock_guard failing(failing_mutex_);
        std::erase_if(failing_, [](const auto& each) { return each.expired(); });
        failing_.push_back(state);
    }
    boost::asio::post(context_, [state] { state->start(); });
    return state;
}

void service_core::close(const std::shared_ptr<session_state>& state) {
    const std::lock_guard lock(lifecycle_);
    const auto found = std::find(open_.begin(), open_.end(), state);
    if (found == open_.end()) return;  // closed already (the service's destructor)
    open_.erase(found);
    close_on_thread(state);
    stop_if_idle();
}

void service_core::close_all() {
    const std::lock_guard lock(lifecycle_);
    for (const auto& state : open_)
        close_on_thread(state);
    open_.clear();
    stop_if_idle();
}

bool service_core::running() const {
    const std::lock_guard lock(lifecycle_);
    return work_.has_value();
}

void service_core::close_on_thread(const std::shared_ptr<session_state>& state) {
    {
        const std::lock_guard failing(failing_mutex_);
        std::erase_if(failing_, [&](const auto& each) {
            const auto held = each.lock();
            return !held || held == state;
        });
    }
    // The thread runs while a session is open (work_ holds it), so the close is run and the
    // promise kept; a session's objects are touched on that thread only.
    std::promise<void> closed;
    auto done = closed.get_future();
    boost::asio::post(context_, [state, &closed] {
        try {
            state->close();
        } catch (...) {
            // close() reports nothing; the promise below is what the caller waits for
        }
        closed.set_value();
    });
    done.wait();
}

void service_core::stop_if_idle() {
    if (!open_.empty() || !work_) return;
    // No more work once the closed sessions' handlers have run: run() returns and the thread
    // ends by itself. A lookup in flight (getaddrinfo, which nothing can cancel) is not work: the
    // closed connections abandoned theirs. It is not joined here, which would wait only for those
    // handlers; the next open() serves on it again or joins it; the destructor joins it.
    work_.reset();
}

void service_core::run() {
    for (;;) {
        std::string why;
        try {
            context_.run();
            return;
        } catch (const std::exception& error) {
            why = std::string("the proxy's thread failed: ") + error.what();
        } catch (...) {
            why = "the proxy's thread failed";
        }
        // Fail closed: every session stops taking connections and closes those it serves.
        // run() may be called again after an exception (Boost.Asio, io_context::run).
        std::vector<std::shared_ptr<session_state>> sessions;
        {
            const std::lock_guard failing(failing_mutex_);
            for (const auto& each : failing_) {
                if (auto held = each.lock()) sessions.push_back(std::move(held));
            }
        }
        for (const auto& state : sessions)
            state->fail(why);
    }
}

}  // namespace detail

session::session(std::shared_ptr<detail::service_core> core,
                 std::shared_ptr<detail::session_state> state, unique_fd forwarder_end)
    : core_(std::move(core)), state_(std::move(state)), forwarder_end_(std::move(forwarder_end)) {}

session::~session() {
    core_->close(state_);
    forwarder_end_.reset();
}

unique_fd session::take_forwarder_end() {
    return std::move(forwarder_end_);
}

session_report session::report() const {
    return state_->report();
}

service::service(std::shared_ptr<resolver> resolver, limits bounds)
    : core_(std::make_shared<detail::service_core>(std::move(resolver), bounds)) {}

service::~service() {
    core_->close_all();
}

std::variant<std::unique_ptr<session>, std::string> service::open(
    const sandbox::network_rules& rules) {
    unique_fd forwarder_end;
    auto opened = core_->open(rules, forwarder_end);
    if (auto* reason = std::get_if<std::string>(&opened)) return *reason;
    return std::unique_ptr<session>(
        new session(core_, std::get<std::shared_ptr<detail::session_state>>(std::move(opened)),
                    std::move(forwarder_end)));
}

bool service::running() const {
    return core_->running();
}

}  // namespace cordon::proxy
