// cordon's own writes on the host: output spill files are created by cordon, unconfined, under
// executor_options::spill_root. When that root lies in a place a workspace-write command may write
// (here: inside its workspace; by default /var/tmp, which a workspace of /var/tmp or /var
// contains), either such a run is refused or the command cannot redirect those writes elsewhere.
#include <boost/asio/io_context.hpp>

#include "hostile_support.hpp"

namespace cordon::hostile {
namespace {

using ::testing::IsEmpty;

class SpillRedirect : public BackendTest {
protected:
    // One run on a long-lived executor (an agent keeps one for all its runs).
    runtime::run_record run_on(runtime::executor& exec, boost::asio::io_context& io,
                               runtime::run_request req) {
        std::optional<runtime::run_result> result;
        exec.async_run(std::move(req), [&](runtime::run_result r) { result = std::move(r); });
        io.restart();
        io.run();
        if (!result) throw std::runtime_error("the run never completed");
        if (auto* error = std::get_if<sandbox::sandbox_unavailable_error>(&*result)) throw *error;
        return std::get<runtime::run_record>(std::move(*result));
    }

    // `configured` is the executor's spill_root, `real` the directory it leads to inside the
    // workspace, where the command replaces the spill directory with a symlink to `target`.
    void attack(const fs::path& configured, const fs::path& real) {
        const fs::path target = tree_.outside() / "target";
        fs::create_directories(target);

        boost::asio::io_context io;
        runtime::executor_options options;
        options.spill_root = configured;
        runtime::executor exec(io.get_executor(), selection_->provider, options);

        runtime::run_record first;
        try {
            first = run_on(exec, io,
                           request({child(), "bytes", "100000"}, sandbox_mode::workspace_write));
        } catch (const sandbox::sandbox_unavailable_error& error) {
            first.not_started = runtime::spawn_failure{{}, error.what()};
        }
        if (first.not_started) {
            // Refusing a run whose workspace holds the spill directory closes the attack too.
            std::cout << "[ info ] refused: " << first.not_started->message << "\n";
            EXPECT_TRUE(fs::is_empty(target));
            return;
        }
        ASSERT_EQ(first.exit_code, std::optional<int>(0)) << describe(first);
        ASSERT_TRUE(first.stdout_output.spill_path.has_value()) << "the first run did not spill";

        const std::string script = "set -e; for d in '" + real.string() +
                                   "'/cordon-spill-*; do mv \"$d\" \"$d.moved\"; ln -s '" +
                                   target.string() + "' \"$d\"; done; '" + child() +
                                   "' bytes 100000";
        const runtime::run_record second =
            run_on(exec, io, request({"bash", "-c", script}, sandbox_mode::workspace_write));
        EXPECT_EQ(second.exit_code, std::optional<int>(0)) << describe(second);

        strings landed;
        for (const auto& entry : fs::directory_iterator(target)) {
            landed.push_back(entry.path().string());
        }
        EXPECT_THAT(landed, IsEmpty())
            << "cordon created a spill file outside the workspace, through the command's symlink"
            << (second.stdout_output.spill_path
                    ? " (reported spill path " + second.stdout_output.spill_path->string() + ")"
                    : std::string());
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
