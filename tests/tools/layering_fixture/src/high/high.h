// Not listed: high may include mid only, not low.
#pragma once
#include "src/mid/mid.h"
#include "src/low/low.h"
