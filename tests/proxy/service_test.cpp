// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

// The proxy served through its forwarder end, as the sandbox's forwarder drives it: each test
// hands accepted loopback sockets to a session with SCM_RIGHTS and speaks HTTP or SOCKS through
// them to real test servers on 127.0.0.1 (names mapped by proxy_resolve or a resolver the test
// controls). No outside address, no sleep: every wait is on a socket event.
#include "proxy/service.hpp"

#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <fcntl.h>
#include <sys/socket.h>

#include <chrono>
#include <filesystem>
#include <future>
#include <thread>

#include "tests/proxy/proxy_fixture.hpp"

namespace cordon::proxy::test {
namespace {

class ProxyService : public ::testing::Test {
protected:
    // A service with `bounds`, and a session with `network`; the forwarder end is the test's.
    void open(sandbox::network_rules network, limits bounds = {}) {
        open_with(names_, std::move(network), bounds);
    }
    void open_with(std::shared_ptr<resolver> names, sandbox::network_rules network,
                   limits bounds = {}) {
        service_.emplace(std::move(names), bounds);
        session_ = another(std::move(network), forwarder_);
    }

    // One more session of the service (another run), its forwarder end in `forwarder`.
    std::unique_ptr<session> another(sandbox::network_rules network, unique_fd& forwarder) {
        return test::open_session(*service_, std::move(network), forwarder);
    }

    // A client connection the proxy serves (through `forwarder`, the session's by default).
    unique_fd client(int forwarder = -1) {
        auto [client, accepted] = door_.connect();
        hand_over(forwarder < 0 ? forwarder_.get() : forwarder, {accepted.get()});
        return std::move(client);
    }

    // The whole answer to one HTTP request sent on a new connection.
    std::string ask(std::string_view request) {
        const unique_fd fd = client();
        send_all(fd.get(), request);
        return read_to_eof(fd.get());
    }

    std::string connect_line(std::string_view host, std::uint16_t port) {
        return "CONNECT " + std::string(host) + ":" + std::to_string(port) +
               " HTTP/1.1\r\nHost: x\r\n\r\n";
    }

    // Through an open tunnel: what the echo server sends back.
    static void expect_echo(int fd) {
        send_all(fd, "ping");
        EXPECT_EQ(read_exact(fd, 4), "ping");
    }

    std::shared_ptr<fake_resolver> names_ = std::make_shared<fake_resolver>();
    upstream_server echo_{true};
    upstream_server http_{false};
    front_door door_;
    std::optional<service> service_;
    std::unique_ptr<session> session_;
    unique_fd forwarder_;
};

sandbox::network_rules allow(std::vector<std::string> allowed, std::vector<std::string> denied = {},
                             std::vector<sandbox::host_mapping> resolve = {}) {
    sandbox::network_rules network;
    network.allowed_domains = std::move(allowed);
    network.denied_domains = std::move(denied);
    network.proxy_resolve = std::move(resolve);
    return network;
}

const std::vector<sandbox::host_mapping> local_test = {{"local.test", "127.0.0.1"}};

TEST_F(ProxyService, ConnectToAnAllowedNameReachesTheServer) {
    open(allow({"local.test"}, {}, local_test));
    const unique_fd fd = client();
    send_all(fd.get(), connect_line("local.test", echo_.port()));
    EXPECT_EQ(read_exact(fd.get(), connect_established.size()), connect_established);
    expect_echo(fd.get());
    ::shutdown(fd.get(), SHUT_WR);  // half-close: the server's end of file comes back
    EXPECT_EQ(read_to_eof(fd.get()), "");
    EXPECT_EQ(session_->report().connections, 1U);
    EXPECT_TRUE(session_->report().blocked.empty());
    EXPECT_EQ(names_->queries, 0);  // proxy_resolve: no query
}

TEST_F(ProxyService, AbsoluteUriIsForwardedInOriginForm) {
    open(allow({"local.test"}, {}, local_test));
    const std::string answer = ask("GET http://local.test:" + std::to_string(http_.port()) +
                                   "/path?x=1 HTTP/1.1\r\nHost: other\r\n"
                                   "Proxy-Connection: keep-alive\r\n\r\n");
    EXPECT_EQ(answer, "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello");
    const auto heads = http_.heads();
    ASSERT_EQ(heads.size(), 1U);
    EXPECT_EQ(heads[0], "GET /path?x=1 HTTP/1.1\r\nHost: local.test:" +
                            std::to_string(http_.port()) + "\r\nConnection: close\r\n\r\n");
}

TEST_F(ProxyService, Socks5ByNameReachesTheServer) {
    open(allow({"local.test"}, {}, local_test));
    const unique_fd fd = client();
    send_all(fd.get(), std::string("\x05\x01\x00", 3));
    EXPECT_EQ(read_exact(fd.get(), 2), std::string("\x05\x00", 2));
    std::string request(
        "\x05\x01\x00\x03\x0a"
        "local.test",
        15);
    request.push_back(static_cast<char>(echo_.port() >> 8));
    request.push_back(static_cast<char>(echo_.port() & 0xFF));
    send_all(fd.get(), request);
    const std::string reply = read_exact(fd.get(), 10);
    ASSERT_EQ(reply.size(), 10U);
    EXPECT_EQ(reply.substr(0, 4), std::string("\x05\x00\x00\x01", 4));
    // The host's side of the connection stays the host's: no source address, no port.
    EXPECT_EQ(reply.substr(4), std::string(6, '\0'));
    expect_echo(fd.get());
    EXPECT_EQ(session_->report().connections, 1U);
}

TEST_F(ProxyService, Socks5ToAListedAddressReachesTheServer) {
    open(allow({"127.0.0.1"}));
    const unique_fd fd = client();
    std::string bytes("\x05\x01\x00\x05\x01\x00\x01\x7f\x00\x00\x01", 11);  // greeting + request
    bytes.push_back(static_cast<char>(echo_.port() >> 8));
    bytes.push_back(static_cast<char>(echo_.port() & 0xFF));
    send_all(fd.get(), bytes);
    EXPECT_EQ(read_exact(fd.get(), 2), std::string("\x05\x00", 2));
    EXPECT_EQ(read_exact(fd.get(), 10).substr(0, 2), std::string("\x05\x00", 2));
    expect_echo(fd.get());
}

TEST_F(ProxyService, ADeniedNameGetsA403NamingItAndIsCounted) {
    open(allow({"*.test"}, {"bad.test"}));
    const std::string answer = ask(connect_line("bad.test", 443));
    const std::string body =
        "cordon: network access to bad.test:443 is blocked by this run's network policy (in "
        "denied_domains); denied_domains refuses it, whatever is asked\n";
    EXPECT_EQ(answer, "HTTP/1.1 403 Forbidden\r\nContent-Type: text/plain\r\nContent-Length: " +
                          std::to_string(body.size()) +
                          "\r\nConnection: close\r\nX-Cordon-Blocked: bad.test:443\r\n\r\n" + body);
    ask(connect_line("bad.test", 443));
    const session_report report = session_->report();
    ASSERT_EQ(report.blocked.size(), 1U);
    EXPECT_EQ(report.blocked[0].destination, "bad.test:443");
    EXPECT_EQ(report.blocked[0].reason, "in denied_domains");
    EXPECT_EQ(report.blocked[0].count, 2U);
    EXPECT_EQ(report.connections, 0U);
    EXPECT_EQ(names_->queries, 0);  // denied before any DNS query
}

TEST_F(ProxyService, ANameNotAllowedIsNeverLookedUp) {
    open(allow({"local.test"}, {}, local_test));
    names_->map("example.com", "127.0.0.1");
    const std::string answer = ask(connect_line("example.com", echo_.port()));
    EXPECT_TRUE(answer.starts_with("HTTP/1.1 403 Forbidden\r\n")) << answer;
    EXPECT_NE(answer.find("(not in allowed_domains)"), std::string::npos) << answer;
    const std::string forwarded = ask("GET http://example.com/ HTTP/1.1\r\n\r\n");
    EXPECT_NE(forwarded.find("X-Cordon-Blocked: example.com:80\r\n"), std::string::npos);
    EXPECT_EQ(names_->queries, 0);
}

TEST_F(ProxyService, AWildcardCoversNamesBelowItOnly) {
    open(allow({"*.wild.test"}, {}, {{"a.wild.test", "127.0.0.1"}, {"wild.test", "127.0.0.1"}}));
    const unique_fd fd = client();
    send_all(fd.get(), connect_line("a.wild.test", echo_.port()));
    EXPECT_EQ(read_exact(fd.get(), connect_established.size()), connect_established);
    expect_echo(fd.get());
    EXPECT_NE(ask(connect_line("wild.test", echo_.port())).find("(not in allowed_domains)"),
              std::string::npos);
}

TEST_F(ProxyService, DeniedWinsOverAllowed) {
    open(allow({"*.test"}, {"*.inner.test"}, {{"x.inner.test", "127.0.0.1"}}));
    EXPECT_NE(ask(connect_line("x.inner.test", echo_.port())).find("(in denied_domains)"),
              std::string::npos);
}

TEST_F(ProxyService, AnAddressIsReachedOnlyWhenListed) {
    open(allow({"local.test", "127.0.0.1:" + std::to_string(echo_.port())}));
    const std::string refused = ask(connect_line("127.0.0.1", http_.port()));
    EXPECT_NE(refused.find("(an address, not a name)"), std::string::npos) << refused;
    EXPECT_NE(refused.find("X-Cordon-Blocked: 127.0.0.1:" + std::to_string(http_.port())),
              std::string::npos);
    EXPECT_NE(ask(connect_line("[::1]", 80)).find("X-Cordon-Blocked: [::1]:80"), std::string::npos);
    const unique_fd fd = client();
    send_all(fd.get(), connect_line("127.0.0.1", echo_.port()));
    EXPECT_EQ(read_exact(fd.get(), connect_established.size()), connect_established);
    expect_echo(fd.get());
}

TEST_F(ProxyService, NamesResolvingToPrivateAddressesAreRefused) {
    open(allow({"*.test"}));
    const std::pair<const char*, const char*> cases[] = {
        {"lo.test", "127.0.0.1"},
        {"ten.test", "10.1.2.3"},
        {"meta.test", "169.254.169.254"},
        {"mapped.test", "::ffff:127.0.0.1"},
    };
    for (const auto& [name, address] : cases)
        names_->map(name, address);
    for (const auto& [name, address] : cases) {
        const std::string answer = ask(connect_line(name, echo_.port()));
        EXPECT_TRUE(answer.starts_with("HTTP/1.1 403 Forbidden\r\n")) << answer;
        EXPECT_NE(answer.find("(resolves to a private address (" + std::string(address) + "))"),
                  std::string::npos)
            << answer;
    }
    EXPECT_EQ(names_->queries, 4);
    EXPECT_EQ(session_->report().blocked.size(), 4U);
    EXPECT_EQ(session_->report().connections, 0U);
}

// An allowed name that does not exist is the destination's failure, not the policy's: a 502,
// and nothing in the record's refusals (a failed run after it is no denial).
TEST_F(ProxyService, ANameThatCannotBeResolvedIsA502AndNoRefusal) {
    open(allow({"*.test"}));
    const std::string answer = ask(connect_line("nowhere.test", 443));
    EXPECT_TRUE(answer.starts_with("HTTP/1.1 502 Bad Gateway\r\n")) << answer;
    EXPECT_NE(answer.find("(cannot be resolved)"), std::string::npos);
    EXPECT_TRUE(session_->report().blocked.empty());
    EXPECT_EQ(session_->report().blocked_more, 0U);
}

TEST_F(ProxyService, APortTheAllowedPatternDoesNotListIsRefused) {
    open(allow({"local.test:" + std::to_string(http_.port())}, {}, local_test));
    const std::string answer = ask(connect_line("local.test", echo_.port()));
    EXPECT_NE(answer.find("(not in allowed_domains)"), std::string::npos) << answer;
    EXPECT_EQ(ask("GET http://local.test:" + std::to_string(http_.port()) + "/ HTTP/1.1\r\n\r\n"),
              "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello");
}

TEST_F(ProxyService, Socks5RefusalsAndUnsupportedRequests) {
    open(allow({"*.test"}, {"bad.test"}));
    {  // a refused name: "not allowed by ruleset", counted
        const unique_fd fd = client();
        send_all(fd.get(), std::string("\x05\x01\x00\x05\x01\x00\x03\x08"
                                       "bad.test\x01\xbb",
                                       18));
        EXPECT_EQ(read_to_eof(fd.get()), std::string("\x05\x00\x05\x02\x00\x01\0\0\0\0\0\0", 12));
    }
    {  // unresolvable: host unreachable
        const unique_fd fd = client();
        send_all(fd.get(), std::string("\x05\x01\x00\x05\x01\x00\x03\x09"
                                       "gone.test\x01\xbb",
                                       19));
        EXPECT_EQ(read_to_eof(fd.get()).substr(2, 2), std::string("\x05\x04", 2));
    }
    {  // BIND: command not supported
        const unique_fd fd = client();
        send_all(fd.get(), std::string("\x05\x01\x00\x05\x02\x00\x01\x7f\0\0\x01\0\x50", 13));
        EXPECT_EQ(read_to_eof(fd.get()).substr(2, 2), std::string("\x05\x07", 2));
    }
    {  // no acceptable method: only username/password offered
        const unique_fd fd = client();
        send_all(fd.get(), std::string("\x05\x01\x02", 3));
        EXPECT_EQ(read_to_eof(fd.get()), std::string("\x05\xff", 2));
    }
    {  // SOCKS4: rejected
        const unique_fd fd = client();
        send_all(fd.get(), std::string("\x04\x01\x00\x50\x7f\0\0\x01user\0", 13));
        EXPECT_EQ(read_to_eof(fd.get()), std::string("\0\x5b\0\0\0\0\0\0", 8));
    }
    const session_report report = session_->report();
    // The policy's refusal only: a name that does not resolve is no refusal.
    ASSERT_EQ(report.blocked.size(), 1U);
    EXPECT_EQ(report.blocked[0].destination, "bad.test:443");
    EXPECT_EQ(report.blocked[0].reason, "in denied_domains");
    EXPECT_EQ(names_->queries, 1);
}

TEST_F(ProxyService, Socks5ToAnUnlistedAddressIsRefusedByTheRuleset) {
    open(allow({"local.test"}, {}, local_test));
    const unique_fd fd = client();
    std::string bytes("\x05\x01\x00\x05\x01\x00\x01\x7f\x00\x00\x01", 11);
    bytes.push_back(static_cast<char>(echo_.port() >> 8));
    bytes.push_back(static_cast<char>(echo_.port() & 0xFF));
    send_all(fd.get(), bytes);
    EXPECT_EQ(read_to_eof(fd.get()), std::string("\x05\x00\x05\x02\x00\x01\0\0\0\0\0\0", 12));
    const session_report report = session_->report();
    ASSERT_EQ(report.blocked.size(), 1U);
    EXPECT_EQ(report.blocked[0].destination, "127.0.0.1:" + std::to_string(echo_.port()));
    EXPECT_EQ(report.blocked[0].reason, "an address, not a name");
}

TEST_F(ProxyService, ADestinationThatRefusesIsA502OrSocks5RefusedAndNotABlock) {
    std::uint16_t closed_port = 0;
    listen_loopback(closed_port).reset();  // nothing listens there any more
    open(allow({"local.test"}, {}, local_test));
    const std::string answer = ask(connect_line("local.test", closed_port));
    EXPECT_TRUE(answer.starts_with("HTTP/1.1 502 Bad Gateway\r\n")) << answer;
    EXPECT_NE(answer.find("cordon: could not connect to local.test:" + std::to_string(closed_port)),
              std::string::npos)
        << answer;
    const unique_fd fd = client();
    std::string bytes(
        "\x05\x01\x00\x05\x01\x00\x03\x0a"
        "local.test",
        18);
    bytes.push_back(static_cast<char>(closed_port >> 8));
    bytes.push_back(static_cast<char>(closed_port & 0xFF));
    send_all(fd.get(), bytes);
    EXPECT_EQ(read_to_eof(fd.get()).substr(2, 2), std::string("\x05\x05", 2));
    EXPECT_TRUE(session_->report().blocked.empty());
    EXPECT_EQ(session_->report().connections, 0U);
}

TEST_F(ProxyService, AHugeHeaderIs431AndTheProxyServesTheNext) {
    open(allow({"local.test"}, {}, local_test));
    const std::string huge =
        "GET http://local.test/ HTTP/1.1\r\nX-Big: " + std::string(40 * 1024, 'a') + "\r\n\r\n";
    const std::string answer = ask(huge);
    EXPECT_TRUE(answer.starts_with("HTTP/1.1 431 Request Header Fields Too Large\r\n")) << answer;
    EXPECT_EQ(ask("GET http://local.test:" + std::to_string(http_.port()) + "/ HTTP/1.1\r\n\r\n"),
              "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello");
    EXPECT_TRUE(ask("GET / HTTP/1.1\r\nHost: local.test\r\n\r\n").starts_with("HTTP/1.1 400 "));
}

TEST_F(ProxyService, ASlowClientIsClosedWhileOthersAreServed) {
    limits bounds;
    bounds.head_timeout = std::chrono::milliseconds(300);
    open(allow({"local.test"}, {}, local_test), bounds);
    const unique_fd slow = client();
    send_all(slow.get(), "CONNECT local.te");
    const unique_fd fast = client();
    send_all(fast.get(), connect_line("local.test", echo_.port()));
    EXPECT_EQ(read_exact(fast.get(), connect_established.size()), connect_established);
    expect_echo(fast.get());
    EXPECT_EQ(read_to_eof(slow.get()), "");  // closed by the head timeout, nothing answered
    expect_echo(fast.get());                 // a relay has no head timeout
}

TEST_F(ProxyService, ALookupThatNeverEndsIsA504AfterTheConnectTimeout) {
    limits bounds;
    bounds.connect_timeout = std::chrono::milliseconds(200);
    open(allow({"*.test"}), bounds);
    names_->map("silent.test", "never");
    const std::string answer = ask(connect_line("silent.test", 443));
    EXPECT_TRUE(answer.starts_with("HTTP/1.1 504 Gateway Timeout\r\n")) << answer;
    EXPECT_NE(answer.find("(timed out)"), std::string::npos);
    EXPECT_EQ(session_->report().connections, 0U);
}

// The system resolver with a lookup the test holds, as a slow DNS zone holds getaddrinfo.
class SlowZone : public ProxyService {
protected:
    void SetUp() override {
        held_->map("slow.test", "hold");
        held_->map("slow2.test", "hold");
        held_->map("fast.test", "127.0.0.1");
    }
    // Whatever a test leaves blocked returns (its answer dropped): the threads end.
    void TearDown() override { held_->release(); }

    std::shared_ptr<resolver> system() { return system_resolver(held_->function()); }
    // The fast name and the test server's address it resolves to (a private one, listed).
    sandbox::network_rules fast_and_echo() {
        return allow({"fast.test", "127.0.0.1:" + std::to_string(echo_.port())});
    }
    void expect_tunnel(int fd) {
        send_all(fd, connect_line("fast.test", echo_.port()));
        EXPECT_EQ(read_exact(fd, connect_established.size()), connect_established);
        expect_echo(fd);
    }

    std::shared_ptr<held_lookups> held_ = std::make_shared<held_lookups>();
};

// One run's slow zone delays neither another run's lookup nor its own connection past the lookup
// deadline: 502 "DNS lookup timed out" (SOCKS5: host unreachable), no refusal in the record.
TEST_F(SlowZone, AnotherSessionResolvesAtOnceAndTheSlowLookupGetsItsDeadline) {
    limits bounds;
    bounds.lookup_timeout = std::chrono::milliseconds(500);
    open_with(system(), allow({"*.test"}), bounds);
    const unique_fd slow = client();
    send_all(slow.get(), connect_line("slow.test", 443));
    ASSERT_TRUE(held_->wait_until_held(1));

    unique_fd other_forwarder;
    const auto other = another(fast_and_echo(), other_forwarder);
    ASSERT_TRUE(other);
    const unique_fd fast = client(other_forwarder.get());
    expect_tunnel(fast.get());
    EXPECT_EQ(other->report().connections, 1U);
    EXPECT_EQ(held_->held(), 1);  // answered while the slow lookup still blocks

    const auto asked = std::chrono::steady_clock::now();
    const std::string answer = read_to_eof(slow.get());
    EXPECT_TRUE(answer.starts_with("HTTP/1.1 502 Bad Gateway\r\n")) << answer;
    EXPECT_NE(answer.find("cordon: network access to slow.test:443 failed (DNS lookup timed out)"),
              std::string::npos)
        << answer;
    EXPECT_LT(std::chrono::steady_clock::now() - asked, std::chrono::seconds(5));
    EXPECT_TRUE(session_->report().blocked.empty());
    EXPECT_EQ(held_->held(), 1);  // abandoned, still blocked: nothing waited for it

    const unique_fd socks = client();
    send_all(socks.get(), std::string("\x05\x01\x00", 3));
    EXPECT_EQ(read_exact(socks.get(), 2), std::string("\x05\x00", 2));
    send_all(socks.get(),
             std::string("\x05\x01\x00\x03\x0a", 5) + "slow2.test" + std::string("\x01\xbb", 2));
    const std::string reply = read_to_eof(socks.get());
    ASSERT_GE(reply.size(), 2U);
    EXPECT_EQ(reply[1], static_cast<char>(socks5::host_unreachable));
    EXPECT_TRUE(session_->report().blocked.empty());
}

// Over the session's bound a lookup fails at once, and a lookup abandoned at its deadline counts
// until its thread returns; another session resolves all the while.
TEST_F(SlowZone, TheSessionsBoundFailsFastAndCountsAbandonedLookups) {
    limits bounds;
    bounds.max_lookups_per_session = 1;
    bounds.lookup_timeout = std::chrono::milliseconds(300);
    open_with(system(), allow({"*.test", "127.0.0.1:" + std::to_string(echo_.port())}), bounds);
    const unique_fd slow = client();
    send_all(slow.get(), connect_line("slow.test", 443));
    ASSERT_TRUE(held_->wait_until_held(1));

    const std::string over = ask(connect_line("fast.test", echo_.port()));
    EXPECT_TRUE(over.starts_with("HTTP/1.1 502 Bad Gateway\r\n")) << over;
    EXPECT_NE(over.find("(too many DNS lookups in flight)"), std::string::npos) << over;

    unique_fd other_forwarder;
    const auto other = another(fast_and_echo(), other_forwarder);
    ASSERT_TRUE(other);
    const unique_fd fast = client(other_forwarder.get());
    expect_tunnel(fast.get());

    EXPECT_NE(read_to_eof(slow.get()).find("(DNS lookup timed out)"), std::string::npos);
    EXPECT_EQ(held_->held(), 1);
    const std::string still = ask(connect_line("fast.test", echo_.port()));
    EXPECT_NE(still.find("(too many DNS lookups in flight)"), std::string::npos) << still;
    EXPECT_TRUE(session_->report().blocked.empty());
    EXPECT_EQ(session_->report().connections, 0U);
}

// The process's bound: over it a lookup fails at once, in any session.
TEST_F(SlowZone, TheProcessBoundFailsFast) {
    open_with(system_resolver(held_->function(), 1), allow({"*.test"}));
    const unique_fd slow = client();
    send_all(slow.get(), connect_line("slow.test", 443));
    ASSERT_TRUE(held_->wait_until_held(1));
    unique_fd other_forwarder;
    const auto other = another(allow({"*.test"}), other_forwarder);
    ASSERT_TRUE(other);
    const unique_fd over = client(other_forwarder.get());
    send_all(over.get(), connect_line("fast.test", 443));
    const std::string answer = read_to_eof(over.get());
    EXPECT_NE(answer.find("(too many DNS lookups in flight)"), std::string::npos) << answer;
}

// Closing the last session while a lookup is in flight returns at once: the caller is a run's
// event loop, which must not wait for DNS. The proxy's thread stays for the next session, which
// neither waits for the lookup, and destroying the service (the process's exit) joins the
// thread without waiting for the lookup either.
TEST_F(SlowZone, ClosingTheLastSessionAndTheServiceNeverWaitForALookupInFlight) {
    open_with(system(), allow({"*.test"}));
    const unique_fd fd = client();
    send_all(fd.get(), connect_line("slow.test", 443));
    ASSERT_TRUE(held_->wait_until_held(1));

    auto closed = std::async(std::launch::async, [this] { session_.reset(); });
    const bool returned = closed.wait_for(std::chrono::seconds(30)) == std::future_status::ready;
    EXPECT_TRUE(returned) << "closing the session waited for the lookup";
    if (!returned) held_->release();
    closed.wait();
    EXPECT_EQ(read_to_eof(fd.get()), "");
    EXPECT_TRUE(service_->running());

    // The next run's session neither waits for it, and is served.
    unique_fd forwarder;
    auto reopened = std::async(std::launch::async, [&] {
        return another(allow({"local.test", "slow.test"}, {}, local_test), forwarder);
    });
    const bool opened = reopened.wait_for(std::chrono::seconds(30)) == std::future_status::ready;
    EXPECT_TRUE(opened) << "opening a session waited for the lookup";
    if (!opened) held_->release();
    session_ = reopened.get();
    ASSERT_TRUE(session_);
    forwarder_ = std::move(forwarder);
    EXPECT_TRUE(service_->running());
    const unique_fd served = client();
    send_all(served.get(), connect_line("local.test", echo_.port()));
    EXPECT_EQ(read_exact(served.get(), connect_established.size()), connect_established);
    expect_echo(served.get());
    const unique_fd slow_again = client();
    send_all(slow_again.get(), connect_line("slow.test", 443));
    ASSERT_TRUE(held_->wait_until_held(2));

    // The service goes with both lookups blocked: its io_context is destroyed under them, and
    // their answers, once released, are dropped (ASan: nothing touches the context).
    auto destroyed = std::async(std::launch::async, [this] {
        session_.reset();
        service_.reset();
    });
    const bool gone = destroyed.wait_for(std::chrono::seconds(30)) == std::future_status::ready;
    EXPECT_TRUE(gone) << "destroying the service waited for the lookups";
    held_->release();
    destroyed.wait();
}

// Every socket the proxy opens is close-on-exec (Asio's own are not): a run spawned meanwhile
// must not inherit another run's connection upstream.
TEST_F(ProxyService, TheSocketsUpstreamAreCloseOnExec) {
    open(allow({"local.test"}, {}, local_test));
    const unique_fd fd = client();
    send_all(fd.get(), connect_line("local.test", echo_.port()));
    EXPECT_EQ(read_exact(fd.get(), connect_established.size()), connect_established);
    expect_echo(fd.get());
    int upstream = 0;
    for (const auto& entry : std::filesystem::directory_iterator("/proc/self/fd")) {
        const int each = std::stoi(entry.path().filename().string());
        sockaddr_storage peer{};
        socklen_t size = sizeof peer;
        if (::getpeername(each, reinterpret_cast<sockaddr*>(&peer), &size) != 0 ||
            peer.ss_family != AF_INET) {
            continue;
        }
        if (ntohs(reinterpret_cast<const sockaddr_in*>(&peer)->sin_port) != echo_.port()) continue;
        ++upstream;
        EXPECT_NE(::fcntl(each, F_GETFD) & FD_CLOEXEC, 0) << "fd " << each;
    }
    EXPECT_EQ(upstream, 1);
}

TEST_F(ProxyService, ConnectionsOverTheCapAreClosedAtOnce) {
    limits bounds;
    bounds.max_connections = 2;
    open(allow({"local.test"}, {}, local_test), bounds);
    const unique_fd first = client();
    const unique_fd second = client();
    const unique_fd third = client();
    EXPECT_EQ(read_to_eof(third.get()), "");
    send_all(first.get(), connect_line("local.test", echo_.port()));
    EXPECT_EQ(read_exact(first.get(), connect_established.size()), connect_established);
    expect_echo(first.get());
}

TEST_F(ProxyService, TheReportKeepsSixteenDestinationsAndCountsTheRest) {
    open(allow({"local.test"}));
    for (int i = 0; i < 18; ++i)
        ask(connect_line("n" + std::to_string(i) + ".test", 443));
    ask(connect_line("n0.test", 443));
    const session_report report = session_->report();
    ASSERT_EQ(report.blocked.size(), default_max_blocked);
    EXPECT_EQ(report.blocked[0].destination, "n0.test:443");
    EXPECT_EQ(report.blocked[0].count, 2U);
    EXPECT_EQ(report.blocked[15].destination, "n15.test:443");
    EXPECT_EQ(report.blocked_more, 2U);
    EXPECT_FALSE(report.failure.has_value());
}

TEST_F(ProxyService, ClosingTheSessionClosesRelaysAndTheForwarderEnd) {
    open(allow({"local.test"}, {}, local_test));
    const unique_fd fd = client();
    send_all(fd.get(), connect_line("local.test", echo_.port()));
    EXPECT_EQ(read_exact(fd.get(), connect_established.size()), connect_established);
    expect_echo(fd.get());
    session_.reset();
    EXPECT_EQ(read_to_eof(fd.get()), "");
    EXPECT_EQ(read_some(forwarder_.get()), "");  // end of file: the forwarder stops
    EXPECT_TRUE(service_->running());            // idle, for the next session
}

// The thread starts with the first session and stays, idle, when the last one closes: the next
// session is served on it.
TEST_F(ProxyService, TheThreadStartsWithTheFirstSessionAndOutlivesTheLast) {
    service_.emplace(names_);
    EXPECT_FALSE(service_->running());
    auto first = std::get<std::unique_ptr<session>>(service_->open(allow({"local.test"})));
    auto second = std::get<std::unique_ptr<session>>(service_->open(allow({"local.test"})));
    EXPECT_TRUE(service_->running());
    first.reset();
    EXPECT_TRUE(service_->running());
    second.reset();
    EXPECT_TRUE(service_->running());
    session_ =
        std::get<std::unique_ptr<session>>(service_->open(allow({"local.test"}, {}, local_test)));
    forwarder_ = session_->take_forwarder_end();
    EXPECT_TRUE(service_->running());
    const unique_fd fd = client();
    send_all(fd.get(), connect_line("local.test", echo_.port()));
    EXPECT_EQ(read_exact(fd.get(), connect_established.size()), connect_established);
    EXPECT_FALSE(session_->take_forwarder_end());  // taken once
}

TEST_F(ProxyService, AnInvalidRuleIsRefusedWithItsReason) {
    service_.emplace(names_);
    auto opened = service_->open(allow({"*"}));
    ASSERT_TRUE(std::holds_alternative<std::string>(opened));
    EXPECT_EQ(std::get<std::string>(opened),
              "invalid allowed_domains entry \"*\": matches every name (use network allow)");
    EXPECT_FALSE(service_->running());
}

TEST_F(ProxyService, MessagesWithoutExactlyOneFdAreIgnored) {
    open(allow({"local.test"}, {}, local_test));
    hand_over(forwarder_.get(), {});
    auto [one, one_accepted] = door_.connect();
    auto [two, two_accepted] = door_.connect();
    hand_over(forwarder_.get(), {one_accepted.get(), two_accepted.get()});
    one_accepted.reset();
    two_accepted.reset();
    EXPECT_EQ(read_to_eof(one.get()), "");  // the proxy closed both fds it was given
    EXPECT_EQ(read_to_eof(two.get()), "");
    const unique_fd fd = client();
    send_all(fd.get(), connect_line("local.test", echo_.port()));
    EXPECT_EQ(read_exact(fd.get(), connect_established.size()), connect_established);
}

TEST_F(ProxyService, EndOfFileOnTheForwarderEndLeavesRelaysRunning) {
    open(allow({"local.test"}, {}, local_test));
    const unique_fd fd = client();
    send_all(fd.get(), connect_line("local.test", echo_.port()));
    EXPECT_EQ(read_exact(fd.get(), connect_established.size()), connect_established);
    forwarder_.reset();
    expect_echo(fd.get());
    expect_echo(fd.get());
}

TEST_F(ProxyService, AFailedThreadFailsEverySessionClosed) {
    open(allow({"*.test"}, {}, local_test));
    names_->map("boom.test", "throw");
    const unique_fd relayed = client();
    send_all(relayed.get(), connect_line("local.test", echo_.port()));
    EXPECT_EQ(read_exact(relayed.get(), connect_established.size()), connect_established);
    const unique_fd fd = client();
    send_all(fd.get(), connect_line("boom.test", 443));
    EXPECT_EQ(read_to_eof(fd.get()), "");
    EXPECT_EQ(read_to_eof(relayed.get()), "");  // fail closed: the relay is gone too
    EXPECT_EQ(read_some(forwarder_.get()), "");
    const auto failure = session_->report().failure;
    ASSERT_TRUE(failure.has_value());
    EXPECT_EQ(*failure, "the proxy's thread failed: a handler threw");
    session_.reset();

    // The thread itself goes on: the next run's session is served.
    EXPECT_TRUE(service_->running());
    unique_fd forwarder;
    session_ = another(allow({"local.test"}, {}, local_test), forwarder);
    ASSERT_TRUE(session_);
    forwarder_ = std::move(forwarder);
    const unique_fd next = client();
    send_all(next.get(), connect_line("local.test", echo_.port()));
    EXPECT_EQ(read_exact(next.get(), connect_established.size()), connect_established);
    expect_echo(next.get());
    EXPECT_FALSE(session_->report().failure.has_value());
}

}  // namespace
}  // namespace cordon::proxy::test
