/* The version of the compiled library. */
#include "td_version.h"

const char *td_version(void)
{
    return TD_VERSION_STRING;
}
