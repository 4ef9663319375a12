vcl 4.1;

# The backend: HAProxy in front of the replicas (deploy/haproxy-replicas.sh, deploy/cache-tier.sh;
# in Kubernetes the haproxy Service, deploy/k8s/cache-tier.yaml). cache-tier.sh writes its port.
backend haproxy {
    .host = "127.0.0.1";
    .port = "18500";
    .connect_timeout = 1s;
    .first_byte_timeout = 30s;
}

include "thumbnails.vcl";
