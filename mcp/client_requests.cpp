// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

#include "mcp/client_requests.hpp"

#include "base/enum_text.hpp"

#include <utility>
#include <variant>

namespace cordon::mcp {

using nlohmann::json;

constexpr auto reply_kind_texts = base::enum_texts<reply_kind>({
    {reply_kind::result, "result"},
    {reply_kind::error, "error"},
    {reply_kind::timed_out, "timed out"},
    {reply_kind::cancelled, "cancelled"},
    {reply_kind::closed, "closed"},
});

std::string_view to_string(reply_kind kind) noexcept {
    return reply_kind_texts.text(kind);
}

client_requests::client_requests(std::function<bool(const json&)> send) : send_(std::move(send)) {}

client_reply client_requests::ask(std::string_view method, json params, std::string_view tag,
                                  std::chrono::steady_clock::time_point deadline,
                                  std::stop_token stop) {
    waiting slot;
    std::string id;
    {
        std::lock_guard lock(mutex_);
        if (closed_) return client_reply{reply_kind::closed, {}, {}, {}};
        id = "cordon-" + std::string(tag) + "-" + std::to_string(next_++);
        // Registered before it is sent: a reply can come before send_() returns.
        waiting_.emplace(id, &slot);
    }
    const bool sent = send_(
        json{{"jsonrpc", "2.0"}, {"id", id}, {"method", method}, {"params", std::move(params)}});
    std::unique_lock lock(mutex_);
    if (sent) {
        (void)changed_.wait_until(lock, stop, deadline,
                                  [this, &slot] { return slot.answered || closed_; });
    }
    waiting_.erase(id);
    if (slot.answered) {
        slot.reply.id = id;
        return std::move(slot.reply);
    }
    const reply_kind ended = !sent || closed_        ? reply_kind::closed
                             : stop.stop_requested() ? reply_kind::cancelled
                                                     : reply_kind::timed_out;
    lock.unlock();
    if (ended != reply_kind::closed) {
        // The client may still be showing the question: it is told to take it down.
        (void)send_(json{
            {"jsonrpc", "2.0"},
            {"method", "notifications/cancelled"},
            {"params",
             {{"requestId", id},
              {"reason", ended == reply_kind::timed_out ? "no answer in time"
                                                        : "the request is no longer needed"}}}});
    }
    return client_reply{ended, id, {}, {}};
}

bool client_requests::deliver(response reply) {
    if (!reply.id.is_string()) return false;
    std::lock_guard lock(mutex_);
    const auto found = waiting_.find(reply.id.get<std::string>());
    if (found == waiting_.end() || found->second->answered) return false;
    waiting& slot = *found->second;
    slot.answered = true;
    if (auto* failed = std::get_if<rpc_error>(&reply.outcome)) {
        slot.reply.kind = reply_kind::error;
        slot.reply.error = std::move(*failed);
    } else {
        slot.reply.kind = reply_kind::result;
        slot.reply.result = std::move(std::get<json>(reply.outcome));
    }
    changed_.notify_all();
    return true;
}

void client_requests::close() {
    {
        std::lock_guard lock(mutex_);
        closed_ = true;
    }
    changed_.notify_all();
}

}  // namespace cordon::mcp
