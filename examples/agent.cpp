// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

// A small C++ agent on top of cordon: what an agent does with the commands it is asked to run.
//
//   1. runs a command read-only and prints its record, as JSON;
//   2. tries a write under read-only, sees the sandbox deny it, asks the person at the terminal,
//      and runs it again under workspace-write once they allow it;
//   3. starts a background job and follows its output by cursor while three short commands run
//      at the same time.
//
// Usage: cordon-example-agent [WORKSPACE]   (default: the current directory)
// Exit status: 0 when every step went as described, 1 otherwise.
#include <cordon/approval.hpp>
#include <cordon/cordon.hpp>
#include <cordon/escalate.hpp>
#include <cordon/jobs.hpp>
#include <cordon/logging.hpp>
#include <cordon/record_json.hpp>
#include <cordon/terminal_prompt.hpp>

#include <chrono>
#include <filesystem>
#include <future>
#include <iostream>
#include <memory>
#include <string>
#include <variant>
#include <vector>

namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

cordon::run_request bash(const fs::path& workspace, std::string command) {
    cordon::run_request request;
    request.argv = {cordon::trusted_shell().string(), "-c", std::move(command)};
    request.mode = cordon::sandbox_mode::read_only;
    request.workspace_root = workspace;
    request.timeout = 30s;
    return request;
}

// One line about a run: how it ended and under which sandbox.
std::string summary(const cordon::run_record& record) {
    std::string line(cordon::to_string(record.outcome.kind));
    if (record.outcome.exit_code) line += " " + std::to_string(*record.outcome.exit_code);
    line += " under " + std::string(cordon::to_string(record.sandbox.mode));
    if (record.sandbox.backend)
        line += " (" + std::string(cordon::to_string(*record.sandbox.backend)) + ")";
    if (record.sandbox.denied) line += ", denied by the sandbox";
    return line;
}

bool step_read_only(const std::shared_ptr<cordon::provider>& provider, const fs::path& workspace) {
    std::cout << "== 1. a read-only command\n";
    const cordon::run_record record =
        cordon::run(provider, bash(workspace, "ls -a | head -3; id -un"));
    std::cout << cordon::dump(cordon::to_json(record), 2) << '\n';
    return record.outcome.kind == cordon::outcome_kind::exited && record.outcome.exit_code == 0;
}

bool step_escalate(const std::shared_ptr<cordon::provider>& provider, const fs::path& workspace) {
    std::cout << "== 2. a write, denied under read-only, then asked for\n";
    const std::string command = "echo 'written by the example agent' > cordon-example.txt";
    cordon::run_request request = bash(workspace, command);
    cordon::run_record record = cordon::run(provider, request);
    std::cout << "read-only: " << summary(record) << '\n' << record.stderr_output.text;
    if (!record.sandbox.denied) return false;

    // Asked as cordon run asks (cordon/escalate.hpp): the terminal responder asks on /dev/tty,
    // never on stdin, and says nothing without a terminal (the decision is then `unavailable`).
    // Granted, the request runs under the wider mode.
    cordon::approval_service approvals;
    approvals.add_responder(std::make_shared<cordon::terminal_prompt>(false));
    cordon::escalation_ask ask;
    ask.mode = cordon::sandbox_mode::workspace_write;
    ask.tool = "cordon-example-agent";
    ask.command = command;
    ask.justification = "the agent keeps its notes in the workspace";
    const cordon::escalation_outcome decided =
        cordon::escalate(request, ask, {provider.get(), {}}, approvals);
    const cordon::approval_decision decision =
        decided.decision.value_or(cordon::approval_decision{});
    std::cout << "decision: " << cordon::to_string(decision.outcome) << " (by " << decision.by
              << ")" << (decision.detail.empty() ? "" : ": " + decision.detail) << '\n';
    if (decided.status != cordon::escalation_status::granted) return false;

    record = cordon::run(provider, request);
    std::cout << "workspace-write: " << summary(record) << '\n';
    return record.outcome.exit_code == 0 && fs::exists(workspace / "cordon-example.txt");
}

bool step_jobs(const std::shared_ptr<cordon::provider>& provider, const fs::path& workspace) {
    std::cout << "== 3. a background job, followed by cursor, and three commands beside it\n";
    cordon::supervisor jobs(provider);
    cordon::job_request background;
    background.run = bash(workspace, "for i in 1 2 3 4 5; do echo tick $i; sleep 0.2; done");
    background.label = "ticker";
    auto started = jobs.start(std::move(background));
    if (auto* refused = std::get_if<cordon::job_refused>(&started)) {
        std::cout << "refused: " << refused->message << '\n';
        return false;
    }
    const std::shared_ptr<cordon::job> ticker = std::get<std::shared_ptr<cordon::job>>(started);

    // cordon::run may be called from any number of threads at once.
    std::vector<std::future<cordon::run_record>> quick;
    for (const char* word : {"one", "two", "three"}) {
        quick.push_back(std::async(std::launch::async, [&provider, &workspace, word] {
            return cordon::run(provider, bash(workspace, std::string("echo ") + word));
        }));
    }

    // Every byte of the job's output has an offset: a reader asks from where it stopped, and a
    // read it lost can be asked for again.
    std::uint64_t cursor = 0;
    for (;;) {
        ticker->wait_output(cordon::job_output::merged, cursor,
                            std::chrono::steady_clock::now() + 10s);
        const cordon::stream_read piece = ticker->read(cordon::job_output::merged, cursor, 4096);
        if (!piece.data.empty())
            std::cout << "[" << ticker->id() << " @" << piece.offset << "] " << piece.data;
        cursor = piece.next_offset;
        if (piece.complete) break;
    }
    bool ok = true;
    for (auto& each : quick) {
        const cordon::run_record record = each.get();
        std::cout << "quick: " << record.stdout_output.text;
        ok = ok && record.outcome.exit_code == 0;
    }
    const cordon::job_snapshot done = ticker->completion().get();
    std::cout << ticker->id() << ": " << cordon::to_string(done.status()) << ", "
              << done.output_bytes << " bytes\n";
    return ok && done.status() == cordon::job_status::completed;
}

}  // namespace

int main(int argc, char** argv) {
    const fs::path workspace = fs::canonical(argc > 1 ? fs::path(argv[1]) : fs::current_path());
    // The library's warnings, on stderr (it logs nothing until asked, and never on stdout).
    cordon::set_log_level(cordon::log_level::warn);
    std::cout << "cordon " << cordon::library_version() << ", workspace " << workspace.string()
              << '\n';
    // Probes the sandbox backends once; every run after this shares the verdict.
    const std::shared_ptr<cordon::provider> provider = cordon::make_local_provider();

    bool ok = step_read_only(provider, workspace);
    ok = step_escalate(provider, workspace) && ok;
    ok = step_jobs(provider, workspace) && ok;
    std::cout << (ok ? "every step went as described\n" : "a step did not go as described\n");
    return ok ? 0 : 1;
}
