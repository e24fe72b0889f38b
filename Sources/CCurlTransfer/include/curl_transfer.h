#ifndef STATION_CURL_TRANSFER_H
#define STATION_CURL_TRANSFER_H

#include <stddef.h>

/// One GET through libcurl's easy interface, for the phone's library on Linux: curl calls back on
/// the calling thread for each part of the body, so returning a short count stops the transfer
/// at once (Foundation's URLSession on Linux queues the bytes without limit instead).
///
/// Called once the headers are complete: return 0 to go on, anything else to stop unread.
typedef int (*station_curl_headers_fn)(void *context, long status, long long content_length, const char *etag);
/// Called with each part of the body: return 0 to go on, anything else to stop.
typedef int (*station_curl_body_fn)(void *context, const char *bytes, size_t count);
/// Called at least once a second: return 0 to go on, anything else to stop (too slow, cancelled).
typedef int (*station_curl_progress_fn)(void *context, long long received);

/// What `station_curl_get` did: `curl_code` is CURLcode (0: the transfer completed), `stopped`
/// is 1 when a callback stopped it, `message` curl's words.
typedef struct {
    int curl_code;
    int stopped;
    char message[256];
} station_curl_outcome;

/// GETs `url` with the headers of `headers` (NULL-terminated "Name: value" lines), waiting at most
/// `connect_timeout_seconds` for the connection.
station_curl_outcome station_curl_get(const char *url, const char *const *headers, long connect_timeout_seconds, void *context,
                                      station_curl_headers_fn on_headers, station_curl_body_fn on_body,
                                      station_curl_progress_fn on_progress);

#endif
