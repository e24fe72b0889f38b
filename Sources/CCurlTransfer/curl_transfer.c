#include "curl_transfer.h"

#include <curl/curl.h>
#include <ctype.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

// curl_easy_setopt is variadic, which Swift cannot call: this file is the only caller.

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
    curl_easy_getinfo(t->curl, CURLINFO_RESPONSE_CODE, &status);
    curl_easy_getinfo(t->curl, CURLINFO_CONTENT_LENGTH_DOWNLOAD_T, &length);
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
        curl_easy_getinfo(t->curl, CURLINFO_RESPONSE_CODE, &status);
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
    transfer t = {curl_easy_init(), context, on_headers, on_body, on_progress, {0}, 0, 0};
    if (!t.curl) {
        outcome.curl_code = CURLE_FAILED_INIT;
        snprintf(outcome.message, sizeof outcome.message, "curl_easy_init failed");
        return outcome;
    }
    struct curl_slist *list = NULL;
    for (const char *const *header = headers; header && *header; header++) list = curl_slist_append(list, *header);
    char error[CURL_ERROR_SIZE] = {0};
    curl_easy_setopt(t.curl, CURLOPT_URL, url);
    curl_easy_setopt(t.curl, CURLOPT_HTTPHEADER, list);
    curl_easy_setopt(t.curl, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(t.curl, CURLOPT_FOLLOWLOCATION, 0L);
    curl_easy_setopt(t.curl, CURLOPT_CONNECTTIMEOUT, connect_timeout_seconds);
    curl_easy_setopt(t.curl, CURLOPT_ERRORBUFFER, error);
    curl_easy_setopt(t.curl, CURLOPT_HEADERFUNCTION, header_line);
    curl_easy_setopt(t.curl, CURLOPT_HEADERDATA, &t);
    curl_easy_setopt(t.curl, CURLOPT_WRITEFUNCTION, body_part);
    curl_easy_setopt(t.curl, CURLOPT_WRITEDATA, &t);
    curl_easy_setopt(t.curl, CURLOPT_XFERINFOFUNCTION, progress);
    curl_easy_setopt(t.curl, CURLOPT_XFERINFODATA, &t);
    curl_easy_setopt(t.curl, CURLOPT_NOPROGRESS, 0L);
    CURLcode code = curl_easy_perform(t.curl);
    // A body-less answer (a 404 with no content, an empty file) is told here.
    if (code == CURLE_OK && !t.headers_told) tell_headers(&t);
    outcome.curl_code = (int)code;
    outcome.stopped = t.stopped;
    snprintf(outcome.message, sizeof outcome.message, "%s", error[0] ? error : curl_easy_strerror(code));
    curl_slist_free_all(list);
    curl_easy_cleanup(t.curl);
    return outcome;
}
