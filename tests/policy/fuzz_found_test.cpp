// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

// What fuzzing found in policy/ (tests/fuzz/, docs/testing.md "Fuzzing"), each kept as a test of
// the class it belongs to; the inputs are in tests/fuzz/corpus/ too.
#include <gtest/gtest.h>

#include "cordon/approval.hpp"
#include "policy/command_prefix.hpp"
#include "support.hpp"

namespace cordon::policy {
namespace {

using sandbox::sandbox_mode;
using test::temp_dir;

// A command with an empty word (`''`, `""`: an argument like any other), or an empty command,
// made a grant that the session log refused to record: a person's "allow for the session" became
// `unavailable` (fuzz target command_prefix: its first crash was the empty input).
TEST(FuzzFound, AGrantWithAnEmptyWordIsRecordedAndCoversItsCommandAgain) {
    for (const std::string command :
         {"", "''", "'' ls", "make ''", "git commit -m \"\"", "printf '%s' '' x"}) {
        SCOPED_TRACE(command);
        temp_dir dir;
        auto opened = session_log::open_or_create(dir / "s.jsonl", dir.path());
        auto log = std::make_shared<const session_log>(std::get<session_log>(std::move(opened)));
        approval_service service({}, log);
        int asked = 0;
        service.add_responder(std::make_shared<function_responder>(
            "person", [&asked](const approval_request&, std::stop_token) {
                ++asked;
                return std::optional(approval_outcome::allowed_for_session);
            }));
        approval_request request;
        request.command = command;
        request.requested_mode = sandbox_mode::workspace_write;
        request.effective_mode = sandbox_mode::read_only;
        const auto first = service.request(request);
        EXPECT_EQ(first.outcome, approval_outcome::allowed_for_session) << first.detail;
        const auto state = log->state();
        ASSERT_TRUE(std::holds_alternative<session_state>(state))
            << std::get<log_error>(state).message;
        ASSERT_EQ(std::get<session_state>(state).grants.size(), 1u);
        EXPECT_EQ(std::get<session_state>(state).grants[0].prefix,
                  grant_for(command, sandbox_mode::workspace_write).prefix);

        const auto again = service.request(request);
        EXPECT_EQ(again.outcome, approval_outcome::allowed_for_session);
        EXPECT_EQ(again.by, "grant");
        EXPECT_EQ(asked, 1);
    }
}

}  // namespace
}  // namespace cordon::policy
