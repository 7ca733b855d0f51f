// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

// A domain pattern as a client or a configuration gives it (--allow-domain, the MCP server's
// sandbox_network, the proxy's lists: sandbox/domain_pattern.hpp), and a host as a request names
// it. Properties: a pattern read is written back as text that reads as the same pattern, and that
// text is canonical (written again, the same); its host is lower case, without a trailing dot;
// a name pattern covers the name it spells (a wildcard the names below it, never itself), on its
// port only when it has one; an address pattern covers no name and a name pattern no address; a
// host read is canonical (read again, the same).
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <variant>

#include "sandbox/domain_pattern.hpp"
#include "tests/fuzz/property.hpp"

using namespace cordon::sandbox;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string_view text(reinterpret_cast<const char*>(data), size);

    if (const auto host = parse_destination_host(text)) {
        const auto again = parse_destination_host(host->host);
        CORDON_FUZZ_CHECK(again.has_value());
        CORDON_FUZZ_CHECK(again->host == host->host && again->address == host->address);
    }

    const auto parsed = parse_domain_pattern(text);
    if (const auto* reason = std::get_if<std::string>(&parsed)) {
        CORDON_FUZZ_CHECK(!reason->empty() && reason->find('\n') == std::string::npos);
        return 0;
    }
    const domain_pattern& pattern = std::get<domain_pattern>(parsed);
    const std::string written = to_string(pattern);
    const auto back = parse_domain_pattern(written);
    CORDON_FUZZ_CHECK(std::holds_alternative<domain_pattern>(back));
    CORDON_FUZZ_CHECK(std::get<domain_pattern>(back) == pattern);
    CORDON_FUZZ_CHECK(to_string(std::get<domain_pattern>(back)) == written);
    CORDON_FUZZ_CHECK(!pattern.host.empty() && pattern.host.back() != '.');
    for (const char c : pattern.host)
        CORDON_FUZZ_CHECK(!(c >= 'A' && c <= 'Z'));

    const std::uint16_t port = pattern.port.value_or(443);
    const std::uint16_t other = static_cast<std::uint16_t>(port == 1 ? 2 : 1);
    const auto spelt = parse_destination_host(pattern.host);
    CORDON_FUZZ_CHECK(spelt.has_value());
    CORDON_FUZZ_CHECK(spelt->address == pattern.address);
    if (pattern.wildcard) {
        CORDON_FUZZ_CHECK(!matches(pattern, *spelt, port));
        const auto below = parse_destination_host("a." + pattern.host);
        if (below) {
            CORDON_FUZZ_CHECK(matches(pattern, *below, port));
            if (pattern.port) CORDON_FUZZ_CHECK(!matches(pattern, *below, other));
        }
    } else {
        CORDON_FUZZ_CHECK(matches(pattern, *spelt, port));
        CORDON_FUZZ_CHECK(matches(pattern, *spelt, other) == !pattern.port.has_value());
    }
    // Names and addresses never cover one another.
    const destination_host address{"10.0.0.1", true};
    const destination_host name{"example.com", false};
    if (pattern.address) CORDON_FUZZ_CHECK(!matches(pattern, name, port));
    if (!pattern.address) CORDON_FUZZ_CHECK(!matches(pattern, address, port));
    return 0;
}
