#ifndef PAGESYNC_CWSLAY_SHIM_H
#define PAGESYNC_CWSLAY_SHIM_H
// wslay (libwslay-dev, 1.1): WebSocket framing for the web listener's connections
// (UV/HTTP/WebSocketConnection.swift). It does no I/O of its own: the loop hands it the bytes
// read and sends what it queues. Only the UV module imports this.
#include <wslay/wslay.h>
#endif
