// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

// Listing a directory a command may have shaped: by descriptor, never by a path it could swap.
// The functions are base's (base/directory_listing.hpp), where the tree removal uses them too.
#pragma once

#include "base/directory_listing.hpp"

namespace cordon::sandbox {

using base::make_listable;
using base::names_in;

}  // namespace cordon::sandbox
