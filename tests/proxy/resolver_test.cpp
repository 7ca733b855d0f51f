// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

// The system resolver with the lookup a test holds (proxy_fixture.hpp, held_lookups): lookups run
// in parallel, a lookup in flight is no work for the proxy's io_context, and an abandoned one
// never calls its completion, even once its thread returns.
#include "proxy/resolver.hpp"

#include <gtest/gtest.h>

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <chrono>
#include <future>
#include <thread>

#include "tests/proxy/proxy_fixture.hpp"

namespace cordon::proxy::test {
namespace {

class SystemResolver : public ::testing::Test {
protected:
    void SetUp() override {
        held_->map("slow.test", "hold");
        held_->map("fast.test", "127.0.0.1");
    }
    // The context goes with the test: every lookup still held is abandoned first, as the
    // service abandons its connections' (a thread's answer posted to a destroyed context would be
    // a use after free).
    void TearDown() override {
        for (const auto& each : lookups_)
            each->abandon();
        held_->release();
    }

    // A lookup whose answer is kept in `answered`.
    std::shared_ptr<resolver::lookup> pending(std::optional<resolver::result>& answered) {
        lookups_.push_back(std::make_shared<resolver::lookup>(
            context_.get_executor(), [&answered](resolver::result found) { answered = found; }));
        return lookups_.back();
    }

    // Runs one handler, waiting for it: a lookup in flight is no work, so the context needs some
    // while the test waits for an answer.
    std::size_t run_one() {
        const auto work = boost::asio::make_work_guard(context_);
        return context_.run_one_for(std::chrono::milliseconds(patience_ms));
    }

    // Until `slots` has none in use (the held lookups' threads returned and answered).
    static bool wait_until_free(const lookup_slots& slots) {
        const auto until =
            std::chrono::steady_clock::now() + std::chrono::milliseconds(patience_ms);
        while (slots.in_use() != 0) {
            if (std::chrono::steady_clock::now() > until) return false;
            std::this_thread::sleep_for(std::chrono::milliseconds(1));
        }
        return true;
    }

    std::shared_ptr<held_lookups> held_ = std::make_shared<held_lookups>();
    boost::asio::io_context context_;
    std::vector<std::shared_ptr<resolver::lookup>> lookups_;
};

TEST_F(SystemResolver, ALookupIsAnsweredWhileAnotherIsHeld) {
    const auto names = system_resolver(held_->function());
    std::optional<resolver::result> slow;
    std::optional<resolver::result> fast;
    names->async_resolve("slow.test", pending(slow));
    ASSERT_TRUE(held_->wait_until_held(1));
    names->async_resolve("fast.test", pending(fast));
    EXPECT_EQ(run_one(), 1U);
    ASSERT_TRUE(fast.has_value());
    ASSERT_TRUE(fast->ok());
    EXPECT_EQ(fast->value().front().to_string(), "127.0.0.1");
    EXPECT_FALSE(slow.has_value());
}

// The proxy's thread ends with its last session: a lookup in flight must not keep it running.
TEST_F(SystemResolver, ALookupInFlightIsNoWorkForTheContext) {
    const auto names = system_resolver(held_->function());
    std::optional<resolver::result> slow;
    names->async_resolve("slow.test", pending(slow));
    ASSERT_TRUE(held_->wait_until_held(1));
    auto ran = std::async(std::launch::async, [this] { return context_.run(); });
    const bool returned = ran.wait_for(std::chrono::seconds(30)) == std::future_status::ready;
    EXPECT_TRUE(returned) << "the context waited for the lookup";
    if (!returned) held_->release();
    EXPECT_EQ(ran.get(), 0U);
}

// Abandoned: the completion (and what it holds) goes at once, on the abandoning thread, and the
// answer the thread brings later is dropped; the session's slot comes back with it.
TEST_F(SystemResolver, AnAbandonedLookupNeverCallsItsCompletion) {
    const auto names = system_resolver(held_->function());
    const auto slots = std::make_shared<lookup_slots>(1);
    auto token = std::make_shared<int>(0);
    const std::weak_ptr<int> watched = token;
    bool called = false;
    auto lookup = std::make_shared<resolver::lookup>(
        context_.get_executor(),
        [token = std::move(token), &called](resolver::result) { called = true; },
        slots->try_take());
    EXPECT_FALSE(slots->try_take().has_value());  // the one slot is the lookup's
    names->async_resolve("slow.test", lookup);
    ASSERT_TRUE(held_->wait_until_held(1));
    lookup->abandon();
    EXPECT_TRUE(watched.expired());
    EXPECT_EQ(slots->in_use(), 1U);  // its thread still runs
    held_->release();
    ASSERT_TRUE(wait_until_free(*slots));
    EXPECT_EQ(context_.run(), 0U);
    EXPECT_FALSE(called);
}

TEST_F(SystemResolver, OverTheProcessBoundALookupFailsAtOnce) {
    const auto names = system_resolver(held_->function(), 1);
    std::optional<resolver::result> slow;
    std::optional<resolver::result> over;
    names->async_resolve("slow.test", pending(slow));
    ASSERT_TRUE(held_->wait_until_held(1));
    names->async_resolve("fast.test", pending(over));
    EXPECT_EQ(run_one(), 1U);
    ASSERT_TRUE(over.has_value());
    ASSERT_FALSE(over->ok());
    EXPECT_EQ(over->kind(), lookup_failure::too_many);
    EXPECT_EQ(over->message(), too_many_lookups);
    EXPECT_FALSE(slow.has_value());
}

// A lookup abandoned (its connection or run is gone) gives the process's bound back at once: runs
// that ended on a slow zone never starve the next ones. Its thread still counts, against the
// bound on threads.
TEST_F(SystemResolver, AnAbandonedLookupGivesTheProcessBoundBackNotItsThread) {
    const auto names = system_resolver(held_->function(), 1, 2);
    std::optional<resolver::result> first;
    std::optional<resolver::result> second;
    std::optional<resolver::result> third;
    names->async_resolve("slow.test", pending(first));
    ASSERT_TRUE(held_->wait_until_held(1));
    lookups_.back()->abandon();
    names->async_resolve("slow.test", pending(second));
    ASSERT_TRUE(held_->wait_until_held(2)) << "the abandoned lookup still held the bound";
    lookups_.back()->abandon();
    // Two threads still run: the bound on threads says no, at once.
    names->async_resolve("fast.test", pending(third));
    EXPECT_EQ(run_one(), 1U);
    ASSERT_TRUE(third.has_value());
    ASSERT_FALSE(third->ok());
    EXPECT_EQ(third->kind(), lookup_failure::too_many);
    EXPECT_EQ(third->message(), too_many_lookups);
    EXPECT_FALSE(first.has_value());
    EXPECT_FALSE(second.has_value());
}

TEST_F(SystemResolver, TheSystemsLookupResolvesAnAddressAndRefusesNothing) {
    const resolver::result found = getaddrinfo_lookup("127.0.0.1");
    ASSERT_TRUE(found.ok());
    EXPECT_EQ(found.value(), address_list{boost::asio::ip::make_address("127.0.0.1")});
    const resolver::result none = getaddrinfo_lookup("");
    ASSERT_FALSE(none.ok());
    EXPECT_EQ(none.kind(), lookup_failure::no_address);
    EXPECT_EQ(none.message(), "cannot be resolved");
}

}  // namespace
}  // namespace cordon::proxy::test
