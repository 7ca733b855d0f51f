// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

// An interactive program driven through its screen, confined: a Python REPL runs read-only under
// a pseudo-terminal of its own; the agent waits for its prompt on the screen, types an
// expression, presses Enter, reads the answer off the screen, and ends the REPL with Ctrl-D
// (docs/terminal.md).
//
// Usage: cordon-example-interactive [WORKSPACE]   (default: the current directory)
// Exit status: 0 when the REPL answered 42 and ended, 1 otherwise.
#include <cordon/cordon.hpp>
#include <cordon/jobs.hpp>
#include <cordon/terminal.hpp>

#include <chrono>
#include <filesystem>
#include <iostream>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <variant>

namespace {

using namespace std::chrono_literals;

std::chrono::steady_clock::time_point soon() {
    return std::chrono::steady_clock::now() + 20s;
}

void print(const cordon::job& job) {
    // Kept: a range-for over job.screen()->rows would read a destroyed temporary.
    const std::optional<cordon::terminal_screen> screen = job.screen();
    for (const std::string& row : screen->rows) {
        if (!row.empty()) std::cout << "| " << row << '\n';
    }
}

}  // namespace

int main(int argc, char** argv) {
    const std::filesystem::path workspace =
        std::filesystem::canonical(argc > 1 ? argv[1] : std::filesystem::current_path());
    cordon::supervisor jobs(cordon::make_local_provider());

    cordon::job_request request;
    request.run.argv = {"python3", "-q"};
    request.run.mode = cordon::sandbox_mode::read_only;
    request.run.workspace_root = workspace;
    request.run.tty = cordon::terminal_size{24, 80};
    auto started = jobs.start(std::move(request));
    if (auto* refused = std::get_if<cordon::job_refused>(&started)) {
        std::cerr << "refused: " << refused->message << '\n';
        return 1;
    }
    const auto repl = std::get<std::shared_ptr<cordon::job>>(started);

    if (repl->wait_screen({">>>", std::nullopt, std::nullopt}, soon()) !=
        cordon::screen_wait_result::shown) {
        std::cerr << "no prompt\n";
        return 1;
    }
    (void)repl->write("6 * 7", false);
    const cordon::terminal_key enter = std::get<cordon::terminal_key>(cordon::parse_key("Enter"));
    (void)repl->press(std::span(&enter, 1));
    const bool answered = repl->wait_screen({"42", std::nullopt, std::nullopt}, soon()) ==
                          cordon::screen_wait_result::shown;
    print(*repl);

    // 42 is drawn before the REPL takes its terminal back for the next line, and a Ctrl-D typed
    // in between would reach it as a character: the next key waits until it has drawn its prompt
    // and gone quiet.
    (void)repl->wait_screen({"", 300ms, std::nullopt}, soon());
    (void)repl->write("", true);  // Ctrl-D, as typed
    if (!repl->wait_settled(soon())) return 1;
    const cordon::job_snapshot ended = repl->snapshot();
    std::cout << repl->id() << ": " << cordon::to_string(ended.status()) << " under "
              << cordon::to_string(ended.sandbox.mode) << '\n';
    return answered && ended.status() == cordon::job_status::completed ? 0 : 1;
}
