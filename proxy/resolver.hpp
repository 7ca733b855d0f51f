// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

// How the proxy turns a name into addresses: an interface, so that tests can map names to the
// addresses they choose (a loopback test server, a private range) and count the queries made.
// system_resolver() asks the system (getaddrinfo, through Boost.Asio's resolver).
#pragma once

#include <boost/asio/any_io_executor.hpp>
#include <functional>
#include <memory>
#include <string>
#include <variant>

#include "proxy/rules.hpp"

namespace cordon::proxy {

class resolver {
public:
    // The addresses a name has (at least one), or a one-line reason it has none.
    using result = std::variant<address_list, std::string>;
    using completion = std::function<void(result)>;

    virtual ~resolver() = default;
    // Starts resolving `name` (a canonical host name). `done` is called exactly once, through
    // `executor` (the proxy's thread), never from inside this call. An exception `done` throws
    // escapes into the proxy's thread (service.hpp: the sessions then fail closed).
    virtual void async_resolve(const boost::asio::any_io_executor& executor,
                               const std::string& name, completion done) = 0;
};

// getaddrinfo through Boost.Asio's resolver, which runs it on a thread of its own: a slow DNS
// server holds up that one lookup, not the proxy. A lookup cannot be interrupted: only the
// service's destructor waits for one in flight to return (the resolver's timeout, a few seconds at
// worst); closing a session or opening one never does.
[[nodiscard]] std::shared_ptr<resolver> system_resolver();

}  // namespace cordon::proxy
