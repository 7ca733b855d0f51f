// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

#include "runtime/event_loop.hpp"

#include <exception>

#include "base/log.hpp"

namespace cordon::runtime {

void run_through_exceptions(boost::asio::io_context& io, std::string_view whose) noexcept {
    for (;;) {
        try {
            io.run();
            return;
        } catch (const std::exception& error) {
            log::error("{} went on after an exception: {}", whose, error.what());
        } catch (...) {
            log::error("{} went on after an exception", whose);
        }
    }
}

}  // namespace cordon::runtime
