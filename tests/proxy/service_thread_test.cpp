// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

// The proxy's thread between sessions, driven step by step: a resolver that hands the test the
// proxy's executor from inside a lookup (on the proxy's thread), a handler there that the test
// holds on a gate, and every wait of the test's bounded, so that a close or an open that would
// hang fails the test instead.
#include "proxy/service.hpp"

#include <gtest/gtest.h>

#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <future>
#include <mutex>

#include "tests/proxy/proxy_fixture.hpp"

namespace cordon::proxy::test {
namespace {

// Opened once; waited for with patience_ms at most.
class gate {
public:
    void open() {
        const std::lock_guard lock(mutex_);
        opened_ = true;
        changed_.notify_all();
    }
    [[nodiscard]] bool wait() {
        std::unique_lock lock(mutex_);
        return changed_.wait_for(lock, std::chrono::milliseconds(patience_ms),
                                 [this] { return opened_; });
    }

private:
    std::mutex mutex_;
    std::condition_variable changed_;
    bool opened_ = false;
};

// Never answers: it calls the test's hook, on the proxy's thread (a lookup starts there), with
// the lookup, whose executor is the proxy's.
class hooked_resolver final : public resolver {
public:
    explicit hooked_resolver(std::function<void(const std::shared_ptr<lookup>&)> hook)
        : hook_(std::move(hook)) {}
    void async_resolve(const std::string&, std::shared_ptr<lookup> pending) override {
        hook_(pending);
    }

private:
    const std::function<void(const std::shared_ptr<lookup>&)> hook_;
};

class ProxyThread : public ::testing::Test {
protected:
    std::unique_ptr<session> open_session(sandbox::network_rules network, unique_fd& forwarder) {
        return test::open_session(*service_, std::move(network), forwarder);
    }

    unique_fd client(int forwarder) {
        auto [client, accepted] = door_.connect();
        hand_over(forwarder, {accepted.get()});
        return std::move(client);
    }

    // A tunnel through `forwarder`'s session to the echo server, and a byte echoed through it.
    void expect_served(int forwarder) {
        const unique_fd fd = client(forwarder);
        send_all(fd.get(), "CONNECT local.test:" + std::to_string(echo_.port()) +
                               " HTTP/1.1\r\nHost: x\r\n\r\n");
        EXPECT_EQ(read_exact(fd.get(), connect_established.size()), connect_established);
        send_all(fd.get(), "ping");
        EXPECT_EQ(read_exact(fd.get(), 4), "ping");
    }

    // Runs `step` on a thread of its own; false when it has not returned within patience_ms
    // (it is then left to finish, or hang, on its own: the test has failed).
    static bool within_patience(std::function<void()> step) {
        auto ran = std::make_shared<std::packaged_task<void()>>(std::move(step));
        auto done = ran->get_future();
        std::thread([ran] { (*ran)(); }).detach();
        return done.wait_for(std::chrono::milliseconds(patience_ms)) == std::future_status::ready;
    }

    static sandbox::network_rules local_rules() {
        sandbox::network_rules network;
        network.allowed_domains = {"local.test"};
        network.proxy_resolve = {{"local.test", "127.0.0.1"}};
        return network;
    }
    static sandbox::network_rules held_rules() {
        sandbox::network_rules network;
        network.allowed_domains = {"held.test"};
        return network;
    }
    static std::string held_request() {
        return "CONNECT held.test:443 HTTP/1.1\r\nHost: x\r\n\r\n";
    }

    // Whatever a failed test left held returns.
    void TearDown() override { go_.open(); }

    upstream_server echo_{true};
    front_door door_;
    gate asked_;
    gate entered_;
    gate go_;
    gate closed_;
    std::mutex doomed_mutex_;
    std::unique_ptr<session> doomed_;  // guarded by doomed_mutex_
    std::optional<service> service_;
    // Made on the proxy's context: destroyed before it.
    std::shared_ptr<boost::asio::steady_timer> in_flight_;
};

// The interleaving that once lost a session: the last session closes while a lookup is in
// flight, a handler of the closed session's (here a timer the lookup armed) is the last work on
// the proxy's thread, and the next session is opened exactly while that handler runs. The
// thread, which used to stop as that handler returned, stays: the new session is started,
// serves a connection, and closes in bounded time.
TEST_F(ProxyThread, ASessionOpenedWhileTheLastSessionsLastHandlerRunsIsServed) {
    service_.emplace(
        std::make_shared<hooked_resolver>([this](const std::shared_ptr<resolver::lookup>& pending) {
            // On the proxy's thread: work of the closed session's that runs after its close.
            in_flight_ = std::make_shared<boost::asio::steady_timer>(
                pending->executor(), std::chrono::steady_clock::time_point::max());
            in_flight_->async_wait([this](const boost::system::error_code&) {
                entered_.open();
                (void)go_.wait();
            });
            asked_.open();
        }));

    unique_fd first_forwarder;
    auto first = open_session(held_rules(), first_forwarder);
    ASSERT_TRUE(first);
    const unique_fd held = client(first_forwarder.get());
    send_all(held.get(), held_request());
    ASSERT_TRUE(asked_.wait()) << "the lookup never started";

    ASSERT_TRUE(within_patience([&] { first.reset(); })) << "closing the first session hung";
    EXPECT_EQ(read_to_eof(held.get()), "");
    EXPECT_TRUE(service_->running()) << "the thread stopped with the last session";

    // The handler runs on the proxy's thread and is held there while the next session opens.
    boost::asio::post(in_flight_->get_executor(), [timer = in_flight_] { timer->cancel(); });
    ASSERT_TRUE(entered_.wait()) << "the handler in flight never ran";
    unique_fd second_forwarder;
    std::unique_ptr<session> second;
    const bool opened =
        within_patience([&] { second = open_session(local_rules(), second_forwarder); });
    go_.open();
    ASSERT_TRUE(opened) << "opening the second session hung";
    ASSERT_TRUE(second);

    expect_served(second_forwarder.get());
    EXPECT_EQ(second->report().connections, 1U);
    EXPECT_TRUE(within_patience([&] { second.reset(); })) << "closing the second session hung";
}

// A session closed on the proxy's own thread is closed there and then: a close that waited for
// the thread it runs on would wait forever. The other session goes on.
TEST_F(ProxyThread, ASessionClosedOnTheProxysThreadIsClosedThereAndThen) {
    service_.emplace(
        std::make_shared<hooked_resolver>([this](const std::shared_ptr<resolver::lookup>&) {
            std::unique_ptr<session> closing;
            {
                const std::lock_guard lock(doomed_mutex_);
                closing = std::move(doomed_);
            }
            closing.reset();
            closed_.open();
        }));
    unique_fd asking_forwarder;
    const auto asking = open_session(held_rules(), asking_forwarder);
    ASSERT_TRUE(asking);
    unique_fd doomed_forwarder;
    {
        const std::lock_guard lock(doomed_mutex_);
        doomed_ = open_session(local_rules(), doomed_forwarder);
        ASSERT_TRUE(doomed_);
    }
    const unique_fd relayed = client(doomed_forwarder.get());
    send_all(relayed.get(),
             "CONNECT local.test:" + std::to_string(echo_.port()) + " HTTP/1.1\r\nHost: x\r\n\r\n");
    EXPECT_EQ(read_exact(relayed.get(), connect_established.size()), connect_established);

    const unique_fd held = client(asking_forwarder.get());
    send_all(held.get(), held_request());
    ASSERT_TRUE(closed_.wait()) << "the close on the proxy's thread waited for itself";
    EXPECT_EQ(read_to_eof(relayed.get()), "");
    EXPECT_EQ(read_some(doomed_forwarder.get()), "");  // end of file: the forwarder stops
    EXPECT_TRUE(service_->running());

    // The service goes on: the next session is served.
    sandbox::network_rules both = local_rules();
    both.allowed_domains.push_back("held.test");
    unique_fd next_forwarder;
    const auto next = open_session(both, next_forwarder);
    ASSERT_TRUE(next);
    expect_served(next_forwarder.get());
}

}  // namespace
}  // namespace cordon::proxy::test
