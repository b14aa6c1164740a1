#ifndef PAGESYNC_COPENSSL_SHIM_H
#define PAGESYNC_COPENSSL_SHIM_H
#include <openssl/ssl.h>
#include <openssl/err.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>
#include <openssl/bio.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>
#include <openssl/crypto.h>

/* OpenSSL's function-like macros, which Swift cannot import, as inline functions. */

static inline long pagesync_SSL_CTX_set_min_proto_version(SSL_CTX *ctx, int version) {
    return SSL_CTX_set_min_proto_version(ctx, version);
}
static inline long pagesync_SSL_CTX_set_max_proto_version(SSL_CTX *ctx, int version) {
    return SSL_CTX_set_max_proto_version(ctx, version);
}
static inline long pagesync_SSL_CTX_set_mode(SSL_CTX *ctx, long mode) {
    return SSL_CTX_set_mode(ctx, mode);
}
static inline long pagesync_SSL_CTX_set_options(SSL_CTX *ctx, unsigned long options) {
    return (long)SSL_CTX_set_options(ctx, options);
}
static inline long pagesync_SSL_CTX_set_session_cache_mode(SSL_CTX *ctx, long mode) {
    return SSL_CTX_set_session_cache_mode(ctx, mode);
}
static inline long pagesync_SSL_set_tlsext_host_name(SSL *ssl, const char *name) {
    return SSL_set_tlsext_host_name(ssl, name);
}
static inline const char *pagesync_SSL_get_version_name(const SSL *ssl) {
    return SSL_get_version(ssl);
}

static const int pagesync_TLS1_2_VERSION = TLS1_2_VERSION;
static const int pagesync_TLS1_3_VERSION = TLS1_3_VERSION;
static const long pagesync_SSL_MODE_RELEASE_BUFFERS = SSL_MODE_RELEASE_BUFFERS;
static const long pagesync_SSL_MODE_ENABLE_PARTIAL_WRITE = SSL_MODE_ENABLE_PARTIAL_WRITE;
static const long pagesync_SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER = SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER;
static const unsigned long pagesync_SSL_OP_NO_RENEGOTIATION = SSL_OP_NO_RENEGOTIATION;
static const unsigned long pagesync_SSL_OP_CIPHER_SERVER_PREFERENCE = SSL_OP_CIPHER_SERVER_PREFERENCE;
static const unsigned long pagesync_SSL_OP_NO_COMPRESSION = SSL_OP_NO_COMPRESSION;

#endif
