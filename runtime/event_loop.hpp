// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

// An event loop that a long-lived thread runs for others (the job supervisor's): a handler that
// lets an exception out (bad_alloc, a defect) must not take the process down and, with it, every
// run without its kill plan. What a caller's own callbacks throw never gets this far: their run
// catches it and ends (process.cpp).
#pragma once

#include <boost/asio/io_context.hpp>

#include <string_view>

namespace cordon::runtime {

// Runs `io` until it is stopped or out of work. An exception a handler lets out is logged (as
// `whose` loop's) and the loop goes on: io_context::run may be called again after one.
void run_through_exceptions(boost::asio::io_context& io, std::string_view whose) noexcept;

}  // namespace cordon::runtime
