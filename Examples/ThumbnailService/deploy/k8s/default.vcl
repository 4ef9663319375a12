vcl 4.1;

# In Kubernetes: the haproxy Service of cache-tier.yaml is the backend.
backend haproxy {
    .host = "thumbnail-haproxy";
    .port = "8080";
    .connect_timeout = 1s;
    .first_byte_timeout = 30s;
}

include "thumbnails.vcl";
