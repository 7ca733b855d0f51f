// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

// Devices: reads are allowed everywhere but /dev, which is granted node by node. A host terminal
// (a pty the test holds), the disks, the kernel log and input devices stay closed; the nodes a
// command needs stay usable.
#include <fcntl.h>
#include <stdlib.h>

#include "hostile_support.hpp"

namespace cordon::hostile {
namespace {

using ::testing::IsEmpty;

// Block devices the kernel lists, and the input devices; never watchdogs or serial lines.
strings host_device_nodes() {
    strings out;
    std::error_code ec;
    for (const auto& entry : fs::directory_iterator("/sys/block", ec)) {
        const fs::path node = fs::path("/dev") / entry.path().filename();
        if (fs::is_block_file(node, ec)) out.push_back(node.string());
    }
    if (fs::exists("/dev/kmsg", ec)) out.emplace_back("/dev/kmsg");
    for (const auto& entry : fs::directory_iterator("/dev/input", ec)) {
        if (fs::is_character_file(entry.path(), ec)) out.push_back(entry.path().string());
    }
    return out;
}

class Devices : public BackendAndModeTest {};

TEST_P(Devices, HostTerminalCannotBeOpened) {
    const int master = ::posix_openpt(O_RDWR | O_NOCTTY | O_NONBLOCK | O_CLOEXEC);
    ASSERT_GE(master, 0) << std::strerror(errno);
    ASSERT_EQ(::grantpt(master), 0);
    ASSERT_EQ(::unlockpt(master), 0);
    const std::string slave = ::ptsname(master);

    const attempts seen = attack({"open-read", slave});
    EXPECT_THAT(seen.allowed, IsEmpty()) << describe(record_);
    // Landlock refuses the host's node; bwrap's private devpts has no such pty at all.
    EXPECT_EQ(denial_of(seen, "open-read " + slave),
              std::optional<std::string>(kind_ == backend_kind::landlock ? "EACCES" : "ENOENT"))
        << describe(record_);
    ::close(master);
}

TEST_P(Devices, DisksKernelLogAndInputDevicesCannotBeRead) {
    const strings nodes = host_device_nodes();
    ASSERT_FALSE(nodes.empty()) << "no block device, /dev/kmsg or input device on this host";
    strings args{"open-read"};
    args.insert(args.end(), nodes.begin(), nodes.end());

    const attempts seen = attack(args);
    EXPECT_THAT(seen.allowed, IsEmpty()) << describe(record_);
    for (const auto& node : nodes) {
        EXPECT_TRUE(denial_of(seen, "open-read " + node).has_value()) << node;
    }
}

TEST_P(Devices, TheNodesACommandNeedsStayUsable) {
    const attempts seen = attack({"dev-use"});
    EXPECT_THAT(seen.denied, IsEmpty()) << describe(record_);
    for (const char* node :
         {"/dev/null", "/dev/zero", "/dev/full", "/dev/urandom", "/dev/random", "/dev/stdout"}) {
        EXPECT_THAT(seen.allowed, ::testing::Contains(std::string("use ") + node))
            << describe(record_);
    }
    EXPECT_THAT(seen.other, ::testing::Contains("via /dev/stdout")) << describe(record_);

    // The shell's way of saying it.
    const runtime::run_record shell = run(request(
        {"bash", "-c", "echo out >/dev/stdout; echo err >/dev/stderr; echo gone >/dev/null"}));
    EXPECT_EQ(shell.outcome.exit_code, std::optional<int>(0)) << describe(shell);
    EXPECT_EQ(shell.stdout_output.text, "out\n");
    EXPECT_EQ(shell.stderr_output.text, "err\n");
    EXPECT_FALSE(shell.sandbox.denied) << describe(shell);
}

CORDON_HOSTILE_BOTH_MODES(Devices);

}  // namespace
}  // namespace cordon::hostile
