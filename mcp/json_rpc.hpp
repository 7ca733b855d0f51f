// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

// JSON-RPC 2.0 as MCP's stdio transport carries it: one message per line, UTF-8, no batches
// (removed in MCP 2025-06-18). This file knows the framing and the message shapes; what the
// methods mean is server.cpp's business.
#pragma once

#include <nlohmann/json.hpp>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <variant>

namespace cordon::mcp {

using nlohmann::json;

// The JSON-RPC error codes the server answers with.
namespace error_code {
inline constexpr int parse_error = -32700;
inline constexpr int invalid_request = -32600;
inline constexpr int method_not_found = -32601;
inline constexpr int invalid_params = -32602;
inline constexpr int internal_error = -32603;
inline constexpr int server_busy = -32000;  // implementation-defined: too many calls in flight
}  // namespace error_code

struct request {
    json id;  // a string or an integer, kept exactly as sent
    std::string method;
    json params;  // an object, or null when absent
};
struct notification {
    std::string method;
    json params;
};
// An error a reply carries: the client's, for a request of the server's own.
struct rpc_error {
    int code = 0;
    std::string message;
};
// A reply to a request of the server's own (client_requests.hpp matches it to the request).
struct response {
    json id;                                // as sent back: a string or an integer, else null
    std::variant<json, rpc_error> outcome;  // the result, or the error
};
// A line that is not a message the server can act on: answered with this error.
struct malformed {
    json id;  // null unless the line carried a usable id
    int code;
    std::string message;
};
using incoming = std::variant<request, notification, response, malformed>;

// Arrays and objects nested deeper than this make a line malformed.
inline constexpr std::size_t max_nesting = 64;

// Classifies one line (without its newline).
[[nodiscard]] incoming parse_message(std::string_view line);

[[nodiscard]] json error_reply(const json& id, int code, std::string_view text);
[[nodiscard]] json result_reply(const json& id, json result);

// Splits a byte stream into lines of at most `max_line_bytes`. A longer line is dropped whole
// (the rest of it too, up to its newline) and reported once through on_overlong. A trailing
// "\r" is removed; empty lines are skipped.
class line_splitter {
public:
    line_splitter(std::size_t max_line_bytes, std::function<void(std::string_view)> on_line,
                  std::function<void(std::size_t)> on_overlong);
    void feed(std::string_view bytes);
    // The input ended: a last line without a newline still counts.
    void finish();

private:
    void emit();

    std::size_t max_line_bytes_;
    std::function<void(std::string_view)> on_line_;
    std::function<void(std::size_t)> on_overlong_;
    std::string line_;
    bool discarding_ = false;
    std::size_t discarded_ = 0;
};

// Writes whole messages, one line each, on a thread of its own: write() queues and returns at
// once, from any thread, so that a client that stops reading holds up nothing else (neither the
// calls, nor the reader, nor the end of the server). The writer breaks when its reader went away
// (EPIPE or another write error), when a message finds no room for `patience`, or when more than
// `max_queued_bytes` wait; a broken writer drops what follows, and broken() says so.
class line_writer {
public:
    explicit line_writer(int fd,
                         std::chrono::milliseconds patience = std::chrono::milliseconds(30'000),
                         std::size_t max_queued_bytes = 64 << 20);
    // Waits at most `drain` (as close() does) for what is queued.
    ~line_writer();
    line_writer(const line_writer&) = delete;
    line_writer& operator=(const line_writer&) = delete;

    // False once the output is broken.
    bool write(const json& sent);
    [[nodiscard]] bool broken() const { return broken_; }
    // Writes what is queued for at most `drain`, then stops the thread. Idempotent.
    void close(std::chrono::milliseconds drain = std::chrono::milliseconds(2'000));

private:
    void run();
    bool write_line(std::string_view line);

    int fd_;
    std::chrono::milliseconds patience_;
    std::size_t max_queued_bytes_;
    std::atomic<bool> broken_{false};

    std::mutex mutex_;
    std::condition_variable changed_;
    std::deque<std::string> queue_;                      // guarded by mutex_
    std::size_t queued_bytes_ = 0;                       // guarded by mutex_
    bool closing_ = false;                               // guarded by mutex_
    std::chrono::steady_clock::time_point drain_until_;  // guarded by mutex_, once closing_
    std::thread thread_;
};

}  // namespace cordon::mcp
