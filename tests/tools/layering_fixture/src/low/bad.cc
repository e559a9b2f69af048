// Up the table: low may not include high.
#include "src/low/low.h"
#include "src/high/high.h"
