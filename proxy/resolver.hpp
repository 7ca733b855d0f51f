// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

// How the proxy turns a name into addresses: an interface, so that tests can map names to the
// addresses they choose (a loopback test server, a private range) and count the queries made.
// system_resolver() asks the system (getaddrinfo), each lookup on a thread of its own.
//
// A lookup cannot be interrupted (getaddrinfo has no cancel; glibc's gai_cancel() cannot cancel
// one under way), so the proxy never waits for one: its caller abandons it (the connection closed,
// its deadline passed, the session or the service closed) and forgets it. What a lookup's thread
// touches after that is its own: a `lookup` it shares with the caller, whose mutex decides once
// whether the answer is posted or dropped.
#pragma once

#include <atomic>
#include <boost/asio/any_io_executor.hpp>
#include <cstddef>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <variant>

#include "base/result.hpp"
#include "proxy/budget.hpp"
#include "proxy/rules.hpp"

namespace cordon::proxy {

// Lookups in flight at once in a process (answered or abandoned ends one), per session (one
// abandoned counts until its thread returns), and the system resolver's threads at once (an
// abandoned lookup's thread runs on until the system's resolver gives up); the threads of every
// system resolver of the process together are also kept to a sixteenth of the soft descriptor
// limit (budget.hpp), a lookup holding a socket while it asks.
inline constexpr std::size_t default_max_lookups_in_flight = 64;
inline constexpr std::size_t default_max_lookups_per_session = 8;
inline constexpr std::size_t default_max_lookup_threads = 1024;

// The one line a connection gets when a bound is reached, or a lookup's thread cannot start.
inline constexpr const char* too_many_lookups = "too many DNS lookups in flight";

// The bounds the resolver and the sessions keep on lookups (budget.hpp's counter).
using lookup_slot = counted_slot;
using lookup_slots = counted_slots;

// Why a lookup gave no address: the kind for code, the message (one line) for people.
enum class lookup_failure {
    no_address,    // the name has none ("cannot be resolved")
    too_many,      // a bound on lookups was reached (too_many_lookups)
    cannot_start,  // the lookup's thread could not start
};

class resolver {
public:
    // The addresses a name has (at least one), or why it has none.
    using result = base::result<address_list, lookup_failure>;
    using completion = std::function<void(result)>;

    // One lookup, shared by its caller and whatever answers it (a thread of its own, for the
    // system resolver). The mutex makes answer() and abandon() exclusive: once abandon() has
    // returned the completion is never called, nothing is posted to the executor any more (its
    // io_context may be destroyed), and the completion, with everything it captured, has been
    // destroyed on the abandoning thread, never on the answering one.
    class lookup {
    public:
        // `executor`: where `done` is posted; held without counting as outstanding work, so that
        // a lookup in flight never keeps the proxy's thread running. `slot` (may be empty): the
        // session's count, given back when the lookup is answered or destroyed.
        lookup(const boost::asio::any_io_executor& executor, completion done,
               std::optional<lookup_slot> slot = std::nullopt);
        lookup(const lookup&) = delete;
        lookup& operator=(const lookup&) = delete;
        ~lookup() = default;

        // From any thread, at most once: gives the slots back, then posts `done(found)` unless
        // the lookup was abandoned.
        void answer(result found);
        // From the executor's thread (the caller's). Idempotent. Gives back a slot held with
        // hold(), not the session's (a session's lookups count until their answers).
        void abandon() noexcept;
        // A slot counted until the lookup is answered or abandoned, whichever comes first: the
        // process-wide bound, which a session that is gone never holds on to.
        void hold(lookup_slot slot);
        // Where the answer goes, for a resolver that posts more than the answer from inside
        // async_resolve (a test's resolver whose answer throws on the proxy's thread); a thread of
        // the resolver's own must use answer(), the only post abandon() excludes.
        [[nodiscard]] const boost::asio::any_io_executor& executor() const noexcept {
            return executor_;
        }

    private:
        std::mutex mutex_;
        const boost::asio::any_io_executor executor_;
        completion done_;                  // guarded by mutex_; empty once answered or abandoned
        std::optional<lookup_slot> slot_;  // guarded by mutex_
        std::optional<lookup_slot> held_;  // guarded by mutex_
    };

    virtual ~resolver() = default;
    // Starts resolving `name` (a canonical host name) and answers `pending` exactly once, from
    // any thread but never from inside this call unless it posts (lookup::answer() always does),
    // and fast: a resolver out of room answers at once, it never queues. An exception the
    // completion throws escapes into the proxy's thread (service.hpp: the sessions then fail
    // closed).
    virtual void async_resolve(const std::string& name, std::shared_ptr<lookup> pending) = 0;
};

// The blocking lookup the system resolver runs on its threads: a name to its addresses, or why
// there are none. Tests inject one that blocks until they release it.
using lookup_function = std::function<resolver::result(const std::string& name)>;

// getaddrinfo(name, no service, AI_NUMERICSERV, SOCK_STREAM/IPPROTO_TCP, any family): each
// address once, in the order given; "cannot be resolved" when there is none.
[[nodiscard]] resolver::result getaddrinfo_lookup(const std::string& name);

// Runs `lookup` for each name on a detached thread of its own, at most `most_in_flight` lookups
// neither answered nor abandoned and `most_threads` threads at once in the process; over either,
// or when a thread cannot be created, the answer is at once too_many_lookups. One run's abandoned
// lookups (a slow zone, a run that ended) hold threads, not the bound every run shares. Lookups run
// in parallel: a slow DNS zone holds up its own lookups only. A thread is never joined: it ends
// when its lookup returns (the system's resolver timeout, see resolv.conf(5)); a lookup in flight
// never delays a session's close, the service's destruction or the process's exit.
[[nodiscard]] std::shared_ptr<resolver> system_resolver(
    lookup_function lookup = getaddrinfo_lookup,
    std::size_t most_in_flight = default_max_lookups_in_flight,
    std::size_t most_threads = default_max_lookup_threads);

}  // namespace cordon::proxy
