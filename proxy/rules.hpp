// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

// The proxy's decision: whether a destination may be reached, taken before any DNS query or
// connection (a lookup of a refused name would itself send the name out), and whether the
// addresses a name resolved to may be connected to (DNS rebinding: a public name that resolves to
// loopback or the LAN is refused). Pure functions, no I/O.
#pragma once

#include <boost/asio/ip/address.hpp>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "base/result.hpp"
#include "cordon/policy.hpp"
#include "sandbox/domain_pattern.hpp"

namespace cordon::proxy {

using address_list = std::vector<boost::asio::ip::address>;

// A session's rules, parsed once.
struct rules {
    std::vector<sandbox::domain_pattern> allowed;
    std::vector<sandbox::domain_pattern> denied;
    std::vector<std::pair<std::string, boost::asio::ip::address>> resolve;  // proxy_resolve
};

// The rules `network` spells, or a one-line reason they are invalid (`invalid allowed_domains
// entry "x": not a host name`, `invalid proxy_resolve entry "x": ...`).
[[nodiscard]] std::variant<rules, std::string> compile_rules(const sandbox::network_rules& network);

// How a destination is written in a refusal and in the report: `example.com:443`,
// `[::1]:80`, `10.1.2.3:22`.
[[nodiscard]] std::string format_destination(std::string_view host, bool address,
                                             std::uint16_t port);

// A destination the rules let through, before its name is resolved.
struct route {
    sandbox::destination_host host;
    std::uint16_t port = 0;
    std::string destination;  // format_destination()
    // Set when no DNS query is to be made: an address listed in allowed_domains (connected to as
    // is), or a proxy_resolve entry's address.
    std::optional<address_list> addresses;
    bool trusted = false;  // an address listed, or a proxy_resolve entry: no public-address check
};

// Why a destination is refused, for the code that decides on it (whether the refusal is the
// policy's, what it advises: request.hpp, refusal_body()); the reason's text is for people only.
enum class refusal_kind {
    not_a_host_name,     // the request names no host
    port_zero,           // port 0
    denied,              // denied_domains lists it
    address_not_listed,  // an address allowed_domains does not list
    name_not_listed,     // a name allowed_domains does not list
    unresolvable,        // the name resolves to no address: a failure, not the policy's refusal
    this_host,           // it resolves to the unspecified address, which is this host
    denied_address,      // it resolves to an address denied_domains lists
    private_address,     // it resolves to a loopback, private or link-local address
    own_address,         // it resolves to an address the kernel delivers to this host
};

// A destination refused, and why (one line).
struct refusal {
    refusal_kind kind;
    std::string destination;
    std::string reason;
    // Whether a person could be asked to open it: a name no pattern covers, or a public address
    // of another host none lists. Never what denied_domains refuses, nor loopback, the LAN,
    // link-local (cloud metadata) or the host's own addresses (sandbox/host_address.hpp).
    bool askable = false;
};

// The decision for `host_text` (as the request names it) on `port`: denied_domains first, then
// allowed_domains; an address must be listed itself. No DNS query is made here.
[[nodiscard]] std::variant<route, refusal> decide(const rules& rules, std::string_view host_text,
                                                  std::uint16_t port);

// Whether `address` is a public unicast address (sandbox::is_public).
[[nodiscard]] bool is_public(const boost::asio::ip::address& address);

// The reason the addresses a name resolved to may not be connected to, or nullopt: the
// unspecified address, or any one of them (or an IPv4 address it carries) denied, whatever the
// route; else, for a route not trusted, any one of them not itself listed in allowed_domains for
// `port` and either not public (is_public) or delivered to this host (the kernel's route
// lookup: sandbox::reaches_this_host).
[[nodiscard]] std::optional<base::failure<refusal_kind>> check_addresses(
    const rules& rules, const route& route, const address_list& addresses);

}  // namespace cordon::proxy
