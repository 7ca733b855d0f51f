// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

// An MCP client's reply to elicitation/create (mcp/elicitation.hpp): any JSON the client sends as
// the result. Properties: reading it never throws; it allows only on "accept" (for the session
// only with scope "session"), rejects only on "decline", cancels only on "cancel"; anything else
// is no answer, with a reason. And the question itself, for a command and a reason of any bytes:
// it is built without throwing, as JSON that serialises to valid UTF-8 and holds the one field.
#include <cstddef>
#include <cstdint>
#include <string>
#include <variant>

#include "base/json_text.hpp"
#include "mcp/elicitation.hpp"
#include "tests/fuzz/property.hpp"

using namespace cordon;
using nlohmann::json;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string bytes(reinterpret_cast<const char*>(data), size);

    const json given = json::parse(bytes, nullptr, /*allow_exceptions=*/false);
    if (!given.is_discarded()) {
        mcp::client_reply reply;
        reply.kind = mcp::reply_kind::result;
        reply.result = given;
        const auto read = mcp::read_elicitation_reply(reply);
        const json* action =
            given.is_object() && given.contains("action") ? &given["action"] : nullptr;
        if (const auto* outcome = std::get_if<policy::approval_outcome>(&read)) {
            CORDON_FUZZ_CHECK(action != nullptr && action->is_string());
            const std::string said = action->get<std::string>();
            switch (*outcome) {
                case policy::approval_outcome::allowed_once:
                    CORDON_FUZZ_CHECK(said == "accept");
                    break;
                case policy::approval_outcome::allowed_for_session:
                    CORDON_FUZZ_CHECK(said == "accept" && given["content"].is_object() &&
                                      given["content"]["scope"] == "session");
                    break;
                case policy::approval_outcome::rejected:
                    CORDON_FUZZ_CHECK(said == "decline");
                    break;
                case policy::approval_outcome::cancelled:
                    CORDON_FUZZ_CHECK(said == "cancel");
                    break;
                case policy::approval_outcome::unavailable:
                    // A reply is never `unavailable` itself: that is a reason, a string.
                    CORDON_FUZZ_CHECK(false);
                    break;
            }
        } else {
            CORDON_FUZZ_CHECK(!std::get<std::string>(read).empty());
        }
    }

    // The question, with the input as the command and, split, as the agent's reason.
    policy::approval_request request;
    request.command = bytes.substr(0, size / 2);
    request.justification = bytes.substr(size / 2);
    request.reason = "escalate sandbox to workspace-write: " + request.justification;
    request.requested_mode = sandbox::sandbox_mode::workspace_write;
    for (const char* protocol : {"2025-06-18", "2025-11-25"}) {
        const json params = mcp::elicitation_params(request, protocol);
        CORDON_FUZZ_CHECK(params.is_object() && params.contains("message") &&
                          params["message"].is_string());
        CORDON_FUZZ_CHECK(fuzz::valid_utf8(base::dump_json(params)));
    }
    return 0;
}
