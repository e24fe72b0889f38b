#include "curl_transfer.h"

#include <curl/curl.h>
#include <ctype.h>
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

// curl_easy_setopt is variadic, which Swift cannot call: this file is the only caller.

// libcurl is loaded at the first transfer, not linked: linked, it and the thirty libraries it
// needs (TLS, Kerberos, LDAP, SSH, ...) are loaded and relocated at every start of every
// process that has this file, the curator's tool too, which fetches over HTTP in one command.
// The functions are libcurl's own, by the names and types of <curl/curl.h>.
static struct {
    CURL *(*easy_init)(void);
    CURLcode (*easy_setopt)(CURL *, CURLoption, ...);
    CURLcode (*easy_perform)(CURL *);
    CURLcode (*easy_getinfo)(CURL *, CURLINFO, ...);
    const char *(*easy_strerror)(CURLcode);
    void (*easy_cleanup)(CURL *);
    struct curl_slist *(*slist_append)(struct curl_slist *, const char *);
    void (*slist_free_all)(struct curl_slist *);
    CURLcode (*global_init)(long);
    char failure[200];
} curl;

static pthread_once_t curl_loaded = PTHREAD_ONCE_INIT;

static void load_curl(void) {
    // The library an installed libcurl4 (or libcurl4-openssl-dev) provides, by its soname.
    void *library = dlopen("libcurl.so.4", RTLD_NOW | RTLD_LOCAL);
    if (!library) {
        snprintf(curl.failure, sizeof curl.failure, "cannot load libcurl.so.4 (%s): install libcurl4", dlerror());
        return;
    }
#define FIND(field, name) *(void **)&curl.field = dlsym(library, name)
    FIND(easy_init, "curl_easy_init");
    FIND(easy_setopt, "curl_easy_setopt");
    FIND(easy_perform, "curl_easy_perform");
    FIND(easy_getinfo, "curl_easy_getinfo");
    FIND(easy_strerror, "curl_easy_strerror");
    FIND(easy_cleanup, "curl_easy_cleanup");
    FIND(slist_append, "curl_slist_append");
    FIND(slist_free_all, "curl_slist_free_all");
    FIND(global_init, "curl_global_init");
#undef FIND
    if (!curl.easy_init || !curl.easy_setopt || !curl.easy_perform || !curl.easy_getinfo || !curl.easy_strerror
        || !curl.easy_cleanup || !curl.slist_append || !curl.slist_free_all || !curl.global_init) {
        snprintf(curl.failure, sizeof curl.failure, "libcurl.so.4 lacks a function of its easy interface: reinstall libcurl4");
        curl.easy_init = NULL;
        return;
    }
    // Once, before any handle, on one thread: curl_global_init is not thread-safe in older libcurls.
    if (curl.global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
        snprintf(curl.failure, sizeof curl.failure, "curl_global_init failed");
        curl.easy_init = NULL;
    }
}

typedef struct {
    CURL *curl;
    void *context;
    station_curl_headers_fn on_headers;
    station_curl_body_fn on_body;
    station_curl_progress_fn on_progress;
    char etag[256];
    int headers_told;
    int stopped;
} transfer;

static int tell_headers(transfer *t) {
    if (t->headers_told) return 0;
    t->headers_told = 1;
    long status = 0;
    curl_off_t length = -1;
    curl.easy_getinfo(t->curl, CURLINFO_RESPONSE_CODE, &status);
    curl.easy_getinfo(t->curl, CURLINFO_CONTENT_LENGTH_DOWNLOAD_T, &length);
    if (t->on_headers(t->context, status, (long long)length, t->etag[0] ? t->etag : NULL) != 0) {
        t->stopped = 1;
        return 1;
    }
    return 0;
}

static size_t header_line(char *line, size_t size, size_t count, void *user) {
    transfer *t = user;
    size_t length = size * count;
    if (length >= 5 && strncasecmp(line, "ETag:", 5) == 0) {
        size_t start = 5, end = length;
        while (start < end && isspace((unsigned char)line[start])) start++;
        while (end > start && isspace((unsigned char)line[end - 1])) end--;
        size_t n = end - start < sizeof t->etag - 1 ? end - start : sizeof t->etag - 1;
        memcpy(t->etag, line + start, n);
        t->etag[n] = 0;
    }
    // The blank line that ends the headers (an interim 1xx block starts a new one).
    if ((length == 2 && line[0] == '\r') || (length == 1 && line[0] == '\n')) {
        long status = 0;
        curl.easy_getinfo(t->curl, CURLINFO_RESPONSE_CODE, &status);
        if (status >= 200 && tell_headers(t) != 0) return 0;
    } else if (length >= 5 && strncasecmp(line, "HTTP/", 5) == 0) {
        t->etag[0] = 0;
    }
    return length;
}

static size_t body_part(char *bytes, size_t size, size_t count, void *user) {
    transfer *t = user;
    size_t length = size * count;
    if (tell_headers(t) != 0) return 0;
    if (t->on_body(t->context, bytes, length) != 0) {
        t->stopped = 1;
        return 0;
    }
    return length;
}

static int progress(void *user, curl_off_t expected, curl_off_t received, curl_off_t upload_expected, curl_off_t uploaded) {
    (void)expected; (void)upload_expected; (void)uploaded;
    transfer *t = user;
    if (t->on_progress(t->context, (long long)received) != 0) {
        t->stopped = 1;
        return 1;
    }
    return 0;
}

station_curl_outcome station_curl_get(const char *url, const char *const *headers, long connect_timeout_seconds, void *context,
                                      station_curl_headers_fn on_headers, station_curl_body_fn on_body,
                                      station_curl_progress_fn on_progress) {
    station_curl_outcome outcome = {0, 0, {0}};
    pthread_once(&curl_loaded, load_curl);
    if (!curl.easy_init) {
        outcome.curl_code = CURLE_FAILED_INIT;
        snprintf(outcome.message, sizeof outcome.message, "%s", curl.failure);
        return outcome;
    }
    transfer t = {curl.easy_init(), context, on_headers, on_body, on_progress, {0}, 0, 0};
    if (!t.curl) {
        outcome.curl_code = CURLE_FAILED_INIT;
        snprintf(outcome.message, sizeof outcome.message, "curl_easy_init failed");
        return outcome;
    }
    struct curl_slist *list = NULL;
    for (const char *const *header = headers; header && *header; header++) list = curl.slist_append(list, *header);
    char error[CURL_ERROR_SIZE] = {0};
    curl.easy_setopt(t.curl, CURLOPT_URL, url);
    curl.easy_setopt(t.curl, CURLOPT_HTTPHEADER, list);
    curl.easy_setopt(t.curl, CURLOPT_NOSIGNAL, 1L);
    curl.easy_setopt(t.curl, CURLOPT_FOLLOWLOCATION, 0L);
    curl.easy_setopt(t.curl, CURLOPT_CONNECTTIMEOUT, connect_timeout_seconds);
    curl.easy_setopt(t.curl, CURLOPT_ERRORBUFFER, error);
    curl.easy_setopt(t.curl, CURLOPT_HEADERFUNCTION, header_line);
    curl.easy_setopt(t.curl, CURLOPT_HEADERDATA, &t);
    curl.easy_setopt(t.curl, CURLOPT_WRITEFUNCTION, body_part);
    curl.easy_setopt(t.curl, CURLOPT_WRITEDATA, &t);
    curl.easy_setopt(t.curl, CURLOPT_XFERINFOFUNCTION, progress);
    curl.easy_setopt(t.curl, CURLOPT_XFERINFODATA, &t);
    curl.easy_setopt(t.curl, CURLOPT_NOPROGRESS, 0L);
    CURLcode code = curl.easy_perform(t.curl);
    // A body-less answer (a 404 with no content, an empty file) is told here.
    if (code == CURLE_OK && !t.headers_told) tell_headers(&t);
    outcome.curl_code = (int)code;
    outcome.stopped = t.stopped;
    snprintf(outcome.message, sizeof outcome.message, "%s", error[0] ? error : curl.easy_strerror(code));
    curl.slist_free_all(list);
    curl.easy_cleanup(t.curl);
    return outcome;
}
