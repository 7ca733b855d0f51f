// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

// output_collector and spill_directory against real files in a private scratch directory:
// byte-exact tails at the cap edges, spill content equal to the whole stream, modes, the spill
// cap, the UTF-8 cut and the failure paths that must never report a path.
#include "runtime/output_collector.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <optional>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "support.hpp"

namespace cordon::runtime {
namespace {

namespace fs = std::filesystem;

std::vector<fs::path> entries(const fs::path& dir) {
    std::vector<fs::path> out;
    for (const auto& entry : fs::directory_iterator(dir))
        out.push_back(entry.path());
    return out;
}

// Printable ASCII, so the UTF-8 trim never applies and the tail must match byte for byte.
std::string ascii_stream(std::size_t size, unsigned seed) {
    std::mt19937 rng(seed);
    std::uniform_int_distribution<int> letter(' ', '~');
    std::string out(size, ' ');
    for (char& c : out)
        c = static_cast<char>(letter(rng));
    return out;
}

// Every byte value, for the spill: the file must hold exactly what was appended.
std::string binary_stream(std::size_t size, unsigned seed) {
    std::mt19937 rng(seed);
    std::uniform_int_distribution<int> byte(0, 255);
    std::string out(size, '\0');
    for (char& c : out)
        c = static_cast<char>(byte(rng));
    return out;
}

// Appends `stream` in chunks whose sizes are drawn from [1, max_chunk].
void append_in_chunks(output_collector& collector, const std::string& stream, std::size_t max_chunk,
                      unsigned seed) {
    std::mt19937 rng(seed);
    std::uniform_int_distribution<std::size_t> size(1, max_chunk);
    std::size_t at = 0;
    while (at < stream.size()) {
        const std::size_t n = std::min(size(rng), stream.size() - at);
        collector.append(std::span(stream.data() + at, n));
        at += n;
    }
}

std::string last(const std::string& stream, std::size_t n) {
    return stream.size() <= n ? stream : stream.substr(stream.size() - n);
}

collected_output collect(const std::string& stream, output_limits limits,
                         std::shared_ptr<spill_directory> spill = nullptr) {
    output_collector collector("stdout", limits, std::move(spill));
    collector.append(stream);
    return collector.finish();
}

constexpr std::size_t cap = 100;

// --- utf8_tail_boundary_trim -----------------------------------------------------------------

TEST(Utf8TailBoundaryTrim, DropsTheRestOfACharacterCutAtTheStart) {
    // é = C3 A9, € = E2 82 AC, 😀 = F0 9F 98 80
    EXPECT_EQ(utf8_tail_boundary_trim("\xA9x"), "x");
    EXPECT_EQ(utf8_tail_boundary_trim("\x82\xACx"), "x");
    EXPECT_EQ(utf8_tail_boundary_trim("\xACx"), "x");
    EXPECT_EQ(utf8_tail_boundary_trim("\x9F\x98\x80x"), "x");
    EXPECT_EQ(utf8_tail_boundary_trim("\x98\x80x"), "x");
    EXPECT_EQ(utf8_tail_boundary_trim("\x80x"), "x");
    EXPECT_EQ(utf8_tail_boundary_trim("\x80\xC3\xA9"), "\xC3\xA9");
}

TEST(Utf8TailBoundaryTrim, LeavesBoundariesAndEverythingElseAlone) {
    EXPECT_EQ(utf8_tail_boundary_trim(""), "");
    EXPECT_EQ(utf8_tail_boundary_trim("abc"), "abc");
    EXPECT_EQ(utf8_tail_boundary_trim("\xC3\xA9x"), "\xC3\xA9x");
    EXPECT_EQ(utf8_tail_boundary_trim("\xF0\x9F\x98\x80"), "\xF0\x9F\x98\x80");
    // Invalid bytes after the start and a truncated character at the end pass through.
    EXPECT_EQ(utf8_tail_boundary_trim("a\x80\xFF\xE2\x82"), "a\x80\xFF\xE2\x82");
    // Four continuation bytes cannot be the rest of one character: kept.
    EXPECT_EQ(utf8_tail_boundary_trim("\x80\x80\x80\x80x"), "\x80\x80\x80\x80x");
    // Only continuation bytes, fewer than four: the whole remnant goes.
    EXPECT_EQ(utf8_tail_boundary_trim("\x98\x80"), "");
}

// --- tail ------------------------------------------------------------------------------------

TEST(OutputCollector, TailAtCapEdgesInOneChunk) {
    for (const std::size_t size : {cap - 1, cap, cap + 1}) {
        const std::string stream = ascii_stream(size, 1);
        const auto out = collect(stream, {.tail_bytes = cap, .spill_max_bytes = 1 << 20});
        EXPECT_EQ(out.text, last(stream, cap)) << size;
        EXPECT_EQ(out.truncated, size > cap) << size;
        EXPECT_EQ(out.bytes, size) << size;
        EXPECT_FALSE(out.spill_path) << size;
    }
}

TEST(OutputCollector, TailAtCapEdgesByteByByte) {
    for (const std::size_t size : {cap - 1, cap, cap + 1}) {
        const std::string stream = ascii_stream(size, 2);
        output_collector collector("stdout", {.tail_bytes = cap}, nullptr);
        for (const char c : stream)
            collector.append(std::span(&c, 1));
        EXPECT_EQ(collector.bytes(), size);
        const auto out = collector.finish();
        EXPECT_EQ(out.text, last(stream, cap)) << size;
        EXPECT_EQ(out.truncated, size > cap) << size;
    }
}

TEST(OutputCollector, TailAfterManySmallChunks) {
    const std::string stream = ascii_stream(100'003, 3);
    output_collector collector("stderr", {.tail_bytes = cap}, nullptr);
    append_in_chunks(collector, stream, 17, 4);
    const auto out = collector.finish();
    EXPECT_EQ(out.text, last(stream, cap));
    EXPECT_TRUE(out.truncated);
    EXPECT_EQ(out.bytes, stream.size());
}

TEST(OutputCollector, TailWithChunksAroundTheCapSize) {
    // Chunks of cap-1, cap and cap+1 bytes wrap the ring at every offset.
    const std::string stream = ascii_stream(10 * cap + 7, 5);
    for (const std::size_t chunk : {cap - 1, cap, cap + 1, 2 * cap + 3}) {
        output_collector collector("stdout", {.tail_bytes = cap}, nullptr);
        for (std::size_t at = 0; at < stream.size(); at += chunk) {
            collector.append(std::span(stream.data() + at, std::min(chunk, stream.size() - at)));
        }
        EXPECT_EQ(collector.finish().text, last(stream, cap)) << chunk;
    }
}

TEST(OutputCollector, OneHugeChunkAfterSmallOnes) {
    const std::string small = ascii_stream(cap / 2, 6);
    const std::string huge = ascii_stream(50 * cap, 7);
    output_collector collector("stdout", {.tail_bytes = cap}, nullptr);
    collector.append(small);
    collector.append(huge);
    const auto out = collector.finish();
    EXPECT_EQ(out.text, last(huge, cap));
    EXPECT_EQ(out.bytes, small.size() + huge.size());
    EXPECT_TRUE(out.truncated);
}

TEST(OutputCollector, EmptyStreamAndEmptyChunks) {
    output_collector collector("stdout", {.tail_bytes = cap}, nullptr);
    collector.append({});
    const auto out = collector.finish();
    EXPECT_EQ(out.text, "");
    EXPECT_FALSE(out.truncated);
    EXPECT_EQ(out.bytes, 0u);
}

TEST(OutputCollector, ManyTinyAppendsWithTheDefaultTail) {
    // A million one-byte chunks against the 64000-byte default: linear time, byte-exact.
    const std::string stream = ascii_stream(1'000'000, 8);
    output_collector collector("stdout", {}, nullptr);
    for (const char c : stream)
        collector.append(std::span(&c, 1));
    const auto out = collector.finish();
    EXPECT_EQ(out.text, last(stream, 64000));
    EXPECT_EQ(out.bytes, 1'000'000u);
}

// --- UTF-8 at the window edge ------------------------------------------------------------------

TEST(OutputCollector, TruncatedTailStartsOnACharacterBoundary) {
    struct cut {
        std::string character;
        std::size_t kept;  // bytes of it still inside the window
    };
    for (const auto& [character, kept] : std::vector<cut>{{"\xC3\xA9", 1},
                                                          {"\xE2\x82\xAC", 1},
                                                          {"\xE2\x82\xAC", 2},
                                                          {"\xF0\x9F\x98\x80", 1},
                                                          {"\xF0\x9F\x98\x80", 2},
                                                          {"\xF0\x9F\x98\x80", 3}}) {
        const std::string after(cap - kept, 'z');
        const std::string stream = "0123" + character + after;
        output_collector collector("stdout", {.tail_bytes = cap}, nullptr);
        append_in_chunks(collector, stream, 3, 9);
        const auto out = collector.finish();
        EXPECT_EQ(out.text, after) << character.size() << "/" << kept;
        EXPECT_TRUE(out.truncated);
        EXPECT_EQ(out.bytes, stream.size());
    }
}

TEST(OutputCollector, WindowOnALeadByteKeepsTheCharacter) {
    const std::string tail = "\xE2\x82\xAC" + std::string(cap - 3, 'z');
    const auto out = collect("abc" + tail, {.tail_bytes = cap});
    EXPECT_EQ(out.text, tail);
}

TEST(OutputCollector, UntruncatedStreamIsNeverTrimmed) {
    const std::string stream = "\x82\xAC ok";
    const auto out = collect(stream, {.tail_bytes = cap});
    EXPECT_EQ(out.text, stream);
    EXPECT_FALSE(out.truncated);
}

TEST(OutputCollector, UtfTrimLeavesTheSpillWhole) {
    test::temp_dir root;
    const std::string stream =
        std::string(10, 'a') + "\xF0\x9F\x98\x80" + std::string(cap - 2, 'b');
    const auto out =
        collect(stream, {.tail_bytes = cap}, std::make_shared<spill_directory>(root.path()));
    EXPECT_EQ(out.text, std::string(cap - 2, 'b'));
    ASSERT_TRUE(out.spill_path);
    EXPECT_EQ(test::read_file(*out.spill_path), stream);
    EXPECT_EQ(out.bytes, stream.size());
}

// --- spill -----------------------------------------------------------------------------------

TEST(OutputCollectorSpill, NoSpillWhileTheStreamFits) {
    test::temp_dir root;
    auto dir = std::make_shared<spill_directory>(root.path());
    const auto out = collect(ascii_stream(cap, 10), {.tail_bytes = cap}, dir);
    EXPECT_FALSE(out.spill_path);
    // The directory is created lazily: nothing was spilled, nothing was made.
    EXPECT_FALSE(dir->directory());
    EXPECT_TRUE(entries(root.path()).empty());
}

TEST(OutputCollectorSpill, OverflowInTheMiddleOfAChunk) {
    test::temp_dir root;
    const std::string stream = binary_stream(3 * cap, 11);
    output_collector collector("stdout", {.tail_bytes = cap},
                               std::make_shared<spill_directory>(root.path()));
    collector.append(std::span(stream.data(), cap - 10));
    collector.append(std::span(stream.data() + cap - 10, 30));  // crosses the cap
    collector.append(std::span(stream.data() + cap + 20, stream.size() - cap - 20));
    const auto out = collector.finish();
    ASSERT_TRUE(out.spill_path);
    EXPECT_EQ(test::read_file(*out.spill_path), stream);
    EXPECT_EQ(out.text, utf8_tail_boundary_trim(last(stream, cap)));
    EXPECT_EQ(out.bytes, stream.size());
    EXPECT_TRUE(out.truncated);
}

TEST(OutputCollectorSpill, ManyChunksAndOneHugeChunk) {
    test::temp_dir root;
    auto dir = std::make_shared<spill_directory>(root.path());
    const std::string stream = binary_stream(200'000, 12);

    output_collector chunked("stdout", {.tail_bytes = 1000}, dir);
    append_in_chunks(chunked, stream, 97, 13);
    const auto out = chunked.finish();
    ASSERT_TRUE(out.spill_path);
    EXPECT_EQ(test::read_file(*out.spill_path), stream);
    EXPECT_EQ(out.text, utf8_tail_boundary_trim(last(stream, 1000)));

    const auto huge = collect(stream, {.tail_bytes = 1000}, dir);
    ASSERT_TRUE(huge.spill_path);
    EXPECT_EQ(test::read_file(*huge.spill_path), stream);
    EXPECT_EQ(huge.text, out.text);
}

TEST(OutputCollectorSpill, ModesNamesAndLocation) {
    test::temp_dir root;
    auto dir = std::make_shared<spill_directory>(root.path());
    const auto out = collect(ascii_stream(cap + 1, 14), {.tail_bytes = cap}, dir);
    ASSERT_TRUE(out.spill_path);
    ASSERT_TRUE(dir->directory());
    EXPECT_EQ(out.spill_path->parent_path(), *dir->directory());
    EXPECT_EQ(dir->directory()->parent_path(), root.path());
    EXPECT_THAT(dir->directory()->filename().string(),
                testing::MatchesRegex("cordon-spill-......"));
    EXPECT_THAT(
        out.spill_path->filename().string(),
        testing::MatchesRegex(std::to_string(::getpid()) + "-[0-9]+-[0-9a-f]{12}-stdout\\.log"));

    struct stat file_stat {};
    ASSERT_EQ(::lstat(out.spill_path->c_str(), &file_stat), 0);
    EXPECT_TRUE(S_ISREG(file_stat.st_mode));
    EXPECT_EQ(file_stat.st_mode & 07777, 0600u);
    struct stat dir_stat {};
    ASSERT_EQ(::lstat(dir->directory()->c_str(), &dir_stat), 0);
    EXPECT_TRUE(S_ISDIR(dir_stat.st_mode));
    EXPECT_EQ(dir_stat.st_mode & 07777, 0700u);
}

TEST(OutputCollectorSpill, FilesAreCloexecAndExclusive) {
    test::temp_dir root;
    spill_directory dir(root.path());
    auto created = dir.create_file("stderr");
    auto* file = std::get_if<spill_file>(&created);
    ASSERT_NE(file, nullptr);
    EXPECT_NE(::fcntl(file->fd(), F_GETFD) & FD_CLOEXEC, 0);
    EXPECT_EQ(file->close(), std::error_code());
    EXPECT_THROW((void)dir.create_file("../escape"), std::invalid_argument);
    EXPECT_THROW((void)dir.create_file(""), std::invalid_argument);
}

// cordon creates spill files outside any sandbox. A spill directory swapped for a symlink
// between two files (by a command that could write its parent) must not redirect the second
// file: it is created relative to the directory's descriptor, and removals never follow the
// symlink either.
TEST(OutputCollectorSpill, ASwappedSpillDirectoryRedirectsNothing) {
    test::temp_dir root;
    const fs::path target = root.path() / "target";
    fs::create_directory(target);
    for (auto retention : {spill_retention::keep, spill_retention::remove_on_destroy}) {
        auto dir = std::make_unique<spill_directory>(root.path() / "spill", retention);
        fs::create_directory(root.path() / "spill");
        auto first = dir->create_file("stdout");
        ASSERT_TRUE(std::holds_alternative<spill_file>(first));
        const fs::path real = std::get<spill_file>(first).path().parent_path();
        const fs::path moved = real.string() + ".moved";
        fs::rename(real, moved);
        fs::create_directory_symlink(target, real);

        auto second = dir->create_file("stderr");
        ASSERT_TRUE(std::holds_alternative<spill_file>(second));
        auto& file = std::get<spill_file>(second);
        EXPECT_TRUE(fs::is_empty(target)) << "the second file followed the symlink";
        // Beside the files, a directory whose files go with their process holds the marker that
        // says so (for the sweep after a crash).
        const long marker = retention == spill_retention::remove_on_destroy ? 1 : 0;
        EXPECT_EQ(std::distance(fs::directory_iterator(moved), fs::directory_iterator()),
                  2 + marker);
        EXPECT_EQ(file.remove(), std::error_code());
        EXPECT_EQ(std::distance(fs::directory_iterator(moved), fs::directory_iterator()),
                  1 + marker);
        dir.reset();
        EXPECT_TRUE(fs::exists(target)) << "cleanup followed the symlink";
        EXPECT_TRUE(fs::is_empty(target));
        fs::remove(real);
        fs::remove_all(moved);
        fs::remove_all(root.path() / "spill");
    }
}

TEST(OutputCollectorSpill, TwoCollectorsShareADirectoryWithDistinctFiles) {
    test::temp_dir root;
    auto dir = std::make_shared<spill_directory>(root.path());
    const std::string out_stream = binary_stream(5 * cap, 15);
    const std::string err_stream = binary_stream(7 * cap, 16);
    output_collector out_collector("stdout", {.tail_bytes = cap}, dir);
    output_collector err_collector("stderr", {.tail_bytes = cap}, dir);
    // Interleaved, as the I/O loop delivers them.
    for (std::size_t at = 0; at < err_stream.size(); at += 33) {
        if (at < out_stream.size()) {
            out_collector.append(std::span(out_stream.data() + at,
                                           std::min<std::size_t>(33, out_stream.size() - at)));
        }
        err_collector.append(
            std::span(err_stream.data() + at, std::min<std::size_t>(33, err_stream.size() - at)));
    }
    const auto out = out_collector.finish();
    const auto err = err_collector.finish();
    ASSERT_TRUE(out.spill_path);
    ASSERT_TRUE(err.spill_path);
    EXPECT_NE(*out.spill_path, *err.spill_path);
    EXPECT_EQ(out.spill_path->parent_path(), err.spill_path->parent_path());
    EXPECT_EQ(test::read_file(*out.spill_path), out_stream);
    EXPECT_EQ(test::read_file(*err.spill_path), err_stream);
    EXPECT_EQ(entries(root.path()).size(), 1u);  // one shared directory
}

TEST(OutputCollectorSpill, ConcurrentCreationMakesOneDirectory) {
    test::temp_dir root;
    auto dir = std::make_shared<spill_directory>(root.path());
    std::vector<std::thread> threads;
    std::vector<std::string> paths(8);
    for (std::size_t i = 0; i < paths.size(); ++i) {
        threads.emplace_back([&, i] {
            auto created = dir->create_file("stdout");
            if (auto* file = std::get_if<spill_file>(&created)) {
                paths[i] = file->path().string();
                (void)file->close();
            }
        });
    }
    for (auto& thread : threads)
        thread.join();
    EXPECT_EQ(entries(root.path()).size(), 1u);
    std::sort(paths.begin(), paths.end());
    EXPECT_EQ(std::adjacent_find(paths.begin(), paths.end()), paths.end());
    EXPECT_EQ(entries(*dir->directory()).size(), paths.size());
}

TEST(OutputCollectorSpill, StreamOverTheSpillCapRemovesTheFile) {
    test::temp_dir root;
    auto dir = std::make_shared<spill_directory>(root.path());
    const std::string stream = binary_stream(1000, 17);
    output_collector collector("stdout", {.tail_bytes = cap, .spill_max_bytes = 500}, dir);
    collector.append(std::span(stream.data(), 300));
    ASSERT_TRUE(dir->directory());
    EXPECT_EQ(entries(*dir->directory()).size(), 1u);  // spilling
    collector.append(std::span(stream.data() + 300, 300));
    EXPECT_TRUE(entries(*dir->directory()).empty());  // over the cap: closed and unlinked
    collector.append(std::span(stream.data() + 600, 400));
    const auto out = collector.finish();
    EXPECT_FALSE(out.spill_path);
    EXPECT_EQ(out.text, utf8_tail_boundary_trim(last(stream, cap)));
    EXPECT_EQ(out.bytes, stream.size());
    EXPECT_TRUE(entries(*dir->directory()).empty());
}

TEST(OutputCollectorSpill, StreamOfExactlyTheSpillCapIsKept) {
    test::temp_dir root;
    const std::string stream = binary_stream(500, 18);
    const auto out = collect(stream, {.tail_bytes = cap, .spill_max_bytes = 500},
                             std::make_shared<spill_directory>(root.path()));
    ASSERT_TRUE(out.spill_path);
    EXPECT_EQ(test::read_file(*out.spill_path), stream);
}

TEST(OutputCollectorSpill, FirstOverflowAlreadyOverTheCapCreatesNothing) {
    test::temp_dir root;
    auto dir = std::make_shared<spill_directory>(root.path());
    const auto out =
        collect(binary_stream(1000, 19), {.tail_bytes = cap, .spill_max_bytes = 500}, dir);
    EXPECT_FALSE(out.spill_path);
    EXPECT_FALSE(dir->directory());
    EXPECT_TRUE(entries(root.path()).empty());
}

TEST(OutputCollectorSpill, NoSpillDirectoryMeansTailOnly) {
    const std::string stream = ascii_stream(10 * cap, 20);
    const auto out = collect(stream, {.tail_bytes = cap});
    EXPECT_FALSE(out.spill_path);
    EXPECT_EQ(out.text, last(stream, cap));
    EXPECT_TRUE(out.truncated);
    EXPECT_EQ(out.bytes, stream.size());
}

TEST(OutputCollectorSpill, UnusableRootMeansTailOnly) {
    test::temp_dir root;
    const fs::path not_a_dir = root.path() / "file";
    std::ofstream(not_a_dir) << "x";
    for (const fs::path& bad : {root.path() / "missing", not_a_dir}) {
        const std::string stream = ascii_stream(3 * cap, 21);
        const auto out =
            collect(stream, {.tail_bytes = cap}, std::make_shared<spill_directory>(bad));
        EXPECT_FALSE(out.spill_path) << bad;
        EXPECT_EQ(out.text, last(stream, cap)) << bad;
        EXPECT_EQ(out.bytes, stream.size()) << bad;
    }
}

// Restores RLIMIT_FSIZE and SIGXFSZ whatever the test does.
class file_size_limit {
public:
    explicit file_size_limit(rlim_t bytes) {
        ::getrlimit(RLIMIT_FSIZE, &saved_);
        previous_ = ::signal(SIGXFSZ, SIG_IGN);  // write(2) then fails with EFBIG instead
        rlimit limit = saved_;
        limit.rlim_cur = bytes;
        ::setrlimit(RLIMIT_FSIZE, &limit);
    }
    ~file_size_limit() {
        ::setrlimit(RLIMIT_FSIZE, &saved_);
        ::signal(SIGXFSZ, previous_);
    }
    file_size_limit(const file_size_limit&) = delete;
    file_size_limit& operator=(const file_size_limit&) = delete;

private:
    rlimit saved_{};
    sighandler_t previous_{};
};

TEST(OutputCollectorSpill, WriteFailureWithholdsAndRemovesTheFile) {
    test::temp_dir root;
    auto dir = std::make_shared<spill_directory>(root.path());
    const std::string stream = binary_stream(20'000, 22);
    collected_output out;
    {
        const file_size_limit limit(4096);
        output_collector collector("stdout", {.tail_bytes = cap}, dir);
        append_in_chunks(collector, stream, 500, 23);
        out = collector.finish();
    }
    EXPECT_FALSE(out.spill_path);
    ASSERT_TRUE(dir->directory());
    EXPECT_TRUE(entries(*dir->directory()).empty());
    EXPECT_EQ(out.text, utf8_tail_boundary_trim(last(stream, cap)));
    EXPECT_EQ(out.bytes, stream.size());
}

TEST(OutputCollectorSpill, DirectoryRemovedUnderUsIsRecreated) {
    test::temp_dir root;
    auto dir = std::make_shared<spill_directory>(root.path());
    const auto first = collect(binary_stream(2 * cap, 24), {.tail_bytes = cap}, dir);
    ASSERT_TRUE(first.spill_path);
    fs::remove_all(first.spill_path->parent_path());
    const std::string stream = binary_stream(2 * cap, 25);
    const auto second = collect(stream, {.tail_bytes = cap}, dir);
    ASSERT_TRUE(second.spill_path);
    EXPECT_EQ(test::read_file(*second.spill_path), stream);
    EXPECT_NE(second.spill_path->parent_path(), first.spill_path->parent_path());
}

TEST(OutputCollectorSpill, UnfinishedCollectorRemovesItsSpill) {
    test::temp_dir root;
    auto dir = std::make_shared<spill_directory>(root.path());
    {
        output_collector collector("stdout", {.tail_bytes = cap}, dir);
        collector.append(binary_stream(2 * cap, 26));
        ASSERT_EQ(entries(*dir->directory()).size(), 1u);
    }
    EXPECT_TRUE(entries(*dir->directory()).empty());
}

TEST(OutputCollectorSpill, RetentionKeepOutlivesTheDirectoryObject) {
    test::temp_dir root;
    std::optional<fs::path> path;
    {
        auto dir = std::make_shared<spill_directory>(root.path());
        path = collect(binary_stream(2 * cap, 27), {.tail_bytes = cap}, dir).spill_path;
    }
    ASSERT_TRUE(path);
    EXPECT_TRUE(fs::exists(*path));
}

TEST(OutputCollectorSpill, RetentionRemoveOnDestroyDeletesEverything) {
    test::temp_dir root;
    std::optional<fs::path> path;
    {
        auto dir =
            std::make_shared<spill_directory>(root.path(), spill_retention::remove_on_destroy);
        path = collect(binary_stream(2 * cap, 28), {.tail_bytes = cap}, dir).spill_path;
        ASSERT_TRUE(path);
        EXPECT_TRUE(fs::exists(*path));
    }
    EXPECT_FALSE(fs::exists(*path));
    EXPECT_TRUE(entries(root.path()).empty());
}

// --- what dead cordons left: the budget ------------------------------------------------------

// A file of `bytes` bytes last written `age` ago.
void left_file(const fs::path& path, std::size_t bytes, std::chrono::seconds age) {
    test::write_file(path, std::string(bytes, 'x'));
    const auto when = std::chrono::system_clock::now() - age;
    const timespec times[2] = {
        {std::chrono::system_clock::to_time_t(when), 0},
        {std::chrono::system_clock::to_time_t(when), 0},
    };
    ASSERT_EQ(::utimensat(AT_FDCWD, path.c_str(), times, 0), 0);
}

// Only what dead processes left is touched (a live one's directory holds its lock): their files
// past the age go, then the oldest until the rest fit, then their directories left empty; what
// is not a spill directory stays.
TEST(SpillBudget, TheNextSpillAppliesItToWhatDeadProcessesLeftOnly) {
    test::temp_dir root;
    using std::chrono::hours;
    // A live directory: this process's, holding a file past every bound.
    auto live = std::make_shared<spill_directory>(root.path());
    const auto live_file =
        collect(binary_stream(2 * cap, 29), {.tail_bytes = cap}, live).spill_path;
    ASSERT_TRUE(live_file);
    const fs::path live_directory = live_file->parent_path();
    left_file(live_directory / "old.log", 1000, hours(100));
    // Dead ones: made by hand, nobody holds their lock.
    const fs::path dead_a = root / "cordon-spill-deadaa";
    const fs::path dead_b = root / "cordon-spill-deadbb";
    const fs::path empty = root / "cordon-spill-empty0";
    const fs::path other = root / "not-a-spill";
    for (const fs::path& directory : {dead_a, dead_b, empty, other})
        fs::create_directory(directory);
    left_file(dead_a / "too-old.log", 10, hours(48));
    left_file(dead_a / "oldest-young.log", 600, hours(3));
    left_file(dead_b / "middle.log", 600, hours(2));
    left_file(dead_b / "newest.log", 600, hours(1));
    left_file(other / "too-old.log", 10, hours(48));

    const std::size_t removed =
        sweep_abandoned_spills(root.path(), spill_budget{.max_age = hours(24), .max_bytes = 1500});
    EXPECT_EQ(removed, 2U);
    EXPECT_FALSE(fs::exists(dead_a / "too-old.log")) << "past the age";
    EXPECT_FALSE(fs::exists(dead_a / "oldest-young.log")) << "the oldest, over the size";
    EXPECT_FALSE(fs::exists(dead_a)) << "left empty: removed";
    EXPECT_TRUE(fs::exists(dead_b / "middle.log"));
    EXPECT_TRUE(fs::exists(dead_b / "newest.log"));
    EXPECT_FALSE(fs::exists(empty));
    EXPECT_TRUE(fs::exists(*live_file)) << "a live process's files are its own to keep";
    EXPECT_TRUE(fs::exists(live_directory / "old.log"));
    EXPECT_TRUE(fs::exists(other / "too-old.log"));

    // A dead job supervisor's streams (remove_on_destroy: they were to go with their process)
    // go whatever the budget, young as they are; a live one's stay.
    test::temp_dir jobs_root;
    std::optional<fs::path> dead_stream;
    {
        auto streams =
            std::make_shared<spill_directory>(jobs_root.path(), spill_retention::remove_on_destroy);
        dead_stream = collect(binary_stream(2 * cap, 31), {.tail_bytes = cap}, streams).spill_path;
        ASSERT_TRUE(dead_stream);
        // Its process "dies": the files stay where the destructor would have removed them.
        const fs::path kept = jobs_root / "kept";
        fs::create_directory(kept);
        for (const auto& entry : fs::directory_iterator(dead_stream->parent_path()))
            fs::copy(entry.path(), kept / entry.path().filename());
        dead_stream = kept / dead_stream->filename();
    }
    fs::rename(jobs_root / "kept", jobs_root / "cordon-spill-deadjb");
    auto live_streams =
        std::make_shared<spill_directory>(jobs_root.path(), spill_retention::remove_on_destroy);
    const auto live_stream =
        collect(binary_stream(2 * cap, 32), {.tail_bytes = cap}, live_streams).spill_path;
    ASSERT_TRUE(live_stream);
    EXPECT_EQ(sweep_abandoned_spills(jobs_root.path(), spill_budget{}), 1U);
    EXPECT_FALSE(fs::exists(jobs_root / "cordon-spill-deadjb"));
    EXPECT_TRUE(fs::exists(*live_stream));

    // The first spill directory a process makes under a root sweeps it (once per process and
    // root: a fresh root here).
    test::temp_dir fresh;
    const fs::path dead_c = fresh / "cordon-spill-deadcc";
    fs::create_directory(dead_c);
    left_file(dead_c / "too-old.log", 10, std::chrono::hours(48));
    auto first = std::make_shared<spill_directory>(fresh.path());
    ASSERT_TRUE(collect(binary_stream(2 * cap, 30), {.tail_bytes = cap}, first).spill_path);
    EXPECT_FALSE(fs::exists(dead_c));
}

// --- contract --------------------------------------------------------------------------------

TEST(OutputCollectorContract, Violations) {
    EXPECT_THROW(output_collector("stdout", {.tail_bytes = 0}, nullptr), std::invalid_argument);
    EXPECT_THROW(output_collector("std/out", {}, nullptr), std::invalid_argument);
    output_collector collector("stdout", {}, nullptr);
    collector.append(std::string_view("x"));
    (void)collector.finish();
    EXPECT_THROW(collector.append(std::string_view("y")), std::logic_error);
    EXPECT_THROW((void)collector.finish(), std::logic_error);
}

}  // namespace
}  // namespace cordon::runtime
