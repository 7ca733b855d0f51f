// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

// The proxy's budgets (proxy/budget.hpp, docs/network.md "What the proxy holds"): connections of
// every run of a process together, the top of the descriptor table kept for new calls, and a
// connection that sends nothing closed before the head deadline. Real loopback sockets handed to
// real sessions, as the sandbox's forwarder hands them; every wait is on a socket event.
#include <gtest/gtest.h>
#include <sys/resource.h>

#include <chrono>
#include <thread>
#include <vector>

#include "proxy/budget.hpp"
#include "proxy/service.hpp"
#include "tests/proxy/proxy_fixture.hpp"

namespace cordon::proxy::test {
namespace {

const std::vector<sandbox::host_mapping> budget_local_test = {{"local.test", "127.0.0.1"}};

sandbox::network_rules budget_rules() {
    sandbox::network_rules network;
    network.policy = sandbox::network_policy::proxy;
    network.allowed_domains = {"local.test"};
    network.proxy_resolve = budget_local_test;
    return network;
}

class ProxyBudget : public ::testing::Test {
protected:
    struct run {
        std::unique_ptr<session> served;
        unique_fd forwarder;
    };
    void make_service(limits bounds) { service_.emplace(nullptr, bounds); }
    run open_run() {
        auto opened = service_->open(budget_rules());
        if (!std::holds_alternative<std::unique_ptr<session>>(opened)) {
            ADD_FAILURE() << std::get<std::string>(opened);
            return {};
        }
        run out{std::get<std::unique_ptr<session>>(std::move(opened)), {}};
        out.forwarder = out.served->take_forwarder_end();
        return out;
    }
    unique_fd client(const run& through) {
        auto [client, accepted] = door_.connect();
        hand_over(through.forwarder.get(), {accepted.get()});
        return std::move(client);
    }
    // Whether the proxy serves `fd`: a CONNECT through it reaches the echo server.
    bool served(int fd) {
        send_all(fd, "CONNECT local.test:" + std::to_string(echo_.port()) +
                         " HTTP/1.1\r\nHost: x\r\n\r\n");
        if (read_exact(fd, connect_established.size()) != connect_established) return false;
        send_all(fd, "ping");
        return read_exact(fd, 4) == "ping";
    }
    // Until the process counts `count` connections; false after patience_ms.
    static bool wait_for_count(std::size_t count) {
        const auto until =
            std::chrono::steady_clock::now() + std::chrono::milliseconds(patience_ms);
        while (process_connections().in_use() != count) {
            if (std::chrono::steady_clock::now() >= until) return false;
            std::this_thread::sleep_for(std::chrono::milliseconds(5));
        }
        return true;
    }

    upstream_server echo_{true};
    front_door door_;
    std::optional<service> service_;
};

TEST(ProxyBudgets, FollowTheDescriptorLimit) {
    EXPECT_EQ(connection_budget(1024), 128U);  // a quarter of the table, two descriptors each
    EXPECT_EQ(connection_budget(256), 32U);
    EXPECT_EQ(connection_budget(1 << 20), default_max_process_connections);
    EXPECT_EQ(connection_budget(4), 1U);
    EXPECT_EQ(lookup_thread_budget(1024, default_max_lookup_threads), 64U);
    EXPECT_EQ(lookup_thread_budget(1 << 20, default_max_lookup_threads),
              default_max_lookup_threads);
    EXPECT_TRUE(in_reserve(1000, 1024));
    EXPECT_FALSE(in_reserve(900, 1024));
}

// The bound is the process's, not a run's: two runs of one service share it, and a connection
// that closes gives its place back to either.
TEST_F(ProxyBudget, ConnectionsOverTheProcessBoundAreClosedAsTheyArriveWhicheverRunOpensThem) {
    limits bounds;
    bounds.max_process_connections = 3;
    make_service(bounds);
    run first = open_run();
    run second = open_run();
    ASSERT_TRUE(first.served && second.served);
    const std::size_t before = process_connections().in_use();
    unique_fd a1 = client(first);
    const unique_fd a2 = client(first);
    const unique_fd b1 = client(second);
    const unique_fd b2 = client(second);  // the fourth: over the bound
    EXPECT_EQ(read_to_eof(b2.get()), "");
    const unique_fd a3 = client(first);
    EXPECT_EQ(read_to_eof(a3.get()), "");
    EXPECT_TRUE(served(a2.get()));
    EXPECT_TRUE(served(b1.get()));
    EXPECT_EQ(process_connections().in_use(), before + 3);

    const session_report one = first.served->report();
    const session_report two = second.served->report();
    EXPECT_EQ(one.refused_connections, 1U);
    EXPECT_EQ(two.refused_connections, 1U);
    EXPECT_EQ(two.refused_reason, "too many proxy connections in cordon at once (3)");
    EXPECT_TRUE(one.blocked.empty());  // no destination was read: no refusal of the policy's

    a1.reset();  // its place comes back once the proxy has closed its end
    ASSERT_TRUE(wait_for_count(before + 2));
    const unique_fd b3 = client(second);
    EXPECT_TRUE(served(b3.get()));
    EXPECT_EQ(second.served->report().refused_connections, 1U);
}

// A run's own bound says so too.
// A run holding many connections (a job keeping half-sent heads open and reopening what the
// deadlines close) cannot take the whole budget: its last quarter is another run's.
TEST_F(ProxyBudget, ARunHoldingManyLeavesTheLastQuarterToTheOthers) {
    limits bounds;
    bounds.max_process_connections = 40;
    make_service(bounds);
    run hog = open_run();
    run late = open_run();
    ASSERT_TRUE(hog.served && late.served);
    // Another test's connections go once the proxy has closed its ends.
    ASSERT_TRUE(wait_for_count(0));
    std::vector<unique_fd> held;
    for (int i = 0; i < 40; ++i)
        held.push_back(client(hog));
    // Served up to three quarters of the budget, the rest closed as they arrived.
    EXPECT_TRUE(served(held[29].get()));
    EXPECT_EQ(read_to_eof(held[30].get()), "");
    EXPECT_EQ(read_to_eof(held[39].get()), "");
    EXPECT_EQ(process_connections().in_use(), 30U);
    EXPECT_EQ(
        hog.served->report().refused_reason,
        "the rest of cordon's proxy connections (40 at once) are kept for runs that hold few");

    std::vector<unique_fd> few;
    for (std::size_t i = 0; i < few_connections; ++i) {
        few.push_back(client(late));
        EXPECT_TRUE(served(few.back().get())) << "connection " << i << " of the late run";
    }
    EXPECT_EQ(late.served->report().refused_connections, 0U);
}

TEST_F(ProxyBudget, ARunsOwnBoundIsRecordedWithItsReason) {
    limits bounds;
    bounds.max_connections = 1;
    make_service(bounds);
    run only = open_run();
    ASSERT_TRUE(only.served);
    const unique_fd kept = client(only);
    const unique_fd over = client(only);
    EXPECT_EQ(read_to_eof(over.get()), "");
    EXPECT_TRUE(served(kept.get()));
    EXPECT_EQ(only.served->report().refused_connections, 1U);
    EXPECT_EQ(only.served->report().refused_reason, "too many connections of this run at once (1)");
}

// Lowers the soft RLIMIT_NOFILE for the scope.
class soft_descriptor_limit {
public:
    explicit soft_descriptor_limit(rlim_t soft) {
        ::getrlimit(RLIMIT_NOFILE, &saved_);
        rlimit lowered = saved_;
        lowered.rlim_cur = soft;
        ok_ = ::setrlimit(RLIMIT_NOFILE, &lowered) == 0;
    }
    ~soft_descriptor_limit() { ::setrlimit(RLIMIT_NOFILE, &saved_); }
    [[nodiscard]] bool ok() const { return ok_; }

private:
    rlimit saved_{};
    bool ok_ = false;
};

// Whatever fills the table, the proxy keeps away from its top: a connection whose descriptor
// arrives within call_reserve of the limit is closed, and one that arrives lower is served.
TEST_F(ProxyBudget, AConnectionAtTheTopOfTheDescriptorTableIsClosed) {
    make_service({});
    run only = open_run();
    ASSERT_TRUE(only.served);
    const unique_fd warm = client(only);  // the proxy's thread and its descriptors are up
    ASSERT_TRUE(served(warm.get()));
    unique_fd probe(::fcntl(0, F_DUPFD_CLOEXEC, 0));
    ASSERT_TRUE(probe);
    const auto lowest_free = static_cast<rlim_t>(probe.get());
    probe.reset();
    {
        // Room for the test's two ends and the proxy's copy, all within the reserve.
        const soft_descriptor_limit lowered(lowest_free + 16);
        ASSERT_TRUE(lowered.ok());
        const unique_fd near_the_top = client(only);
        EXPECT_EQ(read_to_eof(near_the_top.get()), "");
    }
    const session_report report = only.served->report();
    EXPECT_EQ(report.refused_connections, 1U);
    EXPECT_NE(report.refused_reason.find("cordon's descriptor table is nearly full"),
              std::string::npos)
        << report.refused_reason;
    const unique_fd after = client(only);
    EXPECT_TRUE(served(after.get()));
}

// A client that has sent nothing by the first-byte deadline is closed; one that has sent part of
// its request keeps the head deadline and is served when the rest comes.
TEST_F(ProxyBudget, AConnectionThatSendsNothingIsClosedBeforeTheHeadDeadline) {
    limits bounds;
    bounds.first_byte_timeout = std::chrono::milliseconds(200);
    make_service(bounds);
    run only = open_run();
    ASSERT_TRUE(only.served);
    const unique_fd talking = client(only);
    send_all(talking.get(), "CONNECT local.te");
    const unique_fd silent = client(only);
    const auto start = std::chrono::steady_clock::now();
    EXPECT_EQ(read_to_eof(silent.get()), "");
    EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
    pollfd still{talking.get(), POLLIN, 0};
    EXPECT_EQ(::poll(&still, 1, 0), 0);  // its own first-byte deadline passed earlier
    send_all(talking.get(), "st:" + std::to_string(echo_.port()) + " HTTP/1.1\r\nHost: x\r\n\r\n");
    EXPECT_EQ(read_exact(talking.get(), connect_established.size()), connect_established);
    EXPECT_EQ(only.served->report().refused_connections, 0U);  // a deadline, not a bound
}

}  // namespace
}  // namespace cordon::proxy::test
