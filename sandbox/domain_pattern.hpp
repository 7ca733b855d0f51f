// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

// The destinations of the network proxy's allow and deny lists (docs/network.md, "The allow
// list"), and the names a request may ask for. A pattern is one of
//   example.com        that name exactly
//   *.example.com      any name below example.com (a.example.com, a.b.example.com), not itself
//   10.1.2.3, ::1      that address (an IPv6 address may be written [::1])
// each optionally followed by `:port` (then only that port; without one, any port). Names are
// ASCII (an internationalised name is written in its xn-- form), compared without case and
// without a trailing dot; a name whose last label is a number is no name (`1.2.3`, `0x7f.1`:
// the C library reads those as IPv4 addresses) and is refused.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <variant>

namespace cordon::sandbox {

struct domain_pattern {
    std::string host;  // lower case; without the `*.` of a wildcard; an address canonical
    bool wildcard = false;
    bool address = false;               // host is an IPv4 or IPv6 address
    std::optional<std::uint16_t> port;  // nullopt: any port
    friend bool operator==(const domain_pattern&, const domain_pattern&) = default;
};

// The pattern `text` spells, or a one-line reason it spells none ("empty", "not a host name",
// ...), for messages such as `invalid --allow-domain "x": <reason>`.
[[nodiscard]] std::variant<domain_pattern, std::string> parse_domain_pattern(std::string_view text);

// The canonical text: `*.example.com:443`, `[::1]:80`, `10.1.2.3`. parse_domain_pattern() of it
// gives the pattern back.
[[nodiscard]] std::string to_string(const domain_pattern& pattern);

// A destination as a request names it: a host name (canonical: lower case, no trailing dot) or
// an address (canonical text, IPv6 without brackets).
struct destination_host {
    std::string host;
    bool address = false;
};

// The host a request names (a CONNECT authority's or URL's host, a SOCKS5 name or address,
// with IPv6 brackets already removed), or nullopt when it is neither a valid name nor an address.
[[nodiscard]] std::optional<destination_host> parse_destination_host(std::string_view text);

// Whether `pattern` covers `host` on `port`. An address pattern covers only that address, a name
// pattern only names.
[[nodiscard]] bool matches(const domain_pattern& pattern, const destination_host& host,
                           std::uint16_t port) noexcept;

}  // namespace cordon::sandbox
