// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

// cordon-test-log-host: a program that embeds the library and makes it log, for the tests of where
// the library's log lines go (tests/base/logging_test.cpp).
//
//   cordon-test-log-host DIR [LEVEL [sink]]
//
// Sets the library's level to LEVEL (trace, debug, info, warn, error, off) when one is given, and
// with "sink" a sink that prints each line on stdout as "sink LEVEL: LINE". Then makes the library
// log: it sweeps DIR for the private /tmp of cordons that are gone (sandbox/private_tmp.hpp),
// which logs at info how many it removed, and logs a debug line and a warning through the
// library's logger as the library's own units do. Prints "swept N" on stdout last. Before and
// after, it logs a line of its own through spdlog's default logger, as a program that uses spdlog
// itself does ("host info: ..."): the library must leave that logger alone.
#include <spdlog/spdlog.h>

#include <cstdio>
#include <optional>
#include <string>
#include <string_view>

#include "base/log.hpp"
#include "cordon/logging.hpp"
#include "sandbox/private_tmp.hpp"

namespace {

std::optional<cordon::log_level> parse_level(std::string_view text) {
    for (const cordon::log_level level :
         {cordon::log_level::trace, cordon::log_level::debug, cordon::log_level::info,
          cordon::log_level::warn, cordon::log_level::error, cordon::log_level::off}) {
        if (cordon::to_string(level) == text) return level;
    }
    return std::nullopt;
}

}  // namespace

int main(int argc, char** argv) {
    spdlog::set_pattern("host %l: %v");
    spdlog::info("its own line, before cordon");
    const char* const usage = "usage: cordon-test-log-host DIR [LEVEL [sink]]\n";
    if (argc < 2 || argc > 4 || (argc == 4 && std::string_view(argv[3]) != "sink")) {
        std::fputs(usage, stderr);
        return 2;
    }
    if (argc >= 3) {
        const std::optional<cordon::log_level> level = parse_level(argv[2]);
        if (!level) {
            std::fputs(usage, stderr);
            return 2;
        }
        cordon::set_log_level(*level);
    }
    if (argc == 4) {
        cordon::set_log_sink([](cordon::log_level level, std::string_view line) {
            std::printf("sink %s: %.*s\n", std::string(cordon::to_string(level)).c_str(),
                        static_cast<int>(line.size()), line.data());
        });
    }
    const std::size_t swept = cordon::sandbox::sweep_dead_private_tmps(argv[1]);
    cordon::log::debug("log host: a debug line");
    cordon::log::warn("log host: a warning");
    spdlog::info("its own line, after cordon");
    std::printf("swept %zu\n", swept);
    return 0;
}
