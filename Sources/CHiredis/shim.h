#ifndef PAGESYNC_CHIREDIS_SHIM_H
#define PAGESYNC_CHIREDIS_SHIM_H
// hiredis (libhiredis-dev) and its libuv adapter: hiredis's async API runs on a libuv loop
// through redisLibuvAttach. Only the UV module imports this.
#include <hiredis/hiredis.h>
#include <hiredis/async.h>
#include <hiredis/adapters/libuv.h>

// The adapter's attach function, under a name of ours (Swift calls redisAsyncCommandArgv,
// never the variadic redisAsyncCommand).
static inline int pagesync_redis_attach(redisAsyncContext *ac, uv_loop_t *loop) {
    return redisLibuvAttach(ac, loop);
}
#endif
