// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

// The denial scanner: stderr arrives in chunks of any size, and a signature that straddles two
// chunks must still be found. Differential: the input is cut at points the fuzzer chooses and fed
// chunk by chunk; the verdict must equal that of scanning it whole, and that of a plain
// case-insensitive search of the whole text.
#include <fuzzer/FuzzedDataProvider.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "classify/signature_scanner.hpp"
#include "tests/fuzz/property.hpp"

using cordon::classify::ascii_lower;
using cordon::classify::signature_scanner;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    FuzzedDataProvider in(data, size);
    std::vector<std::string> signatures;
    const auto count = in.ConsumeIntegralInRange<int>(0, 4);
    for (int i = 0; i < count; ++i)
        signatures.push_back(in.ConsumeRandomLengthString(48));
    std::vector<std::size_t> cuts;
    const auto pieces = in.ConsumeIntegralInRange<int>(0, 16);
    for (int i = 0; i < pieces; ++i)
        cuts.push_back(in.ConsumeIntegral<std::uint16_t>());
    const std::string stream = in.ConsumeRemainingBytesAsString();

    signature_scanner whole(signatures);
    whole.feed(stream);

    signature_scanner chunked(signatures);
    std::size_t at = 0;
    for (const std::size_t cut : cuts) {
        const std::size_t length = std::min(cut % 64, stream.size() - at);
        chunked.feed(std::string_view(stream).substr(at, length));
        at += length;
    }
    chunked.feed(std::string_view(stream).substr(at));

    bool expected = false;
    const std::string lowered = ascii_lower(stream);
    for (const auto& signature : signatures) {
        if (signature.find_first_not_of(" \t\r\n") == std::string::npos) continue;
        expected = expected || lowered.find(ascii_lower(signature)) != std::string::npos;
    }
    CORDON_FUZZ_CHECK(whole.matched() == expected);
    CORDON_FUZZ_CHECK(chunked.matched() == expected);
    return 0;
}
