// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

// The service's thread and the sessions' lifetimes (service.hpp says why there is one thread).
#include "proxy/service.hpp"

#include <sys/socket.h>

#include <algorithm>
#include <boost/asio/post.hpp>
#include <cerrno>
#include <cstring>
#include <exception>
#include <future>
#include <system_error>
#include <thread>
#include <utility>

#include "base/log.hpp"
#include "proxy/session_state.hpp"

namespace cordon::proxy {

namespace detail {

namespace {

// How long a close waits for the proxy's thread to run it. Nothing on that thread blocks
// (service.hpp), so a close waits only for the handlers queued before it: microseconds, or
// milliseconds under load. The bound is a backstop against a defect that would otherwise hold
// the caller, a run's strand (in `cordon mcp`, the supervisor's loop and every job on it),
// forever: past it the close stays queued and runs when the thread gets to it, and the caller
// goes on. The run's processes are gone by then (the session is closed when its run has ended),
// so nothing of the run uses the connections meanwhile.
constexpr std::chrono::seconds close_patience{10};

}  // namespace

service_core::service_core(std::shared_ptr<resolver> names, limits bounds)
    : names_(names ? std::move(names) : system_resolver()), bounds_(bounds) {}

service_core::~service_core() {
    // Every lookup is abandoned before context_ is destroyed: a lookup belongs to a connection,
    // which abandons it when it closes (connection.cpp), and close_all() has closed every session
    // still open with its connections (a closed session closed its own). A lookup's thread that
    // returns later posts nothing. The join is quick: close_all() let go of the work, and a
    // lookup in flight is no work for the thread (resolver.hpp).
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
    if (!thread_.joinable()) {
        // The first session: the thread starts, and runs until the service is destroyed.
        work_.emplace(context_.get_executor());
        serving_ = true;
        try {
            thread_ = std::thread([this] { run(); });
        } catch (const std::system_error& error) {
            serving_ = false;
            work_.reset();
            forwarder_end.reset();
            return std::string("cannot start the proxy's thread: ") + error.what();
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
    {
        const std::lock_guard lock(lifecycle_);
        const auto found = std::find(open_.begin(), open_.end(), state);
        if (found == open_.end()) return;  // closed already (the service's destructor)
        open_.erase(found);
    }
    close_on_thread(state);
}

void service_core::close_all() {
    std::vector<std::shared_ptr<session_state>> closing;
    {
        const std::lock_guard lock(lifecycle_);
        closing = std::exchange(open_, {});
    }
    for (const auto& state : closing)
        close_on_thread(state);
    // Only now: the closes above were work the thread had to run. The thread ends once the
    // closed sessions' handlers have run; a lookup in flight is not work (the closed connections
    // abandoned theirs).
    const std::lock_guard lock(lifecycle_);
    work_.reset();
}

bool service_core::running() const {
    return serving_;
}

void service_core::close_on_thread(const std::shared_ptr<session_state>& state) {
    {
        const std::lock_guard failing(failing_mutex_);
        std::erase_if(failing_, [&](const auto& each) {
            const auto held = each.lock();
            return !held || held == state;
        });
    }
    // Shared with the handler, which may run after this returns (close_patience).
    auto closed = std::make_shared<std::promise<void>>();
    auto done = closed->get_future();
    {
        // Decided and posted under the lock that close_all() lets go of the work under: a close
        // posted to a running thread is work it runs before it can end.
        const std::lock_guard lock(lifecycle_);
        // A session's objects are touched on the proxy's thread only: on it, or once it has left
        // run() (nothing runs there any more), the close is made here and now.
        if (std::this_thread::get_id() == thread_.get_id() || !serving_) {
            state->close();
            return;
        }
        boost::asio::post(context_, [state, closed] {
            try {
                state->close();
            } catch (...) {
                // close() reports nothing; the promise below is what the caller waits for
            }
            closed->set_value();
        });
    }
    if (done.wait_for(close_patience) != std::future_status::ready) {
        log::error(
            "the network proxy's thread did not close a run's session within {} s; it closes it "
            "when it gets to it",
            close_patience.count());
    }
}

void service_core::run() noexcept {
    for (;;) {
        try {
            context_.run();
            break;
        } catch (...) {
            // Fail closed, then serve on: run() may be called again after an exception
            // (Boost.Asio, io_context::run); sessions opened afterwards are served.
            fail_sessions(std::current_exception());
        }
    }
    serving_ = false;
}

void service_core::fail_sessions(const std::exception_ptr& thrown) noexcept {
    // Every session stops taking connections and closes those it serves; one that cannot even
    // record why (bad_alloc) is closed all the same.
    std::string why;
    try {
        try {
            std::rethrow_exception(thrown);
        } catch (const std::exception& error) {
            why = std::string("the proxy's thread failed: ") + error.what();
        } catch (...) {
            why = "the proxy's thread failed";
        }
        log::error("{}: every open session of the network proxy is closed", why);
    } catch (...) {
    }
    std::vector<std::shared_ptr<session_state>> sessions;
    try {
        const std::lock_guard failing(failing_mutex_);
        for (const auto& each : failing_) {
            if (auto held = each.lock()) sessions.push_back(std::move(held));
        }
    } catch (...) {
    }
    for (const auto& state : sessions) {
        try {
            state->fail(why);
        } catch (...) {
            try {
                state->close();
            } catch (...) {
            }
        }
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
