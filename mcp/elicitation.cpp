// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

#include "mcp/elicitation.hpp"

#include <chrono>
#include <stdexcept>
#include <utility>

#include "base/json_text.hpp"
#include "cordon/mode.hpp"
#include "policy/command_prefix.hpp"
#include "policy/display.hpp"
#include "policy/question.hpp"

namespace cordon::mcp {

using nlohmann::json;

namespace {

// The version that brought form mode, titled enums and defaults (SEP-1036, SEP-1330).
constexpr std::string_view titled_enums_since = "2025-11-25";

std::string mode_name(sandbox::sandbox_mode mode) {
    return std::string(sandbox::to_string(mode));
}

// The fields the terminal shows, laid out by the same function (policy/question.hpp): the command
// last. The choices are the form's; what is not offered is said after the command.
std::string question(const policy::approval_request& request) {
    std::string text = policy::question_fields(request);
    if (const std::string refused = policy::session_grant_refusal(request); !refused.empty()) {
        text += "(Not offered for the session: " + refused + ".)";
    } else {
        text.pop_back();  // the last line's newline
    }
    return text;
}

}  // namespace

bool offers_form_elicitation(const json& capabilities) {
    if (!capabilities.is_object()) return false;
    const auto elicitation = capabilities.find("elicitation");
    if (elicitation == capabilities.end() || !elicitation->is_object()) return false;
    // {} means form mode (2025-06-18 had no modes); a 2025-11-25 client lists the modes it has.
    return elicitation->empty() || elicitation->contains("form");
}

json elicitation_params(const policy::approval_request& request, std::string_view protocol) {
    const std::string once = "Allow once";
    // A standing grant covers later calls nobody looks at: only a command shown whole, exactly as
    // it is, is offered one (display.hpp).
    const bool offer_session = policy::session_grant_refusal(request).empty();
    const std::string session =
        "Allow " +
        policy::describe(
            policy::grant_for(request.command, request.requested_mode, request.workdir)) +
        " under " + mode_name(request.requested_mode) +
        (request.network.empty()
             ? std::string()
             : " with network " +
                   policy::shown_compactly(policy::to_string(request.requested_network))) +
        " for this session";
    const bool titled = protocol >= titled_enums_since;
    json scope{{"type", "string"}, {"title", "Remember"}};
    if (titled) {
        scope["oneOf"] = json::array();
        scope["oneOf"].push_back(json{{"const", "once"}, {"title", once}});
        if (offer_session) {
            scope["oneOf"].push_back(json{{"const", "session"}, {"title", session}});
        }
        scope["default"] = "once";
    } else {
        scope["enum"] = json::array({"once"});
        scope["enumNames"] = json::array({once});
        if (offer_session) {
            scope["enum"].push_back("session");
            scope["enumNames"].push_back(session);
        }
    }
    // No required field: a client that accepts with empty content allows this call once.
    json params{{"message", question(request)},
                {"requestedSchema", {{"type", "object"}, {"properties", {{"scope", scope}}}}}};
    if (titled) params["mode"] = "form";
    return params;
}

std::variant<policy::approval_outcome, std::string> read_elicitation_reply(
    const client_reply& reply) {
    switch (reply.kind) {
        case reply_kind::result:
            break;
        case reply_kind::error:
            return "the client answered elicitation/create with error " +
                   std::to_string(reply.error.code) + ": " + reply.error.message;
        case reply_kind::timed_out:
        case reply_kind::cancelled:
            return policy::approval_outcome::cancelled;
        case reply_kind::closed:
            return std::string("the connection to the client is closing");
    }
    const json& result = reply.result;
    const auto action = result.is_object() ? result.find("action") : result.end();
    if (action == result.end() || !action->is_string()) {
        return "the client's answer has no action: " + base::dump_json(result);
    }
    if (*action == "decline") return policy::approval_outcome::rejected;
    if (*action == "cancel") return policy::approval_outcome::cancelled;
    if (*action != "accept")
        return "the client answered with an unknown action: " + base::dump_json(*action);
    const auto content = result.find("content");
    if (content == result.end() || content->is_null())
        return policy::approval_outcome::allowed_once;
    if (!content->is_object()) return "the client's accept has content that is not an object";
    const auto scope = content->find("scope");
    if (scope == content->end() || *scope == "once") return policy::approval_outcome::allowed_once;
    if (*scope == "session") return policy::approval_outcome::allowed_for_session;
    // Fail closed: an accept that means something else is no clear answer.
    return "the client's accept has an unknown scope: " + base::dump_json(*scope);
}

elicitation_responder::elicitation_responder(std::shared_ptr<client_requests> client,
                                             std::string protocol, std::function<bool()> ready)
    : client_(std::move(client)), protocol_(std::move(protocol)), ready_(std::move(ready)) {}

std::string elicitation_responder::name() const {
    return std::string(elicitation_responder_name);
}

std::optional<policy::approval_outcome> elicitation_responder::answer(
    const policy::approval_request& request, std::stop_token stop) {
    if (!ready_()) throw std::runtime_error("the client has not sent notifications/initialized");
    // No deadline of its own: the approval service stops the question when its time is up. (A
    // day, not time_point::max(), which some waits overflow converting between clocks.)
    const client_reply reply =
        client_->ask("elicitation/create", elicitation_params(request, protocol_), "elicit",
                     std::chrono::steady_clock::now() + std::chrono::hours(24), std::move(stop));
    auto read = read_elicitation_reply(reply);
    if (auto* problem = std::get_if<std::string>(&read)) throw std::runtime_error(*problem);
    return std::get<policy::approval_outcome>(read);
}

}  // namespace cordon::mcp
