// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

// What the proxy_request fuzz target found (tests/fuzz/proxy_request.cpp), each kept as a test of
// its class and as an input in tests/fuzz/corpus/proxy_request/.
#include <gtest/gtest.h>

#include "proxy/request.hpp"

namespace cordon::proxy {
namespace {

// Beast's parser takes the request line as soon as it has it and says how much it took along
// with need_more; the reader gave it the line again with the next bytes, and a head cut after
// its request line was refused as "bad field" (crash-request-line-taken-first).
TEST(ProxyFuzzFound, AHeadCutAfterItsRequestLineIsReadWhole) {
    const std::string head =
        "CONNECT example.org:443 HTTP/1.1\r\nHost: example.org:443\r\nUser-Agent: c\r\n\r\nTLS";
    for (std::size_t cut = 1; cut < head.size(); ++cut) {
        http_head_reader reader;
        (void)reader.feed(std::string_view(head).substr(0, cut));
        const http_parse parsed = reader.feed(std::string_view(head).substr(cut));
        ASSERT_TRUE(std::holds_alternative<http_request>(parsed)) << cut;
        EXPECT_EQ(std::get<http_request>(parsed).host, "example.org") << cut;
    }
}

// The limit is the whole head's, request line included, however the bytes were cut: Beast's own
// applies to the fields after the request line.
TEST(ProxyFuzzFound, TheHeadLimitCountsTheRequestLine) {
    const std::string head = "GET http://example.org/" + std::string(60, 'p') +
                             " HTTP/1.1\r\nX: " + std::string(50, 'x') + "\r\n\r\n";
    ASSERT_GT(head.size(), 100U);
    http_head_reader whole(100);
    EXPECT_EQ(std::get<http_refusal>(whole.feed(head)).status, 431U);
    http_head_reader cut(100);
    (void)cut.feed(std::string_view(head).substr(0, 95));
    EXPECT_EQ(std::get<http_refusal>(cut.feed(std::string_view(head).substr(95))).status, 431U);
}

// Once the parser had taken the request line nothing was pending, and a feed of no bytes handed
// Beast an empty buffer, a null pointer it computes offsets from: undefined behaviour that UBSan
// reports (crash-empty-feed-after-request-line). Empty feeds change nothing now.
TEST(ProxyFuzzFound, AnEmptyFeedAfterTheRequestLineChangesNothing) {
    http_head_reader reader;
    EXPECT_TRUE(
        std::holds_alternative<need_more>(reader.feed("CONNECT example.org:443 HTTP/1.1\r\n")));
    EXPECT_TRUE(std::holds_alternative<need_more>(reader.feed("")));
    EXPECT_TRUE(std::holds_alternative<need_more>(reader.feed("")));
    const http_parse parsed = reader.feed("Host: x\r\n\r\n");
    ASSERT_TRUE(std::holds_alternative<http_request>(parsed));
    EXPECT_EQ(std::get<http_request>(parsed).port, 443);
}

// A head still without its end when exactly `limit` bytes are there is longer than the limit:
// Beast said so when it had not taken the request line yet, the reader waited when it had
// (crash-head-exactly-at-the-limit). Both say 431 now.
TEST(ProxyFuzzFound, AnUnfinishedHeadAtExactlyTheLimitIsOverIt) {
    const std::string line = "CONNECT example.org:443 HTTP/1.1\r\n";
    const std::string head = line + "X: " + std::string(100 - line.size() - 3, 'x');
    ASSERT_EQ(head.size(), 100U);
    http_head_reader whole(100);
    EXPECT_EQ(std::get<http_refusal>(whole.feed(head)).status, 431U);
    http_head_reader cut(100);
    EXPECT_TRUE(std::holds_alternative<need_more>(cut.feed(head.substr(0, 10))));
    EXPECT_EQ(std::get<http_refusal>(cut.feed(head.substr(10))).status, 431U);
}

}  // namespace
}  // namespace cordon::proxy
