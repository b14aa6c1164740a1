/*
 * tls-floor: what OpenSSL itself costs per TLS connection, with no pagesync code, so that
 * pagesyncd's TLS figures can be read against a floor. Built and run by scripts/tls-floor.
 *
 *   tls-floor memory CERT KEY [N]      heap in use per server SSL (SSL_new; then after a full
 *                                      TLS 1.3 handshake and one record each way), N connections
 *                                      held, two ways: BIO_s_mem kept (their buffers keep the
 *                                      capacity the handshake grew them to), and no buffers at all
 *                                      after the handshake (the SSL alone: what pagesyncd's
 *                                      buffer BIO leaves)
 *   tls-floor handshakes CERT KEY [N]  server-side CPU per full handshake (SSL_new to SSL_free,
 *                                      memory BIOs, one thread): handshakes per second of CPU
 *
 * The server context is set up as pagesyncd sets it up: SSL_MODE_RELEASE_BUFFERS, no session
 * cache, no tickets, no renegotiation, no compression. The client side runs in the same process
 * and is not counted.
 */
#include <malloc.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static size_t heap_in_use(void) {
    struct mallinfo2 m = mallinfo2();
    return m.uordblks + m.hblkhd;
}

static double thread_cpu(void) {
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static void move_bytes(BIO *from, BIO *to) {
    char buffer[65536];
    int n;
    while ((n = BIO_read(from, buffer, sizeof buffer)) > 0) BIO_write(to, buffer, n);
}

static SSL *with_mem_bios(SSL_CTX *ctx) {
    SSL *ssl = SSL_new(ctx);
    BIO *r = BIO_new(BIO_s_mem()), *w = BIO_new(BIO_s_mem());
    BIO_set_mem_eof_return(r, -1);
    SSL_set_bio(ssl, r, w);
    return ssl;
}

/* Runs the handshake between server and a fresh client to completion, then one record each
 * way; frees the client. cpu, when given, accumulates the server's CPU time. */
static int handshake(SSL_CTX *client_ctx, SSL *server, double *cpu) {
    SSL *client = with_mem_bios(client_ctx);
    SSL_set_connect_state(client);
    int done = 0;
    for (int i = 0; i < 10 && !done; i++) {
        SSL_do_handshake(client);
        move_bytes(SSL_get_wbio(client), SSL_get_rbio(server));
        double t0 = cpu ? thread_cpu() : 0;
        int r = SSL_do_handshake(server);
        if (cpu) *cpu += thread_cpu() - t0;
        move_bytes(SSL_get_wbio(server), SSL_get_rbio(client));
        done = r == 1 && SSL_do_handshake(client) == 1;
    }
    if (done) {
        char line[64];
        SSL_write(client, "PING\n", 5);
        move_bytes(SSL_get_wbio(client), SSL_get_rbio(server));
        SSL_read(server, line, sizeof line);
        SSL_write(server, "OK PONG\n", 8);
        move_bytes(SSL_get_wbio(server), SSL_get_rbio(client));
        SSL_read(client, line, sizeof line);
    }
    SSL_free(client);
    return done;
}

int main(int argc, char **argv) {
    if (argc < 4) {
        fprintf(stderr, "usage: tls-floor memory|handshakes CERT KEY [N]\n");
        return 2;
    }
    int n = argc > 4 ? atoi(argv[4]) : 1000;
    SSL_CTX *server_ctx = SSL_CTX_new(TLS_server_method()), *client_ctx = SSL_CTX_new(TLS_client_method());
    SSL_CTX_set_mode(server_ctx, SSL_MODE_RELEASE_BUFFERS);
    SSL_CTX_set_mode(client_ctx, SSL_MODE_RELEASE_BUFFERS);
    SSL_CTX_set_session_cache_mode(server_ctx, SSL_SESS_CACHE_OFF);
    SSL_CTX_set_num_tickets(server_ctx, 0);
    SSL_CTX_set_options(server_ctx, SSL_OP_NO_RENEGOTIATION | SSL_OP_NO_COMPRESSION);
    if (SSL_CTX_use_certificate_chain_file(server_ctx, argv[2]) != 1
        || SSL_CTX_use_PrivateKey_file(server_ctx, argv[3], SSL_FILETYPE_PEM) != 1) {
        ERR_print_errors_fp(stderr);
        return 1;
    }
    /* Warm up: providers, method and cipher caches are made once per process, not per SSL. */
    for (int i = 0; i < 3; i++) {
        SSL *s = with_mem_bios(server_ctx);
        SSL_set_accept_state(s);
        handshake(client_ctx, s, NULL);
        SSL_free(s);
    }
    if (strcmp(argv[1], "handshakes") == 0) {
        double cpu = 0;
        for (int i = 0; i < n; i++) {
            double t0 = thread_cpu();
            SSL *s = with_mem_bios(server_ctx);
            SSL_set_accept_state(s);
            cpu += thread_cpu() - t0;
            if (!handshake(client_ctx, s, &cpu)) { fprintf(stderr, "handshake failed\n"); return 1; }
            t0 = thread_cpu();
            SSL_free(s);
            cpu += thread_cpu() - t0;
        }
        printf("%s: %d full TLS 1.3 handshakes, server CPU %.3f s: %.0f handshakes per second of server CPU\n",
               OpenSSL_version(OPENSSL_VERSION), n, cpu, n / cpu);
        return 0;
    }
    for (int keep_bios = 1; keep_bios >= 0; keep_bios--) {
        SSL **held = calloc((size_t)n, sizeof *held);
        size_t before = heap_in_use();
        for (int i = 0; i < n; i++) {
            held[i] = with_mem_bios(server_ctx);
            SSL_set_accept_state(held[i]);
        }
        size_t created = heap_in_use();
        for (int i = 0; i < n; i++) {
            if (!handshake(client_ctx, held[i], NULL)) { fprintf(stderr, "handshake failed\n"); return 1; }
            if (!keep_bios) SSL_set_bio(held[i], NULL, NULL);
        }
        size_t after = heap_in_use();
        printf("%s, %d server connections held: SSL_new + 2 BIO_s_mem %zu B each; after handshake and one record each way: %zu B each (%s)\n",
               OpenSSL_version(OPENSSL_VERSION), n, (created - before) / (size_t)n, (after - before) / (size_t)n,
               keep_bios ? "BIO_s_mem kept" : "no BIO buffers: the SSL alone");
        for (int i = 0; i < n; i++) SSL_free(held[i]);
        free(held);
    }
    return 0;
}
