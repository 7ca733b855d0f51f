// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

// cordon's own writes on the host: output spill files are created by cordon, unconfined, under
// executor_options::spill_root. When that root lies in a place a workspace-write command may write
// (here: inside its workspace; by default /var/tmp, which a workspace of /var/tmp or /var
// contains), either such a run is refused or the command cannot redirect those writes elsewhere.
#include <boost/asio/io_context.hpp>

#include "hostile_support.hpp"

namespace cordon::hostile {
namespace {

using ::testing::HasSubstr;

class SpillRedirect : public BackendTest {
protected:
    // One run on a long-lived executor (an agent keeps one for all its runs).
    runtime::run_record run_on(runtime::executor& exec, boost::asio::io_context& io,
                               runtime::run_request req) {
        std::optional<runtime::run_record> result;
        exec.async_run(std::move(req), [&](runtime::run_record r) { result = std::move(r); });
        io.restart();
        io.run();
        if (!result) throw std::runtime_error("the run never completed");
        if (result->outcome.kind == runtime::outcome_kind::runner_failed) {
            throw runtime::sandbox_unavailable(*result);
        }
        return std::move(*result);
    }

    // `configured` is the executor's spill_root, `real` the directory it leads to inside the
    // workspace. Such a run is refused before anything starts, naming the spill files: the
    // command could otherwise replace the spill directory with a symlink and have cordon create
    // the next spill file, with the command's output, anywhere. (That a spill file would not
    // follow a swapped directory even so is OutputCollectorSpill.ASwappedSpillDirectoryRedirects-
    // Nothing in the runtime suite.)
    void attack(const fs::path& configured, const fs::path& real) {
        const fs::path target = tree_.outside() / "target";
        fs::create_directories(target);

        boost::asio::io_context io;
        runtime::executor_options options = path_options();
        options.spill_root = configured;
        runtime::executor exec(io.get_executor(), selection_->provider, options);

        const std::string script =
            "for d in '" + real.string() + "'/cordon-spill-*; do mv \"$d\" \"$d.moved\"; ln -s '" +
            target.string() + "' \"$d\"; done; '" + child() + "' bytes 100000";
        for (int run = 0; run < 2; ++run) {
            const runtime::run_record record =
                run_on(exec, io, request({"bash", "-c", script}, sandbox_mode::workspace_write));
            ASSERT_EQ(record.outcome.kind, classify::outcome_kind::not_started) << describe(record);
            EXPECT_EQ(record.outcome.start_failure->stage, runtime::spawn_stage::policy);
            EXPECT_THAT(record.outcome.message, HasSubstr("cordon-spill-*"));
            EXPECT_THAT(record.outcome.message, HasSubstr("one of cordon's own files"));
        }
        EXPECT_TRUE(fs::is_empty(target));
    }
};

// The first run overflows its output and makes cordon create its spill directory; the second
// replaces that directory with a symlink to a directory outside the workspace and overflows
// again. cordon must not create the second spill file through the symlink.
TEST_P(SpillRedirect, ASpillDirectoryReplacedByASymlinkIsNotFollowed) {
    const fs::path spill_root = tree_.workspace() / "spill";
    fs::create_directories(spill_root);
    attack(spill_root, spill_root);
}

// The same with the spill root configured as a path outside the workspace that leads into it
// through a symlink (as /var/tmp does where it is a link).
TEST_P(SpillRedirect, ASpillRootThatLeadsIntoTheWorkspaceIsNoDifferent) {
    const fs::path real = tree_.workspace() / "spill";
    const fs::path link = tree_.outside() / "spill-link";
    fs::create_directories(real);
    fs::create_directory_symlink(real, link);
    attack(link, real);
}

CORDON_HOSTILE_BACKENDS(SpillRedirect);

}  // namespace
}  // namespace cordon::hostile
