// Allowed: mid may include low, also through its public header.
#pragma once
#include "neuronprof/fixture.h"
#include "src/low/low.h"
