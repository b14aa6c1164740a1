#ifndef PAGESYNC_CLIBUV_SHIM_H
#define PAGESYNC_CLIBUV_SHIM_H
#include <uv.h>
#if defined(__GLIBC__)
#include <malloc.h> /* malloc_trim, for HeapTrim */
#endif
#endif
