// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

// The proxy's allow-list syntax (sandbox/domain_pattern.hpp): what parses, what is refused and
// why, the canonical form, and what each pattern covers.
#include "sandbox/domain_pattern.hpp"

#include <gtest/gtest.h>

namespace cordon::sandbox {
namespace {

domain_pattern parsed(std::string_view text) {
    auto result = parse_domain_pattern(text);
    EXPECT_EQ(result.index(), 0U) << text << ": "
                                  << (result.index() == 1 ? std::get<1>(result) : "");
    return result.index() == 0 ? std::get<0>(result) : domain_pattern{};
}

std::string refusal(std::string_view text) {
    auto result = parse_domain_pattern(text);
    EXPECT_EQ(result.index(), 1U) << text << " parsed as " << to_string(std::get<0>(result));
    return result.index() == 1 ? std::get<1>(result) : "";
}

bool covers(std::string_view pattern, std::string_view host, std::uint16_t port) {
    const auto destination = parse_destination_host(host);
    EXPECT_TRUE(destination.has_value()) << host;
    return destination && matches(parsed(pattern), *destination, port);
}

TEST(DomainPattern, CanonicalFormsRoundTrip) {
    const std::pair<std::string_view, std::string_view> cases[] = {
        {"Example.COM", "example.com"},
        {"example.com.", "example.com"},
        {"*.Example.com", "*.example.com"},
        {"registry.npmjs.org:443", "registry.npmjs.org:443"},
        {"*.github.com:22", "*.github.com:22"},
        {"10.1.2.3", "10.1.2.3"},
        {"10.1.2.3:8080", "10.1.2.3:8080"},
        {"::1", "::1"},
        {"[::1]", "::1"},
        {"[0:0::1]:80", "[::1]:80"},
        {"2001:DB8::1", "2001:db8::1"},
        {"xn--bcher-kva.example", "xn--bcher-kva.example"},
        {"_service.example.com", "_service.example.com"},
    };
    for (const auto& [text, canonical] : cases) {
        const domain_pattern pattern = parsed(text);
        EXPECT_EQ(to_string(pattern), canonical) << text;
        EXPECT_EQ(parsed(to_string(pattern)), pattern) << text;
    }
    EXPECT_TRUE(parsed("10.1.2.3").address);
    EXPECT_TRUE(parsed("[::1]:80").address);
    EXPECT_FALSE(parsed("example.com").address);
    EXPECT_TRUE(parsed("*.example.com").wildcard);
}

TEST(DomainPattern, RefusesWhatIsNoDestination) {
    EXPECT_EQ(refusal(""), "empty");
    EXPECT_EQ(refusal("*"), "matches every name (use network allow)");
    EXPECT_EQ(refusal("a.*.example.com"), "has '*' other than as its first label");
    EXPECT_EQ(refusal("*example.com"), "has '*' other than as its first label");
    EXPECT_EQ(refusal("*.*.example.com"), "has '*' other than as its first label");
    EXPECT_EQ(refusal("example.com:0"), "has an invalid port");
    EXPECT_EQ(refusal("example.com:65536"), "has an invalid port");
    EXPECT_EQ(refusal("example.com:"), "has an invalid port");
    EXPECT_EQ(refusal("example.com:http"), "has an invalid port");
    EXPECT_EQ(refusal("[::1"), "has '[' without ']'");
    EXPECT_EQ(refusal("[::1]x"), "has text after ']'");
    EXPECT_EQ(refusal("[10.1.2.3]"), "has no IPv6 address inside [...]");
    EXPECT_EQ(refusal("exa mple.com"), "is not a host name");
    EXPECT_EQ(refusal("http://example.com"), "is a URL, not a host name");
    EXPECT_EQ(refusal("example.com/path"), "is not a host name");
    EXPECT_EQ(refusal("a..example.com"), "has an empty label");
    EXPECT_EQ(refusal(".example.com"), "has an empty label");
    EXPECT_EQ(refusal("-a.example.com"), "has a label that starts or ends with '-'");
    EXPECT_EQ(refusal(std::string(64, 'a') + ".com"), "has a label over 63 characters");
    EXPECT_EQ(refusal("b\xc3\xbc"
                      "cher.example"),
              "is not ASCII (write an internationalised name as xn--...)");
    // What inet_aton() reads as an IPv4 address is no name: it would resolve to an address no
    // pattern spelled.
    EXPECT_EQ(refusal("2130706433"), "is neither a host name nor an address");
    EXPECT_EQ(refusal("127.1"), "is neither a host name nor an address");
    EXPECT_EQ(refusal("0x7f.1"), "is neither a host name nor an address");
    EXPECT_EQ(refusal("1.2.3.0x4"), "is neither a host name nor an address");
}

TEST(DomainPattern, ExactNamesWildcardsPortsAndAddresses) {
    EXPECT_TRUE(covers("example.com", "example.com", 443));
    EXPECT_TRUE(covers("example.com", "EXAMPLE.com.", 80));
    EXPECT_FALSE(covers("example.com", "www.example.com", 443));
    EXPECT_FALSE(covers("example.com", "notexample.com", 443));

    EXPECT_TRUE(covers("*.example.com", "www.example.com", 443));
    EXPECT_TRUE(covers("*.example.com", "a.b.example.com", 443));
    EXPECT_FALSE(covers("*.example.com", "example.com", 443));
    EXPECT_FALSE(covers("*.example.com", "wwwexample.com", 443));
    EXPECT_FALSE(covers("*.example.com", "example.com.evil.org", 443));

    EXPECT_TRUE(covers("example.com:443", "example.com", 443));
    EXPECT_FALSE(covers("example.com:443", "example.com", 22));
    EXPECT_FALSE(covers("*.example.com:443", "a.example.com", 8443));

    EXPECT_TRUE(covers("10.1.2.3", "10.1.2.3", 80));
    EXPECT_FALSE(covers("10.1.2.3", "10.1.2.4", 80));
    EXPECT_TRUE(covers("::1", "0:0::1", 80));
    EXPECT_FALSE(covers("[::1]:80", "::1", 81));
    // An address pattern covers no name, a name pattern no address.
    EXPECT_FALSE(covers("127.0.0.1", "localhost", 80));
}

TEST(DomainPattern, DestinationHosts) {
    EXPECT_EQ(parse_destination_host("Example.COM.")->host, "example.com");
    EXPECT_FALSE(parse_destination_host("example.com")->address);
    EXPECT_TRUE(parse_destination_host("::ffff:127.0.0.1")->address);
    EXPECT_TRUE(parse_destination_host("127.0.0.1")->address);
    EXPECT_FALSE(parse_destination_host("2130706433").has_value());
    EXPECT_FALSE(parse_destination_host("example.com:443").has_value());
    EXPECT_FALSE(parse_destination_host("").has_value());
    EXPECT_FALSE(parse_destination_host("*.example.com").has_value());
}

}  // namespace
}  // namespace cordon::sandbox
