// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

// Per-stream output collection (docs/contract.md, "Output"). Each of a command's streams gets an
// output_collector: a bounded in-memory tail of the last `tail_bytes` bytes, and, from the first
// overflow on, a spill file holding the complete stream, so that a caller shown only the tail can
// still read everything the command printed. Where cordon deliberately differs from the system its
// contract comes from:
//   - Spill files live under /var/tmp, not $TMPDIR or /tmp: bwrap's workspace-write profile mounts
//     a private tmpfs on /tmp, so a confined `cat <spill path>` could not see a /tmp spill.
//     /var/tmp is mapped read-only under every backend.
//   - The reported tail starts on a UTF-8 character boundary, instead of opening with the broken
//     remainder of a character that a decoder turns into U+FFFD.
//   - A spill_directory can delete its files when it is destroyed. The default keeps them, because
//     a path printed by a CLI run must outlive the process that printed it; systemd-tmpfiles ages
//     /var/tmp (30 days by default).
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <system_error>
#include <variant>
#include <vector>

#include "cordon/output.hpp"
#include "runtime/unique_fd.hpp"

namespace cordon::runtime {

// `text` without the continuation bytes (10xxxxxx) that open it, when it opens with one to three
// of them: those are the end of a character whose lead byte was cut off, and a decoder would turn
// them into U+FFFD. Four or more continuation bytes cannot be the rest of one character, so they
// are invalid input rather than an artefact of the cut, and are kept like any other invalid
// sequence. Only the start is touched: everything else is passed through byte for byte.
[[nodiscard]] std::string_view utf8_tail_boundary_trim(std::string_view text) noexcept;

// True for the names a collector or spill file accepts: 1 to 64 of [A-Za-z0-9_-], so that the
// name can be put into a file name as is ("stdout", "stderr").
[[nodiscard]] bool valid_stream_name(std::string_view name) noexcept;

// An open spill file: exclusively created, 0600, CLOEXEC, opened read-write (a job reads its
// stream back by offset). Closing via the destructor ignores
// errors; close() reports them, which is what decides whether the file may be reported.
class spill_file {
public:
    // `directory` is the descriptor of the directory the file was created in (may be null).
    spill_file(unique_fd fd, std::filesystem::path path,
               std::shared_ptr<const unique_fd> directory = nullptr) noexcept;

    [[nodiscard]] int fd() const noexcept { return fd_.get(); }
    [[nodiscard]] bool is_open() const noexcept { return static_cast<bool>(fd_); }
    [[nodiscard]] const std::filesystem::path& path() const noexcept { return path_; }

    // Writes every byte, retrying short writes and EINTR.
    [[nodiscard]] std::error_code write_all(std::span<const char> bytes) noexcept;
    // Closes the fd (once; later calls return success). Not retried on EINTR: on Linux the fd is
    // gone either way (close(2)), and the error still means the data may not have been written.
    [[nodiscard]] std::error_code close() noexcept;
    // Unlinks the file relative to its directory's descriptor (by path only without one): the
    // directory's path is never resolved again. ENOENT counts as success.
    [[nodiscard]] std::error_code remove() noexcept;

private:
    unique_fd fd_;
    std::filesystem::path path_;
    std::shared_ptr<const unique_fd> directory_;
};

struct spill_error {
    std::string what;  // the failing step and its path, for the log
    std::error_code code;
};

enum class spill_retention {
    keep,               // files stay after the directory object is gone (reported paths stay valid)
    remove_on_destroy,  // the destructor removes the directory and every file in it
};

// A private spill directory, created on first use as mkdtemp("<root>/cordon-spill-XXXXXX"), mode
// 0700, so that only the same uid can list or read it. One instance is shared by many collectors
// (create_file is thread-safe). If the directory disappears while in use (a tmp cleaner), the next
// create_file makes a new one. The root is made canonical once, and files are created relative to
// a descriptor of the directory held since mkdtemp made it: a directory (or a component above it)
// swapped for a symlink afterwards never redirects where cordon writes.
//
// The directory is held with a lock while this object or a file of it lives
// (base/locked_directory.hpp). Its first directory made under a root, a process first applies
// `budget` to what dead processes left under that root (sweep_abandoned_spills).
class spill_directory {
public:
    explicit spill_directory(std::filesystem::path root = "/var/tmp",
                             spill_retention retention = spill_retention::keep,
                             spill_budget budget = {});
    ~spill_directory();
    spill_directory(const spill_directory&) = delete;
    spill_directory& operator=(const spill_directory&) = delete;

    // Creates "<pid>-<counter>-<12 hex random>-<stream>.log" with
    // O_CREAT|O_EXCL|O_CLOEXEC|O_NOFOLLOW, mode 0600 (random bytes from getrandom(2)). A stream
    // name rejected by valid_stream_name is a contract violation (std::invalid_argument).
    [[nodiscard]] std::variant<spill_file, spill_error> create_file(std::string_view stream);

    [[nodiscard]] const std::filesystem::path& root() const noexcept { return root_; }
    // The directory, once a create_file call has created it.
    [[nodiscard]] std::optional<std::filesystem::path> directory() const;

private:
    struct open_directory {
        std::filesystem::path path;
        std::shared_ptr<const unique_fd> fd;  // O_DIRECTORY, held since mkdtemp made it
    };
    [[nodiscard]] std::variant<open_directory, spill_error> ensure_directory();
    void forget_directory(const std::filesystem::path& gone);

    std::filesystem::path root_;
    spill_retention retention_;
    spill_budget budget_;
    mutable std::mutex mutex_;
    std::optional<open_directory> directory_;  // guarded by mutex_
    std::atomic<std::uint64_t> counter_{0};
};

// Applies `budget` to the spill directories under `root` whose process is gone (their lock free):
// removes their files older than budget.max_age, then the oldest until the rest fit in
// budget.max_bytes, then every such directory left empty. The files of a directory that was to
// go with its process (remove_on_destroy: a job supervisor's streams, whose process died first)
// go whatever the budget. Returns how many files it removed.
std::size_t sweep_abandoned_spills(const std::filesystem::path& root, const spill_budget& budget);

// Collects one stream. append() is called from a single thread (the I/O loop) as chunks arrive and
// costs O(chunk) with no allocation once the tail is full; finish() seals the stream. Spill
// problems are logged with spdlog and degrade to tail-only: they never fail the command and never
// reach the child's streams.
class output_collector {
public:
    // `spill` may be null: tail only. tail_bytes == 0 or an invalid stream name (see
    // valid_stream_name) is a contract violation (std::invalid_argument).
    output_collector(std::string stream_name, output_limits limits,
                     std::shared_ptr<spill_directory> spill);
    // Unlinks a spill file that was never sealed: nobody was told its path.
    ~output_collector();
    output_collector(output_collector&&) noexcept = default;
    output_collector& operator=(output_collector&&) = delete;
    output_collector(const output_collector&) = delete;
    output_collector& operator=(const output_collector&) = delete;

    // Throws std::logic_error after finish().
    void append(std::span<const char> bytes);
    // Seals the stream: closes the spill file and reports its path only if every write and the
    // close succeeded and the stream stayed within spill_max_bytes. Callable once (then
    // std::logic_error). No fsync: readers are on the same host and see the page cache.
    [[nodiscard]] collected_output finish();

    [[nodiscard]] std::uint64_t bytes() const noexcept { return total_; }
    [[nodiscard]] bool truncated() const noexcept { return total_ > limits_.tail_bytes; }
    [[nodiscard]] const std::string& stream_name() const noexcept { return stream_name_; }

private:
    void start_spill(std::span<const char> chunk);
    void spill_chunk(std::span<const char> chunk);
    void abandon_spill(std::string_view reason, std::error_code code);
    void push_tail(std::span<const char> chunk);

    std::string stream_name_;
    output_limits limits_;
    std::shared_ptr<spill_directory> spill_directory_;
    std::optional<spill_file> spill_;  // open while the spill is complete so far

    // Until the stream first exceeds tail_bytes, buffer_ is the whole stream in order (growing to
    // at most tail_bytes). From then on it is a ring of exactly tail_bytes whose oldest byte is at
    // head_; a chunk overwrites the oldest bytes in place, so append never allocates or compacts.
    std::vector<char> buffer_;
    std::size_t head_ = 0;
    bool full_ = false;
    bool sealed_ = false;
    std::uint64_t total_ = 0;
};

}  // namespace cordon::runtime
