// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

// The approval responder of `cordon mcp`: it asks the person behind the MCP client, through an
// `elicitation/create` request (MCP 2025-06-18, form mode), whether one escalated command may
// run. Only a client that declared the `elicitation` capability (with form mode) gets one in its
// server's approval chain; without it the chain is empty and every question is `unavailable`.
//
// The message is the question the terminal asks, laid out by the same function
// (policy::question_fields(), policy/question.hpp), one field a line: who asks and what for, the
// agent's reason (labelled as the agent's words, at most 300 bytes of it), the standing and the
// requested mode, the network, the policy line, the working directory, the environment, the
// input and, last, the command, every byte of each through policy::shown_compactly(); then, for
// a command not shown whole, why the session is not offered. Its one field, `scope`, is optional
// (clients auto-accept with empty content, openai/codex#23383): an accept without it, or with
// "once", allows that call; with "session" it allows what the grant covers under that mode for
// the rest of the session. "session" is offered only for a command shown whole
// (policy::shown_whole): a client that answers it for another is not answering the question
// asked, and the approval service makes that `unavailable`. Fail closed: decline is `rejected`,
// cancel is `cancelled`, and an error reply, a closed connection or an answer outside that
// vocabulary is `unavailable`.
#pragma once

#include <nlohmann/json.hpp>

#include <functional>
#include <memory>
#include <optional>
#include <stop_token>
#include <string>
#include <string_view>
#include <variant>

#include "cordon/approval.hpp"
#include "mcp/client_requests.hpp"

namespace cordon::mcp {

// Whether `capabilities` (initialize's params.capabilities) offers form-mode elicitation:
// "elicitation": {} or {"form": {...}} (a client that offers only "url" cannot show a form).
[[nodiscard]] bool offers_form_elicitation(const nlohmann::json& capabilities);

// The elicitation/create params for `request`, in the shape of `protocol` ("2025-11-25" adds
// "mode":"form" and the titled oneOf; older versions get a plain enum).
[[nodiscard]] nlohmann::json elicitation_params(const policy::approval_request& request,
                                                std::string_view protocol);

// What a reply means: an outcome, or why it is no answer (an error reply, a closed connection,
// an action or scope outside the vocabulary). A withdrawn request is `cancelled`.
[[nodiscard]] std::variant<policy::approval_outcome, std::string> read_elicitation_reply(
    const client_reply& reply);

class elicitation_responder final : public policy::approval_responder {
public:
    // `ready` says whether the client sent notifications/initialized: no request goes out
    // before it (MCP lifecycle), and a question asked earlier is `unavailable`.
    elicitation_responder(std::shared_ptr<client_requests> client, std::string protocol,
                          std::function<bool()> ready);

    [[nodiscard]] std::string name() const override;
    // Throws when the client answered with an error or an answer outside the vocabulary, so that
    // the service records why the question is `unavailable`.
    std::optional<policy::approval_outcome> answer(const policy::approval_request& request,
                                                   std::stop_token stop) override;

private:
    std::shared_ptr<client_requests> client_;
    std::string protocol_;
    std::function<bool()> ready_;
};

// The responder's name, as the audit log's "by" field shows it.
inline constexpr std::string_view elicitation_responder_name = "mcp-elicitation";

}  // namespace cordon::mcp
