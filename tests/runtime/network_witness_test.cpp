// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

// The network witness's reading of a connect(2) address, and the retry it lets a hint offer. The
// witness itself, with a real filter under each rung, is tests/backends/network_test.cpp's.
#include "runtime/network_witness.hpp"

#include <arpa/inet.h>
#include <gtest/gtest.h>

#include <cstring>

#include "runtime/render.hpp"

namespace cordon::runtime {
namespace {

sockaddr_storage v4(const char* text, std::uint16_t port) {
    sockaddr_storage out{};
    auto* address = reinterpret_cast<sockaddr_in*>(&out);
    address->sin_family = AF_INET;
    address->sin_port = htons(port);
    EXPECT_EQ(::inet_pton(AF_INET, text, &address->sin_addr), 1) << text;
    return out;
}

sockaddr_storage v6(const char* text, std::uint16_t port) {
    sockaddr_storage out{};
    auto* address = reinterpret_cast<sockaddr_in6*>(&out);
    address->sin6_family = AF_INET6;
    address->sin6_port = htons(port);
    EXPECT_EQ(::inet_pton(AF_INET6, text, &address->sin6_addr), 1) << text;
    return out;
}

std::string outside(const sockaddr_storage& address, bool own_loopback = true,
                    std::size_t size = sizeof(sockaddr_storage)) {
    const auto seen = outside_of(address, size, own_loopback);
    return seen ? seen->destination : "";
}

TEST(NetworkWitness, TheSandboxsOwnLoopbackIsNoRefusalInAnyForm) {
    for (const char* each : {"127.0.0.1", "127.1.2.3", "0.0.0.0", "0.1.2.3"}) {
        EXPECT_EQ(outside(v4(each, 80)), "") << each;
    }
    for (const char* each :
         {"::1", "::", "::ffff:127.0.0.1", "::ffff:127.9.9.9", "::ffff:0.0.0.0"}) {
        EXPECT_EQ(outside(v6(each, 80)), "") << each;
    }
    // The kernel routes other embeddings as IPv6: out of the sandbox, where the walls refuse it.
    EXPECT_EQ(outside(v6("::127.0.0.1", 80)), "[::127.0.0.1]:80");
    EXPECT_EQ(outside(v6("64:ff9b::7f00:1", 80)), "[64:ff9b::7f00:1]:80");
    // Without a namespace of its own the host's loopback is outside the sandbox.
    EXPECT_EQ(outside(v4("127.0.0.1", 5432), false), "127.0.0.1:5432");
    EXPECT_EQ(outside(v6("::1", 5432), false), "[::1]:5432");
}

TEST(NetworkWitness, EveryOtherDestinationIsNamedWithItsPort) {
    EXPECT_EQ(outside(v4("93.184.216.34", 443)), "93.184.216.34:443");
    EXPECT_EQ(outside(v4("10.0.0.5", 22)), "10.0.0.5:22");
    EXPECT_EQ(outside(v6("2606:4700::1111", 443)), "[2606:4700::1111]:443");
    EXPECT_EQ(outside(v6("::ffff:169.254.169.254", 80)), "[::ffff:169.254.169.254]:80");
    const auto seen = outside_of(v4("93.184.216.34", 443), sizeof(sockaddr_in), true);
    ASSERT_TRUE(seen.has_value());
    EXPECT_EQ(seen->port, 443);
    EXPECT_TRUE(seen->address.v4);
}

TEST(NetworkWitness, AnotherFamilyOrAShortAddressIsNoConnectionOut) {
    sockaddr_storage unix_address{};
    unix_address.ss_family = AF_UNIX;
    EXPECT_EQ(outside(unix_address), "");
    sockaddr_storage unspecified{};
    unspecified.ss_family = AF_UNSPEC;
    EXPECT_EQ(outside(unspecified), "");
    EXPECT_EQ(outside(v4("93.184.216.34", 80), true, sizeof(sockaddr_in) - 1), "");
    // The kernel takes an IPv6 address from 24 bytes (no scope), not fewer.
    EXPECT_EQ(outside(v6("2606:4700::1111", 80), true, 24), "[2606:4700::1111]:80");
    EXPECT_EQ(outside(v6("2606:4700::1111", 80), true, 23), "");
}

// A hint after the walls refused: the whole network only when every destination they refused
// was a public address of another host (or a name server), never a domain of its own (a client
// that ignores the proxy would not use it), and nothing after a refusal asking cannot lift.
TEST(NetworkWitness, TheWallsRefusalsOfferTheWholeNetworkOnlyForOtherHostsPublicAddresses) {
    sandbox_facts facts;
    facts.network = sandbox::network_facts{};
    facts.network->policy = sandbox::network_policy::deny;
    using entry = sandbox::network_facts::blocked_destination;
    const auto walls = [](std::string destination, bool askable) {
        entry out;
        out.destination = std::move(destination);
        out.reason = "a direct connection, refused by the network walls";
        out.count = 1;
        out.askable = askable;
        out.by_walls = true;
        return out;
    };
    facts.network->blocked = {walls("93.184.216.34:80", true), walls("192.0.2.1:53", true)};
    EXPECT_EQ(network_retry_after(facts).destination, std::nullopt);
    EXPECT_TRUE(network_retry_after(facts).whole_network);
    facts.network->blocked.push_back(walls("10.0.0.5:22", false));
    EXPECT_FALSE(network_retry_after(facts).whole_network);
    facts.network->blocked.pop_back();
    facts.network->denied_domains = {"x.example"};
    EXPECT_FALSE(network_retry_after(facts).whole_network);
    facts.network->denied_domains.clear();
    facts.network->blocked_more = 1;
    EXPECT_FALSE(network_retry_after(facts).whole_network);
}

}  // namespace
}  // namespace cordon::runtime
