// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

// The supervisor's loop (runtime/event_loop.hpp): what a handler lets out is logged, and the loop
// goes on serving the handlers after it.
#include "runtime/event_loop.hpp"

#include <gtest/gtest.h>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/post.hpp>

#include <new>
#include <stdexcept>
#include <vector>

namespace cordon::runtime {
namespace {

TEST(EventLoop, AHandlerThatThrowsIsLoggedAndTheLoopGoesOn) {
    boost::asio::io_context io;
    auto work = boost::asio::make_work_guard(io);
    std::vector<int> ran;
    boost::asio::post(io, [&] {
        ran.push_back(1);
        throw std::runtime_error("a defect");
    });
    boost::asio::post(io, [&] {
        ran.push_back(2);
        throw std::bad_alloc();
    });
    boost::asio::post(io, [&] {
        ran.push_back(3);
        throw 42;  // not a std::exception
    });
    boost::asio::post(io, [&] {
        ran.push_back(4);
        work.reset();  // out of work once this returns: run_through_exceptions returns
    });
    run_through_exceptions(io, "the test's loop");
    EXPECT_EQ(ran, (std::vector<int>{1, 2, 3, 4}));
}

}  // namespace
}  // namespace cordon::runtime
