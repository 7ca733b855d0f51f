// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

#include "sandbox/domain_pattern.hpp"

#include <arpa/inet.h>

#include <array>
#include <charconv>

namespace cordon::sandbox {

namespace {

constexpr std::size_t max_name_length = 253;  // RFC 1035, without the trailing dot
constexpr std::size_t max_label_length = 63;

[[nodiscard]] char lower(char c) noexcept {
    return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c;
}

// The canonical text of an IPv4 or IPv6 address in `text` (no brackets), or nullopt.
[[nodiscard]] std::optional<std::string> canonical_address(std::string_view text) {
    if (text.empty() || text.size() >= INET6_ADDRSTRLEN) return std::nullopt;
    std::array<char, INET6_ADDRSTRLEN> buffer{};
    text.copy(buffer.data(), text.size());
    std::array<unsigned char, 16> bytes{};
    std::array<char, INET6_ADDRSTRLEN> out{};
    for (const int family : {AF_INET, AF_INET6}) {
        if (::inet_pton(family, buffer.data(), bytes.data()) == 1 &&
            ::inet_ntop(family, bytes.data(), out.data(), out.size()) != nullptr) {
            return std::string(out.data());
        }
    }
    return std::nullopt;
}

// Whether every character of `label` is a digit, or it is a 0x hexadecimal number: what
// inet_aton() takes for a part of an IPv4 address.
[[nodiscard]] bool numeric_label(std::string_view label) noexcept {
    if (label.size() >= 2 && label[0] == '0' && label[1] == 'x') {
        return label.find_first_not_of("0123456789abcdef", 2) == std::string_view::npos;
    }
    return !label.empty() && label.find_first_not_of("0123456789") == std::string_view::npos;
}

// Writes the canonical form of the host name `text` to `out`; the reason it is none, or nullptr.
[[nodiscard]] const char* canonical_name(std::string_view text, std::string& out) {
    if (!text.empty() && text.back() == '.') text.remove_suffix(1);
    if (text.empty()) return "empty";
    if (text.size() > max_name_length) return "longer than 253 characters";
    out.clear();
    out.reserve(text.size());
    std::size_t label_start = 0;
    for (std::size_t i = 0; i <= text.size(); ++i) {
        if (i == text.size() || text[i] == '.') {
            const std::size_t length = i - label_start;
            if (length == 0) return "has an empty label";
            if (length > max_label_length) return "has a label over 63 characters";
            if (text[label_start] == '-' || text[i - 1] == '-') {
                return "has a label that starts or ends with '-'";
            }
            label_start = i + 1;
            if (i < text.size()) out.push_back('.');
            continue;
        }
        const char c = lower(text[i]);
        const bool valid = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '_';
        if (!valid) {
            return static_cast<unsigned char>(c) >= 0x80
                       ? "is not ASCII (write an internationalised name as xn--...)"
                       : "is not a host name";
        }
        out.push_back(c);
    }
    const std::size_t last_dot = out.rfind('.');
    const std::string_view last = last_dot == std::string::npos
                                      ? std::string_view(out)
                                      : std::string_view(out).substr(last_dot + 1);
    if (numeric_label(last)) return "is neither a host name nor an address";
    return nullptr;
}

}  // namespace

std::variant<domain_pattern, std::string> parse_domain_pattern(std::string_view text) {
    if (text.empty()) return std::string("empty");
    if (text.find("://") != std::string_view::npos) {
        return std::string("is a URL, not a host name");
    }
    domain_pattern out;
    std::string_view host = text;
    // `[v6]` or `[v6]:port`; a bare v6 address has more than one ':' and no port.
    if (host.front() == '[') {
        const std::size_t close = host.find(']');
        if (close == std::string_view::npos) return std::string("has '[' without ']'");
        std::string_view rest = host.substr(close + 1);
        host = host.substr(1, close - 1);
        if (!rest.empty()) {
            if (rest.front() != ':') return std::string("has text after ']'");
            rest.remove_prefix(1);
            std::uint16_t port = 0;
            const auto [end, error] = std::from_chars(rest.data(), rest.data() + rest.size(), port);
            if (error != std::errc{} || end != rest.data() + rest.size() || port == 0) {
                return std::string("has an invalid port");
            }
            out.port = port;
        }
        const auto address = canonical_address(host);
        if (!address || address->find(':') == std::string::npos) {
            return std::string("has no IPv6 address inside [...]");
        }
        out.host = *address;
        out.address = true;
        return out;
    }
    if (const std::size_t colon = host.rfind(':');
        colon != std::string_view::npos && host.find(':') == colon) {
        const std::string_view port_text = host.substr(colon + 1);
        std::uint16_t port = 0;
        const auto [end, error] =
            std::from_chars(port_text.data(), port_text.data() + port_text.size(), port);
        if (port_text.empty() || error != std::errc{} ||
            end != port_text.data() + port_text.size() || port == 0) {
            return std::string("has an invalid port");
        }
        out.port = port;
        host = host.substr(0, colon);
    }
    if (const auto address = canonical_address(host)) {
        out.host = *address;
        out.address = true;
        return out;
    }
    if (host.find(':') != std::string_view::npos) return std::string("is not a host name");
    if (host == "*") return std::string("matches every name (use network allow)");
    if (host.substr(0, 2) == "*.") {
        out.wildcard = true;
        host.remove_prefix(2);
    }
    if (host.find('*') != std::string_view::npos) {
        return std::string("has '*' other than as its first label");
    }
    if (const char* reason = canonical_name(host, out.host)) return std::string(reason);
    return out;
}

std::string to_string(const domain_pattern& pattern) {
    std::string out;
    const bool v6 = pattern.address && pattern.host.find(':') != std::string::npos;
    if (pattern.wildcard) out = "*.";
    if (v6 && pattern.port) out += '[';
    out += pattern.host;
    if (v6 && pattern.port) out += ']';
    if (pattern.port) out += ':' + std::to_string(*pattern.port);
    return out;
}

std::optional<destination_host> parse_destination_host(std::string_view text) {
    if (auto address = canonical_address(text)) return destination_host{std::move(*address), true};
    destination_host out;
    if (canonical_name(text, out.host) != nullptr) return std::nullopt;
    return out;
}

bool matches(const domain_pattern& pattern, const destination_host& host,
             std::uint16_t port) noexcept {
    if (pattern.port && *pattern.port != port) return false;
    if (pattern.address != host.address) return false;
    if (!pattern.wildcard) return pattern.host == host.host;
    const std::string_view name = host.host;
    return name.size() > pattern.host.size() + 1 &&
           name.substr(name.size() - pattern.host.size()) == pattern.host &&
           name[name.size() - pattern.host.size() - 1] == '.';
}

}  // namespace cordon::sandbox
