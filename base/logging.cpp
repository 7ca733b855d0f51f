// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

// The library's logger (cordon/logging.hpp, base/log.hpp): one spdlog logger of its own, through
// which every unit of the library logs (log::info and the like), `off` until the program sets a
// level, writing to standard error or to the program's sink. It is never spdlog's default logger
// nor in spdlog's registry: those are the program's, and a program that logs with spdlog itself
// (the system's, or linked with libcordon.a, whose spdlog code it then shares) keeps its lines.
#ifndef SPDLOG_COMPILED_LIB
#error "logging.cpp is part of the compiled spdlog: build it with SPDLOG_COMPILED_LIB"
#endif

#include "cordon/logging.hpp"

#include "base/enum_text.hpp"
#include "base/log.hpp"

#include <spdlog/sinks/base_sink.h>
#include <spdlog/spdlog.h>

#include <cstdio>
#include <memory>
#include <mutex>
#include <utility>

namespace cordon {

namespace {

spdlog::level::level_enum to_spdlog(log_level level) noexcept {
    switch (level) {
        case log_level::trace:
            return spdlog::level::trace;
        case log_level::debug:
            return spdlog::level::debug;
        case log_level::info:
            return spdlog::level::info;
        case log_level::warn:
            return spdlog::level::warn;
        case log_level::error:
            return spdlog::level::err;
        case log_level::off:
            return spdlog::level::off;
    }
    return spdlog::level::off;
}

// spdlog's critical, which the library does not use, is an error to a sink.
log_level from_spdlog(spdlog::level::level_enum level) noexcept {
    switch (level) {
        case spdlog::level::trace:
            return log_level::trace;
        case spdlog::level::debug:
            return log_level::debug;
        case spdlog::level::info:
            return log_level::info;
        case spdlog::level::warn:
            return log_level::warn;
        case spdlog::level::err:
        case spdlog::level::critical:
            return log_level::error;
        case spdlog::level::off:
        case spdlog::level::n_levels:
            return log_level::off;
    }
    return log_level::off;
}

// The library's one sink: the program's function when it gave one, standard error otherwise.
// base_sink holds its mutex around sink_it_(), so that the lines never interleave and the function
// is never swapped while it runs.
class library_sink final : public spdlog::sinks::base_sink<std::mutex> {
public:
    void set(log_sink replacement) {
        {
            std::lock_guard lock(mutex_);
            std::swap(sink_, replacement);
        }
        // The previous function is destroyed here, outside the lock: its destructor may log.
    }

private:
    void sink_it_(const spdlog::details::log_msg& message) override {
        if (sink_) {
            try {
                sink_(from_spdlog(message.level), {message.payload.data(), message.payload.size()});
            } catch (...) {  // log_sink's contract: what a sink throws is dropped
            }
            return;
        }
        // As spdlog's console sinks write: one fwrite of the whole line, then a flush.
        spdlog::memory_buf_t line;
        formatter_->format(message, line);
        std::fwrite(line.data(), 1, line.size(), stderr);
        std::fflush(stderr);
    }
    void flush_() override { std::fflush(stderr); }

    log_sink sink_;
};

struct library_logger {
    std::shared_ptr<library_sink> sink = std::make_shared<library_sink>();
    std::shared_ptr<spdlog::logger> logger = std::make_shared<spdlog::logger>("cordon", sink);
};

library_logger& the_logger() {
    static library_logger made = [] {
        library_logger fresh;
        fresh.logger->set_pattern("cordon: [%l] %v");
        fresh.logger->set_level(spdlog::level::off);
        return fresh;
    }();
    return made;
}

}  // namespace

constexpr auto log_level_texts = base::enum_texts<log_level>({
    {log_level::trace, "trace"},
    {log_level::debug, "debug"},
    {log_level::info, "info"},
    {log_level::warn, "warn"},
    {log_level::error, "error"},
    {log_level::off, "off"},
});

std::string_view to_string(log_level level) noexcept {
    return log_level_texts.text(level);
}

bool log::enabled(log_level level) noexcept {
    return the_logger().logger->should_log(to_spdlog(level));
}

void log::write(log_level level, fmt::string_view format, fmt::format_args args) noexcept {
    try {
        fmt::memory_buffer line;
        fmt::vformat_to(fmt::appender(line), format, args);
        the_logger().logger->log(to_spdlog(level), spdlog::string_view_t(line.data(), line.size()));
    } catch (...) {  // a line that cannot be formatted, or no memory for it: dropped
    }
}

void set_log_level(log_level level) noexcept {
    the_logger().logger->set_level(to_spdlog(level));
}

void set_log_sink(log_sink sink) {
    the_logger().sink->set(std::move(sink));
}

}  // namespace cordon
