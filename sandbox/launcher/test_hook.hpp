// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

// A stop at a named step of cordon-landlock, for the tests that deliver cordon's deadline or
// cancellation exactly there (tests/runtime/status_window_test.cpp). Compiled in only by the
// test build of the launcher (cordon-landlock-test-hooks, never installed, never the launcher a
// provider finds by default); in cordon-landlock itself both functions are empty inline bodies,
// so no argument, environment or file a command controls can change what the launcher does.
//
// Armed by a word `cordon-test-stop-at=STEP` in the command's own argv (so that a test can reach
// it through every rung: the launcher's flags are the provider's). At STEP the launcher writes
// `cordon-landlock: test hook: stopped at STEP` to the stderr it was given and waits for SIGCONT
// (blocked, then sigwaitinfo: never lost to a race); the test, seeing the line, cancels with a
// plan that sends SIGTERM and then SIGCONT, so the TERM lands exactly at STEP (or, where the step
// blocks it, is pending there).
#pragma once

namespace cordon::launcher::test_hook {

enum class step {
    setup,           // parsed, nothing confined yet (signals as cordon left them: unblocked)
    before_fork,     // --report-ending: every signal blocked, the command's child not forked yet
    before_started,  // about to write `started` (--report-ending: in the forked child)
    after_started,   // `started` written, the command not exec'd yet
    after_ended,     // --report-ending: the `ended` record written, the launcher not exited yet
};

#if defined(CORDON_LAUNCHER_TEST_HOOKS)
// Finds the arming word in `command` (NULL-terminated) and keeps a close-on-exec copy of stderr.
void arm(char** command) noexcept;
// Stops at `at` when armed for it.
void at(step at) noexcept;
#else
inline void arm(char** /*command*/) noexcept {}
inline void at(step /*at*/) noexcept {}
#endif

}  // namespace cordon::launcher::test_hook
