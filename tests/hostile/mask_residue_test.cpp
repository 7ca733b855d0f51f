// A missing protected name is masked for a run by a mount point bwrap creates in the workspace
// (an empty directory) or a file cordon pins (a git directory's commondir), and removed once the
// run is over. Two cordon processes working in the same workspace at once each see the other's
// mount points: whichever run ends last must remove them, so that no run leaves residue, whatever
// order the runs start and end in.
//
// bwrap only: the Landlock rung makes no mount points.
#include <set>

#include "hostile_support.hpp"

namespace cordon::hostile {
namespace {

class MaskResidue : public BackendTest {};

// The first run (another cordon process) masks the missing names and is still running when the
// second (this process) is planned; the first ends, then the second. Nothing is left behind.
TEST_P(MaskResidue, RunsOfTwoCordonProcessesLeaveNothingBehind) {
    const fs::path ws = tree_.workspace();
    ASSERT_EQ(std::system(("git init -q '" + ws.string() + "'").c_str()), 0);
    const std::set<std::string> before{".git"};

    spawned_process first({test::cordon_path().string(), "run", "--backend", "bwrap", "--mode",
                           "workspace-write", "--workspace", ws.string(), "-c",
                           "echo FIRST; while [ ! -e second-started ]; do sleep 0.05; done"},
                          {});
    ASSERT_TRUE(first.wait_for_output("FIRST"));
    ASSERT_TRUE(fs::is_directory(ws / ".bashrc")) << "the first run masks the missing .bashrc";
    ASSERT_TRUE(fs::is_regular_file(ws / ".git" / "commondir"))
        << "the first run pins the missing commondir";

    background_run second(selection_->provider,
                          request({"bash", "-c",
                                   "touch second-started; echo SECOND; "
                                   "while [ ! -e release ]; do sleep 0.05; done"},
                                  sandbox_mode::workspace_write));
    ASSERT_TRUE(second.wait_for_line("SECOND"));
    EXPECT_EQ(first.wait(), 0);
    write_file(ws / "release", "");
    const runtime::run_record record = second.finish();
    EXPECT_EQ(record.outcome.exit_code, std::optional<int>(0)) << describe(record);

    std::set<std::string> left;
    for (const auto& entry : fs::directory_iterator(ws)) {
        const std::string name = entry.path().filename().string();
        if (name != "second-started" && name != "release") left.insert(name);
    }
    EXPECT_EQ(left, before);
    EXPECT_FALSE(fs::exists(ws / ".git" / "commondir"));
    EXPECT_FALSE(fs::exists(ws / ".git" / "config.worktree"));
}

INSTANTIATE_TEST_SUITE_P(Real, MaskResidue, ::testing::Values(test::real_backend::bwrap),
                         ::cordon::hostile::backend_name);

}  // namespace
}  // namespace cordon::hostile
