// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

// `cordon run` in a pipeline, on real pipes: the command is paced by cordon's reader, so a slow
// reader gets every byte (the live output used to keep 8 MiB and drop the rest, exit status 0),
// and a reader that goes away ends the command's tree as SIGPIPE would, with `timeout`'s exit
// status 141, instead of leaving it to run until its timeout. Under every real backend and
// unconfined.
#include <gtest/gtest.h>
#include <signal.h>

#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "cli/commands.hpp"
#include "real_backend.hpp"
#include "support.hpp"
#include "support/cordon_cli.hpp"
#include "support/spawned_process.hpp"

namespace cordon::test {
namespace {

using namespace std::chrono_literals;

// `seq 1 COUNT` as it prints (1,500,000 lines: 10,888,896 bytes).
std::string counted_lines(int count) {
    std::string out;
    for (int i = 1; i <= count; ++i) {
        out += std::to_string(i);
        out += '\n';
    }
    return out;
}

// The ways a `cordon run` is given: unconfined, and confined by each real backend.
struct run_way {
    std::string name;
    std::vector<std::string> flags;
    std::optional<real_backend> backend;
};

std::vector<run_way> every_way() {
    std::vector<run_way> out{{"danger-full-access", {"--mode", "danger-full-access"}, {}}};
    for (const auto backend : every_real_backend) {
        out.push_back(
            {std::string(to_string(backend)),
             {"--mode", "workspace-write", "--backend", std::string(backend_flag(backend))},
             backend});
    }
    return out;
}

class Pipeline : public ::testing::Test {
protected:
    // cordon run FLAGS -c SCRIPT, in the workspace, its streams on pipes this test reads.
    std::vector<std::string> argv(const run_way& way, const std::string& script) const {
        std::vector<std::string> out{cordon_path().string(), "run", "--workspace",
                                     workspace_.path().string()};
        out.insert(out.end(), way.flags.begin(), way.flags.end());
        out.insert(out.end(), {"--timeout", "60s", "-c", script});
        return out;
    }

    temp_dir workspace_{"/var/tmp"};
};

// More than the live writer ever queues (8 MiB, cli/live_writer.hpp), to a reader that stalls
// first: all of it arrives, in order, on the stream it was written to, and the exit status is the
// command's.
TEST_F(Pipeline, ASlowReaderGetsEveryByteOnEitherStream) {
    const std::string expected = counted_lines(1'500'000);
    ASSERT_GT(expected.size(), std::size_t{8} << 20);
    for (const run_way& way : every_way()) {
        std::optional<scoped_backend_path> path;
        if (way.backend) path.emplace(*way.backend);
        for (const bool to_stderr : {false, true}) {
            SCOPED_TRACE(way.name + (to_stderr ? " stderr" : " stdout"));
            spawned_process cordon(
                argv(way, std::string("seq 1 1500000") + (to_stderr ? " >&2" : "") + "; exit 3"),
                {});
            std::this_thread::sleep_for(300ms);  // the reader stalls while the command writes
            const int status = cordon.wait(120s);
            ASSERT_FALSE(cordon.timed_out());
            if (status == cli::exit_sandbox_unavailable) {
                CORDON_SKIP_OR_FAIL("no sandbox backend: " + cordon.err());
            }
            EXPECT_EQ(status, 3);
            const std::string& got = to_stderr ? cordon.err() : cordon.out();
            EXPECT_EQ(got.size() >= expected.size() ? got.substr(0, expected.size()) : got,
                      expected)
                << "got " << got.size() << " of " << expected.size() << " bytes";
            const std::string& other = to_stderr ? cordon.out() : cordon.err();
            if (to_stderr) {
                EXPECT_EQ(got, expected + "[exit code: 3]\n");
            } else {
                EXPECT_EQ(got, expected);
                EXPECT_EQ(other, "[exit code: 3]\n");
            }
            EXPECT_EQ(other.find("not shown"), std::string::npos) << other;
        }
    }
}

// `cordon run -c yes | head -1`: once the reader has its line and goes, the command is ended at
// its next write, as SIGPIPE would end it, and cordon exits 141 (timeout's convention) without a
// word of its own; the command does not run on to its 60 s timeout. The same when the command
// blocks SIGPIPE (it cannot see the pipe that closed: that one is cordon's).
TEST_F(Pipeline, AReaderThatGoesAwayEndsTheCommandWith141) {
    for (const run_way& way : every_way()) {
        std::optional<scoped_backend_path> path;
        if (way.backend) path.emplace(*way.backend);
        for (const std::string script : {"yes", "trap '' PIPE; yes"}) {
            SCOPED_TRACE(way.name + ": " + script);
            spawned_process cordon(argv(way, script), {});
            ASSERT_TRUE(cordon.wait_for_output("y\n")) << cordon.err();
            const auto closed = std::chrono::steady_clock::now();
            cordon.close_stdout();
            const int status = cordon.wait(60s);
            const auto took = std::chrono::steady_clock::now() - closed;
            if (status == cli::exit_sandbox_unavailable) {
                CORDON_SKIP_OR_FAIL("no sandbox backend: " + cordon.err());
            }
            EXPECT_EQ(status, cli::exit_signal_base + SIGPIPE) << cordon.err();
            EXPECT_LT(took, 20s) << "ended by the reader, not by the timeout";
            EXPECT_EQ(cordon.err(), "");
        }
    }
}

// A reader that goes away after the command is done changes nothing: the command's own status.
TEST_F(Pipeline, AReaderGoneAfterTheCommandEndedKeepsItsStatus) {
    spawned_process cordon(argv(every_way().front(), "echo one; exit 4"), {});
    ASSERT_TRUE(cordon.wait_for_output("one\n"));
    cordon.close_stdout();
    EXPECT_EQ(cordon.wait(60s), 4);
}

// cordon's own stdout unusable from the start (closed, or a full disk): nothing can be shown, the
// command is not ended for it (no reader went away), its status stands, and the one note on
// stderr says why and where the output is kept, not that a reader fell behind.
TEST_F(Pipeline, AStdoutThatCannotBeWrittenIsNamedAsSuch) {
    struct destination {
        std::string redirect;
        std::string why;
    };
    for (const destination& each :
         {destination{">&-", "writing to cordon's stdout failed: Bad file descriptor"},
          destination{">/dev/full",
                      "writing to cordon's stdout failed: No space left on device"}}) {
        SCOPED_TRACE(each.redirect);
        std::vector<std::string> inner = argv(every_way().front(), "echo lost; exit 3");
        std::vector<std::string> shell{"/bin/sh", "-c", "exec \"$@\" " + each.redirect, "sh"};
        shell.insert(shell.end(), inner.begin(), inner.end());
        const cli_result r = run_program(shell, workspace_.path());
        EXPECT_EQ(r.exit_code, 3) << r.err;
        EXPECT_NE(r.err.find("[5 bytes of live stdout not shown: " + each.why + "; full output: "),
                  std::string::npos)
            << r.err;
        EXPECT_EQ(r.err.find("fell behind"), std::string::npos) << r.err;
    }
}

// With --json the record is the answer: one that cannot be written is cordon's failure (125, and
// a line saying why), never the command's exit status with nothing on stdout.
TEST_F(Pipeline, AJsonRecordThatCannotBeWrittenIsAFailureNotASuccess) {
    for (const auto& [redirect, why] :
         {std::pair<std::string, std::string>{">&-", "Bad file descriptor"},
          std::pair<std::string, std::string>{">/dev/full", "No space left on device"}}) {
        SCOPED_TRACE(redirect);
        std::vector<std::string> inner = argv(every_way().front(), "exit 0");
        inner.insert(inner.begin() + 2, "--json");
        std::vector<std::string> shell{"/bin/sh", "-c", "exec \"$@\" " + redirect, "sh"};
        shell.insert(shell.end(), inner.begin(), inner.end());
        const cli_result r = run_program(shell, workspace_.path());
        EXPECT_EQ(r.exit_code, 125) << r.err;
        EXPECT_NE(
            r.err.find("cordon run: internal error: cannot write the record to stdout: " + why),
            std::string::npos)
            << r.err;
    }
    // So for every command's answer.
    for (const auto& [words, name] :
         {std::pair<std::vector<std::string>, std::string>{{"probe", "--json"}, "cordon probe"},
          {{"config", "show"}, "cordon config"},
          {{"--version"}, "cordon"}}) {
        SCOPED_TRACE(name);
        std::vector<std::string> shell{"/bin/sh", "-c", "exec \"$@\" >/dev/full", "sh",
                                       cordon_path().string()};
        shell.insert(shell.end(), words.begin(), words.end());
        const cli_result r = run_program(shell, workspace_.path());
        EXPECT_EQ(r.exit_code, 125) << r.err;
        EXPECT_NE(r.err.find(name + ": internal error: cannot write to stdout"), std::string::npos)
            << r.err;
    }
}

}  // namespace
}  // namespace cordon::test
