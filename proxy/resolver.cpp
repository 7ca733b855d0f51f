// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

#include "proxy/resolver.hpp"

#include <netdb.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <algorithm>
#include <boost/asio/execution/outstanding_work.hpp>
#include <boost/asio/ip/address.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/prefer.hpp>
#include <cstring>
#include <optional>
#include <system_error>
#include <thread>

namespace cordon::proxy {

resolver::lookup::lookup(const boost::asio::any_io_executor& executor, completion done,
                         std::optional<lookup_slot> slot)
    : executor_(boost::asio::prefer(executor, boost::asio::execution::outstanding_work.untracked)),
      done_(std::move(done)),
      slot_(std::move(slot)) {}

void resolver::lookup::answer(result found) {
    const std::lock_guard lock(mutex_);
    slot_.reset();
    held_.reset();
    if (!done_) return;  // abandoned
    // Posted under the lock: abandon() cannot return between the check and the post, so the
    // io_context the executor belongs to is alive here (its service abandons every lookup before
    // destroying it, service.cpp).
    boost::asio::post(executor_, [done = std::move(done_), found = std::move(found)]() mutable {
        done(std::move(found));
    });
    done_ = nullptr;
}

void resolver::lookup::hold(lookup_slot slot) {
    const std::lock_guard lock(mutex_);
    if (done_) held_.emplace(std::move(slot));  // answered or abandoned already: given back now
}

void resolver::lookup::abandon() noexcept {
    completion dropped;
    std::optional<lookup_slot> held;
    {
        const std::lock_guard lock(mutex_);
        dropped.swap(done_);
        held.swap(held_);
    }
    // `dropped` (and the connection it holds) is destroyed here, on the caller's thread, outside
    // the lock.
}

resolver::result getaddrinfo_lookup(const std::string& name) {
    addrinfo hints{};
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_protocol = IPPROTO_TCP;
    hints.ai_flags = AI_NUMERICSERV;
    addrinfo* found = nullptr;
    if (::getaddrinfo(name.c_str(), nullptr, &hints, &found) != 0) {
        return base::fail(lookup_failure::no_address, "cannot be resolved");
    }
    address_list addresses;
    for (const addrinfo* each = found; each != nullptr; each = each->ai_next) {
        boost::asio::ip::address address;
        if (each->ai_family == AF_INET && each->ai_addrlen >= sizeof(sockaddr_in)) {
            sockaddr_in v4{};
            std::memcpy(&v4, each->ai_addr, sizeof v4);
            address = boost::asio::ip::address_v4(ntohl(v4.sin_addr.s_addr));
        } else if (each->ai_family == AF_INET6 && each->ai_addrlen >= sizeof(sockaddr_in6)) {
            sockaddr_in6 v6{};
            std::memcpy(&v6, each->ai_addr, sizeof v6);
            boost::asio::ip::address_v6::bytes_type bytes{};
            std::memcpy(bytes.data(), &v6.sin6_addr, bytes.size());
            address = boost::asio::ip::address_v6(bytes, v6.sin6_scope_id);
        } else {
            continue;
        }
        if (std::find(addresses.begin(), addresses.end(), address) == addresses.end()) {
            addresses.push_back(address);
        }
    }
    ::freeaddrinfo(found);
    if (addresses.empty()) return base::fail(lookup_failure::no_address, "cannot be resolved");
    return addresses;
}

namespace {

// A thread per lookup, detached, rather than a pool: a pool of N threads queues the N+1st lookup
// behind the slow ones (one slow zone would again delay every run), and a pool that grows on
// demand is a thread per lookup with more state. Creating a thread costs tens of microseconds, a
// DNS round trip milliseconds; the process-wide bound caps the threads. None is joined: nothing
// could make it return sooner, and what it touches is its own (the lookup, the function, a slot).
class thread_resolver final : public resolver {
public:
    thread_resolver(lookup_function function, std::size_t most_in_flight, std::size_t most_threads)
        : function_(std::make_shared<const lookup_function>(std::move(function))),
          in_flight_(std::make_shared<lookup_slots>(most_in_flight)),
          threads_(std::make_shared<lookup_slots>(most_threads)) {}

    void async_resolve(const std::string& name, std::shared_ptr<lookup> pending) override {
        auto counted = in_flight_->try_take();
        auto slot = counted ? threads_->try_take() : std::nullopt;
        // Every system resolver's threads together, within the process's share of the descriptor
        // table (budget.hpp): an abandoned lookup holds its socket until it returns.
        auto process_slot = slot ? process_lookup_threads().try_take(lookup_thread_budget(
                                       descriptor_limit(), default_max_lookup_threads))
                                 : std::nullopt;
        if (!counted || !slot || !process_slot) {
            pending->answer(base::fail(lookup_failure::too_many, too_many_lookups));
            return;
        }
        pending->hold(std::move(*counted));
        try {
            std::thread([function = function_, name, pending, thread_slot = std::move(*slot),
                         process_thread_slot = std::move(*process_slot)]() mutable {
                // An exception must not leave a detached thread (std::terminate). A lookup left
                // unanswered (bad_alloc on the way) gets its deadline's answer instead.
                std::optional<result> found;
                try {
                    found = (*function)(name);
                } catch (...) {
                    try {
                        found = base::fail(lookup_failure::no_address, "cannot be resolved");
                    } catch (...) {
                    }
                }
                thread_slot.release();
                process_thread_slot.release();
                try {
                    if (found) pending->answer(std::move(*found));
                } catch (...) {
                }
            }).detach();
        } catch (const std::system_error& error) {
            // pthread_create's EAGAIN (RLIMIT_NPROC, threads-max): a fast failure, as over the
            // bound. The thread's slot went with the callable.
            pending->answer(
                error.code() == std::errc::resource_unavailable_try_again
                    ? base::fail(lookup_failure::too_many, too_many_lookups)
                    : base::fail(lookup_failure::cannot_start,
                                 "cannot start a DNS lookup (" + error.code().message() + ")"));
        }
    }

private:
    const std::shared_ptr<const lookup_function> function_;
    const std::shared_ptr<lookup_slots> in_flight_;
    const std::shared_ptr<lookup_slots> threads_;
};

}  // namespace

std::shared_ptr<resolver> system_resolver(lookup_function lookup, std::size_t most_in_flight,
                                          std::size_t most_threads) {
    return std::make_shared<thread_resolver>(std::move(lookup), most_in_flight, most_threads);
}

}  // namespace cordon::proxy
