vcl 4.1;

# The thumbnail service's cache tier: what a CDN does in front of it, on one machine. Included by
# default.vcl (which names the backend: HAProxy in front of the replicas) and by the varnishtest
# in tests/. A CDN replaces it with the same three rules (README, "A cache tier in front").
#
# 1. The key is the signed path alone: /{signature}/{processing}/{source} names the thumbnail, so
#    the Host and the query are not part of it (hash_data(req.url) without the query).
# 2. Accept is normalised to the one format the service would choose (image/avif, image/webp,
#    image/jpeg; FormatNegotiation.choose's order and q-values), so `Vary: Accept` keeps at most
#    three variants, not one per browser string. A path that names its format (f:...) needs no
#    Accept at all.
# 3. Only answers the service marks cacheable are kept: 200 and 304 with Cache-Control public;
#    errors (no-store) never, so a 503 of a busy replica is not served to the next user.
# Varnish answers If-None-Match itself from a kept object's strong ETag (a 304, no backend
# request), and keeps objects a day past their TTL (grace) for when the backend is down.

import std;

sub vcl_recv {
    # The service's own endpoints are not thumbnails.
    if (req.url ~ "^/(health|ready|metrics)") {
        return (pass);
    }
    if (req.method != "GET" && req.method != "HEAD") {
        return (pass);
    }
    # Thumbnails depend on nothing of the user's: no cookie or credential makes a variant.
    unset req.http.Cookie;
    unset req.http.Authorization;
    # The query is not part of the signed path.
    set req.url = regsub(req.url, "\?.*$", "");
    if (req.url ~ "^/[^/]+/[^/]*(^|,|/)f:[a-z]+") {
        unset req.http.Accept;
    } else {
        call thumbnails_normalise_accept;
    }
    return (hash);
}

# The format the service would choose for this Accept, as its only value: avif, then webp, then
# jpeg (image/jpeg, image/* or */* with q > 0). A type listed with q=0 is refused, as the
# service refuses it.
sub thumbnails_normalise_accept {
    set req.http.Accept = std.tolower(req.http.Accept);
    if (req.http.Accept ~ "(^|,)\s*image/avif\s*(,|;(?!\s*q\s*=\s*0(\.0*)?\s*(,|$))|$)") {
        set req.http.Accept = "image/avif";
    } elsif (req.http.Accept ~ "(^|,)\s*image/webp\s*(,|;(?!\s*q\s*=\s*0(\.0*)?\s*(,|$))|$)") {
        set req.http.Accept = "image/webp";
    } else {
        set req.http.Accept = "image/jpeg";
    }
}

sub vcl_hash {
    hash_data(req.url);
    return (lookup);
}

sub vcl_backend_response {
    if (beresp.status >= 400 || beresp.http.Cache-Control ~ "(no-store|private)") {
        # Not kept, and no hit-for-miss object long enough to matter either.
        set beresp.ttl = 1s;
        set beresp.uncacheable = true;
        return (deliver);
    }
    set beresp.grace = 24h;
    return (deliver);
}

sub vcl_deliver {
    # For the measurements (deploy/cache-tier.sh) and for operators: a hit or a miss.
    if (obj.hits > 0) {
        set resp.http.X-Cache = "hit";
    } else {
        set resp.http.X-Cache = "miss";
    }
}
