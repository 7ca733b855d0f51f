// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

// The server's own requests to the client (MCP lets a server ask, e.g. `elicitation/create`),
// each sent by a worker thread that then waits for the reply the reader thread hands over.
//
// A request ends in exactly one way: the client's result, the client's error, the deadline, the
// caller's stop token, or the end of the server. On the deadline and on a stop the server
// withdraws its request with `notifications/cancelled` (MCP 2025-06-18 and 2025-11-25 let either
// side cancel what it issued), and a reply that comes later finds no request: it is logged and
// dropped, as is any reply to an id the server never used.
#pragma once

#include <nlohmann/json.hpp>

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <stop_token>
#include <string>
#include <string_view>

#include "mcp/json_rpc.hpp"

namespace cordon::mcp {

enum class reply_kind {
    result,     // the client answered
    error,      // the client answered with a JSON-RPC error
    timed_out,  // no answer by the deadline: withdrawn
    cancelled,  // the caller stopped waiting: withdrawn
    closed,     // the server is ending, or the request could not be sent
};

[[nodiscard]] std::string_view to_string(reply_kind kind) noexcept;

struct client_reply {
    reply_kind kind = reply_kind::closed;
    std::string id;         // the request's id
    nlohmann::json result;  // for `result`
    rpc_error error;        // for `error`
};

class client_requests {
public:
    // `send` writes one message to the client and says whether it could.
    explicit client_requests(std::function<bool(const nlohmann::json&)> send);
    client_requests(const client_requests&) = delete;
    client_requests& operator=(const client_requests&) = delete;

    // Sends `method` with `params` under the id "cordon-<tag>-<n>" and waits for its reply until
    // `deadline`, a stop on `stop`, or close(). Safe from any number of threads at once.
    [[nodiscard]] client_reply ask(std::string_view method, nlohmann::json params,
                                   std::string_view tag,
                                   std::chrono::steady_clock::time_point deadline,
                                   std::stop_token stop);

    // The reader thread: a reply came. False when it answers no request that is still waiting.
    bool deliver(response reply);

    // Every waiting ask() returns `closed`, and every later one at once. Idempotent.
    void close();

private:
    struct waiting {
        bool answered = false;
        client_reply reply;
    };

    std::function<bool(const nlohmann::json&)> send_;
    std::mutex mutex_;
    std::condition_variable_any changed_;
    std::map<std::string, waiting*> waiting_;  // guarded by mutex_; by id
    std::uint64_t next_ = 1;                   // guarded by mutex_
    bool closed_ = false;                      // guarded by mutex_
};

}  // namespace cordon::mcp
