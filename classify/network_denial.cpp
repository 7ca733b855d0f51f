// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

#include "classify/network_denial.hpp"

#include <algorithm>
#include <array>

#include "classify/signature_scanner.hpp"
#include "sandbox/host_address.hpp"

namespace cordon::classify {

namespace {

// Whether `host` (as a message prints it: a name, an IPv4 address, an IPv6 one with or without
// brackets) is this machine's loopback, in any spelling the kernel connects there: 127/8, 0/8
// (0.0.0.0 connects to loopback), ::1, ::, and those mapped into IPv6 (::ffff:7f00:1).
bool is_loopback_host(std::string_view host) {
    if (host.starts_with('[')) host.remove_prefix(1);
    if (const auto end = host.find(']'); end != std::string_view::npos) host = host.substr(0, end);
    if (host == "localhost" || host.ends_with(".localhost")) return true;
    const auto address = sandbox::parse_ip_address(host);
    if (!address) return false;
    const auto& bytes = address->bytes;
    const auto loopback_v4 = [](std::uint8_t first) { return first == 127 || first == 0; };
    if (address->v4) return loopback_v4(bytes[0]);
    const bool zero_prefix =
        std::all_of(bytes.begin(), bytes.begin() + 10, [](std::uint8_t b) { return b == 0; });
    if (zero_prefix && bytes[10] == 0xFF && bytes[11] == 0xFF) return loopback_v4(bytes[12]);
    return zero_prefix && bytes[10] == 0 && bytes[11] == 0 && bytes[12] == 0 && bytes[13] == 0 &&
           bytes[14] == 0 && bytes[15] <= 1;
}

// The peer named after `marker` in `line` (lower-cased already): a bracketed IPv6 address, a
// bare one (a word with several colons), or a name or IPv4 address up to a port's colon, wget's
// "..." or a sentence's final dot.
std::string_view host_after(std::string_view line, std::string_view marker) {
    const auto at = line.find(marker);
    if (at == std::string_view::npos) return {};
    std::string_view word = line.substr(at + marker.size());
    while (!word.empty() && (word.front() == '\'' || word.front() == '"'))
        word.remove_prefix(1);
    if (word.starts_with("host ")) word.remove_prefix(5);  // ssh: "connect to host H port N"
    if (word.starts_with('[')) return word.substr(0, word.find(']'));
    word = word.substr(0, word.find_first_of(" ,'\"|"));
    if (word.find(':') != word.rfind(':')) return word;
    word = word.substr(0, word.find("..."));
    word = word.substr(0, word.find(':'));
    while (!word.empty() && word.back() == '.')
        word.remove_suffix(1);
    return word;
}

}  // namespace

std::span<const std::string> network_denial_signatures() {
    // Each lower-case, as the scanner compares.
    static const std::array<std::string, 7> signatures{
        "could not resolve host",                    // curl (6), git over https
        "temporary failure in name resolution",      // getaddrinfo's EAI_AGAIN: python, ssh, nc
        "unable to resolve host address",            // wget
        "network is unreachable",                    // ENETUNREACH: wget, python, bash /dev/tcp
        "address family not supported by protocol",  // EAFNOSUPPORT: a socket family refused
        "socket: operation not permitted",           // EPERM from socket(2): ping, nc
        "could not resolve hostname",                // ssh
    };
    return signatures;
}

bool is_refused_remote_connection(std::string_view line) {
    const std::string lower = ascii_lower(line);
    std::string_view host;
    if (lower.find("failed to connect to ") != std::string::npos) {
        // curl: "Failed to connect to 10.1.2.3 port 80 after 0 ms: Couldn't connect to server"
        host = host_after(lower, "failed to connect to ");
    } else if (lower.find("connecting to ") != std::string::npos &&
               lower.find("failed") != std::string::npos) {
        // wget: "Connecting to 10.1.2.3:80... failed: Connection refused."
        host = host_after(lower, "connecting to ");
    } else if (lower.find("connection refused") != std::string::npos) {
        // "connect to 10.1.2.3 port 22: Connection refused" (ssh, nc)
        host = host_after(lower, "connect to ");
    } else {
        return false;
    }
    return !host.empty() && !is_loopback_host(host);
}

bool matches_network_denial(std::string_view stderr_text) {
    signature_scanner scanner(network_denial_signatures());
    scanner.feed(stderr_text);
    if (scanner.matched()) return true;
    while (!stderr_text.empty()) {
        const auto end = stderr_text.find('\n');
        if (is_refused_remote_connection(stderr_text.substr(0, end))) return true;
        if (end == std::string_view::npos) break;
        stderr_text.remove_prefix(end + 1);
    }
    return false;
}

}  // namespace cordon::classify
