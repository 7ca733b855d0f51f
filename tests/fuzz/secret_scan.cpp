// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

// The content scan of the homes (sandbox/secret_scan.hpp): a file's head, which anyone who can
// write in the home controls (a workspace-write run among them), and the scan's cache, read
// through the real file. With the first byte even, the rest is a head: recognise() reads nothing
// past it (the head is copied to a buffer of its exact size), the tokens found lie in it, one
// after another, and each begins with an issuer's prefix. With it odd, the rest is the cache of a
// small home: whatever it says, the files found lie in that home, and a scan with the cache finds
// what a scan without one does, at least, for a home that has not changed since it was cached.
#include <fcntl.h>
#include <sys/stat.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "base/secret_shapes.hpp"
#include "sandbox/secret_scan.hpp"
#include "tests/fuzz/property.hpp"
#include "tests/fuzz/scratch.hpp"

namespace fs = std::filesystem;
using cordon::sandbox::found_secrets;
using cordon::sandbox::recognise;
using cordon::sandbox::secret_cache_options;

namespace {

void check_head(const std::uint8_t* data, std::size_t size) {
    // Exactly the bytes given, so that ASan sees a read past them.
    const std::unique_ptr<char[]> copy(new char[size]);
    std::copy(data, data + size, copy.get());
    const std::string_view head(copy.get(), size);
    (void)recognise(head);
    std::size_t last = 0;
    bool first = true;
    // The one-pass answer agrees with the tokens found one after the other.
    bool counted = false;
    for (auto token = cordon::base::find_issuer_token(head); token;
         token = cordon::base::find_issuer_token(head, token->at + 1)) {
        counted = counted || !head.substr(token->at, token->size).ends_with("EXAMPLE");
        CORDON_FUZZ_CHECK(token->at < head.size() && token->size <= head.size() - token->at);
        CORDON_FUZZ_CHECK(first || token->at > last);
        CORDON_FUZZ_CHECK(token->size >= 20);
        const std::string_view text = head.substr(token->at, token->size);
        static constexpr std::string_view prefixes[]{
            "ghp_",  "gho_",  "ghu_",    "ghs_",     "ghr_", "github_pat_", "glpat-", "xoxb-",
            "xoxp-", "xoxa-", "sk-ant-", "sk-proj-", "npm_", "hf_",         "AKIA",   "ASIA"};
        CORDON_FUZZ_CHECK(std::any_of(std::begin(prefixes), std::end(prefixes),
                                      [text](std::string_view p) { return text.starts_with(p); }));
        last = token->at;
        first = false;
    }
    CORDON_FUZZ_CHECK(cordon::base::has_issuer_token(head, "EXAMPLE") == counted);
    CORDON_FUZZ_CHECK(cordon::base::has_issuer_token(head) == !first);
}

// A small home, made once: a key at two depths, a text, an empty directory.
const fs::path& home() {
    static const fs::path* const made = [] {
        auto* path = new fs::path(cordon::fuzz::scratch_directory() / "home");
        fs::create_directories(*path / "a/b");
        fs::create_directories(*path / "c");
        const std::string key = "-----BEGIN PRIVATE KEY-----\n" + std::string(64, 'A') + "\n";
        cordon::fuzz::write_file(*path / "a/key", key);
        cordon::fuzz::write_file(*path / "a/b/deploy_key", key);
        cordon::fuzz::write_file(*path / "notes", "nothing to see here\n");
        return path;
    }();
    return *made;
}

void check_cache(const std::uint8_t* data, std::size_t size) {
    const fs::path cache = cordon::fuzz::scratch_directory() / "secrets";
    secret_cache_options options;
    options.directory = cache;
    options.settle = std::chrono::milliseconds(0);
    const std::vector<fs::path> truth = found_secrets(home(), {}, options).found;
    // The file the scan just stored, replaced by the fuzzer's bytes.
    for (const auto& entry : fs::directory_iterator(cache)) {
        if (!entry.path().filename().string().starts_with("home-")) continue;
        cordon::fuzz::write_file(entry.path(),
                                 std::string_view(reinterpret_cast<const char*>(data), size));
        ::chmod(entry.path().c_str(), 0600);
    }
    const auto read = found_secrets(home(), {}, options);
    for (const fs::path& path : read.found) {
        const fs::path relative = path.lexically_relative(home());
        CORDON_FUZZ_CHECK(!relative.empty() && *relative.begin() != "..");
    }
    // A cache may only be reused for what has not changed: the files a scan finds are found.
    for (const fs::path& path : truth)
        CORDON_FUZZ_CHECK(std::find(read.found.begin(), read.found.end(), path) !=
                              read.found.end() ||
                          !read.cached);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    if (size == 0) return 0;
    if ((data[0] & 1) == 0) {
        check_head(data + 1, size - 1);
    } else {
        check_cache(data + 1, size - 1);
    }
    return 0;
}
