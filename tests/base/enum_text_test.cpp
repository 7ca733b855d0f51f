// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

// base::enum_texts: each enumerator's text and back, unknown text as nothing, and the enumerator
// count the table is checked against (a table that misses an enumerator does not compile: the
// static_asserts below show the count it is compared with, on the shapes the tree declares).
#include <gtest/gtest.h>

#include <cstdint>
#include <string_view>

#include "base/enum_text.hpp"
#include "cordon/mode.hpp"

namespace cordon::base {
namespace {

enum class colour { red, green, blue2 };
enum class sparse : std::uint8_t { first = 0, third = 2, last = 9 };
enum class negative : int { below = -1, zero = 0, one = 1 };

constexpr auto colour_texts = enum_texts<colour>({
    {colour::red, "red"},
    {colour::green, "green"},
    {colour::blue2, "blue"},
});

static_assert(enumerator_count<colour> == 3);
static_assert(enumerator_count<sparse> == 3);
// A negative enumerator is beyond what is counted, so no table of `negative` compiles.
static_assert(enumerator_count<negative> == 2);
static_assert(enumerator_count<sandbox_mode> == 3);
static_assert(colour_texts.text(colour::green) == "green");
static_assert(colour_texts.parse("blue") == colour::blue2);

TEST(EnumText, EachEnumeratorRoundTrips) {
    for (const auto& entry : colour_texts.entries()) {
        EXPECT_EQ(colour_texts.parse(colour_texts.text(entry.value)), entry.value) << entry.text;
    }
}

TEST(EnumText, TextIsTheTablesSpelling) {
    EXPECT_EQ(colour_texts.text(colour::red), "red");
    EXPECT_EQ(colour_texts.text(colour::blue2), "blue");
}

TEST(EnumText, UnknownTextIsNothing) {
    EXPECT_EQ(colour_texts.parse("purple"), std::nullopt);
    EXPECT_EQ(colour_texts.parse(""), std::nullopt);
    EXPECT_EQ(colour_texts.parse("Red"), std::nullopt);    // exact spelling only
    EXPECT_EQ(colour_texts.parse("red "), std::nullopt);   // no trailing space
    EXPECT_EQ(colour_texts.parse("blue2"), std::nullopt);  // the text, not the name
}

TEST(EnumText, AValueWithoutAnEnumeratorHasNoText) {
    const auto unnamed = static_cast<colour>(7);
    EXPECT_EQ(colour_texts.text(unnamed), "");
}

}  // namespace
}  // namespace cordon::base
