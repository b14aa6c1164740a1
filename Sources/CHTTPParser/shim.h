#ifndef PAGESYNC_CHTTPPARSER_SHIM_H
#define PAGESYNC_CHTTPPARSER_SHIM_H
// Node's http-parser (libhttp-parser-dev, 2.9): parses the request heads of the daemon's HTTP
// listener (UV/HTTP). Only the UV module imports this.
#include <http_parser.h>

// HTTP_PARSER_ERRNO is a macro, which Swift does not import.
static inline enum http_errno pagesync_http_errno(const http_parser *parser) {
    return (enum http_errno)parser->http_errno;
}
#endif
