// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

#include "proxy/rules.hpp"

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <netinet/in.h>

#include <algorithm>
#include <cstring>

#include "proxy/request.hpp"

namespace cordon::proxy {

namespace {

[[nodiscard]] std::optional<std::string> compile_patterns(
    const std::vector<std::string>& texts, std::string_view key,
    std::vector<sandbox::domain_pattern>& out) {
    for (const std::string& text : texts) {
        auto parsed = sandbox::parse_domain_pattern(text);
        if (auto* reason = std::get_if<std::string>(&parsed)) {
            return "invalid " + std::string(key) + " entry \"" + printable(text) + "\": " + *reason;
        }
        out.push_back(std::get<sandbox::domain_pattern>(std::move(parsed)));
    }
    return std::nullopt;
}

[[nodiscard]] bool listed(const std::vector<sandbox::domain_pattern>& patterns,
                          const sandbox::destination_host& host, std::uint16_t port) {
    return std::any_of(patterns.begin(), patterns.end(),
                       [&](const auto& pattern) { return sandbox::matches(pattern, host, port); });
}

[[nodiscard]] bool public_v4(std::uint32_t value) noexcept {
    struct range {
        std::uint32_t network;
        int bits;
    };
    constexpr auto v4 = [](unsigned a, unsigned b, unsigned c, unsigned d) {
        return std::uint32_t{a << 24 | b << 16 | c << 8 | d};
    };
    static constexpr range not_public[] = {
        {v4(0, 0, 0, 0), 8},        // "this network"
        {v4(10, 0, 0, 0), 8},       // private
        {v4(100, 64, 0, 0), 10},    // carrier-grade NAT
        {v4(127, 0, 0, 0), 8},      // loopback
        {v4(169, 254, 0, 0), 16},   // link-local (and cloud metadata services)
        {v4(172, 16, 0, 0), 12},    // private
        {v4(192, 0, 0, 0), 24},     // IETF protocol assignments
        {v4(192, 0, 2, 0), 24},     // documentation
        {v4(192, 88, 99, 0), 24},   // 6to4 relay anycast
        {v4(192, 168, 0, 0), 16},   // private
        {v4(198, 18, 0, 0), 15},    // benchmarking
        {v4(198, 51, 100, 0), 24},  // documentation
        {v4(203, 0, 113, 0), 24},   // documentation
        {v4(224, 0, 0, 0), 4},      // multicast
        {v4(240, 0, 0, 0), 4},      // reserved, and the broadcast address
    };
    return std::none_of(std::begin(not_public), std::end(not_public), [&](const range& each) {
        return (value >> (32 - each.bits)) == (each.network >> (32 - each.bits));
    });
}

[[nodiscard]] std::uint32_t v4_at(const std::array<unsigned char, 16>& bytes, std::size_t at) {
    return std::uint32_t{bytes[at]} << 24 | std::uint32_t{bytes[at + 1]} << 16 |
           std::uint32_t{bytes[at + 2]} << 8 | std::uint32_t{bytes[at + 3]};
}

// The IPv4 address an IPv6 one carries to the same host: IPv4-mapped (::ffff:a.b.c.d),
// IPv4-compatible (::a.b.c.d), NAT64's well-known prefix (64:ff9b::a.b.c.d) or 6to4
// (2002:AABB:CCDD::). A connection to one of these reaches a.b.c.d where the host or its
// network translates them, so an address denied_domains names is refused in these forms too.
[[nodiscard]] std::optional<boost::asio::ip::address> embedded_v4(
    const boost::asio::ip::address& address) {
    if (!address.is_v6()) return std::nullopt;
    const auto bytes = address.to_v6().to_bytes();
    const auto zero = [&](std::size_t begin, std::size_t end) {
        return std::all_of(bytes.begin() + static_cast<std::ptrdiff_t>(begin),
                           bytes.begin() + static_cast<std::ptrdiff_t>(end),
                           [](unsigned char b) { return b == 0; });
    };
    const auto v4 = [&](std::size_t at) {
        return boost::asio::ip::address{boost::asio::ip::address_v4{v4_at(bytes, at)}};
    };
    if (zero(0, 10) && bytes[10] == bytes[11] && (bytes[10] == 0xFF || bytes[10] == 0)) {
        return v4(12);
    }
    if (bytes[0] == 0x00 && bytes[1] == 0x64 && bytes[2] == 0xFF && bytes[3] == 0x9B &&
        zero(4, 12)) {
        return v4(12);
    }
    if (bytes[0] == 0x20 && bytes[1] == 0x02) return v4(2);
    return std::nullopt;
}

}  // namespace

std::variant<rules, std::string> compile_rules(const sandbox::network_rules& network) {
    rules out;
    if (auto failed = compile_patterns(network.allowed_domains, "allowed_domains", out.allowed)) {
        return *failed;
    }
    if (auto failed = compile_patterns(network.denied_domains, "denied_domains", out.denied)) {
        return *failed;
    }
    for (const sandbox::host_mapping& mapping : network.proxy_resolve) {
        const std::string entry = printable(mapping.name) + "=" + printable(mapping.address);
        const auto name = sandbox::parse_destination_host(mapping.name);
        if (!name || name->address) {
            return "invalid proxy_resolve entry \"" + entry + "\": not a host name";
        }
        boost::system::error_code error;
        const auto address = boost::asio::ip::make_address(mapping.address, error);
        if (error) return "invalid proxy_resolve entry \"" + entry + "\": not an address";
        out.resolve.emplace_back(name->host, address);
    }
    return out;
}

std::string format_destination(std::string_view host, bool address, std::uint16_t port) {
    const bool brackets = address && host.find(':') != std::string_view::npos;
    std::string out;
    if (brackets) out += '[';
    out += host;
    if (brackets) out += ']';
    return out + ':' + std::to_string(port);
}

std::variant<route, refusal> decide(const rules& rules, std::string_view host_text,
                                    std::uint16_t port) {
    auto host = sandbox::parse_destination_host(host_text);
    if (!host) {
        const std::string shown = printable(host_text);
        return refusal{format_destination(shown, false, port), "not a host name", shown};
    }
    route out;
    out.destination = format_destination(host->host, host->address, port);
    if (port == 0) return refusal{out.destination, "port 0", host->host};
    if (listed(rules.denied, *host, port)) {
        return refusal{out.destination, "in denied_domains", host->host};
    }
    if (!listed(rules.allowed, *host, port)) {
        return refusal{out.destination,
                       host->address ? "an address, not a name" : "not in allowed_domains",
                       host->host};
    }
    if (host->address) {
        out.addresses = address_list{boost::asio::ip::make_address(host->host)};
        out.trusted = true;
    } else {
        for (const auto& [name, address] : rules.resolve) {
            if (name == host->host) {
                if (!out.addresses) out.addresses.emplace();
                out.addresses->push_back(address);
            }
        }
        out.trusted = out.addresses.has_value();
    }
    out.host = std::move(*host);
    out.port = port;
    return out;
}

bool is_public(const boost::asio::ip::address& address) noexcept {
    if (address.is_v4()) return public_v4(address.to_v4().to_uint());
    const auto bytes = address.to_v6().to_bytes();
    const auto zero_until = [&](std::size_t end) {
        return std::all_of(bytes.begin(), bytes.begin() + static_cast<std::ptrdiff_t>(end),
                           [](unsigned char b) { return b == 0; });
    };
    // IPv4-mapped (::ffff:a.b.c.d) and IPv4-compatible (::a.b.c.d, also :: and ::1).
    if (zero_until(10) &&
        ((bytes[10] == 0xFF && bytes[11] == 0xFF) || (bytes[10] == 0 && bytes[11] == 0))) {
        return public_v4(v4_at(bytes, 12));
    }
    // NAT64's well-known prefix 64:ff9b::/96.
    if (bytes[0] == 0x00 && bytes[1] == 0x64 && bytes[2] == 0xFF && bytes[3] == 0x9B &&
        std::all_of(bytes.begin() + 4, bytes.begin() + 12,
                    [](unsigned char b) { return b == 0; })) {
        return public_v4(v4_at(bytes, 12));
    }
    // 6to4: 2002:AABB:CCDD::/48 carries a.b.c.d.
    if (bytes[0] == 0x20 && bytes[1] == 0x02) return public_v4(v4_at(bytes, 2));
    if ((bytes[0] & 0xE0) != 0x20) return false;  // not global unicast 2000::/3
    if (bytes[0] == 0x20 && bytes[1] == 0x01 && (bytes[2] & 0xFE) == 0) return false;  // 2001::/23
    if (bytes[0] == 0x20 && bytes[1] == 0x01 && bytes[2] == 0x0D && bytes[3] == 0xB8) return false;
    if (bytes[0] == 0x3F && bytes[1] == 0xFF && (bytes[2] & 0xF0) == 0) return false;  // 3fff::/20
    return true;
}

std::optional<std::string> check_addresses(const rules& rules, const route& route,
                                           const address_list& addresses) {
    if (addresses.empty()) return "cannot be resolved";
    // Connecting to 0.0.0.0 (any of 0.0.0.0/8 that connects at all) or :: reaches this host's
    // loopback, whoever listed or mapped it: refused even where the address was listed.
    for (const auto& address : addresses) {
        const auto zero_network = [](const boost::asio::ip::address_v4& v4) {
            return (v4.to_uint() >> 24) == 0;
        };
        if (address.is_unspecified() || (address.is_v4() && zero_network(address.to_v4())) ||
            (address.is_v6() && address.to_v6().is_v4_mapped() &&
             zero_network(
                 boost::asio::ip::make_address_v4(boost::asio::ip::v4_mapped, address.to_v6())))) {
            return "the unspecified address (" + address.to_string() + ") is this host itself";
        }
    }
    if (route.trusted) return std::nullopt;
    for (const auto& address : addresses) {
        const sandbox::destination_host host{address.to_string(), true};
        const auto carried = embedded_v4(address);
        if (listed(rules.denied, host, route.port) ||
            (carried && listed(rules.denied, sandbox::destination_host{carried->to_string(), true},
                               route.port))) {
            return "resolves to a denied address (" + host.host + ")";
        }
        if (listed(rules.allowed, host, route.port)) continue;
        if (!is_public(address)) return "resolves to a private address (" + host.host + ")";
        // A public address of one of this host's interfaces is the host itself: the proxy
        // connects from the host's namespace, where its services listen on every interface.
        if (is_local_address(address)) {
            return "resolves to this host's own address (" + host.host + ")";
        }
    }
    return std::nullopt;
}

bool is_local_address(const boost::asio::ip::address& address) {
    ifaddrs* interfaces = nullptr;
    if (::getifaddrs(&interfaces) != 0) return true;  // cannot tell: treat it as the host's
    bool found = false;
    for (const ifaddrs* each = interfaces; each != nullptr && !found; each = each->ifa_next) {
        if (each->ifa_addr == nullptr) continue;
        if (each->ifa_addr->sa_family == AF_INET && address.is_v4()) {
            const auto* v4 = reinterpret_cast<const sockaddr_in*>(each->ifa_addr);
            found = ntohl(v4->sin_addr.s_addr) == address.to_v4().to_uint();
        } else if (each->ifa_addr->sa_family == AF_INET6 && address.is_v6()) {
            const auto* v6 = reinterpret_cast<const sockaddr_in6*>(each->ifa_addr);
            boost::asio::ip::address_v6::bytes_type bytes{};
            std::memcpy(bytes.data(), v6->sin6_addr.s6_addr, bytes.size());
            found = bytes == address.to_v6().to_bytes();
        }
    }
    ::freeifaddrs(interfaces);
    return found;
}

}  // namespace cordon::proxy
