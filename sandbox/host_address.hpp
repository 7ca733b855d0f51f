// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

// Where a connection to an IP address goes, for the proxy's checks (proxy/rules.hpp) and for the
// words an approval question uses to name an address (policy/escalation.cpp). Two questions:
//
// - Which addresses the connection reaches. An IPv6 address may carry an IPv4 one that the host,
//   its network or a relay translates it to: IPv4-mapped (::ffff:a.b.c.d), IPv4-compatible
//   (::a.b.c.d), NAT64's well-known prefix (64:ff9b::a.b.c.d), 6to4 (2002:AABB:CCDD::) and Teredo
//   (2001:0::/32, whose server and client addresses are both IPv4). Every check is made of the
//   address and of each IPv4 address it carries.
// - Whether the host itself is the destination. Not a comparison with the interfaces' addresses
//   (a `local` route makes any address the host's, as cloud load balancers and hairpinned public
//   addresses do, with no interface holding it): the kernel is asked where a packet would go
//   (an RTM_GETROUTE lookup, as `ip route get` makes), and a `local`, `broadcast` or `anycast`
//   answer is the host. When the kernel cannot be asked, the answer is yes: fail closed.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace cordon::sandbox {

struct ip_address {
    bool v4 = false;
    std::array<std::uint8_t, 16> bytes{};  // IPv4: the first four, in network order

    [[nodiscard]] static ip_address from_v4(std::uint32_t host_order) noexcept;
    [[nodiscard]] std::uint32_t v4_value() const noexcept;  // host order; v4 only
    friend bool operator==(const ip_address&, const ip_address&) = default;
};

// The address `text` spells (IPv4 dotted quad, IPv6 with or without brackets), or nullopt.
[[nodiscard]] std::optional<ip_address> parse_ip_address(std::string_view text);
[[nodiscard]] std::string to_string(const ip_address& address);

// The IPv4 addresses an IPv6 address carries (the list above), none for any other.
[[nodiscard]] std::vector<ip_address> carried_ipv4(const ip_address& address);

// Whether `address` is a public unicast address. Not public: loopback, private (10/8,
// 172.16/12, 192.168/16, fc00::/7), CGNAT (100.64/10), link-local (169.254/16, fe80::/10),
// unspecified, multicast, broadcast, 0/8, 192.0.0/24, the documentation and benchmark ranges,
// 240/4, everything outside 2000::/3 for IPv6 (and 2001::/23, 2001:db8::/32, 3fff::/20 within
// it). An IPv6 address that carries IPv4 addresses is public only when each of them is.
[[nodiscard]] bool is_public(const ip_address& address);

// Whether a packet to `address`, or to any IPv4 address it carries, would be delivered to this
// host (the kernel's route lookup, in the calling thread's network namespace; yes when it cannot
// be asked, and for a `blackhole` route, whose answer cannot be told from a malformed request's).
// Never blocks: the kernel answers within the request.
[[nodiscard]] bool reaches_this_host(const ip_address& address);

// What an address is, in words a person reads correctly, for an approval question: "the host's
// own loopback", "this host's own address", "a private network address", "link-local, where
// cloud metadata services answer", "a special-purpose address"; empty for a public address of
// another host.
[[nodiscard]] std::string describe_address(const ip_address& address);

}  // namespace cordon::sandbox
