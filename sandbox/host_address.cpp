// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

#include "sandbox/host_address.hpp"

#include <arpa/inet.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "cordon/unique_fd.hpp"

namespace cordon::sandbox {

namespace {

constexpr std::uint32_t v4(unsigned a, unsigned b, unsigned c, unsigned d) {
    return std::uint32_t{a << 24 | b << 16 | c << 8 | d};
}

struct range {
    std::uint32_t network;
    int bits;
};

[[nodiscard]] bool within(std::uint32_t value, const range& each) noexcept {
    return (value >> (32 - each.bits)) == (each.network >> (32 - each.bits));
}

template <std::size_t N>
[[nodiscard]] bool within_any(std::uint32_t value, const range (&ranges)[N]) noexcept {
    return std::any_of(std::begin(ranges), std::end(ranges),
                       [&](const range& each) { return within(value, each); });
}

constexpr range loopback_v4[] = {{v4(0, 0, 0, 0), 8}, {v4(127, 0, 0, 0), 8}};
constexpr range link_local_v4[] = {{v4(169, 254, 0, 0), 16}};
constexpr range private_v4[] = {{v4(10, 0, 0, 0), 8},
                                {v4(100, 64, 0, 0), 10},
                                {v4(172, 16, 0, 0), 12},
                                {v4(192, 168, 0, 0), 16}};
constexpr range not_public_v4[] = {
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

[[nodiscard]] std::uint32_t v4_at(const std::array<std::uint8_t, 16>& bytes, std::size_t at) {
    return std::uint32_t{bytes[at]} << 24 | std::uint32_t{bytes[at + 1]} << 16 |
           std::uint32_t{bytes[at + 2]} << 8 | std::uint32_t{bytes[at + 3]};
}

[[nodiscard]] bool zero(const std::array<std::uint8_t, 16>& bytes, std::size_t begin,
                        std::size_t end) {
    return std::all_of(bytes.begin() + static_cast<std::ptrdiff_t>(begin),
                       bytes.begin() + static_cast<std::ptrdiff_t>(end),
                       [](std::uint8_t b) { return b == 0; });
}

// Whether the IPv6 address itself (not what it carries) is public: global unicast 2000::/3,
// without 2001::/23 (Teredo and IETF assignments), 2001:db8::/32 and 3fff::/20 (documentation).
[[nodiscard]] bool public_v6(const std::array<std::uint8_t, 16>& bytes) noexcept {
    if ((bytes[0] & 0xE0) != 0x20) return false;
    if (bytes[0] == 0x20 && bytes[1] == 0x01 && (bytes[2] & 0xFE) == 0) return false;
    if (bytes[0] == 0x20 && bytes[1] == 0x01 && bytes[2] == 0x0D && bytes[3] == 0xB8) return false;
    if (bytes[0] == 0x3F && bytes[1] == 0xFF && (bytes[2] & 0xF0) == 0) return false;
    return true;
}

// Whether any of `address` and the IPv4 addresses it carries satisfies `v4_test` (IPv4) or
// `v6_test` (the IPv6 address itself).
template <typename V4, typename V6>
[[nodiscard]] bool any_form(const ip_address& address, V4 v4_test, V6 v6_test) {
    if (address.v4) return v4_test(address.v4_value());
    if (v6_test(address.bytes)) return true;
    const auto carried = carried_ipv4(address);
    return std::any_of(carried.begin(), carried.end(),
                       [&](const ip_address& each) { return v4_test(each.v4_value()); });
}

// What the kernel's route lookup says of an address.
enum class route_answer { this_host, elsewhere, unknown };

// Asks the kernel where a packet to `address` would go (RTM_GETROUTE, as `ip route get`). A
// `local`, `broadcast` or `anycast` route is this host; no route at all (ENETUNREACH), an
// `unreachable` (EHOSTUNREACH) or `prohibit` (EACCES) one, or an IPv6 address on a host without
// IPv6 (EAFNOSUPPORT, EOPNOTSUPP) sends no packet anywhere. Anything else is unknown, a
// `blackhole` route's answer (EINVAL, which a malformed request would also get) included. The
// kernel answers within the send (the reply is queued before it returns), so the reply is read
// without waiting: never a hang of the caller (the proxy's one thread).
[[nodiscard]] route_answer ask_route(const ip_address& address) {
    const unique_fd fd(::socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE));
    if (!fd) return route_answer::unknown;
    constexpr std::uint32_t sequence = 1;
    struct {
        nlmsghdr header;
        rtmsg route;
        alignas(NLMSG_ALIGNTO) char attributes[RTA_SPACE(16)];
    } request{};
    const std::size_t size = address.v4 ? 4 : 16;
    request.header.nlmsg_type = RTM_GETROUTE;
    request.header.nlmsg_flags = NLM_F_REQUEST;
    request.header.nlmsg_seq = sequence;
    request.route.rtm_family = address.v4 ? AF_INET : AF_INET6;
    request.route.rtm_dst_len = static_cast<unsigned char>(size * 8);
    rtattr destination{};
    destination.rta_type = RTA_DST;
    destination.rta_len = static_cast<unsigned short>(RTA_LENGTH(size));
    std::memcpy(request.attributes, &destination, sizeof destination);
    std::memcpy(request.attributes + RTA_LENGTH(0), address.bytes.data(), size);
    request.header.nlmsg_len =
        static_cast<std::uint32_t>(NLMSG_LENGTH(sizeof(rtmsg)) + RTA_SPACE(size));
    if (::send(fd.get(), &request, request.header.nlmsg_len, MSG_NOSIGNAL) < 0) {
        return route_answer::unknown;
    }
    alignas(nlmsghdr) char answer[8192];
    ssize_t got = -1;
    do {
        got = ::recv(fd.get(), answer, sizeof answer, MSG_DONTWAIT);
    } while (got < 0 && errno == EINTR);
    nlmsghdr header{};
    if (got < static_cast<ssize_t>(sizeof header)) return route_answer::unknown;
    std::memcpy(&header, answer, sizeof header);
    if (header.nlmsg_len > static_cast<std::uint32_t>(got) || header.nlmsg_seq != sequence) {
        return route_answer::unknown;
    }
    const char* payload = answer + NLMSG_ALIGN(sizeof(nlmsghdr));
    if (header.nlmsg_type == NLMSG_ERROR) {
        nlmsgerr failed{};
        if (header.nlmsg_len < NLMSG_LENGTH(sizeof failed)) return route_answer::unknown;
        std::memcpy(&failed, payload, sizeof failed);
        switch (-failed.error) {
            case ENETUNREACH:
            case EHOSTUNREACH:
            case EACCES:
                return route_answer::elsewhere;
            case EAFNOSUPPORT:
            case EOPNOTSUPP:
                return address.v4 ? route_answer::unknown : route_answer::elsewhere;
            default:
                return route_answer::unknown;
        }
    }
    rtmsg route{};
    if (header.nlmsg_type != RTM_NEWROUTE || header.nlmsg_len < NLMSG_LENGTH(sizeof route)) {
        return route_answer::unknown;
    }
    std::memcpy(&route, payload, sizeof route);
    const bool host = route.rtm_type == RTN_LOCAL || route.rtm_type == RTN_BROADCAST ||
                      route.rtm_type == RTN_ANYCAST;
    return host ? route_answer::this_host : route_answer::elsewhere;
}

// Unknown is the host's: fail closed.
[[nodiscard]] bool routed_to_this_host(const ip_address& address) {
    return ask_route(address) != route_answer::elsewhere;
}

}  // namespace

ip_address ip_address::from_v4(std::uint32_t host_order) noexcept {
    ip_address out;
    out.v4 = true;
    out.bytes[0] = static_cast<std::uint8_t>(host_order >> 24);
    out.bytes[1] = static_cast<std::uint8_t>(host_order >> 16);
    out.bytes[2] = static_cast<std::uint8_t>(host_order >> 8);
    out.bytes[3] = static_cast<std::uint8_t>(host_order);
    return out;
}

std::uint32_t ip_address::v4_value() const noexcept {
    return v4_at(bytes, 0);
}

std::optional<ip_address> parse_ip_address(std::string_view text) {
    if (text.size() >= 2 && text.front() == '[' && text.back() == ']') {
        text = text.substr(1, text.size() - 2);
    }
    if (text.empty() || text.size() >= INET6_ADDRSTRLEN) return std::nullopt;
    const std::string terminated(text);
    ip_address out;
    if (::inet_pton(AF_INET, terminated.c_str(), out.bytes.data()) == 1) {
        out.v4 = true;
        return out;
    }
    if (::inet_pton(AF_INET6, terminated.c_str(), out.bytes.data()) == 1) return out;
    return std::nullopt;
}

std::string to_string(const ip_address& address) {
    char text[INET6_ADDRSTRLEN] = {};
    ::inet_ntop(address.v4 ? AF_INET : AF_INET6, address.bytes.data(), text, sizeof text);
    return text;
}

std::vector<ip_address> carried_ipv4(const ip_address& address) {
    if (address.v4) return {};
    const auto& bytes = address.bytes;
    // IPv4-mapped and IPv4-compatible (:: and ::1 included: they carry 0.0.0.0 and 0.0.0.1,
    // which are no public address either).
    if (zero(bytes, 0, 10) && bytes[10] == bytes[11] && (bytes[10] == 0xFF || bytes[10] == 0)) {
        return {ip_address::from_v4(v4_at(bytes, 12))};
    }
    // NAT64's well-known prefix 64:ff9b::/96.
    if (bytes[0] == 0x00 && bytes[1] == 0x64 && bytes[2] == 0xFF && bytes[3] == 0x9B &&
        zero(bytes, 4, 12)) {
        return {ip_address::from_v4(v4_at(bytes, 12))};
    }
    // 6to4: 2002:AABB:CCDD::/48.
    if (bytes[0] == 0x20 && bytes[1] == 0x02) return {ip_address::from_v4(v4_at(bytes, 2))};
    // Teredo 2001:0::/32: the server's address, then the client's, stored inverted.
    if (bytes[0] == 0x20 && bytes[1] == 0x01 && bytes[2] == 0 && bytes[3] == 0) {
        return {ip_address::from_v4(v4_at(bytes, 4)), ip_address::from_v4(~v4_at(bytes, 12))};
    }
    return {};
}

bool is_public(const ip_address& address) {
    if (address.v4) return !within_any(address.v4_value(), not_public_v4);
    const auto carried = carried_ipv4(address);
    if (!carried.empty()) {
        // Teredo's own prefix is no public destination, whatever it carries.
        if (!public_v6(address.bytes) && address.bytes[0] == 0x20 && address.bytes[1] == 0x01) {
            return false;
        }
        return std::all_of(carried.begin(), carried.end(),
                           [](const ip_address& each) { return is_public(each); });
    }
    return public_v6(address.bytes);
}

bool reaches_this_host(const ip_address& address) {
    if (routed_to_this_host(address)) return true;
    const auto carried = carried_ipv4(address);
    return std::any_of(carried.begin(), carried.end(), routed_to_this_host);
}

std::string describe_address(const ip_address& address) {
    const bool loopback = any_form(
        address, [](std::uint32_t value) { return within_any(value, loopback_v4); },
        [](const std::array<std::uint8_t, 16>& bytes) { return zero(bytes, 0, 15); });
    if (loopback) return "the host's own loopback";
    if (reaches_this_host(address)) return "this host's own address";
    const bool link_local = any_form(
        address, [](std::uint32_t value) { return within_any(value, link_local_v4); },
        [](const std::array<std::uint8_t, 16>& bytes) {
            return bytes[0] == 0xFE && (bytes[1] & 0xC0) == 0x80;
        });
    if (link_local) return "link-local, where cloud metadata services answer";
    const bool private_network = any_form(
        address, [](std::uint32_t value) { return within_any(value, private_v4); },
        [](const std::array<std::uint8_t, 16>& bytes) { return (bytes[0] & 0xFE) == 0xFC; });
    if (private_network) return "a private network address";
    if (!is_public(address)) return "a special-purpose address";
    return "";
}

}  // namespace cordon::sandbox
