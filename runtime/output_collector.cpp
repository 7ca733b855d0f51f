// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

#include "runtime/output_collector.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>
#include <set>
#include <stdexcept>
#include <string_view>
#include <utility>
#include <vector>

#include "base/locked_directory.hpp"
#include "base/log.hpp"

namespace cordon::runtime {

namespace {

constexpr std::size_t max_stream_name = 64;

// Enough to step past a name collision, which needs the same pid, counter and 48 random bits.
constexpr int create_attempts = 8;

[[nodiscard]] std::error_code errno_code(int error) noexcept {
    return {error, std::system_category()};
}

[[nodiscard]] bool is_continuation(char byte) noexcept {
    return (static_cast<unsigned char>(byte) & 0xC0u) == 0x80u;
}

// getrandom(2) with flags 0 blocks only until the kernel's pool is initialised once at boot.
// /dev/urandom covers kernels without the system call (ENOSYS, before 3.17).
[[nodiscard]] std::error_code random_bytes(std::span<unsigned char> out) noexcept {
    std::size_t done = 0;
    while (done < out.size()) {
        const ssize_t got = ::getrandom(out.data() + done, out.size() - done, 0);
        if (got > 0) {
            done += static_cast<std::size_t>(got);
            continue;
        }
        if (got < 0 && errno == EINTR) continue;
        if (got < 0 && errno != ENOSYS) return errno_code(errno);
        break;
    }
    if (done == out.size()) return {};

    const unique_fd urandom(::open("/dev/urandom", O_RDONLY | O_CLOEXEC | O_NOFOLLOW));
    if (!urandom) return errno_code(errno);
    while (done < out.size()) {
        const ssize_t got = ::read(urandom.get(), out.data() + done, out.size() - done);
        if (got > 0) {
            done += static_cast<std::size_t>(got);
        } else if (got < 0 && errno == EINTR) {
            continue;
        } else {
            return got < 0 ? errno_code(errno) : std::make_error_code(std::errc::io_error);
        }
    }
    return {};
}

[[nodiscard]] std::string to_hex(std::span<const unsigned char> bytes) {
    static constexpr std::string_view digits = "0123456789abcdef";
    std::string hex;
    hex.reserve(bytes.size() * 2);
    for (const unsigned char byte : bytes) {
        hex.push_back(digits[byte >> 4u]);
        hex.push_back(digits[byte & 0x0Fu]);
    }
    return hex;
}

}  // namespace

std::string_view utf8_tail_boundary_trim(std::string_view text) noexcept {
    std::size_t leading = 0;
    while (leading < text.size() && leading < 4 && is_continuation(text[leading]))
        ++leading;
    if (leading == 4) return text;  // not the remains of one character: invalid input, kept
    return text.substr(leading);
}

bool valid_stream_name(std::string_view name) noexcept {
    if (name.empty() || name.size() > max_stream_name) return false;
    return std::all_of(name.begin(), name.end(), [](char c) {
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
               c == '_' || c == '-';
    });
}

// ---------------------------------------------------------------------------------------------
// spill_file

spill_file::spill_file(unique_fd fd, std::filesystem::path path,
                       std::shared_ptr<const unique_fd> directory) noexcept
    : fd_(std::move(fd)), path_(std::move(path)), directory_(std::move(directory)) {}

std::error_code spill_file::remove() noexcept {
    const int result = directory_ ? ::unlinkat(directory_->get(), path_.filename().c_str(), 0)
                                  : ::unlink(path_.c_str());
    if (result != 0 && errno != ENOENT) return errno_code(errno);
    return {};
}

std::error_code spill_file::write_all(std::span<const char> bytes) noexcept {
    const char* next = bytes.data();
    std::size_t left = bytes.size();
    while (left > 0) {
        const ssize_t written = ::write(fd_.get(), next, left);
        if (written < 0) {
            if (errno == EINTR) continue;
            return errno_code(errno);
        }
        // write(2) returns 0 for a non-empty regular-file write only when nothing can be
        // written; looping would spin.
        if (written == 0) return std::make_error_code(std::errc::io_error);
        next += written;
        left -= static_cast<std::size_t>(written);
    }
    return {};
}

std::error_code spill_file::close() noexcept {
    if (!fd_) return {};
    if (::close(fd_.release()) != 0) return errno_code(errno);
    return {};
}

// ---------------------------------------------------------------------------------------------
// spill_directory

namespace {

// The root as the filesystem resolves it now: symlinks in it are decided once, here.
std::filesystem::path resolved(const std::filesystem::path& root) {
    std::error_code ec;
    std::filesystem::path canonical = std::filesystem::weakly_canonical(root, ec);
    return ec ? root : canonical;
}

constexpr std::string_view spill_prefix = "cordon-spill-";
// In a directory whose files were to go with their process (spill_retention::remove_on_destroy,
// the job supervisor's streams): a process that died before it could remove them leaves them to
// nobody, and the next sweep removes them whatever the budget.
constexpr const char* ephemeral_marker = ".remove-with-process";

}  // namespace

std::size_t sweep_abandoned_spills(const std::filesystem::path& root, const spill_budget& budget) {
    const std::vector<base::locked_directory> dead =
        base::abandoned_directories(root, spill_prefix);
    if (dead.empty()) return 0;
    struct left_file {
        std::int64_t modified;  // seconds since the epoch
        std::uint64_t bytes;
        int directory;
        std::string name;
    };
    std::vector<left_file> files;
    std::size_t removed = 0;
    for (const base::locked_directory& directory : dead) {
        struct stat marker {};
        const bool ephemeral =
            ::fstatat(directory.fd.get(), ephemeral_marker, &marker, AT_SYMLINK_NOFOLLOW) == 0 &&
            S_ISREG(marker.st_mode);
        const int listing = ::openat(directory.fd.get(), ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        DIR* entries = listing >= 0 ? ::fdopendir(listing) : nullptr;
        if (entries == nullptr) {
            if (listing >= 0) ::close(listing);
            continue;
        }
        while (const dirent* entry = ::readdir(entries)) {
            struct stat st {};
            if (::fstatat(directory.fd.get(), entry->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0 ||
                !S_ISREG(st.st_mode)) {
                continue;
            }
            if (ephemeral) {
                if (::unlinkat(directory.fd.get(), entry->d_name, 0) == 0 &&
                    std::string_view(entry->d_name) != ephemeral_marker) {
                    ++removed;
                }
                continue;
            }
            files.push_back({st.st_mtim.tv_sec, static_cast<std::uint64_t>(st.st_size),
                             directory.fd.get(), entry->d_name});
        }
        ::closedir(entries);
    }
    std::sort(files.begin(), files.end(),
              [](const left_file& a, const left_file& b) { return a.modified < b.modified; });
    std::uint64_t total = 0;
    for (const left_file& file : files)
        total += file.bytes;
    const std::int64_t oldest_kept =
        std::chrono::duration_cast<std::chrono::seconds>(
            (std::chrono::system_clock::now() - budget.max_age).time_since_epoch())
            .count();
    for (const left_file& file : files) {
        if (file.modified >= oldest_kept && total <= budget.max_bytes) break;
        if (::unlinkat(file.directory, file.name.c_str(), 0) == 0) ++removed;
        total -= file.bytes;
    }
    unique_fd parent(::open(root.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    for (const base::locked_directory& directory : dead) {
        // rmdir(2) removes only an empty directory; one still holding kept files stays.
        if (parent) (void)::unlinkat(parent.get(), directory.name.c_str(), AT_REMOVEDIR);
    }
    if (removed > 0) {
        log::info("removed {} spill files left by cordons that are gone (kept: {} bytes)", removed,
                  total);
    }
    return removed;
}

spill_directory::spill_directory(std::filesystem::path root, spill_retention retention,
                                 spill_budget budget)
    : root_(resolved(root)), retention_(retention), budget_(budget) {}

spill_directory::~spill_directory() {
    if (!directory_) return;
    const std::filesystem::path& path = directory_->path;
    if (retention_ == spill_retention::keep) {
        // Kept files are the point of keeping; an empty directory (every spill was abandoned or
        // none outlived its stream) is only clutter. rmdir(2) removes nothing else.
        ::rmdir(path.c_str());
        return;
    }
    // Every file, relative to the held descriptor; then the directory itself, which rmdir(2)
    // removes only while it is an empty directory (a symlink put in its place is refused).
    const int listing = ::openat(directory_->fd->get(), ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (DIR* dir = listing >= 0 ? ::fdopendir(listing) : nullptr) {
        while (const dirent* entry = ::readdir(dir)) {
            const std::string_view name = entry->d_name;
            if (name == "." || name == "..") continue;
            (void)::unlinkat(directory_->fd->get(), entry->d_name, 0);
        }
        ::closedir(dir);
    } else if (listing >= 0) {
        ::close(listing);
    }
    if (::rmdir(path.c_str()) != 0 && errno != ENOENT) {
        const int error = errno;
        log::warn("cordon: cannot remove spill directory {}: {}", path.string(),
                  std::strerror(error));
    }
}

std::optional<std::filesystem::path> spill_directory::directory() const {
    const std::lock_guard lock(mutex_);
    if (!directory_) return std::nullopt;
    return directory_->path;
}

std::variant<spill_directory::open_directory, spill_error> spill_directory::ensure_directory() {
    const std::lock_guard lock(mutex_);
    if (directory_) return *directory_;
    {
        // Once per root and process: the first spill directory sweeps, the others need not.
        static std::mutex swept_mutex;
        static std::set<std::filesystem::path> swept;
        std::lock_guard swept_lock(swept_mutex);
        if (swept.insert(root_).second) (void)sweep_abandoned_spills(root_, budget_);
    }
    // mkdtemp(3) creates the directory with mode 0700 and a name nobody else can predict; /var/tmp
    // is sticky, so no other user can rename or replace it afterwards. Its descriptor holds the
    // lock, for as long as this object or a file of it lives.
    auto made = base::make_locked_directory(root_, spill_prefix);
    if (auto* failed = std::get_if<std::string>(&made)) {
        return spill_error{*failed, std::make_error_code(std::errc::io_error)};
    }
    auto& directory = std::get<base::locked_directory>(made);
    if (retention_ == spill_retention::remove_on_destroy) {
        (void)unique_fd(::openat(directory.fd.get(), ephemeral_marker,
                                 O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, S_IRUSR));
    }
    directory_ = open_directory{std::move(directory.path),
                                std::make_shared<const unique_fd>(std::move(directory.fd))};
    return *directory_;
}

void spill_directory::forget_directory(const std::filesystem::path& gone) {
    const std::lock_guard lock(mutex_);
    if (directory_ && directory_->path == gone) directory_.reset();
}

std::variant<spill_file, spill_error> spill_directory::create_file(std::string_view stream) {
    if (!valid_stream_name(stream)) {
        throw std::invalid_argument("spill_directory: invalid stream name '" + std::string(stream) +
                                    "'");
    }
    spill_error last{"create spill file", std::make_error_code(std::errc::file_exists)};
    for (int attempt = 0; attempt < create_attempts; ++attempt) {
        auto directory = ensure_directory();
        if (auto* error = std::get_if<spill_error>(&directory)) return std::move(*error);
        const auto& [dir, dir_fd] = std::get<open_directory>(directory);

        std::array<unsigned char, 6> random{};
        if (const auto error = random_bytes(random)) return spill_error{"getrandom", error};
        const std::string name = std::to_string(::getpid()) + "-" +
                                 std::to_string(counter_.fetch_add(1, std::memory_order_relaxed)) +
                                 "-" + to_hex(random) + "-" + std::string(stream) + ".log";
        std::filesystem::path path = dir / name;

        // O_EXCL already refuses an existing name, symlinks included; O_NOFOLLOW states it.
        // Relative to the held directory: no path component is resolved again.
        unique_fd fd(::openat(dir_fd->get(), name.c_str(),
                              O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW,
                              S_IRUSR | S_IWUSR));
        if (fd) return spill_file(std::move(fd), std::move(path), dir_fd);
        const int error = errno;
        last = spill_error{"open " + path.string(), errno_code(error)};
        if (error == EEXIST) continue;  // a colliding name: draw another
        if (error == ENOENT) {          // the directory was removed under us: make a new one
            forget_directory(dir);
            continue;
        }
        return last;
    }
    return last;
}

// ---------------------------------------------------------------------------------------------
// output_collector

output_collector::output_collector(std::string stream_name, output_limits limits,
                                   std::shared_ptr<spill_directory> spill)
    : stream_name_(std::move(stream_name)), limits_(limits), spill_directory_(std::move(spill)) {
    if (limits_.tail_bytes == 0) {
        throw std::invalid_argument("output_collector: tail_bytes must be positive");
    }
    if (!valid_stream_name(stream_name_)) {
        throw std::invalid_argument("output_collector: invalid stream name '" + stream_name_ + "'");
    }
}

output_collector::~output_collector() {
    if (spill_ && spill_->is_open()) abandon_spill("collector destroyed before finish()", {});
}

void output_collector::append(std::span<const char> bytes) {
    if (sealed_) throw std::logic_error("output_collector: append() after finish()");
    if (bytes.empty()) return;
    // Before the first overflow buffer_ holds the whole stream, so the spill must be started
    // now, before push_tail drops anything.
    const bool first_overflow = !full_ && buffer_.size() + bytes.size() > limits_.tail_bytes;
    total_ += bytes.size();
    if (first_overflow) {
        start_spill(bytes);
    } else if (spill_) {
        spill_chunk(bytes);
    }
    push_tail(bytes);
}

void output_collector::start_spill(std::span<const char> chunk) {
    if (!spill_directory_) return;
    if (total_ > limits_.spill_max_bytes) {
        log::debug(
            "cordon: {} exceeds the spill cap of {} bytes before its first overflow; "
            "tail only",
            stream_name_, limits_.spill_max_bytes);
        return;
    }
    auto created = spill_directory_->create_file(stream_name_);
    if (const auto* error = std::get_if<spill_error>(&created)) {
        log::warn("cordon: no spill file for {}: {}: {}; tail only", stream_name_, error->what,
                  error->code.message());
        return;
    }
    spill_.emplace(std::move(std::get<spill_file>(created)));
    if (auto error = spill_->write_all(buffer_)) {
        abandon_spill("write failed", error);
        return;
    }
    if (auto error = spill_->write_all(chunk)) abandon_spill("write failed", error);
}

void output_collector::spill_chunk(std::span<const char> chunk) {
    if (total_ > limits_.spill_max_bytes) {
        abandon_spill("stream exceeds the spill cap", {});
        return;
    }
    if (auto error = spill_->write_all(chunk)) abandon_spill("write failed", error);
}

// Closes and unlinks: a path to an incomplete file is never reported, and the partial file is of
// no use to anyone.
void output_collector::abandon_spill(std::string_view reason, std::error_code code) {
    const std::filesystem::path path = spill_->path();
    (void)spill_->close();
    const std::error_code removed = spill_->remove();
    spill_.reset();
    if (code) {
        log::warn("cordon: spill file {} for {} abandoned: {}: {}", path.string(), stream_name_,
                  reason, code.message());
    } else {
        log::debug("cordon: spill file {} for {} abandoned: {}", path.string(), stream_name_,
                   reason);
    }
    if (removed) {
        log::warn("cordon: cannot remove abandoned spill file {}: {}", path.string(),
                  removed.message());
    }
}

void output_collector::push_tail(std::span<const char> chunk) {
    const std::size_t cap = limits_.tail_bytes;
    const std::size_t n = chunk.size();
    if (!full_) {
        if (buffer_.size() + n <= cap) {
            // Grow geometrically but never past the cap, so memory stays at most tail_bytes.
            if (buffer_.capacity() < buffer_.size() + n) {
                buffer_.reserve(
                    std::min(cap, std::max(buffer_.size() + n, 2 * buffer_.capacity())));
            }
            buffer_.insert(buffer_.end(), chunk.begin(), chunk.end());
            return;
        }
        // First overflow: become a ring of exactly `cap` bytes holding the last `cap` bytes of
        // the stream, oldest first. This is the only allocation after the tail fills.
        std::vector<char> ring(cap);
        const std::size_t from_chunk = std::min(n, cap);
        const std::size_t from_old = cap - from_chunk;
        std::copy(buffer_.end() - static_cast<std::ptrdiff_t>(from_old), buffer_.end(),
                  ring.begin());
        std::copy(chunk.end() - static_cast<std::ptrdiff_t>(from_chunk), chunk.end(),
                  ring.begin() + static_cast<std::ptrdiff_t>(from_old));
        buffer_ = std::move(ring);
        head_ = 0;
        full_ = true;
        return;
    }
    if (n >= cap) {
        std::memcpy(buffer_.data(), chunk.data() + (n - cap), cap);
        head_ = 0;
        return;
    }
    // Overwrite the n oldest bytes, wrapping at the end of the ring.
    const std::size_t first = std::min(n, cap - head_);
    std::memcpy(buffer_.data() + head_, chunk.data(), first);
    std::memcpy(buffer_.data(), chunk.data() + first, n - first);
    head_ += n;
    if (head_ >= cap) head_ -= cap;
}

collected_output output_collector::finish() {
    if (sealed_) throw std::logic_error("output_collector: finish() called twice");
    sealed_ = true;

    collected_output out;
    out.bytes = total_;
    out.truncated = truncated();
    if (full_) {
        const auto head = buffer_.begin() + static_cast<std::ptrdiff_t>(head_);
        out.text.reserve(buffer_.size());
        out.text.append(head, buffer_.end());
        out.text.append(buffer_.begin(), head);
    } else {
        out.text.assign(buffer_.begin(), buffer_.end());
    }
    // Only a cut can split a character; an untruncated stream is reported as the command wrote it.
    if (out.truncated) {
        out.text.erase(0, out.text.size() - utf8_tail_boundary_trim(out.text).size());
    }
    std::vector<char>().swap(buffer_);

    if (spill_) {
        std::filesystem::path path = spill_->path();
        if (const auto error = spill_->close()) {
            abandon_spill("close failed", error);
        } else {
            spill_.reset();
            out.spill_path = std::move(path);
        }
    }
    return out;
}

}  // namespace cordon::runtime
