#!/usr/bin/env bash
# The tests' TLS certificate: self-signed, for localhost and 127.0.0.1, an EC P-256 key, valid
# for 100 years. Made with openssl; run again to replace it (the tests trust whatever is here).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")"
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 36500 \
    -subj "/CN=localhost" -addext "subjectAltName=DNS:localhost,IP:127.0.0.1" \
    -keyout localhost-key.pem -out localhost.pem 2>/dev/null
echo "wrote $(pwd)/localhost.pem and localhost-key.pem"
