// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

// cordon_base: the small-file reader, the number parser and the mountinfo parser, on files and
// texts made here (escaped mount points, empty sources, malformed lines, a file over the bound),
// and on this process's own /proc.
#include <fcntl.h>
#include <unistd.h>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cerrno>
#include <climits>
#include <cstdint>
#include <fstream>
#include <string>

#include "base/mountinfo.hpp"
#include "base/number.hpp"
#include "base/small_file.hpp"
#include "base/text.hpp"
#include "support.hpp"

namespace cordon::base {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

// ---- small files ------------------------------------------------------------------------------

TEST(SmallFile, ReadsTheWholeFileAndAProcFileWhoseSizeSaysZero) {
    test::temp_dir dir;
    const std::string text(10000, 'x');
    std::ofstream(dir / "f") << text << "\nend";
    const read_result got = read_small_file(dir / "f");
    ASSERT_TRUE(std::holds_alternative<std::string>(got));
    EXPECT_EQ(std::get<std::string>(got), text + "\nend");

    // /proc reports st_size 0: the reader reads to EOF rather than trusting the size.
    const read_result status = read_small_file("/proc/self/status");
    ASSERT_TRUE(std::holds_alternative<std::string>(status));
    EXPECT_THAT(std::get<std::string>(status), HasSubstr("Pid:\t" + std::to_string(::getpid())));

    std::ofstream(dir / "empty").close();
    const read_result empty = read_small_file(dir / "empty");
    ASSERT_TRUE(std::holds_alternative<std::string>(empty));
    EXPECT_EQ(std::get<std::string>(empty), "");
}

TEST(SmallFile, AMissingOrUnreadableFileIsItsErrno) {
    test::temp_dir dir;
    const read_result missing = read_small_file(dir / "absent");
    ASSERT_TRUE(std::holds_alternative<read_error>(missing));
    EXPECT_EQ(std::get<read_error>(missing).error, ENOENT);
    EXPECT_EQ(std::get<read_error>(missing).describe(dir / "absent"),
              "cannot read " + (dir / "absent").string() + ": No such file or directory");

    const read_result directory = read_small_file(dir.path());
    ASSERT_TRUE(std::holds_alternative<read_error>(directory));
    EXPECT_EQ(std::get<read_error>(directory).error, EISDIR);
}

TEST(SmallFile, AFileLargerThanTheBoundIsAnErrorNotAPrefix) {
    test::temp_dir dir;
    std::ofstream(dir / "big") << std::string(5000, 'y');
    const read_result over = read_small_file(dir / "big", 4999);
    ASSERT_TRUE(std::holds_alternative<read_error>(over));
    EXPECT_EQ(std::get<read_error>(over).error, EFBIG);

    const read_result exact = read_small_file(dir / "big", 5000);
    ASSERT_TRUE(std::holds_alternative<std::string>(exact));
    EXPECT_EQ(std::get<std::string>(exact).size(), 5000u);
}

TEST(SmallFile, AnFdIsReadFromItsOffsetAndLeftOpen) {
    test::temp_dir dir;
    std::ofstream(dir / "f") << "abcdef";
    const int fd = ::open((dir / "f").c_str(), O_RDONLY | O_CLOEXEC);
    ASSERT_GE(fd, 0);
    ASSERT_EQ(::lseek(fd, 2, SEEK_SET), 2);
    const read_result got = read_small_fd(fd);
    ASSERT_TRUE(std::holds_alternative<std::string>(got));
    EXPECT_EQ(std::get<std::string>(got), "cdef");
    EXPECT_EQ(::fcntl(fd, F_GETFD), FD_CLOEXEC) << "still open";
    ::close(fd);

    const read_result bad = read_small_fd(-1);
    ASSERT_TRUE(std::holds_alternative<read_error>(bad));
    EXPECT_EQ(std::get<read_error>(bad).error, EBADF);
}

// ---- numbers ----------------------------------------------------------------------------------

TEST(Number, TheWholeTextIsOneDecimalNumberOrNothing) {
    EXPECT_EQ(parse_number<int>("42"), 42);
    EXPECT_EQ(parse_number<int>("-7"), -7);
    EXPECT_EQ(parse_number<std::uint64_t>("18446744073709551615"), UINT64_MAX);
    EXPECT_EQ(parse_number<unsigned>("007"), 7u);
    for (const char* bad : {"", " 1", "1 ", "+1", "1x", "0x10", "1.5", "١"}) {
        SCOPED_TRACE(bad);
        EXPECT_FALSE(parse_number<int>(bad).has_value());
    }
    EXPECT_FALSE(parse_number<unsigned>("-1").has_value()) << "an unsigned number has no sign";
    EXPECT_FALSE(parse_number<std::uint64_t>("18446744073709551616").has_value()) << "overflow";
    EXPECT_FALSE(parse_number<int>("2147483648").has_value());
    EXPECT_EQ(parse_number<int>("-2147483648"), INT_MIN);
}

// ---- text -------------------------------------------------------------------------------------

TEST(Text, SplitKeepsEmptyPiecesAndLinesDropsOnlyTheLastNewline) {
    EXPECT_THAT(split("a  b", ' '), ::testing::ElementsAre("a", "", "b"));
    EXPECT_THAT(split("", ','), ::testing::ElementsAre(""));
    EXPECT_THAT(lines("one\ntwo\n"), ::testing::ElementsAre("one", "two"));
    EXPECT_THAT(lines("one\n\nthree"), ::testing::ElementsAre("one", "", "three"));
    EXPECT_TRUE(lines("").empty());
    EXPECT_TRUE(lines("\n").empty());
}

// ---- mountinfo --------------------------------------------------------------------------------

TEST(Mountinfo, EveryFieldOfALineIsRead) {
    const auto parsed = parse_mountinfo(
        "22 1 8:1 / / rw,relatime shared:1 - ext4 /dev/sda1 rw,errors=remount-ro\n"
        "35 22 0:31 /sub /mnt/ro ro,nosuid master:7 shared:9 - tmpfs none ro,size=10k\n");
    ASSERT_TRUE(std::holds_alternative<std::vector<mount_entry>>(parsed))
        << std::get<std::string>(parsed);
    const auto& mounts = std::get<std::vector<mount_entry>>(parsed);
    ASSERT_EQ(mounts.size(), 2u);
    EXPECT_EQ(mounts[0].id, "22");
    EXPECT_EQ(mounts[0].parent, "1");
    EXPECT_EQ(mounts[0].device, "8:1");
    EXPECT_EQ(mounts[0].root, "/");
    EXPECT_EQ(mounts[0].point, "/");
    EXPECT_FALSE(mounts[0].read_only);
    EXPECT_EQ(mounts[0].type, "ext4");
    EXPECT_EQ(mounts[0].source, "/dev/sda1");
    EXPECT_EQ(mounts[0].super_options, "rw,errors=remount-ro");
    EXPECT_EQ(mounts[1].root, "/sub");
    EXPECT_EQ(mounts[1].point, "/mnt/ro");
    EXPECT_TRUE(mounts[1].read_only) << "optional fields do not shift the type";
    EXPECT_EQ(mounts[1].type, "tmpfs");
    EXPECT_EQ(mounts[1].super_options, "ro,size=10k");
}

TEST(Mountinfo, EscapedPathsAreDecodedAndOptionsStayEscaped) {
    const auto parsed = parse_mountinfo(
        "40 22 0:50 /a\\040b /mnt/with\\040space\\011tab\\012nl\\134slash rw - overlay "
        "my\\040src rw,upperdir=/u\\040p,workdir=/w\n");
    ASSERT_TRUE(std::holds_alternative<std::vector<mount_entry>>(parsed))
        << std::get<std::string>(parsed);
    const auto& m = std::get<std::vector<mount_entry>>(parsed).at(0);
    EXPECT_EQ(m.root, "/a b");
    EXPECT_EQ(m.point, "/mnt/with space\ttab\nnl\\slash");
    EXPECT_EQ(m.source, "my src");
    EXPECT_EQ(m.super_options, "rw,upperdir=/u\\040p,workdir=/w");
    EXPECT_EQ(unescape_mount_field("/u\\040p"), "/u p");
    // Not an escape: kept as it is.
    EXPECT_EQ(unescape_mount_field("a\\9b\\04\\477"), "a\\9b\\04\\477");
    EXPECT_EQ(unescape_mount_field("\\"), "\\");
}

TEST(Mountinfo, AnEmptySourceIsAFieldOfItsOwn) {
    const auto parsed = parse_mountinfo("41 22 0:51 / /merged rw - overlay  rw,lowerdir=/l\n");
    ASSERT_TRUE(std::holds_alternative<std::vector<mount_entry>>(parsed));
    const auto& m = std::get<std::vector<mount_entry>>(parsed).at(0);
    EXPECT_EQ(m.source, "");
    EXPECT_EQ(m.super_options, "rw,lowerdir=/l") << "not taken for the source";
}

TEST(Mountinfo, AMalformedLineMakesTheTableAnErrorNotALineSkipped) {
    const std::string good = "22 1 8:1 / / rw - ext4 /dev/sda1 rw\n";
    for (const char* bad : {
             "garbage",
             "23 22 8:1 / /x rw ext4 /dev/sda1 rw",   // no separator
             "23 22 8:1 / /x - ext4 /dev/sda1 rw",    // no per-mount options
             "23 22 8:1 / /x rw - ext4",              // no source or super options
             "x 22 8:1 / /x rw - ext4 /dev/sda1 rw",  // id not a number
             "23 22 81 / /x rw - ext4 /dev/sda1 rw",  // device not major:minor
             "23 22 8:1 / /x rw -  /dev/sda1 rw",     // no type
             "",                                      // an empty line within the table
         }) {
        SCOPED_TRACE(bad);
        const auto parsed = parse_mountinfo(good + bad + "\n" + good);
        ASSERT_TRUE(std::holds_alternative<std::string>(parsed));
        EXPECT_THAT(std::get<std::string>(parsed), HasSubstr("mountinfo line 2"));
    }
}

TEST(Mountinfo, AFileIsReadWholeAndAnUnreadableOrEmptyOneIsAnError) {
    test::temp_dir dir;
    std::ofstream(dir / "mountinfo") << "22 1 8:1 / / rw - ext4 /dev/sda1 rw\n";
    const auto read = read_mountinfo(dir / "mountinfo");
    ASSERT_TRUE(std::holds_alternative<std::vector<mount_entry>>(read));
    EXPECT_EQ(std::get<std::vector<mount_entry>>(read).size(), 1u);

    const auto missing = read_mountinfo(dir / "absent");
    ASSERT_TRUE(std::holds_alternative<std::string>(missing));
    EXPECT_THAT(std::get<std::string>(missing), HasSubstr("cannot read "));

    std::ofstream(dir / "empty").close();
    const auto empty = read_mountinfo(dir / "empty");
    ASSERT_TRUE(std::holds_alternative<std::string>(empty));
    EXPECT_THAT(std::get<std::string>(empty), HasSubstr("lists no mount"));
}

TEST(Mountinfo, ThisProcessHasARootMount) {
    const auto mounts = read_mountinfo();
    ASSERT_TRUE(std::holds_alternative<std::vector<mount_entry>>(mounts))
        << std::get<std::string>(mounts);
    bool root = false;
    for (const mount_entry& m : std::get<std::vector<mount_entry>>(mounts)) {
        root = root || m.point == "/";
    }
    EXPECT_TRUE(root);
}

}  // namespace
}  // namespace cordon::base
