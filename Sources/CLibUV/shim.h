#ifndef PAGESYNC_CLIBUV_SHIM_H
#define PAGESYNC_CLIBUV_SHIM_H
#include <uv.h>
#endif
