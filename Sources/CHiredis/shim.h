#ifndef PAGESYNC_CHIREDIS_SHIM_H
#define PAGESYNC_CHIREDIS_SHIM_H
// hiredis (libhiredis-dev) and its libuv adapter: hiredis's async API runs on a libuv loop
// through redisLibuvAttach. Only the UV module imports this.
#include <hiredis/hiredis.h>
#include <hiredis/async.h>
#include <hiredis/adapters/libuv.h>

// hiredis 0.14's adapter drops a poll callback whose status is an error (`if (status != 0)
// return;`). A refused connect is such a callback (libuv reports the socket's POLLERR as
// UV_EBADF), so hiredis never learnt that its connect failed, and the daemon only noticed
// through its own 3 s connect limit. hiredis 1.0 fixed the adapter by handing the error to
// hiredis as the events it waits for (its read or write then reads the socket's error and
// calls the connect or disconnect callback); these functions do the same, on the adapter's
// own state, and replace its four event hooks after attaching.
static void pagesync_redis_poll(uv_poll_t *handle, int status, int events) {
    redisLibuvEvents *p = (redisLibuvEvents *)handle->data;
    int ev = status != 0 ? p->events : events;
    if (p->context != NULL && (ev & UV_READABLE)) redisAsyncHandleRead(p->context);
    if (p->context != NULL && (ev & UV_WRITABLE)) redisAsyncHandleWrite(p->context);
}

// Turns the events in `flag` on or off and polls for what is left.
static void pagesync_redis_events(void *privdata, int flag, int on) {
    redisLibuvEvents *p = (redisLibuvEvents *)privdata;
    if (on) {
        p->events |= flag;
    } else {
        p->events &= ~flag;
    }
    if (p->events) {
        uv_poll_start(&p->handle, p->events, pagesync_redis_poll);
    } else {
        uv_poll_stop(&p->handle);
    }
}

static void pagesync_redis_add_read(void *privdata) { pagesync_redis_events(privdata, UV_READABLE, 1); }
static void pagesync_redis_del_read(void *privdata) { pagesync_redis_events(privdata, UV_READABLE, 0); }
static void pagesync_redis_add_write(void *privdata) { pagesync_redis_events(privdata, UV_WRITABLE, 1); }
static void pagesync_redis_del_write(void *privdata) { pagesync_redis_events(privdata, UV_WRITABLE, 0); }

// The adapter's attach function, under a name of ours (Swift calls redisAsyncCommandArgv,
// never the variadic redisAsyncCommand), with the event hooks above.
static inline int pagesync_redis_attach(redisAsyncContext *ac, uv_loop_t *loop) {
    int result = redisLibuvAttach(ac, loop);
    if (result == REDIS_OK) {
        ac->ev.addRead = pagesync_redis_add_read;
        ac->ev.delRead = pagesync_redis_del_read;
        ac->ev.addWrite = pagesync_redis_add_write;
        ac->ev.delWrite = pagesync_redis_del_write;
    }
    return result;
}
#endif
