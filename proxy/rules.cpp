// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

#include "proxy/rules.hpp"

#include <algorithm>
#include <cstring>

#include "proxy/request.hpp"
#include "sandbox/host_address.hpp"

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

[[nodiscard]] sandbox::ip_address ip_of(const boost::asio::ip::address& address) {
    if (address.is_v4()) return sandbox::ip_address::from_v4(address.to_v4().to_uint());
    sandbox::ip_address out;
    const auto bytes = address.to_v6().to_bytes();
    std::copy(bytes.begin(), bytes.end(), out.bytes.begin());
    return out;
}

// A name a request spelled that is no host name, as a refusal and the record show it: text the
// command chose, so at most 40 of its bytes, with letters, digits, '.', '-' and '_' as they are
// and any other byte as \xNN (no bracket, quote or space that could end cordon's marker and
// begin a forged one), then its length when it was longer.
[[nodiscard]] std::string shown_name(std::string_view text) {
    constexpr std::size_t most = 40;
    if (text.empty()) return "(empty)";
    std::string out;
    for (std::size_t i = 0; i < text.size() && i < most; ++i) {
        const auto byte = static_cast<unsigned char>(text[i]);
        if ((byte >= 'a' && byte <= 'z') || (byte >= 'A' && byte <= 'Z') ||
            (byte >= '0' && byte <= '9') || byte == '.' || byte == '-' || byte == '_') {
            out += static_cast<char>(byte);
        } else {
            constexpr char digits[] = "0123456789abcdef";
            out += "\\x";
            out += digits[byte >> 4];
            out += digits[byte & 0xF];
        }
    }
    if (text.size() > most) out += "... (" + std::to_string(text.size()) + " bytes)";
    return out;
}

// Whether `address`, or an IPv4 address it carries, is one denied_domains names on `port`.
[[nodiscard]] bool denied_address(const rules& rules, const sandbox::ip_address& address,
                                  std::uint16_t port) {
    std::vector<sandbox::ip_address> forms{address};
    for (const auto& carried : sandbox::carried_ipv4(address))
        forms.push_back(carried);
    return std::any_of(forms.begin(), forms.end(), [&](const auto& form) {
        return listed(rules.denied, sandbox::destination_host{sandbox::to_string(form), true},
                      port);
    });
}

// Whether a person could be asked to open `address`: a public address of another host, none of
// whose forms is denied. Loopback, the LAN, link-local (cloud metadata) and the host's own
// addresses are never offered, whatever form they are written in.
[[nodiscard]] bool askable_address(const rules& rules, const sandbox::ip_address& address,
                                   std::uint16_t port) {
    return sandbox::is_public(address) && !denied_address(rules, address, port) &&
           !sandbox::reaches_this_host(address);
}

// The addresses proxy_resolve maps `name` to; nullopt: none (DNS answers for it).
[[nodiscard]] std::optional<address_list> mapped(const rules& rules, const std::string& name) {
    std::optional<address_list> out;
    for (const auto& [each, address] : rules.resolve) {
        if (each != name) continue;
        if (!out) out.emplace();
        out->push_back(address);
    }
    return out;
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
    // A denied address written in a form that carries an IPv4 address (::ffff:10.0.0.5, NAT64,
    // 6to4) denies that IPv4 address too, as one denied as IPv4 is refused in every IPv6 form.
    const std::size_t written = out.denied.size();
    for (std::size_t i = 0; i < written; ++i) {
        if (!out.denied[i].address) continue;
        const auto address = sandbox::parse_ip_address(out.denied[i].host);
        if (!address) continue;
        for (const auto& carried : sandbox::carried_ipv4(*address)) {
            sandbox::domain_pattern also = out.denied[i];
            also.host = sandbox::to_string(carried);
            out.denied.push_back(std::move(also));
        }
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
        const std::string shown = shown_name(host_text);
        return refusal{refusal_kind::not_a_host_name, format_destination(shown, false, port),
                       "not a host name", false};
    }
    route out;
    out.destination = format_destination(host->host, host->address, port);
    if (port == 0) return refusal{refusal_kind::port_zero, out.destination, "port 0", false};
    const std::optional<sandbox::ip_address> literal =
        host->address ? sandbox::parse_ip_address(host->host) : std::nullopt;
    // An address written in a form that carries a denied one is the denied one.
    if (listed(rules.denied, *host, port) || (literal && denied_address(rules, *literal, port))) {
        return refusal{refusal_kind::denied, out.destination, "in denied_domains", false};
    }
    if (!listed(rules.allowed, *host, port)) {
        if (literal) {
            return refusal{refusal_kind::address_not_listed, out.destination,
                           "an address, not a name", askable_address(rules, *literal, port)};
        }
        // A name is decided before any lookup (which would send it out), so whether DNS points
        // it at the LAN is not known here. What the operator mapped it to is, and vouched for
        // (the question says where it leads); a mapping to a denied address is that address.
        const auto addresses = mapped(rules, host->host);
        const bool askable =
            !addresses || std::none_of(addresses->begin(), addresses->end(), [&](const auto& each) {
                return denied_address(rules, ip_of(each), port);
            });
        return refusal{refusal_kind::name_not_listed, out.destination, "not in allowed_domains",
                       askable};
    }
    if (literal) {
        out.addresses = address_list{boost::asio::ip::make_address(host->host)};
        out.trusted = true;
    } else {
        out.addresses = mapped(rules, host->host);
        out.trusted = out.addresses.has_value();
    }
    out.host = std::move(*host);
    out.port = port;
    return out;
}

bool is_public(const boost::asio::ip::address& address) {
    return sandbox::is_public(ip_of(address));
}

std::optional<base::failure<refusal_kind>> check_addresses(const rules& rules, const route& route,
                                                           const address_list& addresses) {
    using base::fail;
    if (addresses.empty()) return fail(refusal_kind::unresolvable, "cannot be resolved");
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
            return fail(refusal_kind::this_host, "the unspecified address (" + address.to_string() +
                                                     ") is this host itself");
        }
    }
    // What denied_domains names stays refused in every form, whoever vouched for the name: a
    // proxy_resolve mapping is the operator's too, and never outranks its denied list.
    for (const auto& address : addresses) {
        if (denied_address(rules, ip_of(address), route.port)) {
            return fail(refusal_kind::denied_address,
                        "resolves to a denied address (" + address.to_string() + ")");
        }
    }
    if (route.trusted) return std::nullopt;
    for (const auto& address : addresses) {
        const sandbox::destination_host host{address.to_string(), true};
        if (listed(rules.allowed, host, route.port)) continue;
        const sandbox::ip_address ip = ip_of(address);
        if (!sandbox::is_public(ip)) {
            return fail(refusal_kind::private_address,
                        "resolves to a private address (" + host.host + ")");
        }
        // A public address the kernel delivers to this host is the host itself: the proxy
        // connects from the host's namespace, where its services listen on every address.
        if (sandbox::reaches_this_host(ip)) {
            return fail(refusal_kind::own_address,
                        "resolves to this host's own address (" + host.host + ")");
        }
    }
    return std::nullopt;
}

}  // namespace cordon::proxy
