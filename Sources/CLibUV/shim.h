#ifndef PAGESYNC_CLIBUV_SHIM_H
#define PAGESYNC_CLIBUV_SHIM_H
#include <uv.h>
#if defined(__GLIBC__)
#include <malloc.h> /* malloc_trim, for HeapTrim */
#endif
#if defined(__linux__)
#include <sys/eventfd.h> /* PoolLane */
#endif
#endif
